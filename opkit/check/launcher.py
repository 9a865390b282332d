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


def compilable_text(source: Path, text: str) -> str:
    """What the compiler reads for ``source``: its launches rewritten, under a ``#line`` naming the file."""
    from opkit.formats.kernel_launches import read_kernel_launches

    launches = read_kernel_launches(str(source), text).launches
    quoted = str(source).replace("\\", "\\\\").replace('"', '\\"')
    return f'#line 1 "{quoted}"\n' + rewrite_launches(text, [launch.span for launch in launches])
