"""A tolerant reader of Ascend C OpDef declarations (``op_host/*.cpp``, ``*_def.cpp``); not a C++ parser.

It finds each ``class X : public OpDef`` (or ``OP_ADD(X)`` with such a class), reads the constructor's
statements as fluent chains (``this->Input("x").ParamType(REQUIRED).DataType({...})...``) and keeps
what the op model needs: inputs, outputs, attrs, their columns, and the ``AddConfig`` SoCs. A call it
does not know is skipped and listed; unbalanced brackets, an unterminated string or a declaration it
cannot take (a dtype msOpGen does not know, a ParamType that is no param type) is one located error.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field

from opkit import msopgen
from opkit.formats.cpp_text import CppText, CppTextError
from opkit.formats.files import InputError, NotLinted
from opkit.formats.noqa import NoqaMap
from opkit.formats.schema_site import SchemaSite
from opkit.formats.source_op import AdoptError, Skipped, SourceAttr, SourceOp, SourceTensor, dtype_default

# opkit's generated op_host states the PyTorch schema it was generated from (a comment; data, not code).
SCHEMA_COMMENT = "// PyTorch schema: "

_GE_DTYPES = {ge: name for name, ge in reversed(list(msopgen.DTYPES.items()))}  # DT_FLOAT → float (first spelling)
_GE_DTYPES.update({"DT_FLOAT": "float", "DT_FLOAT16": "float16", "DT_BF16": "bfloat16"})
_ATTR_TYPES = {method: attr_type for attr_type, method in msopgen.ATTR_METHODS.items()}
_PARAM_TYPES = {"REQUIRED": "required", "OPTIONAL": "optional", "DYNAMIC": "dynamic"}

# Calls that say nothing a PyTorch schema or the op model carries (tiling, infer functions, kernel flags).
_NO_SCHEMA_MEANING = frozenset(
    """SetInferShape SetInferDataType SetInferShapeRange SetTiling SetCheckSupport SetOpSelectFormat
    SetGenBuildOptions AutoContiguous IgnoreContiguous DynamicCompileStaticFlag DynamicFormatFlag
    DynamicRankSupportFlag DynamicShapeSupportFlag NeedCheckSupportFlag PrecisionReduceFlag ExtendCfgInfo
    Comment OutputShapeDependOnCompute InitValue""".split()
)


@dataclass(frozen=True)
class _Call:
    name: str
    args: str  # the raw text between the parentheses ("" when called with none)
    line: int


_SEGMENT = re.compile(r"\s*(?:\.|->)?\s*([A-Za-z_][A-Za-z0-9_:]*)\s*")


def _chain(cpp: CppText, start: int, end: int) -> tuple[str, list[_Call]] | None:
    """``receiver.A(x).B(y)`` → (receiver, [A(x), B(y)]); None when the statement is not such a chain."""
    calls: list[_Call] = []
    code, i, receiver = cpp.code, start, None
    while i < end:
        m = _SEGMENT.match(code, i, end)
        if m is None:
            return None
        name, i = m[1], m.end()
        if i < end and code[i] == "(":
            close = cpp.closing(i)
            calls.append(_Call(name, code[i + 1 : close].strip(), cpp.line_of(m.start(1))))
            i = close + 1
        elif receiver is None and not calls:
            receiver = name
        else:
            return None
    return receiver or "", calls


def _string(args: str, what: str, path: str, line: int) -> str:
    text = args.split(",", 1)[0].strip()
    if not (len(text) >= 2 and text[0] == text[-1] == '"'):
        raise AdoptError(f"{what} takes a string literal, found {args!r}", path=path, line=line)
    return json.loads(text)


def _braced(args: str, vectors: dict[str, list[str]], what: str, path: str, line: int) -> list[str]:
    text = args.strip()
    copied = re.fullmatch(r"std::vector\s*<[^>]*>\s*\(\s*(\w+)\.begin\(\)\s*,\s*\1\.end\(\)\s*\)", text)
    text = copied[1] if copied else text
    if text in vectors:
        return vectors[text]
    text = re.sub(r"^std::vector<[^>]*>\s*", "", text)
    if not (text.startswith("{") and text.endswith("}")):
        raise AdoptError(f"{what} takes a braced list, found {args!r}", path=path, line=line)
    return [item.strip() for item in text[1:-1].split(",") if item.strip()]


def _dtype(item: str, path: str, line: int) -> str:
    ge = item.removeprefix("ge::").removeprefix("DataType::")
    if ge not in _GE_DTYPES:
        raise AdoptError(f"unknown data type {item!r}; msOpGen knows ge::{', ge::'.join(sorted(_GE_DTYPES))}", path=path, line=line)
    return _GE_DTYPES[ge]


def _format(item: str, path: str, line: int) -> str:
    fmt = item.removeprefix("ge::").removeprefix("Format::").removeprefix("FORMAT_")
    if fmt not in msopgen.FORMATS:
        raise AdoptError(f"unknown format {item!r}", path=path, line=line)
    return fmt


def _literal(text: str, attr_type: str, path: str, line: int) -> object:
    """A C++ default (``1L``, ``1e-6f``, ``true``, ``"a"``, ``{1, 2}``, ``ge::DT_FLOAT``) as a value."""
    text = text.strip()
    cast = re.fullmatch(r"(?:static_cast<[\w:]+>|u?int(?:8|16|32|64)_t|float|double|bool)\s*\((.*)\)", text)
    text = cast[1].strip() if cast else text
    if attr_type.startswith("list_"):
        if not (text.startswith("{") and text.endswith("}")):
            text = re.sub(r"^std::vector<[^>]*>\s*", "", text)
        if not (text.startswith("{") and text.endswith("}")):
            raise AdoptError(f"a {attr_type} default must be a braced list, found {text!r}", path=path, line=line)
        inner = text[1:-1].strip()
        if attr_type == "list_list_int":
            raise AdoptError("a list_list_int attr has no PyTorch schema type", path=path, line=line)
        return [_literal(item, attr_type.removeprefix("list_"), path, line) for item in _split_top(inner)] if inner else []
    try:
        if attr_type == "int":
            return int(re.sub(r"(?i)(ll|l|u|ul|ull)$", "", text), 0)
        if attr_type == "float":
            return float(re.sub(r"[fFlL]$", "", text))
        if attr_type == "bool":
            return {"true": True, "false": False, "1": True, "0": False}[text]
        if attr_type == "string":
            return json.loads(text)
        if attr_type == "type":
            return dtype_default(text)
    except (ValueError, KeyError):
        pass
    raise AdoptError(f"{text!r} is not a {attr_type} literal opkit can read", path=path, line=line)


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "({[" and 1 or (-1 if c in ")}]" else 0)
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


_CLASS = re.compile(r"\bclass\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:final\s*)?:\s*public\s+(?:ops::)?OpDef\b")
_VECTOR = re.compile(r"(?:const\s+)?std::vector\s*<\s*ge::(?:DataType|Format)\s*>\s+([A-Za-z_][A-Za-z0-9_]*)\s*=?\s*(\{[^{}]*\})")


def read_opdef(path: str, text: str, op: str | None = None) -> SourceOp:
    """The OpDef named ``op`` (or the file's only one) as a ``SourceOp``; AdoptError with its line otherwise."""
    source = _OpDefSource(path, text)
    classes = source.classes
    if not classes:
        raise AdoptError("no OpDef found (no `class X : public OpDef`)", path=path, line=1)
    if op is None and len(classes) > 1:
        raise AdoptError(f"{len(classes)} OpDefs ({', '.join(m[1] for m in classes)}); choose one with --op", path=path, line=source.cpp.line_of(classes[1].start()))
    chosen = classes[0] if op is None else next((m for m in classes if m[1] == op), None)
    if chosen is None:
        raise AdoptError(f"no OpDef {op!r}; the file declares {', '.join(m[1] for m in classes)}", path=path, line=1)
    return source.read(chosen)


def read_opdefs(path: str, text: str) -> list[SourceOp]:
    """Every OpDef of the file, in order, the file lexed once; AdoptError with its line for one it cannot read."""
    source = _OpDefSource(path, text)
    return [source.read(m) for m in source.classes]


class _OpDefSource:
    """One file's text, lexed once, and what every OpDef in it shares: its named dtype/format lists and
    opkit's schema comment."""

    def __init__(self, path: str, text: str):
        self.path = path
        try:
            self.cpp = CppText(text)
        except CppTextError as exc:
            raise AdoptError(exc.message, path=path, line=exc.line) from None
        self.classes = list(_CLASS.finditer(self.cpp.code))
        self._text = text

    @functools.cached_property
    def vectors(self) -> dict[str, list[str]]:
        return {m[1]: [i.strip() for i in m[2][1:-1].split(",") if i.strip()] for m in _VECTOR.finditer(self.cpp.code)}

    @functools.cached_property
    def schema_comment(self) -> tuple[str, int]:
        return _schema_comment(self._text)

    def read(self, chosen: re.Match) -> SourceOp:
        try:
            return self._read(chosen)
        except CppTextError as exc:
            raise AdoptError(exc.message, path=self.path, line=exc.line) from None

    def _read(self, chosen: re.Match) -> SourceOp:
        cpp, code, path = self.cpp, self.cpp.code, self.path
        op_type = chosen[1]
        open_brace = code.find("{", chosen.end())
        class_line = cpp.line_of(chosen.start())
        if open_brace < 0:
            raise AdoptError(f"OpDef {op_type} has no class body", path=path, line=class_line)
        class_end = cpp.closing(open_brace)
        ctor = re.compile(rf"\b{op_type}\s*\([^)]*\)\s*:\s*OpDef\s*\([^)]*\)\s*\{{").search(code, open_brace + 1, class_end)
        if ctor is None:
            raise AdoptError(f"OpDef {op_type} has no constructor `{op_type}(const char* name) : OpDef(name) {{...}}`", path=path, line=class_line)
        body_start = ctor.end() - 1
        body_end = cpp.closing(body_start)
        reader = _OpDefReader(path, cpp, self.vectors)
        for start, end in cpp.statements(body_start + 1, body_end):
            reader.statement(start, end)
        schema, schema_line = self.schema_comment
        return SourceOp(
            path=path, kind="OpDef C++", op_type=op_type, inputs=reader.tensors("Input"), outputs=reader.tensors("Output"),
            attrs=tuple(reader.attrs), socs=tuple(dict.fromkeys(reader.socs)), aicpu=reader.aicpu, skipped=tuple(reader.skipped),
            schema=schema, schema_line=schema_line, line=class_line,
        )  # fmt: skip


def _schema_comment(text: str) -> tuple[str, int]:
    at = text.find(SCHEMA_COMMENT)
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        if not text[line_start:at].strip():
            line_end = text.find("\n", at)
            line = text[at : len(text) if line_end < 0 else line_end]
            return line.strip().removeprefix(SCHEMA_COMMENT).strip(), text.count("\n", 0, at) + 1
        at = text.find(SCHEMA_COMMENT, at + 1)
    return "", 0


class _OpDefReader:
    """The constructor's statements, one at a time; the declarations in the order written."""

    def __init__(self, path: str, cpp: CppText, vectors: dict[str, list[str]]):
        self.path = path
        self.cpp = cpp
        self.vectors = vectors
        self.descriptors: dict[tuple[str, str], dict] = {}
        self.attrs: list[SourceAttr] = []
        self.socs: list[str] = []
        self.skipped: list[Skipped] = []
        self.configs: set[str] = set()
        self.aicpu = False

    def statement(self, start: int, end: int) -> None:
        statement, line = self.cpp.code[start:end], self.cpp.line_of(start)
        if _VECTOR.fullmatch(statement.removeprefix("static ").removeprefix("const ").strip()):
            return  # a dtype/format list, read with the file's other lists
        declared = re.fullmatch(r"(?:ops::)?OpAICoreConfig\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(.*\)|\{.*\})?", statement, re.S)
        if declared:
            self.configs.add(declared[1])
            return
        chain = _chain(self.cpp, start, end)
        if chain is None or not chain[1]:
            self.skipped.append(Skipped(line, f"statement not read: {statement.splitlines()[0][:80]}"))
            return
        receiver, calls = chain
        if receiver in self.configs:
            self._config(receiver, calls)
            return
        if receiver != "this":
            self.skipped.append(Skipped(line, f"statement not read: {statement.splitlines()[0][:80]}"))
            return
        head, rest = calls[0], calls[1:]
        if head.name in ("Input", "Output"):
            self._tensor(head, rest)
        elif head.name == "Attr":
            self._attr(head, rest)
        elif head.name == "AICore":
            self._aicore(rest)
        elif head.name == "AICPU":
            self.aicpu = True
            self._flags(rest)
        elif head.name in _NO_SCHEMA_MEANING:
            self._flags(rest)
        else:
            self.skipped.append(Skipped(head.line, f"unknown call this->{head.name}(...) skipped"))

    def _flags(self, calls: list[_Call]) -> None:
        for call in calls:
            if call.name not in _NO_SCHEMA_MEANING:
                self.skipped.append(Skipped(call.line, f"unknown call .{call.name}(...) skipped"))

    def _aicore(self, calls: list[_Call]) -> None:
        for call in calls:
            if call.name == "AddConfig":
                self.socs.append(_string(call.args, "AddConfig", self.path, call.line))
            elif call.name not in _NO_SCHEMA_MEANING:
                self.skipped.append(Skipped(call.line, f"unknown call AICore().{call.name}(...) skipped"))

    def _config(self, receiver: str, calls: list[_Call]) -> None:
        head = calls[0]
        if head.name in ("Input", "Output"):
            name = _string(head.args, head.name, self.path, head.line)
            self.skipped.append(Skipped(head.line, f"per-SoC {head.name.lower()} '{name}' of OpAICoreConfig {receiver} not carried over (the op's own columns are used)"))
            return
        self._flags(calls)

    def _tensor(self, head: _Call, calls: list[_Call]) -> None:
        name = _string(head.args, head.name, self.path, head.line)
        if (head.name, name) in self.descriptors:
            self.skipped.append(Skipped(head.line, f"{head.name.lower()} '{name}' is declared again (first at line {self.descriptors[(head.name, name)]['line']}): its calls are merged"))
        d = self.descriptors.setdefault((head.name, name), {"name": name, "line": head.line, "param_type": "required"})
        for call in calls:
            if call.name == "ParamType":
                value = call.args.strip().rsplit("::", 1)[-1]
                if value not in _PARAM_TYPES:
                    raise AdoptError(f"ParamType({call.args}) of {head.name.lower()} '{name}': expected REQUIRED, OPTIONAL or DYNAMIC", path=self.path, line=call.line)
                d["param_type"] = _PARAM_TYPES[value]
            elif call.name in ("DataType", "DataTypeList"):
                d[call.name] = [_dtype(i, self.path, call.line) for i in _braced(call.args, self.vectors, call.name, self.path, call.line)]
            elif call.name in ("Format", "FormatList"):
                d[call.name] = [_format(i, self.path, call.line) for i in _braced(call.args, self.vectors, call.name, self.path, call.line)]
            elif call.name == "UnknownShapeFormat":
                _braced(call.args, self.vectors, call.name, self.path, call.line)  # read (it must be well-formed), not kept: it repeats Format
            elif call.name == "Scalar":
                d["scalar"] = True
            elif call.name == "ValueDepend":
                d["value_depend"] = True
            elif call.name == "Follow":
                d["follow"] = _string(call.args, "Follow", self.path, call.line)
            elif call.name not in _NO_SCHEMA_MEANING:
                self.skipped.append(Skipped(call.line, f"unknown call .{call.name}(...) on {head.name.lower()} '{name}' skipped"))

    def _attr(self, head: _Call, calls: list[_Call]) -> None:
        name = _string(head.args, "Attr", self.path, head.line)
        attr_param, attr_type, value = None, None, None
        for call in calls:
            if call.name == "AttrType":
                attr_param = call.args.strip().rsplit("::", 1)[-1]
                if attr_param not in ("REQUIRED", "OPTIONAL"):
                    raise AdoptError(f"AttrType({call.args}) of attr '{name}': expected REQUIRED or OPTIONAL", path=self.path, line=call.line)
            elif call.name in _ATTR_TYPES:
                attr_type = _ATTR_TYPES[call.name]
                if call.args:
                    value = _literal(call.args, attr_type, self.path, call.line)
            elif call.name not in _NO_SCHEMA_MEANING:
                self.skipped.append(Skipped(call.line, f"unknown call .{call.name}(...) on attr '{name}' skipped"))
        if attr_type is None:
            raise AdoptError(f"attr '{name}' has no type (.Int(), .Float(), .ListInt(), ...)", path=self.path, line=head.line)
        optional = attr_param == "OPTIONAL"
        if optional and value is None and attr_type not in msopgen.NONE_ATTR_DEFAULTS:
            raise AdoptError(f"OPTIONAL attr '{name}' has no default value", path=self.path, line=head.line)
        if not optional and value is not None:
            self.skipped.append(Skipped(head.line, f"the value of REQUIRED attr '{name}' is not a default; it stays required"))
            value = None
        self.attrs.append(SourceAttr(name, attr_type, optional, value, head.line))

    def tensors(self, kind: str) -> tuple[SourceTensor, ...]:
        found = [d for (k, _), d in self.descriptors.items() if k == kind]
        columns = _expand_columns([d for d in self.descriptors.values()])
        out = []
        for d in found:
            dtypes, formats = columns[id(d)]
            if not any(dtypes):
                raise AdoptError(f"{kind.lower()} '{d['name']}' declares no DataType for every column", path=self.path, line=d["line"])
            declared = (len(d.get("DataType", ())), len(d.get("Format", ())))
            out.append(SourceTensor(d["name"], d["param_type"], dtypes, formats, d.get("scalar", False), d.get("value_depend", False), d.get("follow", ""), d["line"], declared))
        return tuple(out)


def _expand_columns(descriptors: list[dict]) -> dict[int, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each descriptor's (dtypes, formats), one per column: DataType/Format lists are paired column by
    column (a list of one is broadcast); a DataTypeList/FormatList combines with every column; a Follow
    descriptor copies the columns of the one it follows."""
    n = max([len(d.get("DataType", d.get("Format", []))) for d in descriptors] or [1]) or 1
    columns: list[dict[int, tuple[str, str]]] = [{} for _ in range(n)]
    followers = []
    for d in descriptors:
        if "follow" in d and "DataType" not in d and "DataTypeList" not in d:
            followers.append(d)
            continue
        types = d.get("DataType") or []
        formats = d.get("Format") or []
        for i, col in enumerate(columns):
            t = types[i] if len(types) > i else (types[0] if len(types) == 1 else None)
            f = formats[i] if len(formats) > i else (formats[0] if len(formats) == 1 else "ND")
            col[id(d)] = (t, f)
    for d in descriptors:
        for key, slot in (("DataTypeList", 0), ("FormatList", 1)):
            if key in d:
                columns = [{**col, id(d): tuple(v if k == slot else col[id(d)][k] for k in (0, 1))} for col in columns for v in d[key]]
    by_name = {d["name"]: d for d in descriptors if d not in followers}
    for d in followers:
        leader = by_name.get(d["follow"])
        for col in columns:
            col[id(d)] = col[id(leader)] if leader is not None else (None, "ND")
    result = {}
    for d in descriptors:
        pairs = [col[id(d)] for col in columns]
        result[id(d)] = (tuple(t or "" for t, _ in pairs), tuple(f for _, f in pairs))
    return result


# -- the file as `opkit lint` reads it ------------------------------------------------------------
# A file found by walking a directory without ``OpDef`` in it (a kernel, a tiling source) is not read;
# one that cannot be read as OpDefs (unbalanced brackets, an unknown dtype, ...) is E002 at its line.


@dataclass(eq=False)
class OpDefFile:
    path: str
    text: str
    ops: list[SourceOp]
    structure_errors: list[InputError] = field(default_factory=list)
    noqa: NoqaMap = field(default_factory=NoqaMap)

    def schema_sites(self) -> list[SchemaSite]:
        return []  # an OpDef declares no PyTorch schema; the drift rules (O1xx) pair it with one


def load_opdef_cpp(path: str, text: str, *, explicit: bool = True) -> OpDefFile:
    if "OpDef" not in text:
        if not explicit:
            raise NotLinted("a C++ file without an OpDef (a kernel or tiling source)")
        raise InputError("E003", "no OpDef found (no `class X : public OpDef`)")
    try:
        ops = read_opdefs(path, text)
        if not ops:
            raise AdoptError("no OpDef found (no `class X : public OpDef`)", path=path, line=1)
    except AdoptError as exc:
        if not explicit and "no OpDef found" in exc.message:
            raise NotLinted("a C++ file that mentions OpDef but declares none") from None
        raise InputError("E002", f"cannot read the OpDef: {exc.message}", line=exc.line or 1) from None
    return OpDefFile(path, text, ops, noqa=NoqaMap.from_text(text, comment="//"))
