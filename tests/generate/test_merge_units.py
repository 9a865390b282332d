"""The three-way merge of `opkit new --force`, called directly: the diff3 result of each layout, and which tool merges.

Expectations are the output of the real ``git merge-file -p --diff3`` with opkit's labels (docs/new.md, the
`--force` paragraph: the user's edits and the new generation's both kept, the same lines written between diff3 markers), checked
here against git itself where it is installed, and against the Python diff3 that stands in for it where it is not.
"""

from __future__ import annotations

import shutil
import subprocess

import os

import pytest

from opkit.generate import merge
from opkit.generate.merge import MergeResult, merge3, python_merge3

GIT = shutil.which("git")
LABELS = ["-L", "yours", "-L", "previous generation", "-L", "new generation"]

# (base, ours, theirs, merged, conflicts)
CASES = {
    "both-edit-apart": (b"a\nb\nc\nd\ne\n", b"a\nB\nc\nd\ne\n", b"a\nb\nc\nd\nE\n", b"a\nB\nc\nd\nE\n", 0),
    "same-edit": (b"a\nb\nc\n", b"a\nX\nc\n", b"a\nX\nc\n", b"a\nX\nc\n", 0),
    "ours-only": (b"a\nb\nc\n", b"a\nX\nc\n", b"a\nb\nc\n", b"a\nX\nc\n", 0),
    "theirs-only": (b"a\nb\nc\n", b"a\nb\nc\n", b"a\nY\nc\n", b"a\nY\nc\n", 0),
    "first-and-last-line": (b"a\nb\nc\n", b"X\nb\nc\n", b"a\nb\nY\n", b"X\nb\nY\n", 0),
    "insert-and-delete": (b"a\nb\nc\nd\n", b"a\nb\nnew\nc\nd\n", b"a\nb\nc\n", b"a\nb\nnew\nc\n", 0),
    "both-delete": (b"a\nb\nc\n", b"a\nc\n", b"a\nc\n", b"a\nc\n", 0),
    "append-at-the-end": (b"a\n", b"a\nX\n", b"a\n", b"a\nX\n", 0),
    "ours-emptied": (b"a\n", b"", b"a\n", b"", 0),
    "a-repeated-line": (b"x\nx\nx\n", b"x\nx\n", b"x\nx\nx\nx\n", b"x\nx\n<<<<<<< yours\n||||||| previous generation\nx\n=======\nx\nx\n>>>>>>> new generation\n", 1),
    "clash": (b"a\nb\nc\n", b"a\nX\nc\n", b"a\nY\nc\n", b"a\n<<<<<<< yours\nX\n||||||| previous generation\nb\n=======\nY\n>>>>>>> new generation\nc\n", 1),
    "two-clashes": (
        b"a\nb\nc\nd\ne\n", b"a\nX\nc\nZ\ne\n", b"a\nY\nc\nW\ne\n",
        b"a\n<<<<<<< yours\nX\n||||||| previous generation\nb\n=======\nY\n>>>>>>> new generation\nc\n"
        b"<<<<<<< yours\nZ\n||||||| previous generation\nd\n=======\nW\n>>>>>>> new generation\ne\n",
        2,
    ),
    "both-insert-at-one-place": (b"a\nb\n", b"a\nX\nb\n", b"a\nY\nb\n", b"a\n<<<<<<< yours\nX\n||||||| previous generation\n=======\nY\n>>>>>>> new generation\nb\n", 1),
    "delete-against-edit": (b"a\nb\nc\n", b"a\nc\n", b"a\nY\nc\n", b"a\n<<<<<<< yours\n||||||| previous generation\nb\n=======\nY\n>>>>>>> new generation\nc\n", 1),
    "adjacent-edits": (b"a\nb\nc\nd\n", b"a\nX\nc\nd\n", b"a\nb\nY\nd\n", b"a\n<<<<<<< yours\nX\nc\n||||||| previous generation\nb\nc\n=======\nb\nY\n>>>>>>> new generation\nd\n", 1),
    # 300 equal lines: difflib's autojunk would take them for junk and match nothing (one conflict)
    "many-equal-lines": (b"x\n" * 300, b"x\n" * 300 + b"A\n", b"B\n" + b"x\n" * 300, b"B\n" + b"x\n" * 300 + b"A\n", 0),
    "no-base": (b"", b"x\n", b"y\n", b"<<<<<<< yours\nx\n||||||| previous generation\n=======\ny\n>>>>>>> new generation\n", 1),
    "last-lines-without-a-break": (b"a\nb", b"a\nX", b"a\nY", b"a\n<<<<<<< yours\nX\n||||||| previous generation\nb\n=======\nY\n>>>>>>> new generation\n", 1),
    # the markers' line ends: git's is_cr_needed (CR LF where the lines before the conflict in ours and theirs, and
    # the base's first line, end in CR LF; a side that cannot tell, no lines or one without a break, does not decide)
    "crlf-conflict": (b'a\r\nb\r\n', b'a\r\nX\r\n', b'a\r\nY\r\n', b'a\r\n<<<<<<< yours\r\nX\r\n||||||| previous generation\r\nb\r\n=======\r\nY\r\n>>>>>>> new generation\r\n', 1),
    "crlf-at-start": (b'b\r\n', b'X\r\n', b'Y\r\n', b'<<<<<<< yours\r\nX\r\n||||||| previous generation\r\nb\r\n=======\r\nY\r\n>>>>>>> new generation\r\n', 1),
    "crlf-but-base-lf": (b'b\n', b'X\r\n', b'Y\r\n', b'<<<<<<< yours\nX\r\n||||||| previous generation\nb\n=======\nY\r\n>>>>>>> new generation\n', 1),
    "crlf-but-theirs-lf": (b'b\r\n', b'X\r\n', b'Y\n', b'<<<<<<< yours\nX\r\n||||||| previous generation\nb\r\n=======\nY\n>>>>>>> new generation\n', 1),
    "crlf-but-ours-lf": (b'b\r\n', b'X\n', b'Y\r\n', b'<<<<<<< yours\nX\n||||||| previous generation\nb\r\n=======\nY\r\n>>>>>>> new generation\n', 1),
    "ours-one-line-no-eol": (b'b\r\n', b'X', b'Y\r\n', b'<<<<<<< yours\r\nX\r\n||||||| previous generation\r\nb\r\n=======\r\nY\r\n>>>>>>> new generation\r\n', 1),
    "theirs-one-line-no-eol": (b'b\r\n', b'X\r\n', b'Y', b'<<<<<<< yours\r\nX\r\n||||||| previous generation\r\nb\r\n=======\r\nY\r\n>>>>>>> new generation\r\n', 1),
    "base-one-line-no-eol": (b'b', b'X\r\n', b'Y\r\n', b'<<<<<<< yours\nX\r\n||||||| previous generation\nb\n=======\nY\r\n>>>>>>> new generation\n', 1),
    "all-undecided": (b'b', b'X', b'Y', b'<<<<<<< yours\nX\n||||||| previous generation\nb\n=======\nY\n>>>>>>> new generation\n', 1),
    "ours-deleted-to-its-last-line": (b'a\r\nb\r\n', b'a\r\n', b'a\r\nY\r\n', b'a\r\n<<<<<<< yours\r\n||||||| previous generation\r\nb\r\n=======\r\nY\r\n>>>>>>> new generation\r\n', 1),
    "empty-base": (b'', b'x\r\n', b'y\r\n', b'<<<<<<< yours\nx\r\n||||||| previous generation\n=======\ny\r\n>>>>>>> new generation\n', 1),
    "crlf-second-conflict": (b'a\nb\r\nc\r\nd\r\n', b'a\nX\r\nc\r\nZ\r\n', b'a\nY\r\nc\r\nW\r\n', b'a\n<<<<<<< yours\nX\r\n||||||| previous generation\nb\r\n=======\nY\r\n>>>>>>> new generation\nc\r\n<<<<<<< yours\nZ\r\n||||||| previous generation\nd\r\n=======\nW\r\n>>>>>>> new generation\n', 2),
    "lf-before-conflict": (b'a\r\nb\nc\r\n', b'a\r\nb\nX\r\n', b'a\r\nb\nY\r\n', b'a\r\nb\n<<<<<<< yours\nX\r\n||||||| previous generation\nc\r\n=======\nY\r\n>>>>>>> new generation\n', 1),
    # the line just before the conflict decides, not an earlier one
    "ours-line-before-crlf": (b'z\r\na\nb\r\nc\r\n', b'a\nb\r\nX\r\n', b'z\r\na\nb\r\nY\r\n', b'a\nb\r\n<<<<<<< yours\r\nX\r\n||||||| previous generation\r\nc\r\n=======\r\nY\r\n>>>>>>> new generation\r\n', 1),
    "theirs-line-before-crlf": (b'z\r\na\nb\r\nc\r\n', b'z\r\na\nb\r\nX\r\n', b'a\nb\r\nY\r\n', b'a\nb\r\n<<<<<<< yours\r\nX\r\n||||||| previous generation\r\nc\r\n=======\r\nY\r\n>>>>>>> new generation\r\n', 1),
}


