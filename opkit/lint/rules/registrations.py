"""Meta/fake registration rules (M): Python registration files checked against the op schemas.

How PyTorch calls a Meta or fake function (``parseIValuesToPyArgsKwargs`` in torch/csrc): positional
schema arguments are passed positionally, trailing positional arguments equal to their default are
dropped, keyword-only arguments are passed by name and omitted when equal to their default. The
function's return value is then checked against the schema's returns (``None`` for ``-> ()``).
Every M rule that needs a schema is a project rule: the schema may come from op_plugin_functions.yaml
(``custom:``), ``--schema``, ``Library.define`` or the custom_op's own annotations. Findings sit on
the registration's line (the decorator), where ``# noqa: M00x`` suppresses them.
"""

from __future__ import annotations

import ast
import builtins
import keyword
from collections.abc import Iterator
from dataclasses import dataclass

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule, shared_index
from opkit.lint.sources import LintProject, SchemaSite
from opkit.lint.sources.registrations import MUTATES_UNKNOWN, CustomOp, Registration, RegistrationFile, ReturnSite, exclusive
from opkit.signature import Argument, Dialect, OpSignature, SchemaError, parse_schema

_UNKNOWN = object()  # a default whose value cannot be known without running code


# ------------------------------------------------------------------------------------------------
# Binding registrations to schemas
# ------------------------------------------------------------------------------------------------


# Namespaces PyTorch itself defines: their schemas are ATen's (native_functions.yaml and friends), which
# no linted input declares in full (op_plugin_functions.yaml's ``official:`` lists only the ATen ops
# with NPU kernels), so a Meta registration for one of their ops cannot be called unknown.
TORCH_NAMESPACES = frozenset({"aten", "prim", "prims", "quantized", "_quantized", "sparse", "c10d", "_c10d_functional", "profiler"})


@dataclass(frozen=True)
class _Schema:
    site: SchemaSite
    sig: OpSignature
    namespace: str  # "" for a --schema string without one: any namespace

    def declares(self, reg: Registration) -> bool:
        return self.sig.name == reg.name and self.sig.overload == reg.overload and self.covers(reg.namespace)

    def covers(self, namespace: str) -> bool:
        return not self.namespace or not namespace or self.namespace == namespace


# Which schema a registration binds to when several declare it: the op's own entry first.
_SECTION_RANK = {"custom": 0, None: 0, "official": 1, "autograd": 2, "symint": 3, "quant": 4}


class _Index:
    """Every schema of the project, keyed by (name, overload), built once per lint run."""

    def __init__(self, project: LintProject):
        sites = [site for site in project.all_schema_sites() if site.signature is not None]
        # op_plugin_functions.yaml has no namespaces: ``custom:`` ops live in ``npu``, and so do their
        # repeats in other sections (``symint:`` repeats custom funcs whose kernels take SymInt); the
        # rest is ``aten``.
        custom_names = {(site.path, site.signature.name) for site in sites if site.section == "custom"}
        self.schemas: list[_Schema] = []
        for site in sites:
            sig = site.signature
            if sig.namespace or site.section is None:
                namespace = sig.namespace
            else:
                namespace = "npu" if (site.path, sig.name) in custom_names else "aten"
            self.schemas.append(_Schema(site, sig, namespace))
        self.by_op: dict[tuple[str, str], list[_Schema]] = {}
        for schema in sorted(self.schemas, key=lambda s: _SECTION_RANK.get(s.site.section, 5)):
            self.by_op.setdefault((schema.sig.name, schema.sig.overload), []).append(schema)
        self.inferred: dict[tuple[str, int, int, str | None], _Schema] = {
            (s.site.path, s.site.line, s.site.column, s.site.op_hint): s for s in self.schemas if s.site.op_hint is not None
        }

    def declaring(self, reg: Registration) -> list[_Schema]:
        """Schemas that declare ``reg``'s op, those in its own namespace first."""
        found = [s for s in self.by_op.get((reg.name, reg.overload), ()) if s.covers(reg.namespace)]
        return sorted(found, key=lambda s: s.namespace != reg.namespace)  # stable: section order within

    def inferred_from(self, path: str, op: CustomOp) -> _Schema | None:
        return self.inferred.get((path, op.line, op.column, op.name))


