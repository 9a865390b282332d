"""msOpGen prototype JSON rules (J): what msOpGen 26.0.0 does with each field (msopgen.md §1).

J0xx: one JSON file, field by field; most name what msOpGen silently drops or rewrites, since a
project generated from such a file builds and then misbehaves. J1xx: a prototype against the
PyTorch schema of the same op (``op`` == UpperCamelCase of the schema name), compared with
``opkit.msopgen.prototype_from_signature``, the mapping opkit's generator uses.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator

from opkit import msopgen
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.sources import LintProject
from opkit.lint.sources.msopgen_json import JsonOp, MsOpGenFile, strings, text_of
from opkit.lint.sources.op_plugin_yaml import YNode
from opkit.naming import IDENTIFIER_RE, upper_camel
from opkit.signature import OpSignature

_UPPER_CAMEL_RE = re.compile(r"^[A-Z][A-Za-z0-9]*$")
# .ini spellings of attr types people carry over into JSON (msopgen.md §1).
_INI_ATTR_TYPES = {"listInt": "list_int", "listFloat": "list_float", "listBool": "list_bool", "listListInt": "list_list_int", "str": "string"}


def _where(op: JsonOp) -> str:
    return f"op '{op.op}'" if op.op else f"op {op.index}"


def _located(item: YNode, key: str, message: str, op: JsonOp, hint: str | None = None) -> Violation:
    return Violation(message, line=item.key_lines.get(key, item.line), hint=hint, op=op.op)


@rule("J001", "op-missing", severity=Severity.ERROR, scope="msopgen", example='[{"input_desc": [], "output_desc": []}]')
def op_missing(file: MsOpGenFile) -> Iterator[Violation]:
    """An op object has no ``op`` name (or it is not a non-empty string).

    msOpGen names the OpDef class, the files and the kernel after ``op``; without it nothing is generated.
    """
    for op in file.ops:
        if not op.op:
            yield Violation(f"op {op.index} has no 'op' name", line=op.line_of("op"))


@rule("J002", "op-not-upper-camel", severity=Severity.WARNING, scope="msopgen", example='[{"op": "my_op", ...}]')
def op_not_upper_camel(file: MsOpGenFile) -> Iterator[Violation]:
    """The ``op`` name is not UpperCamelCase.

    msOpGen only warns, but file names, the kernel symbol and the aclnn name are derived from it, and
    TorchAir maps ``my_op`` to ``MyOp``: any other spelling breaks that mapping.
    """
    for op in file.ops:
        if op.op and IDENTIFIER_RE.match(op.op) and not _UPPER_CAMEL_RE.match(op.op):
            yield Violation(f"op name '{op.op}' is not UpperCamelCase", line=op.line_of("op"), hint=f"write '{upper_camel(op.op)}'", op=op.op)


@rule("J003", "invalid-name", severity=Severity.ERROR, scope="msopgen", example='{"op": "MyOp", "input_desc": [{"name": "1x", ...}]}')
def invalid_name(file: MsOpGenFile) -> Iterator[Violation]:
    """An op, input, output or attr name is missing or not a C identifier (``^[A-Za-z_][A-Za-z0-9_]*$``).

    msOpGen rejects it: the names become C++ identifiers in the OpDef and the kernel signature.
    """
    for op in file.ops:
        if op.op and not IDENTIFIER_RE.match(op.op):
            yield Violation(f"op name '{op.op}' is not a C identifier", line=op.line_of("op"), op=op.op)
        for key, item in [*op.descriptors, *(("attr", a) for a in op.attrs)]:
            name = text_of(item, "name")
            if name is None or not IDENTIFIER_RE.match(name):
                shown = f"'{name}' is not a C identifier" if name is not None else "has no name"
                yield _located(item, "name", f"{_where(op)}: an item of {key} {shown}", op)


@rule("J004", "param-type-invalid", severity=Severity.WARNING, scope="msopgen", example='{"name": "x", "param_type": "req", ...}')
def param_type_invalid(file: MsOpGenFile) -> Iterator[Violation]:
    """A ``param_type`` is missing or invalid; msOpGen makes it ``required`` with a warning.

    Tensors take ``required``, ``optional`` or ``dynamic``; attrs ``required`` or ``optional``. An
    optional input or attr silently turned required changes the aclnn API every caller compiles against.
    """
    for op in file.ops:
        checks = [(key, d, msopgen.TENSOR_PARAM_TYPES) for key, d in op.descriptors] + [("attr", a, msopgen.ATTR_PARAM_TYPES) for a in op.attrs]
        for key, item, allowed in checks:
            value = item.value.get("param_type")
            if value is None or value.value not in allowed:
                found = "missing" if value is None else f"{value.value!r}"
                yield _located(item, "param_type", f"{_where(op)}: {key} '{text_of(item, 'name')}' param_type is {found}; msOpGen uses 'required'", op, hint=f"one of {', '.join(allowed)}")


def _kept_descriptors(op: JsonOp) -> Iterator[tuple[str, YNode]]:
    """Descriptors msOpGen keeps: those with both ``type`` and ``format``."""
    for key, d in op.descriptors:
        if "type" in d.value and "format" in d.value:
            yield key, d


@rule("J005", "descriptor-dropped", severity=Severity.ERROR, scope="msopgen", example='{"name": "x", "param_type": "required", "type": ["fp16"]}')
def descriptor_dropped(file: MsOpGenFile) -> Iterator[Violation]:
    """An input or output has no ``type`` or no ``format``; msOpGen silently drops it.

    The generated OpDef and kernel then lack that tensor and every later parameter shifts.
    """
    for op in file.ops:
        for key, d in op.descriptors:
            missing = [k for k in ("type", "format") if k not in d.value]
            if missing:
                yield Violation(f"{_where(op)}: {key} '{text_of(d, 'name')}' has no {' or '.join(missing)}; msOpGen drops it silently", line=d.line, op=op.op)


def _unknown_dtypes(d: YNode) -> tuple[list[YNode], list[YNode]]:
    """(all items, unknown items) of a descriptor's ``type``."""
    items = strings(d.value.get("type")) or []
    return items, [t for t in items if not (isinstance(t.value, str) and t.value in msopgen.DTYPES)]


