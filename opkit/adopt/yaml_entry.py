"""One entry of an op_plugin_functions.yaml (``--op NAME`` or ``NAME.OVERLOAD``) as a ``SourceOp``.

The file is loaded by the located loader `opkit lint` uses and kept per path while unchanged, so adopting
every entry of the real 1514-entry file reads it once. The entry's ``func`` is the schema; its other
fields (versions, ``gen_opapi``, tags) are kept as they are.
"""

from __future__ import annotations

import functools
import os

from opkit.adopt.model import AdoptError, Skipped, SourceOp
from opkit.lint.sources import InputError, NotLinted
from opkit.lint.sources.op_plugin_yaml import OpPluginFile, YamlEntry, load_op_plugin_yaml


@functools.lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int, size: int) -> OpPluginFile:
    return load_op_plugin_yaml(path)


def _entries(path: str) -> OpPluginFile:
    try:
        info = os.stat(path)
        return _load(os.path.abspath(path), info.st_mtime_ns, info.st_size)
    except OSError as exc:
        raise AdoptError(f"cannot read: {exc.strerror or exc}", path=path) from None
    except InputError as exc:
        raise AdoptError(exc.message, path=path, line=exc.line) from None
    except NotLinted as exc:
        raise AdoptError(f"not an op_plugin_functions.yaml: {exc.reason}", path=path, line=1) from None


def _full_name(entry: YamlEntry) -> str:
    return (entry.func or "").split("(", 1)[0].strip()


_VERSION_KEYS = ("op_api", "acl_op", "sparse")


def _versions(entry: YamlEntry) -> str:
    return "; ".join(f"{k}: {entry.get(k).plain}" for k in _VERSION_KEYS if entry.get(k) is not None)


def _is_current(entry: YamlEntry) -> bool:
    """The entry the newest torch builds: its version spec reaches ``newest`` (or is ``all_version``)."""
    return any(word in _versions(entry) for word in ("newest", "all_version"))


def read_entry(path: str, op: str | None) -> SourceOp:
    """The ``custom:`` entry whose func is ``op`` (``npu_max`` picks the overload-less one, ``npu_max.dim`` that overload)."""
    file = _entries(path)
    if op is None:
        raise AdoptError("an op_plugin_functions.yaml holds many ops: name one with --op NAME (NAME.OVERLOAD for an overload)", path=path, line=1)
    named = [e for e in file.entries if _full_name(e) == op or _full_name(e).split(".", 1)[0] == op]
    # op-plugin lists custom ops again under symint: (their SymInt form); the custom: entry is the op
    named = [e for e in named if e.section == "custom"] or named
    exact = [e for e in named if _full_name(e) == op]
    chosen = exact or named
    if not chosen:
        raise AdoptError(f"no entry has func {op}(...)", path=path, line=1)
    skipped: tuple[Skipped, ...] = ()
    if len({_full_name(e) for e in chosen}) > 1:
        raise AdoptError(f"{op} has {len(chosen)} overloads ({', '.join(_full_name(e) for e in chosen)}); name one as NAME.OVERLOAD", path=path, line=chosen[0].line)
    if len(chosen) > 1:
        # One op declared once per range of torch versions (SymInt[] from v2.x on, ...): the newest is adopted.
        entry = next((e for e in reversed(chosen) if _is_current(e)), chosen[-1])
        skipped = tuple(Skipped(e.line, f"another entry of {op} (for other torch versions: {_versions(e)}) not adopted") for e in chosen if e is not entry)
    else:
        entry = chosen[0]
    if entry.section != "custom":
        raise AdoptError(f"{op} is in the {entry.section}: section (an ATen overload op-plugin implements), not a custom op to adopt", path=path, line=entry.line)
    fields = tuple((key, node.plain) for key, node in entry.fields.items())
    return SourceOp(
        path=path, kind="op_plugin_functions.yaml entry", op_type="", schema=entry.func or "",
        schema_line=entry.key_lines.get("func", entry.line), entry=fields, skipped=skipped, line=entry.line,
    )  # fmt: skip