@shared_index
def _index(project: LintProject) -> _Index:
    """The project's schema index, built once: six rules bind registrations to schemas."""
    return _Index(project)


@dataclass(frozen=True)
class _Bound:
    file: RegistrationFile
    reg: Registration
    schema: _Schema

    def violation(self, message: str, hint: str | None = None) -> Violation:
        return Violation(message, line=self.reg.line, column=self.reg.column, hint=hint, path=self.file.path, op=self.reg.op)


def _registrations(project: LintProject) -> Iterator[tuple[RegistrationFile, Registration]]:
    for file in project.python_files:
        for reg in file.registrations:
            yield file, reg


def _bound(project: LintProject) -> Iterator[_Bound]:
    """Each registration with the schema PyTorch will call it for.

    A custom_op's fake binds to the custom_op's own inferred schema (what torch registers at run
    time); any other registration to a declaring schema, the one in its namespace first, then the
    op's own section before its repeats (``custom:`` before ``symint:``).
    """
    if not project.python_files:  # nothing registered: skip indexing every schema of a large yaml
        return
    index = _index(project)
    for file, reg in _registrations(project):
        if reg.custom_op is not None:
            own = index.inferred_from(file.path, reg.custom_op)
            if own is not None:
                yield _Bound(file, reg, own)
            continue
        candidates = index.declaring(reg)
        if candidates:
            yield _Bound(file, reg, candidates[0])


_PYTHON_RESERVED = frozenset(keyword.kwlist) | frozenset(dir(builtins))


def _schema_name(parameter: str) -> str:
    """The schema argument a parameter spells: ``input_`` is ``input`` (PEP 8's trailing underscore
    for a name that would be a keyword or shadow a builtin), anything else itself."""
    base = parameter[:-1]
    return base if parameter.endswith("_") and base in _PYTHON_RESERVED else parameter


# ------------------------------------------------------------------------------------------------
# Defaults: schema text and Python expressions, compared as values
# ------------------------------------------------------------------------------------------------


def _schema_default(arg: Argument) -> object:
    try:
        return arg.default_value
    except ValueError:
        return _UNKNOWN  # no default, or enum spellings such as Mean, contiguous_format


def _python_default(node: ast.expr | None) -> object:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _UNKNOWN
    return list(value) if isinstance(value, tuple) else value


# ------------------------------------------------------------------------------------------------
# Rules
# ------------------------------------------------------------------------------------------------


@rule(
    "M001", "missing-fake-registration", severity=Severity.ERROR, scope="project",
    example='# op_plugin_functions.yaml: custom: - func: my_op(Tensor x) -> Tensor\n# meta.py registers nothing for my_op',
)  # fmt: skip
def missing_fake_registration(project: LintProject) -> Iterator[Violation]:
    """A new op has no Meta or fake registration for one of its overloads.

    torch.compile (and with it npugraph_ex) traces with fake tensors: an op without a Meta kernel
    fails the trace. ``@impl(m, "my_op")`` binds only the default overload; ``my_op.out`` needs its
    own ``@impl(m, "my_op.out")``. A custom_op needs ``@<op>.register_fake``. Checked only when at
    least one registration file is linted, against ``custom:`` entries, ``--schema`` strings,
    ``Library.define`` schemas and custom_ops.
    """
    if not project.python_files:
        return
    registered: dict[tuple[str, str], list[Registration]] = {}
    for _, reg in _registrations(project):
        registered.setdefault((reg.name, reg.overload), []).append(reg)
    for schema in _index(project).schemas:
        if not schema.site.is_custom:
            continue
        if any(schema.declares(reg) for reg in registered.get((schema.sig.name, schema.sig.overload), ())):
            continue
        what = "register_fake" if schema.site.dialect is Dialect.TORCH_LIBRARY and schema.site.op_hint else "Meta registration"
        yield Violation(
            f"op '{schema.sig.full_name}' has no {what} in the linted Python files",
            line=schema.site.line, column=schema.site.column, path=schema.site.path, op=schema.sig.full_name,
            hint=f'add @impl(m, "{schema.sig.full_name}") on m = Library("npu", "IMPL", "Meta"), or @<op>.register_fake',
        )  # fmt: skip


