"""A C++ Meta function of an extension-style project, compiled on the CPU and registered for verify.

An ``.asc`` may register its own Meta (``TORCH_LIBRARY_IMPL(ns, Meta, m) { m.impl("op", &op_meta); }``,
as TorchAir's kernel-launch examples do). That function is plain ATen C++, but the file around it needs
bisheng and torch_npu. So the function's own text is taken out of the file (the C++ registration reader
finds it, ``cpp_text`` finds its body), compiled alone with ``torch.utils.cpp_extension.load`` against
torch's headers, and registered on the op's Meta key through a ``torch::Library`` the compiled library
creates and destroys on request: the real C++ Meta runs on fake tensors, and verify can undo it as it
undoes its Python registrations. A function that uses torch_npu, launches a kernel or calls a helper of
the file cannot be compiled alone: verify then uses the project's Python Meta and says why. The helper
functions and namespace-scope constants of its file that the function names are compiled with it.

``verify --from FILE.cpp`` compiles the Metas of many ops (vllm-ascend's ``torch_binding_meta.cpp`` holds 46)
in one translation unit (``build_all``): a build of torch's headers takes tens of seconds. A function the
compiler's errors point into (each sits under ``#line`` of its own file) is left out and the rest rebuilt.
A build is kept for the process only, in a private temporary directory: a cache holds data, never code.
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
    # what the function uses from its file, compiled with it: (C++ namespace, first line, text) of each helper
    # function and namespace-scope constant it names (and they name), in the file's order
    helpers: tuple[tuple[str, int, str], ...] = ()

    @property
    def needs_torch_npu(self) -> bool:
        return bool(_NEEDS_TORCH_NPU.search(self.source)) or any(_NEEDS_TORCH_NPU.search(text) for _, _, text in self.helpers)

    @property
    def where(self) -> str:
        return f"{self.function} ({self.path}:{self.line})"


def find_cpp_meta(path: Path, text: str, name: str) -> CppMeta | None:
    """The C++ Meta function ``path`` registers for op ``name``, with its definition's text; None if none."""
    return next((m for m in find_cpp_metas(path, text) if m.op.split(".", 1)[0] == name), None)


def find_cpp_metas(path: Path, text: str) -> list[CppMeta]:
    """Every C++ Meta function ``path`` registers (``TORCH_LIBRARY_IMPL(ns, Meta, m)``), in the file's order, with
    its definition's text. The macros of the headers it includes beside it are read (``TORCH_LIBRARY_IMPL_EXPAND``);
    an impl whose function is not defined in the file, or a file opkit cannot read, gives none."""
    from opkit.formats.cpp_registrations import CppReadError, read_with_includes
    from opkit.formats.cpp_text import CppText, CppTextError
    from opkit.formats.files import InputError, read_text

    try:
        registrations = read_with_includes(str(path), text, read_text)
        cpp = CppText(text)
    except (CppReadError, CppTextError, InputError):
        return []
    defined = [f for f in registrations.functions if f.defined]
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    includes = tuple(m.group().strip() for m in _TORCH_INCLUDE.finditer(cpp.code))
    meta_names = {i.kernel.name.lstrip(":").rsplit("::", 1)[-1] for i in registrations.impls if i.dispatch_key == "Meta"}
    pieces = _file_pieces(cpp, text, starts, [f for f in defined if f.short_name not in meta_names])
    metas: list[CppMeta] = []
    for impl in registrations.impls:
        if impl.dispatch_key != "Meta" or impl.kernel.kind != "function":
            continue
        wanted = impl.kernel.name.lstrip(":")
        function = next((f for f in defined if f.name == wanted or f.name.endswith("::" + wanted) or f.short_name == wanted), None)
        if function is None:
            continue
        try:
            start, end = _definition_span(cpp, starts[function.line - 1] + function.column - 1)
        except (CppTextError, ValueError):
            continue
        namespace = impl.namespace or (impl.block.namespace if impl.block else "")
        source = text[start:end]
        metas.append(
            CppMeta(path, function.line, function.name, namespace, impl.op, source, includes, text.count("\n", 0, start) + 1, _helpers_of(source, pieces))
        )
    return metas


