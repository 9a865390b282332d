"""The op spec: every choice `opkit new` takes, validated once, and the file it is saved in.

``opkit.json`` in a generated project is this spec; it is the single source of truth a later opkit run
re-reads (``load_spec``) and re-checks. Everything the generator writes is derived from it.
"""

from __future__ import annotations

import json
import keyword
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

from opkit import __version__, msopgen, naming
from opkit.generate.outputs import OutputRule, OutputRuleError, default_out_like, like_problem, parse_outputs, rank_read, shape_problem
from opkit.generate.refusals import Refusal, dimname_refusal, new_command, refusal_in_style, torch_library_takes
from opkit.generate.refusals import refusal as documented_refusal
from opkit.samples import sample_shape
from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema

SPEC_FILE = "opkit.json"
STYLES = ("op-plugin", "custom-op", "library", "extension")
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


def _same(value, where=""):
    return value


def _as_list(value: tuple) -> list:
    return list(value)


def _as_tuple(value: list, where: str = "") -> tuple:
    return tuple(value)


def _joined(spec: "OpSpec", value: tuple) -> str:
    return ",".join(value)


def _text(spec: "OpSpec", value: str) -> str:
    return value


@dataclass(frozen=True)
class Form:
    """How one OpSpec field is spelled outside the model.

    ``to_json``/``from_json``: its value in opkit.json (``from_json`` gets the file's name for messages);
    ``text``: its make_spec option as text, which is also the CLI option's value and the cookiecutter
    variable (None: no option of its own); ``omit_empty``: left out of opkit.json when empty.
    """

    to_json: Callable = _same
    from_json: Callable = _same
    text: Callable | None = _text
    omit_empty: bool = False


def _form(default, form: Form = Form(), **kwargs):
    return field(default=default, metadata={"form": form}, **kwargs)


def _outputs_from_json(value: dict, where: str) -> tuple[OutputRule, ...]:
    return _parsed_outputs(value, where=f"{where}: outputs: ")


_LIST = Form(to_json=_as_list, from_json=_as_tuple, text=_joined)


