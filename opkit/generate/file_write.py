"""Editing a user's file in place safely: a lock across read-modify-write, and a write that keeps the file's identity.

Used by `opkit yaml add`. The lock is ``flock`` on the file itself, taken again if the file was
replaced while we waited (another run renamed its new version into place), so two runs editing
one file take turns and neither edit is lost. The write goes to a temporary file beside the target,
which is renamed over it: a reader sees the old file or the new one, never half of one. A symlink
is written through to its target; a file with several hard links is rewritten in place instead, so
every link sees the change; a read-only file is refused. A temporary file that a killed run left
is removed by the next run that takes the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from opkit.formats.files import file_kind

LOCK_TIMEOUT_S = 30.0
_POLL_S = 0.02


class FileWriteError(OSError):
    """The file cannot be locked or written; the message says why."""


@contextlib.contextmanager
def locked(path: str | os.PathLike, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[Path]:
    """Hold an exclusive lock on the file at ``path`` (its symlink target); yields that real path."""
    real = Path(os.path.realpath(path))
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise FileWriteError(f"cannot open {path}: {exc.strerror or exc}") from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise FileWriteError(f"{path} is not a regular file (a {file_kind(mode)})")
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise FileWriteError(f"{path} is locked by another process (waited {timeout:g} s); try again when it has finished") from None
                    time.sleep(_POLL_S)
            try:
                current = os.stat(real)
            except FileNotFoundError:
                current = None
            if current is not None and (current.st_dev, current.st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino):
                _remove_stale_temporaries(real)
                yield real
                return
            # replaced while we waited: lock the file that is there now
        finally:
            os.close(fd)  # closing releases the lock


def _temporary_prefix(path: Path) -> str:
    return f".{path.name}.opkit-"


def _remove_stale_temporaries(path: Path) -> None:
    """Temporary files a killed writer left beside ``path``: with the lock held, no live writer has one."""
    for stale in path.parent.glob(glob.escape(_temporary_prefix(path)) + "*"):
        if stale.is_file() and not stale.is_symlink():
            with contextlib.suppress(OSError):
                stale.unlink()


def write_file(path: str | os.PathLike, data: bytes) -> None:
    """Replace the contents of the existing file at ``path`` (a real path, see ``locked``) with ``data``."""
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise FileWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise FileWriteError(f"{path} is read-only; make it writable (chmod u+w) to add the entry")
    if info.st_nlink > 1:
        _write_in_place(path, data)
    else:
        _write_beside_and_rename(path, data, info)


def _write_in_place(path: Path, data: bytes) -> None:
    """Hard-linked: a rename would split the links, so the one inode is rewritten (the new text is never shorter)."""
    try:
        with open(path, "r+b") as f:
            f.write(data)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise FileWriteError(f"cannot write {path}: {exc.strerror or exc}") from None


def _write_beside_and_rename(path: Path, data: bytes, info: os.stat_result) -> None:
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(path), dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), stat.S_IMODE(info.st_mode))
            with contextlib.suppress(OSError):  # only root may give a file away; others keep their own
                os.fchown(f.fileno(), info.st_uid, info.st_gid)
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise FileWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
