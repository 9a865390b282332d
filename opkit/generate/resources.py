"""Where the cookiecutter template and the JSON Schemas live: a repo checkout or an installed package.

In a checkout (and an editable install) they sit beside the ``opkit`` package, at the repository
root, so ``cookiecutter cookiecutter-op/`` works there too. A wheel ships them inside the package as
``opkit/_data/`` (see pyproject.toml); that copy is looked up first.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
_CANDIDATE_ROOTS = (_PACKAGE / "_data", _PACKAGE.parent)


def _find(name: str) -> Path:
    for root in _CANDIDATE_ROOTS:
        path = root / name
        if path.is_dir():
            return path
    raise FileNotFoundError(f"opkit's {name}/ is missing (looked in {', '.join(str(r) for r in _CANDIDATE_ROOTS)}); reinstall opkit")


def template_dir() -> Path:
    """The ``cookiecutter-op/`` template directory."""
    return _find("cookiecutter-op")


def schemas_dir() -> Path:
    """The ``schemas/`` directory of JSON Schemas."""
    return _find("schemas")
