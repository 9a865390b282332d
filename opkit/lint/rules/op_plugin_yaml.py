"""op_plugin_functions.yaml rules (Y): what op-plugin's codegen silently accepts, misreads or crashes on.

Y0xx: the file and its entries (sections, fields, version specs, duplicates).
Y1xx: ``gen_opapi``, the block from which the codegen writes an op_api kernel
(``codegen/struct/model.py`` and ``struct_codegen.py`` in Ascend/op-plugin).

Every rule receives one ``OpPluginFile``. Facts several rules need (parsed signatures, version specs,
entries by name) are computed once per file by ``_index`` and cached, so each rule is one linear pass.
A file without ``all_version`` is a *fragment* (what ``opkit new`` writes, e.g. only ``custom:``):
section presence and version membership are not checked there.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule, shared_index
from opkit.lint.sources.op_plugin_yaml import SECTIONS, OpPluginFile, YamlEntry, YNode
from opkit.signature import Dialect, OpSignature, SchemaError, SchemaKind, parse_schema

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

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VERSION_NUMBER = re.compile(r"^v(\d+)\.(\d+)$")


# ------------------------------------------------------------------------------------------------
# Version specs: parsed once per field, with every problem found on the way
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Problem:
    code: str
    message: str
    line: int
    column: int
    hint: str | None = None


@dataclass(frozen=True)
class _VersionItem:
    text: str
    line: int
    column: int


@dataclass(frozen=True)
class VersionSpec:
    """One version-spec value as the codegen reads it: ``all_version``, ``[start, end]``, ``v2.1`` or ``'v2.1, v2.2'``."""

    form: str  # "all", "range", "list" (one version or a comma list) or "invalid"
    items: tuple[_VersionItem, ...] = ()  # the versions as written (a range: start, end)
    problems: tuple[_Problem, ...] = ()

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


def _version_key(version: str, order: dict[str, int]) -> tuple[int, ...] | None:
    """Ordering of versions: their place in all_version, else the numbers of ``vMAJOR.MINOR``."""
    if version in order:
        return (order[version],)
    m = _VERSION_NUMBER.match(version)
    return (int(m.group(1)), int(m.group(2))) if m and not order else None


def _read_version_spec(node: YNode, field_name: str, known: dict[str, int] | None) -> VersionSpec:
    """Parse one spec; ``known`` maps all_version's versions to their order (None in a fragment)."""
    order = known or {}
    problems: list[_Problem] = []

    def unknown(item: _VersionItem, *, allow_newest: bool = False) -> None:
        if known is None or item.text in known or (allow_newest and item.text == NEWEST):
            return
        near = difflib.get_close_matches(item.text, list(known), n=1)
        problems.append(
            _Problem("Y005", f"{field_name}: version '{item.text}' is not in all_version", item.line, item.column, f"did you mean '{near[0]}'?" if near else "add it to all_version or fix the spelling")
        )

    def malformed(message: str, line: int, column: int, hint: str | None = None) -> VersionSpec:
        problems.append(_Problem("Y006", f"{field_name}: {message}", line, column, hint))
        return VersionSpec("invalid", problems=tuple(problems))

    if node.kind == "scalar" and isinstance(node.value, bool):
        code = "Y010" if field_name == "exposed" else "Y006"
        problems.append(
            _Problem(code, f"{field_name}: {str(node.value).lower()} is a bool, not a version spec", node.line, node.column, f"write {field_name}: all_version, or a version range such as [v2.6, newest]")
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
            item = _VersionItem(text, node.line, start_column)
            unknown(item)
            return VersionSpec("list", (item,), tuple(problems))
        items = []
        offset = 0
        for piece in text.split(","):
            stripped = piece.strip()
            items.append(_VersionItem(stripped, node.line, start_column + offset + len(piece) - len(piece.lstrip())))
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
                _Problem(
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
        start = _VersionItem(start_node.value, start_node.line, start_node.column)
        end = _VersionItem(end_node.value, end_node.line, end_node.column)
        unknown(start)
        unknown(end, allow_newest=True)
        start_key, end_key = _version_key(start.text, order), _version_key(end.text, order)
        if end.text != NEWEST and start_key is not None and end_key is not None and end_key < start_key:
            problems.append(
                _Problem("Y007", f"{field_name}: range [{start.text}, {end.text}] ends before it starts: it selects no version", end.line, end.column, f"write [{end.text}, {start.text}]")
            )
        return VersionSpec("range", (start, end), tuple(problems))
    shown = "nothing" if node.value is None else repr(node.plain)
    return malformed(f"{shown} is not a version spec", node.line, node.column, "write all_version, [start, end|newest], v2.1 or 'v2.1, v2.2'")


# ------------------------------------------------------------------------------------------------
# Per-file index
# ------------------------------------------------------------------------------------------------


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
def _index(file: OpPluginFile) -> FileIndex:
    """Everything the Y rules share, computed once per file."""
    is_fragment = file.is_fragment
    known = None if is_fragment else {v: i for i, v in enumerate(file.versions)}
    facts = []
    for entry in file.entries:
        fact = EntryFacts(entry, _signature(entry.func))
        for name in VERSION_FIELDS:
            node = entry.get(name)
            if node is not None:
                fact.specs[name] = _read_version_spec(node, name, known)
        facts.append(fact)
    if is_fragment:
        mentioned = {i.text for f in facts for s in f.specs.values() for i in s.items if _VERSION_NUMBER.match(i.text)}
        # all_version alone names no version: let it stand for one, so two such entries still overlap
        universe = tuple(sorted(mentioned, key=lambda v: _version_key(v, {}) or ())) or (ALL_VERSION,)
    else:
        universe = tuple(file.versions)
    by_name: dict[str, EntryFacts] = {}
    for fact in facts:
        if fact.op is not None and fact.entry.section in GEN_OPAPI_SECTIONS and fact.entry.get("gen_opapi") is not None:
            by_name.setdefault(fact.op, fact)
    return FileIndex(is_fragment, universe, facts, by_name)


def _spec_problems(file: OpPluginFile, code: str) -> Iterator[Violation]:
    for fact in _index(file).entries:
        for spec in fact.specs.values():
            for p in spec.problems:
                if p.code == code:
                    yield Violation(p.message, line=p.line, column=p.column, hint=p.hint, op=fact.op)


# ------------------------------------------------------------------------------------------------
# Y0xx: the file and its entries
# ------------------------------------------------------------------------------------------------


@rule(
    "Y001",
    "missing-section",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    all_version: [v2.1, v2.2]
    official: []
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
    """,
)
def missing_section(file: OpPluginFile) -> Iterator[Violation]:
    """A full file lacks one of the sections the codegen iterates, or a section is empty (null).

    gen_op_plugin_functions.py loops over ``official``, ``custom``, ``symint`` and ``quant`` (and
    torch_npu over ``autograd``) with ``old_yaml[key]``: a missing key is a KeyError, a key with no
    value (``custom:``) is ``None`` and the loop raises TypeError. ``all_version`` must be a list of
    version strings. Fragments (files without ``all_version``, as ``opkit new`` writes) are not checked.
    """
    if file.is_fragment:
        return
    root = file.root
    versions = file.all_version
    if versions is not None and (versions.kind != "sequence" or not versions.value or not all(v.kind == "scalar" and isinstance(v.value, str) for v in versions.value)):
        yield Violation("all_version must be a non-empty list of version strings such as [v2.1, v2.2]", line=versions.line, column=versions.column)
    missing = [s for s in SECTIONS if s not in root.value]
    if missing:
        yield Violation(f"missing section(s): {', '.join(missing)}", line=1, column=1, hint="add each as an empty list, e.g. quant: []")
    for section in SECTIONS:
        node = root.value.get(section)
        if node is not None and node.value is None:
            line, column = root.key_position(section)
            yield Violation(f"section '{section}' is empty (null): the codegen cannot iterate it", line=line, column=column, hint=f"write {section}: []")


@rule(
    "Y002",
    "unknown-entry-field",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_apl: all_version
    """,
)
def unknown_entry_field(file: OpPluginFile) -> Iterator[Violation]:
    """An entry has a field the codegen does not know; it is ignored without a word.

    A misspelt ``op_api`` or ``exposed`` therefore removes the kernel or the public binding with no
    error at build time. Known fields: func, op_api, acl_op, gen_opapi, exposed, internal_format_opapi,
    dvm, sparse, device_check, tags, dispatch, structured, structured_delegate,
    use_const_ref_for_mutable_tensors.
    """
    for fact in _index(file).entries:
        node = fact.entry.node
        for key in node.value:
            if key not in ENTRY_FIELDS:
                near = difflib.get_close_matches(key, sorted(ENTRY_FIELDS), n=1)
                line, column = node.key_position(key)
                yield Violation(f"unknown entry field '{key}' is ignored by the codegen", line=line, column=column, hint=f"did you mean '{near[0]}'?" if near else None, op=fact.op)


@rule(
    "Y003",
    "missing-func",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - op_api: all_version
    """,
)
def missing_func(file: OpPluginFile) -> Iterator[Violation]:
    """An entry has no ``func``, or its ``func`` is not a string.

    The codegen reads ``e['func']`` for every entry (KeyError) and parses it as a schema string
    (``TypeError: not a str``), so the whole build stops.
    """
    for fact in _index(file).entries:
        entry = fact.entry
        node = entry.get("func")
        if node is None:
            yield Violation(f"entry {entry.index} of '{entry.section}' has no 'func'", line=entry.line, column=entry.column)
        elif not isinstance(node.value, str):
            yield Violation(f"func is {'empty' if node.value is None else 'a ' + node.kind if node.kind != 'scalar' else repr(node.value)}, not a schema string", line=node.line, column=node.column)


def _mapping_duplicates(node: YNode) -> Iterator[tuple[YNode, object]]:
    """Every duplicate key in ``node`` and the mappings nested inside it."""
    if node.kind == "mapping":
        for dup in node.duplicates:
            yield node, dup
        for child in node.value.values():
            yield from _mapping_duplicates(child)
    elif node.kind == "sequence":
        for child in node.value:
            yield from _mapping_duplicates(child)


@rule(
    "Y004",
    "duplicate-key",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
        op_api: [v2.6, newest]
    """,
)
def duplicate_key(file: OpPluginFile) -> Iterator[Violation]:
    """A key is written twice in one mapping (an entry, a gen_opapi block, or the top level).

    ``yaml.safe_load``, which the codegen uses, keeps the last value and drops the first without a
    word, so half of what was written has no effect (a second ``custom:`` replaces the whole first one).
    """
    for dup in file.duplicate_keys:
        yield Violation(f"top-level key '{dup.key}' is written twice (first at line {dup.first_line}); the first is discarded", line=dup.line, column=dup.column)
    for fact in _index(file).entries:
        for _, dup in _mapping_duplicates(fact.entry.node):
            yield Violation(f"key '{dup.key}' is written twice (first at line {dup.first_line}); only the last value is used", line=dup.line, column=dup.column, op=fact.op)


@rule(
    "Y005",
    "unknown-version",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    all_version: [v2.1, v2.2]
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: v9.9
    """,
)
def unknown_version(file: OpPluginFile) -> Iterator[Violation]:
    """A version spec names a version that is not in ``all_version``.

    The codegen compares the build's torch version with the spec; a version it never builds
    (``v9.9``, ``v2.10`` misspelt ``v2.1O``) selects nothing, so the kernel silently vanishes. A range
    must start with a version in ``all_version``; its end may also be ``newest``. Not checked in fragments.
    """
    yield from _spec_problems(file, "Y005")


@rule(
    "Y006",
    "malformed-version-spec",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: 'v2.6,v2.7'
    """,
)
def malformed_version_spec(file: OpPluginFile) -> Iterator[Violation]:
    """A version spec is not one of the four forms the codegen reads.

    The forms: ``all_version``; ``[start, end]`` (end may be ``newest``); ``v2.1``; ``'v2.1, v2.2'``.
    A comma list without the space (``'v2.6,v2.7'``) or with mixed separators is read as one unknown
    version; a list of 3 items is read as a range of its first two; a number (``2.1``), a mapping or
    an empty value is not a version at all. The codegen raises no error for any of them.
    """
    yield from _spec_problems(file, "Y006")


@rule(
    "Y007",
    "empty-version-range",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    all_version: [v2.1, v2.2, v2.3]
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: [v2.3, v2.1]
    """,
)
def empty_version_range(file: OpPluginFile) -> Iterator[Violation]:
    """A version range ends before it starts, so it selects no version: the op silently vanishes.

    ``[v2.7, v2.1]`` is read as "from v2.7 up to v2.1", which no torch version satisfies; the codegen
    raises nothing and the kernel is simply missing from every build. Versions are ordered as in
    ``all_version`` (in a fragment, by their numbers: v2.10 comes after v2.9).
    """
    yield from _spec_problems(file, "Y007")


@rule(
    "Y008",
    "gen-opapi-without-op-api",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        acl_op: all_version
        gen_opapi:
          out: {size: x, dtype: x}
          exec: aclnnMyOp
    """,
)
def gen_opapi_without_op_api(file: OpPluginFile) -> Iterator[Violation]:
    """An entry has ``gen_opapi`` but no ``op_api``: the codegen drops the block without a word.

    struct_codegen.py only generates kernels for entries whose ``op_api`` covers the torch version
    being built, so the op_api kernel the block describes is never written.
    """
    for fact in _index(file).entries:
        gen = fact.entry.get("gen_opapi")
        if gen is not None and fact.entry.get("op_api") is None:
            line, column = fact.entry.node.key_position("gen_opapi")
            yield Violation("gen_opapi without op_api: the codegen never generates this kernel", line=line, column=column, hint="add op_api with the versions the generated kernel serves", op=fact.op)


@rule(
    "Y009",
    "duplicate-func",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
      - func: my_op(Tensor x) -> Tensor
        acl_op: [v2.6, newest]
    """,
)
def duplicate_func(file: OpPluginFile) -> Iterator[Violation]:
    """One op (``name.overload``) is declared twice in a section with overlapping versions.

    Split declarations are fine when their versions are disjoint (``[v2.1, v2.6]`` and
    ``[v2.7, newest]``); where they overlap, the build for that torch version registers the op twice
    ("has multiple definitions") and one entry's settings are lost.
    """
    index = _index(file)
    seen: dict[tuple[str, str], list[EntryFacts]] = {}
    for fact in index.entries:
        key = fact.op or fact.entry.func
        if key is None:
            continue
        earlier = seen.setdefault((fact.entry.section, key), [])
        versions = fact.active_versions(index.universe)
        for other in earlier:
            overlap = versions & other.active_versions(index.universe)
            if overlap:
                shown = ", ".join(sorted(overlap, key=lambda v: _version_key(v, {}) or (0,)))
                yield Violation(
                    f"'{key}' is already declared in '{fact.entry.section}' at line {other.entry.line} for the same versions ({shown})",
                    line=fact.entry.line,
                    column=fact.entry.column,
                    hint="merge the entries, or give them disjoint version ranges",
                    op=fact.op,
                )
                break
        earlier.append(fact)


@rule(
    "Y010",
    "exposed-not-version",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
        exposed: true
    """,
)
def exposed_not_version(file: OpPluginFile) -> Iterator[Violation]:
    """``exposed`` is a bool: the codegen expects a version spec and crashes on ``true``.

    gen_op_plugin_functions.py expands ``exposed`` like every version field; a bool is neither a
    string nor a list, so the build stops. Write the versions in which the op is public in torch_npu.
    """
    yield from _spec_problems(file, "Y010")


@rule(
    "Y011",
    "invalid-device-check",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
        device_check: NoChecks
    """,
)
def invalid_device_check(file: OpPluginFile) -> Iterator[Violation]:
    """``device_check`` is neither ``NoCheck`` nor ``ExactSame`` (torchgen's DeviceCheckType).

    The value selects whether the generated wrapper checks that all tensors share a device; any
    other spelling is not a DeviceCheckType and fails to parse.
    """
    for fact in _index(file).entries:
        node = fact.entry.get("device_check")
        if node is not None and node.value not in DEVICE_CHECKS:
            near = difflib.get_close_matches(str(node.value), DEVICE_CHECKS, n=1)
            yield Violation(f"device_check {node.plain!r} is not one of {', '.join(DEVICE_CHECKS)}", line=node.line, column=node.column, hint=f"did you mean '{near[0]}'?" if near else None, op=fact.op)


@rule(
    "Y012",
    "gen-opapi-ignored-section",
    severity=Severity.WARNING,
    scope="yaml",
    example="""
    symint:
      - func: my_op(Tensor x, SymInt n) -> Tensor
        op_api: all_version
        gen_opapi:
          exec: aclnnMyOp
    """,
)
def gen_opapi_ignored_section(file: OpPluginFile) -> Iterator[Violation]:
    """``gen_opapi`` in a section the kernel generator never reads (only official and custom).

    struct_codegen.py's ``USED_KEYS`` are ``official`` and ``custom``: a block under ``symint``,
    ``autograd`` or ``quant`` has no effect; put it on the op's official or custom entry.
    """
    for fact in _index(file).entries:
        if fact.entry.section not in GEN_OPAPI_SECTIONS and fact.entry.get("gen_opapi") is not None:
            line, column = fact.entry.node.key_position("gen_opapi")
            yield Violation(f"gen_opapi under '{fact.entry.section}' is never read by the codegen", line=line, column=column, op=fact.op)


# ------------------------------------------------------------------------------------------------
# Y1xx: gen_opapi
# ------------------------------------------------------------------------------------------------


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


def _gen_opapi_blocks(file: OpPluginFile) -> Iterator[GenOpApi]:
    """The effective gen_opapi of every entry the generator reads whose func parses.

    An in-place entry with ``structured_inherit`` delegates to the out kernel and has no block of its
    own; any other entry with it uses the target's block (``struct_map.get(structured_inherit)``).
    """
    index = _index(file)
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


@rule(
    "Y101",
    "gen-opapi-outputs",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> (Tensor, Tensor)
        op_api: all_version
        gen_opapi:
          out:
            size: x
            dtype: x
          exec: aclnnMyOp
    """,
)
def gen_opapi_outputs(file: OpPluginFile) -> Iterator[Violation]:
    """gen_opapi's result keys do not match what the schema returns.

    A functional op needs one result key per returned Tensor, each with both ``size`` and ``dtype``
    (the key names the C++ result variable); so does every result a mutable op allocates. An out
    variant's keys must be names of its out arguments (size and dtype default to the argument). An
    in-place op allocates nothing and needs none (``self: {name: ...}`` only propagates names). A result maps to
    ``size``, ``dtype`` and optionally ``name`` (the tensor whose names propagate). The codegen
    raises on a wrong count, a missing size/dtype or an unknown out key.
    """
    for gen in _gen_opapi_blocks(file):
        sig, outputs, op = gen.signature, gen.outputs, gen.fact.op
        kind = sig.kind
        if kind is SchemaKind.OUT:
            out_names = [a.name for a in sig.out_arguments]
            for key in outputs:
                if key not in out_names:
                    line, column = gen.where(key=key)
                    yield Violation(f"'{key}' is not an out argument of {sig.full_name} ({', '.join(out_names)}){gen.suffix}", line=line, column=column, op=op)
        elif kind is SchemaKind.FUNCTIONAL:
            tensors = [r for r in sig.returns if r.type.is_tensor]
            if any(r.type.is_list or r.type.optional for r in tensors):
                line, column = gen.anchor
                yield Violation(f"{sig.full_name} returns Tensor[] or Tensor?, which gen_opapi cannot allocate{gen.suffix}", line=line, column=column, op=op)
            elif len(outputs) != len(tensors):
                line, column = gen.anchor
                yield Violation(
                    f"{len(outputs)} result key(s) ({', '.join(outputs) or 'none'}) for {len(tensors)} returned Tensor(s){gen.suffix}",
                    line=line,
                    column=column,
                    hint=f"one key per returned tensor, e.g. {', '.join(sig.output_names)}",
                    op=op,
                )
        for key, node in outputs.items():
            line, column = gen.where(key=key)
            if node.kind != "mapping":
                yield Violation(f"result '{key}' must map size/dtype, found {node.plain!r}{gen.suffix}", line=line, column=column, op=op)
                continue
            for extra in (k for k in node.value if k not in OUTPUT_FIELDS):
                extra_line, extra_column = node.key_position(extra) if gen.inherited_from is None else gen.anchor
                yield Violation(f"result '{key}' has unknown field '{extra}' (expected {', '.join(OUTPUT_FIELDS)}){gen.suffix}", line=extra_line, column=extra_column, op=op)
            if kind in (SchemaKind.FUNCTIONAL, SchemaKind.MUTABLE):  # these allocate their results
                missing = [f for f in ("size", "dtype") if f not in node.value]
                if missing:
                    yield Violation(f"result '{key}' has no {' and no '.join(missing)}: an allocated result needs both (only out and in-place results default to the argument){gen.suffix}", line=line, column=column, op=op)


@rule(
    "Y102",
    "gen-opapi-unknown-reference",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
        gen_opapi:
          out:
            size: y
            dtype: x
          exec: aclnnMyOp
    """,
)
def gen_opapi_unknown_reference(file: OpPluginFile) -> Iterator[Violation]:
    """A result's ``size``, ``dtype`` or ``name`` is a bare name that is neither an argument nor a new_params name.

    The codegen pastes the value into C++: an input Tensor's name becomes ``x.sizes()`` /
    ``x.scalar_type()``, anything else is used as written. A C++ expression (``at::kFloat``,
    ``self.scalar_type()``, a call, a ternary) is fine; a bare name that is not in scope does not compile.
    """
    for gen in _gen_opapi_blocks(file):
        in_scope = {a.name for a in gen.signature.arguments} | gen.new_params
        for key, node in gen.outputs.items():
            if node.kind != "mapping":
                continue
            for name in OUTPUT_FIELDS:
                value = node.value.get(name)
                if value is None:
                    continue
                if not isinstance(value.value, str):
                    line, column = gen.where(value)
                    yield Violation(f"{key}.{name} is {value.plain!r}, not a name or C++ expression{gen.suffix}", line=line, column=column, op=gen.fact.op)
                elif _IDENTIFIER.match(value.value) and value.value not in in_scope:
                    line, column = gen.where(value)
                    yield Violation(
                        f"{key}.{name} '{value.value}' is neither an argument of {gen.signature.full_name} nor a new_params name{gen.suffix}",
                        line=line,
                        column=column,
                        hint=f"arguments: {', '.join(a.name for a in gen.signature.arguments)}",
                        op=gen.fact.op,
                    )


def _exec_parts(node: YNode) -> list[str] | None:
    """``exec`` split as the codegen splits it, or None when it is not a string."""
    return [p.strip() for p in node.value.split(",")] if isinstance(node.value, str) else None


@rule(
    "Y103",
    "gen-opapi-exec-argument",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x, float alpha) -> Tensor
        op_api: all_version
        gen_opapi:
          out: {size: x, dtype: x}
          exec: aclnnMyOp, x, beta, out
    """,
)
def gen_opapi_exec_argument(file: OpPluginFile) -> Iterator[Violation]:
    """An explicit ``exec`` argument is not a schema argument, a new_params name or a result name.

    ``exec: aclnnX, a, b, out`` lists the aclnn call's arguments; the codegen raises "exec
    configuration field contains invalid parameters" for anything else (an expression belongs in
    ``new_params``).
    """
    for gen in _gen_opapi_blocks(file):
        node = gen.block.value.get("exec")
        parts = _exec_parts(node) if node is not None else None
        if not parts or len(parts) < 2:
            continue
        valid = {a.name for a in gen.signature.arguments} | gen.new_params | gen.result_names
        for part in parts[1:]:
            if part not in valid:
                line, column = gen.where(node)
                shown = f"'{part}'" if part else "an empty argument"
                yield Violation(
                    f"exec passes {shown}, which is not an argument, a new_params name or a result{gen.suffix}",
                    line=line,
                    column=column,
                    hint=f"valid: {', '.join(sorted(valid))}; define expressions under new_params",
                    op=gen.fact.op,
                )


@rule(
    "Y104",
    "gen-opapi-missing-exec",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
        gen_opapi:
          out: {size: x, dtype: x}
    """,
)
def gen_opapi_missing_exec(file: OpPluginFile) -> Iterator[Violation]:
    """A gen_opapi block has no ``exec`` (or a non-string one) and no ``structured_inherit``, or is no mapping.

    ``exec`` names the aclnn function the generated kernel calls; the codegen splits it as a string
    and crashes on a missing one.
    """
    for fact in _index(file).entries:
        node = fact.entry.get("gen_opapi")
        if node is not None and node.kind != "mapping" and fact.entry.section in GEN_OPAPI_SECTIONS:
            yield Violation(f"gen_opapi must be a mapping with exec (and results), found {node.plain!r}", line=node.line, column=node.column, op=fact.op)
    for gen in _gen_opapi_blocks(file):
        node = gen.block.value.get("exec")
        if node is None:
            line, column = gen.anchor
            yield Violation(f"gen_opapi has no exec{gen.suffix}", line=line, column=column, hint=f"add exec: {gen.signature.aclnn_name}", op=gen.fact.op)
        elif _exec_parts(node) is None or not _exec_parts(node)[0]:
            line, column = gen.where(node)
            yield Violation(f"exec must be a string 'aclnnName[, arg, ...]', found {node.plain!r}{gen.suffix}", line=line, column=column, op=gen.fact.op)


@rule(
    "Y105",
    "gen-opapi-bad-inherit",
    severity=Severity.ERROR,
    scope="yaml",
    example="""
    official:
      - func: abs(Tensor self) -> Tensor
        op_api: all_version
        gen_opapi:
          structured_inherit: abs.outt
    """,
)
def gen_opapi_bad_inherit(file: OpPluginFile) -> Iterator[Violation]:
    """``structured_inherit`` does not name an out variant with its own gen_opapi.

    The target is looked up by ``name.overload`` among official and custom entries with gen_opapi;
    a missing one raises "The structured_inherit func ... is None" (or, for an in-place op, crashes
    later). The target must be an out variant and must not inherit in turn.
    """
    index = _index(file)
    for fact in index.entries:
        node = fact.entry.get("gen_opapi")
        if node is None or node.kind != "mapping" or fact.entry.section not in GEN_OPAPI_SECTIONS:
            continue
        inherit = node.value.get("structured_inherit")
        if inherit is None:
            continue
        name = str(inherit.value)
        target = index.gen_opapi_by_name.get(name)
        problem = None
        if target is None:
            problem = f"structured_inherit '{name}' names no official/custom entry with gen_opapi"
        elif target.signature is not None and target.signature.kind is not SchemaKind.OUT:
            problem = f"structured_inherit '{name}' is not an out variant ({target.signature.kind.value})"
        elif "structured_inherit" in target.entry.get("gen_opapi").key_lines:
            problem = f"structured_inherit '{name}' inherits in turn; point at the out variant itself"
        if problem:
            yield Violation(problem, line=inherit.line, column=inherit.column, op=fact.op)


@rule(
    "Y106",
    "aclnn-name-convention",
    severity=Severity.INFO,
    scope="yaml",
    example="""
    custom:
      - func: my_op(Tensor x) -> Tensor
        op_api: all_version
        gen_opapi:
          out: {size: x, dtype: x}
          exec: aclnnMyOperator
    """,
)
def aclnn_name_convention(file: OpPluginFile) -> Iterator[Violation]:
    """``exec`` calls an aclnn function not named ``aclnn`` + UpperCamelCase(op base name).

    A note, not a fault: existing ops use suffixes (``V2``), ``Inplace`` prefixes and other names.
    New ops (and everything opkit generates) follow the convention, so a mismatch there is often a typo.
    """
    for gen in _gen_opapi_blocks(file):
        node = gen.block.value.get("exec")
        parts = _exec_parts(node) if node is not None and gen.inherited_from is None else None
        if parts and parts[0] and parts[0] != gen.signature.aclnn_name:
            yield Violation(f"exec calls '{parts[0]}'; the convention for '{gen.signature.base_name}' is '{gen.signature.aclnn_name}'", line=node.line, column=node.column, op=gen.fact.op)
