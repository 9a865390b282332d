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
from opkit.formats.cpp_constants import CppConstants, Unreadable
from opkit.formats.cpp_text import CppText, CppTextError
from opkit.formats.files import InputError, NotLinted
from opkit.formats.noqa import NoqaMap
from opkit.formats.schema_site import SchemaSite
from opkit.formats.source_op import AdoptError, Skipped, SocConfig, SourceAttr, SourceOp, SourceTensor, dtype_default

# opkit's generated op_host states the PyTorch schema it was generated from (a comment; data, not code).
SCHEMA_COMMENT = "// PyTorch schema: "

_ATTR_TYPES = {method: attr_type for attr_type, method in msopgen.ATTR_METHODS.items()}
_PARAM_TYPES = {"REQUIRED": "required", "OPTIONAL": "optional", "DYNAMIC": "dynamic"}
# The rest of CANN's register/op_def.h Option enum: read and noted, no PyTorch argument has their meaning.
_OTHER_PARAM_TYPES = {"VIRTUAL": "virtual", "IGNORE": "ignore"}

# Calls that say nothing a PyTorch schema or the op model carries (tiling, infer functions, kernel flags).
_NO_SCHEMA_MEANING = frozenset(
    """SetInferShape SetInferDataType SetInferShapeRange SetTiling SetCheckSupport SetOpSelectFormat
    SetGenBuildOptions AutoContiguous IgnoreContiguous DynamicCompileStaticFlag DynamicFormatFlag
    DynamicRankSupportFlag DynamicShapeSupportFlag NeedCheckSupportFlag PrecisionReduceFlag ExtendCfgInfo
    Comment OutputShapeDependOnCompute InitValue Version DataTypeForBinQuery FormatForBinQuery OpKernelLib KernelSo
    UserDefined MC2 HcclGroup HcclServerType""".split()
)


@dataclass(frozen=True)
class _Call:
    name: str
    args: str  # the raw text between the parentheses ("" when called with none)
    line: int
    at: int = 0  # offset of the arguments in the file: the named constants in scope are those before it
    end: int = 0  # offset of the closing parenthesis


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
            calls.append(_Call(name, code[i + 1 : close].strip(), cpp.line_of(m.start(1)), i + 1, close))
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


def _dtype(item: str, path: str, line: int) -> str:
    """A ``ge::DataType`` as the op model's dtype name (``msopgen.ge_dtype_name``): any of graph/types.h."""
    ge = item.removeprefix("ge::").removeprefix("DataType::")
    if ge not in msopgen.GE_DATA_TYPES:
        raise AdoptError(f"unknown data type {item!r}: CANN's graph/types.h has no such ge::DataType", path=path, line=line)
    return msopgen.ge_dtype_name(ge)


def _is_ge_enumerator(word: str) -> bool:
    return word in msopgen.GE_DATA_TYPES or word.removeprefix("FORMAT_") in msopgen.GE_FORMATS and word.startswith("FORMAT_")


def _format(item: str, path: str, line: int) -> str:
    fmt = item.removeprefix("ge::").removeprefix("Format::").removeprefix("FORMAT_")
    if fmt not in msopgen.GE_FORMATS:
        raise AdoptError(f"unknown format {item!r}: CANN's graph/types.h has no such ge::Format", path=path, line=line)
    return fmt


def _literal(text: str, attr_type: str, path: str, line: int, constants: CppConstants | None = None, at: int = 0) -> object:
    """A C++ default (``1L``, ``1e-6f``, ``true``, ``"a"``, ``{1, 2}``, ``ge::DT_FLOAT``, a named constant or a
    constant expression of them) as a value; Unreadable for a value only known when the code runs."""
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
        return [_literal(item, attr_type.removeprefix("list_"), path, line, constants, at) for item in _split_top(inner)] if inner else []
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
    if constants is not None and attr_type in ("int", "float", "bool"):
        value = constants.value(text, at)  # Unreadable for the caller to report
        if attr_type == "int" and isinstance(value, bool | int):
            return int(value)
        if attr_type == "float" and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if attr_type == "bool" and isinstance(value, bool | int):
            return bool(value)
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


