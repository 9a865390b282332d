"""op_plugin_functions.yaml as located nodes: every value knows its line and column.

PyYAML's C composer gives the node tree with marks at the speed of a bare load; values are built
from it here, so duplicate keys (which a plain load silently collapses) stay visible to the rules.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from opkit import yamlio
from opkit.formats.files import InputError, NotLinted, read_text
from opkit.formats.noqa import NoqaMap
from opkit.formats.schema_site import SchemaSite
from opkit.formats.version_specs import ACTIVE_FIELDS, ALL_VERSION, VERSION_FIELDS, VersionSpec, read_version_spec, version_key
from opkit.signature import Dialect

if TYPE_CHECKING:
    from opkit.formats.source_op import SourceOp


SECTIONS = ("official", "autograd", "custom", "symint", "quant")
_SCALARS = yaml.constructor.SafeConstructor()
_STR_TAG = "tag:yaml.org,2002:str"


@dataclass(frozen=True)
class DuplicateKey:
    key: str
    line: int
    column: int
    first_line: int


_NO_KEYS: dict[str, int] = {}


class YNode:
    """A YAML value with its position (1-based). Mappings hold ``{key: YNode}``, sequences ``[YNode]``.

    A plain slotted class rather than a dataclass: a large yaml file has ~10k nodes and this is the
    hot path of loading it. Treat instances as read-only.
    """

    __slots__ = ("value", "line", "column", "kind", "quoted", "key_lines", "key_columns", "duplicates")

    def __init__(
        self,
        value: Any,
        line: int,
        column: int,
        kind: str,  # "scalar", "sequence" or "mapping"
        quoted: bool = False,
        key_lines: dict[str, int] = _NO_KEYS,  # mapping: where each key is written
        key_columns: dict[str, int] = _NO_KEYS,  # mapping: the column of each key
        duplicates: tuple[DuplicateKey, ...] = (),  # mapping: keys written twice (the last one wins)
    ):
        self.value = value
        self.line = line
        self.column = column
        self.kind = kind
        self.quoted = quoted
        self.key_lines = key_lines
        self.key_columns = key_columns
        self.duplicates = duplicates

    def __repr__(self) -> str:
        return f"YNode({self.value!r}, line={self.line}, column={self.column}, kind={self.kind!r})"

    @property
    def plain(self) -> Any:
        """The value with positions stripped, recursively."""
        if self.kind == "mapping":
            return {k: v.plain for k, v in self.value.items()}
        if self.kind == "sequence":
            return [v.plain for v in self.value]
        return self.value

    def key_position(self, key: str) -> tuple[int, int]:
        """(line, column) of ``key`` in this mapping (its first spelling), or of the mapping itself."""
        if key in self.key_lines:
            return self.key_lines[key], self.key_columns.get(key, self.column)
        return self.line, self.column


def build_located(node: yaml.Node) -> YNode:
    """The located value of a composed node, recursively."""
    line, column = node.start_mark.line + 1, node.start_mark.column + 1
    if isinstance(node, yaml.ScalarNode):
        if node.tag == _STR_TAG:  # most scalars: skip the constructor
            value = node.value
        else:
            try:
                value = _SCALARS.construct_object(node)
            except yaml.YAMLError:
                value = node.value
        return YNode(value, line, column, "scalar", node.style in ("'", '"'))
    if isinstance(node, yaml.SequenceNode):
        return YNode([build_located(n) for n in node.value], line, column, "sequence")
    mapping: dict[str, YNode] = {}
    key_lines: dict[str, int] = {}
    key_columns: dict[str, int] = {}
    duplicates: list[DuplicateKey] = []
    for key_node, value_node in node.value:
        key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else str(build_located(key_node).plain)
        key_line = key_node.start_mark.line + 1
        if key in mapping:
            duplicates.append(DuplicateKey(key, key_line, key_node.start_mark.column + 1, key_lines[key]))
        mapping[key] = build_located(value_node)  # like the codegen's loader, the last duplicate wins
        if key not in key_lines:
            key_lines[key] = key_line
            key_columns[key] = key_node.start_mark.column + 1
    return YNode(mapping, line, column, "mapping", key_lines=key_lines, key_columns=key_columns, duplicates=tuple(duplicates))


@dataclass
class YamlEntry:
    """One ``- func: ...`` item of a section."""

    section: str
    index: int
    line: int
    column: int
    node: YNode

    @property
    def fields(self) -> dict[str, YNode]:
        return self.node.value

    @property
    def key_lines(self) -> dict[str, int]:
        return self.node.key_lines

    @property
    def duplicate_keys(self) -> tuple[DuplicateKey, ...]:
        return self.node.duplicates

    @property
    def func(self) -> str | None:
        node = self.fields.get("func")
        return node.value if node is not None and isinstance(node.value, str) else None

    def get(self, key: str) -> YNode | None:
        return self.fields.get(key)


@dataclass(eq=False)  # identity semantics: rules cache per-file indexes in a WeakKeyDictionary
class OpPluginFile:
    path: str
    text: str
    root: YNode
    entries: list[YamlEntry]
    structure_errors: list[InputError]
    noqa: NoqaMap
    _specs: dict[int, dict[str, VersionSpec]] = field(default_factory=dict, repr=False)
    _active: dict[int, frozenset[str]] = field(default_factory=dict, repr=False)

    @property
    def duplicate_keys(self) -> tuple[DuplicateKey, ...]:
        return self.root.duplicates

    @property
    def is_fragment(self) -> bool:
        """A file without ``all_version`` is a fragment (what ``opkit new`` writes), not a whole config."""
        return "all_version" not in self.root.value

    @property
    def all_version(self) -> YNode | None:
        return self.root.value.get("all_version")

    @property
    def versions(self) -> list[str]:
        node = self.all_version
        if node is None or node.kind != "sequence":
            return []
        return [str(v.value) for v in node.value]

    @functools.cached_property
    def version_order(self) -> dict[str, int] | None:
        """all_version's versions → their place; None in a fragment, which has no all_version."""
        return None if self.is_fragment else {v: i for i, v in enumerate(self.versions)}

    def specs(self, entry: YamlEntry) -> dict[str, VersionSpec]:
        """The entry's version-spec fields, each read once."""
        found = self._specs.get(id(entry))
        if found is None:
            found = self._specs[id(entry)] = {
                name: read_version_spec(node, name, self.version_order) for name in VERSION_FIELDS if (node := entry.get(name)) is not None
            }
        return found

    @functools.cached_property
    def universe(self) -> tuple[str, ...]:
        """all_version; in a fragment every vX.Y the file mentions, in order."""
        if not self.is_fragment:
            return tuple(self.versions)
        mentioned = {i.text for e in self.entries for s in self.specs(e).values() for i in s.items if version_key(i.text, {}) is not None}
        # all_version alone names no version: let it stand for one, so two such entries still overlap
        return tuple(sorted(mentioned, key=lambda v: version_key(v, {}) or ())) or (ALL_VERSION,)

    def active_versions(self, entry: YamlEntry) -> frozenset[str]:
        """Versions in which the codegen keeps the entry (it has an acl_op, op_api or sparse kernel); each entry's read once."""
        found = self._active.get(id(entry))
        if found is None:
            selected: set[str] = set()
            for name in ACTIVE_FIELDS:
                spec = self.specs(entry).get(name)
                if spec is not None:
                    selected |= spec.expand(self.universe)
            found = self._active[id(entry)] = frozenset(selected)
        return found

    def schema_sites(self) -> list[SchemaSite]:
        sites = []
        for entry in self.entries:
            node = entry.get("func")
            if node is None or not isinstance(node.value, str):
                continue
            tags = entry.get("tags")
            tag_values: tuple[str, ...] = ()
            if tags is not None:
                plain = tags.plain
                tag_values = tuple(str(t) for t in (plain if isinstance(plain, list) else [plain]))
            sites.append(
                SchemaSite(
                    text=node.value,
                    path=self.path,
                    line=node.line,
                    column=node.column + (1 if node.quoted else 0),
                    dialect=Dialect.OP_PLUGIN,
                    section=entry.section,
                    tags=tag_values,
                    versions=self.active_versions(entry),
                )
            )
        return sites