_CONSTANT = re.compile(r"^[ \t]*(?:static[ \t]+|inline[ \t]+)*(?:const|constexpr)\b[^;=(){}]*?\b([A-Za-z_]\w*)[ \t]*(?:=[^;{}]*|\{[^;{}]*\});", re.M)
_WORD = re.compile(r"[A-Za-z_]\w*")


def _file_pieces(cpp, text: str, starts: list[int], functions) -> dict[str, tuple[str, int, str]]:
    """The file's helper functions and constants by name: (C++ namespace, first line, text). A constant's namespace
    is not tracked: it is compiled in the namespace of the function that names it."""
    from opkit.formats.cpp_text import CppTextError

    pieces: dict[str, tuple[str, int, str]] = {}
    for match in _CONSTANT.finditer(cpp.code):
        if cpp.code.count("{", 0, match.start()) - cpp.code.count("}", 0, match.start()) <= 2:  # namespace scope, roughly
            pieces.setdefault(match.group(1), ("", text.count("\n", 0, match.start()) + 1, text[match.start() : match.end()].strip()))
    for function in functions:
        try:
            start, end = _definition_span(cpp, starts[function.line - 1] + function.column - 1)
        except (CppTextError, ValueError):
            continue
        scope = function.name.rpartition("::")[0]
        pieces.setdefault(function.short_name, (scope, text.count("\n", 0, start) + 1, text[start:end]))
    return pieces


def _helpers_of(source: str, pieces: dict[str, tuple[str, int, str]]) -> tuple[tuple[str, int, str], ...]:
    """The pieces ``source`` names, and those they name, in the file's order."""
    found: dict[str, tuple[str, int, str]] = {}
    frontier = [source]
    while frontier:
        for word in set(_WORD.findall(frontier.pop())):
            if word in pieces and word not in found:
                found[word] = pieces[word]
                frontier.append(pieces[word][2])
    return tuple(sorted(found.values(), key=lambda piece: piece[1]))


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


_REGISTRATION_FILE = "opkit-meta-registration"  # the #line name of the generated registrations: an error there is mapped back


def _source_file(metas: tuple[CppMeta, ...]) -> str:
    """The translation unit: each distinct function with its helpers (in its C++ namespace, under ``#line`` of its
    file, so that the compiler's errors name the user's lines) and one Library per meta, created on request."""
    includes = "\n".join(dict.fromkeys(("#include <ATen/ATen.h>", "#include <torch/library.h>", *(i for m in metas for i in m.includes))))
    parts: list[str] = []
    emitted: set[tuple[str, str]] = set()
    for meta in metas:
        scope = meta.function.rpartition("::")[0]
        for helper_scope, line, text in meta.helpers:
            helper_scope = helper_scope or scope
            if (helper_scope, text) not in emitted:
                emitted.add((helper_scope, text))
                parts.append(_in_namespace(helper_scope, f'#line {line} "{meta.path}"\n{text}'))
        if (scope, meta.source) not in emitted:
            emitted.add((scope, meta.source))
            parts.append(_in_namespace(scope, f'#line {meta.source_line} "{meta.path}"\n{meta.source}'))
    registrations = "\n".join(
        f'#line {i + 1} "{_REGISTRATION_FILE}"\n'
        f'    case {i}: opkit_meta_libraries[{i}] = std::make_unique<torch::Library>(torch::Library::IMPL, "{m.namespace}", '
        f'c10::DispatchKey::Meta, __FILE__, __LINE__); opkit_meta_libraries[{i}]->impl("{m.op}", TORCH_FN(::{m.function.lstrip(":")})); break;'
        for i, m in enumerate(metas)
    )
    return f"""{includes}
#include <memory>

{chr(10).join(parts)}
// Registered on request, not at load: verify destroys each Library (and with it the registration) afterwards.
static std::unique_ptr<torch::Library> opkit_meta_libraries[{len(metas)}];

extern "C" void opkit_register_meta(int index) {{
    switch (index) {{
{registrations}
    }}
}}

extern "C" void opkit_unregister_meta(int index) {{ opkit_meta_libraries[index].reset(); }}
"""


def _in_namespace(scope: str, text: str) -> str:
    names = [s for s in scope.split("::") if s]
    return "".join(f"namespace {s} {{\n" for s in names) + text + "\n" + "".join("}\n" for _ in names)