@rule(
    "M002", "meta-arity", severity=Severity.ERROR, scope="project",
    example='# schema: my_op(Tensor x, Tensor y, *, int k=1) -> Tensor\n@impl(m, "my_op")\ndef my_op_meta(x): ...',
)  # fmt: skip
def meta_arity(project: LintProject) -> Iterator[Violation]:
    """The Meta/fake function cannot accept the call PyTorch makes for the schema.

    Positional schema arguments arrive positionally: a function with fewer positional parameters
    (and no ``*args``) raises TypeError whenever the trailing arguments are not at their defaults.
    Keyword-only schema arguments arrive by name when not at their default: a function without a
    parameter of that name (and no ``**kwargs``) raises "unexpected keyword argument". A parameter
    without a default that the schema never supplies makes every call fail.
    """
    for b in _bound(project):
        fn, sig = b.reg.function, b.schema.sig
        if not fn.var_positional and len(fn.positional) < len(sig.positional_arguments):
            missing = ", ".join(a.name for a in sig.positional_arguments[len(fn.positional) :])
            yield b.violation(f"{fn.name} takes {len(fn.positional)} positional parameters but the schema passes {len(sig.positional_arguments)} ({missing} not accepted)")
        for a in sig.kwarg_only_arguments:
            p = fn.parameter(a.name)
            if not fn.var_keyword and (p is None or p.kind == "positional_only"):
                when = f" whenever it is not {a.default}" if a.default is not None else ""
                yield b.violation(f"keyword-only argument '{a.name}' is passed by name{when}, but {fn.name} has no parameter '{a.name}'")
        supplied = {a.name for a in sig.kwarg_only_arguments}
        for index, p in enumerate(fn.parameters):
            never_passed = (p.kind == "keyword_only" or index >= len(sig.positional_arguments)) and p.name not in supplied
            if p.kind in ("positional", "positional_only", "keyword_only") and not p.has_default and never_passed:
                yield b.violation(f"parameter '{p.name}' of {fn.name} has no default and the schema never passes it: every call fails")


@rule(
    "M003", "meta-parameter-order", severity=Severity.ERROR, scope="project",
    example='# schema: my_op(Tensor x, Tensor y) -> Tensor\n@impl(m, "my_op")\ndef my_op_meta(y, x): ...',
)  # fmt: skip
def meta_parameter_order(project: LintProject) -> Iterator[Violation]:
    """The Meta/fake function names the schema's positional arguments in another order.

    Arguments arrive positionally, so each lands in the parameter at its position, not the one of its
    name: the function silently computes with swapped inputs and returns wrong shapes or dtypes.
    """
    for b in _bound(project):
        fn, sig = b.reg.function, b.schema.sig
        names = [_schema_name(p.name) for p in fn.positional]
        schema_names = [a.name for a in sig.positional_arguments]
        misplaced = [n for i, n in enumerate(schema_names) if n in names and names.index(n) != i]
        if misplaced:
            yield b.violation(f"parameters ({', '.join(names)}) receive the schema's positional arguments ({', '.join(schema_names)}): {', '.join(misplaced)} land in the wrong parameter")


