"""opkit's cache directory: where it is, whether it is safe to use, and the JSON data kept in it.

Caches hold data, never code: every entry is JSON read with ``json.loads`` (no pickle, which runs
code as it loads). The directory is ``OPKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/opkit``, else
``~/.cache/opkit``; opkit creates it and its subdirectories mode 0700. As pip does, a directory
that is not owned by the current user, or that others may write, is refused: one warning on stderr,
and the cache is off for the run (the results are the same, only slower). Entries are keyed by
``code_hash()``, a hash of opkit's own code, so another build of the same version never reuses them.

Every directory opkit creates gets a ``CACHEDIR.TAG`` marker; only a directory with that marker is ever
pruned, so pointing ``OPKIT_CACHE_DIR`` at a folder of one's own never loses a file of it. A component
that is a symlink owned by another user is refused. Entries are read and written relative to an open,
checked directory descriptor, with ``O_NOFOLLOW``: a symlink planted as an entry is never followed (a
write replaces the link itself, never its target).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
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


MARKER = "CACHEDIR.TAG"  # https://bford.info/cachedir/: backup tools skip it too
_MARKER_TEXT = b"Signature: 8a477f597d28d172789f06886806bc55\n# created by opkit: its contents may be pruned\n"
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def refusal(directory: Path) -> str | None:
    """Why ``directory`` (existing) must not hold opkit's cache, or None when it may."""
    try:
        link = os.lstat(directory)
        info = os.stat(directory)
    except OSError as exc:
        return f"cannot be used ({exc.strerror or exc})"
    if stat.S_ISLNK(link.st_mode) and hasattr(os, "geteuid") and link.st_uid != os.geteuid():
        return f"is a symlink owned by uid {link.st_uid}, not by the current user (uid {os.geteuid()})"
    return _refusal_of(info)


def _refusal_of(info: os.stat_result) -> str | None:
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
            _mark(directory)
        except FileExistsError:
            pass
        except OSError:
            return None  # unwritable: a cache never fails a run
        why = refusal(directory)
        if why is not None:
            _warn(directory, why)
            return None
    return directory


def _mark(directory: Path) -> None:
    """Mark a directory opkit has just created as its own (the only kind it prunes)."""
    fd = os.open(directory / MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600)
    try:
        os.write(fd, _MARKER_TEXT)
    finally:
        os.close(fd)


def created_by_opkit(directory_fd: int) -> bool:
    """The open directory holds opkit's marker, a plain file of the current user's (not a link)."""
    try:
        info = os.stat(MARKER, dir_fd=directory_fd, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and (not hasattr(os, "geteuid") or info.st_uid == os.geteuid())


def open_directory(directory: Path) -> int | None:
    """A descriptor of ``directory``, checked once open (owner, not writable by others, not another user's
    link); None when refused or missing. The caller closes it."""
    if refusal(directory) is not None:
        return None
    try:
        fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except OSError:
        return None
    if _refusal_of(os.fstat(fd)) is not None:  # the directory opened is the one checked
        os.close(fd)
        return None
    return fd


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
    """The JSON value stored at ``path``; None when it is missing, not a plain file (a link included), too
    large, not JSON, or its directory is refused."""
    directory = open_directory(path.parent)
    if directory is None:
        return None
    try:
        fd = os.open(path.name, os.O_RDONLY | os.O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=directory)
    except OSError:
        return None
    finally:
        os.close(directory)
    try:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            return json.loads(f.read(MAX_ENTRY_BYTES + 1))
    except (OSError, ValueError, RecursionError):  # truncated, corrupt, or not ours
        return None


def store_json(path: Path, value: Any) -> bool:
    """Write ``value`` as JSON to ``path`` atomically, mode 0600; False (nothing left behind) when it cannot.

    A temporary file is created beside it (``O_EXCL | O_NOFOLLOW``, relative to the checked directory's
    descriptor) and renamed over the name: an entry that is a symlink is replaced, its target untouched."""
    import secrets

    try:
        data = json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")
    except (ValueError, TypeError):
        return False
    directory = open_directory(path.parent)
    if directory is None:
        return False
    tmp = f".{path.name}.opkit-{secrets.token_hex(6)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600, dir_fd=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path.name, src_dir_fd=directory, dst_dir_fd=directory)
            tmp = None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=directory)
        return True
    except OSError:
        return False
    finally:
        os.close(directory)


def prune(directory: Path, keep: int, *, pattern: re.Pattern[str]) -> None:
    """Remove all but the ``keep`` newest entries named by ``pattern`` in ``directory``, and nothing at all
    unless opkit created the directory (its marker): a folder of the user's is never pruned."""
    fd = open_directory(directory)
    if fd is None:
        return
    try:
        if not created_by_opkit(fd):
            return
        entries = []
        for name in os.listdir(fd):
            if not pattern.fullmatch(name):
                continue
            with contextlib.suppress(OSError):
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                entries.append((info.st_mtime_ns, name))
        for _, name in sorted(entries)[: max(len(entries) - keep, 0)]:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)
