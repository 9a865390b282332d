"""The op spec: every choice `opkit new` takes, validated once, and the file it is saved in.

``opkit.json`` in a generated project is this spec; it is the single source of truth a later opkit run
re-reads (``load_spec``) and re-checks. Everything the generator writes is derived from it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace

from opkit import __version__, msopgen, naming
from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema

SPEC_FILE = "opkit.json"
STYLES = ("op-plugin", "custom-op")
# torch_npu registers every op-plugin `custom:` entry in the npu namespace.
OP_PLUGIN_NAMESPACE = "npu"
CUSTOM_OP_NAMESPACE = "mylib"
DEFAULT_SOC = ("ascend910b1",)


class SpecError(ValueError):
    """A choice `opkit new` cannot honour; the message says which and what to do instead."""


def _split(value: str | list | tuple) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    return tuple(str(v).strip() for v in items if str(v).strip())


def default_schema(name: str, *, inplace: bool, style: str) -> str:
    """A sensible starting signature when the user gives none.

    In-place follows the dialect's rule: op-plugin needs a MUTABLE op (no trailing '_', ``Tensor(a!)``,
    returning nothing, since a returned alias cannot enter a graph); custom_op writes the same schema
    and declares ``mutates_args``.
    """
    if inplace:
        return f"{name}(Tensor(a!) x, Tensor y) -> ()"
    return f"{name}(Tensor x) -> Tensor"


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
    opkit_version: str = field(default=__version__, compare=False)

    @property
    def dialect(self) -> Dialect:
        return Dialect.OP_PLUGIN if self.style == "op-plugin" else Dialect.TORCH_LIBRARY

    @property
    def signature(self) -> OpSignature:
        return parse_schema(self.schema, self.dialect)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "schema": self.schema,
            "style": self.style,
            "namespace": self.namespace,
            "dtypes": list(self.dtypes),
            "formats": list(self.formats),
            "soc": list(self.soc),
            "out_like": self.out_like,
            "vendor": self.vendor,
            "opkit_version": self.opkit_version,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"


def make_spec(
    name: str,
    *,
    schema: str | None = None,
    inplace: bool = False,
    style: str = "op-plugin",
    namespace: str | None = None,
    dtypes: str | list | tuple = msopgen.DEFAULT_DTYPES,
    formats: str | list | tuple = msopgen.DEFAULT_FORMATS,
    soc: str | list | tuple = DEFAULT_SOC,
    out_like: str | None = None,
    vendor: str | None = None,
    opkit_version: str = __version__,
) -> OpSpec:
    """Resolve defaults and validate every choice; raise SpecError with one clear message."""
    problem = naming.name_problem(name, what="op name")
    if problem:
        raise SpecError(problem)
    if style not in STYLES:
        raise SpecError(f"unknown style {style!r}: choose one of {', '.join(STYLES)}")
    if not schema:
        schema = default_schema(name, inplace=inplace, style=style)
    spec = OpSpec(
        name=name,
        schema=schema.strip(),
        style=style,
        namespace=namespace or "",
        dtypes=_split(dtypes),
        formats=_split(formats),
        soc=tuple(s.lower() for s in _split(soc)),
        out_like=out_like or "",
        vendor=vendor or "",
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
        raise SpecError(f"bad schema {spec.schema!r}: {exc}") from None
    if sig.name != spec.name:
        raise SpecError(f"the schema names the op {sig.name!r}, but NAME is {spec.name!r}")
    if inplace and not sig.mutated_arguments:
        raise SpecError("--inplace was given but the schema mutates no argument; annotate the written one Tensor(a!)")
    return sig


def default_out_like(sig: OpSignature) -> str:
    """The tensor whose size and dtype fresh outputs copy: the first plain Tensor that is not written.

    torchair's my_inplace example sizes its output like ``y``, the input it does not mutate.
    """
    candidates = [a for a in sig.arguments if _can_be_out_like(a)]
    unwritten = [a for a in candidates if not a.is_mutated]
    chosen = (unwritten or candidates)[:1]
    return chosen[0].name if chosen else ""


def _can_be_out_like(arg) -> bool:
    return arg.is_tensor and not arg.type.is_list and not arg.type.optional


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
    for arg in sig.arguments:
        problem = naming.name_problem(arg.name, what="argument name")
        if problem or arg.name in naming.KERNEL_RESERVED:
            raise SpecError(problem or f"argument name {arg.name!r} is reserved by the generated kernel signature")
    for ret_name in sig.output_names:
        problem = naming.name_problem(ret_name, what="return name")
        if problem:
            raise SpecError(problem)
    problem = naming.name_problem(spec.namespace, what="namespace")
    if problem:
        raise SpecError(problem)
    if spec.style == "op-plugin" and spec.namespace != OP_PLUGIN_NAMESPACE:
        raise SpecError(f"op-plugin registers custom ops in the {OP_PLUGIN_NAMESPACE!r} namespace, not {spec.namespace!r}; use --style custom-op for another namespace")
    if sig.namespace and sig.namespace != spec.namespace:
        raise SpecError(f"the schema's namespace {sig.namespace!r} differs from --namespace {spec.namespace!r}")
    if spec.style == "custom-op":
        _check_custom_op(sig)
    if not spec.dtypes:
        raise SpecError("no dtypes given")
    for dtype in spec.dtypes:
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
    if sig.fresh_returns:
        arg = sig.argument(spec.out_like)
        if arg is None or not _can_be_out_like(arg):
            raise SpecError(f"--out-like must name a plain Tensor argument (not optional, not a list) whose size and dtype the outputs copy; got {spec.out_like!r}")
    elif spec.out_like and sig.argument(spec.out_like) is None:
        raise SpecError(f"--out-like {spec.out_like!r} is not an argument of the schema")
    try:
        msopgen.prototype_from_signature(sig, spec.dtypes, spec.formats)
    except msopgen.UnsupportedSignature as exc:
        raise SpecError(f"msOpGen cannot declare this op: {exc}") from None
    _check_lint_clean(spec)


def _check_custom_op(sig: OpSignature) -> None:
    """torch.library.custom_op infers the schema from Python annotations; some schemas it cannot produce."""
    if sig.overload:
        raise SpecError("custom_op ops have no overload name; drop '.%s'" % sig.overload)
    if any(r.name for r in sig.returns):
        raise SpecError("custom_op cannot name returns; write '-> Tensor' or '-> (Tensor, Tensor)'")
    for arg in sig.arguments:
        if arg.default is not None and arg.type.is_list:
            raise SpecError(f"custom_op cannot infer a list default ('{arg}'); drop the default or use --style op-plugin")


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
        opkit_version=data.get("opkit_version", __version__),
    )
    validate_spec(spec)
    return spec