@rule(
    "M004", "meta-parameter-names", severity=Severity.WARNING, scope="project",
    example='# schema: my_op(Tensor x, *, int k=1) -> Tensor\n@impl(m, "my_op")\ndef my_op_meta(inp, k=1): ...',
)  # fmt: skip
def meta_parameter_names(project: LintProject) -> Iterator[Violation]:
    """A Meta/fake parameter is named differently from its schema argument, or is not keyword-only.

    A renamed positional parameter still receives its value (arguments arrive positionally) but hides
    the mapping from readers and breaks calling the function by keyword. A keyword-only schema
    argument taken as a positional parameter works by name, yet lets a stray positional call fill it.
    """
    for b in _bound(project):
        fn, sig = b.reg.function, b.schema.sig
        names = {_schema_name(p.name) for p in fn.parameters}
        for a, p in zip(sig.positional_arguments, fn.positional):
            if _schema_name(p.name) != a.name and a.name not in names:
                yield b.violation(f"parameter '{p.name}' receives schema argument '{a.name}': name it '{a.name}'")
        for a in sig.kwarg_only_arguments:
            p = fn.parameter(a.name)
            if p is not None and p.kind == "positional":
                yield b.violation(f"schema argument '{a.name}' is keyword-only but {fn.name} takes it positionally", hint=f"put '{a.name}' after '*'")


@rule(
    "M005", "meta-default-mismatch", severity=Severity.ERROR, scope="project",
    example='# schema: my_op(Tensor x, int k=1) -> Tensor\n@impl(m, "my_op")\ndef my_op_meta(x, k): ...',
)  # fmt: skip
def meta_default_mismatch(project: LintProject) -> Iterator[Violation]:
    """A Meta/fake parameter's default disagrees with the schema's default.

    PyTorch drops trailing positional arguments that equal their default, and keyword-only arguments
    that equal theirs. Without a default the function then raises "missing argument" for such calls;
    with a different default it silently computes with a value the caller did not pass.
    """
    for b in _bound(project):
        fn, sig = b.reg.function, b.schema.sig
        positional = sig.positional_arguments
        for a in sig.omittable_arguments:
            if a.kwarg_only:
                p = fn.parameter(a.name)
            else:
                j = positional.index(a)
                p = fn.positional[j] if j < len(fn.positional) else None
            if p is None:
                continue
            if not p.has_default:
                yield b.violation(f"schema argument '{a.name}' defaults to {a.default}: calls that leave it there drop it, and {fn.name}'s '{p.name}' has no default")
                continue
            if _schema_name(p.name) != a.name and sig.argument(_schema_name(p.name)) is not None:
                continue  # the parameter stands for another schema argument: misplaced (M003), not a default
            expected, found = _schema_default(a), _python_default(p.default)
            if expected is not _UNKNOWN and found is not _UNKNOWN and expected != found:
                yield b.violation(f"'{p.name}' defaults to {p.default_text} but the schema's '{a.name}' defaults to {a.default}: calls that pass {a.default} get {p.default_text}")


def _return_problem(ret: ReturnSite, sig: OpSignature) -> str | None:
    """Why one ``return`` contradicts the schema's returns, when the source shows it; else None."""
    count = len(sig.returns)
    if ret.shape == "none":
        return "returns None"
    single_tensor = count == 1 and sig.returns[0].type.is_tensor and not sig.returns[0].type.is_list
    if single_tensor and ret.shape in ("tuple", "list"):
        return f"returns a {ret.shape}" + (f" of {ret.arity}" if ret.arity is not None else "")
    if count >= 2:
        returned_arg = sig.argument(ret.param) if ret.param else None
        if ret.shape == "tensor" or (returned_arg is not None and returned_arg.is_tensor and not returned_arg.type.is_list):
            return "returns a single tensor"
        if ret.shape == "tuple" and ret.arity is not None and ret.arity != count:
            return f"returns a tuple of {ret.arity}"
    return None


@rule(
    "M006", "meta-return-structure", severity=Severity.ERROR, scope="project",
    example='# schema: my_op(Tensor x) -> (Tensor, Tensor)\n@impl(m, "my_op")\ndef my_op_meta(x):\n    return torch.empty_like(x)',
)  # fmt: skip
def meta_return_structure(project: LintProject) -> Iterator[Violation]:
    """The Meta/fake function returns another structure than the schema's returns.

    One tensor for ``-> Tensor``, a tuple of N for N returns: PyTorch unpacks the result by the
    schema and fails the trace otherwise (or, for a function that can end without ``return``, gets
    None). Only returns whose structure the source shows are checked (tuples, None, known factories
    such as ``torch.empty_like``, parameters).
    """
    for b in _bound(project):
        fn, sig = b.reg.function, b.schema.sig
        if not sig.returns:
            continue  # M007
        expected = "one value" if len(sig.returns) == 1 else f"a tuple of {len(sig.returns)}"
        for ret in fn.returns:
            problem = _return_problem(ret, sig)
            if problem:
                yield b.violation(f"{fn.name} {problem} (line {ret.line}) but the schema returns {expected}")
        if fn.falls_off:
            yield b.violation(f"{fn.name} can end without a return statement (returning None) but the schema returns {expected}")


