"""Where an installed package lives, found without importing it: importing torch_npu off an NPU fails, and
importing torch to learn its version or headers costs a cold ``opkit lint`` seconds."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_dir(name: str) -> Path | None:
    """The directory of the importable package ``name``, or None when it is not installed (or is a plain module)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))
