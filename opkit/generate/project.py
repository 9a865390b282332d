"""`opkit new` as a library call: render cookiecutter-op/ for a spec, atomically, into one directory.

The project is rendered into a temporary directory beside the target and renamed into place, so an
interrupted or failed run leaves either no project or the previous one, never half of one. A staging
directory that a killed run left behind is removed by the next run.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import glob
import json
import os
import re
import shutil
import signal
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from jinja2.ext import Extension

from opkit.generate.file_write import wait_for_lock
from opkit.generate.model import ProjectModel
from opkit.generate.msopgen_tool import MsOpGenRun, find_msopgen, run_msopgen, set_vendor_name
from opkit.generate.resources import template_dir
from opkit.generate.spec import SPEC_FILE, OpSpec, spec_text
from opkit.generate.update import GENERATED_DIR, Update, UpdateRefused, record_generation, update_tree


class TargetError(ValueError):
    """The output directory cannot be used (exists and is not empty, is a file, ...)."""


class ProjectChanged(TargetError):
    """A file of the project changed while ``--force`` updated it: the update is not applied, the file is kept."""


# How long --force waits for another opkit run updating the same project.
PROJECT_LOCK_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class GeneratedProject:
    path: Path
    spec: OpSpec
    msopgen: MsOpGenRun | None = None  # None: the built-in Ascend C tree was written
    files: tuple[str, ...] = field(default=())
    kept: tuple[str, ...] = field(default=())  # --force: the user's own files carried into the new project
    merged: tuple[str, ...] = field(default=())  # --force: generated files the user had edited, their edits kept
    conflicts: tuple[str, ...] = field(default=())  # --force: generated files with conflict markers to resolve
    binary: tuple[str, ...] = field(default=())  # --force: generated files the user made binary, kept and not merged


def cookiecutter_context(spec: OpSpec) -> dict[str, str]:
    """The cookiecutter variables that reproduce ``spec`` (cookiecutter-op/cookiecutter.json)."""
    return spec_text(spec)


def recorded_spec(target: str | os.PathLike) -> OpSpec | None:
    """The spec the project at ``target`` was made from; None where there is no project yet (no directory,
    or an empty one). A directory with files but no readable ``opkit.json`` is not an opkit project, and
    ``--force`` leaves it alone: TargetError."""
    from opkit.generate.spec import SpecError, load_spec

    target = Path(target)
    try:
        if not target.is_dir() or target.is_symlink() or not any(target.iterdir()):
            return None
        return load_spec(target)
    except SpecError as exc:
        raise TargetError(f"{exc}; --force updates only a project opkit made (it re-reads its {SPEC_FILE}), never another directory") from None
    except OSError as exc:
        raise TargetError(f"cannot read {target}: {exc.strerror or exc}") from None


def check_target(target: Path, *, force: bool) -> None:
    blocking = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise TargetError(f"cannot create {target}: {blocking} is a file, not a directory")
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise TargetError(f"{target} exists and is not a directory")
    if force:
        recorded_spec(target)
    elif target.is_dir() and any(target.iterdir()):
        if not os.path.lexists(target / SPEC_FILE):
            raise TargetError(f"{target} exists and is not empty, and is not an opkit project: it has no {SPEC_FILE}; choose another directory with -o")
        raise TargetError(f"{target} exists and is an opkit project; use --force to update it (your files and edits are kept)")


def generate_project(spec: OpSpec, out_dir: str | os.PathLike, *, force: bool = False, msopgen_mode: str = "auto") -> GeneratedProject:
    """Write the project for ``spec`` to ``out_dir`` (the project root); nothing is written elsewhere.

    With ``force`` an existing project is updated (``update``): the user's files and edits are kept,
    and conflicts between their edits and the new generation are marked, never overwritten. The update
    holds the project's lock from its first read to its swap, never crosses a mount point inside the
    project, and is not applied (``ProjectChanged``) when a file of the project changed meanwhile.
    An existing empty directory (an empty mount point, a directory in a read-only parent) is filled in place.
    """
    target = Path(out_dir).absolute()
    try:
        check_target(target, force=force)
    except OSError as exc:  # a path component too long, a loop of links, ...
        raise TargetError(f"cannot use {target}: {exc.strerror or exc}") from None
    # fails before anything is written; the extension style's kernel is csrc/, not an msOpGen project
    executable = find_msopgen(msopgen_mode) if spec.style != "extension" else None
    model = ProjectModel(spec)
    if target.is_dir() and not target.is_symlink():
        with _project_lock(target):
            if not os.listdir(target):
                return _generate_in_place(spec, model, executable, target)
            refuse_mount_points(target)
            return _generate_beside(spec, model, executable, target)
    return _generate_beside(spec, model, executable, target)


def _generate_beside(spec: OpSpec, model: ProjectModel, executable, target: Path) -> GeneratedProject:
    created_parents = [p for p in reversed(target.parents) if not p.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_staging(target)
        staging = Path(tempfile.mkdtemp(prefix=_staging_prefix(target), dir=target.parent))
        (staging / STAGING_MARK).touch()
    except OSError as exc:
        _remove_empty(created_parents)
        raise TargetError(f"cannot create {target}: {exc.strerror or exc}") from None
    in_use = _hold(staging)  # marks the staging directory as this live run's, not a killed run's leftover
    try:
        rendered, run, files = _render_all(spec, model, executable, staging)
        changes = Update()
        if target.exists():
            before = tree_state(target)
            changes = update_tree(target, rendered, lambda: _render_previous(target, staging))
            keep_earlier_entry(target, rendered)
            _refuse_changed(target, before, tree_state(target))
            _swap_into_place(rendered, target, staging)
            old = rendered if rendered.exists() else staging / "previous"
            after = tree_state(old)
            if after != before:  # changed between the last check and the swap: swap back, nothing lost
                _swap_into_place(old, target, staging)
                _refuse_changed(target, before, after)
        else:
            _swap_into_place(rendered, target, staging)
    except BaseException as exc:
        remove_staging(staging)
        _remove_empty(created_parents)
        if isinstance(exc, OSError):  # a full disk, a permission: one message, nothing left behind
            raise TargetError(f"cannot write {target}: {exc.strerror or exc}") from None
        if isinstance(exc, UpdateRefused):
            raise TargetError(str(exc)) from None
        raise
    finally:
        os.close(in_use)
    remove_staging(staging)
    return GeneratedProject(target, spec, run, files, changes.kept, changes.merged, changes.conflicts, changes.binary)


def _render_all(spec: OpSpec, model: ProjectModel, executable, staging: Path) -> tuple[Path, MsOpGenRun | None, tuple[str, ...]]:
    rendered = _render(spec, model, staging)
    check_written_documents(rendered, spec)
    run = None
    if executable is not None:
        ascend_c = rendered / model.op_type
        shutil.rmtree(ascend_c)  # msOpGen writes this tree itself
        run = run_msopgen(executable, rendered / "msopgen" / f"{spec.name}.json", spec.soc, ascend_c)
        set_vendor_name(ascend_c, spec.vendor)
    files = tuple(sorted(str(p.relative_to(rendered)) for p in rendered.rglob("*") if p.is_file()))
    record_generation(rendered)
    return rendered, run, files


def _generate_in_place(spec: OpSpec, model: ProjectModel, executable, target: Path) -> GeneratedProject:
    """Fill the existing empty directory ``target``: rendered in a staging directory inside it (so the parent
    need not be writable, and an empty mount point stays the mount point), then moved up entry by entry;
    on failure what was moved is removed again, leaving the directory empty as it was."""
    try:
        staging = Path(tempfile.mkdtemp(prefix=".opkit-staging-", dir=target))
        (staging / STAGING_MARK).touch()
    except OSError as exc:
        raise TargetError(f"cannot write {target}: {exc.strerror or exc}") from None
    moved: list[Path] = []
    try:
        rendered, run, files = _render_all(spec, model, executable, staging)
        for entry in sorted(os.listdir(rendered)):
            os.rename(rendered / entry, target / entry)
            moved.append(target / entry)
    except BaseException as exc:
        for path in moved:
            with contextlib.suppress(OSError):
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        remove_staging(staging)
        if isinstance(exc, OSError):
            raise TargetError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise
    remove_staging(staging)
    return GeneratedProject(target, spec, run, files)


@contextlib.contextmanager
def _project_lock(target: Path, timeout: float = PROJECT_LOCK_TIMEOUT_S):
    """An exclusive flock on the project directory for the whole update. A run that waited while another
    swapped a new tree into place locks the directory that is there now (the same path, another inode)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise TargetError(f"cannot open {target}: {exc.strerror or exc}") from None
        try:
            if not wait_for_lock(fd, deadline):
                raise TargetError(f"{target} is being updated by another opkit run (waited {timeout:g} s); try again when it has finished")
            try:
                now = os.stat(target)
            except FileNotFoundError:
                now = None
            held = os.fstat(fd)
            if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                yield
                return
        finally:
            os.close(fd)


