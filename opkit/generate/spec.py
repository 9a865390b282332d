"""The op spec: every choice `opkit new` takes, validated once, and the file it is saved in.

``opkit.json`` in a generated project is this spec; it is the single source of truth a later opkit run
re-reads (``load_spec``) and re-checks. Everything the generator writes is derived from it.
"""

from __future__ import annotations

import json
import keyword
import os
import re
from dataclasses import dataclass, field, replace

from opkit import __version__, msopgen, naming
from opkit.signature import REFUSED_TYPES, Dialect, OpSignature, SchemaError, parse_schema

SPEC_FILE = "opkit.json"
STYLES = ("op-plugin", "custom-op", "library")
# torch_npu registers every op-plugin `custom:` entry in the npu namespace.
OP_PLUGIN_NAMESPACE = "npu"
CUSTOM_OP_NAMESPACE = "mylib"
DEFAULT_SOC = ("ascend910b1",)


class SpecError(ValueError):
    """A choice `opkit new` cannot honour; the message says which and what to do instead."""


def _split(value: str | list | tuple) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    return tuple(str(v).strip() for v in items if str(v).strip())


def default_style(name: str) -> str:
    """op-plugin, except for a name ending in '_': torchgen reads it as an ATen in-place op that must
    return its input, which cannot enter a graph, while custom_op takes the name as it is."""
    return "custom-op" if name.endswith("_") and not name.startswith("__") else "op-plugin"


def default_schema(name: str, *, inplace: bool, style: str) -> str:
    """A sensible starting signature when the user gives none.

    In-place follows the dialect's rule: op-plugin needs a MUTABLE op (no trailing '_', ``Tensor(a!)``,
    returning nothing, since a returned alias cannot enter a graph); custom_op writes the same schema
    and declares ``mutates_args``.
    """
    if inplace:
        return f"{name}(Tensor(a!) x, Tensor y) -> ()"
    return f"{name}(Tensor x) -> Tensor"


def parse_dtypes(value: str | list | tuple) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """``--dtypes``: ``float16,float`` for every descriptor, or per descriptor ``x=float16,float;indices=int32,int32``
    (a part without a name is the columns of every descriptor not named). Returns (default, per descriptor)."""
    if not isinstance(value, str):
        return _split(value), ()
    default: tuple[str, ...] = ()
    named: dict[str, tuple[str, ...]] = {}
    for part in value.split(";"):
        if not part.strip():
            continue
        name, eq, types = part.partition("=")
        if not eq:
            default = _split(part)
            continue
        name = name.strip()
        if not naming.IDENTIFIER_RE.match(name):
            raise SpecError(f"--dtypes: {name!r} is not an input or output name (write NAME=dtype,dtype;...)")
        named[name] = _split(types)
    return default or msopgen.DEFAULT_DTYPES, tuple(named.items())


