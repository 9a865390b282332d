"""`opkit new --force` as an update: the new generation merged with the user's project, file by file.

Every project keeps what opkit generated last time under ``.opkit/generated/``. On regeneration
each generated file is merged three ways (that copy, the user's file, the new generation; see
``merge``): an unedited file simply becomes the new one, the user's edits are kept where they do
not touch what the new generation changed, and where they do, the file gets conflict markers and
is reported, never overwritten. Files opkit does not generate are carried over unchanged. A project
from an opkit that kept no ``.opkit/generated/`` is merged against a re-rendering of its own
``opkit.json``.

All of this is written into the new tree in the staging directory; the user's project is only read.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from opkit.generate.merge import LABELS, merge3

OPKIT_DIR = Path(".opkit")
GENERATED_DIR = OPKIT_DIR / "generated"  # the last generation, exactly as opkit wrote it: the merge base


@dataclass(frozen=True)
class Update:
    kept: tuple[str, ...] = ()  # the user's own files, carried over
    merged: tuple[str, ...] = ()  # generated files whose user edits were kept in the new version
    conflicts: tuple[str, ...] = ()  # generated files left with conflict markers to resolve


def _files(root: Path) -> dict[str, Path]:
    """Relative path -> path of every file (and symlink) under ``root``, except opkit's own .opkit/generated/."""
    if not root.is_dir():
        return {}
    found = {}
    for path in root.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            continue
        rel = path.relative_to(root)
        if rel.parts[: len(GENERATED_DIR.parts)] != GENERATED_DIR.parts:
            found[rel.as_posix()] = path
    return found


def record_generation(rendered: Path) -> None:
    """Keep a copy of the generation in ``rendered/.opkit/generated/``: the next update's merge base."""
    files = _files(rendered)
    for rel, path in files.items():
        dest = rendered / GENERATED_DIR / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest, follow_symlinks=False)


def update_tree(old: Path, rendered: Path, render_base: Callable[[], Path | None]) -> Update:
    """Fill ``rendered`` (the new generation, already recorded) with the user's files and merged edits from ``old``.

    ``render_base`` re-renders the old project's own spec, for a project without ``.opkit/generated/``.
    """
    base_root = old / GENERATED_DIR if (old / GENERATED_DIR).is_dir() else render_base()
    base = _files(base_root) if base_root is not None else {}
    new = {rel: path for rel, path in _files(rendered).items() if not rel.startswith(f"{OPKIT_DIR.as_posix()}/")}
    kept, merged, conflicts = [], [], []
    for rel, path in sorted(_files(old).items()):
        dest = rendered / rel
        if rel in new:
            outcome = _merge_file(path, base.get(rel), dest)
            if outcome == "merged":
                merged.append(rel)
            elif outcome == "conflict":
                conflicts.append(rel)
            continue
        if rel in base and _same(path, base[rel]):
            continue  # generated before, not any more, and never edited: it goes
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest, follow_symlinks=False)
        if not rel.startswith(f"{OPKIT_DIR.as_posix()}/"):
            kept.append(rel)
    return Update(tuple(kept), tuple(merged), tuple(conflicts))


def _same(a: Path, b: Path) -> bool:
    if a.is_symlink() or b.is_symlink():
        return a.is_symlink() and b.is_symlink() and a.readlink() == b.readlink()
    return a.read_bytes() == b.read_bytes()


def _merge_file(user: Path, base: Path | None, dest: Path) -> str:
    """Merge the user's ``user`` into the newly generated ``dest``; returns new, merged or conflict."""
    if user.is_symlink() or not user.is_file():
        dest.unlink()  # the user replaced a generated file by a link: theirs stands
        shutil.copy2(user, dest, follow_symlinks=False)
        return "merged"
    ours, theirs = user.read_bytes(), dest.read_bytes()
    previous = base.read_bytes() if base is not None and base.is_file() and not base.is_symlink() else b""
    if ours == theirs or ours == previous:
        return "new"  # nothing of the user's to keep
    if theirs == previous:
        result_data, conflicts = ours, 0  # opkit changed nothing here: the user's file as it is
    else:
        result = merge3(previous, ours, theirs)
        result_data, conflicts = result.data, result.conflicts
    if result_data == theirs:
        return "new"
    dest.write_bytes(result_data)
    shutil.copymode(user, dest)
    return "conflict" if conflicts or has_conflict_markers(result_data) else "merged"


def has_conflict_markers(data: bytes) -> bool:
    """An earlier update's conflict the user has not resolved yet: it is reported again, not taken as merged."""
    ours, _, theirs = (label.encode() for label in LABELS)
    lines = data.splitlines()
    return b"<<<<<<< " + ours in lines and b">>>>>>> " + theirs in lines
