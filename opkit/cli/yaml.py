"""`opkit yaml add FILE` / `opkit yaml remove FILE OP`: edit a real op_plugin_functions.yaml, one entry at a time."""

from __future__ import annotations

import sys

import click


@click.group("yaml")
def yaml_group() -> None:
    """Edit op_plugin_functions.yaml files."""


@yaml_group.command("add")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--entry", "fragment", default=".", show_default=True, type=click.Path(), help="A generated project directory, or its op_plugin/op_plugin_functions.yaml fragment.")
@click.option("--check", is_flag=True, help="Only report whether the entry would be added or updated; write nothing.")
def add_command(file: str, fragment: str, check: bool) -> None:
    """Add the project's `custom:` entry to FILE; every other byte of FILE stays as it is.

    An entry of the same name and overload that an earlier generation of the project wrote (the
    project's .opkit/earlier_entries.json, kept by `opkit new --force`) is updated in place, and the
    changed lines are printed as a diff. Exit status: 0 added, updated (or already present), 1 with
    --check when it would be added or updated, 2 on a conflicting duplicate func or unreadable input.
    """
    from opkit.generate.yaml_edit import YamlEditError, add_entry, earlier_entries, load_fragment

    try:
        edit = add_entry(file, load_fragment(fragment), write=not check, earlier=earlier_entries(fragment))
    except YamlEditError as exc:
        click.echo(f"opkit yaml add: {exc}", err=True)
        sys.exit(2)
    if edit.status == "present":
        click.echo(f"{file}:{edit.line}: {edit.func} is already present; nothing to do")
        return
    if edit.status == "updated":
        click.echo(f"{file}:{edit.line}: {'would update' if check else 'updated'} the entry an earlier generation wrote to {edit.func}:")
        for line in edit.diff:
            click.echo(line)
    else:
        click.echo(f"{file}:{edit.line}: {'would add' if check else 'added'} {edit.func} to custom:")
    for warning in edit.clashes:
        click.echo(f"warning: {warning}")
    if check:
        sys.exit(1)


@yaml_group.command("remove")
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("op")
@click.option("--check", is_flag=True, help="Only report whether the entry would be removed; write nothing.")
def remove_command(file: str, op: str, check: bool) -> None:
    """Take the `custom:` entry of OP (NAME or NAME.OVERLOAD, as its func writes it) out of FILE, with the
    blank lines above it; every other byte stays. The removed lines are printed as a diff.

    Exit status: 0 removed, 1 with --check when it would be removed, 2 no such entry (or one outside
    `custom:`) or unreadable input.
    """
    from opkit.generate.yaml_edit import YamlEditError, remove_entry

    try:
        edit = remove_entry(file, op, write=not check)
    except YamlEditError as exc:
        click.echo(f"opkit yaml remove: {exc}", err=True)
        sys.exit(2)
    click.echo(f"{file}:{edit.line}: {'would remove' if check else 'removed'} {edit.func}:")
    for line in edit.diff:
        click.echo(line)
    if check:
        sys.exit(1)
