"""The one step from a ``SourceOp`` to the ``OpSpec`` `opkit new` builds from a signature.

Inputs become ``Tensor`` / ``Tensor?`` / ``Tensor[]`` (``.Scalar()`` ones ``Scalar``); attrs typed
arguments with their defaults (a ``*`` keeps the source's attr order where an optional attr comes
before a required one); an output named like an input makes that input ``Tensor(a!)``; the other
outputs are the returns. Names and the OpType are kept as the source spells them. What the source
does not state (output sizes, the exact format pairing, a SoC) is listed in ``Adoption.notes``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from opkit import msopgen, naming
from opkit.formats.cpp_registrations import CPP_DEF_KIND
from opkit.formats.source_op import AdoptError, Skipped, SourceOp, SourceTensor
from opkit.generate.spec import OpSpec, SpecError, format_dtypes, make_spec
from opkit.signature import Alias, ArgType, Argument, Dialect, DType, OpSignature, Return, SchemaError, parse_schema

# msOpGen attr type → the schema type that maps back onto it (opkit.signature.model._ATTR_TYPES, reversed).
_SCHEMA_TYPES = {
    "int": ArgType("int"), "float": ArgType("float"), "bool": ArgType("bool"), "string": ArgType("str"),
    "type": ArgType("ScalarType"), "list_int": ArgType("int", is_list=True), "list_float": ArgType("float", is_list=True),
    "list_bool": ArgType("bool", is_list=True), "list_string": ArgType("str", is_list=True), "list_type": ArgType("ScalarType", is_list=True),
}  # fmt: skip


# An --output dtype in torch's spelling, as docs/new.md writes it (rstd=like:x,dtype:float32).
_RULE_DTYPES = {"float": "float32", "fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}


@dataclass(frozen=True)
class Adoption:
    """The spec adopted from a source, with what was skipped and what could not be carried over."""

    source: SourceOp
    spec: OpSpec
    notes: tuple[str, ...] = ()

    @property
    def skipped(self) -> tuple[Skipped, ...]:
        return self.source.skipped


def schema_default(value: object) -> str:
    """A default value in schema spelling: ``True``, ``1``, ``1e-06``, ``'BSH'``, ``[1,2]``, ``float``, ``None``."""
    if isinstance(value, DType):
        from opkit.signature import SCALAR_TYPE_DEFAULTS

        if value == msopgen.NONE_ATTR_DEFAULTS["type"]:
            return "None"
        return next(text for text, (name, _) in SCALAR_TYPE_DEFAULTS.items() if name == value.name)
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value + "'"
    if isinstance(value, list):
        return "[" + ",".join(schema_default(v) for v in value) + "]"
    return str(value)


def derived_schema(source: SourceOp, name: str) -> str:
    """The PyTorch schema the source's declarations map to (the inverse of ``msopgen.prototype_from_signature``)."""
    input_names = {t.name for t in source.inputs}
    written = [o for o in source.outputs if o.name in input_names]
    letters = {o.name: chr(ord("a") + i) for i, o in enumerate(written)}
    arguments: list[Argument] = []
    for t in source.inputs:
        base = "Scalar" if t.scalar else "Tensor"
        type_ = ArgType(base, optional=t.param_type == "optional", is_list=t.param_type == "dynamic")
        alias = Alias((letters[t.name],), True) if t.name in letters else None
        arguments.append(Argument(t.name, type_, alias=alias))
    for a in source.attrs:
        type_ = _SCHEMA_TYPES.get(a.type)
        if type_ is None:
            raise AdoptError(f"attr '{a.name}' of type {a.type} has no PyTorch schema type", path=source.path, line=a.line)
        default = None
        if a.unread_default:
            raise AdoptError(f"attr '{a.name}': its default {a.unread_default} is known only when the code runs; give the op's schema with --schema", path=source.path, line=a.line)
        if a.optional:
            default = "None" if a.default is None else schema_default(a.default)  # no value: `int? k=None`
            if default == "None":
                type_ = replace(type_, optional=True)
        arguments.append(Argument(a.name, type_, default))
    # An optional input takes ``=None`` when every argument after it has a default (so the schema stays valid).
    defaults_after = True  # every argument after i has a default (kept as the loop walks back: linear)
    for i in reversed(range(len(arguments))):
        a = arguments[i]
        if a.type.optional and a.default is None and a.type.base in ("Tensor", "Scalar") and defaults_after:
            arguments[i] = a = replace(a, default="None")
        defaults_after = defaults_after and a.default is not None
    # Positional defaults must trail: from the first default on, arguments are keyword-only if a required one follows.
    first_default = next((i for i, a in enumerate(arguments) if a.default is not None), len(arguments))
    if any(a.default is None for a in arguments[first_default:]):
        arguments = arguments[:first_default] + [replace(a, kwarg_only=True) for a in arguments[first_default:]]
    fresh = [o for o in source.outputs if o.name not in input_names]
    unnamed = ["out"] if len(fresh) == 1 else [f"out{i}" for i in range(len(fresh))]
    keep_names = [o.name for o in fresh] != unnamed
    returns = tuple(Return(ArgType("Tensor", is_list=o.param_type == "dynamic"), o.name if keep_names else None) for o in fresh)
    sig = OpSignature("", Dialect.OP_PLUGIN, name, arguments=tuple(arguments), returns=returns)
    return str(sig)


