"""Facts and helpers the registrations rules share."""

from __future__ import annotations

import ast
import builtins
import keyword
from collections.abc import Iterator
from dataclasses import dataclass

from opkit.lint.finding import Violation
from opkit.lint.registry import shared_index
from opkit.lint.project import LintProject
from opkit.formats.schema_site import SchemaSite
from opkit.formats.python_registrations import CustomOp, Registration, RegistrationFile, ReturnSite
from opkit.signature import Argument, OpSignature


UNKNOWN = object()  # a default whose value cannot be known without running code


# Namespaces PyTorch itself defines: their schemas are ATen's (native_functions.yaml and friends), which
# no linted input declares in full (op_plugin_functions.yaml's ``official:`` lists only the ATen ops
# with NPU kernels), so a Meta registration for one of their ops cannot be called unknown.
TORCH_NAMESPACES = frozenset({"aten", "prim", "prims", "quantized", "_quantized", "sparse", "c10d", "_c10d_functional", "profiler"})


@dataclass(frozen=True)
class Schema:
    site: SchemaSite
    sig: OpSignature
    namespace: str  # "" for a --schema string without one: any namespace

    def declares(self, reg: Registration) -> bool:
        return self.sig.name == reg.name and self.sig.overload == reg.overload and self.covers(reg.namespace)

    def covers(self, namespace: str) -> bool:
        return not self.namespace or not namespace or self.namespace == namespace


# Which schema a registration binds to when several declare it: the op's own entry first. Every
# section a schema site can have (op_plugin_yaml.SECTIONS, or None outside op_plugin_functions.yaml).
SECTION_RANK = {"custom": 0, None: 0, "official": 1, "autograd": 2, "symint": 3, "quant": 4}


class Index:
    """Every schema of the project, keyed by (name, overload), built once per lint run."""

    def __init__(self, project: LintProject):
        sites = [site for site in project.all_schema_sites() if site.signature is not None]
        # op_plugin_functions.yaml has no namespaces: ``custom:`` ops live in ``npu``, and so do their
        # repeats in other sections (``symint:`` repeats custom funcs whose kernels take SymInt); the
        # rest is ``aten``.
        custom_names = {(site.path, site.signature.name) for site in sites if site.section == "custom"}
        self.schemas: list[Schema] = []
        for site in sites:
            sig = site.signature
            if sig.namespace or site.section is None:
                namespace = sig.namespace or site.namespace  # a C++ def's block gives it one
            else:
                namespace = "npu" if (site.path, sig.name) in custom_names else "aten"
            self.schemas.append(Schema(site, sig, namespace))
        self.by_op: dict[tuple[str, str], list[Schema]] = {}
        for schema in sorted(self.schemas, key=lambda s: SECTION_RANK[s.site.section]):
            self.by_op.setdefault((schema.sig.name, schema.sig.overload), []).append(schema)
        self.inferred: dict[tuple[str, int, int, str | None], Schema] = {
            (s.site.path, s.site.line, s.site.column, s.site.op_hint): s for s in self.schemas if s.site.op_hint is not None
        }

    def declaring(self, reg: Registration) -> list[Schema]:
        """Schemas that declare ``reg``'s op, those in its own namespace first."""
        found = [s for s in self.by_op.get((reg.name, reg.overload), ()) if s.covers(reg.namespace)]
        return sorted(found, key=lambda s: s.namespace != reg.namespace)  # stable: section order within

    def inferred_from(self, path: str, op: CustomOp) -> Schema | None:
        return self.inferred.get((path, op.line, op.column, op.name))


@shared_index
def project_index(project: LintProject) -> Index:
    """The project's schema index, built once: six rules bind registrations to schemas."""
    return Index(project)


@dataclass(frozen=True)
class Bound:
    file: RegistrationFile
    reg: Registration
    schema: Schema

    def violation(self, message: str, hint: str | None = None) -> Violation:
        return Violation(message, line=self.reg.line, column=self.reg.column, hint=hint, path=self.file.path, op=self.reg.op)


def all_registrations(project: LintProject) -> Iterator[tuple[RegistrationFile, Registration]]:
    for file in project.python_files:
        for reg in file.registrations:
            yield file, reg


def bound(project: LintProject) -> Iterator[Bound]:
    """Each registration with the schema PyTorch will call it for.

    A custom_op's fake binds to the custom_op's own inferred schema (what torch registers at run
    time); any other registration to a declaring schema, the one in its namespace first, then the
    op's own section before its repeats (``custom:`` before ``symint:``).
    """
    if not project.python_files:  # nothing registered: skip indexing every schema of a large yaml
        return
    index = project_index(project)
    for file, reg in all_registrations(project):
        if reg.custom_op is not None:
            own = index.inferred_from(file.path, reg.custom_op)
            if own is not None:
                yield Bound(file, reg, own)
            continue
        candidates = index.declaring(reg)
        if candidates:
            yield Bound(file, reg, candidates[0])


PYTHON_RESERVED = frozenset(keyword.kwlist) | frozenset(dir(builtins))


def schema_name(parameter: str) -> str:
    """The schema argument a parameter spells: ``input_`` is ``input`` (PEP 8's trailing underscore
    for a name that would be a keyword or shadow a builtin), anything else itself."""
    base = parameter[:-1]
    return base if parameter.endswith("_") and base in PYTHON_RESERVED else parameter


def schema_default(arg: Argument) -> object:
    try:
        return arg.default_value
    except ValueError:
        return UNKNOWN  # no default, or enum spellings such as Mean, contiguous_format


def python_default(node: ast.expr | None) -> object:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return UNKNOWN
    return list(value) if isinstance(value, tuple) else value


def return_problem(ret: ReturnSite, sig: OpSignature) -> str | None:
    """Why one ``return`` contradicts the schema's returns, when the source shows it; else None."""
    count = len(sig.returns)
    if ret.shape == "none":
        return "returns None"
    single_tensor = count == 1 and sig.returns[0].type.is_tensor and not sig.returns[0].type.is_list
    if single_tensor and ret.shape in ("tuple", "list"):
        return f"returns a {ret.shape}" + (f" of {ret.arity}" if ret.arity is not None else "")
    if count >= 2:
        returned_arg = sig.argument(ret.param)  # None unless the return is a parameter (no argument is named None)
        if ret.shape == "tensor" or (returned_arg is not None and returned_arg.is_tensor and not returned_arg.type.is_list):
            return "returns a single tensor"
        if ret.shape == "tuple" and ret.arity is not None and ret.arity != count:
            return f"returns a tuple of {ret.arity}"
    return None


def comparable(sig: OpSignature) -> tuple:
    """A signature's facts that matter to callers: SymInt is int, alias letters are not compared."""

    def type_of(t) -> str:
        return str(t).replace("SymInt", "int")

    args = tuple((a.name, type_of(a.type), a.kwarg_only, a.is_mutated, repr(schema_default(a)) if a.default else None) for a in sig.arguments)
    return args, tuple(type_of(r.type) for r in sig.returns)

