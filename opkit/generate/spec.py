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
from opkit.generate.outputs import OutputRule, OutputRuleError, default_out_like, like_problem, parse_outputs, rank_read, shape_problem
from opkit.generate.refusals import dimname_refusal, library_command, library_suggestion
from opkit.generate.refusals import refusal as documented_refusal
from opkit.samples import sample_shape
from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema

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


def default_schema(name: str, *, inplace: bool) -> str:
    """A sensible starting signature when the user gives none, the same in every style.

    In-place follows op-plugin's rule: a MUTABLE op (no trailing '_', ``Tensor(a!)``, returning nothing,
    since a returned alias cannot enter a graph); custom_op writes the same schema and declares ``mutates_args``.
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
    # `opkit new --from` an op_plugin_functions.yaml entry: the entry's own fields (JSON text), kept as they are
    yaml_entry: str = ""
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

    @property
    def sample_shape(self) -> tuple[int, ...]:
        """The shape of the sample tensors the MRE passes and verify runs (as many dims as a size rule reads)."""
        return sample_shape(rank_read(self.outputs))

    def output_rule(self, name: str) -> OutputRule:
        """The size/dtype rule of fresh output ``name``: its own, else like ``out_like``; ``like`` defaults to ``out_like``."""
        rule = next((r for r in self.outputs if r.name == name), OutputRule(name))
        return rule if rule.like else replace(rule, like=self.out_like)

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
        if self.yaml_entry:
            data["yaml_entry"] = json.loads(self.yaml_entry)
        data["opkit_version"] = self.opkit_version
        return data

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"


def _parsed_outputs(value, *, where: str = "") -> tuple[OutputRule, ...]:
    try:
        return parse_outputs(value)
    except OutputRuleError as exc:
        raise SpecError(f"{where}{exc}") from None


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
    yaml_entry: str | dict | None = None,
    opkit_version: str = __version__,
) -> OpSpec:
    """Resolve defaults and validate every choice; raise SpecError with one clear message."""
    problem = naming.name_problem(name, what="op name")
    if problem:
        raise SpecError(problem)
    style = style or naming.default_style(name)
    if style not in STYLES:
        raise SpecError(f"unknown style {style!r}: choose one of {', '.join(STYLES)}")
    if not schema:
        schema = default_schema(name, inplace=inplace)
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
        outputs=_parsed_outputs(outputs),
        yaml_entry=_entry_text(yaml_entry),
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


def _entry_text(entry: str | dict | None) -> str:
    """A kept yaml entry as canonical JSON text (the spec stays hashable and prints back the same)."""
    if not entry:
        return ""
    data = json.loads(entry) if isinstance(entry, str) else entry
    if not isinstance(data, dict) or not isinstance(data.get("func"), str):
        raise SpecError("a kept yaml entry is a mapping with a func")
    return json.dumps(data, ensure_ascii=False)


def _checked_signature(spec: OpSpec, *, inplace: bool = False) -> OpSignature:
    try:
        sig = spec.signature
    except SchemaError as exc:
        dimname = dimname_refusal(spec.schema, spec.style, spec.dialect)
        if dimname is not None:
            raise SpecError(dimname) from None
        raise SpecError(f"bad schema {spec.schema!r}: {exc}{library_suggestion(spec.schema, spec.name, spec.style)}") from None
    if sig.name != spec.name:
        raise SpecError(f"the schema names the op {sig.name!r}, but NAME is {spec.name!r}")
    if inplace and not sig.mutated_arguments:
        raise SpecError("--inplace was given but the schema mutates no argument; annotate the written one Tensor(a!)")
    return sig


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
    refusal = documented_refusal(sig, spec.schema, spec.style)
    if refusal is not None:
        raise SpecError(refusal)
    for arg in sig.arguments:  # a name is an identifier: both dialects' parsers refuse any other
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
    if len({r.name for r in spec.outputs}) != len(spec.outputs):
        twice = next(r.name for i, r in enumerate(spec.outputs) if r.name in {o.name for o in spec.outputs[:i]})
        raise SpecError(f"--output {twice!r} is given twice; keep one rule per output")
    if fresh_names:
        for name in fresh_names:
            rule = spec.output_rule(name)
            what = f"--output {name}=like:" if any(r.name == name and r.like for r in spec.outputs) else "--out-like"
            own = next((r for r in spec.outputs if r.name == name), rule)
            problem = like_problem(sig, rule.like, what) or shape_problem(sig, own)
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


def op_type_clashes(spec: OpSpec, others: tuple[OpSpec, ...] = (), *, beside: str | os.PathLike | None = None) -> list[str]:
    """Warnings for an OpType that CANN already ships, or that another op takes (``scale`` and ``scale_``
    are both ``Scale``): ``others``, and with ``beside`` the opkit projects next to that directory."""
    declared = [(o.signature.name, o.resolved_op_type, "") for o in others]
    if beside is not None:
        declared += op_types_beside(beside)
    return op_type_warnings(spec.signature.name, spec.resolved_op_type, declared)


def op_type_warnings(name: str, op_type: str, others: list[tuple[str, str, str]]) -> list[str]:
    """The clash warnings of op ``name`` with OpType ``op_type`` among ``others`` (name, OpType, where it is
    declared): ops of another name taking the same OpType, and CANN's built-in OpTypes."""
    warnings = []
    if op_type in msopgen.CANN_BUILTIN_OP_TYPES:
        warnings.append(f"OpType {op_type} is a CANN built-in op: installing this package shadows it; choose another with --op-type")
    for other_name, other_type, where in others:
        if other_name != name and other_type == op_type:
            at = f" ({where})" if where else ""
            warnings.append(f"OpType {op_type} is also the OpType of {other_name}{at}: one OpType, two kernels, and the package installed last shadows the other; give one --op-type")
    return warnings


def op_types_beside(target: str | os.PathLike) -> list[tuple[str, str, str]]:
    """(name, OpType, its opkit.json) of the opkit projects next to ``target`` (the directories beside it).

    Read lightly (name, schema, op_type only): a broken neighbour is skipped, it is not this run's input.
    """
    from pathlib import Path

    target = Path(target).resolve()
    found = []
    parent = target.parent
    try:
        neighbours = sorted(p for p in parent.iterdir() if p != target and (p / SPEC_FILE).is_file())
    except OSError:
        return []
    for project in neighbours:
        path = project / SPEC_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            dialect = Dialect.OP_PLUGIN if data.get("style") == "op-plugin" else Dialect.TORCH_LIBRARY
            sig = parse_schema(data["schema"], dialect)
            found.append((sig.name, data.get("op_type") or sig.op_type, os.path.relpath(path)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue
    return found


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
    from opkit.formats.files import InputError, read_text

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
        outputs=_parsed_outputs(data.get("outputs"), where=f"{where}: outputs: "),
        yaml_entry=_entry_text(data.get("yaml_entry")),
        opkit_version=data.get("opkit_version", __version__),
    )
    validate_spec(spec)
    return spec