# op-plugin's config/ beside op_plugin_functions.yaml (measured at commit 517f2e7d): a top-level key that
# names another format → what that file is.
OTHER_CONFIG_FORMATS = {
    "backward": "op-plugin's autograd derivatives yaml (backward: name/formula entries)",
    "deprecated": "op-plugin's deprecated-ops yaml (deprecated: name/replace entries)",
    "functions": "op-plugin's ATB op list (functions: cpp_name/impl_name entries)",
    "supported": "an npu_native_functions.yaml (backend/supported), not op_plugin_functions.yaml",
}


def other_yaml_format(root: YNode) -> str | None:
    """What a yaml file that is not an op_plugin_functions.yaml is, judged by its content; None if unknown.

    op-plugin's config/ holds several formats beside op_plugin_functions.yaml: ``derivatives.yaml``
    (``all_version`` and ``backward:``), ``deprecated.yaml`` (``deprecated:``), ``atb_ops.yaml``
    (``functions:``); PyTorch's own derivatives.yaml and deprecated.yaml are lists of ``name:`` entries.
    """
    if root.kind == "sequence" and root.value and all(item.kind == "mapping" and "name" in item.value for item in root.value):
        if any("aten" in item.value for item in root.value):
            return "a deprecated-overloads yaml (name/aten entries)"
        return "an autograd derivatives yaml (name: schema, with derivative formulas)"
    if root.kind != "mapping" or set(root.value) & set(SECTIONS):
        return None
    for key, what in OTHER_CONFIG_FORMATS.items():
        if key in root.value:
            return what
    if "all_version" in root.value:
        return None  # an op_plugin_functions.yaml that lacks its sections: Y001 says which
    return f"a yaml mapping without op_plugin_functions sections (keys: {', '.join(list(root.value)[:5]) or 'none'})"


