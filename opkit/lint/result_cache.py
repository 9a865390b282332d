"""The result cache in front of the rules: an unchanged project costs a hash and a load.

The findings of one input group (the files the cross-file rules pair, see ``discovery``) are stored
under a key made of everything they depend on: each file's path, kind and content; the settings
(selected rules, dialect, ``--schema`` strings); and the code that computes them (opkit's own
modules, the installed torchgen). Editing any paired file, changing a setting or upgrading opkit or
torch gives another key, so a cached run reports exactly what a cold run would. Entries are JSON
files (data, never code: ``opkit.cachedir``), one per group, in ``<cache dir>/results/``; a missing,
corrupt, unwritable or refused cache just means linting afresh. The parse
cache (``opkit.lint.cache``) still serves a miss, so editing one entry re-parses only that entry.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from opkit import cachedir
from opkit.lint.cache import code_fingerprint
from opkit.lint.discovery import InputGroup
from opkit.lint.finding import Finding, Severity

FORMAT = 2
# Oldest result files beyond this many are removed when one is written.
MAX_FILES = 200


def key(group: InputGroup, texts: dict[str, str], settings: Iterable[object]) -> str:
    """The cache key of one group's findings."""
    digest = hashlib.sha256(f"{FORMAT}\0{code_fingerprint()}\0{settings!r}\0".encode())
    for item in group.inputs:
        digest.update(f"{item.path}\0{item.kind}\0{item.explicit}\0".encode())
        digest.update(hashlib.sha256(texts[item.path].encode("utf-8", "surrogatepass")).digest())
    return digest.hexdigest()


def _path(cache_key: str) -> Path | None:
    directory = cachedir.usable("results")
    return None if directory is None else directory / f"{cache_key[:32]}.json"


def load(cache_key: str) -> tuple[list[Finding], int] | None:
    """The stored (findings, files linted), or None when absent, unreadable or not what ``store`` wrote."""
    path = _path(cache_key)
    stored = cachedir.load_json(path) if path is not None else None
    if not (isinstance(stored, dict) and stored.get("key") == cache_key and type(stored.get("files")) is int and isinstance(stored.get("findings"), list)):
        return None
    try:
        findings = [_finding(row) for row in stored["findings"]]
    except (TypeError, ValueError):
        return None
    return findings, stored["files"]


def _finding(row: list) -> Finding:
    code, severity, message, path, line, column, op, hint = row
    if not (isinstance(code, str) and isinstance(message, str) and isinstance(path, str) and type(line) is int and type(column) is int):
        raise ValueError("not a stored finding")
    if not (op is None or isinstance(op, str)) or not (hint is None or isinstance(hint, str)):
        raise ValueError("not a stored finding")
    return Finding(code, Severity(severity), message, path, line, column, op, hint)


def store(cache_key: str, findings: list[Finding], files: int) -> None:
    """Write atomically; skip silently when the cache directory is unwritable or refused."""
    path = _path(cache_key)
    rows = [[f.code, int(f.severity), f.message, f.path, f.line, f.column, f.op, f.hint] for f in findings]
    if path is not None and cachedir.store_json(path, {"key": cache_key, "files": files, "findings": rows}):
        try:
            _prune(path.parent)
        except OSError:
            pass


_ENTRY_NAME = re.compile(r"[0-9a-f]{32}\.json|[0-9a-f]{32}\.pickle")  # the pickles of an opkit before its caches were JSON


def _prune(directory: Path) -> None:
    cachedir.prune(directory, MAX_FILES, pattern=_ENTRY_NAME)
