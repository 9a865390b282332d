"""M rules: Meta/fake registration files (read with ast, never imported) against their schemas."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from opkit.lint import lint
from opkit.formats.python_registrations import load_registration_file
from opkit.signature import Dialect, parse_schema

MY_OP = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
MY_INPLACE = "my_inplace(Tensor(a!) x, Tensor y) -> Tensor"

OP_PLUGIN_SEED = """\
import torch
from torch.library import Library, impl

m = Library("npu", "IMPL", "Meta")

@impl(m, "my_op")
def my_op_meta(x, y, z, attr1, attr2):
    return torch.empty_like(x)

@impl(m, "my_inplace")
def my_inplace_meta(x, y):
    return torch.empty_like(y)
"""

CUSTOM_OP_INPLACE_SEED = """\
import torch

@torch.library.custom_op("mylib::my_op_", mutates_args=("x",), device_types="npu")
def my_op_(x: torch.Tensor) -> None:
    ...

@my_op_.register_fake
def _(x: torch.Tensor) -> None:
    return None
"""

CUSTOM_OP_SEED = """\
import torch

@torch.library.custom_op("mylib::my_op", mutates_args=(), device_types="npu")
def my_op(x: torch.Tensor) -> torch.Tensor:
    ...

@my_op.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def meta_file(tmp_path: Path, body: str, name: str = "meta.py") -> str:
    header = 'import torch\nfrom torch.library import Library, impl\n\nm = Library("npu", "IMPL", "Meta")\n'
    return write(tmp_path, name, header + textwrap.dedent(body))


def found(result, prefix: str = "M") -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in result.findings if f.code.startswith(prefix)]


def messages(result, code: str) -> list[str]:
    return [f.message for f in result.findings if f.code == code]


# -- seeds -----------------------------------------------------------------------------------------


def test_op_plugin_seed_lints_clean(tmp_path):
    result = lint([write(tmp_path, "meta.py", OP_PLUGIN_SEED)], schemas=[MY_OP, MY_INPLACE])
    assert result.findings == ()
    assert result.files == 1


@pytest.mark.parametrize(
    ("text", "schema"),
    [(CUSTOM_OP_INPLACE_SEED, "mylib::my_op_(Tensor(a!) x) -> ()"), (CUSTOM_OP_SEED, "mylib::my_op(Tensor x) -> Tensor")],
)
def test_custom_op_seeds_lint_clean(tmp_path, text, schema):
    result = lint([write(tmp_path, "ops.py", text)], schemas=[schema], dialect=Dialect.TORCH_LIBRARY)
    assert result.findings == ()


def test_custom_op_schema_is_inferred_and_exposed(tmp_path):
    file = load_registration_file("ops.py", CUSTOM_OP_INPLACE_SEED)
    [site] = file.schema_sites()
    assert site.text == "mylib::my_op_(Tensor(a0!) x) -> ()"
    assert (site.line, site.dialect) == (3, Dialect.TORCH_LIBRARY)
    [reg] = file.registrations
    assert (reg.qualname, reg.style, reg.line, reg.custom_op.name) == ("mylib::my_op_", "fake", 7, "my_op_")


def test_schema_rules_apply_to_custom_op_schemas(tmp_path):
    text = """\
    import torch

    @torch.library.custom_op("mylib::scale_", mutates_args=())
    def scale_(x: torch.Tensor, s: float) -> None:
        ...
    """
    result = lint([write(tmp_path, "ops.py", text)])
    assert ("S104", 3) in found(result, "S")


# -- import spellings ------------------------------------------------------------------------------


def test_import_spellings_and_call_form(tmp_path):
    text = """\
    import torch.library as tl
    from torch import library

    lib = tl.Library("npu", "IMPL", "Meta")
    other = library.Library("npu", "IMPL", "PrivateUse1")

    @tl.impl(lib, "a")
    def a_meta(x):
        return x.new_empty(x.shape)

    def b_meta(x):
        return x.new_empty(x.shape)

    lib.impl("b", b_meta, "Meta")

    @library.impl(other, "c")
    def c_kernel(x):
        return x
    """
    file = load_registration_file("r.py", textwrap.dedent(text))
    assert [(r.qualname, r.line) for r in file.registrations] == [("npu::a", 7), ("npu::b", 14)]
    # c is registered on PrivateUse1, not Meta: it still lacks a Meta registration.
    result = lint([write(tmp_path, "r.py", text)], schemas=["a(Tensor x) -> Tensor", "b(Tensor x) -> Tensor", "c(Tensor x) -> Tensor"])
    assert [f.op for f in result.findings if f.code == "M001"] == ["c"]


def test_register_fake_by_qualname(tmp_path):
    text = """\
    from torch.library import custom_op, register_fake
    from torch import Tensor

    @custom_op("mylib::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        ...

    @register_fake("mylib::f")
    def _(x, y):
        return x.new_empty(x.shape)
    """
    result = lint([write(tmp_path, "ops.py", text)])
    assert found(result) == [("M002", 8)]


# -- M001 ------------------------------------------------------------------------------------------


def test_m001_missing_meta_for_an_overload(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "my_op")\ndef my_op_meta(x):\n    return torch.empty_like(x)\n')
    result = lint([path], schemas=["my_op(Tensor x) -> Tensor", "my_op.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)"])
    assert [(f.code, f.op) for f in result.findings if f.code == "M001"] == [("M001", "my_op.out")]


def test_m001_yaml_custom_entry_reported_at_its_line(tmp_path):
    yaml_path = write(
        tmp_path,
        "op_plugin_functions.yaml",
        """\
        all_version: [v2.1]
        official:
        autograd:
        custom:
          - func: my_op(Tensor x) -> Tensor
            op_api: all_version
          - func: other(Tensor x) -> Tensor
            op_api: all_version
        symint:
        quant:
        """,
    )
    path = meta_file(tmp_path, '@impl(m, "my_op")\ndef my_op_meta(x):\n    return torch.empty_like(x)\n')
    result = lint([yaml_path, path])
    assert [(f.code, f.path, f.line) for f in result.findings if f.code.startswith("M")] == [("M001", yaml_path, 7)]


def test_m001_needs_a_registration_file(tmp_path):
    assert found(lint([], schemas=["my_op(Tensor x) -> Tensor"])) == []


def test_m001_custom_op_without_fake(tmp_path):
    text = '@torch.library.custom_op("mylib::f", mutates_args=())\ndef f(x: torch.Tensor) -> torch.Tensor:\n    ...\n'
    result = lint([write(tmp_path, "ops.py", "import torch\n\n" + text)])
    assert found(result) == [("M001", 3)]
    assert "register_fake" in messages(result, "M001")[0]


def test_m001_custom_op_hint_is_register_fake_on_the_decorated_function(tmp_path):
    # torch.library.custom_op returns a CustomOpDef bound to the function's name; its fake is
    # @<that name>.register_fake, or torch.library.register_fake("ns::op") by the op's name. A
    # Library("npu", "IMPL", "Meta") impl would register npu::f_op, another op.
    text = '@torch.library.custom_op("mylib::f_op", mutates_args=())\ndef f_impl(x: torch.Tensor) -> torch.Tensor:\n    ...\n'
    result = lint([write(tmp_path, "ops.py", "import torch\n\n" + text)])
    assert [(f.code, f.line, f.message, f.hint) for f in result.findings] == [
        ("M001", 3, "op 'f_op' has no register_fake in the linted Python files", 'add @f_impl.register_fake, or @torch.library.register_fake("mylib::f_op")')
    ]


