"""`opkit verify` and `opkit doctor`. torch is imported inside the commands, never at import time."""

from __future__ import annotations

import json
import sys

import click

from opkit.verify.backends import backend_names
from opkit.verify.report import format_github, format_report


def wants_color(stream=None) -> bool:
    """Colour on a terminal unless NO_COLOR is set (https://no-color.org)."""
    import os

    stream = stream or sys.stdout
    return not os.environ.get("NO_COLOR") and hasattr(stream, "isatty") and stream.isatty()

BACKEND_CHOICES = backend_names()  # the registry in opkit.verify.backends: adding a backend adds the choice


def _load_files(paths: tuple[str, ...]) -> list[str]:
    """Import user files that register ops (schema, Meta, kernels) before --op is looked up; the notes
    say where a file's op took the place of npugraph_ex's own of the same name."""
    import importlib.util

    from opkit.formats.files import InputError, read_text
    from opkit.verify.npugraph_ex.shadow import user_definitions_first

    notes: list[str] = []
    for i, path in enumerate(paths):
        try:
            source = read_text(path)  # refuses a FIFO or a device before Python's import would block on it
            code = compile(source, path, "exec")
        except InputError as exc:
            raise ValueError(f"--load {path}: {exc.message}") from None  # reported as one message, exit 2
        except SyntaxError as exc:
            raise ValueError(f"--load {path}:{exc.lineno or 1}:{exc.offset or 1}: invalid Python: {exc.msg}") from None
        spec = importlib.util.spec_from_file_location(f"opkit_verify_load_{i}", path)
        if spec is None or spec.loader is None:
            raise click.UsageError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        with user_definitions_first(path, source) as shadowed:
            exec(code, module.__dict__)  # the user's own file, as `python FILE` would run it
        notes += shadowed
    return notes


def _resolve_op(qualname: str):
    import torch

    ns, sep, name = qualname.partition("::")
    if not sep or not ns or not name:
        raise click.UsageError(f"--op takes ns::name, got {qualname!r}")
    name, _, overload = name.partition(".")
    packet = getattr(getattr(torch.ops, ns), name, None)
    if packet is None:
        raise click.UsageError(f"{qualname} is not registered; --load the file that defines it")
    return getattr(packet, overload or "default")


def _example_args(expression: str | None, op) -> tuple[tuple, dict]:
    if expression is None:
        from opkit.signature import Dialect, parse_schema
        from opkit.verify.project import sample_arguments

        return sample_arguments(parse_schema(str(op._schema), Dialect.TORCH_LIBRARY))
    return _evaluated_example(expression)


def _evaluated_example(expression: str) -> tuple[tuple, dict]:
    """The op's arguments from --example (``opkit.verify.project.evaluate_example``)."""
    from opkit.verify.project import ProjectError, evaluate_example

    try:
        return evaluate_example(expression)
    except ProjectError as exc:
        raise click.UsageError(str(exc)) from None


def _check_op(op_name: str, load_files: tuple[str, ...], example: str | None, *, backend: str, dynamic: bool, timeout: float | None):
    """Load the files, find the op, build its arguments and check it: all of it in the check's process."""
    from opkit.verify.check import check_graph_entry

    def check():
        notes = _load_files(load_files)
        op = _resolve_op(op_name)
        args, kwargs = _example_args(example, op)
        return check_graph_entry(op, args, kwargs, backend=backend, dynamic=dynamic, isolate=False, notes=notes)

    return _in_check_process(check, op_name, backend, timeout)


def _check_project(project_dir: str, example: str | None, *, backend: str, dynamic: bool, timeout: float | None):
    """Evaluate --example and verify the project, in the check's process too."""
    from opkit.verify.project import load_project, verify_project

    def check():
        return verify_project(project_dir, backend=backend, dynamic=dynamic, example=example, isolate=False)

    return _in_check_process(check, load_project(project_dir).qualname, backend, timeout)


def _check_from_cpp(
    from_file: str, op_name: str | None, meta_files: tuple[str, ...], load_files: tuple[str, ...], example: str | None,
    *, backend: str, dynamic: bool, timeout: float | None,
):  # fmt: skip
    """Define the op from its C++ text as torch would, load its Meta files, and check it: in the check's process too."""
    from opkit.verify.check import check_graph_entry
    from opkit.verify.from_cpp import defined_from_cpp

    def check():
        loaded = _load_files(load_files)
        with defined_from_cpp(from_file, op_name, meta_files) as (op, notes):
            args, kwargs = _example_args(example, op)
            return check_graph_entry(op, args, kwargs, backend=backend, dynamic=dynamic, real_kernel=False, notes=[*loaded, *notes], isolate=False)

    return _in_check_process(check, f"{op_name or ''} from {from_file}".strip(), backend, timeout)


def _in_check_process(check, target: str, backend: str, timeout: float | None):
    """``check()`` in a child (one fork per command) unless OPKIT_VERIFY_ISOLATION=0: user code that exits,
    hangs or crashes is a failed stage; a usage error found there is raised here again."""
    from opkit.verify import isolation
    from opkit.verify.backends import resolve_backend

    chosen = resolve_backend(backend)
    header = isolation.ReportHeader(target, chosen.name, chosen.device, chosen.emulated)
    isolate = isolation.wanted(None, timeout=timeout, default=True)
    return isolation.run_check(check, header, isolate=isolate, timeout=timeout, refusals=(ValueError, click.UsageError))


