"""`opkit new` as a library call: render cookiecutter-op/ for a spec, atomically, into one directory.

The project is rendered into a temporary directory beside the target and renamed into place, so an
interrupted or failed run leaves either no project or the previous one, never half of one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from opkit.generate.model import ProjectModel
from opkit.generate.msopgen_tool import MsOpGenRun, find_msopgen, run_msopgen
from opkit.generate.resources import template_dir
from opkit.generate.spec import OpSpec


class TargetError(ValueError):
    """The output directory cannot be used (exists and is not empty, is a file, ...)."""


@dataclass(frozen=True)
class GeneratedProject:
    path: Path
    spec: OpSpec
    msopgen: MsOpGenRun | None = None  # None: the built-in Ascend C tree was written
    files: tuple[str, ...] = field(default=())
    kept: tuple[str, ...] = field(default=())  # --force: the user's files carried into the new project


def cookiecutter_context(spec: OpSpec) -> dict[str, str]:
    """The cookiecutter variables that reproduce ``spec`` (cookiecutter-op/cookiecutter.json)."""
    return {
        "name": spec.name,
        "schema": spec.schema,
        "style": spec.style,
        "namespace": spec.namespace,
        "dtypes": ",".join(spec.dtypes),
        "formats": ",".join(spec.formats),
        "soc": ",".join(spec.soc),
        "out_like": spec.out_like,
        "vendor": spec.vendor,
    }


def check_target(target: Path, *, force: bool) -> None:
    blocking = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise TargetError(f"cannot create {target}: {blocking} is a file, not a directory")
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise TargetError(f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise TargetError(f"{target} exists and is not empty; use --force to regenerate it (your other files are kept)")


def generate_project(spec: OpSpec, out_dir: str | os.PathLike, *, force: bool = False, msopgen_mode: str = "auto") -> GeneratedProject:
    """Write the project for ``spec`` to ``out_dir`` (the project root); nothing is written elsewhere."""
    target = Path(out_dir).absolute()
    check_target(target, force=force)
    executable = find_msopgen(msopgen_mode)  # fails before anything is written
    model = ProjectModel(spec)

    created_parents = [p for p in reversed(target.parents) if not p.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.opkit-", dir=target.parent))
    except OSError as exc:
        _remove_empty(created_parents)
        raise TargetError(f"cannot create {target}: {exc.strerror or exc}") from None
    try:
        rendered = _render(spec, model, staging)
        check_written_documents(rendered, spec)
        run = None
        if executable is not None:
            ascend_c = rendered / model.op_type
            shutil.rmtree(ascend_c)  # msOpGen writes this tree itself
            run = run_msopgen(executable, rendered / "msopgen" / f"{spec.name}.json", spec.soc[0], ascend_c)
        files = tuple(sorted(str(p.relative_to(rendered)) for p in rendered.rglob("*") if p.is_file()))
        kept = _move_into_place(rendered, target, staging)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_empty(created_parents)
        if isinstance(exc, OSError):  # a full disk, a permission: one message, nothing left behind
            raise TargetError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return GeneratedProject(target, spec, run, files, kept)


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

    validate_document(json.loads((project / "opkit.json").read_text(encoding="utf-8")), "opkit-spec")
    validate_document(json.loads((project / "msopgen" / f"{spec.name}.json").read_text(encoding="utf-8")), "msopgen")
    fragment = project / "op_plugin" / "op_plugin_functions.yaml"
    if fragment.is_file():  # the custom-op style has no op-plugin entry
        for entry in yaml.safe_load(fragment.read_text(encoding="utf-8"))["custom"]:
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
    out = staging / "out"
    out.mkdir()
    return Path(generate_files(repo_dir=str(template), context=context, output_dir=str(out)))


def _move_into_place(rendered: Path, target: Path, staging: Path) -> tuple[str, ...]:
    """Rename the rendered tree onto ``target``; an existing target (``--force``) is swapped out first.

    Nothing of the user's is lost: files opkit does not generate (a ``reference.py``, build outputs)
    are carried into the new tree, and generated files the user had changed are kept under
    ``.opkit/previous/``. Returns the paths so kept.
    """
    if not target.exists():
        os.rename(rendered, target)
        return ()
    kept = _carry_over(target, rendered)
    old = staging / "previous"
    os.rename(target, old)
    try:
        os.rename(rendered, target)
    except OSError:
        os.rename(old, target)
        raise
    return kept


PREVIOUS_DIR = Path(".opkit") / "previous"


def _carry_over(old: Path, rendered: Path) -> tuple[str, ...]:
    """Copy the old project's user files into the new tree before the swap (copies: the old tree stays intact)."""
    kept: list[str] = []
    for path in sorted(old.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        rel = path.relative_to(old)
        dest = rendered / rel
        generated = dest.exists() or dest.is_symlink() or any(p.is_file() for p in dest.parents if rendered in p.parents)
        if generated:
            if dest.is_file() and path.is_file() and dest.read_bytes() == path.read_bytes():
                continue  # regenerated unchanged
            dest = rendered / PREVIOUS_DIR / rel  # a generated file the user had edited: keep their version
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest, follow_symlinks=False)
        kept.append(str(dest.relative_to(rendered)))
    return tuple(kept)