# -- M002-M005: parameters -------------------------------------------------------------------------


def test_m002_too_few_positional_parameters(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "my_op")\ndef my_op_meta(x, y, z, attr1):\n    return torch.empty_like(x)\n')
    result = lint([path], schemas=[MY_OP])
    assert found(result) == [("M002", 5)]
    assert "attr2 not accepted" in messages(result, "M002")[0]


def test_m002_missing_keyword_only_and_unsupplied_parameter(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x, extra, *, j=0):\n    return x.new_empty(x.shape)\n')
    result = lint([path], schemas=["f(Tensor x, *, int k=1) -> Tensor"])
    text = " | ".join(messages(result, "M002"))
    assert "no parameter 'k'" in text and "'extra'" in text
    assert len(messages(result, "M002")) == 2


def test_m002_var_args_accept_everything(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x, *args, **kwargs):\n    return x.new_empty(x.shape)\n')
    assert found(lint([path], schemas=["f(Tensor x, Tensor y, *, int k=1) -> Tensor"])) == []


def test_m003_swapped_parameters(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(y, x):\n    return torch.empty_like(x)\n')
    result = lint([path], schemas=["f(Tensor x, Tensor y) -> Tensor"])
    assert found(result) == [("M003", 5)]
    assert "x, y land in the wrong parameter" in messages(result, "M003")[0]


def test_m004_renamed_and_keyword_only_taken_positionally(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(inp, k=1):\n    return torch.empty_like(inp)\n')
    result = lint([path], schemas=["f(Tensor x, *, int k=1) -> Tensor"])
    assert [c for c, _ in found(result)] == ["M004", "M004"]
    text = " | ".join(messages(result, "M004"))
    assert "'inp' receives schema argument 'x'" in text and "'k' is keyword-only" in text


def test_m004_quiet_when_names_match(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x, *, k=1):\n    return torch.empty_like(x)\n')
    assert found(lint([path], schemas=["f(Tensor x, *, int k=1) -> Tensor"])) == []


def test_m005_missing_and_different_defaults(tmp_path):
    body = '@impl(m, "f")\ndef f_meta(x, k, pads=[2, 2], *, flag=False):\n    return x.new_empty([k, *pads]) if flag else x\n'
    result = lint([meta_file(tmp_path, body)], schemas=["f(Tensor x, int k=1, int[2] pads=1, *, bool flag=True) -> Tensor"])
    assert found(result) == [("M005", 5)] * 3
    # A different default the function never reads cannot change its result (op-plugin's real
    # Meta file has six, e.g. `layout=1` for `str layout='BSND'`); a missing one still fails the call.
    unread = '@impl(m, "f")\ndef f_meta(x, k, pads=[2, 2], *, flag=False):\n    return torch.empty_like(x)\n'
    assert [m for m in messages(lint([meta_file(tmp_path, unread)], schemas=["f(Tensor x, int k=1, int[2] pads=1, *, bool flag=True) -> Tensor"]), "M005")] == [
        "schema argument 'k' defaults to 1: calls that leave it there drop it, and f_meta's 'k' has no default"
    ]
    # None resolved by the function itself, as npu_deformable_conv2d_meta does with `dilation`.
    resolved = '@impl(m, "f")\ndef f_meta(x, dilation=None):\n    if dilation is None:\n        dilation = [1, 1]\n    return x.new_empty(dilation)\n'
    assert found(lint([meta_file(tmp_path, resolved)], schemas=["f(Tensor x, int[2] dilation=[1,1]) -> Tensor"])) == []
    # A schema default of None that the Meta function spells out (`dst_type=1` for `int? dst_type=None`).
    spelled = '@impl(m, "f")\ndef f_meta(x, dst_type=1):\n    return x.new_empty([dst_type])\n'
    assert found(lint([meta_file(tmp_path, spelled)], schemas=["f(Tensor x, int? dst_type=None) -> Tensor"])) == []
    text = " | ".join(messages(result, "M005"))
    assert "'k' has no default" in text
    assert "'pads' defaults to [2, 2] but the schema's 'pads' defaults to 1: calls that pass 1" in text
    assert "'flag' defaults to False" in text


def test_m005_matching_defaults_and_undroppable_arguments(tmp_path):
    # int[2] pads=1 is [1, 1]; 'k' has a default but 'y' after it has none, so 'k' is never dropped.
    body = '@impl(m, "f")\ndef f_meta(x, k, y, pads=(1, 1), s=1):\n    return torch.empty_like(x)\n'
    # (op-plugin's torchgen accepts a default before a non-default argument; torch.library does not)
    result = lint([meta_file(tmp_path, body)], schemas=["f(Tensor x, int k=2, Tensor y, int[2] pads=1, float s=1.0) -> Tensor"])
    assert found(result) == []


# -- M006-M007: returns ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "body", "expected"),
    [
        ("f(Tensor x) -> Tensor", "    return x, x\n", "f_meta returns a tuple of 2 (line 7) but the schema returns one value"),
        ("f(Tensor x) -> Tensor", "    return [x, x]\n", "f_meta returns a list of 2 (line 7) but the schema returns one value"),
        ("f(Tensor x) -> (Tensor, Tensor)", "    return torch.empty_like(x)\n", "f_meta returns a single tensor (line 7) but the schema returns a tuple of 2"),
        ("f(Tensor x) -> (Tensor, Tensor)", "    return x\n", "f_meta returns a single tensor (line 7) but the schema returns a tuple of 2"),
        ("f(Tensor x) -> (Tensor, Tensor, Tensor)", "    return x, x\n", "f_meta returns a tuple of 2 (line 7) but the schema returns a tuple of 3"),
        ("f(Tensor x) -> Tensor", "    ...\n", "f_meta can end without a return statement (returning None) but the schema returns one value"),
        ("f(Tensor x) -> Tensor", "    return None\n", "f_meta returns None (line 7) but the schema returns one value"),
    ],
)
def test_m006_return_structure(tmp_path, schema, body, expected):
    result = lint([meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x):\n' + body)], schemas=[schema])
    assert found(result) == [("M006", 5)]
    assert messages(result, "M006") == [expected]


@pytest.mark.parametrize(
    ("schema", "body"),
    [
        ("f(Tensor x) -> (Tensor, Tensor)", "    return torch.empty_like(x), torch.empty_like(x)\n"),
        ("f(Tensor x) -> (Tensor, Tensor)", "    return helper(x)\n"),  # unknowable: not reported
        ("f(Tensor x) -> Tensor", "    if x.dim() > 2:\n        return x.new_empty(1)\n    raise ValueError('rank')\n"),
        ("f(Tensor x) -> Tensor[]", "    return [x, x]\n"),
    ],
)
def test_m006_quiet(tmp_path, schema, body):
    assert found(lint([meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x):\n' + body)], schemas=[schema])) == []


def test_m007_void_op_returns_mutated_input(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "upd")\ndef upd_meta(x, y):\n    return x\n')
    result = lint([path], schemas=["upd(Tensor(a!) x, Tensor y) -> ()"])
    assert found(result) == [("M007", 5)]
    assert "returns 'x' (the mutated input)" in messages(result, "M007")[0]


def test_m007_quiet_when_returning_none(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "upd")\ndef upd_meta(x, y):\n    return None\n')
    assert found(lint([path], schemas=["upd(Tensor(a!) x, Tensor y) -> ()"])) == []


# -- custom_op rules -------------------------------------------------------------------------------


def test_m008_mutates_args_disagree_with_declared_schema(tmp_path):
    result = lint(
        [write(tmp_path, "ops.py", CUSTOM_OP_INPLACE_SEED)],
        schemas=["mylib::my_op_(Tensor x, Tensor(a!) y) -> ()"],
        dialect=Dialect.TORCH_LIBRARY,
    )
    assert ("M008", 3) in found(result)
    assert "mutates_args covers ['x']" in messages(result, "M008")[0]


def test_m008_other_differences(tmp_path):
    result = lint([write(tmp_path, "ops.py", CUSTOM_OP_SEED)], schemas=["mylib::my_op(Tensor x, int k) -> Tensor"], dialect=Dialect.TORCH_LIBRARY)
    assert [c for c, _ in found(result)] == ["M008"]
    assert "differs from" in messages(result, "M008")[0]


def test_m009_mutates_args_unknown(tmp_path):
    text = CUSTOM_OP_SEED.replace("mutates_args=()", 'mutates_args="unknown"')
    assert found(lint([write(tmp_path, "ops.py", text)])) == [("M009", 3)]
    assert found(lint([write(tmp_path, "ops.py", CUSTOM_OP_SEED)])) == []


def test_k201_custom_op_write_not_in_mutates_args(tmp_path):  # M010's cases, now K201's (M010 is retired)
    text = """\
    import torch

    @torch.library.custom_op("mylib::upd", mutates_args=("cache",))
    def upd(cache: torch.Tensor, x: torch.Tensor, out: torch.Tensor) -> None:
        cache[0] = 1
        x.add_(1)
        torch.add(cache, 1, out=out)

    @upd.register_fake
    def _(cache, x, out):
        return None
    """
    result = lint([write(tmp_path, "ops.py", text)])
    assert found(result, "K") == [("K201", 3), ("K201", 3)]
    assert found(result) == []
    text_ = " | ".join(messages(result, "K201"))
    assert "writes 'out'" in text_ and "writes 'x' (" in text_ and "line 6: x.add_(...)" in text_ and "'cache'" not in text_


def test_m011_registration_for_undeclared_op(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "my_opp")\ndef my_opp_meta(x):\n    return torch.empty_like(x)\n')
    result = lint([path], schemas=["my_op(Tensor x) -> Tensor"])
    assert ("M011", 5) in found(result)
    assert "npu::my_opp" in messages(result, "M011")[0]
    # Without any schema there is nothing to compare with.
    assert found(lint([path])) == []


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ("(x: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor", "tuple annotation"),
        ("(x) -> torch.Tensor", "parameter x has no type annotation"),
        ("(x: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor", "*args"),
        ("(x: torch.Tensor, k: int = [1]) -> torch.Tensor", "unsupported default"),
        ("(x: torch.Tensor) -> dict", "unsupported return annotation"),
    ],
)
def test_m012_custom_op_torch_would_reject(tmp_path, signature, expected):
    text = f'import torch\n\n@torch.library.custom_op("mylib::f", mutates_args=())\ndef f{signature}:\n    ...\n'
    result = lint([write(tmp_path, "ops.py", text)])
    assert ("M012", 3) in found(result)
    assert expected in messages(result, "M012")[0]


def test_m012_explicit_schema_and_mutates_args(tmp_path):
    text = """\
    import torch

    @torch.library.custom_op("mylib::f", mutates_args=(), schema="(Tensor(a!) x) -> ()")
    def f(x):
        ...

    @torch.library.custom_op("mylib::g", mutates_args=("x",), schema="(Tensor(a!) x) -> ()")
    def g(x):
        ...
    """
    result = lint([write(tmp_path, "ops.py", text)], selection=_only("M012"))
    assert found(result) == [("M012", 3)]
    assert "mutates_args is []" in messages(result, "M012")[0]


def test_m013_fake_annotations_disagree(tmp_path):
    text = """\
    import torch

    @torch.library.custom_op("mylib::f", mutates_args=())
    def f(x: torch.Tensor, n: int) -> torch.Tensor:
        ...

    @f.register_fake
    def _(x: torch.Tensor, n: float) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.empty_like(x)
    """
    result = lint([write(tmp_path, "ops.py", text)])
    assert [c for c, _ in found(result)] == ["M013", "M013"]
    assert "'n' is annotated float" in messages(result, "M013")[0]


def test_m014_duplicate_registration(tmp_path):
    body = '@impl(m, "f")\ndef a(x):\n    return x.new_empty(1)\n\n@impl(m, "f")\ndef b(x):\n    return x.new_empty(1)\n'
    result = lint([meta_file(tmp_path, body)], schemas=["f(Tensor x) -> Tensor"])
    assert found(result) == [("M014", 9)]
    assert "line 5" in messages(result, "M014")[0]


# -- suppression and input errors ------------------------------------------------------------------


def test_noqa_on_the_registration_line(tmp_path):
    body = '@impl(m, "f")  # noqa: M003\ndef f_meta(y, x):\n    return torch.empty_like(x)\n'
    assert found(lint([meta_file(tmp_path, body)], schemas=["f(Tensor x, Tensor y) -> Tensor"])) == []


def test_syntax_error_is_e002_and_other_files_still_lint(tmp_path, run_opkit):
    broken = write(tmp_path, "broken.py", "import torch\n\ndef f(x:\n    return x\n")
    other = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(y, x):\n    return torch.empty_like(x)\n', name="other.py")
    result = lint([broken, other], schemas=["f(Tensor x, Tensor y) -> Tensor"])
    [e002] = [f for f in result.findings if f.code == "E002"]
    assert (e002.path, e002.line) == (broken, 3)
    assert ("M003", 5) in found(result)
    code, output = run_opkit("lint", broken, other, "--schema", "f(Tensor x, Tensor y) -> Tensor")
    assert code == 2
    assert "E002" in output and "M003" in output


# -- inference agrees with torch -------------------------------------------------------------------

_TORCH_CASES = """\
import torch
from typing import List, Optional, Sequence
from torch import Tensor

@torch.library.custom_op("{ns}::plain", mutates_args=())
def plain(x: torch.Tensor, y: Optional[torch.Tensor], z: list[torch.Tensor], ys: List[Optional[torch.Tensor]], n: int, s: float, b: bool, name: str) -> torch.Tensor:
    ...

@torch.library.custom_op("{ns}::defaults", mutates_args=("x", "w"))
def defaults(x: Tensor, w: "Tensor | None", k: int = 3, flag: bool = True, mode: str = "mean", l: Optional[List[int]] = None, *, opt: Optional[float] = None, c: int = -2) -> None:
    ...

@torch.library.custom_op("{ns}::multi", mutates_args="unknown")
def multi(xs: Sequence[torch.Tensor], x: torch.Tensor, y: Optional[Tensor], sizes: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
    ...

@torch.library.custom_op("{ns}::listy", mutates_args=())
def listy(x: torch.Tensor, fs: list[float], dt: torch.dtype, dev: Optional[torch.device] = None) -> list[torch.Tensor]:
    ...
"""


def test_custom_op_inference_agrees_with_torch(tmp_path):
    import uuid

    import torch  # a dependency of opkit: a broken install fails here instead of skipping

    namespace = f"opkit_test_{uuid.uuid4().hex[:8]}"
    source = _TORCH_CASES.format(ns=namespace)
    module: dict = {}
    exec(compile(source, "cases.py", "exec", dont_inherit=True), module)  # the real custom_op, in a fresh namespace
    file = load_registration_file("cases.py", source)
    inferred = {op.name: op.schema for op in file.custom_ops}
    assert set(inferred) == {"plain", "defaults", "multi", "listy"}
    for name, schema in inferred.items():
        expected = str(module[name]._opoverload._schema)
        canonical = str(parse_schema(schema, Dialect.TORCH_LIBRARY))
        assert " ".join(canonical.split()) == " ".join(expected.split()), name
    # and torch really registered each one under the fresh namespace
    assert sorted(n for n in inferred if hasattr(getattr(torch.ops, namespace), n)) == ["defaults", "listy", "multi", "plain"]


def _only(code: str):
    from opkit.lint import Selection

    return Selection(select=(code,))


def test_library_define_declares_a_schema(tmp_path):
    text = """\
    import torch

    lib = torch.library.Library("mylib", "DEF")
    lib.define("foo(Tensor x) -> Tensor")

    @torch.library.register_fake("mylib::foo")
    def _(x):
        return x, x
    """
    file = load_registration_file("d.py", textwrap.dedent(text))
    assert [(s.text, s.line, s.column) for s in file.schema_sites()] == [("foo(Tensor x) -> Tensor", 4, 13)]
    assert found(lint([write(tmp_path, "d.py", text)])) == [("M006", 6)]


# -- false positives found on real op-plugin files (synthetic reproductions) -----------------------


def test_m014_alternative_arms_of_a_branch_are_not_duplicates(tmp_path):
    body = """\
    import sys

    if sys.version_info >= (3, 99):
        @impl(m, "f")
        def f_new(x):
            return x.new_empty(1)
    elif sys.platform == "zz":
        @impl(m, "f")
        def f_odd(x):
            return x.new_empty(2)
    else:
        @impl(m, "f")
        def f_old(x):
            return x.new_empty(3)

    try:
        m.impl("g", f_new, "Meta")
    except RuntimeError:
        m.impl("g", f_old, "Meta")

    if sys.platform == "yy":
        @impl(m, "h")
        def h_one(x):
            return x.new_empty(1)

        @impl(m, "h")
        def h_two(x):
            return x.new_empty(1)
    """
    schemas = ["f(Tensor x) -> Tensor", "g(Tensor x) -> Tensor", "h(Tensor x) -> Tensor"]
    result = lint([meta_file(tmp_path, body)], schemas=schemas)
    # Only the two registrations in the same arm clash.
    assert found(result) == [("M014", 30)]
    assert "line 26" in messages(result, "M014")[0]


def test_m014_registration_after_a_branch_still_clashes(tmp_path):
    body = """\
    import sys

    if sys.platform == "zz":
        @impl(m, "f")
        def f_a(x):
            return x.new_empty(1)

    @impl(m, "f")
    def f_b(x):
        return x.new_empty(1)
    """
    result = lint([meta_file(tmp_path, body)], schemas=["f(Tensor x) -> Tensor"])
    assert found(result) == [("M014", 12)]


def test_m003_m004_trailing_underscore_spells_a_builtin_or_keyword(tmp_path):
    # `input_`/`lambda_` are PEP 8 spellings of `input`/`lambda`; `inputs` is another name.
    body = '@impl(m, "f")\ndef f_meta(input_, lambda_, w):\n    return torch.empty_like(input_)\n'
    assert found(lint([meta_file(tmp_path, body)], schemas=["f(Tensor input, float lambda, Tensor w) -> Tensor"])) == []
    swapped = '@impl(m, "f")\ndef f_meta(w, input_):\n    return torch.empty_like(input_)\n'
    assert [c for c, _ in found(lint([meta_file(tmp_path, swapped)], schemas=["f(Tensor input, Tensor w) -> Tensor"]))] == ["M003"]
    renamed = '@impl(m, "f")\ndef f_meta(inputs, w):\n    return torch.empty_like(inputs)\n'
    assert [c for c, _ in found(lint([meta_file(tmp_path, renamed)], schemas=["f(Tensor input, Tensor w) -> Tensor"]))] == ["M004"]


OP_PLUGIN_SECTIONS_YAML = """\
all_version: [v2.1]
official:
  - func: known_aten(Tensor self, Tensor other) -> Tensor
    op_api: all_version
autograd:
custom:
  - func: my_op(Tensor x, int[] size) -> Tensor
    op_api: all_version
symint:
  - func: my_op(Tensor x, SymInt[] size) -> Tensor
quant:
"""


def test_aten_registrations_are_checked_when_declared_never_unknown(tmp_path):
    yaml_path = write(tmp_path, "op_plugin_functions.yaml", OP_PLUGIN_SECTIONS_YAML)
    body = """\
    a = Library("aten", "IMPL", "Meta")

    @impl(m, "my_op")
    def my_op_meta(x, size):
        return x.new_empty(size)

    @impl(a, "some_aten_op")
    def some_aten_op_meta(self, dim, keepdim=False):
        return self.new_empty(1)

    @impl(a, "my_op")
    def aten_my_op_meta(self):
        return self.new_empty(1)

    @impl(a, "known_aten")
    def known_aten_meta(self):
        return torch.empty_like(self)
    """
    result = lint([yaml_path, meta_file(tmp_path, body)])
    # some_aten_op is ATen's (not in the yaml): not M011. aten::my_op is not npu::my_op, even though
    # symint: repeats my_op (the repeat is the npu op). known_aten is declared in official: checked.
    assert found(result) == [("M002", 19)]
    assert "other not accepted" in messages(result, "M002")[0]


def test_m011_still_reports_unknown_ops_of_the_linted_namespace(tmp_path):
    yaml_path = write(tmp_path, "op_plugin_functions.yaml", OP_PLUGIN_SECTIONS_YAML)
    body = '@impl(m, "my_opp")\ndef my_opp_meta(x, size):\n    return x.new_empty(size)\n\n@impl(m, "my_op")\ndef my_op_meta(x, size):\n    return x.new_empty(size)\n'
    result = lint([yaml_path, meta_file(tmp_path, body)])
    assert found(result) == [("M011", 5)]


def test_m005_not_reported_for_a_parameter_that_stands_for_another_argument(tmp_path):
    # The schema gained `beta`: every later parameter shifts by one. From the source alone this is
    # a rename (as op-plugin's `npu_dropout_with_add_softmax_meta(x1, x2, ...)` for `(self, x1, ...)`
    # is), so M004 names it and M003 stays quiet; comparing the default of `axis` with the one of
    # `scale2` (the argument at its position) would be meaningless.
    body = '@impl(m, "f")\ndef f_meta(x, scale2=None, axis=-1):\n    return torch.empty_like(x)\n'
    result = lint([meta_file(tmp_path, body)], schemas=["f(Tensor x, Tensor? beta=None, Tensor? scale2=None, *, int axis=-1) -> Tensor"])
    assert [c for c, _ in found(result)] == ["M004", "M004"]
    # A plain rename still compares defaults, and a missing default still fails the dropped call.
    renamed = '@impl(m, "f")\ndef f_meta(x, mode=0, other=None):\n    return torch.empty_like(x) if mode else x\n'
    result = lint([meta_file(tmp_path, renamed)], schemas=["f(Tensor x, str rotary_mode='half', Tensor? beta=None) -> Tensor"])
    assert "M005" in [c for c, _ in found(result)]
    shifted = '@impl(m, "f")\ndef f_meta(x, scale2):\n    return torch.empty_like(x)\n'
    result = lint([meta_file(tmp_path, shifted)], schemas=["f(Tensor x, Tensor? beta=None, Tensor? scale2=None) -> Tensor"])
    assert any("has no default" in text for text in messages(result, "M005"))


@pytest.mark.parametrize(
    ("schema", "body", "expected"),
    [
        ("f(Tensor[] xs) -> (Tensor, Tensor, Tensor)", "    return (*xs, xs[0])\n", None),  # arity known at run time only
        ("f(Tensor[] xs) -> Tensor", "    return (*xs,)\n", "returns a tuple (line"),
    ],
)
def test_m006_starred_tuple_has_unknown_arity(tmp_path, schema, body, expected):
    result = lint([meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(xs):\n' + body)], schemas=[schema])
    if expected is None:
        assert messages(result, "M006") == []
    else:
        assert len(messages(result, "M006")) == 1 and expected in messages(result, "M006")[0]


def test_m002_missing_keyword_only_says_when_it_is_passed(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x):\n    return torch.empty_like(x)\n')
    result = lint([path], schemas=["f(Tensor x, *, int? k=None) -> Tensor"])
    assert messages(result, "M002") == ["keyword-only argument 'k' is passed by name whenever it is not None, but f_meta has no parameter 'k'"]


@pytest.mark.parametrize(
    "ending",
    [
        "        torch._check(False, lambda: 'unsupported')\n",
        "        torch._check_with(NotImplementedError, False, lambda: 'unsupported')\n",
        "        assert False, 'unsupported'\n",
    ],
)
def test_m006_always_raising_ending_does_not_fall_off(tmp_path, ending):
    body = '@impl(m, "f")\ndef f_meta(x, mode):\n    if mode == 0:\n        return torch.empty_like(x)\n    else:\n' + ending
    assert found(lint([meta_file(tmp_path, body)], schemas=["f(Tensor x, int mode) -> Tensor"])) == []
    # A check that can pass still falls off.
    falls = body.replace("False", "mode > 1")
    assert [c for c, _ in found(lint([meta_file(tmp_path, falls)], schemas=["f(Tensor x, int mode) -> Tensor"]))] == ["M006"]


def test_m003_only_for_a_real_slot_mismatch(tmp_path):
    # op-plugin's npu_dropout_with_add_softmax_meta(x1, x2, ...) for (Tensor self, Tensor x1, ...):
    # a rename, shifted by one, not two arguments landing in each other's parameter.
    renamed = '@impl(m, "f")\ndef f_meta(x1, x2, alpha):\n    return x1 + x2\n'
    schema = "f(Tensor self, Tensor x1, Scalar alpha) -> Tensor"
    assert [c for c, _ in found(lint([meta_file(tmp_path, renamed)], schemas=[schema]))] == ["M004"]
    swapped = '@impl(m, "f")\ndef f_meta(x1, self, alpha):\n    return x1 + self\n'
    assert [c for c, _ in found(lint([meta_file(tmp_path, swapped)], schemas=[schema]))] == ["M003"]


# -- what a user reads: every M finding's line, column, message and hint, on hand-written registrations --

DEFECTIVE_META = '''\
import torch
from torch.library import Library, impl

m = Library("npu", "IMPL", "Meta")


@impl(m, "my_op")
def my_op_meta(inp):
    return torch.empty_like(inp)


@impl(m, "my_pair")
def my_pair_meta(y, x, extra):
    return torch.empty_like(x)


@impl(m, "my_void")
def my_void_meta(x):
    return x


@impl(m, "my_def")
def my_def_meta(x, k, eps=1e-6, *, mode):
    if eps > 0:
        return (x, x)


@impl(m, "my_opp")
def my_opp_meta(x):
    return x


@impl(m, "my_op")
def my_op_meta2(x, y, *, k=1):
    return torch.empty_like(x)
'''

DEFECTIVE_CUSTOM_OPS = '''\
import torch


@torch.library.custom_op("mylib::my_add_", mutates_args=("x",), device_types="npu")
def my_add_(x: torch.Tensor, y: torch.Tensor) -> None:
    y.add_(x)


@my_add_.register_fake
def _(x: torch.Tensor, y: float) -> int:
    return x


@torch.library.custom_op("mylib::my_any", mutates_args="unknown")
def my_any(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@torch.library.custom_op("mylib::my_pad", mutates_args=())
def my_pad(x: torch.Tensor, pads: tuple[int, int]) -> torch.Tensor:
    return x


@torch.library.custom_op("mylib::my_scale", mutates_args=("x",), schema="(Tensor(a!) x, Tensor(b!) y) -> ()")
def my_scale(x: torch.Tensor, y: torch.Tensor) -> None:
    x.mul_(2)
'''


def read_by_user(result) -> list[tuple]:
    return [(f.code, Path(f.path).name, f.line, f.column, f.message, f.hint) for f in result.findings]


def test_every_meta_finding_as_the_user_reads_it(tmp_path):
    schemas = ["my_op(Tensor x, Tensor y, *, int k=1) -> Tensor", "my_pair(Tensor x, Tensor y) -> (Tensor, Tensor)", "my_void(Tensor(a!) x) -> ()",
               "my_def(Tensor x, int k=1, float eps=1e-5) -> Tensor", "my_gone(Tensor x) -> Tensor"]  # fmt: skip
    result = lint([write(tmp_path, "meta.py", DEFECTIVE_META)], schemas=schemas, use_cache=False)
    assert read_by_user(result) == [
        ("M002", "meta.py", 7, 2, "keyword-only argument 'k' is passed by name whenever it is not 1, but my_op_meta has no parameter 'k'", None),
        ("M002", "meta.py", 7, 2, "my_op_meta takes 1 positional parameters but the schema passes 2 (y not accepted)", None),
        ("M004", "meta.py", 7, 2, "parameter 'inp' receives schema argument 'x': name it 'x'", None),
        ("M002", "meta.py", 12, 2, "parameter 'extra' of my_pair_meta has no default and the schema never passes it: every call fails", None),
        ("M003", "meta.py", 12, 2, "parameters (y, x, extra) receive the schema's positional arguments (x, y): x, y land in the wrong parameter", None),
        ("M006", "meta.py", 12, 2, "my_pair_meta returns a single tensor (line 14) but the schema returns a tuple of 2", None),
        ("M007", "meta.py", 17, 2, "my_void_meta returns 'x' (the mutated input) at line 19, but the schema returns (): return None", None),
        ("M002", "meta.py", 22, 2, "parameter 'mode' of my_def_meta has no default and the schema never passes it: every call fails", None),
        ("M005", "meta.py", 22, 2, "'eps' defaults to 1e-06 but the schema's 'eps' defaults to 1e-5: calls that pass 1e-5 get 1e-06", None),
        ("M005", "meta.py", 22, 2, "schema argument 'k' defaults to 1: calls that leave it there drop it, and my_def_meta's 'k' has no default", None),
        ("M006", "meta.py", 22, 2, "my_def_meta can end without a return statement (returning None) but the schema returns one value", None),
        ("M006", "meta.py", 22, 2, "my_def_meta returns a tuple of 2 (line 25) but the schema returns one value", None),
        ("M011", "meta.py", 28, 2, "meta registration for 'npu::my_opp', which no linted schema declares", None),
        ("M014", "meta.py", 33, 2, "'npu::my_op' already has a meta registration at line 7", None),
        ("M001", "<schema 5>", 1, 1, "op 'my_gone' has no Meta registration in the linted Python files",
         'add @impl(m, "my_gone") on m = Library("npu", "IMPL", "Meta"), or @<op>.register_fake'),
    ]  # fmt: skip


def test_every_custom_op_finding_as_the_user_reads_it(tmp_path):
    path = write(tmp_path, "ops.py", DEFECTIVE_CUSTOM_OPS)
    result = lint([path], schemas=["mylib::my_add_(Tensor(a!) x, Tensor(b!) y) -> ()"], dialect=Dialect.TORCH_LIBRARY, use_cache=False)
    hint = 'add @{0}.register_fake, or @torch.library.register_fake("mylib::{0}")'
    assert read_by_user(result) == [
        ("K201", "ops.py", 4, 2, "kernel my_add_ writes 'y' (line 6: y.add_(...)), but the schema does not annotate it: torch.compile "
         "assumes 'y' unchanged: reads of it may move before the write and graph replays keep stale copies",
         'list it: mutates_args=(..., "y") (the inferred schema then reads `Tensor(a!) y`)'),
        ("K202", "ops.py", 4, 2, "the schema marks 'x' written (`Tensor(a0!) x`), but kernel my_add_ never writes it: each call clones it and is "
         "ordered as a write", "drop 'x' from mutates_args, or keep it for ordering with a comment and `# noqa: K202`"),
        ("M008", "ops.py", 4, 2, "mutates_args covers ['x'] but <schema>:1 declares ['x', 'y'] as Tensor(a!)", None),
        ("M007", "ops.py", 9, 2, "_ returns 'x' (the mutated input) at line 11, but the schema returns (): return None", None),
        ("M013", "ops.py", 9, 2, "fake parameter 'y' is annotated float, custom_op my_add_ says Tensor", None),
        ("M013", "ops.py", 9, 2, "fake returns SymInt, custom_op my_add_ returns ()", None),
        ("K202", "ops.py", 14, 2, "the schema marks 'x' written (`Tensor(a0!) x`), but kernel my_any never writes it: each call clones it and is "
         "ordered as a write", "drop 'x' from mutates_args, or keep it for ordering with a comment and `# noqa: K202`"),
        ("M001", "ops.py", 14, 2, "op 'my_any' has no register_fake in the linted Python files", hint.format("my_any")),
        ("M009", "ops.py", 14, 2, 'custom_op mylib::my_any declares mutates_args="unknown": every tensor argument counts as written', None),
        ("M012", "ops.py", 19, 2, "custom_op mylib::my_pad: tuple annotation tuple[int, int] is not supported for parameters; use list[...]", None),
        ("K202", "ops.py", 24, 2, "the schema marks 'y' written (`Tensor(b!) y`), but kernel my_scale never writes it: each call clones it and is "
         "ordered as a write", "drop 'y' from mutates_args, or keep it for ordering with a comment and `# noqa: K202`"),
        ("M001", "ops.py", 24, 2, "op 'my_scale' has no register_fake in the linted Python files", hint.format("my_scale")),
        ("M012", "ops.py", 24, 2, "custom_op mylib::my_scale: schema= marks ['x', 'y'] as Tensor(a!) but mutates_args is ['x']", None),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("params", "ret", "declared", "fires"),
    [
        ("x: torch.Tensor, k: int", "torch.Tensor", "mylib::f(Tensor x, SymInt k) -> Tensor", False),  # SymInt is int to a caller
        ("x: torch.Tensor, k: int = 2", "torch.Tensor", "mylib::f(Tensor x, int k=2) -> Tensor", False),
        ("x: torch.Tensor, k: float = 2.0", "torch.Tensor", "mylib::f(Tensor x, float k=2.0) -> Tensor", False),
        ("x: torch.Tensor, k: int = 2", "torch.Tensor", "mylib::f(Tensor x, int k=3) -> Tensor", True),  # another default
        ("x: torch.Tensor, k: int = 2", "torch.Tensor", "mylib::f(Tensor x, int k) -> Tensor", True),  # a default the schema lacks
        ("x: torch.Tensor, *, k: int = 2", "torch.Tensor", "mylib::f(Tensor x, int k=2) -> Tensor", True),  # keyword-only
        ("x: torch.Tensor, y: torch.Tensor", "torch.Tensor", "mylib::f(Tensor x, Tensor z) -> Tensor", True),  # a name
        ("x: torch.Tensor", "list[torch.Tensor]", "mylib::f(Tensor x) -> Tensor", True),  # the return type
        ("x: torch.Tensor", "list[torch.Tensor]", "mylib::f(Tensor x) -> Tensor[]", False),
    ],
)
def test_m008_compares_names_types_defaults_keywords_and_returns(tmp_path, params, ret, declared, fires):
    text = f'import torch\n\n@torch.library.custom_op("mylib::f", mutates_args=())\ndef f({params}) -> {ret}:\n    ...\n'
    result = lint([write(tmp_path, "ops.py", text)], schemas=[declared], dialect=Dialect.TORCH_LIBRARY)
    m008 = messages(result, "M008")
    assert m008 == ([f"inferred schema 'mylib::f({_inferred(params)}) -> {_inferred(ret)}' differs from '{declared}' declared at <schema>:1"] if fires else [])


def _inferred(python: str) -> str:
    """The schema text torch infers from these annotations (written out for the cases above)."""
    return {
        "x: torch.Tensor, k: int = 2": "Tensor x, SymInt k=2",
        "x: torch.Tensor, *, k: int = 2": "Tensor x, *, SymInt k=2",
        "x: torch.Tensor, y: torch.Tensor": "Tensor x, Tensor y",
        "x: torch.Tensor": "Tensor x",
        "torch.Tensor": "Tensor",
        "list[torch.Tensor]": "Tensor[]",
    }.get(python, python)


# -- binding a registration to its schema: namespaces and sections ---------------------------------


def test_a_registration_in_another_namespace_registers_another_op(tmp_path):
    # Library("npu", ...) registers npu::f; mylib::f (a schema with its own namespace) still has no Meta.
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x):\n    return torch.empty_like(x)\n')
    result = lint([path], schemas=["mylib::f(Tensor x) -> Tensor"], dialect=Dialect.TORCH_LIBRARY)
    assert [(f.code, f.op) for f in result.findings] == [("M011", "f"), ("M001", "f")]
    assert messages(result, "M011") == ["meta registration for 'npu::f', which no linted schema declares"]
    assert messages(result, "M001") == ["op 'f' has no Meta registration in the linted Python files"]


def test_a_registration_binds_to_the_schema_of_its_own_namespace_first(tmp_path):
    # "f(...)" without a namespace declares f in any namespace; mylib::f is the one mylib's registration gets.
    body = 'lib = Library("mylib", "IMPL", "Meta")\n\n@impl(lib, "f")\ndef f_meta(x):\n    return torch.empty_like(x)\n'
    result = lint([meta_file(tmp_path, body)], schemas=["f(Tensor x, Tensor y) -> Tensor", "mylib::f(Tensor x) -> Tensor"], dialect=Dialect.TORCH_LIBRARY)
    assert found(result) == []


def test_the_custom_entry_binds_before_its_symint_repeat_whatever_the_section_order(tmp_path):
    # symint: written above custom: in the file; the op's own entry (custom:) is still the one compared.
    yaml_path = write(
        tmp_path,
        "op_plugin_functions.yaml",
        """\
        all_version: [v2.1]
        official:
        autograd:
        symint:
          - func: my_op(Tensor x, SymInt[] shape) -> Tensor
        custom:
          - func: my_op(Tensor x, int[] size) -> Tensor
            op_api: all_version
        quant:
        """,
    )
    body = '@impl(m, "my_op")\ndef my_op_meta(x, size):\n    return x.new_empty(size)\n'
    assert found(lint([yaml_path, meta_file(tmp_path, body)])) == []


def test_a_custom_op_fake_does_not_end_the_binding_of_later_registrations(tmp_path):
    text = """\
    import torch
    from torch.library import Library, impl

    m = Library("npu", "IMPL", "Meta")

    @torch.library.custom_op("mylib::g", mutates_args=())
    def g(x: torch.Tensor) -> torch.Tensor:
        ...

    @g.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)

    @impl(m, "f")
    def f_meta(x):
        return torch.empty_like(x)
    """
    result = lint([write(tmp_path, "meta.py", text)], schemas=["f(Tensor x, Tensor y) -> Tensor"])
    assert found(result) == [("M002", 14)]


# -- M001 ------------------------------------------------------------------------------------------


def test_m001_an_official_entry_before_the_custom_one_needs_no_meta(tmp_path):
    yaml_path = write(tmp_path, "op_plugin_functions.yaml", OP_PLUGIN_SECTIONS_YAML)
    path = meta_file(tmp_path, '@impl(m, "other")\ndef other_meta(x):\n    return torch.empty_like(x)\n')
    result = lint([yaml_path, path], schemas=["other(Tensor x) -> Tensor"], selection=_only("M001"))
    assert [(f.code, f.op, f.line) for f in result.findings] == [("M001", "my_op", 7)]


def test_m001_a_torch_library_schema_string_asks_for_a_meta_registration(tmp_path):
    # Only a custom_op's own schema asks for register_fake; a --schema in torch.library's dialect may get either.
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x):\n    return torch.empty_like(x)\n')
    result = lint([path], schemas=["npu::f(Tensor x) -> Tensor", "npu::g(Tensor x) -> Tensor"], dialect=Dialect.TORCH_LIBRARY)
    assert messages(result, "M001") == ["op 'g' has no Meta registration in the linted Python files"]


# -- M002 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "signature", "expected"),
    [
        # a keyword-only argument without a default is always passed by name
        ("f(Tensor x, *, int k) -> Tensor", "x", "keyword-only argument 'k' is passed by name, but f_meta has no parameter 'k'"),
        # a positional-only parameter cannot receive a keyword argument (TypeError: got some positional-only arguments passed as keyword arguments)
        ("f(Tensor x, *, int k=1) -> Tensor", "x, k=1, /", "keyword-only argument 'k' is passed by name whenever it is not 1, but f_meta has no parameter 'k'"),
        # *args swallows y and z; the keyword-only 'extra' is never passed
        ("f(Tensor x, Tensor y, Tensor z) -> Tensor", "x, *args, extra", "parameter 'extra' of f_meta has no default and the schema never passes it: every call fails"),
        ("f(Tensor x, Tensor y, Tensor z) -> Tensor", "x", "f_meta takes 1 positional parameters but the schema passes 3 (y, z not accepted)"),
        # a positional-only parameter past the schema's positional arguments
        ("f(Tensor x) -> Tensor", "x, extra, /", "parameter 'extra' of f_meta has no default and the schema never passes it: every call fails"),
    ],
)
def test_m002_calls_the_function_cannot_take(tmp_path, schema, signature, expected):
    result = lint([meta_file(tmp_path, f'@impl(m, "f")\ndef f_meta({signature}):\n    return torch.empty_like(x)\n')], schemas=[schema])
    assert messages(result, "M002") == [expected]


# -- M004 ------------------------------------------------------------------------------------------


def test_m004_keyword_only_taken_positionally_hints_where_it_goes(tmp_path):
    path = meta_file(tmp_path, '@impl(m, "f")\ndef f_meta(x, k=1):\n    return x.new_empty([k])\n')
    result = lint([path], schemas=["f(Tensor x, *, int k=1) -> Tensor"])
    assert [(f.code, f.line, f.message, f.hint) for f in result.findings] == [
        ("M004", 5, "schema argument 'k' is keyword-only but f_meta takes it positionally", "put 'k' after '*'")
    ]


# -- M005 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "signature", "expected"),
    [
        # defaults that are the schema's: a tuple is the list a schema int[] default reads as (int[2] pads=1 is [1, 1])
        ("f(Tensor x, int k=1, int[2] pads=1) -> Tensor", "x, k=1, pads=(1, 1)", []),
        ("f(Tensor x, int[2] pads=[1,2]) -> Tensor", "x, pads=(1, 2)", []),
        ("f(Tensor x, int[2] pads=[1,2]) -> Tensor", "x, pads=(2, 1)",
         ["'pads' defaults to (2, 1) but the schema's 'pads' defaults to [1,2]: calls that pass [1,2] get (2, 1)"]),
        # None where the schema has a value, never tested for None: the function computes with None
        ("f(Tensor x, int k=1) -> Tensor", "x, k=None", ["'k' defaults to None but the schema's 'k' defaults to 1: calls that pass 1 get None"]),
        # a keyword-only argument the function lacks (M002's) does not hide the next one's default
        ("f(Tensor x, *, int a=1, int k=1) -> Tensor", "x, *, k=2", ["'k' defaults to 2 but the schema's 'k' defaults to 1: calls that pass 1 get 2"]),
        # a None resolved by the function does not hide the next one's default
        ("f(Tensor x, int d=1, int k=1) -> Tensor", "x, d=None, k=2", ["'k' defaults to 2 but the schema's 'k' defaults to 1: calls that pass 1 get 2"]),
    ],
)
def test_m005_read_defaults(tmp_path, schema, signature, expected):
    body = f'@impl(m, "f")\ndef f_meta({signature}):\n    if d is None:\n        d = 1\n    return x.new_empty([d, k, *pads, a])\n'
    result = lint([meta_file(tmp_path, body)], schemas=[schema])
    assert messages(result, "M005") == expected