def load_op_plugin_yaml(path: str, text: str | None = None, *, explicit: bool = True) -> OpPluginFile:
    """Load and locate; InputError for unreadable text, YAML syntax errors and a non-mapping top level.

    A file that holds no document (empty, comments only), or one recognisably in another format, is
    NotLinted: reported as an info line, never fatal. A file found by walking a directory whose top
    level is not what any op-plugin yaml looks like is NotLinted too; named explicitly, it is E003.
    """
    if text is None:
        text = read_text(path)
    try:
        nodes = yamlio.compose_all(text)
    except yaml.YAMLError as exc:
        line, column, problem = yamlio.error_position(exc)
        raise InputError("E002", f"invalid YAML: {problem}", line=line, column=column) from None
    except yamlio.TooLarge as exc:
        raise InputError("E003", str(exc)) from None
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        raise NotLinted("empty yaml (no document, only comments or blank lines)")
    if len(nodes) != 1:
        raise InputError("E003", f"expected one YAML document, found {len(nodes)}")
    root = build_located(nodes[0])
    other = other_yaml_format(root)
    if other is not None and (root.kind == "mapping" or not explicit or "derivatives" in other or "deprecated" in other):
        raise NotLinted(other)
    if root.kind != "mapping":
        if not explicit:
            raise NotLinted(f"a yaml {root.kind}, not an op_plugin_functions.yaml mapping")
        raise InputError(
            "E003",
            f"top level is a {root.kind}, expected a mapping of sections (all_version, official, custom, ...)",
            line=root.line,
            column=root.column,
        )
    entries: list[YamlEntry] = []
    structure_errors: list[InputError] = []
    for section in SECTIONS:
        node = root.value.get(section)
        if node is None or node.value is None:
            continue
        if node.kind != "sequence":
            structure_errors.append(
                InputError("E003", f"section '{section}' is a {node.kind}, expected a list of entries", line=node.line, column=node.column)
            )
            continue
        for index, item in enumerate(node.value):
            if item.kind != "mapping":
                structure_errors.append(
                    InputError("E003", f"entry {index} of '{section}' is a {item.kind}, expected a mapping with 'func'", line=item.line, column=item.column)
                )
                continue
            entries.append(YamlEntry(section, index, item.line, item.column, item))
    return OpPluginFile(path, text, root, entries, structure_errors, NoqaMap.from_text(text, comment="#"))


