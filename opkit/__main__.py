"""``python -m opkit``: the same as the ``opkit`` command."""

import os
import sys

# `python -m` puts the working directory first on sys.path: opkit's later (lazy) imports must not find a ./json.py there
if sys.path and sys.path[0] in ("", os.getcwd()) and not sys.flags.safe_path:
    del sys.path[0]

from opkit.cli import main  # noqa: E402

main(prog_name="opkit")
