"""Input files read as text, and the located errors every reader raises. Nothing here imports torch.

Every reader turns bad input into ``InputError`` (one message with its location; `opkit lint` reports it
as a FATAL finding, exit code 2), never a traceback.
"""

from __future__ import annotations

import os
import stat

# Larger inputs are refused rather than parsed: the real op_plugin_functions.yaml is ~350 KB.
MAX_FILE_BYTES = 16 * 1024 * 1024


class NotLinted(Exception):
    """The file is not one opkit lints; ``reason`` says what it is instead."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class InputError(Exception):
    """Input that cannot be read as its format: a stable code (``opkit rules`` lists them), one message and its location."""

    def __init__(self, code: str, message: str, *, line: int = 1, column: int = 1, hint: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint


def read_bytes(path: str) -> bytes:
    """The file's bytes, or InputError E001 saying why not: missing, not a regular file, too large, binary.

    A FIFO, socket or device is refused without opening it for a blocking read: a FIFO with no
    writer would wait forever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise InputError("E001", "is a directory") from None
    except OSError as exc:
        raise InputError("E001", f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError("E001", "is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise InputError("E001", f"is not a regular file (a {file_kind(info.st_mode)})")
        if info.st_size > MAX_FILE_BYTES:
            raise InputError("E001", f"file is {info.st_size / 1e6:.1f} MB, over the {MAX_FILE_BYTES // (1024 * 1024)} MiB opkit reads")
        try:
            data = f.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise InputError("E001", f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:  # grew while being read
        raise InputError("E001", f"file is over the {MAX_FILE_BYTES // (1024 * 1024)} MiB opkit reads")
    if b"\0" in data:
        raise InputError("E001", "binary file (contains NUL bytes)")
    return data


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words, from its ``st_mode``."""
    for test, kind in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return kind
    return "special file"


def decode_text(data: bytes) -> str:
    """UTF-8 text (a leading BOM dropped), or InputError E001 naming the first bad byte's line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError("E001", f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", line=line) from None


def read_text(path: str) -> str:
    """The file's text, or InputError E001 saying why not."""
    return decode_text(read_bytes(path))
