"""opkit's cache directory: where it is, whether it is safe to use, and the JSON data kept in it.

Caches hold data, never code: every entry is JSON read with ``json.loads`` (no pickle, which runs
code as it loads). The directory is ``OPKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/opkit``, else
``~/.cache/opkit``; opkit creates it and its subdirectories mode 0700. As pip does, a directory
that is not owned by the current user, or that others may write, is refused: one warning on stderr,
and the cache is off for the run (the results are the same, only slower). Entries are keyed by
``code_hash()``, a hash of opkit's own code, so another build of the same version never reuses them.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any


ENV_DIR = "OPKIT_CACHE_DIR"
ENV_OFF = "OPKIT_NO_CACHE"
# A cache file larger than this is not read (the parse cache of 50,000 schemas is ~30 MB).
MAX_ENTRY_BYTES = 256 * 1024 * 1024

_warned: set[str] = set()


def location() -> Path:
    """Where the cache lives (whether or not it exists or may be used)."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "opkit"


def enabled() -> bool:
    return os.environ.get(ENV_OFF, "") in ("", "0")


def refusal(directory: Path) -> str | None:
    """Why ``directory`` (existing) must not hold opkit's cache, or None when it may."""
    try:
        info = os.stat(directory)
    except OSError as exc:
        return f"cannot be used ({exc.strerror or exc})"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a directory"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"is owned by uid {info.st_uid}, not by the current user (uid {os.geteuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by others (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def usable(*parts: str) -> Path | None:
    """The cache directory (or its subdirectory ``parts``), made 0700 where missing and checked at each
    level; None when the cache is off, refused (warned once) or cannot be created."""
    if not enabled():
        return None
    directory = location()
    for level in (None, *parts):
        if level is not None:
            directory = directory / level
        try:
            if level is None:
                directory.parent.mkdir(parents=True, exist_ok=True)
            directory.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError:
            return None  # unwritable: a cache never fails a run
        why = refusal(directory)
        if why is not None:
            _warn(directory, why)
            return None
    return directory


def _warn(directory: Path, why: str) -> None:
    if str(directory) not in _warned:
        _warned.add(str(directory))
        print(f"opkit: warning: the cache directory {directory} {why}; the cache is off for this run "
              f"(fix the directory, or set {ENV_DIR} to one of your own)", file=sys.stderr)


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """A hash of opkit's own code: the content of every module and bundled schema (~2 ms)."""
    import hashlib  # here: a run without caches never hashes

    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(package, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                _hash_file(digest, Path(directory, name), package)
    schemas = package / "_data" / "schemas"
    if schemas.is_dir():
        for path in sorted(schemas.rglob("*.json")):
            _hash_file(digest, path, package)
    return digest.hexdigest()


def _hash_file(digest, path: Path, package: Path) -> None:
    try:
        data = path.read_bytes()
    except OSError:
        data = b"\0unreadable"
    digest.update(f"{path.relative_to(package).as_posix()}\0{len(data)}\0".encode())
    digest.update(data)


def load_json(path: Path) -> Any:
    """The JSON value stored at ``path``; None when it is missing, not a plain file, too large or not JSON."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            return json.loads(f.read(MAX_ENTRY_BYTES + 1))
    except (OSError, ValueError, RecursionError):  # truncated, corrupt, or not ours
        return None


def store_json(path: Path, value: Any) -> bool:
    """Write ``value`` as JSON to ``path`` atomically, mode 0600; False (nothing left behind) when it cannot."""
    from opkit.atomic_write import WriteFailed, replace_file

    try:
        data = json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")
        replace_file(path, data, new_mode=0o600)
        return True
    except (WriteFailed, ValueError, TypeError):
        return False