@dataclass(frozen=True)
class OpSpec:
    """Every choice of one op. The fields are listed once, here: opkit.json (``to_json``, ``spec_from_json``),
    the make_spec options and CLI values (``spec_options``) and the template context are derived from them."""

    name: str = field(metadata={"form": Form()})
    schema: str = field(metadata={"form": Form()})
    style: str = _form("op-plugin")
    namespace: str = _form(OP_PLUGIN_NAMESPACE)
    # --dtypes is one option for both columns: the default ones and, per descriptor, ``descriptor_dtypes``
    dtypes: tuple[str, ...] = _form(msopgen.DEFAULT_DTYPES, Form(_as_list, _as_tuple, lambda spec, value: format_dtypes(value, spec.descriptor_dtypes)))
    formats: tuple[str, ...] = _form(msopgen.DEFAULT_FORMATS, _LIST)
    soc: tuple[str, ...] = _form(DEFAULT_SOC, _LIST)
    out_like: str = _form("")
    vendor: str = _form("")
    op_type: str = _form("", Form(omit_empty=True))  # --op-type; empty: the signature's (npu_<x> → <X>)
    descriptor_dtypes: tuple[tuple[str, tuple[str, ...]], ...] = _form(
        (), Form(lambda v: {n: list(t) for n, t in v}, lambda v, where="": tuple((n, tuple(t)) for n, t in v.items()), None, omit_empty=True)
    )
    outputs: tuple[OutputRule, ...] = _form(
        (), Form(lambda v: {r.name: r.to_json() for r in v}, _outputs_from_json, lambda spec, v: ";".join(map(str, v)), omit_empty=True)
    )
    # `opkit new --from` an op_plugin_functions.yaml entry: the entry's own fields (JSON text), kept as they are
    yaml_entry: str = _form("", Form(json.loads, lambda v, where="": _entry_text(v), omit_empty=True))
    # --example (repeatable): the op's example calls, Python expressions verify evaluates with torch in scope
    examples: tuple[str, ...] = _form((), Form(_as_list, lambda v, where="": _examples(v), lambda spec, v: json.dumps(list(v)) if v else "", omit_empty=True))
    opkit_version: str = _form(__version__, Form(text=None), compare=False)

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
        data = {}
        for f in fields(self):
            form, value = f.metadata["form"], getattr(self, f.name)
            if value or not form.omit_empty:
                data[f.name] = form.to_json(value)
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
    dtypes: str | list | tuple | None = None,
    formats: str | list | tuple | None = None,
    soc: str | list | tuple | None = None,
    out_like: str | None = None,
    vendor: str | None = None,
    op_type: str | None = None,
    outputs: str | list | tuple | dict | None = None,
    yaml_entry: str | dict | None = None,
    examples: str | list | tuple | None = None,
    opkit_version: str = __version__,
) -> OpSpec:
    """Resolve defaults and validate every choice; raise SpecError with one clear message."""
    _refuse_control_characters(
        {"NAME": name, "--schema": (schema or "").strip(), "--style": style, "--namespace": namespace, "--dtypes": dtypes, "--formats": formats,
         "--soc": soc, "--out-like": out_like, "--vendor": vendor, "--op-type": op_type, "--output": outputs}  # fmt: skip
    )
    problem = naming.name_problem(name, what="op name")
    if problem:
        raise SpecError(problem)
    style = style or naming.default_style(name)
    if style not in STYLES:
        raise SpecError(f"unknown style {style!r}: choose one of {', '.join(STYLES)}")
    if schema is None:
        schema = default_schema(name, inplace=inplace)
    elif not schema.strip():
        # an empty --schema is a mistake (an unset shell variable, say), not a request for the default op
        raise SpecError(f"--schema is empty; give the op's signature, e.g. --schema '{default_schema(name, inplace=inplace)}', or leave --schema out for that default")
    default_dtypes, named_dtypes = parse_dtypes(msopgen.DEFAULT_DTYPES if dtypes is None else dtypes)
    spec = OpSpec(
        name=name,
        schema=schema.strip(),
        style=style,
        namespace=namespace or "",
        dtypes=default_dtypes,
        formats=_split(msopgen.DEFAULT_FORMATS if formats is None else formats),
        soc=tuple(s.lower() for s in _split(DEFAULT_SOC if soc is None else soc)),
        out_like=out_like or "",
        vendor=vendor or "",
        op_type=op_type or "",
        descriptor_dtypes=named_dtypes,
        outputs=_parsed_outputs(outputs),
        yaml_entry=_entry_text(yaml_entry),
        examples=_examples(examples),
        opkit_version=opkit_version,
    )
    sig = _checked_signature(spec, inplace=inplace)
    chosen = derived_defaults(spec, sig)
    spec = replace(spec, **{key: chosen[key] for key in ("namespace", "out_like", "vendor") if not getattr(spec, key)})
    validate_spec(spec)
    return spec


def _refuse_control_characters(values: dict[str, object]) -> None:
    """A value with a line break or another control character (a trailing newline pasted with it) would be
    written into generated Python, C++ and JSON: refused, naming the option."""
    from opkit.escaping import has_control, one_line

    for option, value in values.items():
        texts = [value] if isinstance(value, str) else list(value.keys()) + [str(v) for v in value.values()] if isinstance(value, dict) else [str(v) for v in value or ()] if isinstance(value, (list, tuple)) else []
        for text in texts:
            if isinstance(text, str) and has_control(text):
                raise SpecError(f"{option} {one_line(text)!r} holds a line break or another control character; give the value on one line, without them")


def derived_defaults(spec: OpSpec, sig: OpSignature | None = None) -> dict[str, str]:
    """What opkit chooses for the options left out, for the op of ``spec``'s name, schema and style."""
    sig = sig or spec.signature
    return {
        "style": naming.default_style(spec.name),
        "namespace": sig.namespace or (OP_PLUGIN_NAMESPACE if spec.style == "op-plugin" else CUSTOM_OP_NAMESPACE),
        "out_like": default_out_like(sig),
        # Packages sharing a vendor name overwrite each other when installed: never 'customize'.
        "vendor": spec.name,
    }


