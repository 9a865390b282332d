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

from opkit.formats.cpp_text import CPP_EXTENSIONS
from opkit.formats.files import InputError
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

    def add(group: InputGroup, item: Input) -> None:
        key = os.path.realpath(item.path)
        if key not in seen:  # a file named twice, or inside a named directory too, is linted once
            seen.add(key)
            group.inputs.append(item)

    for path in paths:
        if os.path.isdir(path):
            found = 0
            for root, item in _walk(path, problems):
                group = main if root is None else projects.setdefault(root, InputGroup(root))
                add(group, item)
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


def _walk(top: str, problems: list[Finding]):
    """(project root or None, Input) for every recognised file under ``top``; a directory that cannot be
    listed is an E001 finding in ``problems`` (its files would otherwise drop out of the lint unseen)."""
    roots: dict[str, str | None] = {}

    def unlistable(exc: OSError) -> None:
        problems.append(input_error_finding(InputError("E001", f"cannot read directory: {exc.strerror or exc}; its files are not linted"), exc.filename or top))

    for directory, dirs, files in os.walk(top, onerror=unlistable):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRECTORIES)
        parent = roots.get(os.path.dirname(directory))
        marked = any(m in files for m in PROJECT_MARKERS)
        # msOpGen's tree (CMakePresets.json) inside an opkit project is that project's op_host: one group
        roots[directory] = parent if parent is not None and "opkit.json" not in files else (directory if marked else parent)
        for name in sorted(files):
            kind = kind_of(name)
            if kind and name not in NOT_LINT_INPUTS and not os.path.isdir(os.path.join(directory, name)):
                yield roots[directory], Input(os.path.join(directory, name), kind, explicit=False)
