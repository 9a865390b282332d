"""What `opkit check` compiles with: the system C++ compiler and CANN's host headers.

Both are looked up, never installed. The headers are found by the one file every op_host source
includes, ``register/op_def_registry.h``: under ``--cann PATH``, else ``$ASCEND_HOME_PATH`` or
``$ASCEND_TOOLKIT_HOME`` (set by CANN's ``set_env.sh``), else the standard install locations. A root may
be a CANN installation (its ``include/`` holds the headers) or an include directory itself.
"""

from __future__ import annotations

import os
import platform
import shutil
from dataclasses import dataclass
from pathlib import Path

HOST_HEADER = Path("register", "op_def_registry.h")
STANDARD_CANN_ROOTS = (
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/usr/local/Ascend/cann",
    "~/Ascend/ascend-toolkit/latest",
    "~/Ascend/cann",
)
CANN_ENV_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")  # both set by CANN's set_env.sh
COMPILERS = ("c++", "g++", "clang++")


class CheckError(RuntimeError):
    """`opkit check` cannot run: no project, no compiler, no headers (exit 2)."""


class ToolchainError(CheckError):
    """No compiler, or no CANN host headers."""


@dataclass(frozen=True)
class HostHeaders:
    include_dir: Path  # holds register/op_def_registry.h
    found_by: str  # --cann, $ASCEND_HOME_PATH or "a standard location"

    def __str__(self) -> str:
        return f"{self.include_dir} (from {self.found_by})"


def _include_dirs(root: Path) -> tuple[Path, ...]:
    """Where a CANN root may keep its host headers: the root itself, include/, <arch>-linux/include/."""
    return (root, root / "include", root / f"{platform.machine()}-linux" / "include")


def _headers_under(root: Path) -> Path | None:
    return next((d for d in _include_dirs(root) if (d / HOST_HEADER).is_file()), None)


def cann_roots() -> list[tuple[Path, str]]:
    """Where a CANN installation may be, in the order looked: (root, what named it). ``opkit check`` and
    ``opkit doctor`` both look here."""
    named = [(os.environ.get(var), f"${var}") for var in CANN_ENV_VARS]
    roots = [(Path(value).absolute(), by) for value, by in named if value]
    return roots + [(Path(p).expanduser(), "a standard location") for p in STANDARD_CANN_ROOTS]


def find_host_headers(cann: str | os.PathLike | None = None) -> HostHeaders:
    """The CANN host headers to compile op_host sources against; ToolchainError with every place looked."""
    if cann is not None:
        root = Path(cann).expanduser().absolute()
        found = _headers_under(root)
        if found is None:
            raise ToolchainError(f"--cann {cann}: no {HOST_HEADER.as_posix()} in {', '.join(str(d) for d in _include_dirs(root))}")
        return HostHeaders(found, "--cann")
    candidates = cann_roots()
    for root, found_by in candidates:
        found = _headers_under(root)
        if found is not None:
            return HostHeaders(found, found_by)
    looked = ", ".join(str(root) for root, _ in candidates)
    raise ToolchainError(
        f"no CANN host headers ({HOST_HEADER.as_posix()}) under {looked}: "
        "install the CANN toolkit and `source <CANN>/set_env.sh`, or name it with `opkit check --cann PATH`"
    )


def find_compiler() -> str:
    """``$CXX`` when set, else the first of c++, g++, clang++ on PATH; ToolchainError when there is none."""
    wanted = os.environ.get("CXX")
    names = (wanted,) if wanted else COMPILERS
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    if wanted:
        raise ToolchainError(f"$CXX is {wanted!r}, which is not an executable on PATH")
    raise ToolchainError(f"no C++ compiler: none of {', '.join(COMPILERS)} is on PATH (Debian/Ubuntu: apt-get install g++)")
