"""The effects of direct kernel launches: which of an op's tensor arguments its launched device kernels write.

For each C++ op kernel bound by ``impl`` to a device key (a named function or a lambda), the host function
is followed to its launches (``kernel<<<blocks, l2ctrl, stream>>>(args)``, ``ACLRT_LAUNCH_KERNEL(kernel)(blocks,
stream, args)`` or a launch macro of the files read, ``kernel_launches.launch_macros``; directly or through
launcher functions it calls with data pointers, ``MAX_HOPS`` deep); each launch argument is traced back to the
tensor whose data pointer it passes (``x.data_ptr()``, ``(GM_ADDR)x.mutable_data_ptr()``, a local copy, a
lambda capture, ``c ? x : at::empty(...)``), and each kernel parameter's write is read from the device code
(``opkit.formats.device_kernels``), as the launch runs it (the arms of a switch on a mode the launch gives as a
constant that it never takes are left out). Kernel parameter ``i`` receives argument ``i``; the host
function's parameters are the schema's arguments in order.

The facts cover the launches only: an argument no launched kernel receives is NO here (the host code's
other writes, aclnn calls and tensor methods, are the C++ host reader's); an argument passed to a kernel
this module cannot read (not in the files linted, declared by a macro) is UNKNOWN with the reason; so is one
handed to a macro this module does not read as a launch (the C++ host reader says so).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

from opkit.effects.model import ArgumentEffect, Evidence, KernelSite, Knowledge, OpEffects

# impl keys whose kernel runs on the device (or is the op's only kernel)
HOST_KEYS = frozenset({"PrivateUse1", "NPU", "CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd", ""})
MAX_HOPS = 3  # host functions followed from the op's kernel to a launch
# a kernel a macro declares, its name pasted from a parameter: `__global__ __aicore__ void k_##TYPE(`
_PASTED = re.compile(r"__global__[^;{(]*?\b(\w+)\s*##\s*\w+\s*\(")
_KNOWLEDGE = {"yes": Knowledge.YES, "no": Knowledge.NO, "unknown": Knowledge.UNKNOWN}


def produce(project) -> Iterator[OpEffects]:
    """One ``OpEffects`` per registered op whose kernel launches a device kernel, from a lint project's
    ``cpp_files`` (registrations), ``cpp_functions``, ``launch_files`` and ``cpp_texts``."""
    from opkit.formats.kernel_launches import ACLRT_LAUNCH, has_launch_macros

    texts = getattr(project, "cpp_texts", None) or {}
    if not project.launch_files and not any(ACLRT_LAUNCH in text or has_launch_macros(text) for text in texts.values()):
        return
    yield from _Builder(project).effects()


class _Builder:
    def __init__(self, project):
        from opkit.formats.kernel_launches import ACLRT_LAUNCH, launch_macros, read_pointer_calls

        self.project = project
        self.texts: dict[str, str] = project.cpp_texts
        # path → tokens: each file is lexed once however many ops follow it (the launch files already by the lint's loader)
        self.tokens: dict = getattr(project, "cpp_tokens", {})
        self.read_pointer_calls = read_pointer_calls
        self.macros = launch_macros(self.texts)
        # the lambdas registered as kernels, by the registering file: read as host functions of their own
        self.lambdas: dict[str, set[tuple[int, int]]] = {}
        for file in project.cpp_files:
            for impl in file.impls:
                if impl.kernel.kind == "lambda" and impl.dispatch_key in HOST_KEYS:
                    self.lambdas.setdefault(file.path, set()).add((impl.kernel.line, impl.kernel.column))
        # every function that launches a kernel (in the files with <<<>>>, and in those naming ACLRT_LAUNCH_KERNEL
        # or a launch macro), or calls one that does, MAX_HOPS deep, by unqualified name:
        # LayerNormStrideLaunch -> LayerNormStrideKernelLaunch -> kernel<<<>>>
        paths = [file.path for file in project.launch_files]
        markers = (ACLRT_LAUNCH, *self.macros)
        paths += [path for path, text in self.texts.items() if any(m in text for m in markers)]
        files = [(path, self.texts[path]) for path in dict.fromkeys(paths) if path in self.texts]
        self.launchers: dict[str, list] = {}
        for _ in range(MAX_HOPS):
            known = frozenset(self.launchers)
            found: dict[str, list] = {}
            for path, text in files:
                for name, fn in read_pointer_calls(path, text, known, cache=self.tokens, macros=self.macros).items():
                    if not name.startswith("<lambda"):
                        found.setdefault(name, []).append(fn)
            self.launchers = found
            if frozenset(found) == known:
                break
        self._calls: dict[str, dict] = {}
        self.device = DeviceKernels.of(project)
        self.schemas = schemas_by_op(project)

    def effects(self) -> Iterator[OpEffects]:
        from opkit.formats.kernel_launches import lambda_key

        seen = set()
        for file in self.project.cpp_files:
            for impl in file.impls:
                if impl.dispatch_key not in HOST_KEYS or impl.kernel.kind not in ("function", "lambda"):
                    continue
                op = f"{impl.namespace}::{impl.op}" if impl.namespace else impl.op
                if op in seen:
                    continue
                if impl.kernel.kind == "lambda":
                    host = self._calls_of(file.path).get(lambda_key(impl.kernel.line, impl.kernel.column))
                else:
                    host = self._host_function(impl.kernel.name, file.path)
                if host is None:
                    continue
                launches = list(self._launches(host, 0))
                if not launches:
                    continue
                seen.add(op)
                yield self._op_effects(op, impl, host, launches)

    # -- host side -------------------------------------------------------------------------------
    def _host_function(self, name: str, registering: str):
        """The op's kernel function: where the index of C++ functions puts it (by its qualified name), else in
        the registering file or a header it includes."""
        short = name.rsplit("::", 1)[-1]
        paths = [fn.path for fn in self.project.cpp_functions.get(short, []) if fn.defined and fn.path in self.texts and (fn.name == name or "::" not in name)]
        if not paths:
            paths = list(self.device.with_includes(registering)) if registering in self.texts else []
        found = [fn for path in dict.fromkeys(paths) for fn in self._calls_of(path).values() if fn.name == short]
        return found[0] if len(found) == 1 else None

    def _calls_of(self, path: str) -> dict:
        """The functions of ``path`` (and the lambdas it registers as kernels) that launch a kernel or call a launcher."""
        from opkit.formats.kernel_launches import ACLRT_LAUNCH

        if path not in self._calls:
            text = self.texts[path]
            wanted = frozenset(n for n in self.launchers if n in text and re.search(r"\b%s\s*\(" % re.escape(n), text))
            if not wanted and "<<<" not in text and not any(m in text for m in (ACLRT_LAUNCH, *self.macros)):
                self._calls[path] = {}  # neither launches nor calls a launcher: not worth lexing
                return self._calls[path]
            lambdas = frozenset(self.lambdas.get(path, ()))
            self._calls[path] = self.read_pointer_calls(path, text, wanted, cache=self.tokens, macros=self.macros, lambdas=lambdas)
        return self._calls[path]

    def _launches(self, host, hops: int) -> Iterable[tuple]:
        """(launch call, the launching function, sources mapped to ``host``'s parameters) of each launch reached."""
        for call in host.calls:
            if call.launch:
                yield call, host, call.sources
            elif hops < MAX_HOPS:
                targets = [f for f in self.launchers.get(call.callee, []) if len(f.parameters) == len(call.arguments)]
                if len(targets) != 1 or targets[0] is host:
                    continue
                for launch, where, sources in self._launches(targets[0], hops + 1):
                    mapped = tuple(_through(source, call) for source in sources)
                    yield launch, where, mapped

    # -- the op ----------------------------------------------------------------------------------
    def _op_effects(self, op: str, impl, host, launches: list[tuple]) -> OpEffects:
        signature = self.schemas.get(op) or self.schemas.get(op.split("::", 1)[-1])
        names = [a.name for a in signature.arguments] if signature is not None else list(host.parameters)
        tensors = [a.name for a in signature.arguments if a.is_tensor] if signature is not None else []
        writes: dict[str, list[Evidence]] = {}
        unknown: dict[str, str] = {}
        unknowns: list[str] = []
        untraced: list[str] = []  # memory a kernel may write, passed from an expression not traced to an argument
        sites = []
        for call, where, sources in launches:
            kernel = self.device.kernel(call.callee, where.path, {i: v for i, v in enumerate(call.values) if v is not None})
            if kernel is None:
                unknowns.append(f"{_form(call)} (line {call.line}): its __global__ kernel is not in the files read")
                for source in sources:
                    if source is not None and source.kind == "tensor" and source.parameter < len(names):
                        unknown.setdefault(names[source.parameter], f"passed to {_form(call)}, whose device code was not read")
                continue
            sites.append(KernelSite(kernel.name, "device", impl.dispatch_key, kernel.path, kernel.line, kernel.column))
            for parameter in kernel.parameters:
                if parameter.written == "no":
                    continue
                source = sources[parameter.index] if parameter.index < len(sources) else None
                argument = names[source.parameter] if source is not None and source.kind == "tensor" and source.parameter < len(names) else None
                if argument is None:
                    passed = call.arguments[parameter.index] if parameter.index < len(call.arguments) else ""
                    for word in set(re.findall(r"[A-Za-z_]\w*", passed)) & set(where.parameters if where is host else ()):
                        index = host.parameters.index(word)
                        if index < len(names):  # named in an expression opkit does not trace: it may point into it
                            unknown.setdefault(names[index], f"passed to {kernel.name}'s parameter {parameter.name} as {passed}, which opkit does not trace")
                    if source is None:
                        untraced.append(f"{_form(call)} (line {call.line}) passes {passed or '?'} to {kernel.name}'s parameter {parameter.name}, which it "
                                        f"{'writes' if parameter.written == 'yes' else 'may write'}: opkit does not trace it to an argument")  # fmt: skip
                    if parameter.written == "yes" and (source is None or source.kind != "local"):
                        unknowns.append(f"{kernel.name} writes its parameter {parameter.name}, passed as {call.arguments[parameter.index] if parameter.index < len(call.arguments) else '?'}"
                                        f" (line {call.line}), not traced to an argument")  # fmt: skip
                    continue
                if parameter.written == "yes":
                    launch = f"{_form(call)} at {os.path.basename(where.path)}:{call.line} passes it as {parameter.name}"
                    writes.setdefault(argument, []).extend(Evidence(w.path, w.line, w.column, f"{w.why}; {launch}") for w in parameter.writes)
                else:
                    unknown.setdefault(argument, f"{kernel.name}'s parameter {parameter.name}: {parameter.unknown_because}")
        arguments = []
        for name in tensors:
            if name in writes:
                arguments.append(ArgumentEffect(name, Knowledge.YES, tuple(writes[name])))
            elif name in unknown:
                arguments.append(ArgumentEffect(name, Knowledge.UNKNOWN, unknown_because=unknown[name]))
            elif untraced:  # it may be what an untraced pointer points into
                arguments.append(ArgumentEffect(name, Knowledge.UNKNOWN, unknown_because=untraced[0]))
            else:
                arguments.append(ArgumentEffect(name, Knowledge.NO))
        if signature is None:
            unknowns.append("no schema found for the op: its tensor arguments are not known")
        return OpEffects(op, tuple(sites), tuple(arguments), unknowns=tuple(dict.fromkeys(unknowns)))


class DeviceKernels:
    """The ``__global__`` kernels of some C++ texts, found by name: each looked for in a file and what it
    includes, else in the one other file that defines it; each group of files read once."""

    def __init__(self, texts: dict[str, str], tokens: dict | None = None, parts: dict | None = None):
        self.texts = texts
        self.tokens = {} if tokens is None else tokens  # path → tokens, shared with the launch reader
        self.parts = {} if parts is None else parts  # path → the file's device-code structure, read once
        self._code: dict[tuple[str, ...], object] = {}
        self._by_path: dict[str, str] | None = None
        self._pasted: dict[str, set[str]] | None = None  # kernel file → names its macros paste a parameter onto

    @classmethod
    def of(cls, inputs) -> DeviceKernels:
        """The kernels of a lint's (or ``Sources``') C++ texts, with the tokens and file structures its readers
        keep for each other (``cpp_tokens``, ``device_code``)."""
        return cls(getattr(inputs, "cpp_texts", None) or {}, getattr(inputs, "cpp_tokens", None), getattr(inputs, "device_code", None))

    def kernel(self, name: str, near: str, values: dict[int, int] | None = None):
        """The kernel ``name`` as ``near`` (a file of the texts) and its includes define it, else as the one
        other file defining it (with its includes) does; None when none or several do. ``values``: the integer
        arguments a launch gives it (the arms of a switch on one are read alone)."""
        from opkit.formats.device_kernels import has_device_kernels

        paths = self.with_includes(near) if near in self.texts else ()
        kernel = self.code(paths).kernel(name, values) if paths else None
        if kernel is not None:
            return kernel
        pattern = re.compile(r"\b%s\s*\(" % re.escape(name))
        if self._pasted is None:  # each kernel file's macro-declared kernel names, before the pasted parameter
            self._pasted = {p: set(_PASTED.findall(text)) for p, text in self.texts.items() if has_device_kernels(text) and "##" in text}
        # the kernel's file names it, or pastes it in a macro declaring kernels (`void k_##TYPE(` for `k_half`)
        owners = [p for p, text in self.texts.items() if p not in paths and has_device_kernels(text)
                  and (pattern.search(text) or any(name.startswith(prefix) for prefix in self._pasted.get(p, ())))]  # fmt: skip
        found = [k for k in (self.code(self.with_includes(p)).kernel(name, values) for p in owners) if k is not None]
        return found[0] if len(found) == 1 else None

    def code(self, paths: tuple[str, ...]):
        from opkit.formats.device_kernels import DeviceCode

        if paths not in self._code:
            self._code[paths] = DeviceCode({p: self.texts[p] for p in paths}, cache=self.tokens, parts=self.parts)
        return self._code[paths]

    def with_includes(self, path: str, depth: int = 3) -> tuple[str, ...]:
        """``path`` and the files of the texts it includes by a quoted path, ``depth`` levels down."""
        from opkit.formats.cpp_registrations import included_in

        if self._by_path is None:
            self._by_path = {os.path.normpath(p): p for p in self.texts}
        return (path, *included_in(path, self.texts, depth, self._by_path))


def _form(call) -> str:
    """A launch as the code writes it: ``k<<<>>>``, ``ACLRT_LAUNCH_KERNEL(k)``, a launch macro's use."""
    return call.form or f"{call.callee}<<<>>>"


def _through(source, call):
    """A source in a launcher's terms (its parameter ``i``) mapped through the call of it to the caller's."""
    from opkit.formats.kernel_launches import PointerSource

    if source is None or source.kind == "local":
        return source
    outer = call.sources[source.parameter] if source.parameter < len(call.sources) else None
    if outer is not None and source.kind == "tensor" and outer.kind == "pointer":  # the launcher takes the tensor itself
        return PointerSource("tensor", outer.parameter, outer.name, outer.via)
    return outer


def schemas_by_op(project) -> dict:
    """Each op's signature by ``ns::name`` (and ``name``), from every schema the project holds."""
    found: dict = {}
    # the C++ defs first: a kernel bound by a C++ impl is the one its TORCH_LIBRARY block defines
    for site in (*(s for f in project.cpp_files for s in f.schema_sites()), *project.all_schema_sites()):
        signature = site.signature
        if signature is None:
            continue
        namespace = signature.namespace or site.namespace
        full = signature.name + (f".{signature.overload}" if signature.overload else "")
        found.setdefault(f"{namespace}::{full}" if namespace else full, signature)
        found.setdefault(full, signature)
    return found
