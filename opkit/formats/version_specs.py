"""Version specs of op_plugin_functions.yaml (``op_api: [v2.1, newest]`` ...), read as op-plugin's codegen reads them.

Parsed once per field, with every problem found on the way (the Y005-Y007/Y010 rules report them),
and expanded to the torch versions in which an entry is built: the schema rules check a ``func``
only against the torchgen of those versions.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opkit.formats.op_plugin_yaml import YNode

# Fields whose value is a version spec.
VERSION_FIELDS = ("op_api", "acl_op", "exposed", "internal_format_opapi", "dvm", "sparse")


# The fields that make gen_op_plugin_functions.py keep an entry for a torch version.
ACTIVE_FIELDS = ("op_api", "acl_op", "sparse")

ALL_VERSION = "all_version"


NEWEST = "newest"

VERSION_NUMBER = re.compile(r"^v(\d+)\.(\d+)$")

@dataclass(frozen=True)
class Problem:
    code: str
    message: str
    line: int
    column: int
    hint: str | None = None


@dataclass(frozen=True)
class VersionItem:
    text: str
    line: int
    column: int


@dataclass(frozen=True)
class VersionSpec:
    """One version-spec value as the codegen reads it: ``all_version``, ``[start, end]``, ``v2.1`` or ``'v2.1, v2.2'``."""

    form: str  # "all", "range", "list" (one version or a comma list) or "invalid"
    items: tuple[VersionItem, ...] = ()  # the versions as written (a range: start, end)
    problems: tuple[Problem, ...] = ()

    def expand(self, universe: tuple[str, ...]) -> frozenset[str]:
        """The versions the spec selects, among ``universe`` (ordered oldest first)."""
        if self.form == "all":
            return frozenset(universe)
        if self.form == "list":
            return frozenset(i.text for i in self.items)
        if self.form == "range":
            start, end = self.items[0].text, self.items[1].text
            if start not in universe:
                return frozenset()
            stop = len(universe) if end == NEWEST else (universe.index(end) + 1 if end in universe else 0)
            return frozenset(universe[universe.index(start) : stop])
        return frozenset()


def version_key(version: str, order: dict[str, int]) -> tuple[int, ...] | None:
    """Ordering of versions: their place in all_version, else the numbers of ``vMAJOR.MINOR``."""
    if version in order:
        return (order[version],)
    m = VERSION_NUMBER.match(version)
    return (int(m.group(1)), int(m.group(2))) if m and not order else None


def read_version_spec(node: YNode, field_name: str, known: dict[str, int] | None) -> VersionSpec:
    """Parse one spec; ``known`` maps all_version's versions to their order (None in a fragment)."""
    order = known or {}
    problems: list[Problem] = []

    def unknown(item: VersionItem, *, allow_newest: bool = False) -> None:
        if known is None or item.text in known or (allow_newest and item.text == NEWEST):
            return
        # A well-formed vX.Y is a version the file does not build (v2.9 beside v2.10), not a misspelling: a spelling
        # match would pick a neighbour by its characters (v2.9 → v2.3). Only a malformed one (v2.1O) gets a suggestion.
        near = [] if VERSION_NUMBER.match(item.text) else difflib.get_close_matches(item.text, list(known), n=1)
        problems.append(
            Problem("Y005", f"{field_name}: version '{item.text}' is not in all_version", item.line, item.column, f"did you mean '{near[0]}'?" if near else "add it to all_version or fix the spelling")
        )

    def malformed(message: str, line: int, column: int, hint: str | None = None) -> VersionSpec:
        problems.append(Problem("Y006", f"{field_name}: {message}", line, column, hint))
        return VersionSpec("invalid", problems=tuple(problems))

    if node.kind == "scalar" and isinstance(node.value, bool):
        code = "Y010" if field_name == "exposed" else "Y006"
        problems.append(
            Problem(code, f"{field_name}: {str(node.value).lower()} is a bool, not a version spec", node.line, node.column, f"write {field_name}: all_version, or a version range such as [v2.6, newest]")
        )
        return VersionSpec("invalid", problems=tuple(problems))
    if node.kind == "scalar" and isinstance(node.value, str):
        text = node.value
        if text == ALL_VERSION:
            return VersionSpec("all")
        if not text.strip():
            return malformed("empty version string", node.line, node.column)
        start_column = node.column + (1 if node.quoted else 0)
        if "," not in text:
            item = VersionItem(text, node.line, start_column)
            unknown(item)
            return VersionSpec("list", (item,), tuple(problems))
        items = []
        offset = 0
        for piece in text.split(","):
            stripped = piece.strip()
            items.append(VersionItem(stripped, node.line, start_column + offset + len(piece) - len(piece.lstrip())))
            offset += len(piece) + 1
        # The codegen splits on ', ' exactly: 'v2.6,v2.7' is one unknown version, so the op vanishes in both.
        if [p for p in text.split(", ")] != [i.text for i in items] or not all(i.text for i in items):
            return malformed(
                f"comma list '{text}' must separate versions with ', ' (comma and one space)",
                node.line,
                start_column,
                "write e.g. 'v2.6, v2.7', or a range [v2.6, v2.7]",
            )
        for item in items:
            unknown(item)
        return VersionSpec("list", tuple(items), tuple(problems))
    if node.kind == "sequence":
        values = node.value
        if len(values) < 2:
            return malformed(f"a version range needs [start, end], found {len(values)} item(s)", node.line, node.column, "write [v2.6, newest]")
        if len(values) > 2:  # reported, then read as the codegen reads it: a range of the first two
            problems.append(
                Problem(
                    "Y006",
                    f"{field_name}: a version range has 2 items, found {len(values)}: the codegen reads only [{', '.join(str(v.value) for v in values[:2])}]",
                    values[2].line,
                    values[2].column,
                    "for a set of versions write a comma list string: 'v2.6, v2.8, v2.9'",
                )
            )
        start_node, end_node = values[0], values[1]
        for item_node in (start_node, end_node):
            if item_node.kind != "scalar" or not isinstance(item_node.value, str):
                return malformed(f"range item {item_node.plain!r} is not a version string", item_node.line, item_node.column, "versions read v2.1; quote nothing, write the 'v'")
        start = VersionItem(start_node.value, start_node.line, start_node.column)
        end = VersionItem(end_node.value, end_node.line, end_node.column)
        unknown(start)
        unknown(end, allow_newest=True)
        start_key, end_key = version_key(start.text, order), version_key(end.text, order)
        if end.text != NEWEST and start_key is not None and end_key is not None and end_key < start_key:
            problems.append(
                Problem("Y007", f"{field_name}: range [{start.text}, {end.text}] ends before it starts: it selects no version", end.line, end.column, f"write [{end.text}, {start.text}]")
            )
        return VersionSpec("range", (start, end), tuple(problems))
    shown = "nothing" if node.value is None else repr(node.plain)
    return malformed(f"{shown} is not a version spec", node.line, node.column, "write all_version, [start, end|newest], v2.1 or 'v2.1, v2.2'")


def version_number(version: str) -> tuple[int, int] | None:
    """``v2.12`` → (2, 12); None for anything else (``newest``, ``all_version``, a typo)."""
    m = VERSION_NUMBER.match(version)
    return (int(m.group(1)), int(m.group(2))) if m else None
