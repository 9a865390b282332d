"""Sources: files read into located, typed views that rules inspect. Nothing here imports torch.

Every loader turns bad input into ``InputError`` (exit code 2, one message with its location), never
a traceback; a file that cannot be read does not stop the other files from being linted.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass, field

from opkit.formats.cpp_tokens import position_in
from opkit.lint.finding import Finding, Severity
from opkit.lint.registry import shared_index
from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema

# Larger inputs are refused rather than parsed: the real op_plugin_functions.yaml is ~350 KB.
MAX_FILE_BYTES = 16 * 1024 * 1024

# Problems that stop a file being fully checked: stable codes, FATAL findings (exit code 2), listed by `opkit rules`.
INPUT_ERRORS = {
    "E001": ("unreadable-input", "The file cannot be read as text: missing, a directory, binary, not UTF-8, or too large."),
    "E002": ("syntax-error", "The file is not valid YAML, JSON or Python, as its extension says it should be."),
    "E003": ("unexpected-structure", "The file parses but is not shaped like the input it claims to be (a list where a mapping belongs, ...)."),
    "E004": ("unknown-input", "opkit cannot tell what kind of input the path is (use .yaml/.yml, .py, .json or C++: .cpp, .cc, .asc, .h)."),
    "E006": ("nothing-registered", "A C++ file named on the command line declares no OpDef (`class X : public OpDef`) and registers no op (no TORCH_LIBRARY block or wrapper of one)."),
    "E005": ("internal-error", "A rule crashed on this input: a bug in opkit. The other rules and files are still checked; please report it with the input."),
}

# Inputs found but not linted: INFO findings, so a skipped file is visible yet never fails the run.
INPUT_NOTES = {
    "I001": ("input-skipped", "A file opkit recognised but does not lint (an empty yaml, autograd derivatives, a non-msOpGen JSON ...); the message says what it is."),
}


class NotLinted(Exception):
    """The file is not one opkit lints; ``reason`` says what it is instead."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason

    def finding(self, path: str) -> Finding:
        return Finding("I001", Severity.INFO, f"not linted: {self.reason}", path)


class InputError(Exception):
    def __init__(self, code: str, message: str, *, line: int = 1, column: int = 1, hint: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint

    def finding(self, path: str) -> Finding:
        return Finding(self.code, Severity.FATAL, self.message, path, self.line, self.column, hint=self.hint)


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


@dataclass(frozen=True)
class SchemaSite:
    """One schema string and where it sits: the subject of ``schema`` rules."""

    text: str
    path: str
    line: int
    column: int  # column of the schema's first character in the file
    dialect: Dialect
    section: str | None = None  # op_plugin_functions.yaml section; None for a standalone schema
    tags: tuple[str, ...] = ()
    op_hint: str | None = None  # name to report when the schema does not parse
    # op_plugin_functions.yaml: the torch versions whose codegen builds the entry; None where unknown
    versions: frozenset[str] | None = None
    # the namespace the source gives a schema without ``ns::`` (a C++ TORCH_LIBRARY block's); "" if none
    namespace: str = ""
    # a schema spread over the file (adjacent C++ literals, a raw or triple-quoted string): where each run
    # of its characters starts, (index in text, line, column); empty for a schema on one line
    runs: tuple[tuple[int, int, int], ...] = field(default=(), compare=False, repr=False)

    def place(self, column: int) -> tuple[int, int]:
        """The file (line, column) of the schema's 1-based ``column``."""
        if not self.runs:
            return self.line, self.column + column - 1
        return position_in(self.runs, column - 1)

    @property
    def is_custom(self) -> bool:
        """A new op being onboarded (custom: section, --schema, a custom_op): the graph-entry rules apply."""
        return self.section in (None, "custom")

    @functools.cached_property
    def parsed(self) -> OpSignature | SchemaError:
        try:
            return parse_schema(self.text, self.dialect)
        except SchemaError as exc:
            return exc.with_traceback(None)  # kept by the site: its frames would hold the project in a cycle

    @property
    def signature(self) -> OpSignature | None:
        p = self.parsed
        return p if isinstance(p, OpSignature) else None


@dataclass(eq=False)  # identity: rules cache indexes per project (registry.shared_index)
class LintProject:
    """Everything one `opkit lint` call loaded, so cross-file rules can see all of it."""

    yaml_files: list = field(default_factory=list)
    python_files: list = field(default_factory=list)
    msopgen_files: list = field(default_factory=list)
    opdef_files: list = field(default_factory=list)
    cpp_files: list = field(default_factory=list)  # C++ TORCH_LIBRARY registrations (.cpp, .cc, .asc, .h)
    # the C++ functions kernels may name, by unqualified name (registering files, and headers beside them)
    cpp_functions: dict = field(default_factory=dict)
    schema_sites: list[SchemaSite] = field(default_factory=list)
    input_findings: list[Finding] = field(default_factory=list)

    def all_schema_sites(self) -> tuple[SchemaSite, ...]:
        """Every schema of every source, built once: the engine, the parse cache and the cross-file
        rules all ask, and each site keeps its parse result (the project is complete once loaded)."""
        return _all_schema_sites(self)


@shared_index
def _all_schema_sites(project: LintProject) -> tuple[SchemaSite, ...]:
    sites = list(project.schema_sites)
    for source in (*project.yaml_files, *project.python_files, *project.msopgen_files, *project.cpp_files):
        sites.extend(source.schema_sites())
    return tuple(sites)
