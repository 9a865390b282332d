"""torch_npu's own ``npu::`` ops, read from the op list its codegen was fed (the wheel's
``npu_native_functions_by_codegen.yaml``): text -> the ops' names. A line scan, not a yaml parse: only the
``func:`` names of the ``custom:`` sections are needed, and lint reads this list whenever a linted file
defines ``npu::`` ops."""

from __future__ import annotations

import re

# Sections whose funcs torch_npu registers as new ops in its ``npu`` namespace (the others are ATen's).
_OP_SECTIONS = ("custom", "custom_autograd")
_SECTION = re.compile(r"([A-Za-z_]\w*)\s*:")
_FUNC = re.compile(r"\s*(?:-\s+)?func:\s*['\"]?([A-Za-z_][\w.]*)\s*\(")


def declared_ops(text: str) -> frozenset[str]:
    """``name`` / ``name.overload`` of every func in the list's custom sections."""
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