@rule(
    "M007", "meta-returns-for-void-op", severity=Severity.ERROR, scope="project",
    example='# schema: my_op_(Tensor(a!) x) -> ()\n@impl(m, "my_op_")\ndef my_op__meta(x):\n    return x',
)  # fmt: skip
def meta_returns_for_void_op(project: LintProject) -> Iterator[Violation]:
    """The schema returns ``()`` (an in-place or mutable op) but the Meta/fake function returns a value.

    PyTorch checks "Expected ... to return None but it returned something else instead". Returning
    the mutated input, the habit of eager in-place ops, is exactly what functionalization forbids
    (see S101): the op's result is the write to the ``Tensor(a!)`` argument, not a return value.
    """
    for b in _bound(project):
        fn, sig = b.reg.function, b.schema.sig
        if sig.returns:
            continue
        for ret in fn.returns:
            if ret.shape == "param":
                mutated = " (the mutated input)" if any(a.name == ret.param for a in sig.mutated_arguments) else ""
                yield b.violation(f"{fn.name} returns '{ret.param}'{mutated} at line {ret.line}, but the schema returns (): return None")
            elif ret.shape in ("tensor", "tuple", "list"):
                yield b.violation(f"{fn.name} returns a {ret.shape} at line {ret.line}, but the schema returns (): return None")


def _comparable(sig: OpSignature) -> tuple:
    """A signature's facts that matter to callers: SymInt is int, alias letters are not compared."""

    def type_of(t) -> str:
        return str(t).replace("SymInt", "int")

    args = tuple((a.name, type_of(a.type), a.kwarg_only, a.is_mutated, repr(_schema_default(a)) if a.default else None) for a in sig.arguments)
    return args, tuple(type_of(r.type) for r in sig.returns)


@rule(
    "M008", "custom-op-schema-mismatch", severity=Severity.ERROR, scope="project",
    example='# --schema "mylib::my_op_(Tensor(a!) x, Tensor(b!) y) -> ()"\n@torch.library.custom_op("mylib::my_op_", mutates_args=("x",))\ndef my_op_(x: torch.Tensor, y: torch.Tensor) -> None: ...',
)  # fmt: skip
def custom_op_schema_mismatch(project: LintProject) -> Iterator[Violation]:
    """A custom_op's inferred schema differs from the schema declared for the same op elsewhere.

    torch registers the schema inferred from the annotations and ``mutates_args``; the declared one
    (``--schema``, op_plugin_functions.yaml, ``Library.define``) is what generators, converters and
    msOpGen were built from. ``mutates_args`` must name exactly the ``Tensor(a!)`` arguments: an
    argument written but not listed loses its write under functionalization.
    """
    if not project.python_files:
        return
    index = _index(project)
    for file in project.python_files:
        for op in file.custom_ops:
            own = index.inferred_from(file.path, op)
            if own is None:
                continue
            probe = Registration(op.namespace, op.name, "fake", op.function, op.line, op.column)
            for declared in (s for s in index.declaring(probe) if s is not own):
                where = f"{declared.site.path}:{declared.site.line}"
                written = {a.name for a in own.sig.mutated_arguments}
                expected = {a.name for a in declared.sig.mutated_arguments}
                if written != expected:
                    message = f"mutates_args covers {sorted(written)} but {where} declares {sorted(expected)} as Tensor(a!)"
                elif _comparable(own.sig) != _comparable(declared.sig):
                    message = f"inferred schema '{own.sig}' differs from '{declared.sig}' declared at {where}"
                else:
                    continue
                yield Violation(message, line=op.line, column=op.column, path=file.path, op=op.name)