def _git_merge_file(tmp_path, base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, int]:
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp_path / name).write_bytes(data)
    done = subprocess.run([GIT, "merge-file", "-p", "--diff3", *LABELS, "ours", "base", "theirs"], cwd=tmp_path, capture_output=True, check=False)
    return done.stdout, done.returncode


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@pytest.mark.parametrize("case", CASES)
def test_the_cases_are_what_git_merge_file_writes(tmp_path, case):
    base, ours, theirs, merged, conflicts = CASES[case]
    assert _git_merge_file(tmp_path, base, ours, theirs) == (merged, conflicts)


@pytest.mark.parametrize("case", CASES)
def test_the_python_diff3_merges_as_git_does(case):
    base, ours, theirs, merged, conflicts = CASES[case]
    assert python_merge3(base, ours, theirs) == MergeResult(merged, conflicts)


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@pytest.mark.parametrize("case", ["clash", "crlf-conflict", "both-edit-apart"])
def test_merge3_with_git(case):
    base, ours, theirs, merged, conflicts = CASES[case]
    assert merge3(base, ours, theirs) == merge3(base, ours, theirs, tool="git") == MergeResult(merged, conflicts)


# A move: git aligns it as one conflict, difflib as ours' reordering, which theirs' deletion does not touch.
MOVED = (b"c\na\n", b"a\nc\n", b"c\n")
GIT_MOVED = MergeResult(b"<<<<<<< yours\na\nc\n||||||| previous generation\nc\na\n=======\nc\n>>>>>>> new generation\n", 1)
PYTHON_MOVED = MergeResult(b"a\nc\n", 0)


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_the_tool_chooses_who_merges():
    assert merge3(*MOVED) == merge3(*MOVED, tool="auto") == merge3(*MOVED, tool="git") == GIT_MOVED
    assert merge3(*MOVED, tool="python") == python_merge3(*MOVED) == PYTHON_MOVED


