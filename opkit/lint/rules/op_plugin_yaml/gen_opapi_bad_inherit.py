"""Y105 gen-opapi-bad-inherit."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import file_index, GEN_OPAPI_SECTIONS
from opkit.formats.op_plugin_yaml import OpPluginFile
from opkit.signature import SchemaKind


@rule(
    "Y105",
    "gen-opapi-bad-inherit",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'official:\n'
        '  - func: abs(Tensor self) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      structured_inherit: abs.outt\n'
        '  - func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: self, dtype: self}\n'
        '      exec: aclnnAbs'
    ),
    fixed=(
        'official:\n'
        '  - func: abs(Tensor self) -> Tensor\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      structured_inherit: abs.out\n'
        '  - func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n'
        '    op_api: all_version\n'
        '    gen_opapi:\n'
        '      out: {size: self, dtype: self}\n'
        '      exec: aclnnAbs'
    ),
)
def gen_opapi_bad_inherit(file: OpPluginFile) -> Iterator[Violation]:
    """``structured_inherit`` does not name an out variant with its own gen_opapi.

    The target is looked up by ``name.overload`` among official and custom entries with gen_opapi;
    a missing one raises "The structured_inherit func ... is None" (or, for an in-place op, crashes
    later). The target must be an out variant and must not inherit in turn.
    """
    index = file_index(file)
    for fact in index.entries:
        node = fact.entry.get("gen_opapi")
        if node is None or node.kind != "mapping" or fact.entry.section not in GEN_OPAPI_SECTIONS:
            continue
        inherit = node.value.get("structured_inherit")
        if inherit is None:
            continue
        name = str(inherit.value)
        target = index.gen_opapi_by_name.get(name)
        problem = None
        if target is None:
            problem = f"structured_inherit '{name}' names no official/custom entry with gen_opapi"
        elif target.signature is not None and target.signature.kind is not SchemaKind.OUT:
            problem = f"structured_inherit '{name}' is not an out variant ({target.signature.kind.value})"
        elif "structured_inherit" in target.entry.get("gen_opapi").key_lines:
            problem = f"structured_inherit '{name}' inherits in turn; point at the out variant itself"
        if problem:
            yield Violation(problem, line=inherit.line, column=inherit.column, op=fact.op)
