"""Compile a project's Ascend C sources with the system C++ compiler, syntax only, and keep what is the user's.

op_host sources are compiled as CANN's build compiles them (C++17) against CANN's host headers, with
``-Wall -Wextra``: an unknown OpDef method, a wrong enum, a wrong tiling struct name, a list default
written ``[1, 1]`` all fail here in about a second instead of minutes into ``build.sh``. The kernel is
compiled against opkit's stand-in ``kernel_operator.h`` (``include/``), which checks only the skeleton's
shape; see that header. Diagnostics located in the project's files are reported; the headers' own
notes and messages are not.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from opkit.check.toolchain import CheckError, HostHeaders, ToolchainError, find_compiler, find_host_headers

STAND_IN_INCLUDE = Path(__file__).resolve().parent / "include"
BASE_FLAGS = ("-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-fdiagnostics-color=never")
# The skeleton's kernel parameters are unused until the user writes the body.
KERNEL_FLAGS = ("-Wno-unused-parameter",)
COMPILE_TIMEOUT_S = 120
KINDS = ("op_host", "op_kernel")

_DIAGNOSTIC = re.compile(r"^(?P<path>[^\n:]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>fatal error|error|warning): (?P<message>.*)$")


@dataclass(frozen=True)
class Diagnostic:
    path: Path
    line: int
    column: int
    severity: str  # error | warning
    message: str

    def format(self, relative_to: Path) -> str:
        try:
            shown = self.path.relative_to(relative_to)
        except ValueError:
            shown = self.path
        return f"{shown}:{self.line}:{self.column}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class SourceCheck:
    """One source file compiled: what the compiler said about the project's files, and whether it failed."""

    source: Path
    kind: str  # op_host | op_kernel
    command: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    returncode: int
    outside: tuple[str, ...] = ()  # errors located outside the project, shown when none is inside

    @property
    def failed(self) -> bool:
        return self.returncode != 0


@dataclass(frozen=True)
class CheckReport:
    project: Path
    compiler: str
    headers: HostHeaders | None  # None: no CANN found, the op_host sources were skipped (``host_skipped`` says why)
    sources: tuple[SourceCheck, ...]
    host_skipped: str | None = None

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return tuple(d for s in self.sources for d in s.diagnostics)

    @property
    def error_count(self) -> int:
        located = sum(d.severity != "warning" for d in self.diagnostics)
        return located + sum(1 for s in self.sources if s.failed and not any(d.severity != "warning" for d in s.diagnostics))

    @property
    def warning_count(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)

    def exit_code(self, fail_on: str = "error") -> int:
        if self.error_count or (fail_on == "warning" and self.warning_count):
            return 1
        return 0

    def lines(self) -> list[str]:
        out = [f"compiler: {self.compiler}", f"CANN host headers: {self.headers or 'none'}"]
        if self.host_skipped:
            out.append(f"op_host not checked: {self.host_skipped}")
        for source in self.sources:
            out += [d.format(self.project) for d in source.diagnostics]
            if source.failed and not any(d.severity != "warning" for d in source.diagnostics):
                where = source.source.relative_to(self.project) if self.project in source.source.parents else source.source
                out.append(f"{where}: error: the compiler failed outside the project's files:")
                out += [f"    {line}" for line in source.outside] or [f"    exit {source.returncode}: {' '.join(source.command)}"]
        kinds = sorted({s.kind for s in self.sources})
        scope = "; ".join(
            {"op_host": "op_host against the CANN host headers", "op_kernel": "op_kernel skeleton only (opkit's stand-in kernel_operator.h)"}[k]
            for k in kinds
        )
        skipped = "; op_host skipped (no CANN host headers)" if self.host_skipped else ""
        out.append(f"checked {len(self.sources)} file(s), {scope}{skipped}: {self.error_count} error(s), {self.warning_count} warning(s)")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def ascend_c_trees(project: Path) -> tuple[Path, ...]:
    """The Ascend C project directories: ``project`` itself when it has op_host/, else its subdirectories that do."""
    if (project / "op_host").is_dir():
        return (project,)
    return tuple(sorted(p for p in project.iterdir() if (p / "op_host").is_dir())) if project.is_dir() else ()


