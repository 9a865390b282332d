"""`opkit new NAME`: generate every artifact of a custom Ascend op from one signature. Never imports torch."""

from __future__ import annotations

import sys

import click

from opkit import msopgen


def _fail(message: str) -> None:
    click.echo(f"opkit new: {message}", err=True)
    sys.exit(2)


@click.command("new")
@click.argument("name", required=False)
@click.option("--from", "source", metavar="PATH", help="Adopt an existing op: an msOpGen prototype JSON, an op_host C++ file with an OpDef, a C++ file defining it in a TORCH_LIBRARY block (.cpp, .asc), an op_plugin_functions.yaml (with --op NAME[.OVERLOAD]), or an opkit project (its directory or opkit.json).")
@click.option("--op", "source_op", metavar="OPTYPE|NAME", help="With --from: the op to adopt (an OpType in a JSON or OpDef file; a schema name, NAME[.OVERLOAD] or NS::NAME, in a TORCH_LIBRARY file or a yaml).")
@click.option("--inplace", is_flag=True, help="Default signature writes its first input (Tensor(a!) x).")
@click.option("--schema", metavar="SIG", help="The op's schema; default: one from NAME and --inplace.")
@click.option("--style", type=click.Choice(["op-plugin", "custom-op", "library", "extension"]), default=None, help="op-plugin yaml + Library Meta; torch.library.custom_op + register_fake; library: Library define + PrivateUse1 impl + Meta impl (any torch.library schema); or extension: an Ascend C kernel launched with <<<>>> from C++ registered by TORCH_LIBRARY, built by bisheng (setup.py). Default: op-plugin, custom-op for a name ending in '_'.")
@click.option("--namespace", metavar="NS", help="torch.ops namespace (op-plugin: npu; otherwise default: mylib).")
@click.option("--dtypes", default=",".join(msopgen.DEFAULT_DTYPES), show_default=True, help="msOpGen dtype columns, comma-separated; per descriptor: 'x=float16,float;indices=int32,int32'.")
@click.option("--formats", default=",".join(msopgen.DEFAULT_FORMATS), show_default=True, help="msOpGen formats, comma-separated.")
@click.option("--soc", default="ascend910b1", show_default=True, help="SoC versions, comma-separated (all go to msOpGen's -c).")
@click.option("--out-like", metavar="ARG", help="Input Tensor (or Tensor[]) whose size and dtype outputs copy (default: first unwritten Tensor).")
@click.option("--output", "outputs", multiple=True, metavar="NAME=RULE", help="Size/dtype rule of one output (repeatable): like:ARG, size:[ARG.N, ARG, 8] (input dims, int args, literals), size:ARG (an int[] argument), dtype:DTYPE; e.g. rstd=size:[x.0, 1],dtype:float32.")
@click.option("--op-type", metavar="OpType", help="msOpGen OpType (default: UpperCamelCase of NAME without npu_, e.g. npu_swiglu -> Swiglu; --op-type SwiGlu).")
@click.option("--vendor", metavar="NAME", help="Vendor name of the op package (default: NAME).")
@click.option("--example", "examples", multiple=True, metavar="EXPR", help="An example call (repeatable), kept in opkit.json: Python arguments with torch in scope, e.g. \"torch.randn(2, 8, 64), torch.randn(2, 2, 64)\". verify and the generated test call the op with them instead of the schema's sample inputs.")
@click.option("--msopgen", "msopgen_mode", default="auto", show_default=True, metavar="auto|builtin|PATH", help="Run a real msOpGen (auto: if found) or write the built-in project tree.")
@click.option("-o", "--output-dir", "out_dir", type=click.Path(file_okay=False), help="Project directory to create (default: ./NAME).")
@click.option("--force", is_flag=True, help="Update an existing opkit project from its opkit.json: options not given keep their recorded values (each change is printed); each generated file is merged three ways (last generation, your file, new generation), so your edits stay; your other files, folders, modes and owners are kept; conflicts are marked, binary files left alone.")
@click.option("--verify/--no-verify", default=True, show_default=True, help="Check graph entry after generating (imports torch).")
def new_command(name, source, source_op, inplace, schema, style, namespace, dtypes, formats, soc, out_like, outputs, op_type, vendor, examples, msopgen_mode, out_dir, force, verify) -> None:
    """Generate the msOpGen JSON, Ascend C project, op-plugin yaml entry, Meta registration, MRE scripts,
    graph-entry test and README for op NAME, all from one signature; or adopt an existing op with
    --from (an msOpGen JSON, an op_host OpDef, a C++ TORCH_LIBRARY def, an op_plugin_functions.yaml entry), listing what the
    source does not state. NAME then defaults to msOpGen's snake name of the OpType (the yaml func's name).

    When CANN's host headers and a C++ compiler are found, the op_host code is compile-checked as
    `opkit check` does. Exit status: 0 written (and verified), 1 written but the compile check or the
    graph-entry check failed or --force left conflicts to resolve, 2 bad input (nothing written), 130
    interrupted: before the project was written, nothing (an update leaves the old project); during the compile
    or graph-entry check, the whole project (the message says so).
    """
    from opkit.generate.msopgen_tool import MsOpGenError
    from opkit.generate.next_steps import next_steps_text
    from opkit.generate.project import ProjectChanged, TargetError, generate_project, recorded_spec
    from opkit.generate.spec import SpecError, make_spec, spec_changes

    options = dict(schema=schema, inplace=inplace, style=style, namespace=namespace, dtypes=dtypes, formats=formats, soc=soc,
                   out_like=out_like, vendor=vendor, op_type=op_type, outputs=list(outputs), examples=list(examples))  # fmt: skip
    context = click.get_current_context()
    given = {k: v for k, v in options.items() if context.get_parameter_source(k) is click.core.ParameterSource.COMMANDLINE}
    if source is None and name is None and not (force and out_dir):
        _fail("give NAME, or --from PATH to adopt an existing op (or -o PROJECT with --force: its opkit.json names the op)")
    if source is None and source_op:
        _fail("--op picks an op of --from PATH; give --from")
    try:
        # the project --force updates: -o, else ./NAME (named by the adopted op when --from gives no NAME)
        recorded = recorded_spec(out_dir or name) if force and (out_dir or name) else None
        if source is not None:
            spec, origin = _adopted_spec(source, source_op, name, options, given)
            if force and not (out_dir or name):
                recorded = recorded_spec(spec.name)
        elif recorded is not None:
            spec, origin = _spec_over(recorded, name, given, where=f"{out_dir or name}/opkit.json"), recorded
        else:
            spec, origin = make_spec(name, **options), None
        name = spec.name
        project = generate_project(spec, out_dir or name, force=force, msopgen_mode=msopgen_mode)
    except ProjectChanged as exc:  # the user's change is kept, the update not applied: exit 1, as for a conflict
        click.echo(f"opkit new: {exc}", err=True)
        sys.exit(1)
    except (SpecError, TargetError, MsOpGenError) as exc:
        _fail(str(exc))
    before = recorded or origin
    changes = spec_changes(before, spec) if before is not None else []
    click.echo(f"created {project.path} ({len(project.files)} files): {spec.schema}")
    if before is not None:
        click.echo(f"opkit.json: {'changed' if changes else 'unchanged'}{' (the options not given are as recorded)' if recorded is not None else ''}")
        for change in changes:
            click.echo(f"  {change}")
    if project.kept:
        click.echo(f"kept {len(project.kept)} of your files: {', '.join(project.kept)}")
    if project.merged:
        click.echo(f"kept your edits in {len(project.merged)} generated file(s), merged with the new generation: {', '.join(project.merged)}")
    if project.msopgen is not None:
        click.echo(f"msOpGen: {' '.join(project.msopgen.command)}")
        if project.msopgen.output:
            click.echo(project.msopgen.output)
    elif spec.style == "extension":
        click.echo(f"kernel and launcher: {project.path / 'csrc' / (spec.name + '.asc')} (built by bisheng through setup.py)")
    else:
        click.echo(f"Ascend C project: built-in msOpGen 26.0.0 tree in {project.path / spec.resolved_op_type} (no msopgen {'requested' if msopgen_mode == 'builtin' else 'found'})")
    from opkit.generate.defaults import index_dtype_warnings, output_rule_notes

    for warning in [*_schema_warnings(spec, project.path), *index_dtype_warnings(spec)]:
        click.echo(f"warning: {warning}")
    for note in output_rule_notes(spec):
        click.echo(f"note: {note}")
    if project.binary:
        click.echo(
            f"left alone: {', '.join(project.binary)}: binary, so not merged; yours is kept as it is, and what opkit "
            "generates now is under the same path in .opkit/generated/: bring its changes in by hand, then run `opkit verify`"
        )
    if project.conflicts:
        click.echo(
            f"conflicts: your edits and the new generation change the same lines in {', '.join(project.conflicts)}; "
            "both are kept between <<<<<<< and >>>>>>> markers: resolve them, then run `opkit verify`"
        )
    if project.conflicts or project.binary:
        sys.exit(1)
    try:
        compiles = _check_host_code(project.path)
        click.echo(f"\nnext steps (also in {project.path / 'README.md'}), from {project.path}:")
        click.echo(next_steps_text(spec))
        verified = _verify(project.path) if verify else True
    except KeyboardInterrupt:
        # the project is whole on disk by now: say so, so that exit 130 is not read as "nothing written"
        click.echo(f"opkit new: interrupted after writing {project.path} (the project is complete); check it with: opkit verify {project.path}", err=True)
        sys.exit(130)
    if not (compiles and verified):
        sys.exit(1)  # the files stay written; the op does not compile or does not enter the graph yet


