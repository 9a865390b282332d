"""YAML reading shared by the linter and `opkit yaml add`: PyYAML's fast C loader, made safe.

libyaml's composer recurses in C: a document nested some 30,000 levels deep crashes the process
(a segmentation fault, not an exception). Every document is therefore measured first with a cheap
upper bound on its nesting, and refused above ``MAX_NESTING`` levels; op_plugin_functions.yaml
nests four.

Aliases are the other way a small text becomes a huge value ("billion laughs": nine levels of ten
aliases each make 10**9 nodes for whoever walks the tree). A document with anchors is therefore
scanned as a stream of parser events (flat, nothing built) and refused when it holds more than
``MAX_ALIASES`` aliases or expands to more than ``MAX_EXPANDED_NODES`` nodes; the real
op_plugin_functions.yaml has no anchors at all. ``compose`` scans only documents that turn out to
have aliases: libyaml composes an alias as the anchored node itself (nothing is copied, so
composing is safe), and a node reached twice is what gives one away. A text test cannot tell: the
real file has ``&&`` and ``*>`` in its quoted C++ snippets, and scanning it costs a quarter of a load.
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
MAX_ALIASES = 10_000
MAX_EXPANDED_NODES = 1_000_000

_FLOW = re.compile(r"[\[\]{}]")


class TooLarge(ValueError):
    """The document is beyond what opkit reads; the message says how."""


class TooDeep(TooLarge):
    """The document nests deeper than opkit reads."""


class TooManyAliases(TooLarge):
    """The document's aliases are too many, or expand to too many nodes."""


_ANCHOR = re.compile(r"&[^\s,\[\]{}]")


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


def expanded_size(text: str) -> tuple[int, int]:
    """(aliases, nodes with every alias expanded) of the document, counted from parser events.

    Stops with TooManyAliases as soon as either passes its limit, so a billion-laughs document is
    refused after reading its few lines, not after expanding them.
    """
    weights: dict[str, int] = {}  # anchor -> expanded size of the node it names
    open_collections: list[list] = []  # [anchor, size so far]
    aliases = total = 0
    for event in yaml.parse(text, Loader=FAST_LOADER):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise TooManyAliases(f"more than {MAX_ALIASES} aliases")
            size = weights.get(event.anchor, 1)
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            if event.anchor is not None:
                weights[event.anchor] = size
        elif isinstance(event, yaml.CollectionStartEvent):
            open_collections.append([event.anchor, 1])
            continue
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, size = open_collections.pop()
            if anchor is not None:
                weights[anchor] = size
        else:
            continue
        if open_collections:
            open_collections[-1][1] += size
            size = open_collections[-1][1]
        else:
            total += size
            size = total
        if size > MAX_EXPANDED_NODES:
            raise TooManyAliases(f"aliases expand to more than {MAX_EXPANDED_NODES:,} nodes")
    return aliases, total


def _check(text: str) -> None:
    _check_nesting(text)
    if "&" in text and "*" in text:  # no anchor, no alias: nothing to expand
        expanded_size(text)


def _shares_nodes(nodes: list[yaml.Node]) -> bool:
    """Whether some node of the composed documents is reached twice: an alias (or a cycle of them)."""
    seen: set[int] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
    return False


def _check_nesting(text: str) -> None:
    if nesting_bound(text) > MAX_NESTING:
        raise TooDeep(f"nested more than {MAX_NESTING} levels deep")


def _may_alias(text: str) -> bool:
    """Whether the text may hold an anchor (``&name``), without which no alias composes."""
    return _ANCHOR.search(text) is not None


def compose_all(text: str) -> list[yaml.Node]:
    _check_nesting(text)
    nodes = list(yaml.compose_all(text, Loader=FAST_LOADER))
    if _may_alias(text) and _shares_nodes(nodes):
        expanded_size(text)
    return nodes


def compose(text: str) -> yaml.Node | None:
    _check_nesting(text)
    node = yaml.compose(text, Loader=FAST_LOADER)
    if node is not None and _may_alias(text) and _shares_nodes([node]):
        expanded_size(text)
    return node


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
