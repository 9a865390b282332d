"""`opkit new --force` as an update: the new generation merged with the user's project, file by file.

Every project keeps what opkit generated last time under ``.opkit/generated/``. On regeneration
each generated file is merged three ways (that copy, the user's file, the new generation; see
``merge``): an unedited file simply becomes the new one, the user's edits are kept where they do
not touch what the new generation changed, and where they do, the file gets conflict markers and
is reported, never overwritten. Files opkit does not generate are carried over unchanged, and so are
the user's directories, empty ones included. A project from an opkit that kept no ``.opkit/generated/``
is merged against a re-rendering of its own ``opkit.json``.

Only what opkit generated is touched: a binary file (a NUL byte in its first 8000 bytes, git's test)
is never merged, the user's stands and it is reported; the modes and owners of what was there are kept
(a file's mode unless the user left it as generated); a folder the user replaced by a symlink is
refused rather than silently replaced by a fresh directory or written through (the link may lead out of
the project).

All of this is written into the new tree in the staging directory; the user's project is only read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from opkit.generate.merge import LABELS, merge3

OPKIT_DIR = Path(".opkit")
GENERATED_DIR = OPKIT_DIR / "generated"  # the last generation, exactly as opkit wrote it: the merge base


# git's test for a binary file (xdiff's buffer_is_binary): a NUL byte in the first 8000 bytes
BINARY_PROBE = 8000


class UpdateRefused(ValueError):
    """The project cannot be updated without touching what opkit did not generate; the message says why."""


@dataclass(frozen=True)
class Update:
    kept: tuple[str, ...] = ()  # the user's own files, carried over
    merged: tuple[str, ...] = ()  # generated files whose user edits were kept in the new version
    conflicts: tuple[str, ...] = ()  # generated files left with conflict markers to resolve
    binary: tuple[str, ...] = ()  # generated files the user made binary: theirs kept, the new generation not merged in


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


def _walk(root: Path) -> Iterator[tuple[str, Path]]:
    """(relative path, path) of ``root`` itself ("") and everything under it, links not followed."""
    yield "", root
    for directory, dirs, names in os.walk(root):
        for entry in (*dirs, *names):
            path = Path(directory, entry)
            yield path.relative_to(root).as_posix(), path


def _directories(root: Path | None) -> set[str]:
    """Relative paths of the real directories under ``root`` (not symlinks), except .opkit/generated/."""
    if root is None or not root.is_dir():
        return set()
    generated = GENERATED_DIR.as_posix()
    return {rel for rel, path in _walk(root) if rel and path.is_dir() and not path.is_symlink() and rel != generated and not rel.startswith(generated + "/")}


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
    _refuse_linked_folders(old, new)
    outcomes: dict[str, list[str]] = {"merged": [], "conflict": [], "binary": []}
    kept = []
    for rel, path in sorted(_files(old).items()):
        dest = rendered / rel
        if rel in new:
            outcome = _merge_file(path, base.get(rel), dest)
            if outcome in outcomes:
                outcomes[outcome].append(rel)
            continue
        if rel in base and _same(path, base[rel]):
            continue  # generated before, not any more, and never edited: it goes
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest, follow_symlinks=False)
        if not rel.startswith(f"{OPKIT_DIR.as_posix()}/"):
            kept.append(rel)
    generated_dirs = _directories(base_root)
    for rel in sorted(_directories(old) - generated_dirs):  # the user's own, empty ones too
        (rendered / rel).mkdir(parents=True, exist_ok=True)
    _keep_modes_and_owners(old, rendered, base)
    return Update(tuple(kept), tuple(outcomes["merged"]), tuple(outcomes["conflict"]), tuple(outcomes["binary"]))


def _refuse_linked_folders(old: Path, generated: dict[str, Path]) -> None:
    """A generated file whose folder the user replaced by a symlink: refused, before anything is written."""
    linked = sorted({parent for rel in generated for parent in _parents(rel) if (old / parent).is_symlink()})
    if linked:
        folder = old / linked[0]
        raise UpdateRefused(
            f"{folder} is a symlink (to {os.readlink(folder)}), and opkit generates files in it: --force does not write "
            "through a linked folder, nor replace it; make it a plain folder (e.g. copy what it links to in its place), then run --force again"
        )


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _keep_modes_and_owners(old: Path, rendered: Path, base: dict[str, Path]) -> None:
    """What was in ``old`` keeps its owner and mode in ``rendered`` (a generated file's mode only if the user
    changed it from the generated one); what is new takes the owner of the folder it lands in."""
    owners: dict[str, tuple[int, int]] = {}
    for rel, path in _walk(rendered):
        was = _lstat(old / rel) if rel else _lstat(old)
        now = os.lstat(path)
        if was is not None and stat.S_IFMT(was.st_mode) == stat.S_IFMT(now.st_mode):
            owner = (was.st_uid, was.st_gid)
            generated = _lstat(base[rel]) if rel in base else None
            user_mode = not stat.S_ISREG(was.st_mode) or generated is None or stat.S_IMODE(generated.st_mode) != stat.S_IMODE(was.st_mode)
            if user_mode and not stat.S_ISLNK(now.st_mode) and stat.S_IMODE(now.st_mode) != stat.S_IMODE(was.st_mode):
                os.chmod(path, stat.S_IMODE(was.st_mode))
        else:
            owner = owners.get(rel.rpartition("/")[0], (now.st_uid, now.st_gid))
        owners[rel] = owner
        if owner != (now.st_uid, now.st_gid):
            with contextlib.suppress(PermissionError):  # only root gives files away; others keep their own
                os.chown(path, *owner, follow_symlinks=False)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_PROBE]


def _same(a: Path, b: Path) -> bool:
    if a.is_symlink() or b.is_symlink():
        return a.is_symlink() and b.is_symlink() and a.readlink() == b.readlink()
    return a.read_bytes() == b.read_bytes()


def _merge_file(user: Path, base: Path | None, dest: Path) -> str:
    """Merge the user's ``user`` into the newly generated ``dest``; returns new, merged, conflict or binary."""
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
    elif is_binary(ours) or is_binary(previous) or is_binary(theirs):
        dest.write_bytes(ours)  # no conflict markers in a binary file: the user's stands, reported
        return "binary"
    else:
        result = merge3(previous, ours, theirs)
        result_data, conflicts = result.data, result.conflicts
    if result_data == theirs:
        return "new"
    dest.write_bytes(result_data)
    return "conflict" if conflicts or has_conflict_markers(result_data) else "merged"


def has_conflict_markers(data: bytes) -> bool:
    """An earlier update's conflict the user has not resolved yet: it is reported again, not taken as merged."""
    ours, _, theirs = (label.encode() for label in LABELS)
    lines = data.splitlines()
    return b"<<<<<<< " + ours in lines and b">>>>>>> " + theirs in lines