def test_m005_a_shifted_parameter_does_not_hide_a_later_default(tmp_path):
    # The schema gained 'beta': 'scale' sits in beta's slot (M004 names it; its default is scale's, not beta's),
    # and the keyword-only 'k' is still compared.
    body = '@impl(m, "f")\ndef f_meta(x, scale=2, extra=0, *, k=2):\n    return x.new_empty([scale, k])\n'
    result = lint([meta_file(tmp_path, body)], schemas=["f(Tensor x, int beta=1, int scale=2, *, int k=1) -> Tensor"])
    assert messages(result, "M005") == ["'k' defaults to 2 but the schema's 'k' defaults to 1: calls that pass 1 get 2"]


# -- M006/M007: what a user reads ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    return y\n", "upd_meta returns 'y' at line 7, but the schema returns (): return None"),
        ("    return x\n", "upd_meta returns 'x' (the mutated input) at line 7, but the schema returns (): return None"),
        ("    return torch.empty_like(y)\n", "upd_meta returns a tensor at line 7, but the schema returns (): return None"),
        ("    return (x, y)\n", "upd_meta returns a tuple at line 7, but the schema returns (): return None"),
        ("    return [x]\n", "upd_meta returns a list at line 7, but the schema returns (): return None"),
        ("    return helper(x)\n", None),
    ],
)
def test_m007_messages(tmp_path, body, expected):
    result = lint([meta_file(tmp_path, '@impl(m, "upd")\ndef upd_meta(x, y):\n' + body)], schemas=["upd(Tensor(a!) x, Tensor y) -> ()"])
    assert messages(result, "M007") == ([expected] if expected else [])