# -- one entry as a SourceOp (`opkit new --from FILE --op NAME[.OVERLOAD]`) ----------------------
# The file is kept per path while unchanged, so adopting every entry of the real 1514-entry file reads it
# once. The entry's ``func`` is the schema; its other fields (versions, ``gen_opapi``, tags) are kept as they are.

@functools.lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int, size: int) -> OpPluginFile:
    return load_op_plugin_yaml(path)


def _entries(path: str) -> OpPluginFile:
    from opkit.formats.source_op import AdoptError  # adopting only: a lint never pays for it

    try:
        info = os.stat(path)
        return _load(os.path.abspath(path), info.st_mtime_ns, info.st_size)
    except OSError as exc:
        raise AdoptError(f"cannot read: {exc.strerror or exc}", path=path) from None
    except InputError as exc:
        raise AdoptError(exc.message, path=path, line=exc.line) from None
    except NotLinted as exc:
        raise AdoptError(f"not an op_plugin_functions.yaml: {exc.reason}", path=path, line=1) from None


def _full_name(entry: YamlEntry) -> str:
    return (entry.func or "").split("(", 1)[0].strip()


_VERSION_KEYS = ("op_api", "acl_op", "sparse")


def _versions(entry: YamlEntry) -> str:
    return "; ".join(f"{k}: {entry.get(k).plain}" for k in _VERSION_KEYS if entry.get(k) is not None)


def _is_current(entry: YamlEntry) -> bool:
    """The entry the newest torch builds: its version spec reaches ``newest`` (or is ``all_version``)."""
    return any(word in _versions(entry) for word in ("newest", "all_version"))


def read_entry(path: str, op: str | None) -> SourceOp:
    from opkit.formats.source_op import AdoptError, Skipped, SourceOp

    """The ``custom:`` entry whose func is ``op`` (``npu_max`` picks the overload-less one, ``npu_max.dim`` that overload)."""
    file = _entries(path)
    if op is None:
        raise AdoptError("an op_plugin_functions.yaml holds many ops: name one with --op NAME (NAME.OVERLOAD for an overload)", path=path, line=1)
    named = [e for e in file.entries if _full_name(e) == op or _full_name(e).split(".", 1)[0] == op]
    # op-plugin lists custom ops again under symint: (their SymInt form); the custom: entry is the op
    named = [e for e in named if e.section == "custom"] or named
    exact = [e for e in named if _full_name(e) == op]
    chosen = exact or named
    if not chosen:
        raise AdoptError(f"no entry has func {op}(...)", path=path, line=1)
    skipped: tuple[Skipped, ...] = ()
    if len({_full_name(e) for e in chosen}) > 1:
        raise AdoptError(f"{op} has {len(chosen)} overloads ({', '.join(_full_name(e) for e in chosen)}); name one as NAME.OVERLOAD", path=path, line=chosen[0].line)
    if len(chosen) > 1:
        # One op declared once per range of torch versions (SymInt[] from v2.x on, ...): the newest is adopted.
        entry = next((e for e in reversed(chosen) if _is_current(e)), chosen[-1])
        skipped = tuple(Skipped(e.line, f"another entry of {op} (for other torch versions: {_versions(e)}) not adopted") for e in chosen if e is not entry)
    else:
        entry = chosen[0]
    if entry.section != "custom":
        raise AdoptError(f"{op} is in the {entry.section}: section (an ATen overload op-plugin implements), not a custom op to adopt", path=path, line=entry.line)
    fields = tuple((key, node.plain) for key, node in entry.fields.items())
    return SourceOp(
        path=path, kind="op_plugin_functions.yaml entry", op_type="", schema=entry.func or "",
        schema_line=entry.key_lines.get("func", entry.line), entry=fields, skipped=skipped, line=entry.line,
    )  # fmt: skip
