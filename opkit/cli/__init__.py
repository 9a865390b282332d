"""The `opkit` command: parses options and calls the library; nothing else lives here.

Subcommands are imported on first use, so `opkit lint` and `opkit new` never pay for (or import)
torch, which only `opkit verify` and `opkit doctor` need.
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from opkit import __version__

# name → "module:attribute" of the click command
COMMANDS = {
    "lint": "opkit.cli.lint:lint_command",
    "rules": "opkit.cli.lint:rules_command",
    "rule": "opkit.cli.lint:rule_command",
    "new": "opkit.cli.new:new_command",
    "check": "opkit.cli.check:check_command",
    "yaml": "opkit.cli.yaml:yaml_group",
    "verify": "opkit.cli.verify:verify_command",
    "doctor": "opkit.cli.verify:doctor_command",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _available(name))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                return None
            raise


    def invoke(self, ctx: click.Context):
        # click turns Ctrl-C into "Aborted!" and exit 1, which opkit documents as "verify failed";
        # an interrupted command exits 130 (128 + SIGINT), as shells report it.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("opkit: interrupted", err=True)
            ctx.exit(130)


def _available(name: str) -> bool:
    return importlib.util.find_spec(COMMANDS[name].split(":")[0]) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="opkit")
def main() -> None:
    """Onboard a custom PyTorch operator onto Ascend NPUs: generate, lint, verify graph entry."""

