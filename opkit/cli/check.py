"""`opkit check [PROJECT]`: compile the project's op_host sources against CANN's host headers, or its csrc/ launchers
against torch's and torch_npu's. Never imports torch."""

from __future__ import annotations

import sys

import click


@click.command("check")
@click.argument("project", default=".", type=click.Path(file_okay=False))
@click.option("--cann", metavar="PATH", type=click.Path(file_okay=False), help="CANN installation or include directory (default: $ASCEND_HOME_PATH, then the standard locations).")
@click.option("--host-only", is_flag=True, help="Skip the kernel code: op_kernel sources are not compiled, and of a csrc/*.asc only the launcher and registrations are (its __aicore__ function bodies left out), for a kernel that uses Ascend C API the stand-in does not declare.")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True, help="Exit 1 on errors only, or on warnings too.")
def check_command(project, cann, host_only, fail_on) -> None:
    """Compile each op_host/*.cpp with the system C++ compiler (-std=c++17 -fsyntax-only -Wall -Wextra)
    against CANN's host headers, and each op_kernel/*.cpp against opkit's stand-in kernel_operator.h
    (the skeleton's shape only). An extension-style project's csrc/*.asc (kernel, <<<>>> launcher and
    TORCH_LIBRARY registrations) is compiled the same way against torch's and torch_npu's headers (an
    installed torch_npu's, else the torch-npu wheel's), no CANN needed. Reports errors and warnings in the
    project's files. Without CANN, the kernel skeleton and launchers are still checked and the report says
    the op_host sources were skipped, and why.

    Exit status: 0 clean, 1 errors (or warnings with --fail-on warning), 2 no project or compiler, or no
    CANN host headers where only op_host is left to check (--host-only, or a --cann PATH without them).
    """
    from opkit.check import CheckError, check_project

    try:
        report = check_project(project, cann=cann, host_only=host_only)
    except CheckError as exc:
        click.echo(f"opkit check: {exc}", err=True)
        sys.exit(2)
    click.echo(str(report))
    sys.exit(report.exit_code(fail_on))