def test_without_git_auto_merges_in_python_and_git_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without git
    assert merge3(*MOVED) == PYTHON_MOVED
    with pytest.raises(RuntimeError, match=r"^git merge-file is not available$"):
        merge3(*MOVED, tool="git")


def test_a_git_that_cannot_run_is_passed_over(tmp_path, monkeypatch):
    broken = tmp_path / "git"
    broken.write_bytes(b"")  # executable but no program: exec fails (OSError)
    broken.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert merge3(*MOVED) == PYTHON_MOVED
    with pytest.raises(RuntimeError, match=r"^git merge-file is not available$"):
        merge3(*MOVED, tool="git")


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_the_merge_writes_nothing_where_it_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert merge3(*MOVED, tool="git") == GIT_MOVED
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_a_git_that_dies_is_passed_over(tmp_path, monkeypatch):
    dying = tmp_path / "bin" / "git"
    dying.parent.mkdir()
    dying.write_text("#!/bin/sh\necho 'fatal: bad config line 1' >&2\nexit 128\n")
    dying.chmod(0o755)
    monkeypatch.setenv("PATH", f"{dying.parent}{os.pathsep}{os.environ['PATH']}")
    assert merge3(*MOVED) == PYTHON_MOVED


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_the_users_broken_global_git_config_does_not_reach_the_merge(tmp_path, monkeypatch):
    config = tmp_path / "gitconfig"
    config.write_text("[[[\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))  # plain git dies on it: "fatal: bad config line 1", exit 128
    assert _git_merge_file(tmp_path, *MOVED) == (b"", 128)
    assert merge3(*MOVED) == GIT_MOVED  # opkit runs git with the global and system config off


def test_a_git_that_does_not_answer_is_given_up_on(tmp_path, monkeypatch):
    hanging = tmp_path / "git"
    hanging.write_text("#!/bin/sh\nexec /bin/sleep 5\n")
    hanging.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(merge, "GIT_TIMEOUT_S", 0.5)
    assert merge3(*MOVED) == PYTHON_MOVED


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_files_git_refuses_to_merge_are_merged_in_python(tmp_path):
    base, ours, theirs = b"a\0\nb\n", b"a\0\nX\n", b"a\0\nb\n"
    assert _git_merge_file(tmp_path, base, ours, theirs) == (b"", 255)  # "error: Cannot merge binary files": a failure
    assert merge3(base, ours, theirs) == MergeResult(b"a\0\nX\n", 0)
    with pytest.raises(RuntimeError, match=r"^git merge-file is not available$"):
        merge3(base, ours, theirs, tool="git")
