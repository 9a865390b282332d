"""Input files read as text, and the located errors every reader raises. Nothing here imports torch.

Every reader turns bad input into ``InputError`` (one message with its location; `opkit lint` reports it
as a FATAL finding, exit code 2), never a traceback.
"""

from __future__ import annotations

import os
import stat

# C++ files, by extension: sources, and headers (``.inc``: a fragment a header includes, as vllm-ascend's
# kernel iterators are) that are never compiled on their own.
CPP_HEADER_EXTENSIONS = (".h", ".hpp", ".hh", ".inc")
CPP_EXTENSIONS = (".cpp", ".cc", ".cxx", ".asc") + CPP_HEADER_EXTENSIONS

# Larger inputs are refused rather than parsed: the real op_plugin_functions.yaml is ~350 KB.
MAX_FILE_BYTES = 16 * 1024 * 1024
_MiB = 1024 * 1024
# What each reader parses at most, generous over the largest real files (docs/security.md): parsing
# costs memory in proportion (a 4 MB registration module peaks near 0.8 GB), so a file over its limit
# is one E001, not a parse. The largest real ones: torch-npu's _meta_registrations.py 338 KB, an
# ops-nn OpDef 108 KB, op_plugin_functions.yaml 350 KB.
MAX_PARSED_BYTES = {"yaml": MAX_FILE_BYTES, "msopgen": 8 * _MiB, "python": 2 * _MiB, "opdef": 2 * _MiB, "cpp": 2 * _MiB, "launch": 2 * _MiB}
_KIND_NAMES = {
    "yaml": "a yaml file",
    "msopgen": "an msOpGen JSON",
    "python": "a Python registration module",
    "opdef": "an OpDef C++ file",
    "cpp": "a C++ registration file",
    "launch": "a C++ kernel launcher",
}


def check_parsed_size(text: str, kind: str) -> None:
    """InputError E001 when ``text`` is larger than the reader of ``kind`` parses (``MAX_PARSED_BYTES``)."""
    limit = MAX_PARSED_BYTES.get(kind, MAX_FILE_BYTES)
    if len(text) * 4 <= limit:  # at most 4 UTF-8 bytes a character: surely within, without encoding
        return
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise InputError("E001", f"file is {size / 1e6:.1f} MB, over the {limit // _MiB} MiB opkit parses as {_KIND_NAMES.get(kind, kind)}")


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

    A FIFO, socket or device is refused without reading it (opened non-blocking): a FIFO with no
    writer would wait forever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise InputError("E001", "is a directory") from None
    except OSError as exc:
        raise InputError("E001", f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError("E001", "is a directory" if stat.S_ISDIR(info.st_mode) else f"is not a regular file (a {file_kind(info.st_mode)})")
        if info.st_size > MAX_FILE_BYTES:
            raise InputError("E001", f"file is {info.st_size / 1e6:.1f} MB, over the {MAX_FILE_BYTES // (1024 * 1024)} MiB opkit reads")
        # os.read on the descriptor, no buffered file object: a walk reads ~16,000 files. The first read asks
        # for the whole file and one byte more (so one call reads it); the rest is what it grew by meanwhile.
        chunks, total, wanted = [], 0, info.st_size + 1
        while total <= MAX_FILE_BYTES:
            try:
                chunk = os.read(fd, min(wanted, MAX_FILE_BYTES + 1 - total))
            except OSError as exc:
                raise InputError("E001", f"cannot read: {exc.strerror or exc}") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            wanted = 1 << 16
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
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
