"""Facts and helpers the op_plugin_yaml rules share."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from opkit.lint.finding import Violation
from opkit.lint.registry import shared_index
from opkit.lint.sources.op_plugin_yaml import OpPluginFile, YamlEntry, YNode
from opkit.signature import Dialect, OpSignature, parse_schema, SchemaError, SchemaKind


# Entry fields the codegen (or torchgen's NativeFunction, or torch_npu's registration) reads.
# Checked against the real file: these 14 are exactly the fields its 1514 entries use.
ENTRY_FIELDS = frozenset(
    {
        "func",
        "op_api",
        "acl_op",
        "gen_opapi",
        "exposed",
        "internal_format_opapi",
        "dvm",
        "sparse",
        "device_check",
        "tags",
        "dispatch",
        "structured",
        "structured_delegate",
        "use_const_ref_for_mutable_tensors",
    }
)


# Fields whose value is a version spec.
VERSION_FIELDS = ("op_api", "acl_op", "exposed", "internal_format_opapi", "dvm", "sparse")


# The fields that make gen_op_plugin_functions.py keep an entry for a torch version.
ACTIVE_FIELDS = ("op_api", "acl_op", "sparse")


DEVICE_CHECKS = ("NoCheck", "ExactSame")


ALL_VERSION = "all_version"


NEWEST = "newest"


# gen_opapi keys that are not output (result) descriptions; every other key names a result.
GEN_OPAPI_KEYS = frozenset({"exec", "structured_inherit", "new_params", "integral_identity_tensor", "cpu_scalar_h2d", "cpu_scalar_op"})


OUTPUT_FIELDS = ("size", "dtype", "name")  # name: propagate_names source (ResInfo.infer_name)


# struct_codegen.py's USED_KEYS: gen_opapi anywhere else is never read.
GEN_OPAPI_SECTIONS = ("official", "custom")


IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
        near = difflib.get_close_matches(item.text, list(known), n=1)
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


@dataclass
class EntryFacts:
    entry: YamlEntry
    signature: OpSignature | None
    specs: dict[str, VersionSpec] = field(default_factory=dict)

    @property
    def op(self) -> str | None:
        return self.signature.full_name if self.signature is not None else None

    def active_versions(self, universe: tuple[str, ...]) -> frozenset[str]:
        """Versions in which the codegen keeps the entry (it has an acl_op, op_api or sparse kernel)."""
        selected: set[str] = set()
        for name in ACTIVE_FIELDS:
            spec = self.specs.get(name)
            if spec is not None:
                selected |= spec.expand(universe)
        return frozenset(selected)


@dataclass
class FileIndex:
    is_fragment: bool
    universe: tuple[str, ...]  # all_version, or in a fragment every vX.Y the file mentions, in order
    entries: list[EntryFacts]
    gen_opapi_by_name: dict[str, EntryFacts]  # name.overload → official/custom entry the codegen can inherit from


def _signature(func: str | None) -> OpSignature | None:
    if func is None:
        return None
    try:
        return parse_schema(func, Dialect.OP_PLUGIN)
    except SchemaError:
        return None  # reported by the S rules


@shared_index
def file_index(file: OpPluginFile) -> FileIndex:
    """Everything the Y rules share, computed once per file."""
    is_fragment = file.is_fragment
    known = None if is_fragment else {v: i for i, v in enumerate(file.versions)}
    facts = []
    for entry in file.entries:
        fact = EntryFacts(entry, _signature(entry.func))
        for name in VERSION_FIELDS:
            node = entry.get(name)
            if node is not None:
                fact.specs[name] = read_version_spec(node, name, known)
        facts.append(fact)
    if is_fragment:
        mentioned = {i.text for f in facts for s in f.specs.values() for i in s.items if VERSION_NUMBER.match(i.text)}
        # all_version alone names no version: let it stand for one, so two such entries still overlap
        universe = tuple(sorted(mentioned, key=lambda v: version_key(v, {}) or ())) or (ALL_VERSION,)
    else:
        universe = tuple(file.versions)
    by_name: dict[str, EntryFacts] = {}
    for fact in facts:
        if fact.op is not None and fact.entry.section in GEN_OPAPI_SECTIONS and fact.entry.get("gen_opapi") is not None:
            by_name.setdefault(fact.op, fact)
    return FileIndex(is_fragment, universe, facts, by_name)


def spec_problems(file: OpPluginFile, code: str) -> Iterator[Violation]:
    for fact in file_index(file).entries:
        for spec in fact.specs.values():
            for p in spec.problems:
                if p.code == code:
                    yield Violation(p.message, line=p.line, column=p.column, hint=p.hint, op=fact.op)


def mapping_duplicates(node: YNode) -> Iterator[tuple[YNode, object]]:
    """Every duplicate key in ``node`` and the mappings nested inside it."""
    if node.kind == "mapping":
        for dup in node.duplicates:
            yield node, dup
        for child in node.value.values():
            yield from mapping_duplicates(child)
    elif node.kind == "sequence":
        for child in node.value:
            yield from mapping_duplicates(child)


@dataclass(frozen=True)
class GenOpApi:
    """The gen_opapi block the codegen uses for one entry: its own, or the one it inherits."""

    fact: EntryFacts
    signature: OpSignature
    block: YNode  # the mapping read (the target's when inherited)
    inherited_from: str | None  # structured_inherit target, when the block is the target's
    anchor: tuple[int, int]  # where to report problems that belong to the entry

    @property
    def outputs(self) -> dict[str, YNode]:
        """Result descriptions: every key that is not one of the other gen_opapi keys."""
        return {k: v for k, v in self.block.value.items() if k not in GEN_OPAPI_KEYS}

    @property
    def new_params(self) -> set[str]:
        node = self.block.value.get("new_params")
        return set(node.value) if node is not None and node.kind == "mapping" else set()

    @property
    def result_names(self) -> set[str]:
        if self.signature.kind is SchemaKind.OUT:
            return {a.name for a in self.signature.out_arguments}
        return set(self.outputs)

    def where(self, node: YNode | None = None, key: str | None = None) -> tuple[int, int]:
        """Position to report: the node itself, unless it lives in another entry's (inherited) block."""
        if self.inherited_from is not None:
            return self.anchor
        if key is not None:
            return self.block.key_position(key)
        return (node.line, node.column) if node is not None else self.anchor

    @property
    def suffix(self) -> str:
        return f" (inherited from {self.inherited_from})" if self.inherited_from else ""