def spec_text(spec: OpSpec) -> dict[str, str]:
    """Every field that has an option, as the option's text (``name`` included): the template context."""
    return {f.name: f.metadata["form"].text(spec, getattr(spec, f.name)) for f in fields(spec) if f.metadata["form"].text is not None}


def spec_options(spec: OpSpec) -> dict[str, str]:
    """The make_spec options (and CLI values) that make ``spec`` again: ``make_spec(spec.name, **spec_options(spec))``."""
    options = spec_text(spec)
    del options["name"]
    return options


OPTION_NAMES = tuple(spec_options(OpSpec("x", "x(Tensor x) -> Tensor")))


def options_over(recorded: OpSpec, given: dict[str, object]) -> dict[str, object]:
    """The make_spec options of an op made again from ``recorded`` (an opkit.json) with the options ``given``.

    Every option given wins; the others keep their recorded values, except a value opkit had chosen by
    default (``derived_defaults`` of the recorded op: style, namespace, out_like, vendor), which is chosen
    again for the new op (a custom-op project turned op-plugin gets ``npu``, not the old ``mylib``). When the
    schema changes, recorded per-descriptor dtypes and output rules of tensors it no longer has are dropped.
    """
    options: dict[str, object] = spec_options(recorded)
    for key, default in derived_defaults(recorded).items():
        if options[key] == default:
            del options[key]
    if given.get("inplace") and not given.get("schema"):
        del options["schema"]  # --inplace alone asks for the default in-place schema
    options.update({k: v for k, v in given.items() if k != "inplace"})
    if "schema" in options and options["schema"] != recorded.schema:
        _drop_gone_tensors(options, recorded, given)
    return options


def _drop_gone_tensors(options: dict[str, object], recorded: OpSpec, given: dict[str, object]) -> None:
    style = str(options.get("style") or naming.default_style(recorded.name))
    try:
        sig = parse_schema(str(options["schema"]), Dialect.OP_PLUGIN if style == "op-plugin" else Dialect.TORCH_LIBRARY)
    except SchemaError:
        return  # make_spec says what is wrong with it
    tensors = {a.name for a in sig.arguments} | set(sig.output_names)
    if "dtypes" not in given:
        named = tuple((n, t) for n, t in recorded.descriptor_dtypes if n in tensors)
        options["dtypes"] = format_dtypes(recorded.dtypes, named)
    if "outputs" not in given:
        options["outputs"] = ";".join(str(r) for r in recorded.outputs if r.name in sig.output_names)


def spec_changes(old: OpSpec, new: OpSpec) -> list[str]:
    """``style: op-plugin -> custom-op`` for each option whose value differs between two specs."""
    before, after = spec_text(old), spec_text(new)
    return [f"{key}: {_shown(before[key])} -> {_shown(after[key])}" for key in after if before[key] != after[key]]


def _shown(text: str) -> str:
    """A value as ``spec_changes`` prints it: quoted where it has spaces (a schema's own ``->``)."""
    if not text:
        return "(none)"
    return repr(text) if any(ch.isspace() for ch in text) else text


def _examples(value: str | list | tuple | None) -> tuple[str, ...]:
    """The example expressions: a list (the CLI's repeated --example), or its JSON text (the template variable).
    Each must be one Python expression; it is evaluated only by verify, where torch is imported."""
    import ast

    if not value:
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise SpecError("examples: expected a JSON list of Python expressions") from None
        if not isinstance(value, list):
            raise SpecError("examples: expected a JSON list of Python expressions")
    examples = []
    for text in value:
        if not isinstance(text, str) or not text.strip():
            raise SpecError("--example: an empty example; write the call's arguments, e.g. --example 'torch.randn(2, 8), 2.0'")
        try:
            ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            raise SpecError(f"--example {text!r}, column {exc.offset or 1}: not a Python expression: {exc.msg}") from None
        examples.append(text.strip())
    return tuple(examples)


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
        refused = dimname_refusal(spec.schema, spec.style, spec.dialect) or refusal_in_style(spec.schema, spec.style)
        if refused is not None:
            raise refusal_error(refused) from None
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
        raise refusal_error(refusal)
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
    if spec.style == "extension":
        from opkit.generate.kernel_launch import UnsupportedArch, npu_arch

        try:
            npu_arch(spec.soc)
        except UnsupportedArch as exc:
            raise SpecError(str(exc)) from None
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


