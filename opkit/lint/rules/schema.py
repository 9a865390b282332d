"""Schema rules (S): one signature at a time, wherever it was written.

S0xx: the dialect's parser rejects the string. S1xx: aliasing and in-place conventions that
functionalization, and with it npugraph_ex, depends on. S2xx: what msOpGen and TorchAir can express.
Rules marked "new ops only" apply to op-plugin's ``custom:`` section, ``--schema`` strings and
custom_op registrations, not to ATen overloads in ``official:``, which follow ATen's own conventions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.sources import SchemaSite
from opkit.signature import Dialect, SchemaError, check_schema, iter_alias_letters


def _error(site: SchemaSite) -> SchemaError | None:
    p = site.parsed
    return p if isinstance(p, SchemaError) else None


def _canonical_from(error: SchemaError) -> str | None:
    return error.canonical if error.dialect is Dialect.OP_PLUGIN else None


@rule("S001", "schema-syntax", severity=Severity.ERROR, scope="schema", example="my_op(Tensor x, Tensor y -> Tensor")
def schema_syntax(site: SchemaSite) -> Iterator[Violation]:
    """The schema string does not parse in its dialect.

    op_plugin_functions.yaml ``func`` strings are parsed by op-plugin's codegen with
    ``torchgen.model.FunctionSchema.parse``, which also enforces ATen naming conventions (a name ending
    in ``_`` must mutate and return ``self``). ``torch.library`` schemas (``Library.define``,
    ``custom_op``) follow ``torch._C.parse_schema``. The message names the dialect and points at the
    column where parsing failed.
    """
    error = _error(site)
    if error is None or error.is_unknown_type or _canonical_from(error):
        return
    yield Violation(f"{error.message} ({error.dialect.value} dialect: {error.dialect.parser})", column=error.column, hint=error.hint)


@rule("S002", "unknown-type", severity=Severity.ERROR, scope="schema", example="max.names_dim(Tensor self, Dimname dim) -> Tensor")
def unknown_type(site: SchemaSite) -> Iterator[Violation]:
    """The schema uses a type the installed torch no longer parses (``Dimname`` on torch 2.13).

    The codegen stops on the first such entry, so the whole yaml file fails to build against that
    torch. Named-tensor overloads (``Dimname``, ``Dimname[]``) are the usual cause: remove them, or
    restrict their version range to the torch releases that still parse them.
    """
    error = _error(site)
    if error is not None and error.is_unknown_type:
        yield Violation(f"{error.message} ({error.dialect.value} dialect)", column=error.column, hint=error.hint)


@rule("S003", "not-canonical", severity=Severity.ERROR, scope="schema", example="my_op(Tensor x,Tensor y)->Tensor")
def not_canonical(site: SchemaSite) -> Iterator[Violation]:
    """An op-plugin ``func`` must be spelled exactly as torchgen prints it back.

    The codegen asserts ``str(FunctionSchema.parse(f)) == f``: one space after each comma, `` -> ``
    around the arrow, defaults without spaces. The message gives the canonical spelling to paste.
    """
    error = _error(site)
    canonical = _canonical_from(error) if error is not None else None
    if canonical:
        yield Violation(f"not in torchgen's canonical spelling; write: {canonical}", column=error.column, hint="the codegen asserts str(parse(func)) == func")


@rule("S101", "returns-mutated-input", severity=Severity.ERROR, scope="schema", example="my_op_(Tensor(a!) self) -> Tensor(a!)")
def returns_mutated_input(site: SchemaSite) -> Iterator[Violation]:
    """A new op returns an alias of an input (``-> Tensor(a!)``); new ops only.

    PyTorch's automatic functionalization (2.6+), which TorchAir relies on to put in-place custom ops
    into a graph, rejects custom ops whose outputs carry alias annotations ("Found a custom (non-ATen)
    operator whose output has alias annotations"). ``torch._dynamo.explain`` still reports one graph,
    so the failure only shows at AOT compile time. Return ``()`` or fresh tensors instead.
    """
    sig = site.signature
    if sig is None or not site.is_custom or not sig.returns_alias:
        return
    aliased = ", ".join(a.name for a in sig.returned_mutated_arguments) or "an input"
    yield Violation(
        f"custom op returns {aliased} through an alias annotation; automatic functionalization rejects it, so it cannot enter an npugraph_ex graph",
        hint="return () (or fresh tensors) and keep Tensor(a!) on the mutated argument",
    )


@rule("S102", "alias-set-reused", severity=Severity.ERROR, scope="schema", example="my_op(Tensor(a!) x, Tensor(a!) y) -> ()")
def alias_set_reused(site: SchemaSite) -> Iterator[Violation]:
    """Two arguments share an alias set, and at least one of them is written.

    Each mutated argument needs its own letter (``Tensor(a!) x, Tensor(b!) y``); a shared letter tells
    functionalization the two arguments are the same memory, and the copy-back is then wrong.
    """
    sig = site.signature
    if sig is None:
        return
    owners: dict[str, list] = {}
    for letter, a in iter_alias_letters(sig):
        owners.setdefault(letter, []).append(a)
    for letter, args in owners.items():
        if len(args) > 1 and any(a.is_mutated for a in args):
            names = ", ".join(a.name for a in args)
            yield Violation(f"alias set '{letter}' is shared by arguments {names}", column=args[1].column or None, hint="give each mutated argument its own letter: Tensor(a!), Tensor(b!), ...")


@rule("S103", "return-alias-unknown", severity=Severity.ERROR, scope="schema", example="mylib::my_op(Tensor(a!) x) -> Tensor(b!)")
def return_alias_unknown(site: SchemaSite) -> Iterator[Violation]:
    """A return carries an alias set that no argument has.

    An alias annotation on a return says which argument it aliases; a letter no argument carries is a
    typo that makes aliasing analysis (and functionalization) wrong.
    """
    sig = site.signature
    if sig is None:
        return
    known = {s for a in sig.arguments if a.alias is not None for s in a.alias.sets}
    for r in sig.returns:
        if r.alias is not None:
            missing = [s for s in r.alias.sets if s not in known]
            if missing:
                yield Violation(f"return alias set '{'|'.join(missing)}' matches no argument")


@rule("S104", "inplace-name-without-mutation", severity=Severity.WARNING, scope="schema", example="mylib::scale_(Tensor x, float s) -> ()")
def inplace_name_without_mutation(site: SchemaSite) -> Iterator[Violation]:
    """The name ends in ``_`` (in-place by convention) but no argument is annotated ``(a!)``.

    Either the op writes an input that the schema does not declare (a silent correctness bug under
    functionalization: the write is lost in the graph), or the trailing underscore misleads readers.
    """
    sig = site.signature
    if sig is not None and sig.is_inplace_name and not sig.mutated_arguments:
        yield Violation(
            f"'{sig.name}' ends in '_' but mutates nothing",
            hint="annotate the written argument Tensor(a!), or drop the trailing '_'",
        )


@rule("S105", "out-argument-not-annotated", severity=Severity.ERROR, scope="schema", example="my_op.out(Tensor x, *, Tensor out) -> Tensor")
def out_argument_not_annotated(site: SchemaSite) -> Iterator[Violation]:
    """A keyword-only tensor named like an out argument (``out``, ``out0``, ``*_out``) is not ``Tensor(a!)``.

    Out arguments are written by the kernel; without the write annotation functionalization treats
    them as read-only and the result never reaches the caller in graph mode.
    """
    sig = site.signature
    if sig is None:
        return
    for a in sig.kwarg_only_arguments:
        if a.is_tensor and not a.type.optional and not a.is_mutated and (a.name == "out" or a.name.startswith("out") and a.name[3:].isdigit() or a.name.endswith("_out")):
            yield Violation(f"keyword-only tensor '{a.name}' looks like an out argument but is not annotated Tensor(a!)", column=a.column or None)


@rule("S201", "tensor-after-attribute", severity=Severity.WARNING, scope="schema", example="my_op(Tensor x, int k, Tensor y) -> Tensor")
def tensor_after_attribute(site: SchemaSite) -> Iterator[Violation]:
    """A tensor argument follows a non-tensor one; new ops only.

    msOpGen lists inputs before attrs and the aclnn API takes them in that order, while
    ``exec: aclnn<Op>`` passes the schema's arguments in schema order: put every tensor first.
    """
    sig = site.signature
    if sig is None or not site.is_custom:
        return
    seen_attr = None
    for a in sig.positional_arguments:
        if not a.is_tensor:
            seen_attr = seen_attr or a
        elif seen_attr is not None:
            yield Violation(f"tensor '{a.name}' comes after non-tensor '{seen_attr.name}'", column=a.column or None, hint="tensor arguments first, attributes after")
            return


@rule("S202", "name-round-trip", severity=Severity.WARNING, scope="schema", example="rms_norm_2d(Tensor x) -> Tensor")
def name_round_trip(site: SchemaSite) -> Iterator[Violation]:
    """msOpGen's snake_case of the UpperCamelCase op name is not the torch name; new ops only.

    ``rms_norm_2d`` becomes ``RmsNorm2d`` for msOpGen, whose files and kernel are then named
    ``rms_norm2d``: file names, the kernel symbol and TorchAir's converters no longer match the op.
    """
    sig = site.signature
    if sig is None or not site.is_custom or sig.name_round_trips:
        return
    yield Violation(
        f"'{sig.base_name}' → msOpGen op '{sig.op_type}' → files '{sig.kernel_name}': the name does not round-trip",
        hint=f"rename the op to '{sig.kernel_name}' (or another name that round-trips)",
    )


@rule("S203", "attr-type-unsupported", severity=Severity.WARNING, scope="schema", example="my_op(Tensor x, Scalar alpha) -> Tensor")
def attr_type_unsupported(site: SchemaSite) -> Iterator[Violation]:
    """An argument type has no faithful msOpGen equivalent; new ops only.

    msOpGen attrs are int, float, bool, string and their lists; inputs are Tensor (required),
    Tensor? (optional) and Tensor[] (dynamic). ``Scalar``, ``ScalarType``, ``Generator``, ``Layout``,
    ``Device``, ``str?``, ``Tensor?[]`` ... cannot be declared in the prototype JSON, and TorchAir's
    automatic converter cannot map them: the op needs a hand-written converter or a different type.
    """
    sig = site.signature
    if sig is None or not site.is_custom:
        return
    for a in sig.arguments:
        if a.is_tensor:
            if a.type.elem_optional or (a.type.is_list and a.type.optional):
                yield Violation(f"'{a.name}: {a.type}' has no msOpGen input kind (required, optional, dynamic)", column=a.column or None)
        elif a.type.msopgen_attr_type is None:
            yield Violation(f"'{a.name}: {a.type}' has no msOpGen attr type", column=a.column or None, hint="use int, float, bool, str or a list of int/float/bool")


@rule("S204", "not-capturable", severity=Severity.WARNING, scope="schema", example="my_dropout(Tensor x, float p, Generator? gen=None) -> Tensor")
def not_capturable(site: SchemaSite) -> Iterator[Violation]:
    """The op draws random numbers (a ``Generator`` argument or the ``nondeterministic_seeded`` tag).

    npugraph_ex captures a graph once and replays it; random-number ops cannot be captured, so a model
    calling this op breaks out of the aclgraph (or replays the same numbers).
    """
    sig = site.signature
    if sig is None:
        return
    reasons = []
    if sig.has_generator:
        reasons.append("takes a Generator")
    if "nondeterministic_seeded" in site.tags:
        reasons.append("is tagged nondeterministic_seeded")
    if reasons and site.is_custom:
        yield Violation(f"op {' and '.join(reasons)}: npugraph_ex cannot capture random-number ops")


@rule("S106", "duplicate-argument", severity=Severity.ERROR, scope="schema", example="my_op(Tensor x, Tensor x) -> Tensor")
def duplicate_argument(site: SchemaSite) -> Iterator[Violation]:
    """Two arguments share a name.

    torch's C++ parser accepts it, but Python keyword calls, the Meta function and the generated
    C++ (OpDef inputs, kernel parameters) cannot have two parameters of one name.
    """
    sig = site.signature
    if sig is None:
        return
    for name in [n for n, c in Counter(a.name for a in sig.arguments).items() if c > 1]:
        yield Violation(f"argument '{name}' is declared more than once")


@rule("S004", "rejected-by-torch-library", severity=Severity.ERROR, scope="schema", example="my_op(Tensor x, int k=1, Tensor y) -> Tensor")
def rejected_by_torch_library(site: SchemaSite) -> Iterator[Violation]:
    """torchgen accepts the ``func`` but torch's C++ schema parser rejects it; new ops only.

    torch_npu registers every ``custom:`` entry with ``m.def(schema)``, which runs the C++ parser
    (``torch._C.parse_schema``) at import time. It enforces what torchgen does not: "no positional
    argument without a default after one with a default" (lists excepted), and defaults that suit
    their types (``int[] k=1``, ``Tensor x=0`` and ``float eps=inf`` are rejected). Such an entry
    builds, then ``import torch_npu`` fails.
    """
    sig = site.signature
    if site.dialect is not Dialect.OP_PLUGIN or not site.is_custom or sig is None:
        return
    problem = check_schema(sig.arguments, sig.text)
    if problem is not None:
        yield Violation(f"torch_npu's m.def() would reject it: {problem.message}", column=problem.column, hint=problem.hint)


@rule("S107", "default-before-required", severity=Severity.WARNING, scope="schema", example="my_op(Tensor x, int k=1, int[] dims) -> Tensor")
def default_before_required(site: SchemaSite) -> Iterator[Violation]:
    """A positional argument with a default comes before one without; new ops only.

    torch's schema parser allows it when the later argument is a list, but the default can never be
    used (PyTorch only omits trailing defaults, so the argument is always passed), and Python-side
    tooling that builds a signature from the schema fails on it: ``torch.library.opcheck``'s
    ``test_schema`` reports "non-default argument follows default argument". Move the defaulted
    argument after the required ones, or make the later ones keyword-only.
    """
    sig = site.signature
    if sig is None or not site.is_custom:
        return
    positional = sig.positional_arguments
    for i, a in enumerate(positional):
        if a.default is not None:
            required = next((later for later in positional[i + 1 :] if later.default is None), None)
            if required is not None:
                yield Violation(
                    f"'{a.name}' has a default but '{required.name}' after it has none: the default is never used",
                    column=a.column or None,
                    hint="put arguments with defaults after the required ones, or make the later ones keyword-only",
                )
                return
