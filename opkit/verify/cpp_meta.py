"""A C++ Meta function of an extension-style project, compiled on the CPU and registered for verify.

An ``.asc`` may register its own Meta (``TORCH_LIBRARY_IMPL(ns, Meta, m) { m.impl("op", &op_meta); }``,
as TorchAir's kernel-launch examples do). That function is plain ATen C++, but the file around it needs
bisheng and torch_npu. So the function's own text is taken out of the file (the C++ registration reader
finds it, ``cpp_text`` finds its body), compiled alone with ``torch.utils.cpp_extension.load`` against
torch's headers, and registered on the op's Meta key through a ``torch::Library`` the compiled library
creates and destroys on request: the real C++ Meta runs on fake tensors, and verify can undo it as it
undoes its Python registrations. A function that uses torch_npu, launches a kernel or calls a helper of
the file cannot be compiled alone: verify then uses the project's Python Meta and says why.

A build takes tens of seconds: it is kept in the opkit cache, keyed by the function's text and torch's
version, so an unchanged Meta is compiled once.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# What a Meta function compiled alone cannot use: torch_npu's API, ACL, a kernel launch.
_NEEDS_TORCH_NPU = re.compile(r"\b(?:c10_npu|at_npu|torch_npu|acl[A-Za-z_]*)\b|<<<")
_TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](?:torch|ATen|c10)/[^>"]+[>"]', re.M)


@dataclass(frozen=True)
class CppMeta:
    """The C++ Meta function registered for one op."""

    path: Path
    line: int
    function: str  # as the impl names it (``add_impl_meta``, ``ns::f_meta``)
    namespace: str  # the op's torch.library namespace
    op: str  # ``name`` or ``name.overload``
    source: str  # the function's definition, as written
    includes: tuple[str, ...]  # the file's torch/ATen/c10 #include lines
    source_line: int = 1  # the line the definition starts on (its return type)

    @property
    def needs_torch_npu(self) -> bool:
        return bool(_NEEDS_TORCH_NPU.search(self.source))


def find_cpp_meta(path: Path, text: str, name: str) -> CppMeta | None:
    """The C++ Meta function ``path`` registers for op ``name``, with its definition's text; None if none."""
    from opkit.formats.cpp_registrations import CppReadError, read_cpp_registrations
    from opkit.formats.cpp_text import CppText, CppTextError

    try:
        registrations = read_cpp_registrations(str(path), text)
    except CppReadError:
        return None
    impl = next((i for i in registrations.impls if i.dispatch_key == "Meta" and i.op.split(".", 1)[0] == name and i.kernel.kind == "function"), None)
    if impl is None:
        return None
    wanted = impl.kernel.name.lstrip(":")
    function = next((f for f in registrations.functions if f.defined and (f.name == wanted or f.name.endswith("::" + wanted) or f.short_name == wanted)), None)
    if function is None:
        return None
    try:
        cpp = CppText(text)
        name_at = sum(len(line) + 1 for line in text.split("\n")[: function.line - 1]) + function.column - 1
        start, end = _definition_span(cpp, name_at)
    except (CppTextError, ValueError):
        return None
    includes = tuple(m.group().strip() for m in _TORCH_INCLUDE.finditer(cpp.code))
    namespace = impl.namespace or (impl.block.namespace if impl.block else "")
    return CppMeta(path, function.line, function.name, namespace, impl.op, text[start:end], includes, text.count("\n", 0, start) + 1)


def _definition_span(cpp, name_at: int) -> tuple[int, int]:
    """(start, end) offsets of the definition whose name is at offset ``name_at``: from its return type to its '}'."""
    code = cpp.code
    start = max(code.rfind(c, 0, name_at) for c in ";{}") + 1
    while start < name_at:
        if code[start] in " \t\r\n":
            start += 1
        elif code[start] == "#":  # a directive line just before the definition
            start = code.index("\n", start) + 1
        else:
            break
    paren = code.index("(", name_at)
    brace = code.index("{", cpp.closing(paren))
    return start, cpp.closing(brace) + 1


def _source_file(meta: CppMeta) -> str:
    """The translation unit: the function (in its C++ namespace) and a Library its host creates on request."""
    scopes = meta.function.split("::")[:-1]
    opened = "".join(f"namespace {s} {{\n" for s in scopes)
    closed = "".join("}\n" for _ in scopes)
    includes = "\n".join(dict.fromkeys(("#include <ATen/ATen.h>", "#include <torch/library.h>", *meta.includes)))
    qualified = "::" + meta.function.lstrip(":")
    return f"""{includes}
#include <memory>

{opened}#line {meta.source_line} "{meta.path}"
{meta.source}
{closed}
// Registered on request, not at load: verify destroys the Library (and with it the registration) afterwards.
static std::unique_ptr<torch::Library> opkit_meta_library;

extern "C" void opkit_register_meta() {{
    opkit_meta_library = std::make_unique<torch::Library>(torch::Library::IMPL, "{meta.namespace}", c10::DispatchKey::Meta, __FILE__, __LINE__);
    opkit_meta_library->impl("{meta.op}", TORCH_FN({qualified}));
}}

extern "C" void opkit_unregister_meta() {{ opkit_meta_library.reset(); }}
"""


class CppMetaBuildError(RuntimeError):
    """The Meta function does not compile alone: the message is the compiler's first error."""


_BUILT: dict[str, Path] = {}  # key → library built by this process


def build(meta: CppMeta) -> Path:
    """The compiled library of ``meta``, built once per function text and torch version in this process.

    Built in a private temporary directory, never in opkit's cache: a cache holds data, never code that a
    later run would load (docs/security.md)."""
    import atexit
    import shutil
    import tempfile

    import torch
    from torch.utils import cpp_extension

    source = _source_file(meta)
    key = hashlib.sha256(f"{torch.__version__}\n{source}".encode()).hexdigest()[:16]
    if key in _BUILT:
        return _BUILT[key]
    directory = Path(tempfile.mkdtemp(prefix="opkit-cpp-meta-"))
    atexit.register(shutil.rmtree, directory, True)
    library = directory / f"opkit_meta_{key}.so"
    (directory / "meta.cpp").write_text(source, encoding="utf-8")
    try:
        built = cpp_extension.load(
            name=f"opkit_meta_{key}", sources=[str(directory / "meta.cpp")], build_directory=str(directory),
            is_python_module=False, extra_cflags=["-O0", "-w"], verbose=False,
        )  # fmt: skip
    except (RuntimeError, OSError, ImportError) as exc:
        first = next((line.strip() for line in str(exc).splitlines() if "error:" in line), str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        raise CppMetaBuildError(first) from None
    del built  # is_python_module=False: nothing is returned, the library is written as <name>.so
    _BUILT[key] = library
    return library


@contextlib.contextmanager
def registered_meta(library: Path) -> Iterator[None]:
    """The compiled Meta registered on its op while inside; unregistered after."""
    import torch

    torch.ops.load_library(str(library))  # torch's own loader: the library's symbols resolve against libtorch
    handle = ctypes.CDLL(str(library))
    handle.opkit_register_meta()
    try:
        yield
    finally:
        handle.opkit_unregister_meta()