def _factor_columns(tensors: tuple[SourceTensor, ...], notes: list[str]) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """(formats, dtypes per descriptor): opkit pairs each dtype column with every format, in order."""
    formats = tuple(dict.fromkeys(tensors[0].formats)) if tensors else msopgen.DEFAULT_FORMATS
    k = len(formats)

    def factors(t: SourceTensor) -> bool:
        n = len(t.dtypes)
        return n % k == 0 and all(t.formats[i] == formats[i % k] and t.dtypes[i] == t.dtypes[i - i % k] for i in range(n))

    if all(factors(t) for t in tensors):
        return formats, {t.name: t.dtypes[::k] for t in tensors}
    common = Counter(f for t in tensors for f in t.formats).most_common(1)[0][0]
    listing = ", ".join(f"{t.name}: {','.join(t.formats)}" for t in tensors if set(t.formats) != {common})
    notes.append(f"format columns not carried over: opkit pairs every dtype with every format; kept {common} for all ({listing})")
    return (common,), {t.name: t.dtypes for t in tensors}


def _soc_version(family: str) -> str | None:
    """A SoC version of an AddConfig family (``ascend910b`` → ``ascend910b1``), as msOpGen's -c takes it."""
    for soc, fam in msopgen.SOC_FAMILIES.items():
        if fam == family and soc != "ascend910b":
            return soc
    return family if msopgen.soc_family(family) == family and family != "ascend910b" else None


def _yaml_outputs(source: SourceOp, sig: OpSignature, notes: list[str]) -> dict[str, dict]:
    """Output rules from the kept gen_opapi (``size: x`` → like x, ``dtype: at::kFloat`` → float32)."""
    from opkit.generate.spec import default_out_like

    gen = dict(source.entry).get("gen_opapi") or {}
    rules: dict[str, dict] = {}
    aten = {v: k for k, v in msopgen.ATEN_DTYPES.items()}
    names = {a.name for a in sig.arguments}
    default_like = default_out_like(sig)
    fresh = [n for r, n in zip(sig.returns, sig.output_names) if r.alias is None]
    for out in fresh:
        spec = gen.get(out)
        if not isinstance(spec, dict):
            continue
        size, dtype = str(spec.get("size", "")), str(spec.get("dtype", ""))
        rule = {"like": size if size in names else default_like}
        if size not in names:
            notes.append(f"output '{out}': gen_opapi size {size!r} is kept in the yaml; the Meta function and InferShape size it like {default_like} until you write that rule")
        if dtype in aten:
            name = next(n for n, ge in msopgen.DTYPES.items() if ge == aten[dtype])
            rule["dtype"] = _RULE_DTYPES.get(name, name)
        elif dtype and dtype not in names:
            notes.append(f"output '{out}': gen_opapi dtype {dtype!r} is kept in the yaml; the Meta function's dtype is that of {rule['like']}")
        elif dtype and dtype != rule["like"]:
            notes.append(f"output '{out}': the dtype of {dtype} with the size of {rule['like']} is not carried over (one like: per output)")
        if rule["like"] and rule != {"like": default_like}:
            rules[out] = rule
    return rules


