"""What `opkit new` writes holds its own schema: every style's kernels and launchers, read back through the
kernel-effects model (opkit.effects), write no argument the schema leaves unannotated and leave no ``(a!)``
argument known-unwritten, and lint finds no K2xx problem in them."""

from __future__ import annotations

import pytest

from opkit.effects.build import compute
from opkit.effects.model import Knowledge
from opkit.generate.spec import STYLES
from opkit.lint import lint
from opkit.lint.engine import load_project
from opkit.signature import parse_schema


@pytest.mark.parametrize("inplace", [False, True], ids=["functional", "inplace"])
@pytest.mark.parametrize("style", STYLES)
def test_every_generated_style_holds_its_schema(generate, style: str, inplace: bool) -> None:
    name = "my_scale_" if inplace and style == "custom-op" else "my_scale"
    project = generate(name, style=style, inplace=inplace)
    result = lint([str(project)], use_cache=False)
    assert [f for f in result.findings if f.code.startswith("K2")] == []
    effects = compute(load_project([str(project)]))
    op = next((e for op, e in effects.items() if op.endswith(f"::{name}")), None)
    if style == "op-plugin":  # the kernel is op-plugin's codegen from the yaml entry: no kernel source to read here
        assert op is None or not op.kernels
        return
    assert op is not None and op.kernels, effects
    declared = _declared(project)
    for argument in op.arguments:
        if argument.name in declared:  # an (a!) argument: written, or not yet known (a placeholder kernel), never "not written"
            assert argument.written is not Knowledge.NO, (style, argument)
        else:
            assert argument.written is not Knowledge.YES, (style, argument)
    assert bool(declared) == inplace
    if style in ("custom-op", "library"):  # the Python kernel is a placeholder for the user to fill in: unknown, said why
        assert all("placeholder" in a.unknown_because for a in op.arguments)


def _declared(project) -> set[str]:
    """The arguments the generated schema annotates as written (opkit.json records it)."""
    from opkit.generate.spec import load_spec

    spec = load_spec(project)
    sig = parse_schema(spec.schema, spec.dialect)
    return {a.name for a in sig.arguments if a.is_mutated}
