"""The result cache in front of the rules: an unchanged project costs a hash and a load.

The findings of one input group (the files the cross-file rules pair, see ``discovery``) are stored
under a key made of everything they depend on: each file's path, kind and content; the settings
(selected rules, dialect, ``--schema`` strings); and the code that computes them (opkit's own
modules, the installed torchgen). Editing any paired file, changing a setting or upgrading opkit or
torch gives another key, so a cached run reports exactly what a cold run would. Entries live in
``<cache dir>/results/``; a missing, corrupt or unwritable cache just means linting afresh. The parse
cache (``opkit.lint.cache``) still serves a miss, so editing one entry re-parses only that entry.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Iterable
from pathlib import Path

from opkit.lint import cache
from opkit.lint.discovery import InputGroup
from opkit.lint.finding import Finding

FORMAT = 1
# Oldest result files beyond this many are removed when one is written.
MAX_FILES = 200


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Identifies the code findings come from: every opkit module (path, size, mtime) and torchgen's parser."""
    from opkit.signature import parser_fingerprint

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(parser_fingerprint().encode())
    for directory, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(directory, name))
                digest.update(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def key(group: InputGroup, texts: dict[str, str], settings: Iterable[object]) -> str:
    """The cache key of one group's findings."""
    digest = hashlib.sha256(f"{FORMAT}\0{code_fingerprint()}\0{settings!r}\0".encode())
    for item in group.inputs:
        digest.update(f"{item.path}\0{item.kind}\0{item.explicit}\0".encode())
        digest.update(hashlib.sha256(texts[item.path].encode("utf-8", "surrogatepass")).digest())
    return digest.hexdigest()


def _path(cache_key: str) -> Path:
    return cache.cache_dir() / "results" / f"{cache_key[:32]}.pickle"


def load(cache_key: str) -> tuple[list[Finding], int] | None:
    """The stored (findings, files linted), or None when absent or unreadable."""
    try:
        with open(_path(cache_key), "rb") as f:
            stored = pickle.load(f)
    except Exception:  # missing, truncated, corrupt, or written by another Python
        return None
    if not (isinstance(stored, tuple) and len(stored) == 3 and stored[0] == cache_key):
        return None
    findings, files = stored[1], stored[2]
    if not (isinstance(findings, list) and all(isinstance(f, Finding) for f in findings) and isinstance(files, int)):
        return None
    return findings, files


def store(cache_key: str, findings: list[Finding], files: int) -> None:
    """Write atomically; skip silently when the cache directory is unwritable."""
    path = _path(cache_key)
    if cache.store_pickle(path, (cache_key, findings, files)):
        try:
            _prune(path.parent)
        except OSError:
            pass


def _prune(directory: Path) -> None:
    entries = sorted(directory.glob("*.pickle"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-MAX_FILES]:
        old.unlink(missing_ok=True)
