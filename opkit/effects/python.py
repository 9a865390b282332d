"""Python kernels as an effects producer: ``opkit.formats.python_kernels``' located facts → ``OpEffects``.

The schema an op's kernel is held to comes, in order, from the registration itself (a custom_op's
``mutates_args`` and annotations, ``direct_register_custom_op``'s, as ``torch.library.infer_schema`` infers
them), from ``schema_of`` (what else the lint or verify run knows: ``Library.define``, C++ ``m.def``, the
yaml), else from a ``define`` in the kernel's own file. Kernel parameters map to schema arguments by
position (keyword-only ones by name). A call of a registered op writes what that op's schema marks
``(a!)``; an op whose schema is not known, and any call opkit does not follow, makes the tensors it is given
UNKNOWN, never NO.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from opkit.effects.model import Allocation, ArgumentEffect, Evidence, KernelSite, Knowledge, OpEffects, ReturnEffect
from opkit.formats.files import InputError
from opkit.formats.python_kernels import Exit, KernelBody, PythonKernel, PythonKernelFile, Returned, read_python_kernels
from opkit.signature import Dialect, OpSignature, SchemaError, parse_schema

SchemaLookup = Callable[[str], "OpSignature | None"]  # "ns::name" / "ns::name.overload" → its schema


def _parse(text: str | None) -> OpSignature | None:
    if not text:
        return None
    try:
        return parse_schema(text, Dialect.TORCH_LIBRARY)
    except SchemaError:
        return None


def _no_schemas(_: str) -> None:
    return None


def produce(inputs) -> Iterator[OpEffects]:
    """The producer ``opkit.effects.build`` calls: the Python kernels of ``inputs.python_files`` (the
    registration reader's files: their path and text), each op held to the schemas ``inputs`` declares."""
    files = getattr(inputs, "python_files", ())
    if not files:
        return iter(())
    texts = {f.path: f.text for f in files}
    trees = getattr(inputs, "python_trees", None)
    read = [kernels for f in files if (kernels := _kernels(f.path, f.text, texts.get, trees)) is not None and kernels.kernels]
    if not read:
        return iter(())
    return python_effects(read, schema_index(_schema_sites(inputs)))


def _kernels(path: str, text: str, modules, trees: dict | None) -> PythonKernelFile | None:
    try:
        return read_python_kernels(path, text, modules, trees)
    except InputError:  # the registration reader reports the syntax error (E002)
        return None


def _schema_sites(inputs) -> list:
    if hasattr(inputs, "all_schema_sites"):
        return list(inputs.all_schema_sites())
    sites = []
    for source in (*getattr(inputs, "yaml_files", ()), *getattr(inputs, "python_files", ()), *getattr(inputs, "cpp_files", ())):
        sites.extend(source.schema_sites())
    return sites


def schema_index(sites: Iterable) -> SchemaLookup:
    """``"ns::name[.overload]"`` → the schema some site declares. op_plugin_functions.yaml's ``custom:`` ops
    (no namespace in the file) are torch_npu's ``npu::`` ops."""
    found: dict[str, OpSignature] = {}
    for site in sites:
        sig = site.signature
        if sig is None:
            continue
        namespace = sig.namespace or site.namespace or ("npu" if site.section == "custom" else "")
        if namespace:
            found.setdefault(f"{namespace}::{sig.full_name}", sig)
    return found.get


def python_effects(files: Iterable[PythonKernelFile], schema_of: SchemaLookup = _no_schemas) -> Iterator[OpEffects]:
    """One ``OpEffects`` per op some Python kernel of ``files`` implements (its kernels for every key merged)."""
    by_op: dict[str, list[tuple[PythonKernelFile, PythonKernel]]] = {}
    for file in files:
        for kernel in file.kernels:
            by_op.setdefault(kernel.qualname, []).append((file, kernel))
    for qualname, kernels in by_op.items():
        yield op_effects(qualname, kernels, schema_of)


def schema_for(qualname: str, kernels: list[tuple[PythonKernelFile, PythonKernel]], schema_of: SchemaLookup) -> OpSignature | None:
    for _, kernel in kernels:
        own = _parse(kernel.schema)
        if own is not None:
            return own
    found = schema_of(qualname)
    if found is not None:
        return found
    for file, kernel in kernels:
        name = kernel.op.split(".", 1)[0]
        if name in file.defined:
            text = file.defined[name][0]
            return _parse(text if "::" in text.split("(", 1)[0] or not kernel.namespace else f"{kernel.namespace}::{text}")
    return None


def op_effects(qualname: str, kernels: list[tuple[PythonKernelFile, PythonKernel]], schema_of: SchemaLookup = _no_schemas) -> OpEffects:
    sig = schema_for(qualname, kernels, schema_of)
    sites = tuple(KernelSite(k.body.function, "python", k.dispatch_key, k.body.path or f.path, k.body.line, k.body.column) for f, k in kernels)
    unknowns: list[str] = []
    if sig is None:
        unknowns.append(f"no schema of {qualname} is known: the kernel's parameters are not mapped to schema arguments")
    written: dict[str, list[Evidence]] = {}
    unknown: dict[str, list[str]] = {}
    syncs: list[Evidence] = []
    side_effects: list[Evidence] = []
    returns: list[list[tuple[Returned, str]]] = []  # per kernel: (value, path) per schema return, or []
    tensor_names: list[str] = [a.name for a in sig.arguments if a.is_tensor] if sig else []
    for file, kernel in kernels:
        body = kernel.body
        path = body.path or file.path  # an op_func imported from another module is read there
        names = _parameter_names(body, sig)
        if sig is None:
            for p in body.parameters:
                if (body.annotated_types.get(p) or "").startswith("Tensor") and p not in tensor_names:
                    tensor_names.append(p)
        tensors = set(tensor_names)
        for w in body.writes:
            name = names.get(w.parameter)
            if name in tensors:
                written.setdefault(name, []).append(Evidence(path, w.line, w.column, w.why))
        for o in body.opaque:
            for p in o.parameters:
                name = names.get(p)
                if name in tensors:
                    unknown.setdefault(name, []).append(f"{path}:{o.line}: {o.why}")
        for call in body.op_calls:
            _op_call(call, path, names, tensors, schema_of, written, unknown)
        for s in body.syncs:
            if s.on is None or names.get(s.on) in tensors:
                syncs.append(Evidence(path, s.line, s.column, s.why))
        side_effects += [Evidence(path, s.line, s.column, s.why) for s in body.side_effects]
        returns.append(_returns(body, sig, names, path))
    arguments = []
    for name in tensor_names:
        if name in written:
            arguments.append(ArgumentEffect(name, Knowledge.YES, tuple(written[name])))
        elif name in unknown:
            arguments.append(ArgumentEffect(name, Knowledge.UNKNOWN, unknown_because=unknown[name][0]))
        else:
            arguments.append(ArgumentEffect(name, Knowledge.NO))
    return OpEffects(
        _op_name(qualname, sig), sites, tuple(arguments), _merge_returns(returns, sig), (), tuple(syncs), tuple(side_effects), tuple(unknowns)
    )


def _op_name(qualname: str, sig: OpSignature | None) -> str:
    return qualname


def _parameter_names(body: KernelBody, sig: OpSignature | None) -> dict[str, str]:
    """Kernel parameter → schema argument (by position; keyword-only by name); itself without a schema."""
    if sig is None:
        return {p: p for p in body.parameters}
    positional = [a for a in sig.arguments if not a.kwarg_only]
    mapping = {p: a.name for p, a in zip(body.parameters, positional)}
    for p in body.parameters[len(positional):]:
        if sig.argument(p) is not None:
            mapping[p] = p
    return mapping


def _op_call(call, path: str, names: dict[str, str], tensors: set[str], schema_of: SchemaLookup, written, unknown) -> None:
    """A call of a registered op: what its schema marks ``(a!)`` is written; an op without a known schema
    leaves what it is given unknown."""
    called = schema_of(call.op) or (schema_of(call.op.split(".", 1)[0]) if "." in call.op else None)
    given = [(names.get(p), position, None) for position, p in call.positional] + [(names.get(p), None, keyword) for keyword, p in call.keywords]
    for name, position, keyword in given:
        if name not in tensors:
            continue
        if called is None:
            if call.op.startswith("aten::"):  # ATen's convention: ``name_`` writes self, ``.out`` writes out
                base = call.op.split("::", 1)[1].split(".", 1)[0]
                if (base.endswith("_") and position == 0) or keyword == "out":
                    written.setdefault(name, []).append(Evidence(path, call.line, call.column, f"{call.why}: ATen's {call.op} writes it"))
                continue
            unknown.setdefault(name, []).append(f"{path}:{call.line}: {call.why}: the schema of {call.op} is not known here")
            continue
        if keyword is not None:
            argument = called.argument(keyword)
        else:
            positional = [a for a in called.arguments if not a.kwarg_only]
            argument = positional[position] if position < len(positional) else None
        if argument is not None and argument.is_mutated:
            written.setdefault(name, []).append(Evidence(path, call.line, call.column, f"{call.why}: {call.op} marks {argument.name} (a!)"))


def _returns(body: KernelBody, sig: OpSignature | None, names: dict[str, str], path: str) -> list[tuple[Returned, str]]:
    """One value per schema return when every ``return`` of the body agrees on it; "unknown" where not."""
    count = len(sig.returns) if sig is not None else None
    if not count:
        return []
    per_index: list[list[Returned]] = [[] for _ in range(count)]
    exits: list[Exit] = list(body.exits)
    if not exits:
        return [(Returned("unknown", body.line, body.column, f"{body.function} has no return statement opkit can read"), path)] * count
    for exit in exits:
        values = exit.values
        if count == 1 and not exit.is_sequence:
            per_index[0].append(values[0])
        elif count > 1 and exit.is_sequence and len(values) == count:
            for i, v in enumerate(values):
                per_index[i].append(v)
        elif count == 1 and exit.is_sequence and len(values) == 1:
            per_index[0].append(values[0])
        else:
            for i in range(count):
                per_index[i].append(Returned("unknown", exit.line, exit.column, "the return's structure does not match the schema's returns"))
    merged = []
    for values in per_index:
        kinds = {(v.kind, names.get(v.parameter, v.parameter) if v.parameter else None) for v in values}
        merged.append((values[0] if len(kinds) == 1 else Returned("unknown", values[0].line, values[0].column, "its returns differ in kind"), path))
    return [(Returned(v.kind, v.line, v.column, v.why, names.get(v.parameter, v.parameter) if v.parameter else None, v.allocation), p) for v, p in merged]


def _merge_returns(per_kernel: list[list[tuple[Returned, str]]], sig: OpSignature | None) -> tuple[ReturnEffect, ...]:
    if sig is None or not sig.returns:
        return ()
    effects = []
    for index in range(len(sig.returns)):
        values = [k[index] for k in per_kernel if len(k) > index]
        if not values or any(v.kind == "unknown" for v, _ in values):
            effects.append(ReturnEffect(index, known=False, evidence=tuple(Evidence(p, v.line, v.column, v.why) for v, p in values if v.kind == "unknown")))
            continue
        aliases = {v.parameter for v, _ in values if v.kind == "alias"}
        evidence = tuple(Evidence(p, v.line, v.column, v.why) for v, p in values)
        if len(aliases) == 1 and all(v.kind == "alias" for v, _ in values):
            effects.append(ReturnEffect(index, aliases=aliases.pop(), known=True, evidence=evidence))
        elif any(v.kind == "alias" for v, _ in values) or any(v.kind == "none" for v, _ in values):
            effects.append(ReturnEffect(index, known=False, evidence=evidence))
        else:
            allocations = [v.allocation for v, _ in values if v.allocation is not None]
            allocation = None
            if len(allocations) == 1 and len(values) == 1:
                a = allocations[0]
                allocation = Allocation(a.dtype, a.size, a.device, Evidence(values[0][1], a.line, a.column, a.why))
            effects.append(ReturnEffect(index, allocation=allocation, known=True, evidence=evidence))
    return tuple(effects)
