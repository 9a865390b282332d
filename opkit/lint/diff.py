"""``opkit lint --diff REV``: report only findings in what a change touched.

Everything is still linted (cross-file rules need the whole project), then findings are kept when
they sit in a *unit* the change touched since git revision REV (committed, staged, unstaged, or a
new untracked file): an op_plugin_functions.yaml entry (from its ``- func:`` line to the next), a
top-level Python statement with its decorators, or a whole JSON file. An edit to an entry's
``op_api`` therefore brings back a finding on its ``func`` line. Unreadable input is always kept.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Sequence

from opkit.lint.finding import Finding, Severity
from opkit.subprocess_safety import git_argv, git_env

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_YAML_UNIT = re.compile(r"^(?:\S|\s*- func:)")


class DiffError(ValueError):
    """git could not say what changed: not a repository, an unknown revision, no git."""


def _git(top: str, *args: str) -> str:
    try:
        done = subprocess.run(git_argv(top, *args), capture_output=True, text=True, check=False, env=git_env(), stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise DiffError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise DiffError(f"git {' '.join(args[:2])} failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return done.stdout


def _toplevel(path: str) -> str:
    directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)) or "."
    while not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    try:
        return _git(directory, "rev-parse", "--show-toplevel").strip()
    except DiffError:
        raise DiffError(f"--diff needs a git repository: {path} is not in one") from None


def changed_lines(paths: Sequence[str], rev: str) -> dict[str, set[int] | None]:
    """Real path → the new-side line numbers changed since ``rev``; None for a file that is wholly new."""
    changed: dict[str, set[int] | None] = {}
    for top in dict.fromkeys(_toplevel(p) for p in (paths or ["."])):
        try:
            _git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        except DiffError:
            raise DiffError(f"--diff {rev}: not a commit in the git repository at {top}") from None
        current: set[int] | None = None
        for line in _git(top, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-U0", rev, "--").splitlines():
            if line.startswith("+++ "):
                target = line[4:]
                current = None
                if target != "/dev/null":
                    current = changed.setdefault(os.path.realpath(os.path.join(top, target[2:])), set())
            elif current is not None and (m := _HUNK.match(line)):
                start, count = int(m.group(1)), int(m.group(2) or 1)
                current.update(range(start, start + count) if count else (start,))  # a deletion touches where it was
        for name in _git(top, "ls-files", "--others", "--exclude-standard").splitlines():
            changed[os.path.realpath(os.path.join(top, name))] = None
    return changed


def _unit_starts(path: str) -> list[int] | None:
    """First lines of the file's units, ascending; None when the whole file is one unit."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".yaml", ".yml", ".py"):
        return None
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    starts = [1]
    previous = ""  # the last top-level Python line: a decorator joins what follows it
    for number, text in enumerate(lines, start=1):
        if ext != ".py":
            if _YAML_UNIT.match(text) and not text.lstrip().startswith("#"):
                starts.append(number)
            continue
        if not text or text[0].isspace() or text.startswith("#"):
            continue
        if not previous.startswith("@") and not text.startswith((")", "]", "}")):
            starts.append(number)
        previous = text
    return sorted(set(starts))


def _unit_of(line: int, starts: list[int]) -> int:
    first = starts[0]
    for start in starts:
        if start > line:
            break
        first = start
    return first


def touched(findings: Iterable[Finding], changed: dict[str, set[int] | None]) -> list[Finding]:
    """The findings in units that ``changed`` touches."""
    kept: list[Finding] = []
    units: dict[str, tuple[list[int] | None, set[int]]] = {}
    for f in findings:
        if f.severity is Severity.FATAL:
            kept.append(f)
            continue
        real = os.path.realpath(f.path) if f.path and not f.path.startswith("<") else None
        if real is None or real not in changed:
            continue
        lines = changed[real]
        if lines is None:
            kept.append(f)
            continue
        if real not in units:
            starts = _unit_starts(real)
            units[real] = (starts, {_unit_of(n, starts) for n in lines} if starts else set())
        starts, touched_units = units[real]
        if starts is None or _unit_of(f.line, starts) in touched_units:
            kept.append(f)
    return kept
