"""A persistent cache of schema parse results, as ruff and mypy keep one.

torchgen's parser is the authority for op-plugin ``func`` strings and also the slowest step of
linting a large op_plugin_functions.yaml (~0.1 ms a schema). Results are stored per set of schemas
and reused only by the same opkit and the same installed torchgen (``parser_fingerprint``), so a
cached run reports exactly what a cold run would. Set ``OPKIT_CACHE_DIR`` to move it,
``OPKIT_NO_CACHE=1`` or ``opkit lint --no-cache`` to bypass it. Any cache problem means a cold run.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Sequence
from pathlib import Path

from opkit.signature import Dialect, parsed_results, parser_fingerprint, remember_results


def cache_dir() -> Path:
    if os.environ.get("OPKIT_CACHE_DIR"):
        return Path(os.environ["OPKIT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "opkit"


def enabled() -> bool:
    return os.environ.get("OPKIT_NO_CACHE", "") in ("", "0")


def _path_for(keys: Sequence[tuple[str, Dialect]]) -> Path:
    digest = hashlib.sha256(parser_fingerprint().encode())
    for text, dialect in keys:
        digest.update(dialect.value.encode() + b"\0" + text.encode("utf-8", "surrogatepass") + b"\0")
    return cache_dir() / f"schemas-{digest.hexdigest()[:32]}.pickle"


def load(keys: Sequence[tuple[str, Dialect]]) -> bool:
    """Seed the parser's memo from the cache; True when every key was found."""
    if not keys:
        return False
    try:
        with open(_path_for(keys), "rb") as f:
            results = pickle.load(f)
    except Exception:  # missing, truncated or from another Python: a cold run
        return False
    if not isinstance(results, dict) or set(results) != set(keys):
        return False
    remember_results(results)
    return True


def store(keys: Sequence[tuple[str, Dialect]]) -> None:
    """Write the parse results for ``keys`` atomically; silently skip when the cache is unwritable."""
    results = parsed_results(keys)
    if not keys or len(results) != len(set(keys)):
        return
    path = _path_for(keys)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pickle")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(results, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
