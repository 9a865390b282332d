"""`opkit check` of an extension-style project's host C++ (``csrc/*.asc``, ``csrc/*.cpp``), on a machine without CANN.

A ``.asc`` file holds the kernel, its ``<<<blockDim, l2ctrl, stream>>>`` launch and the torch.library
registrations. It is compiled syntax-only with the system C++ compiler against torch's C++ headers
(found without importing torch), torch_npu's (an installed torch_npu's ``include/``, else the torch-npu
wheel's, the one ``opkit verify`` uses) and opkit's stand-in ``kernel_operator.h``. Each launch is
rewritten first to ``(opkit_launch_config(blockDim, l2ctrl, stream), kernel)(args)``, which a host
compiler reads: the arguments are checked against the kernel's parameters and the configuration's types
against the stand-in's. A ``#line`` directive keeps every diagnostic at its place in the user's file (a
column after a launch on its line shifts by the rewrite's length).
"""

from __future__ import annotations

import sysconfig
from dataclasses import dataclass
from pathlib import Path

from opkit.check.toolchain import ToolchainError
from opkit.installed import package_dir

LAUNCHER_SUFFIXES = (".asc", ".cpp")
NPU_STREAM_HEADER = Path("torch_npu", "csrc", "core", "npu", "NPUStream.h")


@dataclass(frozen=True)
class LauncherHeaders:
    torch: tuple[Path, ...]  # torch/include and its csrc/api/include
    torch_npu: Path  # holds torch_npu/csrc/core/npu/NPUStream.h
    torch_npu_found_by: str
    python: Path | None = None  # Python.h, for sources that include torch/extension.h

    def include_flags(self) -> tuple[str, ...]:
        dirs = (*self.torch, self.torch_npu, *((self.python,) if self.python else ()))
        return tuple(f"-isystem{d}" for d in dirs)  # their own warnings are not the project's

    def __str__(self) -> str:
        return f"torch {self.torch[0]}; torch_npu {self.torch_npu} (from {self.torch_npu_found_by})"


def launcher_sources(project: Path) -> tuple[Path, ...]:
    """The host C++ of an extension-style project: ``csrc/*.asc`` and ``csrc/*.cpp``."""
    csrc = project / "csrc"
    if not csrc.is_dir():
        return ()
    return tuple(sorted(p for p in csrc.iterdir() if p.suffix in LAUNCHER_SUFFIXES and p.is_file()))


def find_launcher_headers(torch_npu_source: str | None = None) -> LauncherHeaders:
    torch_dir = package_dir("torch")
    if torch_dir is None or not (torch_dir / "include" / "torch" / "library.h").is_file():
        raise ToolchainError("no torch C++ headers: install torch (its include/ holds torch/library.h)")
    torch_dirs = (torch_dir / "include", torch_dir / "include" / "torch" / "csrc" / "api" / "include")
    installed = package_dir("torch_npu")
    if installed is not None and (installed / "include" / NPU_STREAM_HEADER).is_file():
        npu_include, found_by = installed / "include", "the installed torch_npu"
    else:
        from opkit.torch_npu_wheel import WheelUnavailable, include_dir

        try:
            npu_include, found_by = include_dir(torch_npu_source), "the torch-npu wheel"
        except WheelUnavailable as exc:
            raise ToolchainError(f"no torch_npu headers: torch_npu is not installed and {exc}") from None
    python = Path(sysconfig.get_paths()["include"])
    return LauncherHeaders(torch_dirs, npu_include, found_by, python if (python / "Python.h").is_file() else None)


def rewrite_launches(text: str, spans: list[tuple[int, int, int]]) -> str:
    """``text`` with each ``kernel<<<config>>>`` (spans: kernel start, '<<<', after '>>>') as
    ``(::opkit_launch_config(config), kernel)``; newlines are kept, so lines stay where they were."""
    out = []
    last = 0
    for start, chevrons, end in sorted(spans):
        kernel = text[start:chevrons]
        config = text[chevrons + 3 : end - 3]
        out += [text[last:start], f"(::opkit_launch_config({config}), {kernel})"]
        last = end
    out.append(text[last:])
    return "".join(out)


def compilable_text(source: Path, text: str, *, host_only: bool = False) -> str:
    """What the compiler reads for ``source``: its launches rewritten (with ``host_only``, its ``__aicore__``
    function bodies emptied too), under a ``#line`` naming the file."""
    from opkit.formats.kernel_launches import read_kernel_launches

    launches = read_kernel_launches(str(source), text).launches
    rewritten = rewrite_launches(text, [launch.span for launch in launches])
    if host_only:
        rewritten = without_kernel_bodies(rewritten)
    quoted = str(source).replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{quoted}"\n' + rewritten


# The qualifiers that mark a device function (a kernel written ``__global__ __vector__`` has no ``__aicore__``).
DEVICE_QUALIFIERS = frozenset({"__aicore__", "__global__", "__vector__", "__cube__", "__mix__"})
# What an emptied device function body holds: no statement to check, and no "missing return" warning.
EMPTIED_BODY = "{ __builtin_unreachable(); }"


def without_kernel_bodies(text: str) -> str:
    """``text`` with the body of every device function (``__aicore__``, ``__global__``, ...: the kernel and its
    class's methods) emptied,
    its line breaks kept so that every later line stays where it was: what `opkit check --host-only` compiles
    of a .asc, whose kernel code may use Ascend C API the stand-in does not declare."""
    from opkit.formats.cpp_text import CppTextError
    from opkit.formats.cpp_tokens import tokenize

    try:
        tokens = tokenize(text)
    except CppTextError:
        return text  # the compiler says what is wrong with it
    spans = []
    i = 0
    while i < len(tokens):
        if tokens[i].text not in DEVICE_QUALIFIERS:
            i += 1
            continue
        depth = 0
        j = i + 1
        while j < len(tokens) and not (depth == 0 and tokens[j].text in ("{", ";")):
            depth += {"(": 1, ")": -1}.get(tokens[j].text, 0)
            j += 1
        if j == len(tokens) or tokens[j].text == ";":
            i = j
            continue
        level = 0
        for k in range(j, len(tokens)):
            level += {"{": 1, "}": -1}.get(tokens[k].text, 0)
            if level == 0:
                spans.append((tokens[j].offset, tokens[k].offset + 1))
                break
        i = k + 1 if level == 0 else len(tokens)
    out, last = [], 0
    for start, end in spans:
        body = text[start:end]
        out += [text[last:start], EMPTIED_BODY, "\n" * body.count("\n")]
        last = end
    out.append(text[last:])
    return "".join(out)