@rule("J006", "dtypes-all-unknown", severity=Severity.ERROR, scope="msopgen", example='{"name": "x", "type": ["FP16", "float64"], "format": ["ND", "ND"]}')
def dtypes_all_unknown(file: MsOpGenFile) -> Iterator[Violation]:
    """No dtype of a descriptor is one msOpGen knows; msOpGen stops with an error.

    dtype strings are case-sensitive: ``fp16``/``float16``/``half``, ``float``/``fp32``/``float32``,
    ``bf16``/``bfloat16``, ``int8`` ... ``uint64``, ``bool``, ``double``, ``complex64``/``128``.
    ``FP16``, ``float64`` and ``int4`` are unknown.
    """
    for op in file.ops:
        for key, d in _kept_descriptors(op):
            items, unknown = _unknown_dtypes(d)
            if len(unknown) == len(items):
                shown = ", ".join(repr(t.value) for t in unknown) or "an empty list"
                yield _located(d, "type", f"{_where(op)}: {key} '{text_of(d, 'name')}' has no known dtype ({shown})", op)


@rule("J007", "dtypes-some-unknown", severity=Severity.WARNING, scope="msopgen", example='{"name": "x", "type": ["fp16", "FP32"], "format": ["ND", "ND"]}')
def dtypes_some_unknown(file: MsOpGenFile) -> Iterator[Violation]:
    """Some dtypes of a descriptor are unknown; msOpGen drops them.

    The dropped columns disappear from the supported combinations, and the remaining lists no longer
    line up with the other descriptors' columns.
    """
    for op in file.ops:
        for key, d in _kept_descriptors(op):
            items, unknown = _unknown_dtypes(d)
            if unknown and len(unknown) < len(items):
                yield Violation(f"{_where(op)}: {key} '{text_of(d, 'name')}' has unknown dtypes {', '.join(repr(t.value) for t in unknown)}; msOpGen drops them", line=unknown[0].line, op=op.op)


