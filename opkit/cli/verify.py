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


def _load_files(paths: tuple[str, ...], registrations=None) -> list[str]:
    """Import user files that register ops (schema, Meta, kernels) before --op is looked up; the notes
    say where a file's op took the place of npugraph_ex's own of the same name. With ``registrations``,
    what they register is undone with them (a run over many ops loads them for each)."""
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
        if registrations is not None:
            registrations.modules.append(spec.name)
        with user_definitions_first(path, source) as shadowed:
            exec(code, module.__dict__)  # the user's own file, as `python FILE` would run it
        notes += shadowed
        if registrations is not None:
            registrations.adopt_module_globals(module)
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


def _example_args(expression: str | None, op, schema: str | None = None) -> tuple[tuple, dict]:
    """``--example``'s arguments, else the sample call of ``schema`` (as written: torch prints ``Tensor!`` back as
    ``Tensor($0! -> )``), else of the op's schema."""
    if expression is None:
        from opkit.signature import Dialect, parse_schema
        from opkit.verify.project import sample_arguments

        return sample_arguments(parse_schema(schema or str(op._schema), Dialect.TORCH_LIBRARY))
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


def _from_cpp_work(ops, definition, load_files: tuple[str, ...], example: str | None, *, backend: str, dynamic: bool):
    """The check of one op of ``ops`` (``from_cpp.read_cpp_ops``), run in the check's process: define it (and the
    file's other ops), load its Meta, build its arguments and check it; every registration undone after."""
    from opkit.verify.check import check_graph_entry
    from opkit.verify.from_cpp import MetaImportError, defined_from_cpp
    from opkit.verify.project import _Registrations
    from opkit.verify.report import GraphEntryReport

    def check():
        regs = _Registrations()
        try:
            loaded = _load_files(load_files, regs)
            with defined_from_cpp(ops, definition) as (op, notes):
                args, kwargs = _example_args(example, op, ops.schema(definition))
                return check_graph_entry(op, args, kwargs, backend=backend, dynamic=dynamic, real_kernel=False, notes=[*loaded, *notes], isolate=False)
        except MetaImportError as exc:
            from opkit.verify.backends import resolve_backend

            chosen = resolve_backend(backend)
            return GraphEntryReport.failed_before_capture(ops.qualname(definition), chosen.name, chosen.device, (exc.problem,), emulated=chosen.emulated)
        finally:
            regs.undo()

    return check


def _check_from_cpp(ops, load_files: tuple[str, ...], example: str | None, *, backend: str, dynamic: bool, timeout: float | None):
    """Compile the op's C++ Meta here (no user code runs for it), then define the op from its C++ text as torch
    would, load its Meta and check it, in the check's process."""
    from opkit.verify.from_cpp import compile_cpp_metas

    compile_cpp_metas(ops)
    check = _from_cpp_work(ops, ops.checked[0], load_files, example, backend=backend, dynamic=dynamic)
    return _in_check_process(check, ops.qualname(ops.checked[0]), backend, timeout)


def _many_checks(ops, load_files, projects, *, backend: str, dynamic: bool, fmt: str):
    """(checks, the file each report is about) for every op of ``ops`` (``from_file.read_cpp_ops``), or every project
    of ``projects``."""
    from opkit.verify import isolation
    from opkit.verify.backends import resolve_backend
    from opkit.verify.worker import Check

    chosen = resolve_backend(backend)

    def header(target: str):
        return isolation.ReportHeader(target, chosen.name, chosen.device, chosen.emulated)

    if ops is not None:
        from opkit.verify.from_cpp import compile_cpp_metas

        compile_cpp_metas(ops)  # one build for all the ops, here: no user code runs for it
        if ops.compiled_summary() and fmt == "text":
            click.echo(ops.compiled_summary(), err=True)
        checks = [Check(header(ops.qualname(d)), _from_cpp_work(ops, d, load_files, None, backend=backend, dynamic=dynamic)) for d in ops.checked]
        return checks, [ops.path] * len(checks)
    from opkit.verify.project import ProjectError, _verify_loaded, load_project

    def project_work(root):
        def check():
            project = load_project(root)
            return _verify_loaded(project, chosen, backend=backend, example=None, keep_registered=False, dynamic=dynamic)

        return check

    def target(root) -> str:
        try:
            return load_project(root).qualname  # reads the project's files; its code runs in the check
        except ProjectError:
            return str(root)

    return [Check(header(target(root)), project_work(root)) for root in projects], [str(root) for root in projects]


