"""A C++-defined op (``m.def("schema")`` in a ``TORCH_LIBRARY`` block) as a ``SourceOp``, adopted like a yaml entry:
its schema is the op, its block's namespace the library's namespace (``--style library``)."""

from __future__ import annotations

from opkit.adopt.model import AdoptError, Skipped, SourceOp
from opkit.formats.cpp_registrations import CppReadError, find_def, read_with_includes

KIND = "C++ TORCH_LIBRARY def"


def read_cpp_def(path: str, text: str, op: str | None, read_text) -> SourceOp:
    try:
        records = read_with_includes(path, text, read_text)
    except CppReadError as exc:
        raise AdoptError(exc.message, path=path, line=exc.line) from None
    try:
        chosen, notes = find_def(records, op)
    except ValueError as exc:
        raise AdoptError(str(exc), path=path, line=1) from None
    head, sep, rest = chosen.schema.strip().partition("(")
    schema = head.strip().rsplit("::", 1)[-1] + sep + rest  # the namespace travels as the spec's namespace
    skipped = tuple(Skipped(0, note) for note in notes)
    if chosen.block is not None and chosen.block.namespace_note:
        skipped += (Skipped(chosen.block.line, chosen.block.namespace_note),)
    return SourceOp(path=path, kind=KIND, op_type="", schema=schema, schema_line=chosen.line, skipped=skipped, line=chosen.line, entry=(("namespace", chosen.namespace),))
