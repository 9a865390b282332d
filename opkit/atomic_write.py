"""Replacing a file's contents so that no failure loses what was there: the one way opkit writes a user's file.

The new bytes go to a temporary file beside the target, are fsynced, and the temporary file is
renamed over the target (then the directory is fsynced): a reader, a crash or a full disk sees the
old file or the new one, never half of one. A symlink is written through to the file it names.

A file with several hard links cannot be renamed over without splitting the links, so it is
rewritten in place, but only after its new length has been reserved (``posix_fallocate``): a full
disk fails there, before a byte changes. Any later error writes the old bytes back.

``unchanged`` guards a read-modify-write against another program (one that takes no lock): the
target's identity, size, mtime and content hash as read are compared again just before the rename
and, on the old file held open, just after it (that program's version is then put back), and
``ChangedMeanwhile`` is raised (nothing of the caller's written) when they differ.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path


class WriteFailed(OSError):
    """The file could not be written; the old contents are intact. The message names the file and why."""


class ChangedMeanwhile(WriteFailed):
    """Another program changed the file after it was read; nothing was written."""


@dataclass(frozen=True)
class Snapshot:
    """What a file was when it was read: enough to tell whether anyone has changed it since."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of(cls, info: os.stat_result, data: bytes) -> Snapshot:
        return cls(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, hashlib.sha256(data).hexdigest())

    def still_holds(self, path: str | os.PathLike) -> bool:
        """The file at ``path`` is the one read, with the same bytes (re-hashed: an mtime can stay within one tick)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return False
        try:
            return self.holds_for(fd)
        finally:
            os.close(fd)

    def holds_for(self, fd: int) -> bool:
        """The open file ``fd`` is the one read, with the same bytes."""
        try:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) != (self.device, self.inode, self.size, self.mtime_ns):
                return False
            return hashlib.sha256(os.pread(fd, self.size + 1, 0)).hexdigest() == self.sha256
        except OSError:
            return False


def temporary_prefix(path: Path) -> str:
    """The name start of the temporary files written beside ``path``."""
    return f".{path.name}.opkit-"


def replace_file(path: str | os.PathLike, data: bytes, *, new_mode: int | None = None, unchanged: Snapshot | None = None) -> None:
    """Make ``data`` the contents of ``path`` (created when missing, ``new_mode`` or 0666 less the umask).

    An existing file keeps its mode and, where the user may keep it (root), its owner. Raises
    ``WriteFailed`` (old contents intact), or ``ChangedMeanwhile`` when ``unchanged`` no longer holds.
    """
    path = Path(os.path.realpath(path))
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise WriteFailed(f"cannot write {path}: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise WriteFailed(f"cannot write {path}: not a regular file")
    if info is not None and info.st_nlink > 1:
        _rewrite_in_place(path, data, unchanged)
    else:
        _write_beside_and_rename(path, data, info, new_mode, unchanged)


def _failed(path: Path, exc: OSError) -> WriteFailed:
    return WriteFailed(f"cannot write {path}: {exc.strerror or exc}; the file is unchanged")


def _write_beside_and_rename(path: Path, data: bytes, info: os.stat_result | None, new_mode: int | None, unchanged: Snapshot | None) -> None:
    tmp = None
    try:
        fd, tmp = _create_beside(path, new_mode if new_mode is not None else 0o666)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if info is not None:
                os.fchmod(f.fileno(), stat.S_IMODE(info.st_mode))
                with contextlib.suppress(OSError):  # only root may give a file away; others keep their own
                    os.fchown(f.fileno(), info.st_uid, info.st_gid)
            os.fsync(f.fileno())
        if unchanged is None:
            os.replace(tmp, path)
            tmp = None
        else:
            _replace_unless_changed(tmp, path, unchanged, info)
            tmp = None
        _fsync_directory(path.parent)
    except WriteFailed:
        raise
    except OSError as exc:
        raise _failed(path, exc) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _replace_unless_changed(tmp: str, path: Path, unchanged: Snapshot, info: os.stat_result | None) -> None:
    """Rename ``tmp`` over ``path`` if the file there is still ``unchanged``. The old file stays open across
    the rename: a write another program made to it between the check and the rename is caught after it,
    and that program's version is put back. Either way of failing raises ChangedMeanwhile."""
    changed = ChangedMeanwhile(f"{path} was changed by another program while opkit was editing it; nothing was written")
    try:
        old = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        raise changed from None
    try:
        if not unchanged.holds_for(old):
            raise changed
        os.replace(tmp, path)
        if unchanged.holds_for(old):
            return
        theirs = os.pread(old, os.fstat(old).st_size, 0)
    finally:
        os.close(old)
    _write_beside_and_rename(path, theirs, info, None, None)
    raise changed


def _rewrite_in_place(path: Path, data: bytes, unchanged: Snapshot | None) -> None:
    """Hard-linked: every link must see the change, so the one inode is rewritten, its length reserved first."""
    try:
        f = open(path, "r+b")
    except OSError as exc:
        raise _failed(path, exc) from None
    with f:
        try:
            old = f.read()
            if unchanged is not None and Snapshot.of(os.fstat(f.fileno()), old) != unchanged:
                raise ChangedMeanwhile(f"{path} was changed by another program while opkit was editing it; nothing was written")
            if len(data) > len(old):
                os.posix_fallocate(f.fileno(), 0, len(data))  # ENOSPC here leaves every byte as it was
        except WriteFailed:
            raise
        except OSError as exc:
            raise _failed(path, exc) from None
        try:
            f.seek(0)
            f.write(data)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):  # the old bytes fit in the blocks they had
                f.seek(0)
                f.write(old)
                f.truncate(len(old))
                f.flush()
                os.fsync(f.fileno())
            raise _failed(path, exc) from None


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable; some filesystems cannot fsync a directory, which is not an error."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _create_beside(path: Path, mode: int) -> tuple[int, str]:
    """A new temporary file in ``path``'s directory, created with ``mode`` less the umask (as ``open`` would create ``path``)."""
    for _ in range(100):
        name = str(path.parent / f"{temporary_prefix(path)}{secrets.token_hex(6)}")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")