# \b as a lookbehind after the literal: searched for by the literal, not tried at every offset
_CLASS = re.compile(r"class(?<!\wclass)\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:final\s*)?:\s*public\s+(?:ops::)?OpDef\b")
_CONFIG_DECLARATION = re.compile(r"(?:ops::)?OpAICoreConfig\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(.*\)|\{.*\}|=.*)?", re.S)
_WORD = re.compile(r"[A-Za-z_]\w*")
_ENUMERATOR = re.compile(r"(?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*")  # ge::DT_FLOAT, DataType::DT_FLOAT, DT_FLOAT
_BRACKET_OR_QUOTE = re.compile(r"[()\[\]{}\"']")  # a list without them splits at every comma, as CppText.items splits it
_COPIED_LIST = re.compile(r"(?:std::)?vector\s*<[^>]*>\s*\(\s*(\w+)\s*\.\s*begin\(\)\s*,\s*\1\s*\.\s*end\(\)\s*\)")
_LIST_TYPE = re.compile(r"^(?:std::)?vector\s*<[^>]*>\s*")
_CONSTANT_OR_LIST = re.compile(r"(?:(?:static|const|constexpr|inline)\s+)*(?:std::)?(?:vector|initializer_list)\b|(?:static\s+)?(?:constexpr|const)\b")
# Declarations inside the constructor that the file's constants (``CppConstants``) read: lists and scalars.
_LOCAL_DECLARATION = re.compile(r"(?:(?:static|const|constexpr|inline)\s+)*(?:std::)?(?:(?:vector|initializer_list)\s*<\s*(?:ge::)?(?:DataType|Format)\s*>|[\w:]+)\s+[A-Za-z_]\w*\s*(?:=|\{|\(|$)")


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
    def constants(self) -> CppConstants:
        return CppConstants(self.cpp)

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
        ctor = _constructor(code, op_type, open_brace + 1, class_end)
        if ctor is None:
            raise AdoptError(f"OpDef {op_type} has no constructor `{op_type}(const char* name) : OpDef(name) {{...}}`", path=path, line=class_line)
        body_start = ctor.end() - 1
        body_end = cpp.closing(body_start)
        reader = _OpDefReader(path, cpp, self)
        for start, end in cpp.statements(body_start + 1, body_end):
            if code[start] != "#":  # #ifdef/#endif: both arms' declarations are read
                reader.statement(start, end)
        schema, schema_line = self.schema_comment
        return SourceOp(
            path=path, kind="OpDef C++", op_type=op_type, inputs=reader.tensors("Input"), outputs=reader.tensors("Output"),
            attrs=tuple(reader.attrs), socs=tuple(dict.fromkeys(reader.socs)), aicpu=reader.aicpu, skipped=tuple(reader.skipped),
            soc_configs=reader.per_soc(), helpers=tuple(reader.helpers),
            schema=schema, schema_line=schema_line, line=class_line,
        )  # fmt: skip


_CONSTRUCTOR_REST = re.compile(r"\s*\([^)]*\)\s*:\s*OpDef\s*\([^)]*\)\s*\{")