def adopt_source(source: SourceOp, *, name: str | None = None, **options) -> Adoption:
    """The spec for ``source``: derived, then ``options`` (make_spec's, as the user gave them) on top.

    Raises AdoptError for a source that cannot become an op, with the source's location.
    """
    notes: list[str] = []
    options = {k: v for k, v in options.items() if v not in (None, "", (), [])}
    schema = options.pop("schema", None) or source.schema
    if schema and source.has_descriptors and source.kind == "OpDef C++":
        schema = _checked_comment(source, schema, notes)
    if schema:
        # the op name as written (``ns::name.overload`` → ``name``); make_spec parses and judges the schema
        name = name or schema.split("(", 1)[0].strip().rsplit("::", 1)[-1].split(".", 1)[0]
    else:
        name = name or naming.msopgen_snake(source.op_type)
        schema = derived_schema(source, name)
    op_type = options.pop("op_type", None) or source.op_type or _exec_op_type(source)
    if op_type and op_type != naming.op_type(name):
        options["op_type"] = op_type
    if source.has_descriptors:
        for t in (*source.inputs, *source.outputs):
            if t.param_type not in msopgen.TENSOR_PARAM_TYPES:
                raise AdoptError(f"'{t.name}' is ParamType {t.param_type.upper()}, which no PyTorch argument is", path=source.path, line=t.line)
            unwritable = [d for d in t.dtypes if d and d not in msopgen.DTYPES]
            if unwritable:
                raise AdoptError(f"'{t.name}' lists ge::DT_{unwritable[0].upper()}, which msOpGen 26.0.0 cannot write: give the op's columns with --dtypes", path=source.path, line=t.line)
            if not all(t.dtypes):
                n = len(t.dtypes)
                raise AdoptError(f"'{t.name}' lists {t.declared[0]} DataType columns where the op has {n} (column i of every descriptor is one combination)", path=source.path, line=t.line)
        _output_notes(source, schema, options, notes)
        _columns(source, options, notes)
        for config in source.soc_configs:
            declared = ", ".join(f"'{t.name}'" for t in (*config.inputs, *config.outputs))
            given = f" (given to {', '.join(config.socs)})" if config.socs else ""
            notes.append(f"OpAICoreConfig {config.name}{given} declares {declared} again for its SoCs: not carried over, the op's own columns are used")
        if "soc" not in options:
            socs = [s for s in (_soc_version(f) for f in source.socs) if s]
            if socs:
                options["soc"] = ",".join(dict.fromkeys(socs))
            elif source.aicpu:
                notes.append(f"{source.op_type} is an AI CPU op (this->AICPU()): opkit generates an AI Core project, for {msopgen.SOC_EXAMPLES[0]}; choose with --soc")
            else:
                notes.append(f"the {source.kind} names no SoC (AddConfig): {','.join(msopgen.SOC_EXAMPLES[:1])} is used; choose with --soc")
    if source.kind == CPP_DEF_KIND:  # torch.library's dialect, in the def's own namespace
        # an Ascend C source (.asc, or C++ launching a kernel with <<<>>>) keeps its op in C++: the extension style
        options.setdefault("style", "extension" if _launches_kernels(source.path) else "library")
        options.setdefault("namespace", dict(source.entry)["namespace"])
        notes.append("output sizes: each output is sized like --out-like (the C++ Meta or kernel is not read); give --output NAME=RULE where it differs")
    elif source.entry:
        entry = dict(source.entry)
        options["yaml_entry"] = entry
        if "outputs" not in options:
            try:
                sig = parse_schema(schema, Dialect.OP_PLUGIN)
                outputs = _yaml_outputs(source, sig, notes)
            except SchemaError:
                outputs = {}
            if outputs:
                options["outputs"] = outputs
    try:
        spec = make_spec(name, schema=schema, **options)
    except SpecError as exc:
        raise AdoptError(f"cannot adopt {source.op_type or name}: {exc}", path=source.path, line=source.schema_line or source.line) from None
    if source.has_descriptors:
        notes.extend(_differences(source, spec))
    return Adoption(source, spec, tuple(notes))


def _launches_kernels(path: str) -> bool:
    from opkit.formats.files import InputError, read_text
    from opkit.formats.kernel_launches import has_launches

    if path.lower().endswith(".asc"):
        return True
    try:
        return has_launches(read_text(path))
    except InputError:
        return False


def _exec_op_type(source: SourceOp) -> str:
    gen = dict(source.entry).get("gen_opapi") or {}
    op_type = naming.op_type_of_exec(str(gen.get("exec", "")))
    return op_type if op_type and op_type[0].isupper() else ""


def _checked_comment(source: SourceOp, schema: str, notes: list[str]) -> str:
    """The schema opkit's op_host states, if the OpDef still declares what that schema maps to; else ''."""
    try:
        proto = msopgen.prototype_from_signature(parse_schema(schema, Dialect.OP_PLUGIN), op_type=source.op_type)
    except (SchemaError, msopgen.UnsupportedSignature):
        try:
            proto = msopgen.prototype_from_signature(parse_schema(schema, Dialect.TORCH_LIBRARY), op_type=source.op_type)
        except (SchemaError, msopgen.UnsupportedSignature):
            notes.append(f"line {source.schema_line}: the stated schema does not map onto an OpDef; derived from the OpDef instead")
            return ""
    declared = ([(t.name, t.param_type) for t in source.inputs], [(t.name, t.param_type) for t in source.outputs], [(a.name, a.type, a.optional) for a in source.attrs])
    stated = ([(t.name, t.param_type) for t in proto.inputs], [(t.name, t.param_type) for t in proto.outputs], [(a.name, a.type, a.param_type == "optional") for a in proto.attrs])
    if declared != stated:
        notes.append(f"line {source.schema_line}: the OpDef no longer matches the schema its comment states; the schema is derived from the OpDef")
        return ""
    return schema


