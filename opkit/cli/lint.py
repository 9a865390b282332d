"""`opkit lint`, `opkit rules`, `opkit rule CODE`."""

from __future__ import annotations

import sys

import click

from opkit.lint import LintResult, Selection, Severity, lint, load_rules
from opkit.lint.config import ConfigError, load_config
from opkit.lint.registry import unknown_patterns
from opkit.lint.reporters import FORMATTERS, format_statistics
from opkit.lint.finding import INPUT_ERRORS, INPUT_NOTES
from opkit.signature import Dialect


def _codes(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c.strip() for v in values for c in v.split(",") if c.strip())


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--schema", "schemas", multiple=True, metavar="SIG", help="A schema string to lint (repeatable).")
@click.option(
    "--dialect",
    type=click.Choice([d.value for d in Dialect]),
    default=None,
    help="Parser that --schema strings must satisfy: op-plugin's torchgen (default), or torch.library's C++ parser.",
)
@click.option("--select", multiple=True, metavar="CODES", help="Only these codes or prefixes (comma-separated, repeatable).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these codes or prefixes.")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATTERS)), default="text", show_default=True)
@click.option("--fail-on", type=click.Choice(["info", "warning", "error"]), default=None, help="Lowest severity that makes the exit code 1 (default: error).")
@click.option("--statistics", is_flag=True, help="Print how many findings each code has instead of the findings.")
@click.option("--color/--no-color", default=None, help="Colour text output (default: only on a terminal).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result and parse caches (see OPKIT_CACHE_DIR).")
@click.option("--baseline", "baseline_path", metavar="FILE", type=click.Path(dir_okay=False), help="Report only findings not recorded in FILE (matched by code, op and content, not line).")
@click.option("--write-baseline", is_flag=True, help="Record every current finding in the --baseline FILE and exit 0.")
@click.option("--diff", "diff_rev", metavar="REV", help="Report only findings in entries and functions changed since git revision REV.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain (2 still means unreadable input).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-", help="Write the report here instead of stdout (never one of the inputs).")
def lint_command(paths, schemas, dialect, select, ignore, fmt, fail_on, statistics, color, no_cache, baseline_path, write_baseline, diff_rev, exit_zero, output) -> None:
    """Lint op schemas, op_plugin_functions.yaml, Meta/fake registration files and msOpGen JSON together.

    A directory is walked: each yaml is recognised by its content and linted or skipped with an
    info line (I001); each project directory (one with opkit.json or CMakePresets.json) pairs only
    its own files. Settings may also come from [tool.opkit.lint] in the nearest pyproject.toml
    (select, ignore, fail-on, dialect); options given here override them.

    Exit status: 0 clean, 1 findings at or above --fail-on, 2 usage error or unreadable input.
    """
    if not paths and not schemas:
        raise click.UsageError("nothing to lint: give PATH... or --schema SIG")
    if write_baseline and not baseline_path:
        raise click.UsageError("--write-baseline needs --baseline FILE: where to record the findings")
    _refuse_output_over_input(output, paths, baseline_path)
    try:
        config = load_config()
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    for option, given, configured in (("--select", _codes(select), config.select), ("--ignore", _codes(ignore), config.ignore)):
        where = option if given else f"{config.path}: [tool.opkit.lint] {option[2:]}"
        unknown = unknown_patterns(given or configured)
        if unknown:
            raise click.UsageError(f"{where}: unknown rule code(s) {', '.join(unknown)}; `opkit rules` lists them")
    selection = Selection(_codes(select) or config.select, _codes(ignore) or config.ignore)
    dialect = Dialect(dialect or config.dialect or Dialect.OP_PLUGIN.value)
    result = lint(paths, schemas=schemas, dialect=dialect, selection=selection, use_cache=not no_cache)
    findings = list(result.findings)
    if diff_rev or baseline_path:
        findings = _narrowed(findings, paths, diff_rev, baseline_path, write_baseline, result.has_fatal)
    colour = color if color is not None else (fmt == "text" and output == "-" and sys.stdout.isatty())
    formatter = format_statistics if statistics else FORMATTERS[fmt]
    _write_report(output, formatter(findings, colour=colour, files=result.files, fmt=fmt))
    outcome = LintResult(tuple(findings), result.files)
    if exit_zero and not outcome.has_fatal:
        sys.exit(0)
    sys.exit(outcome.exit_code(Severity.parse(fail_on or config.fail_on or "error")))


