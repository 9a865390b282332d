"""`opkit yaml add FILE`: insert a generated entry into a real op_plugin_functions.yaml."""

from __future__ import annotations

import sys

import click


@click.group("yaml")
def yaml_group() -> None:
    """Edit op_plugin_functions.yaml files."""


@yaml_group.command("add")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--entry", "fragment", default=".", show_default=True, type=click.Path(), help="A generated project directory, or its op_plugin/op_plugin_functions.yaml fragment.")
@click.option("--check", is_flag=True, help="Only report whether the entry would be added; write nothing.")
def add_command(file: str, fragment: str, check: bool) -> None:
    """Add the project's `custom:` entry to FILE; every other byte of FILE stays as it is.

    Exit status: 0 added (or already present), 1 with --check when it would be added, 2 on a
    conflicting duplicate func or unreadable input.
    """
    from opkit.generate.yaml_edit import YamlEditError, add_entry, load_fragment

    try:
        edit = add_entry(file, load_fragment(fragment), write=not check)
    except YamlEditError as exc:
        click.echo(f"opkit yaml add: {exc}", err=True)
        sys.exit(2)
    if edit.status == "present":
        click.echo(f"{file}:{edit.line}: {edit.func} is already present; nothing to do")
        return
    click.echo(f"{file}:{edit.line}: {'would add' if check else 'added'} {edit.func} to custom:")
    for warning in edit.clashes:
        click.echo(f"warning: {warning}")
    if check:
        sys.exit(1)