def command_problem(name: str, schema: str, *, style: str = "", outputs: tuple[OutputRule, ...] = ()) -> SpecError | None:
    """Why opkit would refuse ``opkit new NAME --schema SCHEMA [--style] [--output]`` (None: it is accepted)."""
    try:
        make_spec(name, schema=schema, style=style or None, outputs=[str(r) for r in outputs] or None)
    except SpecError as exc:
        return exc
    return None


def refusal_error(refused: Refusal) -> SpecError:
    """A documented refusal as the error to raise: with its command only when opkit accepts that command."""
    problem = command_problem(refused.name, refused.schema, style=refused.style, outputs=refused.outputs)
    if problem is not None:
        return SpecError(f"{refused.said}, which opkit refuses too: {problem}")
    return SpecError(str(refused))


def library_suggestion(schema: str, name: str, style: str) -> str:
    """When only torch.library's dialect takes the schema and opkit generates it in that style: the exact command."""
    if style == "library" or not torch_library_takes(schema):
        return ""
    problem = command_problem(name, schema, style="library")
    if problem is not None:
        return f"; torch.library's parser takes it, but --style library does not generate it either: {problem}"
    return f"; torch.library takes it: use --style library: {new_command(name, schema, style='library')}"


def library_use(name: str, schema: str) -> str:
    """``; use --style library: COMMAND`` where opkit generates ``schema`` in the library style; else why not."""
    problem = command_problem(name, schema, style="library")
    if problem is not None:
        return f"; --style library does not generate it either: {problem}"
    return f"; use --style library: {new_command(name, schema, style='library')}"


def _check_custom_op(sig: OpSignature, spec: OpSpec) -> None:
    """torch.library.custom_op infers the schema from Python annotations; some schemas it cannot produce:
    those are answered with the --style library command that generates them."""
    use = library_use(spec.name, spec.schema)
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


def is_project_source(path: str | os.PathLike) -> bool:
    """``opkit new --from`` a project: its directory, its opkit.json, or that spec kept under another name (a
    JSON object recording ``opkit_version``; an msOpGen prototype is a list of op objects)."""
    if os.path.isdir(path) or os.path.basename(os.fspath(path)) == SPEC_FILE:
        return True
    if not os.fspath(path).endswith(".json"):
        return False
    from opkit import jsonio
    from opkit.formats.files import InputError, read_text

    try:
        data, _ = jsonio.loads(read_text(os.fspath(path)))
    except (InputError, OSError, jsonio.JsonError, RecursionError):
        return False  # the msOpGen reader says what is wrong with it
    return isinstance(data, dict) and "opkit_version" in data


def load_spec(project: str | os.PathLike) -> OpSpec:
    """Read and re-validate the spec of a generated project: its directory, or its ``opkit.json``."""
    from opkit import jsonio
    from opkit.formats.files import InputError, read_text

    path = os.path.join(project, SPEC_FILE) if os.path.isdir(project) else os.fspath(project)
    if os.path.isdir(project) and not os.path.lexists(path):
        raise SpecError(f"{project} is not an opkit project: it has no {SPEC_FILE}")
    try:
        data, duplicate_keys = jsonio.loads(read_text(path))
    except InputError as exc:
        raise SpecError(f"cannot read {path}: {exc.message}") from None
    except OSError as exc:  # opkit.json a directory, a dangling link, ...
        raise SpecError(f"cannot read {path}: {exc.strerror or exc}") from None
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
    values = {f.name: f.metadata["form"].from_json(data[f.name], where) for f in fields(OpSpec) if f.name in data}
    spec = OpSpec(**values)
    validate_spec(spec)
    return spec
