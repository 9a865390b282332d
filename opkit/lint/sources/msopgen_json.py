"""msOpGen prototype JSON as located nodes (msopgen.md §1).

``json.loads`` decides validity, as msOpGen's ``json.load`` does, made strict by ``opkit.jsonio`` (NaN,
Infinity and out-of-range numbers are refused; duplicate keys reported). Positions come from composing the
same text with PyYAML (JSON is YAML), which gives every value its line; when the composer disagrees
with ``json.loads`` (tabs, exotic escapes) the values keep ``json.loads``'s reading and line 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from opkit.lint.sources import InputError, NotLinted, SchemaSite
from opkit import jsonio, yamlio
from opkit.lint.sources.op_plugin_yaml import YNode, build_located
from opkit.lint.suppression import NoqaMap


def _unlocated(value: Any, line: int = 1) -> YNode:
    """A ``json.loads`` value as YNodes that all sit on ``line``."""
    if isinstance(value, dict):
        return YNode({k: _unlocated(v, line) for k, v in value.items()}, line, 1, "mapping", key_lines={k: line for k in value})
    if isinstance(value, list):
        return YNode([_unlocated(v, line) for v in value], line, 1, "sequence")
    return YNode(value, line, 1, "scalar", quoted=isinstance(value, str))


def _locate(text: str, value: Any) -> YNode:
    try:
        node = yamlio.compose(text)
    except (yaml.YAMLError, yamlio.TooLarge):
        return _unlocated(value)
    located = build_located(node) if node is not None else None
    return located if located is not None and located.plain == value else _unlocated(value)


@dataclass(frozen=True)
class JsonOp:
    """One op object of the file: ``op``, ``input_desc``, ``output_desc``, ``attr`` (msOpGen reads only these)."""

    index: int
    node: YNode

    @property
    def line(self) -> int:
        return self.node.line

    def field(self, key: str) -> YNode | None:
        return self.node.value.get(key)

    def line_of(self, key: str) -> int:
        return self.node.key_lines.get(key, self.node.line)

    @property
    def op(self) -> str | None:
        node = self.field("op")
        return node.value if node is not None and isinstance(node.value, str) else None

    def items(self, key: str) -> list[YNode]:
        """The mapping items of a list field; other items are structure errors reported at load."""
        node = self.field(key)
        if node is None or node.kind != "sequence":
            return []
        return [item for item in node.value if item.kind == "mapping"]

    @property
    def inputs(self) -> list[YNode]:
        return self.items("input_desc")

    @property
    def outputs(self) -> list[YNode]:
        return self.items("output_desc")

    @property
    def attrs(self) -> list[YNode]:
        return self.items("attr")

    @property
    def descriptors(self) -> list[tuple[str, YNode]]:
        """(``input_desc``/``output_desc``, descriptor) in declaration order."""
        return [("input_desc", d) for d in self.inputs] + [("output_desc", d) for d in self.outputs]


def strings(node: YNode | None) -> list[YNode] | None:
    """A ``type``/``format`` value as a list of items (one string counts as a list of one); None if absent."""
    if node is None:
        return None
    return node.value if node.kind == "sequence" else [node]


def text_of(item: YNode, key: str) -> str | None:
    node = item.value.get(key)
    return node.value if node is not None and isinstance(node.value, str) else None


@dataclass
class MsOpGenFile:
    path: str
    text: str
    root: YNode
    ops: list[JsonOp]
    structure_errors: list[InputError] = field(default_factory=list)
    noqa: NoqaMap = field(default_factory=NoqaMap)  # JSON has no comments: nothing is suppressed inline

    def schema_sites(self) -> list[SchemaSite]:
        return []  # a prototype declares no PyTorch schema


def _duplicate_key_errors(root: YNode, keys: tuple[str, ...]) -> list[InputError]:
    """E003 for each key an object repeats (json.load keeps the last silently), where the composer found it."""
    errors = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == "scalar":
            continue
        for dup in node.duplicates:
            errors.append(InputError("E003", f"duplicate key {dup.key!r} (first at line {dup.first_line}); json.load keeps only the last", line=dup.line, column=dup.column))
        stack.extend(node.value.values() if node.kind == "mapping" else node.value)
    if not errors:  # not located (the composer read the text differently): report them unplaced
        errors = [InputError("E003", f"duplicate key {key!r}; json.load keeps only the last") for key in dict.fromkeys(keys)]
    return sorted(errors, key=lambda e: (e.line, e.column))


def looks_like_prototype(value: object) -> bool:
    """An msOpGen prototype JSON: a list of op objects (or one), each with ``op`` or descriptor lists."""
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(i, dict) and {"op", "input_desc", "output_desc"} & set(i) for i in items)


def load_msopgen_json(path: str, text: str, *, explicit: bool = True) -> MsOpGenFile:
    """Load and locate; InputError E002 for invalid JSON, E003 for a top level that is not op objects.

    Found by walking a directory, a JSON file that is not a prototype (a package.json, a config) is
    NotLinted rather than an error.
    """
    try:
        value, duplicate_keys = jsonio.loads(text)
    except jsonio.JsonError as exc:
        if not explicit:
            raise NotLinted(f"not valid JSON ({exc.message}), so not an msOpGen prototype") from None
        raise InputError("E002", f"invalid JSON: {exc.message}", line=exc.line, column=exc.column) from None
    if not explicit and not looks_like_prototype(value):
        raise NotLinted("a JSON file that is not an msOpGen prototype (no op objects)")
    root = _locate(text, value)
    items = root.value if root.kind == "sequence" else [root]
    ops: list[JsonOp] = []
    errors: list[InputError] = _duplicate_key_errors(root, duplicate_keys) if duplicate_keys else []
    if root.kind == "scalar":
        raise InputError("E003", "top level is a scalar, expected a list of op objects (or one op object)", line=root.line, column=root.column)
    for index, item in enumerate(items):
        if item.kind != "mapping":
            errors.append(InputError("E003", f"op {index} is a {item.kind}, expected an object with 'op', 'input_desc', ...", line=item.line, column=item.column))
            continue
        op = JsonOp(index, item)
        for key in ("input_desc", "output_desc", "attr"):
            node = op.field(key)
            if node is not None and node.kind != "sequence":
                errors.append(InputError("E003", f"'{key}' is a {node.kind}, expected a list of objects", line=node.line, column=node.column))
            elif node is not None:
                errors += [
                    InputError("E003", f"an item of '{key}' is a {i.kind}, expected an object", line=i.line, column=i.column)
                    for i in node.value
                    if i.kind != "mapping"
                ]
        ops.append(op)
    return MsOpGenFile(path, text, root, ops, errors)