@rule("J008", "unknown-format", severity=Severity.ERROR, scope="msopgen", example='{"name": "x", "type": ["fp16"], "format": ["nd"]}')
def unknown_format(file: MsOpGenFile) -> Iterator[Violation]:
    """A format string msOpGen does not know (ND, NCHW, NHWC, NC1HWC0, FRACTAL_NZ, ...).

    msOpGen only warns and writes ``ge::FORMAT_<name>``, which does not exist: the C++ build breaks.
    """
    for op in file.ops:
        for key, d in _kept_descriptors(op):
            unknown = [f for f in strings(d.value.get("format")) or [] if not (isinstance(f.value, str) and f.value in msopgen.FORMATS)]
            if unknown:
                yield Violation(f"{_where(op)}: {key} '{text_of(d, 'name')}' has unknown formats {', '.join(repr(f.value) for f in unknown)}; the generated C++ does not compile", line=unknown[0].line, op=op.op)


def _column_count(d: YNode) -> int | None:
    """Expanded length of a kept descriptor: a length-1 list broadcasts; None on a mismatch (J009)."""
    types, formats = len(strings(d.value.get("type")) or []), len(strings(d.value.get("format")) or [])
    if types == formats or formats == 1:
        return types
    return formats if types == 1 else None


@rule("J009", "type-format-length", severity=Severity.ERROR, scope="msopgen", example='{"name": "x", "type": ["fp16", "float", "bf16"], "format": ["ND", "ND"]}')
def type_format_length(file: MsOpGenFile) -> Iterator[Violation]:
    """Inside one descriptor ``type`` and ``format`` have different lengths, neither of them 1.

    Column *i* of ``type`` and ``format`` together is one supported combination; only a length-1
    list broadcasts. msOpGen rejects the descriptor.
    """
    for op in file.ops:
        for key, d in _kept_descriptors(op):
            if _column_count(d) is None:
                types, formats = strings(d.value["type"]), strings(d.value["format"])
                yield Violation(f"{_where(op)}: {key} '{text_of(d, 'name')}' has {len(types)} types but {len(formats)} formats", line=d.line, op=op.op)


@rule("J010", "column-count-mismatch", severity=Severity.ERROR, scope="msopgen", example='inputs x: 2 dtype columns, y: 3 dtype columns')
def column_count_mismatch(file: MsOpGenFile) -> Iterator[Violation]:
    """Descriptors of one op expand to different numbers of dtype/format columns.

    Column *i* of every input and output together is one supported dtype combination of the op, so
    every list must expand to the same length; msOpGen rejects the op otherwise. Descriptors that
    differ from the count most of them share are reported.
    """
    for op in file.ops:
        counts = [(key, d, n) for key, d in _kept_descriptors(op) if (n := _column_count(d)) is not None]
        if not counts:
            continue
        # The count most descriptors share is the op's; the others are the ones to fix.
        majority = Counter(n for _, _, n in counts).most_common(1)[0][0]
        ref_key, ref, _ = next(c for c in counts if c[2] == majority)
        for key, d, count in counts:
            if count != majority:
                yield Violation(
                    f"{_where(op)}: {key} '{text_of(d, 'name')}' has {count} dtype/format columns but {ref_key} '{text_of(ref, 'name')}' has {majority}",
                    line=d.line, op=op.op,
                )  # fmt: skip


@rule("J011", "duplicate-descriptor-name", severity=Severity.WARNING, scope="msopgen", example='"input_desc": [{"name": "x", ...}, {"name": "x", ...}]')
def duplicate_descriptor_name(file: MsOpGenFile) -> Iterator[Violation]:
    """Two inputs (or two outputs) share a name; msOpGen keeps the last one.

    An output named like an input is fine: that is how an in-place op is written.
    """
    for op in file.ops:
        for key, items in (("input_desc", op.inputs), ("output_desc", op.outputs)):
            seen: dict[str, int] = {}
            for d in items:
                name = text_of(d, "name")
                if name is None:
                    continue
                if name in seen:
                    yield Violation(f"{_where(op)}: {key} declares '{name}' again (first at line {seen[name]}); msOpGen keeps the last", line=d.line, op=op.op)
                seen.setdefault(name, d.line)


