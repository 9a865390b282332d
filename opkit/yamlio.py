"""YAML reading shared by the linter and `opkit yaml add`: PyYAML's fast C loader, made safe.

libyaml's composer recurses in C: a document nested some 30,000 levels deep crashes the process
(a segmentation fault, not an exception). Every document is therefore measured first with a cheap
upper bound on its nesting, and refused above ``MAX_NESTING`` levels; op_plugin_functions.yaml
nests four.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

try:  # the C loader is ~10x faster; fall back when PyYAML was built without libyaml
    FAST_LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    FAST_LOADER = yaml.SafeLoader

MAX_NESTING = 500

_FLOW = re.compile(r"[\[\]{}]")


class TooDeep(ValueError):
    """The document nests deeper than opkit reads."""


def nesting_bound(text: str) -> int:
    """An upper bound on the document's nesting: flow brackets, plus the longest run of block indentation.

    Brackets inside quoted strings are counted too: that can only overestimate.
    """
    depth = flow = 0
    for m in _FLOW.finditer(text):
        if m.group() in "[{":
            depth += 1
            flow = max(flow, depth)
        elif depth:
            depth -= 1
    block = max((len(line) - len(line.lstrip(" \t?:-")) for line in text.split("\n")), default=0)
    return flow + block


def _check(text: str) -> None:
    if nesting_bound(text) > MAX_NESTING:
        raise TooDeep(f"nested more than {MAX_NESTING} levels deep")


def compose_all(text: str) -> list[yaml.Node]:
    _check(text)
    return list(yaml.compose_all(text, Loader=FAST_LOADER))


def compose(text: str) -> yaml.Node | None:
    _check(text)
    return yaml.compose(text, Loader=FAST_LOADER)


def load(text: str) -> Any:
    _check(text)
    return yaml.load(text, Loader=FAST_LOADER)


def error_position(exc: yaml.YAMLError) -> tuple[int, int, str]:
    """(line, column, problem) of a PyYAML error, 1-based, on one line; (1, 1, message) without a mark."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is not None:
            return mark.line + 1, mark.column + 1, problem
        return 1, 1, problem
    return 1, 1, " ".join(str(exc).split())


def describe_error(path: object, exc: yaml.YAMLError) -> str:
    """``path:line:col: not valid YAML: problem``: one line, as every opkit message about a file."""
    line, column, problem = error_position(exc)
    return f"{path}:{line}:{column}: not valid YAML: {problem}"
