"""An op_host C++ file's OpDefs, read by the same tolerant reader `opkit new --from` uses (``opkit.adopt.opdef_cpp``).

A file found by walking a directory without ``public OpDef`` in it (a kernel, a tiling source) is not
linted; one that cannot be read as OpDefs (unbalanced brackets, an unknown dtype, ...) is E002 at its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from opkit.adopt.model import AdoptError, SourceOp
from opkit.lint.sources import InputError, NotLinted, SchemaSite
from opkit.lint.suppression import NoqaMap


@dataclass(eq=False)
class OpDefFile:
    path: str
    text: str
    ops: list[SourceOp]
    structure_errors: list[InputError] = field(default_factory=list)
    noqa: NoqaMap = field(default_factory=NoqaMap)

    def schema_sites(self) -> list[SchemaSite]:
        return []  # an OpDef declares no PyTorch schema; the drift rules (O1xx) pair it with one


def load_opdef_cpp(path: str, text: str, *, explicit: bool = True) -> OpDefFile:
    from opkit.adopt.opdef_cpp import op_types, read_opdef

    if "OpDef" not in text:
        if not explicit:
            raise NotLinted("a C++ file without an OpDef (a kernel or tiling source)")
        raise InputError("E003", "no OpDef found (no `class X : public OpDef`)")
    try:
        names = op_types(text) or [None]
        ops = [read_opdef(path, text, name) for name in names]
    except AdoptError as exc:
        if not explicit and "no OpDef found" in exc.message:
            raise NotLinted("a C++ file that mentions OpDef but declares none") from None
        raise InputError("E002", f"cannot read the OpDef: {exc.message}", line=exc.line or 1) from None
    return OpDefFile(path, text, ops, noqa=NoqaMap.from_text(text, comment="//"))