def _spec_over(recorded, name: str | None, given: dict, *, where: str):
    """The spec made again from a recorded one: the options given on the command line win, the others are its."""
    from opkit.generate.spec import SpecError, make_spec, options_over

    try:
        return make_spec(name or recorded.name, **options_over(recorded, given))
    except SpecError as exc:
        raise SpecError(f"{exc} (the options not given on the command line are {where}'s)") from None


def _adopted_spec(source: str, source_op: str | None, name: str | None, options: dict, given: dict):
    """The spec adopted from ``source``, with the options the user gave on top, and the spec it started
    from when that is an opkit project's own (else None); the adoption's report printed."""
    from opkit.adopt import AdoptError, adopt
    from opkit.generate.spec import is_project_source, load_spec

    if is_project_source(source):
        if source_op:
            _fail(f"--op picks one op of a file that declares several; the opkit project {source} has one")
        own = load_spec(source)
        spec = _spec_over(own, name, given, where=source)
        click.echo(f"adopted {spec.name} from {source} (opkit project): {spec.schema}")
        return spec, own
    given = {k: v for k, v in given.items() if k != "inplace"}
    try:
        adoption = adopt(source, op=source_op, name=name, **given)
    except AdoptError as exc:
        _fail(str(exc))
    src = adoption.source
    click.echo(f"adopted {src.op_type or adoption.spec.name} from {source} ({src.kind}): {adoption.spec.schema}")
    for skipped in adoption.skipped:
        click.echo(f"skipped: {source}:{skipped.line}: {skipped.what}" if skipped.line else f"skipped: {source}: {skipped.what}")
    for note in adoption.notes:
        click.echo(f"not carried over: {note}")
    return adoption.spec, None