class CppMetaBuildError(RuntimeError):
    """The Meta function does not compile alone: the message is the compiler's first error."""


@dataclass(frozen=True)
class CppMetaLibrary:
    """A compiled library of C++ Meta functions: ``opkit_register_meta(i)`` registers ``metas[i]``."""

    path: Path
    metas: tuple[CppMeta, ...]

    def index(self, meta: CppMeta) -> int:
        return self.metas.index(meta)


_BUILT: dict[str, Path] = {}  # key → library built by this process


def build(meta: CppMeta) -> CppMetaLibrary:
    """The compiled library of ``meta`` alone; CppMetaBuildError with the compiler's first error."""
    return CppMetaLibrary(_compile((meta,)), (meta,))


def build_all(metas: list[CppMeta], *, attempts: int = 4) -> tuple[CppMetaLibrary | None, dict[CppMeta, str]]:
    """One library of every meta of ``metas`` that compiles alone (with its helpers), and the others with the
    compiler's first error about each. One translation unit, rebuilt without the functions the compiler's errors
    point into (each function sits under ``#line`` of its own file): a build of torch's headers takes tens of
    seconds, so one per file, not one per op."""
    left = tuple(dict.fromkeys(metas))
    failed: dict[CppMeta, str] = {}
    for _ in range(attempts):
        if not left:
            return None, failed
        try:
            return CppMetaLibrary(_compile(left), left), failed
        except CppMetaBuildError as exc:
            blamed = _blamed(left, exc.errors)
            if not blamed:  # an error opkit cannot place: every function of this build fails with it
                blamed = {meta: str(exc) for meta in left}
            failed.update(blamed)
            left = tuple(m for m in left if m not in blamed)
    failed.update({m: f"not compiled: {attempts} builds each failed" for m in left})
    return None, failed


_ERROR_AT = re.compile(r"^(.+?):(\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(.*)$")


def _blamed(metas: tuple[CppMeta, ...], errors: list[str]) -> dict[CppMeta, str]:
    """Which metas the compiler's ``errors`` point into (their function, a helper they use, their registration)."""
    blamed: dict[CppMeta, str] = {}
    for error in errors:
        match = _ERROR_AT.match(error)
        if match is None:
            continue
        file, line = match.group(1), int(match.group(2))
        for index, meta in enumerate(metas):
            spans = [(meta.source_line, meta.source), *((start, text) for _, start, text in meta.helpers)]
            inside = file == str(meta.path) and any(start <= line < start + text.count("\n") + 1 for start, text in spans)
            if inside or (file == _REGISTRATION_FILE and line == index + 1):
                blamed.setdefault(meta, f"{file}:{line}: {match.group(3)}")
    return blamed


def _compile(metas: tuple[CppMeta, ...]) -> Path:
    """The library of ``metas``, built once per source text and torch version in this process.

    Built in a private temporary directory, never in opkit's cache: a cache holds data, never code that a
    later run would load (docs/security.md)."""
    import atexit
    import shutil
    import tempfile

    import torch
    from torch.utils import cpp_extension

    source = _source_file(metas)
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
        text = str(exc)
        errors = [line.strip() for line in text.splitlines() if "error:" in line]
        error = CppMetaBuildError(errors[0] if errors else (text.splitlines()[0] if text else type(exc).__name__))
        error.errors = errors
        raise error from None
    del built  # is_python_module=False: nothing is returned, the library is written as <name>.so
    _BUILT[key] = library
    return library


@contextlib.contextmanager
def registered_meta(library: CppMetaLibrary, meta: CppMeta | None = None) -> Iterator[None]:
    """The compiled Meta of ``meta`` (default: every meta of the library) registered on its op while inside;
    unregistered after."""
    import torch

    torch.ops.load_library(str(library.path))  # torch's own loader: the library's symbols resolve against libtorch
    handle = ctypes.CDLL(str(library.path))
    indices = [library.index(meta)] if meta is not None else list(range(len(library.metas)))
    done: list[int] = []
    try:
        for index in indices:
            handle.opkit_register_meta(index)
            done.append(index)
        yield
    finally:
        for index in reversed(done):
            handle.opkit_unregister_meta(index)
