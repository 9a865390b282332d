"""Which files `opkit lint` reads, and which of them are linted together.

Paths named on the command line are inputs as given. A directory contributes the files opkit
recognises inside it (``.yaml``/``.yml``, ``.py``, ``.json``, C++ ``.cpp``/``.cc``/``.asc``/``.h``), walked in sorted order, skipping hidden
and build directories. Cross-file rules (Meta against yaml, prototype JSON against schema) pair the
files of one *project*: a directory holding ``opkit.json`` or ``CMakePresets.json`` (what ``opkit new``
and msOpGen write) is a project of its own (msOpGen's tree inside an opkit project belongs to that project), so one project's Meta function is never compared with
another project's yaml. Everything else named or found belongs to one group, the command line's.

A directory that yields nothing to lint (empty, or a folder named ``ops.yaml``) is reported, never
passed silently as "All checks passed (0 files)".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from opkit.formats.files import CPP_EXTENSIONS, InputError
from opkit.lint.finding import Finding, input_error_finding

# C++ files are read for what they hold: op_host OpDefs (.cpp), TORCH_LIBRARY registrations (any of them).
KINDS = {".yaml": "yaml", ".yml": "yaml", ".py": "python", ".json": "msopgen"} | dict.fromkeys(CPP_EXTENSIONS, "cpp")

# A directory holding one of these is a project: its files are paired only with each other.
PROJECT_MARKERS = ("opkit.json", "CMakePresets.json")

# JSON files of a generated project that are not msOpGen prototypes: opkit's spec file and the
# CMake presets msOpGen writes. Skipped when walking a directory; named explicitly, they are linted.
NOT_LINT_INPUTS = frozenset(PROJECT_MARKERS)

SKIPPED_DIRECTORIES = frozenset({"build_out", "build", "__pycache__", "node_modules", "site-packages"})


def kind_of(path: str) -> str:
    """``yaml``, ``python``, ``msopgen`` or ``cpp`` by extension; "" for anything else."""
    return KINDS.get(os.path.splitext(path)[1].lower(), "")


@dataclass(frozen=True)
class Input:
    path: str
    kind: str
    explicit: bool  # named on the command line, not found by walking a directory


@dataclass
class InputGroup:
    """Files linted together: the cross-file rules see exactly these."""

    root: str  # the project directory; "" for the command line's own group
    inputs: list[Input] = field(default_factory=list)


def discover(paths: Sequence[str], problems: list[Finding]) -> list[InputGroup]:
    """The groups to lint, the command line's first; unusable paths become findings in ``problems``."""
    main = InputGroup("")
    projects: dict[str, InputGroup] = {}
    seen: set[str] = set()

    def add(group: InputGroup, item: Input, key: str | None = None) -> None:
        key = key or os.path.realpath(item.path)
        if key not in seen:  # a file named twice, or inside a named directory too, is linted once
            seen.add(key)
            group.inputs.append(item)

    for path in paths:
        if os.path.isdir(path):
            found = 0
            for root, item, key in _walk(path, problems):
                group = main if root is None else projects.setdefault(root, InputGroup(root))
                add(group, item, key)
                found += 1
            if not found:
                named = f" (a directory, though named like a {kind_of(path)} file)" if kind_of(path) else ""
                problems.append(input_error_finding(InputError("E004", f"directory holds no .yaml/.yml, .py, .json or C++ file to lint{named}"), path))
        elif not os.path.lexists(path):
            problems.append(input_error_finding(InputError("E001", "no such file or directory"), path))
        elif not kind_of(path):
            problems.append(input_error_finding(InputError("E004", "unknown kind of input: expected .yaml/.yml, .py, .json or C++ (.cpp, .cc, .asc, .h)"), path))
        else:
            add(main, Input(path, kind_of(path), explicit=True))
    return [g for g in (main, *projects.values()) if g.inputs]


def count_inputs(top: str, at_most: int) -> int:
    """How many files a lint of directory ``top`` reads, counted up to one past ``at_most`` (the walk stops
    there): for a caller deciding whether to read a whole tree."""
    count = 0
    for _ in _walk(top, []):
        count += 1
        if count > at_most:
            break
    return count


def _walk(top: str, problems: list[Finding]):
    """(project root or None, Input, its real path) for every recognised file under ``top``, top-down with
    sorted names as ``os.walk`` goes; a directory that cannot be listed is an E001 finding in ``problems``
    (its files would otherwise drop out of the lint unseen). One ``scandir`` per directory, and one
    ``realpath`` for the whole walk: a file that is no symlink lies at its directory's real path plus its
    name (a tree has ~16,000 files; a ``realpath`` and an ``isdir`` each cost a syscall per path part)."""
    # (directory, its real path, the project root above it or None); symlinked directories are not entered
    stack = [(top, os.path.realpath(top), None)]
    while stack:
        directory, real, parent = stack.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError as exc:
            problems.append(input_error_finding(InputError("E001", f"cannot read directory: {exc.strerror or exc}; its files are not linted"), exc.filename or top))
            continue
        dirs, files = [], []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry)
        names = {e.name for e in files}
        marked = any(m in names for m in PROJECT_MARKERS)
        # msOpGen's tree (CMakePresets.json) inside an opkit project is that project's op_host: one group
        root = parent if parent is not None and "opkit.json" not in names else (directory if marked else parent)
        for entry in sorted(files, key=lambda e: e.name):
            kind = kind_of(entry.name)
            if kind and entry.name not in NOT_LINT_INPUTS:
                path = os.path.join(directory, entry.name)
                yield root, Input(path, kind, explicit=False), os.path.realpath(path) if entry.is_symlink() else os.path.join(real, entry.name)
        subdirs = sorted((e for e in dirs if not e.name.startswith(".") and e.name not in SKIPPED_DIRECTORIES), key=lambda e: e.name)
        stack.extend((os.path.join(directory, e.name), os.path.join(real, e.name), root) for e in reversed(subdirs) if not e.is_symlink())