def _sources(tree: Path, kinds: tuple[str, ...]) -> list[tuple[Path, str]]:
    return [(path, kind) for kind in kinds for path in sorted((tree / kind).glob("*.cpp"))]


def _inside(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def parse_diagnostics(output: str, cwd: Path, roots: tuple[Path, ...]) -> tuple[tuple[Diagnostic, ...], tuple[str, ...]]:
    """(errors and warnings located under ``roots``, the first error lines located elsewhere)."""
    inside: dict[tuple, Diagnostic] = {}
    outside: list[str] = []
    for line in output.splitlines():
        match = _DIAGNOSTIC.match(line)
        if match is None:
            continue
        path = (cwd / match["path"]).resolve()
        severity = "error" if match["severity"] == "fatal error" else match["severity"]
        if _inside(path, roots):
            diagnostic = Diagnostic(path, int(match["line"]), int(match["column"]), severity, match["message"])
            inside.setdefault((diagnostic.path, diagnostic.line, diagnostic.column, diagnostic.message), diagnostic)
        elif severity == "error" and len(outside) < 3:
            outside.append(line)
    return tuple(inside.values()), tuple(outside)


def _compile(compiler: str, headers: HostHeaders | None, source: Path, kind: str, roots: tuple[Path, ...]) -> SourceCheck:
    include = (f"-I{headers.include_dir}",) if kind == "op_host" else (f"-I{STAND_IN_INCLUDE}", *KERNEL_FLAGS)  # type: ignore[union-attr]
    command = (compiler, *BASE_FLAGS, *include, f"./{source.name}")  # ./: a file named -x.cpp is no option
    env = dict(os.environ, LC_ALL="C")  # plain quotes and English messages, whatever the user's locale
    try:
        done = subprocess.run(command, cwd=source.parent, capture_output=True, text=True, errors="replace", timeout=COMPILE_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return SourceCheck(source, kind, command, (), -1, (f"timed out after {COMPILE_TIMEOUT_S} s",))
    except OSError as exc:
        raise ToolchainError(f"cannot run {compiler}: {exc.strerror or exc}") from None
    diagnostics, outside = parse_diagnostics(done.stdout + done.stderr, source.parent, roots)
    return SourceCheck(source, kind, command, diagnostics, done.returncode, outside)


def check_project(
    project: str | os.PathLike = ".",
    *,
    cann: str | os.PathLike | None = None,
    kinds: tuple[str, ...] = KINDS,
) -> CheckReport:
    """Compile every ``op_host/*.cpp`` (and, in ``kinds``, ``op_kernel/*.cpp``) of the project's Ascend C trees.

    Without CANN found (and no ``cann`` named), the kernel skeleton is still compiled against the stand-in
    header, and the report says that the op_host sources were skipped and why; with nothing else to check
    (op_host only), the missing headers are the error."""
    root = Path(project).absolute()
    trees = ascend_c_trees(root)
    sources = [s for tree in trees for s in _sources(tree, kinds)]
    if not sources:
        raise CheckError(f"{project}: no Ascend C project here (looked for op_host/*.cpp in it and in its subdirectories)")
    compiler = find_compiler()
    headers, host_skipped = None, None
    try:
        headers = find_host_headers(cann)
    except ToolchainError as exc:
        kernels = [s for s in sources if s[1] != "op_host"]
        if cann is not None or not kernels:
            raise
        sources, host_skipped = kernels, str(exc)
    resolved = tuple(t.resolve() for t in trees)
    with ThreadPoolExecutor(max_workers=min(len(sources), os.cpu_count() or 1)) as pool:
        checks = tuple(pool.map(lambda s: _compile(compiler, headers, s[0], s[1], resolved), sources))
    return CheckReport(root, compiler, headers, checks, host_skipped)
