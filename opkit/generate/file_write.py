"""Editing a user's file in place safely: a lock across read-modify-write, and a write that keeps the file's identity.

Used by `opkit yaml add`. The lock is ``flock`` on the file itself, taken again if the file was
replaced while we waited (another run renamed its new version into place), so two runs editing
one file take turns and neither edit is lost. The write is ``opkit.atomic_write.replace_file``: a temporary file
beside the target, fsynced and renamed over it (a hard-linked file is rewritten in place once its
length is reserved), so a crash or a full disk leaves the old file; a read-only file is refused.
Another program, which takes no lock, is caught by comparing the file as read (a ``Snapshot``) with
the file just before the rename. Only the temporary name this run created is ever removed: a
``.F.opkit-*`` name that is already there (a user's backup, or a killed run's leftover) is left alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from opkit.atomic_write import ChangedMeanwhile, Snapshot, WriteFailed, replace_file
from opkit.formats.files import file_kind

__all__ = ["ChangedMeanwhile", "FileWriteError", "Snapshot", "locked", "write_file"]

LOCK_TIMEOUT_S = 30.0
_POLL_S = 0.02


class FileWriteError(OSError):
    """The file cannot be locked or written; the message says why."""


def wait_for_lock(fd: int, deadline: float) -> bool:
    """Take an exclusive flock on ``fd``, polling until ``deadline`` (monotonic); False when it is still held then."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(_POLL_S)


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
            if not wait_for_lock(fd, deadline):
                raise FileWriteError(f"{path} is locked by another process (waited {timeout:g} s); try again when it has finished")
            try:
                current = os.stat(real)
            except FileNotFoundError:
                current = None
            if current is not None and (current.st_dev, current.st_ino) == (os.fstat(fd).st_dev, os.fstat(fd).st_ino):
                yield real
                return
            # replaced while we waited: lock the file that is there now
        finally:
            os.close(fd)  # closing releases the lock


def write_file(path: str | os.PathLike, data: bytes, *, unchanged: Snapshot | None = None) -> None:
    """Replace the contents of the existing file at ``path`` (a real path, see ``locked``) with ``data``.

    With ``unchanged`` (the file as read under the lock), ``ChangedMeanwhile`` is raised and nothing
    written when another program, one that takes no lock, has changed the file since.
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise FileWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise FileWriteError(f"{path} is read-only; make it writable (chmod u+w) to add the entry")
    try:
        replace_file(path, data, unchanged=unchanged)
    except ChangedMeanwhile:
        raise
    except WriteFailed as exc:
        raise FileWriteError(str(exc)) from None