@rule("J012", "attr-unknown-type", severity=Severity.ERROR, scope="msopgen", example='"attr": [{"name": "k", "param_type": "required", "type": "listInt"}]')
def attr_unknown_type(file: MsOpGenFile) -> Iterator[Violation]:
    """An attr's ``type`` is missing or not an msOpGen attr type; msOpGen silently drops the attr.

    JSON attr types: int, float, bool, string, list_int, list_float, list_bool, list_list_int.
    ``listInt``, ``str`` ... are the .ini spellings.
    """
    for op in file.ops:
        for a in op.attrs:
            attr_type = text_of(a, "type")
            if attr_type in msopgen.ATTR_METHODS:
                continue
            hint = f"write '{_INI_ATTR_TYPES[attr_type]}' (the JSON spelling)" if attr_type in _INI_ATTR_TYPES else f"one of {', '.join(msopgen.ATTR_METHODS)}"
            found = f"type {attr_type!r}" if "type" in a.value else "no type"
            yield _located(a, "type", f"{_where(op)}: attr '{text_of(a, 'name')}' has {found}; msOpGen drops it silently", op, hint=hint)


@rule("J013", "attr-default-invalid", severity=Severity.ERROR, scope="msopgen", example='"attr": [{"name": "mode", "type": "string", "param_type": "optional", "default_value": "\\"mean\\""}]')
def attr_default_invalid(file: MsOpGenFile) -> Iterator[Violation]:
    """An attr's ``default_value`` contains ``; ' " ( )``, a newline, tab or backtick, or exceeds 1024 characters.

    msOpGen rejects such defaults: they are pasted into generated C++.
    """
    for op in file.ops:
        for a in op.attrs:
            node = a.value.get("default_value")
            if node is None:
                continue
            text = str(node.value)
            bad = sorted(set(text) & msopgen.FORBIDDEN_DEFAULT_CHARS)
            if bad:
                yield _located(a, "default_value", f"{_where(op)}: attr '{text_of(a, 'name')}' default_value contains forbidden characters {', '.join(map(repr, bad))}", op)
            if len(text) > msopgen.MAX_DEFAULT_LENGTH:
                yield _located(a, "default_value", f"{_where(op)}: attr '{text_of(a, 'name')}' default_value is {len(text)} characters, over {msopgen.MAX_DEFAULT_LENGTH}", op)


@rule("J014", "optional-attr-without-default", severity=Severity.WARNING, scope="msopgen", example='"attr": [{"name": "k", "type": "int", "param_type": "optional"}]')
def optional_attr_without_default(file: MsOpGenFile) -> Iterator[Violation]:
    """An optional attr has no ``default_value``.

    The OpDef then declares ``AttrType(OPTIONAL)`` with no value to fall back on, and the PyTorch
    schema has nothing to write as the argument's default.
    """
    for op in file.ops:
        for a in op.attrs:
            if text_of(a, "param_type") == "optional" and "default_value" not in a.value:
                yield Violation(f"{_where(op)}: optional attr '{text_of(a, 'name')}' has no default_value", line=a.line, op=op.op)


# ------------------------------------------------------------------------------------------------
# J1xx: the prototype against the PyTorch schema of the same op
# ------------------------------------------------------------------------------------------------


def _pairs(project: LintProject) -> Iterator[tuple[MsOpGenFile, JsonOp, OpSignature, msopgen.Prototype]]:
    """Each JSON op with the new op's schema of the same msOpGen name and that schema's prototype.

    Overloads share an op type (``my_op``, ``my_op.out``, ``my_op_`` → ``MyOp``): the default
    overload of the non-in-place name is the one msOpGen's prototype describes.
    """
    if not project.msopgen_files:
        return
    sigs = [s.signature for s in project.all_schema_sites() if s.is_custom and s.signature is not None]
    for file in project.msopgen_files:
        for op in file.ops:
            matches = sorted((sig for sig in sigs if sig.op_type == op.op), key=lambda s: (s.overload != "", s.is_inplace_name))
            if not matches:
                continue
            try:
                proto = msopgen.prototype_from_signature(matches[0])
            except msopgen.UnsupportedSignature:
                continue  # S203 explains what msOpGen cannot declare
            yield file, op, matches[0], proto