# -- custom_op rules -------------------------------------------------------------------------------


def test_m008_each_custom_op_against_each_declaration_of_its_own_op(tmp_path):
    text = """\
    import torch

    @torch.library.custom_op("mylib::bad", mutates_args=())
    def bad(x: torch.Tensor, pads: tuple[int, int]) -> torch.Tensor:
        ...

    @torch.library.custom_op("mylib::f", mutates_args=())
    def f(x: torch.Tensor) -> torch.Tensor:
        ...
    """
    # otherlib::f is another op; the first mylib::f agrees, the second does not
    schemas = ["otherlib::f(Tensor x, int k) -> Tensor", "mylib::f(Tensor x) -> Tensor", "mylib::f(Tensor x, int k) -> Tensor"]
    result = lint([write(tmp_path, "ops.py", text)], schemas=schemas, dialect=Dialect.TORCH_LIBRARY, selection=_only("M008"))
    assert [(f.line, f.message) for f in result.findings] == [
        (7, "inferred schema 'mylib::f(Tensor x) -> Tensor' differs from 'mylib::f(Tensor x, int k) -> Tensor' declared at <schema 3>:1")
    ]


@pytest.mark.parametrize(
    ("params", "declared"),
    [
        ("x: torch.Tensor, k: float", "mylib::f(Tensor x, int k) -> Tensor"),  # only a type
        ("x: torch.Tensor, reduction: int", "mylib::f(Tensor x, int reduction=Mean) -> Tensor"),  # a default torch spells as a name
    ],
)
def test_m008_argument_type_and_a_default_only_the_declaration_has(tmp_path, params, declared):
    text = f'import torch\n\n@torch.library.custom_op("mylib::f", mutates_args=())\ndef f({params}) -> torch.Tensor:\n    ...\n'
    result = lint([write(tmp_path, "ops.py", text)], schemas=[declared], dialect=Dialect.TORCH_LIBRARY)
    assert [m.split("' differs from")[0] for m in messages(result, "M008")] == [
        "inferred schema 'mylib::f(" + params.replace("x: torch.Tensor", "Tensor x").replace("k: float", "float k").replace("reduction: int", "SymInt reduction") + ") -> Tensor"
    ]