def _columns(source: SourceOp, options: dict, notes: list[str]) -> None:
    """--formats and --dtypes from the descriptors' columns; an output a dtype rule fixes needs no list of its own."""
    tensors = (*source.inputs, *source.outputs)
    formats, dtypes = _factor_columns(tensors, notes)
    options.setdefault("formats", ",".join(formats))
    if "dtypes" not in options:
        from opkit.generate.outputs import OutputRuleError, parse_outputs

        try:
            fixed = {r.name: r.dtype for r in parse_outputs(options.get("outputs")) if r.dtype}
        except OutputRuleError:
            fixed = {}  # make_spec reports the malformed rule
        common = Counter(dtypes[t.name] for t in tensors if t.name not in fixed).most_common(1)
        common_columns = common[0][0] if common else next(iter(dtypes.values()))
        named = tuple(
            (n, d) for n, d in dtypes.items()
            if d != common_columns and not (n in fixed and len(d) == len(common_columns) and {msopgen.DTYPES[t] for t in d} == {msopgen.DTYPES[fixed[n]]})
        )  # fmt: skip
        options["dtypes"] = format_dtypes(common_columns, named)


def _output_notes(source: SourceOp, schema: str, options: dict, notes: list[str]) -> None:
    """Output rules: a Follow gives the size; an output whose dtype is one fixed dtype, unlike its input's,
    gets a dtype rule. What an OpDef does not state (the sizes) is listed."""
    from opkit.generate.spec import default_out_like

    inputs = {t.name: t for t in source.inputs}
    try:
        sig = parse_schema(schema, Dialect.OP_PLUGIN if options.get("style", "op-plugin") == "op-plugin" else Dialect.TORCH_LIBRARY)
    except SchemaError:
        return
    default_like = options.get("out_like") or default_out_like(sig)
    rules, unsized = {}, []
    for o in source.outputs:
        if o.name in inputs:
            continue
        follows = o.follow in inputs and inputs[o.follow].param_type == "required"
        like = o.follow if follows else default_like
        if not follows:
            unsized.append(o.name)
        rule = {"like": like} if follows else {}
        if like in inputs and o.dtypes != inputs[like].dtypes:
            if len(set(o.dtypes)) == 1:
                rule = {"like": like, "dtype": _RULE_DTYPES.get(o.dtypes[0], o.dtypes[0])}
            else:
                notes.append(f"output '{o.name}': its dtype columns differ from those of {like}, which InferDataType and the Meta function copy; write the real rule")
        if rule and rule != {"like": default_like}:  # a Follow of the input outputs copy anyway needs no rule
            rules[o.name] = rule
    if rules and "outputs" not in options:
        options["outputs"] = rules
    if unsized:
        notes.append(f"output sizes: the {source.kind} does not state them; {', '.join(unsized)} sized like {default_like} in the Meta function and InferShape: write the real rule (--output NAME=like:ARG or your Meta code)")
    for t in source.inputs:
        if t.value_depend:
            notes.append(f"input '{t.name}' is ValueDepend: outputs that depend on its values need your Meta logic (PyTorch ops often take it as int[])")
    if source.kind == "msOpGen JSON":
        notes.append("an msOpGen JSON cannot mark a Scalar operand (.Scalar() in the OpDef): every input is a Tensor")


def _differences(source: SourceOp, spec: OpSpec) -> list[str]:
    """What the generated OpDef would declare differently from the source (nothing, for a source fully carried)."""
    proto = spec.prototype()
    notes = []
    for kind, mine, theirs in (("inputs", proto.inputs, source.inputs), ("outputs", proto.outputs, source.outputs)):
        a = [(t.name, t.param_type, tuple(msopgen.DTYPES[d] for d in t.types)) for t in mine]
        b = [(t.name, t.param_type, tuple(msopgen.DTYPES[d] for d in t.dtypes)) for t in theirs]
        if a != b:
            notes.append(f"{kind} generated differ from the source's: {[x[:2] for x in a]} vs {[x[:2] for x in b]}" if [x[:2] for x in a] != [x[:2] for x in b] else f"{kind}: dtype columns generated differ from the source's")
    attrs = [(a.name, a.type, a.param_type == "optional") for a in proto.attrs]
    if attrs != [(a.name, a.type, a.optional) for a in source.attrs]:
        notes.append(f"attrs generated differ from the source's: {attrs}")
    return notes