def _verify_many(ops, load_files, projects, *, backend, dynamic, timeout, fmt, color) -> bool:
    """Every op of ``ops`` or every project, one verdict line each as it comes and a summary; True if all pass."""
    import time

    from opkit.verify.project import ProjectError
    from opkit.verify.summary import format_github_run, format_json, format_junit, summary_line, verdict_line
    from opkit.verify.worker import run_checks

    started = time.perf_counter()
    checks, files = _many_checks(ops, load_files, projects, backend=backend, dynamic=dynamic, fmt=fmt)
    if fmt == "text":
        click.echo(f"checking {len(checks)} op(s), one process for all of them (each check stopped after its timeout)", err=True)
    from opkit.verify import isolation

    reports = []
    refusals = (ValueError, ProjectError, click.UsageError)
    for report in run_checks(checks, timeout=timeout, refusals=refusals, isolate=isolation.wanted(None, timeout=timeout, default=True)):
        reports.append(report)
        if fmt == "text":
            click.echo(verdict_line(report, color=color, where=files[len(reports) - 1] if projects else None))
    wall = time.perf_counter() - started
    if fmt == "text":
        click.echo(summary_line(reports, wall))
    elif fmt == "json":
        click.echo(format_json(reports, wall))
    elif fmt == "junit":
        click.echo(format_junit(reports, wall))
    else:
        click.echo(format_github_run(reports, wall, files))
    return all(r.ok for r in reports)


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
@click.argument("paths", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("--op", "op_name", metavar="NS::NAME", help="Check a registered op instead of a project (with --from: the op's NAME in that file; without it every op of the file).")
@click.option(
    "--from", "from_file", type=click.Path(exists=True, dir_okay=False),
    help="A C++ file defining ops (TORCH_LIBRARY m.def): each schema is defined from it, as torch would; C++ Metas "
    "(TORCH_LIBRARY_IMPL(ns, Meta, m)) in the C++ files beside it are compiled on the CPU and used.",
)  # fmt: skip
@click.option(
    "--meta", "meta_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
    help="With --from: a file registering Metas: Python (register_fake, Library IMPL Meta; then the files beside are "
    "not searched) or C++ (TORCH_LIBRARY_IMPL(ns, Meta, m), compiled on the CPU). Repeatable.",
)  # fmt: skip
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
    type=click.Choice(["text", "json", "github", "junit"]),
    default="text",
    show_default=True,
    help="github: workflow-command annotations (::error) for CI, one per problem; junit: JUnit XML, one testcase per op.",
)
@click.option("--show-graph", is_flag=True, help="Print the captured graph (after functionalization when visible).")
@click.option("--dynamic", is_flag=True, help="Compile with dynamic=True and sweep shapes: reports npugraph_ex's recaptures.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Stop a check that runs longer (a Meta, kernel or example that never returns) and report it as failed; "
    "over many ops, per op. Default: OPKIT_VERIFY_TIMEOUT, else 120.",
)
def verify_command(paths, op_name, from_file, meta_files, example, save, load_files, backend, fmt, show_graph, dynamic, timeout) -> None:
    """Prove the op enters ONE torch.compile graph with ZERO breaks (fullgraph=True, dynamic=False).

    On an NPU with torch_npu the backend is npugraph_ex. Elsewhere npugraph_ex's own compiler from the
    torch-npu wheel runs on CPU behind a stand-in NPU runtime (capture and replay emulated), with
    torch_npu's registration emulated for a project; without a wheel, aot_eager (Dynamo and AOTAutograd).

    The check runs in a child process: user code that exits, hangs past --timeout or crashes the
    interpreter is a failed stage, never a silent exit.

    Many ops, one run: `--from FILE.cpp` without --op checks every op the file defines, and `opkit verify DIR...`
    over directories that are not one project checks every opkit project under them: one verdict line per op and
    a summary (torch and the torch-npu wheel loaded once; one op's crash, exit or hang fails that op only).

    Exit status: 0 one graph and no breaks (every op), 1 any failed check, 2 usage error or unreadable project.
    """
    if meta_files and not from_file:
        raise click.UsageError("--meta goes with --from FILE (use --load for an op registered in Python)")
    if from_file and paths:
        raise click.UsageError("give PROJECT_DIR or --from FILE (one of them)")
    if not from_file and bool(paths) == bool(op_name):
        raise click.UsageError("give PROJECT_DIR or --op NS::NAME (one of them)")
    if paths and load_files:
        raise click.UsageError("--load is for --op: a project registers its own schema, Meta and kernel files")
    if save and not (paths and len(paths) == 1 and example):
        raise click.UsageError("--save records --example in a project: give PROJECT_DIR and --example")
    from opkit.verify.project import ProjectError, find_projects, is_project

    try:
        ops = None
        if from_file:
            from opkit.verify.from_cpp import read_cpp_ops

            ops = read_cpp_ops(from_file, op_name, meta_files)  # reads the C++ files; compiles nothing yet
        many = bool(ops is not None and len(ops.checked) > 1) or bool(paths and (len(paths) > 1 or not is_project(paths[0])))
        if many:
            if example is not None:
                raise click.UsageError("--example is for one op: add --op NAME (or give one project)")
            projects = find_projects(paths) if paths else []
            ok = _verify_many(ops, load_files, projects, backend=backend, dynamic=dynamic, timeout=timeout, fmt=fmt, color=wants_color())
            sys.exit(0 if ok else 1)
        project_dir = paths[0] if paths else None
        if project_dir:
            report = _check_project(project_dir, example, backend=backend, dynamic=dynamic, timeout=timeout)
        elif ops is not None:
            report = _check_from_cpp(ops, load_files, example, backend=backend, dynamic=dynamic, timeout=timeout)
        else:
            report = _check_op(op_name, load_files, example, backend=backend, dynamic=dynamic, timeout=timeout)
    except (ProjectError, ValueError) as exc:
        click.echo(f"opkit verify: {exc}", err=True)
        sys.exit(2)
    if fmt == "json":
        click.echo(report.to_json())
    elif fmt == "github":
        click.echo(format_github(report, file=project_dir or None))
    elif fmt == "junit":
        from opkit.verify.summary import format_junit

        click.echo(format_junit([report], report.timings.total_s or 0.0))
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
