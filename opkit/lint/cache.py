"""A persistent cache of schema parse results, as ruff and mypy keep one.

torchgen's parser is the authority for op-plugin ``func`` strings and also the slowest step of
linting a large op_plugin_functions.yaml (~0.1 ms a schema). Results are kept per schema string, so
editing one entry re-parses only that entry, and are reused only by the same opkit and the same
installed torchgen (``parser_fingerprint``): a cached run reports exactly what a cold run would.
Set ``OPKIT_CACHE_DIR`` to move it, ``OPKIT_NO_CACHE=1`` or ``opkit lint --no-cache`` to bypass it.
Any cache problem (missing, corrupt, unwritable) just means parsing again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opkit.signature import Dialect, OpSignature, SchemaError, parsed_results, parser_fingerprint, remember_results

# Oldest entries beyond this are dropped when the cache is rewritten.
MAX_ENTRIES = 50_000

Key = tuple[str, Dialect]


def cache_dir() -> Path:
    if os.environ.get("OPKIT_CACHE_DIR"):
        return Path(os.environ["OPKIT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "opkit"


def enabled() -> bool:
    return os.environ.get("OPKIT_NO_CACHE", "") in ("", "0")


def _cache_file() -> Path:
    digest = hashlib.sha256(parser_fingerprint().encode()).hexdigest()[:24]
    return cache_dir() / f"schemas-{digest}.pickle"


@dataclass
class ParseCache:
    """The stored results; ``missing`` are the keys of this run that had to be parsed afresh."""

    path: Path
    stored: dict[Key, OpSignature | SchemaError] = field(default_factory=dict)
    missing: list[Key] = field(default_factory=list)

    @classmethod
    def open(cls, keys: Sequence[Key]) -> ParseCache:
        """Load the cache and seed the parser's memo with every result it has for ``keys``."""
        cache = cls(_cache_file())
        try:
            with open(cache.path, "rb") as f:
                stored = pickle.load(f)
            if isinstance(stored, dict):
                cache.stored = stored
        except Exception:  # missing, truncated, or written by another Python: parse afresh
            pass
        remember_results({k: cache.stored[k] for k in keys if k in cache.stored})
        cache.missing = [k for k in keys if k not in cache.stored]
        return cache

    def save(self) -> None:
        """Add this run's new results and rewrite the file atomically; skip silently when unwritable."""
        if not self.missing:
            return
        merged = dict(self.stored)
        merged.update(parsed_results(self.missing))
        if len(merged) > MAX_ENTRIES:
            merged = dict(list(merged.items())[-MAX_ENTRIES:])
        store_pickle(self.path, merged)


def store_pickle(path: Path, value: object) -> bool:
    """Pickle ``value`` to ``path`` atomically (a temporary file renamed into place); False, and nothing
    left behind, when the cache directory is unwritable: a cache never fails a lint."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pickle")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