def test_m008_a_declared_default_torch_cannot_read_is_still_a_default(tmp_path):
    # op-plugin's codegen takes `int k=abc` (a C++ expression); the custom_op has no default at all
    text = 'import torch\n\n@torch.library.custom_op("mylib::f", mutates_args=())\ndef f(x: torch.Tensor, k: int) -> torch.Tensor:\n    ...\n'
    result = lint([write(tmp_path, "ops.py", text)], schemas=["mylib::f(Tensor x, int k=abc) -> Tensor"], selection=_only("M008"))
    assert messages(result, "M008") == ["inferred schema 'mylib::f(Tensor x, SymInt k) -> Tensor' differs from 'mylib::f(Tensor x, int k=abc) -> Tensor' declared at <schema>:1"]


def test_k201_each_custom_op_and_each_way_of_writing(tmp_path):
    text = """\
    import torch

    @torch.library.custom_op("mylib::any", mutates_args="unknown")
    def any_(x: torch.Tensor) -> None:
        x.add_(1)

    @torch.library.custom_op("mylib::upd", mutates_args=())
    def upd(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        a += 1
        b[0] += 1
        n = c.__len__()
        return d.clone() + n
    """
    result = lint([write(tmp_path, "ops.py", text)], selection=_only("K201"))
    written = [(m.split("writes '")[1].split("'")[0], m.split("(line ")[1].split(":")[0]) for m in messages(result, "K201")]
    assert written == [("a", "9"), ("b", "10")]