def _constructor(code: str, op_type: str, start: int, end: int) -> re.Match | None:
    """The first ``op_type(...) : OpDef(...) {`` in ``code[start:end]`` (``op_type`` a whole word), as the
    match of what follows the name: one pattern for every class, not one compiled per class."""
    at = code.find(op_type, start, end)
    while at >= 0:
        before = code[at - 1] if at > 0 else " "
        if not (before.isalnum() or before == "_"):  # \b: op_type starts with a word character
            rest = _CONSTRUCTOR_REST.match(code, at + len(op_type), end)
            if rest is not None:
                return rest
        at = code.find(op_type, at + 1, end)
    return None


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

    def __init__(self, path: str, cpp: CppText, source: _OpDefSource):
        self.path = path
        self.cpp = cpp
        self.source = source  # its named constants are collected when a call first names one
        self._columns: dict[int, dict] = {}  # descriptors' id → their columns, once all are read
        self.descriptors: dict[tuple[str, str], dict] = {}
        self.attrs: list[SourceAttr] = []
        self.socs: list[str] = []
        self.skipped: list[Skipped] = []
        self.configs: dict[str, dict[tuple[str, str], dict]] = {}  # OpAICoreConfig variable → its own descriptors
        self.soc_configs: dict[str, str] = {}  # AddConfig SoC → the OpAICoreConfig variable it is given
        self.helpers: list[str] = []
        self.aicpu = False

    def statement(self, start: int, end: int) -> None:
        statement, line = self.cpp.code[start:end], self.cpp.line_of(start)
        declared = _CONFIG_DECLARATION.fullmatch(statement)
        if declared:
            self.configs.setdefault(declared[1], {})
            return
        if _LOCAL_DECLARATION.match(statement) and _CONSTANT_OR_LIST.match(statement):
            return  # a dtype/format list or a named constant: read with the file's others (CppConstants)
        chain = _chain(self.cpp, start, end)
        if chain is not None and chain[1] and chain[0] == "" and len(chain[1]) == 1:
            helper = chain[1][0]
            self.helpers.append(helper.name)
            if re.search(r"aicpu", helper.name, re.I):
                self.aicpu = True  # ApplyNnAicpuDefaultCfg(*this): the helper makes it an AI CPU op
            self.skipped.append(Skipped(line, f"{helper.name}(...) not followed: what it declares is not read"))
            return
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
                soc = _string(call.args, "AddConfig", self.path, call.line)
                self.socs.append(soc)
                config = call.args.split(",", 1)[1].strip() if "," in call.args else ""
                if config in self.configs:
                    self.soc_configs[soc] = config
            elif call.name not in _NO_SCHEMA_MEANING:
                self.skipped.append(Skipped(call.line, f"unknown call AICore().{call.name}(...) skipped"))

    def _config(self, receiver: str, calls: list[_Call]) -> None:
        head = calls[0]
        if head.name in ("Input", "Output"):
            self._tensor(head, calls[1:], self.configs[receiver])
            return
        self._flags(calls)

    def _tensor(self, head: _Call, calls: list[_Call], descriptors: dict[tuple[str, str], dict] | None = None) -> None:
        """An Input/Output chain, into the op's descriptors or an OpAICoreConfig's."""
        descriptors = self.descriptors if descriptors is None else descriptors
        name = _string(head.args, head.name, self.path, head.line)
        if (head.name, name) in descriptors:
            self.skipped.append(Skipped(head.line, f"{head.name.lower()} '{name}' is declared again (first at line {descriptors[(head.name, name)]['line']}): its calls are merged"))
        d = descriptors.setdefault((head.name, name), {"name": name, "line": head.line, "param_type": "required"})
        for call in calls:
            if call.name == "ParamType":
                value = call.args.strip().rsplit("::", 1)[-1]
                if value in _OTHER_PARAM_TYPES:
                    d["param_type"] = _OTHER_PARAM_TYPES[value]
                    self.skipped.append(Skipped(call.line, f"ParamType({call.args}) of {head.name.lower()} '{name}': no PyTorch argument is {value}; the O1xx rules and `opkit new --from` do not pair it"))
                    continue
                if value not in _PARAM_TYPES:
                    raise AdoptError(f"ParamType({call.args}) of {head.name.lower()} '{name}': expected REQUIRED, OPTIONAL or DYNAMIC", path=self.path, line=call.line)
                d["param_type"] = _PARAM_TYPES[value]
            elif call.name in ("DataType", "DataTypeList"):
                items = self._list(call)
                if items is None:
                    d["unread"] = True
                else:
                    d[call.name] = [_dtype(i, self.path, call.line) for i in items]
            elif call.name in ("Format", "FormatList"):
                items = self._list(call)
                if items is not None:
                    d[call.name] = [_format(i, self.path, call.line) for i in items]
            elif call.name in ("UnknownShapeFormat", "UnknownShapeFormatList"):
                items = self._list(call)  # the formats of dynamic shapes: checked (O003), not kept
                if items is not None:
                    formats = [_format(i, self.path, call.line) for i in items]
                    if call.name == "UnknownShapeFormat":
                        d["UnknownShapeFormat"] = formats
            elif call.name == "Scalar":
                d["scalar"] = True
            elif call.name == "ValueDepend":
                d["value_depend"] = True
            elif call.name == "Follow":
                d["follow"] = _string(call.args, "Follow", self.path, call.line)
            elif call.name not in _NO_SCHEMA_MEANING:
                self.skipped.append(Skipped(call.line, f"unknown call .{call.name}(...) on {head.name.lower()} '{name}' skipped"))

    def _list(self, call: _Call) -> list[str] | None:
        """The items of a DataType/Format list argument as written: braced, a named list (or one inside the
        braces), a copy of one. None, the call listed as skipped, when only running the code would tell."""
        cpp, code = self.cpp, self.cpp.code
        start, end = cpp.trimmed(call.at, call.end)
        if start < end and code[start] == "{" and cpp.closing(start) == end - 1:  # the common case: a braced list
            inner = code[start + 1 : end - 1]
            if _BRACKET_OR_QUOTE.search(inner) is None:  # flat (most of ~11,000 lists in ops-nn): cut at its commas
                items = [item for item in (piece.strip() for piece in inner.split(",")) if item]
            else:
                items = [code[a:b] for a, b in cpp.items(start + 1, end - 1)]
            if all(_ENUMERATOR.fullmatch(item) and not _WORD.fullmatch(item) for item in items):
                return items
        text = call.args
        copied = _COPIED_LIST.fullmatch(text)
        text = copied[1] if copied else _LIST_TYPE.sub("", text)
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1].strip()
        try:
            if _WORD.fullmatch(text) and self.source.constants.is_list(text, call.at):
                return self.source.constants.items(text, call.at)
            if text.startswith("{") and text.endswith("}"):
                items = self.source.constants.expand(_split_top(text[1:-1]), call.at)
                computed = next((item for item in items if not _ENUMERATOR.fullmatch(item)), None)
                if computed is not None:
                    raise Unreadable(f"a list only known when the code runs ({computed[:60]!r})")
                unknown = next((item for item in items if _WORD.fullmatch(item) and not _is_ge_enumerator(item)), None)
                if unknown is not None:  # a variable the code fills (auto seq = gen.GetSequence(...))
                    raise Unreadable(f"{unknown!r} is not a list declared in the file")
                return items
            if _WORD.fullmatch(text):
                raise Unreadable(f"{text!r} is not a list declared in the file")
            raise Unreadable(f"a list only known when the code runs ({text[:60]!r})")
        except Unreadable as exc:
            self.skipped.append(Skipped(call.line, f"{call.name}(...) not read: {exc.reason}; its columns are unknown"))
            return None

    def _attr(self, head: _Call, calls: list[_Call]) -> None:
        name = _string(head.args, "Attr", self.path, head.line)
        attr_param, attr_type, value, unread = None, None, None, ""
        for call in calls:
            if call.name == "AttrType":
                attr_param = call.args.strip().rsplit("::", 1)[-1]
                if attr_param not in ("REQUIRED", "OPTIONAL"):
                    raise AdoptError(f"AttrType({call.args}) of attr '{name}': expected REQUIRED or OPTIONAL", path=self.path, line=call.line)
            elif call.name in _ATTR_TYPES:
                attr_type = _ATTR_TYPES[call.name]
                if call.args:
                    try:
                        value = _literal(call.args, attr_type, self.path, call.line, self.source.constants, call.at)
                    except Unreadable as exc:
                        unread = call.args
                        self.skipped.append(Skipped(call.line, f"the value of attr '{name}' ({call.args}) is not read: {exc.reason}"))
            elif call.name not in _NO_SCHEMA_MEANING:
                self.skipped.append(Skipped(call.line, f"unknown call .{call.name}(...) on attr '{name}' skipped"))
        if attr_type is None:
            raise AdoptError(f"attr '{name}' has no type (.Int(), .Float(), .ListInt(), ...)", path=self.path, line=head.line)
        optional = attr_param == "OPTIONAL"
        if optional and value is None and not unread and attr_type not in msopgen.NONE_ATTR_DEFAULTS:
            raise AdoptError(f"OPTIONAL attr '{name}' has no default value", path=self.path, line=head.line)
        if not optional and (value is not None or unread):
            value, unread = None, ""  # AttrType(REQUIRED).Int(0): a common idiom; the value is no default, the attr stays required
        self.attrs.append(SourceAttr(name, attr_type, optional, value, head.line, unread_default=unread))

    def tensors(self, kind: str, descriptors: dict[tuple[str, str], dict] | None = None) -> tuple[SourceTensor, ...]:
        descriptors = self.descriptors if descriptors is None else descriptors
        found = [d for (k, _), d in descriptors.items() if k == kind]
        key = id(descriptors)
        if key not in self._columns:
            self._columns[key] = _expand_columns(list(descriptors.values()))
        columns = self._columns[key]
        out = []
        for d in found:
            dtypes, formats = columns[id(d)]
            if not any(dtypes) and not any(other.get("unread") for other in descriptors.values()):
                raise AdoptError(f"{kind.lower()} '{d['name']}' declares no DataType for every column", path=self.path, line=d["line"])
            declared = (len(d.get("DataType", ())), len(d.get("Format", ())))
            out.append(SourceTensor(d["name"], d["param_type"], dtypes, formats, d.get("scalar", False), d.get("value_depend", False), d.get("follow", ""), d["line"], declared, len(d.get("UnknownShapeFormat", ()))))
        return tuple(out)


    def per_soc(self) -> tuple[SocConfig, ...]:
        """The OpAICoreConfig blocks that declare inputs or outputs of their own, with the SoCs given them."""
        return tuple(
            SocConfig(name, tuple(s for s, c in self.soc_configs.items() if c == name), self.tensors("Input", descriptors), self.tensors("Output", descriptors))
            for name, descriptors in self.configs.items()
            if descriptors
        )


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