def _differs(what: str, found: list, expected: list) -> str | None:
    if found == expected:
        return None
    return f"{what} {found} but the schema gives {expected}"


@rule("J101", "prototype-inputs-mismatch", severity=Severity.ERROR, scope="project", example='schema my_op(Tensor x, Tensor? y) -> Tensor; JSON MyOp inputs [y, x]')
def prototype_inputs_mismatch(project: LintProject) -> Iterator[Violation]:
    """The JSON's inputs differ from the schema's tensor arguments in name, order or param_type.

    ``exec: aclnn<Op>`` passes the schema's arguments in order to the API msOpGen generated from the
    JSON: a different order or kind is a wrong call or a build failure. ``Tensor`` → required,
    ``Tensor?`` → optional, ``Tensor[]`` → dynamic.
    """
    for file, op, sig, proto in _pairs(project):
        found = [(text_of(d, "name"), text_of(d, "param_type") or "required") for d in op.inputs]
        problem = _differs("input_desc (name, param_type) is", found, [(i.name, i.param_type) for i in proto.inputs])
        if problem:
            yield Violation(f"{op.op}: {problem} ({sig})", line=op.line_of("input_desc"), path=file.path, op=op.op)


@rule("J102", "prototype-attrs-mismatch", severity=Severity.ERROR, scope="project", example='schema my_op(Tensor x, int k=1) -> Tensor; JSON attr k float required')
def prototype_attrs_mismatch(project: LintProject) -> Iterator[Violation]:
    """The JSON's attrs differ from the schema's non-tensor arguments in name, type, optional-ness or default.

    ``int`` → int, ``float`` → float, ``bool`` → bool, ``str`` → string, ``int[]`` → list_int ...; an
    argument with a default is an optional attr carrying that default. A mismatch makes the aclnn
    API take another C++ type than op-plugin passes.
    """

    def compared(rows: list[tuple]) -> list[tuple]:
        return [(*row[:3], _default_value(row[3])) for row in rows]

    for file, op, sig, proto in _pairs(project):
        found = [(text_of(a, "name"), text_of(a, "type"), text_of(a, "param_type") or "required", a.plain.get("default_value")) for a in op.attrs]
        expected = [(a.name, a.type, a.param_type, a.default_value) for a in proto.attrs]
        if compared(found) != compared(expected):
            problem = _differs("attr (name, type, param_type, default) is", found, expected)
            yield Violation(f"{op.op}: {problem} ({sig})", line=op.line_of("attr") if op.field("attr") else op.line, path=file.path, op=op.op)


def _default_value(default: object) -> object:
    """A default as a value, so ``1``, ``"1"`` and ``1.0``, or ``"[1, 1]"``, ``"{1,1}"`` and ``[1,1]``, compare equal."""
    if default is None or not isinstance(default, str):
        return default
    try:
        return json.loads(re.sub(r"\s+", "", default).lower().replace("{", "[").replace("}", "]"))
    except ValueError:
        return default


@rule("J103", "prototype-outputs-mismatch", severity=Severity.ERROR, scope="project", example='schema my_inplace(Tensor(a!) x, Tensor y) -> Tensor z; JSON outputs [z]')
def prototype_outputs_mismatch(project: LintProject) -> Iterator[Violation]:
    """The JSON's outputs differ from the schema's: mutated inputs first (same names), then fresh returns.

    An in-place op must declare each ``Tensor(a!)`` input again as an output of the same name, or the
    kernel gets no ``<name>_ref`` to write; each returned tensor is an output named by the return
    (``out``, ``out0``, ``out1`` ... when unnamed).
    """
    for file, op, sig, proto in _pairs(project):
        found = [text_of(d, "name") for d in op.outputs]
        problem = _differs("output_desc names are", found, [o.name for o in proto.outputs])
        if problem:
            yield Violation(f"{op.op}: {problem} ({sig})", line=op.line_of("output_desc"), path=file.path, op=op.op)