@click.command("verify")
@click.argument("project_dir", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--op", "op_name", metavar="NS::NAME", help="Check a registered op instead of a project (with --from: the op's NAME in that file).")
@click.option("--from", "from_file", type=click.Path(exists=True, dir_okay=False), help="A C++ file defining the op (TORCH_LIBRARY m.def): the schema is defined from it, as torch would.")
@click.option("--meta", "meta_files", multiple=True, type=click.Path(exists=True, dir_okay=False), help="With --from: a Python file registering the op's Meta/fake (repeatable).")
@click.option(
    "--example",
    metavar="EXPR",
    help='Python expression for the op\'s arguments, with torch in scope, e.g. "torch.randn(2, 3), 2.0" '
    "(a dict: keyword arguments). For --op and for a project alike. Default: a project's recorded examples "
    "(opkit.json), else sample inputs from the schema.",
)
@click.option("--save", is_flag=True, help="With PROJECT_DIR and --example: when the check passes, record the example in the project's opkit.json (it replaces the recorded ones), so verify and the generated test use it.")
@click.option(
    "--load", "load_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
    help="Python file registering the op (repeatable; with --op: a project registers its own files).",
)  # fmt: skip
@click.option(
    "--backend",
    type=click.Choice(BACKEND_CHOICES),
    default="auto",
    show_default=True,
    help="auto: npugraph_ex on an NPU; off the NPU npugraph_ex's own compiler emulated (torch-npu wheel from the "
    "package index or OPKIT_TORCH_NPU), else aot_eager.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="github: workflow-command annotations (::error) for CI, one per problem.",
)
@click.option("--show-graph", is_flag=True, help="Print the captured graph (after functionalization when visible).")
@click.option("--dynamic", is_flag=True, help="Compile with dynamic=True and sweep shapes: reports npugraph_ex's recaptures.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Stop a check that runs longer (a Meta, kernel or example that never returns) and report it as failed. "
    "Default: OPKIT_VERIFY_TIMEOUT, else 120.",
)
def verify_command(project_dir, op_name, from_file, meta_files, example, save, load_files, backend, fmt, show_graph, dynamic, timeout) -> None:
    """Prove the op enters ONE torch.compile graph with ZERO breaks (fullgraph=True, dynamic=False).

    On an NPU with torch_npu the backend is npugraph_ex. Elsewhere npugraph_ex's own compiler from the
    torch-npu wheel runs on CPU behind a stand-in NPU runtime (capture and replay emulated), with
    torch_npu's registration emulated for a project; without a wheel, aot_eager (Dynamo and AOTAutograd).

    The check runs in a child process: user code that exits, hangs past --timeout or crashes the
    interpreter is a failed stage, never a silent exit.

    Exit status: 0 one graph and no breaks, 1 any failed check, 2 usage error or unreadable project.
    """
    if meta_files and not from_file:
        raise click.UsageError("--meta goes with --from FILE (use --load for an op registered in Python)")
    if from_file and project_dir:
        raise click.UsageError("give PROJECT_DIR or --from FILE (one of them)")
    if not from_file and bool(project_dir) == bool(op_name):
        raise click.UsageError("give PROJECT_DIR or --op NS::NAME (one of them)")
    if project_dir and load_files:
        raise click.UsageError("--load is for --op: a project registers its own schema, Meta and kernel files")
    if save and not (project_dir and example):
        raise click.UsageError("--save records --example in a project: give PROJECT_DIR and --example")
    from opkit.verify.project import ProjectError

    try:
        if project_dir:
            report = _check_project(project_dir, example, backend=backend, dynamic=dynamic, timeout=timeout)
        elif from_file:
            report = _check_from_cpp(from_file, op_name, meta_files, load_files, example, backend=backend, dynamic=dynamic, timeout=timeout)
        else:
            report = _check_op(op_name, load_files, example, backend=backend, dynamic=dynamic, timeout=timeout)
    except (ProjectError, ValueError) as exc:
        click.echo(f"opkit verify: {exc}", err=True)
        sys.exit(2)
    if fmt == "json":
        click.echo(report.to_json())
    elif fmt == "github":
        click.echo(format_github(report, file=project_dir or None))
    else:
        click.echo(format_report(report, show_graph=show_graph, color=wants_color()))
    if save:
        _save_example(project_dir, example, report.ok, quiet=fmt != "text")
    sys.exit(0 if report.ok else 1)


def _save_example(project_dir: str, example: str, passed: bool, *, quiet: bool) -> None:
    """--save: the example goes into opkit.json only when the op entered the graph with it."""
    from opkit.generate.project import TargetError, record_examples

    if not passed:
        click.echo(f"opkit verify: --example not saved: the check failed with it", err=True)
        return
    try:
        path = record_examples(project_dir, (example,))
    except TargetError as exc:
        click.echo(f"opkit verify: --example not saved: {exc}", err=True)
        sys.exit(2)
    if not quiet:
        click.echo(f"saved the example in {path}: verify and tests/ use it from now on")


@click.command("doctor")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def doctor_command(fmt: str) -> None:
    """torch, torch_npu, CANN and msopgen versions and paths, NPU and SoC, and the known traps.

    Always exits 0 unless a check is a hard failure (exit 1); it never crashes.
    """
    from opkit.verify.doctor import diagnose_environment

    report = diagnose_environment()
    click.echo(json.dumps(report.to_dict(), indent=2) if fmt == "json" else str(report))
    sys.exit(0 if report.ok else 1)