def tree_state(root: Path) -> dict[str, tuple[int, ...]]:
    """Every entry under ``root`` (links not followed) with what its content cannot change without: its kind,
    inode, size, mtime and ctime (no one can set a ctime back). ``root`` itself is left out: a rename
    changes its ctime."""
    state = {}
    for directory, dirs, names in os.walk(root):
        for entry in (*dirs, *names):
            path = os.path.join(directory, entry)
            with contextlib.suppress(FileNotFoundError):
                info = os.lstat(path)
                state[os.path.relpath(path, root)] = (stat.S_IFMT(info.st_mode), info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return state


def _refuse_changed(target: Path, before: dict, after: dict) -> None:
    changed = sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise ProjectChanged(
            f"{target}: {shown} changed while --force was updating the project; nothing was updated and your "
            "change is kept; run --force again"
        )


def mount_points_inside(root: Path) -> list[Path]:
    """The mount points strictly inside ``root``: from /proc/self/mountinfo (bind mounts of the same
    filesystem included), else by a change of device while walking the tree."""
    real = os.path.realpath(root)
    found: set[str] = set()
    with contextlib.suppress(OSError):
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                fields = line.split(" ")
                if len(fields) > 4:
                    point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
                    if point.startswith(real.rstrip("/") + "/"):
                        found.add(point)
    device = os.lstat(real).st_dev
    for directory, dirs, _ in os.walk(real):
        for name in list(dirs):
            path = os.path.join(directory, name)
            with contextlib.suppress(OSError):
                if os.lstat(path).st_dev != device:
                    found.add(path)
                    dirs.remove(name)
    return sorted(Path(p) for p in found)


def refuse_mount_points(target: Path) -> None:
    mounts = mount_points_inside(target)
    if mounts:
        raise TargetError(
            f"{mounts[0]} is a mount point inside {target}: --force never updates across a mount point (it would "
            "move or remove files of another filesystem); unmount it, or move it out of the project, then run --force again"
        )


def _staging_prefix(target: Path) -> str:
    return f".{target.name}.opkit-"


# In every staging directory, first thing: what tells opkit's own from a user's folder that merely has such a name.
STAGING_MARK = ".opkit-staging"
_MKDTEMP_NAME = re.compile(r"[a-z0-9_]{8}")  # tempfile's random part


def _is_staging(directory: Path, prefix: str) -> bool:
    """A staging directory of opkit's: it holds the mark, or it is the empty directory a run killed right after
    mkdtemp left (named as mkdtemp names, removed with rmdir, which cannot take anything with it)."""
    if (directory / STAGING_MARK).is_file():
        return True
    return bool(_MKDTEMP_NAME.fullmatch(directory.name[len(prefix) :])) and not any(directory.iterdir())


def remove_staging(staging: Path) -> None:
    """Remove a staging directory, its mark last: a run killed meanwhile leaves it marked (or empty), so the
    next run still knows it for opkit's."""
    with os.scandir(staging) as entries:
        for entry in entries:
            if entry.name != STAGING_MARK:
                path = Path(entry.path)
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        path.unlink()
    with contextlib.suppress(OSError):
        (staging / STAGING_MARK).unlink()
    with contextlib.suppress(OSError):
        staging.rmdir()


def _hold(directory: Path) -> int:
    """An exclusive flock on ``directory``, held until the returned descriptor is closed (or the process dies)."""
    fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def clean_stale_staging(target: Path) -> list[Path]:
    """Remove the staging directories that killed runs left beside ``target``; returns them.

    A live run holds a lock on its staging directory, so only the dead runs' are taken. A run killed
    between the two renames of a swap (``_swap_into_place`` without RENAME_EXCHANGE) left the old
    project as ``previous/`` in its staging directory: it is put back first.
    """
    removed = []
    prefix = _staging_prefix(target)
    for stale in sorted(target.parent.glob(glob.escape(prefix) + "*")):
        try:
            if stale.is_symlink() or not stale.is_dir() or not _is_staging(stale, prefix):
                continue  # a user's file or folder of that name: never opkit's to remove
        except OSError:
            continue
        try:
            fd = os.open(stale, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue  # a live run's
        try:
            previous = stale / "previous"
            if (stale / STAGING_MARK).is_file():
                if previous.is_dir() and not previous.is_symlink() and not os.path.lexists(target):
                    os.rename(previous, target)
                remove_staging(stale)
            else:
                os.rmdir(stale)  # the unmarked one is empty: rmdir takes nothing else with it
            removed.append(stale)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def _render_previous(target: Path, staging: Path) -> Path | None:
    """The old project's own spec rendered again: the merge base of a project that kept no copy of it."""
    from opkit.generate.spec import SpecError, load_spec

    try:
        old = load_spec(target)
        base_staging = staging / "base"
        base_staging.mkdir()
        return _render(old, ProjectModel(old), base_staging)
    except (SpecError, OSError):
        return None


def keep_earlier_entry(old: Path, rendered: Path) -> None:
    """Add the old generation's op_plugin yaml entry to ``.opkit/earlier_entries.json`` when the new one differs:
    the entries ``opkit yaml add`` may update in a real yaml (it refuses to touch any other)."""
    from opkit.generate.yaml_edit import EARLIER_ENTRIES, FRAGMENT_PATH, YamlEditError, earlier_entries, load_fragment

    previous = old / GENERATED_DIR / FRAGMENT_PATH
    if not previous.is_file():
        return
    try:
        entry = load_fragment(previous)
        current = load_fragment(rendered / FRAGMENT_PATH) if (rendered / FRAGMENT_PATH).is_file() else None
        kept = list(earlier_entries(old))
    except YamlEditError:
        return  # a hand-broken copy: nothing to remember
    if entry != current and entry not in kept:
        path = rendered / EARLIER_ENTRIES
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([*kept, entry], indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def record_examples(project: str | os.PathLike, examples: tuple[str, ...]) -> Path:
    """Make ``examples`` the project's recorded examples: its opkit.json rewritten from the spec, and the
    last generation's copy in ``.opkit/generated/`` too when the user had not edited opkit.json (so the next
    ``--force`` sees no edit of theirs there). Returns the path of opkit.json."""
    from dataclasses import replace

    from opkit.atomic_write import WriteFailed, replace_file
    from opkit.generate.spec import SpecError, load_spec, validate_spec

    root = Path(project)
    path = root / SPEC_FILE
    try:
        spec = load_spec(root)
        new = replace(spec, examples=tuple(examples))
        validate_spec(new)
    except SpecError as exc:
        raise TargetError(str(exc)) from None
    generated = root / GENERATED_DIR / SPEC_FILE
    try:
        unedited = generated.is_file() and generated.read_bytes() == path.read_bytes()
        replace_file(path, new.dumps().encode("utf-8"))
        if unedited:
            replace_file(generated, new.dumps().encode("utf-8"))
    except WriteFailed as exc:
        raise TargetError(str(exc)) from None
    except OSError as exc:
        raise TargetError(f"cannot read {path}: {exc.strerror or exc}") from None
    return path


def _remove_empty(created_parents: list[Path]) -> None:
    """Remove the parent directories this run created, deepest first, as long as they are empty."""
    for parent in reversed(created_parents):
        try:
            parent.rmdir()
        except OSError:
            break


def check_written_documents(project: Path, spec: OpSpec) -> None:
    """Validate the spec file, msOpGen JSON and yaml entries against schemas/ before anything lands."""
    import json

    import yaml

    from opkit.generate.schemas import validate_document
    from opkit.yamlio import FAST_LOADER

    validate_document(json.loads((project / "opkit.json").read_text(encoding="utf-8")), "opkit-spec")
    prototype = project / "msopgen" / f"{spec.name}.json"
    if prototype.is_file():  # the extension style has no msOpGen project
        validate_document(json.loads(prototype.read_text(encoding="utf-8")), "msopgen")
    fragment = project / "op_plugin" / "op_plugin_functions.yaml"
    if fragment.is_file():  # the custom-op style has no op-plugin entry
        for entry in yaml.load(fragment.read_text(encoding="utf-8"), Loader=FAST_LOADER)["custom"]:
            validate_document(entry, "op-plugin-entry")


def _render(spec: OpSpec, model: ProjectModel, staging: Path) -> Path:
    """Render cookiecutter-op/ for ``spec`` into ``staging/out``; the user's values are data, never templates.

    ``cookiecutter(extra_context=...)`` renders every variable as a Jinja template before use, so a
    schema default ``"{{7*7}}"`` would be written as ``49`` (and ``{%`` would crash). The context is
    therefore built here, verbatim, and handed to cookiecutter's file generator; the private
    variables the template derives with Jinja are taken from the same project model instead.
    """
    from cookiecutter.generate import generate_context, generate_files

    template = template_dir()
    context = generate_context(context_file=str(template / "cookiecutter.json"))
    variables = context["cookiecutter"]
    variables.update(cookiecutter_context(spec))
    variables.update({"__op_type": model.op_type, "__kernel_name": model.kernel_name})
    variables["_jinja2_env_vars"] = {**variables.get("_jinja2_env_vars", {}), "bytecode_cache": _compiled_templates()}
    variables["_extensions"] = [*variables.get("_extensions", []), f"{__name__}.CompiledPathNames"]
    out = staging / "out"
    out.mkdir()
    project = Path(generate_files(repo_dir=str(template), context=context, output_dir=str(out), accept_hooks=False))
    _run_post_gen_hook(template, project)
    return project


def _run_post_gen_hook(template: Path, project: Path) -> None:
    """cookiecutter-op's post-generation hook, run in this process (cookiecutter would start a Python for it).

    The hook holds no Jinja, so running it as written is what cookiecutter runs after rendering it.
    """
    import runpy

    from cookiecutter.utils import work_in

    with work_in(project):
        runpy.run_path(str(template / "hooks" / "post_gen_project.py"), run_name="__main__")


@functools.cache
def _compiled_templates():
    """Jinja bytecode of cookiecutter-op's files, kept for the process: a second render (the merge base of
    ``--force``, a test suite, a forked worker) skips the compiler, which is most of a render's time."""
    from jinja2 import BytecodeCache

    class InMemory(BytecodeCache):
        def __init__(self) -> None:
            self.code: dict[str, bytes] = {}

        def load_bytecode(self, bucket) -> None:
            if bucket.key in self.code:
                bucket.bytecode_from_string(self.code[bucket.key])  # ignored if the source changed (checksum)

        def dump_bytecode(self, bucket) -> None:
            self.code[bucket.key] = bucket.bytecode_to_string()

    return InMemory()


class CompiledPathNames(Extension):
    """Keeps, for the process, what Jinja compiled of each template source cookiecutter renders from a string.

    cookiecutter renders every file and folder name with ``Environment.from_string``, which compiles the
    name afresh in each new environment (one per project): most of a project's render time. Compiled code
    depends only on the source and the environment's settings, which ``_render`` keeps the same, so the
    code of a name seen once is reused (folder names include the output path, so the store is bounded).
    File contents go through the bytecode cache above.
    """

    _code: dict[tuple, object] = {}
    _KEPT = 512

    def __init__(self, environment) -> None:
        super().__init__(environment)
        compile_afresh = environment.compile

        def compile_once(source, name=None, filename=None, raw=False, defer_init=False):
            key = (source, name, filename, raw, defer_init)
            if key not in self._code:
                if len(self._code) >= self._KEPT:
                    self._code.clear()
                self._code[key] = compile_afresh(source, name, filename, raw, defer_init)
            return self._code[key]

        environment.compile = compile_once


def _swap_into_place(rendered: Path, target: Path, staging: Path) -> None:
    """Put ``rendered`` at ``target`` in one step; an existing target ends up in ``staging``, to be removed.

    Linux swaps the two directories atomically (renameat2 RENAME_EXCHANGE). Elsewhere it is two
    renames, with SIGINT held off between them; a SIGKILL there leaves the old project in
    ``staging/previous``, which the next run puts back (``clean_stale_staging``).
    """
    if not target.exists():
        os.rename(rendered, target)
        return
    if _exchange(rendered, target):
        return
    previous = staging / "previous"
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        os.rename(target, previous)
        try:
            os.rename(rendered, target)
        except OSError:
            os.rename(previous, target)
            raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with renameat2(RENAME_EXCHANGE); False where the system cannot."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))