@rule(
    "M009", "mutates-args-unknown", severity=Severity.WARNING, scope="python",
    example='@torch.library.custom_op("mylib::f", mutates_args="unknown")\ndef f(x: torch.Tensor) -> torch.Tensor: ...',
)  # fmt: skip
def mutates_args_unknown(file: RegistrationFile) -> Iterator[Violation]:
    """``mutates_args="unknown"`` declares every tensor argument written.

    Functionalization then copies back every input after each call and no input can be reused
    without a clone: slow and rarely true. Name the arguments the kernel writes, or ``()``.
    """
    for op in file.custom_ops:
        if op.mutates_args == MUTATES_UNKNOWN:
            yield Violation(f"custom_op {op.qualname} declares mutates_args=\"unknown\": every tensor argument counts as written", line=op.line, column=op.column, op=op.name)


def _written_parameters(fn_node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """Parameters the body visibly writes in place (``x.add_()``, ``x[i] = v``, ``x += v``, ``out=x``): name → line."""
    written: dict[str, int] = {}
    for node in ast.walk(fn_node):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr.endswith("_") and not f.attr.startswith("_"):
                targets.append(f.value)
            targets += [k.value for k in node.keywords if k.arg == "out"]
        elif isinstance(node, ast.Assign):
            targets += [t.value for t in node.targets if isinstance(t, ast.Subscript)]
        elif isinstance(node, ast.AugAssign):
            targets.append(node.target.value if isinstance(node.target, ast.Subscript) else node.target)
        for t in targets:
            if isinstance(t, ast.Name):
                written.setdefault(t.id, node.lineno)
    return written


@rule(
    "M010", "unlisted-mutation", severity=Severity.ERROR, scope="python",
    example='@torch.library.custom_op("mylib::f", mutates_args=())\ndef f(x: torch.Tensor) -> None:\n    x.add_(1)',
)  # fmt: skip
def unlisted_mutation(file: RegistrationFile) -> Iterator[Violation]:
    """A custom_op's body writes a tensor argument that ``mutates_args`` does not list.

    The schema then says the argument is read-only; functionalization drops the write, so compiled
    graphs compute with stale data while eager mode works. List the argument in ``mutates_args``.
    """
    for op in file.custom_ops:
        if not isinstance(op.mutates_args, tuple):
            continue
        tensors = {name for name, t in op.function.annotated_types.items() if t and t.startswith("Tensor")}
        for name, line in sorted(_written_parameters(op.function.node).items()):
            if name in tensors and name not in op.mutates_args:
                yield Violation(f"{op.function.name} writes '{name}' in place (line {line}) but mutates_args does not list it", line=op.line, column=op.column, op=op.name)


@rule(
    "M011", "registration-without-schema", severity=Severity.WARNING, scope="project",
    example='# op_plugin_functions.yaml declares my_op only\n@impl(m, "my_opp")\ndef my_opp_meta(x): ...',
)  # fmt: skip
def registration_without_schema(project: LintProject) -> Iterator[Violation]:
    """A Meta/fake registration names an op that no linted schema declares.

    Usually a typo or a renamed op: at import time ``Library.impl`` fails for an op that does not
    exist, or the registration lands on another overload. Checked only when schemas were given
    (op_plugin_functions.yaml or ``--schema``), since otherwise nothing declares op-plugin ops.
    Registrations on PyTorch's own namespaces (``Library("aten", "IMPL", "Meta")``) are checked
    against a linted schema when one declares the op (``official:`` entries), never reported as
    unknown: ATen's schemas are not among the inputs.
    """
    if not (project.yaml_files or project.schema_sites):
        return
    if not project.python_files:  # nothing registered: skip indexing every schema of a large yaml
        return
    index = _index(project)
    for file, reg in _registrations(project):
        if reg.custom_op is not None or index.declaring(reg):
            continue
        if reg.namespace in TORCH_NAMESPACES:
            continue  # an ATen (or other PyTorch) op: its schema is PyTorch's, not in the linted inputs
        yield Violation(f"{reg.style} registration for '{reg.qualname}', which no linted schema declares", line=reg.line, column=reg.column, path=file.path, op=reg.op)


@rule(
    "M012", "custom-op-rejected", severity=Severity.ERROR, scope="python",
    example='@torch.library.custom_op("mylib::f", mutates_args=())\ndef f(x: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor: ...',
)  # fmt: skip
def custom_op_rejected(file: RegistrationFile) -> Iterator[Violation]:
    """torch.library would raise when the module is imported: the custom_op's schema cannot be inferred.

    Annotations must be what ``infer_schema`` supports (Tensor, int, float, bool, str, Optional and
    list forms, no tuples), every parameter annotated, defaults None/bool/int/float/str,
    ``mutates_args`` naming tensor parameters; with ``schema=``, its ``Tensor(a!)`` arguments must be
    exactly ``mutates_args``.
    """
    for op in file.custom_ops:
        problem = op.schema_problem
        if problem is None and op.explicit_schema is not None and isinstance(op.mutates_args, tuple):
            try:
                written = {a.name for a in parse_schema(op.schema or "", Dialect.TORCH_LIBRARY).mutated_arguments}
            except SchemaError:
                written = None  # S001 reports the schema itself
            if written is not None and written != set(op.mutates_args):
                problem = f"schema= marks {sorted(written)} as Tensor(a!) but mutates_args is {list(op.mutates_args)}"
        if problem:
            yield Violation(f"custom_op {op.qualname}: {problem}", line=op.line, column=op.column, op=op.name)


@rule(
    "M013", "fake-annotation-mismatch", severity=Severity.WARNING, scope="python",
    example='@torch.library.custom_op("mylib::f", mutates_args=())\ndef f(x: torch.Tensor, n: int) -> torch.Tensor: ...\n@f.register_fake\ndef _(x: torch.Tensor, n: float) -> torch.Tensor: ...',
)  # fmt: skip
def fake_annotation_mismatch(file: RegistrationFile) -> Iterator[Violation]:
    """A fake function's annotations disagree with its custom_op's.

    The fake receives exactly the custom_op's arguments and must return what it returns; a
    different annotation is a stale copy that misleads type checkers and readers.
    """
    for reg in file.registrations:
        op = reg.custom_op
        if op is None:
            continue
        for name, fake_type in reg.function.annotated_types.items():
            op_type = op.function.annotated_types.get(name)
            if fake_type and op_type and fake_type != op_type:
                yield Violation(f"fake parameter '{name}' is annotated {fake_type}, custom_op {op.function.name} says {op_type}", line=reg.line, column=reg.column, op=reg.op)
        fake_ret, op_ret = reg.function.annotated_return, op.function.annotated_return
        if fake_ret and op_ret and fake_ret != op_ret:
            yield Violation(f"fake returns {fake_ret}, custom_op {op.function.name} returns {op_ret}", line=reg.line, column=reg.column, op=reg.op)


@rule(
    "M014", "duplicate-registration", severity=Severity.ERROR, scope="python",
    example='@impl(m, "my_op")\ndef a(x): ...\n@impl(m, "my_op")\ndef b(x): ...',
)  # fmt: skip
def duplicate_registration(file: RegistrationFile) -> Iterator[Violation]:
    """The same op overload gets two Meta (or two fake) registrations in one file.

    torch raises at import ("already a kernel registered from python" / "already has a fake impl"),
    and a reader cannot tell which function was meant. Registrations in different arms of one
    ``if``/``else`` (a version switch), ``try``/``except`` or ``match`` never both run and are fine.
    """
    earlier: dict[tuple[str, str, str], list[Registration]] = {}
    for reg in sorted(file.registrations, key=lambda r: (r.line, r.column)):
        key = (reg.namespace, reg.op, reg.style)
        clash = next((r for r in earlier.get(key, ()) if not exclusive(r.branches, reg.branches)), None)
        if clash is not None:
            yield Violation(f"'{reg.qualname}' already has a {reg.style} registration at line {clash.line}", line=reg.line, column=reg.column, op=reg.op)
        earlier.setdefault(key, []).append(reg)