def test_k201_plain_function_calls_write_nothing(tmp_path):
    text = 'import torch\n\n@torch.library.custom_op("mylib::f", mutates_args=())\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return abs(x)\n'
    assert found(lint([write(tmp_path, "ops.py", text)])) == [("M001", 3)]


def test_m011_an_aten_registration_does_not_end_the_check(tmp_path):
    body = 'a = Library("aten", "IMPL", "Meta")\n\n@impl(a, "some_aten_op")\ndef aten_meta(x):\n    return x\n\n@impl(m, "my_opp")\ndef my_opp_meta(x):\n    return x\n'
    result = lint([meta_file(tmp_path, body)], schemas=["my_op(Tensor x) -> Tensor"])
    assert messages(result, "M011") == ["meta registration for 'npu::my_opp', which no linted schema declares"]


@pytest.mark.parametrize(
    ("decorator", "expected"),
    [
        # torch accepts the in-place name's schema (op-plugin's codegen would refuse it) and raises on mutates_args
        ('@torch.library.custom_op("mylib::g_", mutates_args=(), schema="(Tensor(a!) x) -> ()")',
         ["custom_op mylib::g_: schema= marks ['x'] as Tensor(a!) but mutates_args is []"]),
        # a schema torch cannot parse is S001's, not a mutates_args mismatch
        ('@torch.library.custom_op("mylib::g", mutates_args=(), schema="(Tensor(a! x) -> ()")', []),
    ],
)
def test_m012_explicit_schema_as_torch_parses_it(tmp_path, decorator, expected):
    text = f"import torch\n\n{decorator}\ndef g_(x):\n    ...\n"
    result = lint([write(tmp_path, "ops.py", text)], selection=_only("M012"))
    assert messages(result, "M012") == expected


def test_m013_return_mismatch_names_the_op_and_earlier_meta_registrations_do_not_end_the_check(tmp_path):
    text = """\
    import torch
    from torch.library import Library, impl

    m = Library("npu", "IMPL", "Meta")

    @impl(m, "h")
    def h_meta(x):
        return x

    @torch.library.custom_op("mylib::f", mutates_args=())
    def f(x: torch.Tensor) -> torch.Tensor:
        ...

    @f.register_fake
    def _(x: torch.Tensor) -> list[torch.Tensor]:
        return [x]
    """
    result = lint([write(tmp_path, "ops.py", text)], selection=_only("M013"))
    assert [(f.line, f.op, f.message) for f in result.findings] == [(14, "f", "fake returns Tensor[], custom_op f returns Tensor")]
