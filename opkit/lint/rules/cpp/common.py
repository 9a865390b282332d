"""Facts the C++ registration rules share: defs with their signatures, impls with the functions they name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opkit.lint.registry import shared_index
from opkit.lint.project import LintProject
from opkit.signature import ArgType, Dialect, OpSignature, SchemaError, parse_schema

if TYPE_CHECKING:  # the C++ reader is imported when a C++ file is linted, not for every lint run
    from opkit.formats.cpp_registrations import CppDef, CppFunction, CppImpl, Kernel

# Keys whose kernel also serves Meta tensors, so an op with one needs no Meta of its own: a composite
# kernel is made of other ops (CompositeImplicitAutograd, a def's own kernel, decomposes while tracing;
# CompositeExplicitAutograd is registered for every backend, Meta included).
COMPOSITE_KEYS = frozenset({"CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional", "Math", "DefaultBackend"})
META_KEYS = frozenset({"Meta"}) | COMPOSITE_KEYS


# The lines of the examples' ``my_ops.cpp``: the op ``my_ops::my_op`` declared, defined, and given a
# device and a Meta kernel.
DEVICE_KERNEL_DECLARATION = "at::Tensor my_op(const at::Tensor &x);"
META_KERNEL = "at::Tensor my_op_meta(const at::Tensor &x) { return at::empty_like(x); }"
DEF = 'TORCH_LIBRARY(my_ops, m) { m.def("my_op(Tensor x) -> Tensor"); }'
DEVICE_IMPL = 'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) { m.impl("my_op", TORCH_FN(my_op)); }'
META_IMPL = 'TORCH_LIBRARY_IMPL(my_ops, Meta, m) { m.impl("my_op", &my_op_meta); }'


def my_ops_example(*lines: str) -> str:
    """A ``project`` example of one file, ``my_ops.cpp``, made of ``lines``."""
    return "\n".join(("# file: my_ops.cpp", *lines))


# The op with everything it needs: the fixed twin of the rules about missing or stray kernels.
COMPLETE_MY_OPS = my_ops_example(DEVICE_KERNEL_DECLARATION, META_KERNEL, DEF, DEVICE_IMPL, META_IMPL)

@dataclass(frozen=True)
class Defined:
    path: str
    definition: CppDef
    sig: OpSignature

    @property
    def namespace(self) -> str:
        return self.sig.namespace or self.definition.namespace

    @property
    def key(self) -> tuple[str, str, str]:
        return self.namespace, self.sig.name, self.sig.overload


@dataclass(frozen=True)
class Registered:
    path: str
    impl: CppImpl

    @property
    def key(self) -> tuple[str, str, str]:
        name, _, overload = self.impl.op.partition(".")
        return self.impl.namespace, name, overload


@shared_index
def defined(project: LintProject) -> list[Defined]:
    """Every C++ def whose schema parses (the schema rules report the others)."""
    found = []
    for source in project.cpp_files:
        for d in source.defs:
            try:
                sig = parse_schema(d.schema, Dialect.TORCH_LIBRARY)
            except SchemaError:
                continue
            found.append(Defined(source.path, d, sig))
    return found


def registered(project: LintProject) -> Iterator[Registered]:
    for source in project.cpp_files:
        for impl in source.impls:
            yield Registered(source.path, impl)


@shared_index
def defined_by_key(project: LintProject) -> dict[tuple[str, str, str], list[Defined]]:
    index: dict[tuple[str, str, str], list[Defined]] = {}
    for d in defined(project):
        index.setdefault(d.key, []).append(d)
    return index


def compiled_together(d: Defined, path: str, conditions) -> bool:
    """Whether a def and a registration at ``path`` under ``conditions`` can be in one build (not in
    different arms of one ``#if``, or of same-test conditionals in two files)."""
    from opkit.formats.cpp_registrations import exclusive

    return not exclusive(d.definition.conditions, conditions, same_file=d.path == path)


def serving(project: LintProject, r: Registered) -> Defined | None:
    """The def an impl registers a kernel for: the first of its op compiled together with it."""
    return next((d for d in defined_by_key(project).get(r.key, ()) if compiled_together(d, r.path, r.impl.conditions)), None)


def kernels_of(project: LintProject) -> Iterator[tuple[str, Kernel, str, Defined, int, int]]:
    """(path, kernel, dispatch key, the def it serves, line, column) for every C++ kernel bound to a
    parsed C++ def: the impls, and the defs' own catch-all kernels."""
    for r in registered(project):
        d = serving(project, r)
        if d is not None:
            yield r.path, r.impl.kernel, r.impl.dispatch_key, d, r.impl.line, r.impl.column
    for d in defined(project):
        k = d.definition.kernel
        if k is not None:
            yield d.path, k, "CompositeImplicitAutograd", d, k.line, k.column


def resolve(project: LintProject, kernel: Kernel) -> CppFunction | None:
    """The function a kernel names, when the linted C++ shows exactly one parameter list for it."""
    from opkit.formats.cpp_registrations import resolve_kernel

    return resolve_kernel(project.cpp_functions, kernel)


def schema_type(t: ArgType) -> str:
    """The schema type as torch compares it with a kernel's: SymInt is int, list sizes and aliases dropped."""
    base = "int" if t.base == "SymInt" else t.base
    text = base + ("?" if t.elem_optional else "") + ("[]" if t.is_list else "") + ("?" if t.optional else "")
    return text


def returns_type(sig: OpSignature) -> str:
    types = [schema_type(r.type) for r in sig.returns]
    if not types:
        return "()"
    return types[0] if len(types) == 1 else "(" + ", ".join(types) + ")"


def kernel_problems(fn: CppFunction, sig: OpSignature) -> list[str]:
    """Why torch would refuse ``fn`` as a kernel of ``sig`` (what the C++ shows of it); [] if nothing."""
    problems = []
    if len(fn.parameters) != len(sig.arguments):
        problems.append(f"takes {len(fn.parameters)} parameters, the schema has {len(sig.arguments)} arguments")
    else:
        for index, (p, a) in enumerate(zip(fn.parameters, sig.arguments), start=1):
            cpp = p.schema_type
            if cpp is not None and cpp != schema_type(a.type):
                problems.append(f"parameter {index} ({p.type} {p.name}".rstrip() + f") is {cpp}, the schema's '{a.name}' is {schema_type(a.type)}")
    if fn.returns and fn.returns != "auto":
        from opkit.formats.cpp_registrations import schema_type_of

        cpp = schema_type_of(fn.returns)
        if cpp is not None and cpp != returns_type(sig):
            problems.append(f"returns {fn.returns} ({cpp}), the schema returns {returns_type(sig)}")
    return problems