def _schema_warnings(spec, path) -> list[str]:
    from opkit.generate.refusals import optional_only_warning
    from opkit.generate.spec import op_type_clashes
    from opkit.lint import Selection, lint

    result = lint(schemas=[spec.schema], dialect=spec.dialect, selection=Selection(select=("S",)))
    optional_only = optional_only_warning(spec.signature)
    return [f"{f.code} {f.message}" for f in result.findings] + ([optional_only] if optional_only else []) + op_type_clashes(spec, beside=path)


def _check_host_code(path) -> bool:
    """`opkit check --host-only` when a compiler and CANN's headers are here; a note when they are not."""
    from opkit.check import ToolchainError, check_project

    try:
        report = check_project(path, kinds=("op_host", "launcher"))
    except ToolchainError as exc:
        click.echo(f"opkit check skipped: {exc}")
        return True
    click.echo(f"opkit check ({', '.join(sorted({s.kind for s in report.sources}))}):")
    click.echo(str(report))
    return report.exit_code() == 0


def _verify(path) -> bool:
    # Importing torch and compiling take seconds: say what is happening first (on stderr, so the
    # verdict stays the only thing on stdout after the file list).
    click.echo(f"verifying {path.name}: importing torch and compiling the op (a few seconds)...", err=True)
    from opkit.cli.verify import wants_color
    from opkit.verify import verify_project
    from opkit.verify.report import format_report

    report = verify_project(path)
    click.echo(format_report(report, color=wants_color()))
    return report.ok
