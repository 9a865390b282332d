"""``python -m opkit``: the same as the ``opkit`` command."""

from opkit.cli import main

main(prog_name="opkit")