def gen_opapi_blocks(file: OpPluginFile) -> Iterator[GenOpApi]:
    """The effective gen_opapi of every entry the generator reads whose func parses.

    An in-place entry with ``structured_inherit`` delegates to the out kernel and has no block of its
    own; any other entry with it uses the target's block (``struct_map.get(structured_inherit)``).
    """
    index = file_index(file)
    for fact in index.entries:
        node = fact.entry.get("gen_opapi")
        if node is None or fact.signature is None or fact.entry.section not in GEN_OPAPI_SECTIONS or node.kind != "mapping":
            continue
        inherit = node.value.get("structured_inherit")
        if inherit is None:
            yield GenOpApi(fact, fact.signature, node, None, fact.entry.node.key_position("gen_opapi"))
            continue
        target = index.gen_opapi_by_name.get(str(inherit.value))
        if fact.signature.kind is SchemaKind.INPLACE or target is None:
            continue  # delegation, or a missing target (Y105)
        target_block = target.entry.get("gen_opapi")
        if target_block.kind == "mapping" and "structured_inherit" not in target_block.value:
            yield GenOpApi(fact, fact.signature, target_block, target.op, (inherit.line, inherit.column))


def exec_parts(node: YNode) -> list[str] | None:
    """``exec`` split as the codegen splits it, or None when it is not a string."""
    return [p.strip() for p in node.value.split(",")] if isinstance(node.value, str) else None
