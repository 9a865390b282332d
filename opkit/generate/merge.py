"""Three-way merge of one generated file, as copier and cruft update a project.

base: what opkit generated last time; ours: the user's file now; theirs: what opkit generates now.
The user's edits and the new generation's changes are both kept where they touch different lines;
where they touch the same lines, both are written between diff3 conflict markers, never silently
chosen. ``git merge-file`` does the merge when git is installed; otherwise the same diff3 is done
here (difflib matches each side against the base; the regions where all three agree anchor it).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from opkit.subprocess_safety import git_env

LABELS = ("yours", "previous generation", "new generation")  # ours, base, theirs
# A git that does not answer (a broken install, a hung filesystem) is given up on after this; the merge is done in Python.
GIT_TIMEOUT_S = 60


@dataclass(frozen=True)
class MergeResult:
    data: bytes
    conflicts: int  # conflict regions marked in ``data``


def merge3(base: bytes, ours: bytes, theirs: bytes, *, tool: str = "auto") -> MergeResult:
    """Merge ``ours`` and ``theirs`` from their common ``base``; ``tool``: auto (git if found), git or python."""
    git = shutil.which("git") if tool in ("auto", "git") else None
    if git is not None:
        result = _git_merge(git, base, ours, theirs)
        if result is not None:
            return result
    if tool == "git":
        raise RuntimeError("git merge-file is not available")
    return python_merge3(base, ours, theirs)


def _git_merge(git: str, base: bytes, ours: bytes, theirs: bytes) -> MergeResult | None:
    with tempfile.TemporaryDirectory(prefix="opkit-merge-") as tmp:
        paths = [Path(tmp, name) for name in ("ours", "base", "theirs")]
        for path, data in zip(paths, (ours, base, theirs)):
            path.write_bytes(data)
        labels = [arg for label in LABELS for arg in ("-L", label)]
        try:
            done = subprocess.run([git, "merge-file", "-p", "--diff3", *labels, *map(str, paths)], capture_output=True, stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT_S, cwd=tmp, env=git_env())
        except (OSError, subprocess.TimeoutExpired):
            return None
    if not 0 <= done.returncode < 128:  # a failure, not a conflict count
        return None
    return MergeResult(done.stdout, done.returncode)


def python_merge3(base: bytes, ours: bytes, theirs: bytes) -> MergeResult:
    """diff3 in Python: the result ``git merge-file --diff3`` gives for clean merges, and the same markers otherwise."""
    b, o, t = (data.splitlines(keepends=True) for data in (base, ours, theirs))
    in_ours, in_theirs = _matched(b, o), _matched(b, t)
    out: list[bytes] = []
    conflicts = 0
    i = io = it = 0
    while True:
        # the next base line that both sides kept: everything before it is one unstable chunk
        stable = next((j for j in range(i, len(b)) if j in in_ours and j in in_theirs), None)
        end, end_o, end_t = (len(b), len(o), len(t)) if stable is None else (stable, in_ours[stable], in_theirs[stable])
        chunk_b, chunk_o, chunk_t = b[i:end], o[io:end_o], t[it:end_t]
        if chunk_o == chunk_t or chunk_t == chunk_b:
            out += chunk_o
        elif chunk_o == chunk_b:
            out += chunk_t
        else:
            conflicts += 1
            eol = b"\r\n" if _crlf_needed(o, io, t, it, b) else b"\n"
            out += _conflict(chunk_o, chunk_b, chunk_t, eol)
        if stable is None:
            return MergeResult(b"".join(out), conflicts)
        out.append(o[end_o])
        i, io, it = stable + 1, end_o + 1, end_t + 1


def _matched(base: list[bytes], other: list[bytes]) -> dict[int, int]:
    """base line index -> index of the same line in ``other``, along their longest matching blocks."""
    matched = {}
    for a, b, size in SequenceMatcher(None, base, other, autojunk=False).get_matching_blocks():
        for k in range(size):
            matched[a + k] = b + k
    return matched


def _line_end(lines: list[bytes], i: int) -> int:
    """git's xdiff is_eol_crlf: 1 if line ``i`` ends in CR LF, 0 if in LF, -1 where that cannot be told (no lines,
    or the only line has no line break). ``i`` is 0 or the stable line before a conflict, which ends in a line break:
    so git's look at the line before a last line without one never applies here."""
    if not lines or not lines[i].endswith(b"\n"):
        return -1
    return int(lines[i].endswith(b"\r\n"))


def _crlf_needed(ours: list[bytes], at_ours: int, theirs: list[bytes], at_theirs: int, base: list[bytes]) -> bool:
    """git's xdiff is_cr_needed: conflict markers end in CR LF when the lines before the conflict in ours and in
    theirs (their first lines for a conflict at the start) do, and the base's first line does; undecided: LF."""
    needs_cr = _line_end(ours, max(at_ours - 1, 0))
    if needs_cr:
        needs_cr = _line_end(theirs, max(at_theirs - 1, 0))
    if needs_cr:
        needs_cr = _line_end(base, 0)
    return needs_cr == 1


def _conflict(ours: list[bytes], base: list[bytes], theirs: list[bytes], eol: bytes) -> list[bytes]:
    def block(lines: list[bytes]) -> list[bytes]:
        return lines[:-1] + [lines[-1] if lines[-1].endswith(b"\n") else lines[-1] + eol] if lines else []

    ours_label, base_label, theirs_label = (label.encode() for label in LABELS)
    return [
        b"<<<<<<< " + ours_label + eol, *block(ours),
        b"||||||| " + base_label + eol, *block(base),
        b"=======" + eol, *block(theirs),
        b">>>>>>> " + theirs_label + eol,
    ]  # fmt: skip