def format_dtypes(default: tuple[str, ...], named: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    """The ``--dtypes`` text of a spec's columns (``parse_dtypes`` reads it back)."""
    return ";".join([",".join(default), *(f"{n}={','.join(t)}" for n, t in named)])


@dataclass(frozen=True)
class OutputRule:
    """How one fresh output is sized and typed: like an input (size and dtype), or with a fixed dtype."""

    name: str
    like: str
    dtype: str = ""  # an msOpGen dtype; empty: the dtype of ``like``

    def to_json(self) -> dict:
        return {"like": self.like, **({"dtype": self.dtype} if self.dtype else {})}

    def __str__(self) -> str:
        return f"{self.name}=like:{self.like}" + (f",dtype:{self.dtype}" if self.dtype else "")


def parse_outputs(value: str | list | tuple | dict | None) -> tuple[OutputRule, ...]:
    """``--output rstd=like:x,dtype:float32`` (repeatable; ';' also separates rules)."""
    if not value:
        return ()
    if isinstance(value, dict):
        return tuple(OutputRule(n, str(r.get("like", "")), str(r.get("dtype", ""))) for n, r in value.items())
    parts = [p for item in ([value] if isinstance(value, str) else value) for p in str(item).split(";") if p.strip()]
    rules = []
    for part in parts:
        name, eq, body = part.partition("=")
        name = name.strip()
        if not eq or not naming.IDENTIFIER_RE.match(name):
            raise SpecError(f"--output {part.strip()!r}: write NAME=like:ARG[,dtype:DTYPE], e.g. rstd=like:x,dtype:float32")
        fields = {}
        for item in body.split(","):
            key, colon, val = item.partition(":")
            if not colon or key.strip() not in ("like", "dtype"):
                raise SpecError(f"--output {part.strip()!r}: {item.strip()!r} is not like:ARG or dtype:DTYPE")
            fields[key.strip()] = val.strip()
        rules.append(OutputRule(name, fields.get("like", ""), fields.get("dtype", "")))
    return tuple(rules)


@dataclass(frozen=True)
class OpSpec:
    name: str
    schema: str
    style: str = "op-plugin"
    namespace: str = OP_PLUGIN_NAMESPACE
    dtypes: tuple[str, ...] = msopgen.DEFAULT_DTYPES
    formats: tuple[str, ...] = msopgen.DEFAULT_FORMATS
    soc: tuple[str, ...] = DEFAULT_SOC
    out_like: str = ""
    vendor: str = ""
    op_type: str = ""  # --op-type; empty: the signature's (npu_<x> → <X>)
    descriptor_dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    outputs: tuple[OutputRule, ...] = ()
    opkit_version: str = field(default=__version__, compare=False)

    @property
    def dialect(self) -> Dialect:
        return Dialect.OP_PLUGIN if self.style == "op-plugin" else Dialect.TORCH_LIBRARY

    @property
    def signature(self) -> OpSignature:
        return parse_schema(self.schema, self.dialect)

    @property
    def resolved_op_type(self) -> str:
        return self.op_type or self.signature.op_type

    def output_rule(self, name: str) -> OutputRule:
        """The size/dtype rule of fresh output ``name``: its own, else like ``out_like``."""
        return next((r for r in self.outputs if r.name == name), OutputRule(name, self.out_like))

    def prototype(self) -> msopgen.Prototype:
        """The msOpGen prototype: output dtype rules fix their output's columns."""
        columns = dict(self.descriptor_dtypes)
        for rule in self.outputs:
            if rule.dtype and rule.name not in columns:
                columns[rule.name] = (rule.dtype,) * len(self.dtypes)
        return msopgen.prototype_from_signature(self.signature, self.dtypes, self.formats, descriptor_dtypes=columns, op_type=self.resolved_op_type)

    def to_json(self) -> dict:
        data = {
            "name": self.name,
            "schema": self.schema,
            "style": self.style,
            "namespace": self.namespace,
            "dtypes": list(self.dtypes),
            "formats": list(self.formats),
            "soc": list(self.soc),
            "out_like": self.out_like,
            "vendor": self.vendor,
        }
        if self.op_type:
            data["op_type"] = self.op_type
        if self.descriptor_dtypes:
            data["descriptor_dtypes"] = {n: list(t) for n, t in self.descriptor_dtypes}
        if self.outputs:
            data["outputs"] = {r.name: r.to_json() for r in self.outputs}
        data["opkit_version"] = self.opkit_version
        return data

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"


def make_spec(
    name: str,
    *,
    schema: str | None = None,
    inplace: bool = False,
    style: str | None = None,
    namespace: str | None = None,
    dtypes: str | list | tuple = msopgen.DEFAULT_DTYPES,
    formats: str | list | tuple = msopgen.DEFAULT_FORMATS,
    soc: str | list | tuple = DEFAULT_SOC,
    out_like: str | None = None,
    vendor: str | None = None,
    op_type: str | None = None,
    outputs: str | list | tuple | dict | None = None,
    opkit_version: str = __version__,
) -> OpSpec:
    """Resolve defaults and validate every choice; raise SpecError with one clear message."""
    problem = naming.name_problem(name, what="op name")
    if problem:
        raise SpecError(problem)
    style = style or default_style(name)
    if style not in STYLES:
        raise SpecError(f"unknown style {style!r}: choose one of {', '.join(STYLES)}")
    if not schema:
        schema = default_schema(name, inplace=inplace, style=style)
    default_dtypes, named_dtypes = parse_dtypes(dtypes)
    spec = OpSpec(
        name=name,
        schema=schema.strip(),
        style=style,
        namespace=namespace or "",
        dtypes=default_dtypes,
        formats=_split(formats),
        soc=tuple(s.lower() for s in _split(soc)),
        out_like=out_like or "",
        vendor=vendor or "",
        op_type=op_type or "",
        descriptor_dtypes=named_dtypes,
        outputs=parse_outputs(outputs),
        opkit_version=opkit_version,
    )
    sig = _checked_signature(spec, inplace=inplace)
    if not spec.namespace:
        spec = replace(spec, namespace=sig.namespace or (OP_PLUGIN_NAMESPACE if style == "op-plugin" else CUSTOM_OP_NAMESPACE))
    if not spec.out_like:
        spec = replace(spec, out_like=default_out_like(sig))
    if not spec.vendor:
        # Packages sharing a vendor name overwrite each other when installed: never 'customize'.
        spec = replace(spec, vendor=name)
    validate_spec(spec)
    return spec


def _checked_signature(spec: OpSpec, *, inplace: bool = False) -> OpSignature:
    try:
        sig = spec.signature
    except SchemaError as exc:
        dimname = _dimname_refusal(spec)
        if dimname is not None:
            raise dimname from None
        raise SpecError(f"bad schema {spec.schema!r}: {exc}{_library_suggestion(spec)}") from None
    if sig.name != spec.name:
        raise SpecError(f"the schema names the op {sig.name!r}, but NAME is {spec.name!r}")
    if inplace and not sig.mutated_arguments:
        raise SpecError("--inplace was given but the schema mutates no argument; annotate the written one Tensor(a!)")
    return sig


def _dimname_refusal(spec: OpSpec) -> SpecError | None:
    """torch 2.13's torchgen no longer parses Dimname: the documented refusal, with the int spelling."""
    if not re.search(r"\bDimname\b", spec.schema):
        return None
    fixed = re.sub(r"\bDimname\b", "int", spec.schema)
    try:
        parse_schema(fixed, spec.dialect)
    except SchemaError:
        return None
    return _refused(spec, [f"Dimname: {REFUSED_TYPES['Dimname']}"], fixed)


def _refused(spec: OpSpec, reasons: list[str], fixed: str) -> SpecError:
    import shlex

    fixed_name = fixed.split("(", 1)[0].split(".", 1)[0].rsplit("::", 1)[-1]
    style = f" --style {spec.style}" if spec.style != default_style(fixed_name) else ""
    return SpecError(
        f"cannot generate {spec.schema.split('(', 1)[0]}: {'; '.join(reasons)}. Corrected schema: {fixed} "
        f"(opkit new {fixed_name}{style} --schema {shlex.quote(fixed)})"
    )


def _library_suggestion(spec: OpSpec) -> str:
    """When only torch.library's dialect takes the schema: the exact command that generates it."""
    if spec.style == "library":
        return ""
    try:
        parse_schema(spec.schema, Dialect.TORCH_LIBRARY)
    except SchemaError:
        return ""
    return f"; torch.library takes it: use --style library: {library_command(spec.name, spec.schema)}"


def library_command(name: str, schema: str) -> str:
    import shlex

    return f"opkit new {name} --style library --schema {shlex.quote(schema)}"


def default_out_like(sig: OpSignature) -> str:
    """The tensor whose size and dtype fresh outputs copy: the first plain Tensor that is not written,
    else any plain Tensor, else the first Tensor[] (ops whose tensors are all lists).

    torchair's my_inplace example sizes its output like ``y``, the input it does not mutate.
    """
    candidates = [a for a in sig.arguments if _can_be_out_like(a)]
    unwritten = [a for a in candidates if not a.is_mutated]
    lists = [a for a in sig.arguments if a.is_tensor and a.type.is_list and not a.type.optional and not a.type.elem_optional]
    chosen = (unwritten or candidates or lists)[:1]
    return chosen[0].name if chosen else ""


def _can_be_out_like(arg) -> bool:
    return arg.is_tensor and not arg.type.is_list and not arg.type.optional


def _can_size_outputs(arg) -> bool:
    return _can_be_out_like(arg) or (arg.is_tensor and arg.type.is_list and not arg.type.optional and not arg.type.elem_optional)


def _out_like_problem(sig: OpSignature, like: str, what: str) -> str | None:
    """Why ``like`` cannot size an output, naming the argument and what would work; None if it can."""
    usable = [a.name for a in sig.arguments if _can_size_outputs(a)]
    would = f"use one of: {', '.join(usable)}" if usable else "the schema has no Tensor or Tensor[] argument to size outputs from"
    if not like:
        return f"{what}: no input to size the outputs from; {would}"
    arg = sig.argument(like)
    if arg is None:
        return f"{what} {like!r} is not an argument of the schema; {would}"
    if not _can_size_outputs(arg):
        kind = "optional (it may be None)" if arg.type.optional else f"a {arg.type}, not a tensor"
        return f"{what} {like!r} is {kind}: outputs copy the size and dtype of a Tensor or Tensor[] argument; {would}"
    return None


def corrected_schema(sig: OpSignature) -> str | None:
    """The schema to write instead of one opkit refuses by design, or None.

    Returned mutated inputs are dropped from the returns (a custom op must return () or fresh tensors),
    a trailing in-place '_' goes (torchgen requires such ops to return their input), Generator,
    Device, Layout and MemoryFormat arguments are dropped and a Dimname becomes an int.
    """
    from dataclasses import replace as dc_replace

    from opkit.signature import ArgType, Return

    changed = False
    arguments = []
    for a in sig.arguments:
        if a.type.base == "Dimname":
            arguments.append(dc_replace(a, type=ArgType("int", a.type.optional, a.type.is_list, a.type.size)))
            changed = True
        elif a.type.refusal:
            changed = True
        elif a.alias is not None and not a.alias.is_write:
            arguments.append(dc_replace(a, alias=None))  # a view's source: nothing aliases it once the return is fresh
        else:
            arguments.append(a)
    # A view (``-> Tensor(a)``) becomes a fresh tensor; a returned mutated input (``-> Tensor(a!)``) goes.
    returns = tuple(dc_replace(r, alias=None) for r in sig.returns if r.alias is None or not r.alias.is_write)
    name, overload = sig.name, sig.overload
    if any(r.alias is not None for r in sig.returns):
        changed = True
    if len(returns) != len(sig.returns):
        changed = True
        if sig.out_arguments:
            # An out= overload: graph code calls its functional twin, which returns the out tensors fresh.
            outs = {a.name for a in sig.out_arguments}
            named = len(outs) > 1
            returns = returns + tuple(Return(ArgType("Tensor"), a.name if named else None) for a in sig.out_arguments)
            arguments = [a for a in arguments if a.name not in outs]
            overload = ""
        elif sig.is_inplace_name and sig.dialect is Dialect.OP_PLUGIN:
            name = sig.name[:-1]
    if not changed:
        return None
    fixed = dc_replace(sig, name=name, overload=overload, arguments=tuple(arguments), returns=returns)
    return str(fixed)


def _refusal(sig: OpSignature, spec: OpSpec) -> SpecError | None:
    """A documented refusal: why, and the corrected schema with the command that generates it."""
    reasons = [f"'{a.type} {a.name}': {a.type.refusal}" for a in sig.arguments if a.type.refusal]
    if any(r.alias is not None and not r.alias.is_write for r in sig.returns):
        reasons.insert(0, "it returns a view of an input (-> Tensor(a)); a custom op's outputs must not alias its inputs: return a fresh Tensor")
    if any(r.alias is not None and r.alias.is_write for r in sig.returns):
        reasons.insert(0, "it returns a mutated input (-> Tensor(a!)), which automatic functionalization rejects, so it cannot enter an npugraph_ex graph; return () or fresh tensors")
    if not reasons:
        return None
    fixed = corrected_schema(sig)
    if fixed is None:
        return SpecError(f"cannot generate {sig.full_name}: {'; '.join(reasons)}")
    return _refused(spec, reasons, fixed)


def validate_spec(spec: OpSpec) -> None:
    """Every rule a spec must satisfy, whether it came from the command line or from opkit.json."""
    try:
        spec.schema.encode("utf-8")  # a lone surrogate: undecodable bytes on the command line, or a JSON escape
    except UnicodeEncodeError as exc:
        raise SpecError(f"the schema is not valid text: undecodable character at position {exc.start + 1}") from None
    problem = naming.name_problem(spec.name, what="op name")
    if problem:
        raise SpecError(problem)
    if spec.style not in STYLES:
        raise SpecError(f"unknown style {spec.style!r}: choose one of {', '.join(STYLES)}")
    sig = _checked_signature(spec)
    refusal = _refusal(sig, spec)
    if refusal is not None:
        raise refusal
    for arg in sig.arguments:
        if not naming.IDENTIFIER_RE.match(arg.name):
            raise SpecError(f"argument name {arg.name!r} is not an identifier")
        if keyword.iskeyword(arg.name):
            # torch builds Python signatures from schemas (opcheck, torch.fx, keyword-only calls): it fails on these.
            raise SpecError(f"argument name {arg.name!r} is a Python keyword, which PyTorch cannot take as a parameter name (opcheck, torch.fx); rename it, e.g. {arg.name}_")
    for ret_name in sig.output_names:
        problem = naming.name_problem(ret_name, what="return name")
        if problem:
            raise SpecError(problem)
    problem = naming.name_problem(spec.namespace, what="namespace")
    if problem:
        raise SpecError(problem)
    if spec.style == "op-plugin" and spec.namespace != OP_PLUGIN_NAMESPACE:
        raise SpecError(f"op-plugin registers custom ops in the {OP_PLUGIN_NAMESPACE!r} namespace, not {spec.namespace!r}; use --style custom-op or --style library for another namespace")
    if sig.namespace and sig.namespace != spec.namespace:
        raise SpecError(f"the schema's namespace {sig.namespace!r} differs from --namespace {spec.namespace!r}")
    if spec.style == "custom-op":
        _check_custom_op(sig, spec)
    if spec.op_type and not re.match(r"^[A-Z][A-Za-z0-9]*$", spec.op_type):
        raise SpecError(f"--op-type {spec.op_type!r} is not UpperCamelCase (e.g. SwiGlu)")
    if not spec.dtypes:
        raise SpecError("no dtypes given")
    for dtype in (*spec.dtypes, *(t for _, ts in spec.descriptor_dtypes for t in ts), *(r.dtype for r in spec.outputs if r.dtype)):
        if dtype not in msopgen.DTYPES:
            raise SpecError(f"unknown msOpGen dtype {dtype!r}; known: {', '.join(sorted(msopgen.DTYPES))}")
    if not spec.formats:
        raise SpecError("no formats given")
    for fmt in spec.formats:
        if fmt not in msopgen.FORMATS:
            raise SpecError(f"unknown msOpGen format {fmt!r}; known: {', '.join(sorted(msopgen.FORMATS))}")
    if not spec.soc:
        raise SpecError("no SoC given")
    for soc in spec.soc:
        if soc == "ascend910b":
            raise SpecError("SoC 'ascend910b' makes msOpGen target the first-generation Ascend 910; name the variant, e.g. ascend910b1 … ascend910b4")
        if msopgen.soc_family(soc) is None:
            raise SpecError(f"unknown SoC version {soc!r}; e.g. {', '.join(msopgen.SOC_EXAMPLES)}")
    problem = naming.name_problem(spec.vendor, what="vendor name")
    if problem:
        raise SpecError(problem)
    if spec.vendor == "customize":
        raise SpecError("vendor 'customize' is msOpGen's default: packages sharing it overwrite each other; choose a project-specific name")
    fresh_names = [n for r, n in zip(sig.returns, sig.output_names) if r.alias is None]
    for rule in spec.outputs:
        if rule.name not in fresh_names:
            raise SpecError(f"--output {rule.name!r} is not a returned tensor; outputs: {', '.join(fresh_names) or 'none'}")
    if fresh_names:
        for name in fresh_names:
            rule = spec.output_rule(name)
            what = f"--output {name}=like:" if any(r.name == name for r in spec.outputs) else "--out-like"
            problem = _out_like_problem(sig, rule.like, what)
            if problem:
                raise SpecError(problem)
    elif spec.out_like and sig.argument(spec.out_like) is None:
        raise SpecError(f"--out-like {spec.out_like!r} is not an argument of the schema")
    try:
        prototype = spec.prototype()
    except msopgen.UnsupportedSignature as exc:
        raise SpecError(f"msOpGen cannot declare this op: {exc}") from None
    _check_columns(spec, prototype)
    _check_lint_clean(spec)


def op_type_clashes(spec: OpSpec, others: tuple[OpSpec, ...] = ()) -> list[str]:
    """Warnings for an OpType that CANN already ships, or that another op of the same package takes
    (``scale`` and ``scale_`` are both ``Scale``): one kernel package cannot hold two ops of one type."""
    op_type = spec.resolved_op_type
    warnings = []
    if op_type in msopgen.CANN_BUILTIN_OP_TYPES:
        warnings.append(f"OpType {op_type} is a CANN built-in op: installing this package shadows it; choose another with --op-type")
    for other in others:
        if other.name != spec.name and other.resolved_op_type == op_type:
            warnings.append(f"OpType {op_type} is also the OpType of {other.name}: one package cannot hold both; give one --op-type")
    return warnings


def _check_columns(spec: OpSpec, prototype: msopgen.Prototype) -> None:
    """msOpGen's column rule: every descriptor lists the same number of (dtype, format) columns."""
    descriptors = {d.name for d in (*prototype.inputs, *prototype.outputs)}
    for name, _ in spec.descriptor_dtypes:
        if name not in descriptors:
            raise SpecError(f"--dtypes names {name!r}, which is not an input or output; descriptors: {', '.join(sorted(descriptors))}")
    for rule in spec.outputs:
        columns = dict(spec.descriptor_dtypes).get(rule.name, ())
        if rule.dtype and any(msopgen.DTYPES[t] != msopgen.DTYPES[rule.dtype] for t in columns):
            raise SpecError(f"--output {rule.name} has dtype {rule.dtype}, but --dtypes gives {rule.name} {','.join(columns)}; drop one")
    lengths = {d.name: len(d.types) for d in (*prototype.inputs, *prototype.outputs)}
    if len(set(lengths.values())) > 1:
        listing = ", ".join(f"{n}: {k // len(spec.formats)}" for n, k in lengths.items())
        raise SpecError(f"--dtypes: column i of every descriptor is one supported combination, so all need the same number of dtypes ({listing})")


def _check_custom_op(sig: OpSignature, spec: OpSpec) -> None:
    """torch.library.custom_op infers the schema from Python annotations; some schemas it cannot produce:
    those are answered with the --style library command that generates them."""
    use = f"; use --style library: {library_command(spec.name, spec.schema)}"
    if sig.overload:
        raise SpecError(f"custom_op ops have no overload name ('.{sig.overload}'){use}")
    if any(r.name for r in sig.returns):
        raise SpecError(f"custom_op cannot name returns{use}")
    if any(a.alias is not None and a.alias.shorthand for a in sig.arguments):
        raise SpecError(f"custom_op infers Tensor(a!) from mutates_args and cannot spell 'Tensor!'{use}")
    for arg in sig.arguments:
        if arg.default is not None and arg.type.is_list:
            raise SpecError(f"custom_op cannot infer a list default ('{arg}'){use}")
        if arg.type.base in ("Scalar", "ScalarType") or arg.type.elem_optional:
            raise SpecError(f"custom_op cannot infer '{arg.type}' from a Python annotation{use}")
        if arg.default is not None and arg.default in ("Mean", "Sum", "long", "float"):
            raise SpecError(f"custom_op cannot infer the enum default of '{arg}'{use}")


# Warnings that would make the generated project fail `opkit verify` (S107: opcheck's test_schema).
REFUSED_WARNINGS = ("S107",)


def _check_lint_clean(spec: OpSpec) -> None:
    """What opkit generates, opkit must accept: refuse a schema that `opkit lint` reports as an error."""
    from opkit.lint import Selection, Severity, lint

    result = lint(schemas=[spec.schema], dialect=spec.dialect, selection=Selection(select=("S",)))
    errors = [f for f in result.findings if f.severity >= Severity.ERROR or f.code in REFUSED_WARNINGS]
    if errors:
        first = errors[0]
        hint = f" (hint: {first.hint})" if first.hint else ""
        raise SpecError(f"the schema fails `opkit lint` {first.code}: {first.message}{hint}")


def load_spec(project_dir: str | os.PathLike) -> OpSpec:
    """Read and re-validate ``opkit.json`` of a generated project."""
    from opkit import jsonio
    from opkit.lint.sources import InputError, read_text

    path = os.path.join(project_dir, SPEC_FILE)
    try:
        data, duplicate_keys = jsonio.loads(read_text(path))
    except InputError as exc:
        raise SpecError(f"cannot read {path}: {exc.message}") from None
    except jsonio.JsonError as exc:
        raise SpecError(f"{path}:{exc.line}:{exc.column}: not valid JSON: {exc.message}") from None
    except RecursionError:
        raise SpecError(f"{path} is nested too deeply to read") from None
    if duplicate_keys:
        raise SpecError(f"{path}: key {duplicate_keys[0]!r} is given twice; keep one")
    return spec_from_json(data, where=path)


def spec_from_json(data: object, *, where: str = SPEC_FILE) -> OpSpec:
    from opkit.generate.schemas import SchemaViolation, validate_document

    try:
        validate_document(data, "opkit-spec")
    except SchemaViolation as exc:
        raise SpecError(f"{where}: {exc}") from None
    assert isinstance(data, dict)
    spec = OpSpec(
        name=data["name"],
        schema=data["schema"],
        style=data["style"],
        namespace=data["namespace"],
        dtypes=tuple(data["dtypes"]),
        formats=tuple(data["formats"]),
        soc=tuple(data["soc"]),
        out_like=data.get("out_like", ""),
        vendor=data["vendor"],
        op_type=data.get("op_type", ""),
        descriptor_dtypes=tuple((n, tuple(t)) for n, t in data.get("descriptor_dtypes", {}).items()),
        outputs=parse_outputs(data.get("outputs")),
        opkit_version=data.get("opkit_version", __version__),
    )
    validate_spec(spec)
    return spec
