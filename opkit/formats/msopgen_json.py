"""msOpGen prototype JSON as located nodes (msopgen.md §1).

``json.loads`` decides validity, as msOpGen's ``json.load`` does, made strict by ``opkit.jsonio`` (NaN,
Infinity and out-of-range numbers are refused; duplicate keys reported). Positions come from composing the
same text with PyYAML (JSON is YAML), which gives every value its line; when the composer disagrees
with ``json.loads`` (tabs, exotic escapes) the values keep ``json.loads``'s reading and line 1.

``load_msopgen_json`` gives the located file the lint rules check; ``read_prototype`` gives one op of it
as a ``SourceOp`` (`opkit new --from`), read as msOpGen reads it: what msOpGen would drop or rewrite (a
descriptor without ``type``/``format``, an unknown attr type, a missing ``param_type``) is listed as
skipped, and what it rejects is one located error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from opkit import jsonio, msopgen, yamlio
from opkit.formats.files import InputError, NotLinted
from opkit.formats.noqa import NoqaMap
from opkit.formats.op_plugin_yaml import YNode, build_located
from opkit.formats.schema_site import SchemaSite
from opkit.formats.source_op import AdoptError, Skipped, SourceAttr, SourceOp, SourceTensor, dtype_default


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


# An op test case file (`case_name`/`op_name`, with shapes, value ranges and golden paths) shares input_desc/output_desc with
# a prototype but is no input of msOpGen: found by a directory walk, it is skipped.
_TEST_CASE_KEYS = frozenset({"case_name", "op_name"})


def looks_like_prototype(value: object) -> bool:
    """An msOpGen prototype JSON: a list of op objects (or one), each with ``op`` or descriptor lists."""
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(i, dict) and {"op", "input_desc", "output_desc"} & set(i) and not _TEST_CASE_KEYS & set(i) for i in items)


def load_msopgen_json(path: str, text: str, *, explicit: bool = True) -> MsOpGenFile:
    """Load and locate; InputError E002 for invalid JSON, E003 for a top level that is not op objects.

    Found by walking a directory, a JSON file that is not a prototype (a package.json, a config) is
    NotLinted rather than an error.
    """
    try:
        # A walk finds many JSON files that are no prototype (ops-nn: 1446, 87 MB): those are told apart
        # without looking for repeated keys, which only a prototype's report needs.
        value, duplicate_keys = jsonio.loads(text, find_duplicates=explicit)
    except jsonio.JsonError as exc:
        if not explicit:
            raise NotLinted(f"not valid JSON ({exc.message}), so not an msOpGen prototype") from None
        raise InputError("E002", f"invalid JSON: {exc.message}", line=exc.line, column=exc.column) from None
    if not explicit:
        if not looks_like_prototype(value):
            raise NotLinted("a JSON file that is not an msOpGen prototype (no op objects)")
        value, duplicate_keys = jsonio.loads(text)
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


# -- one op as a SourceOp (`opkit new --from`) ------------------------------------------------------

def read_prototype(path: str, text: str, op: str | None = None) -> SourceOp:
    try:
        file = load_msopgen_json(path, text)
    except InputError as exc:
        raise AdoptError(exc.message, path=path, line=exc.line) from None
    if file.structure_errors:
        first = file.structure_errors[0]
        raise AdoptError(first.message, path=path, line=first.line)
    names = [o.op or f"op {o.index}" for o in file.ops]
    if not file.ops:
        raise AdoptError("no op in the file", path=path, line=1)
    if op is None and len(file.ops) > 1:
        raise AdoptError(f"{len(file.ops)} ops ({', '.join(names)}); choose one with --op", path=path, line=file.ops[1].line)
    chosen = file.ops[0] if op is None else next((o for o in file.ops if o.op == op), None)
    if chosen is None:
        raise AdoptError(f"no op {op!r}; the file declares {', '.join(names)}", path=path, line=1)
    if not chosen.op:
        raise AdoptError("the op has no 'op' name", path=path, line=chosen.line)
    skipped: list[Skipped] = []
    return SourceOp(
        path=path, kind="msOpGen JSON", op_type=chosen.op,
        inputs=_tensors(chosen, chosen.inputs, "input_desc", path, skipped), outputs=_tensors(chosen, chosen.outputs, "output_desc", path, skipped),
        attrs=_attrs(chosen, path, skipped), skipped=tuple(skipped), line=chosen.line,
    )  # fmt: skip


def _tensors(op: JsonOp, items, key: str, path: str, skipped: list[Skipped]) -> tuple[SourceTensor, ...]:
    found: dict[str, SourceTensor] = {}
    for d in items:
        name = text_of(d, "name")
        if not name or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            raise AdoptError(f"{key} item has no valid 'name'", path=path, line=d.line)
        types, formats = strings(d.value.get("type")), strings(d.value.get("format"))
        if types is None or formats is None:
            skipped.append(Skipped(d.line, f"{key} '{name}' has no {'type' if types is None else 'format'}: msOpGen drops it"))
            continue
        param_type = text_of(d, "param_type")
        if param_type not in msopgen.TENSOR_PARAM_TYPES:
            skipped.append(Skipped(d.line, f"{key} '{name}' param_type {param_type!r} is read as 'required', as msOpGen does"))
            param_type = "required"
        type_names = [t.value for t in types]
        for t in types:
            if t.value not in msopgen.DTYPES:
                raise AdoptError(f"{key} '{name}': unknown dtype {t.value!r}", path=path, line=t.line)
        format_names = [f.value for f in formats]
        for f in formats:
            if f.value not in msopgen.FORMATS:
                raise AdoptError(f"{key} '{name}': unknown format {f.value!r}", path=path, line=f.line)
        if len(type_names) != len(format_names) and 1 not in (len(type_names), len(format_names)):
            raise AdoptError(f"{key} '{name}': {len(type_names)} types but {len(format_names)} formats", path=path, line=d.line)
        count = max(len(type_names), len(format_names))
        if name in found:
            skipped.append(Skipped(d.line, f"{key} '{name}' is declared twice: msOpGen keeps the last"))
        found[name] = SourceTensor(name, param_type, tuple(msopgen.expand_columns(tuple(type_names), count)), tuple(msopgen.expand_columns(tuple(format_names), count)), line=d.line)
    return tuple(found.values())


def _attrs(op: JsonOp, path: str, skipped: list[Skipped]) -> tuple[SourceAttr, ...]:
    attrs = []
    for a in op.attrs:
        name, attr_type = text_of(a, "name"), text_of(a, "type")
        if not name:
            raise AdoptError("attr item has no 'name'", path=path, line=a.line)
        if attr_type not in msopgen.ATTR_METHODS:
            skipped.append(Skipped(a.line, f"attr '{name}' of unknown type {attr_type!r}: msOpGen drops it"))
            continue
        optional = text_of(a, "param_type") == "optional"
        node = a.value.get("default_value")
        default = None
        if optional:
            if node is None:
                raise AdoptError(f"optional attr '{name}' has no default_value", path=path, line=a.line)
            default = json_default(node.plain, attr_type, path, node.line)
        attrs.append(SourceAttr(name, attr_type, optional, default, a.line))
    return tuple(attrs)


def json_default(value: object, attr_type: str, path: str, line: int) -> object:
    """msOpGen's ``default_value`` (``"1"``, ``"true"``, ``"{1,1}"``, ``"DT_FLOAT"``, or a JSON value) as a value."""
    if attr_type.startswith("list_") and isinstance(value, str):
        inner = value.strip().strip("{}[]").strip()
        return [json_default(v.strip(), attr_type.removeprefix("list_"), path, line) for v in inner.split(",")] if inner else []
    if isinstance(value, list):
        return [json_default(v, attr_type.removeprefix("list_"), path, line) for v in value]
    text = str(value).strip()
    try:
        if attr_type == "bool":
            return {"true": True, "false": False}[text.lower()]
        if attr_type == "int":
            return int(text)
        if attr_type == "float":
            return float(text)
        if attr_type == "type":
            return dtype_default(text)
        if attr_type == "string":
            return text
    except (KeyError, ValueError):
        pass
    raise AdoptError(f"default_value {value!r} is not a {attr_type} value", path=path, line=line)
