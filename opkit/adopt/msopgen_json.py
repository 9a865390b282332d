"""An msOpGen prototype JSON (a list of ops, or one op) as a ``SourceOp``, read as msOpGen reads it.

The file is loaded by the same located loader `opkit lint` uses (``opkit.lint.sources.msopgen_json``);
what msOpGen would drop or rewrite (a descriptor without ``type``/``format``, an unknown attr type, a
missing ``param_type``) is listed as skipped, and what it rejects is one located error.
"""

from __future__ import annotations

import re

from opkit import msopgen
from opkit.adopt.model import AdoptError, Skipped, dtype_default, SourceAttr, SourceOp, SourceTensor
from opkit.lint.sources import InputError
from opkit.lint.sources.msopgen_json import JsonOp, load_msopgen_json, strings, text_of

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