def _refuse_output_over_input(output: str, paths, baseline_path) -> None:
    """``-o`` naming a file that is linted (given, or of a kind lint reads under a given directory) or the
    baseline: refused, nothing written. A ``report.txt`` inside a linted directory is fine."""
    import os

    from opkit.lint.discovery import KINDS

    if output == "-" or not os.path.lexists(output):
        return
    real = os.path.realpath(output)
    linted_kind = os.path.splitext(real)[1].lower() in KINDS
    for given in (*paths, *([baseline_path] if baseline_path else [])):
        given_real = os.path.realpath(given)
        if real == given_real or (linted_kind and os.path.isdir(given_real) and real.startswith(given_real.rstrip(os.sep) + os.sep)):
            raise click.UsageError(f"-o {output}: it is one of the inputs ({given}); the report would replace what it reports on; write it elsewhere")


def _write_report(output: str, text: str) -> None:
    """The report to stdout, or into the file ``output`` atomically (a failure leaves its old contents)."""
    if output == "-":
        sys.stdout.write(text)  # not click.echo: it would strip the colour --color asks for
        return
    from opkit.atomic_write import WriteFailed, replace_file

    try:
        replace_file(output, text.encode("utf-8"))
    except WriteFailed as exc:
        raise click.UsageError(str(exc)) from None


def _narrowed(findings: list, paths, diff_rev, baseline_path, write_baseline: bool, has_fatal: bool) -> list:
    """The findings --diff and --baseline leave (--write-baseline records them and exits)."""
    from opkit.lint import baseline, diff  # here, not at the top: most runs use neither

    try:
        if diff_rev:
            findings = diff.touched(findings, diff.changed_lines(paths, diff_rev))
        if write_baseline:
            written = baseline.write(findings, baseline_path)
            click.echo(f"opkit: recorded {written} finding(s) in {baseline_path}", err=True)
            sys.exit(2 if has_fatal else 0)
        if baseline_path:
            findings, suppressed = baseline.filter_new(findings, baseline_path)
            if suppressed:
                click.echo(f"opkit: {suppressed} finding(s) recorded in {baseline_path} not shown", err=True)
    except (diff.DiffError, baseline.BaselineError) as exc:
        raise click.UsageError(str(exc)) from None
    return findings


@click.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt: str) -> None:
    """List every rule: code, severity, name and summary."""
    rows = [(code, "fatal", name, summary) for code, (name, summary) in INPUT_ERRORS.items()]
    rows += [(code, "info", name, summary) for code, (name, summary) in INPUT_NOTES.items()]
    rows += [(r.code, str(r.severity), r.name, _plain(r.summary)) for r in sorted(load_rules().values(), key=lambda r: r.code)]
    if fmt == "json":
        import json

        click.echo(json.dumps([dict(zip(("code", "severity", "name", "summary"), row)) for row in rows], indent=2))
        return
    for code, severity, name, summary in rows:
        click.echo(f"{code:<6} {severity:<8} {name:<32} {summary}")


@click.command("rule")
@click.argument("code")
def rule_command(code: str) -> None:
    """Explain one rule: what it checks, why, and an example that fires it."""
    code = code.upper()
    if code in INPUT_ERRORS:
        name, summary = INPUT_ERRORS[code]
        click.echo(f"{code} ({name}, fatal)\n\n{summary}\nReported for input opkit cannot read; the exit status is 2.")
        return
    if code in INPUT_NOTES:
        name, summary = INPUT_NOTES[code]
        click.echo(f"{code} ({name}, info)\n\n{summary}\nAn info line: it never changes the exit status.")
        return
    r = load_rules().get(code)
    if r is None:
        raise click.UsageError(f"unknown rule {code!r}; `opkit rules` lists them")
    click.echo(f"{r.code} ({r.name}, {r.severity}, {r.scope})\n\n{_plain(r.summary)}\n")
    if r.explanation:
        click.echo(_plain(r.explanation) + "\n")
    click.echo("Example that fires it:\n")
    click.echo("\n".join("    " + line for line in r.example.splitlines()))
    click.echo("\nUse instead:\n")
    click.echo("\n".join("    " + line for line in r.fixed.splitlines()))


def _plain(text: str) -> str:
    """Docstrings mark code with reST double backquotes; a terminal shows the code itself."""
    return text.replace("``", "")
