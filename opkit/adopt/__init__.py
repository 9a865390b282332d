"""`opkit new --from`: adopt an op that already exists on the Ascend C side.

Three source formats, each read by its reader in ``opkit.formats`` into one model
(``opkit.formats.source_op.SourceOp``), and one step to the spec `opkit new` generates from
(``derive.adopt_source``):

- ``msopgen_json.read_prototype``: an msOpGen prototype JSON (a list of ops or one; ``--op`` picks one);
- ``opdef_cpp.read_opdef``: an op_host C++ file with an OpDef (a tolerant reader of the fluent declarations);
- ``op_plugin_yaml.read_entry``: an op_plugin_functions.yaml ``custom:`` entry (``--op NAME`` or ``NAME.OVERLOAD``).

Nothing here imports torch.
"""

from __future__ import annotations

import os

from typing import TYPE_CHECKING

from opkit.formats.source_op import AdoptError, Skipped, SourceAttr, SourceOp, SourceTensor

if TYPE_CHECKING:
    from opkit.adopt.derive import Adoption

# Importing this package must stay light, so the derivation (which needs the generator's spec) is
# imported when an op is adopted.

__all__ = ["AdoptError", "Adoption", "Skipped", "SourceAttr", "SourceOp", "SourceTensor", "adopt", "read_source", "source_kind"]

_CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".h", ".hpp", ".hh")


def source_kind(path: str, text: str) -> str:
    """``json``, ``cpp`` or ``yaml``: by the file's extension, else by its content."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".json":
        return "json"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix in _CPP_SUFFIXES:
        return "cpp"
    head = text.lstrip()[:1]
    if head in "[{" and head:
        return "json"
    if "OpDef" in text:
        return "cpp"
    return "yaml"


def read_source(path: str, op: str | None = None) -> SourceOp:
    """The op ``op`` (an OpType, or a yaml func NAME[.OVERLOAD]) of the file at ``path``."""
    from opkit.formats.files import InputError, read_text

    try:
        text = read_text(path)
    except InputError as exc:
        raise AdoptError(exc.message, path=path, line=exc.line) from None
    kind = source_kind(path, text)
    if kind == "json":
        from opkit.formats.msopgen_json import read_prototype

        return read_prototype(path, text, op)
    if kind == "cpp":
        from opkit.formats.opdef_cpp import read_opdef

        return read_opdef(path, text, op)
    from opkit.formats.op_plugin_yaml import read_entry

    return read_entry(path, op)


def adopt(path: str, *, op: str | None = None, name: str | None = None, **options) -> Adoption:
    """Read ``path`` and derive the spec; ``options`` are make_spec's, given by the user, and win."""
    from opkit.adopt.derive import adopt_source

    return adopt_source(read_source(path, op), name=name, **options)


def __getattr__(name: str):
    if name == "Adoption":
        from opkit.adopt.derive import Adoption

        return Adoption
    raise AttributeError(name)
