"""torch_npu's own ``npu::`` ops: the names in the op list its codegen was fed (the torch-npu wheel's
``npu_native_functions_by_codegen.yaml``, ``custom:`` sections), read where it already lies, never
downloaded, unpacked or imported. ``opkit lint`` asks when a linted file defines ``npu::`` ops (a test
stand-in re-declaring torch_npu's), so this module stays light: no torch, no zip handling at import.

Where it is read, first found wins: ``OPKIT_TORCH_NPU`` (a ``.whl``, read in place, or an unpacked tree),
else a tree ``opkit.torch_npu_wheel`` unpacked into opkit's cache (the one of the installed torch's
version when there are several). Neither: no list, and such stand-ins are linted as new ops.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from opkit import cachedir

ENV_VAR = "OPKIT_TORCH_NPU"
CACHE_DIR = "torch-npu"  # under opkit's cache directory: the unpacked wheel trees
OPS_YAML = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"

# Sections whose funcs torch_npu registers as new ops in its ``npu`` namespace (the others are ATen's).
_OP_SECTIONS = ("custom", "custom_autograd")
_SECTION = re.compile(r"([A-Za-z_]\w*)\s*:")
_FUNC = re.compile(r"\s*(?:-\s+)?func:\s*['\"]?([A-Za-z_][\w.]*)\s*\(")


def declared_ops(text: str) -> frozenset[str]:
    """``name`` / ``name.overload`` of every func in the list's custom sections: a line scan, not a yaml
    parse (only the names are needed)."""
    names: set[str] = set()
    section = None
    for line in text.splitlines():
        if line[:1].isalpha() or line[:1] == "_":
            m = _SECTION.match(line)
            section = m.group(1) if m else None
            continue
        if section in _OP_SECTIONS:
            m = _FUNC.match(line)
            if m:
                names.add(m.group(1))
    return frozenset(names)


def location() -> tuple[Path, str | None] | None:
    """(the list's file, None) or (the ``.whl`` holding it, its member name); None when there is none.
    Never raises: an unreadable path is as if there were none."""
    try:
        return _location()
    except OSError:
        return None


def _location() -> tuple[Path, str | None] | None:
    source = os.environ.get(ENV_VAR)
    if source:
        path = Path(source).expanduser()
        if path.is_file() and path.suffix == ".whl":
            return path, OPS_YAML
        return (path / OPS_YAML, None) if (path / OPS_YAML).is_file() else None
    root = cachedir.location() / CACHE_DIR
    trees = sorted(p for p in root.iterdir() if (p / OPS_YAML).is_file()) if root.is_dir() else []
    if not trees:
        return None
    if len(trees) > 1:
        try:
            from importlib import metadata

            version = metadata.version("torch").split("+", 1)[0]
            trees.sort(key=lambda p: not p.name.startswith(version))
        except Exception:  # no torch installed: any tree will do
            pass
    return trees[0] / OPS_YAML, None


def stamp() -> tuple:
    """What ``location()`` finds now, by stat (path, member, size, mtime): part of lint's result cache key."""
    where = location()
    if where is None:
        return ()
    try:
        info = where[0].stat()
    except OSError:
        return ()
    return (str(where[0]), where[1], info.st_size, info.st_mtime_ns)


def read(where: tuple[Path, str | None]) -> str | None:
    """The list's text at ``where`` (``location()``); None when it cannot be read."""
    path, member = where
    try:
        if member is None:
            return path.read_text(encoding="utf-8", errors="replace")
        import zipfile

        with zipfile.ZipFile(path) as archive:
            return archive.read(member).decode("utf-8", errors="replace")
    except Exception:  # OSError, a missing member (KeyError), a damaged zip (BadZipFile): no list
        return None
