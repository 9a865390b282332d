"""Project settings for `opkit lint`, read from ``[tool.opkit.lint]`` in the nearest pyproject.toml.

As ruff does: the first pyproject.toml found walking up from the working directory that has a
``[tool.opkit.lint]`` table. Command-line options override it. Keys::

    [tool.opkit.lint]
    select = ["S", "Y", "M"]     # codes or prefixes
    ignore = ["S203"]
    fail-on = "warning"          # info | warning | error
    dialect = "op-plugin"        # for --schema strings: op-plugin | torch.library
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from opkit.signature import Dialect

SEVERITIES = ("info", "warning", "error")
KEYS = ("select", "ignore", "fail-on", "dialect")


class ConfigError(ValueError):
    """A broken settings table: the message names the file and the key."""


@dataclass(frozen=True)
class LintConfig:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str | None = None
    dialect: str | None = None
    path: Path | None = None  # where the settings came from, None for built-in defaults


def _codes(value: object, key: str, path: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.opkit.lint] {key} must be a list of codes or prefixes")
    return tuple(c.strip() for v in value for c in v.split(",") if c.strip())


def _choice(value: object, key: str, path: Path, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ConfigError(f"{path}: [tool.opkit.lint] {key} must be one of {', '.join(choices)}, not {value!r}")
    return value  # type: ignore[return-value]


def load_config(start: Path | None = None) -> LintConfig:
    """Settings from the nearest pyproject.toml with ``[tool.opkit.lint]``, or the defaults."""
    from opkit.formats.files import InputError, read_text

    if sys.version_info >= (3, 11):  # imported here: most directories have no pyproject.toml
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        path = folder / "pyproject.toml"
        if not path.is_file():
            continue
        try:
            document = tomllib.loads(read_text(str(path)))
        except InputError as exc:
            raise ConfigError(f"{path}: cannot read settings: {exc.message}") from None
        except (tomllib.TOMLDecodeError, RecursionError) as exc:
            raise ConfigError(f"{path}: cannot read settings: {exc or 'nested too deeply'}") from None
        table: object = document
        for depth, key in enumerate(("tool", "opkit", "lint")):
            table = table.get(key)
            if table is not None and depth < 2 and not isinstance(table, dict):
                raise ConfigError(f"{path}: [{'.'.join(('tool', 'opkit')[: depth + 1])}] must be a table, not {type(table).__name__} {table!r:.60}")
            if table is None:
                break
        if table is None:
            continue
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.opkit.lint] must be a table")
        unknown = sorted(set(table) - set(KEYS))
        if unknown:
            raise ConfigError(f"{path}: unknown key(s) in [tool.opkit.lint]: {', '.join(unknown)} (known: {', '.join(KEYS)})")
        return LintConfig(
            select=_codes(table.get("select", []), "select", path),
            ignore=_codes(table.get("ignore", []), "ignore", path),
            fail_on=_choice(table["fail-on"], "fail-on", path, SEVERITIES) if "fail-on" in table else None,
            dialect=_choice(table["dialect"], "dialect", path, tuple(d.value for d in Dialect)) if "dialect" in table else None,
            path=path,
        )
    return LintConfig()
