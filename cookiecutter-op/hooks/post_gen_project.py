"""Drop what the chosen style does not use; `opkit new` calls the same function itself (opkit.generate.project)."""

from pathlib import Path

from opkit.generate.project import prune_unused

prune_unused(Path.cwd())
