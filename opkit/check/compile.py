"""Compile a project's Ascend C sources with the system C++ compiler, syntax only, and keep what is the user's.

op_host sources are compiled as CANN's build compiles them (C++17) against CANN's host headers, with
``-Wall -Wextra``: an unknown OpDef method, a wrong enum, a wrong tiling struct name, a list default
written ``[1, 1]`` all fail here in about a second instead of minutes into ``build.sh``. The kernel is
compiled against opkit's stand-in ``kernel_operator.h`` (``include/``), which checks only the skeleton's
shape; see that header. An extension-style project's ``csrc/`` (kernel, ``<<<>>>`` launcher and
registrations in one ``.asc``) is compiled against torch's and torch_npu's headers (``launcher.py``).
Diagnostics located in the project's files are reported; the headers' own notes and messages are not.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from opkit.check.launcher import LauncherHeaders, compilable_text, find_launcher_headers, launcher_sources
from opkit.subprocess_safety import run_killing_group
from opkit.check.toolchain import CheckError, HostHeaders, ToolchainError, find_compiler, find_host_headers

STAND_IN_INCLUDE = Path(__file__).resolve().parent / "include"
BASE_FLAGS = ("-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-fdiagnostics-color=never")
# The skeleton's kernel parameters are unused until the user writes the body.
KERNEL_FLAGS = ("-Wno-unused-parameter",)
COMPILE_TIMEOUT_S = 120
# torch's headers (and pybind11's, under torch/extension.h) take far longer to parse than CANN's op_host ones
LAUNCHER_TIMEOUT_S = 300
# The most memory a compilation may take: torch's headers need about 1 GiB; more is a runaway input.
COMPILER_MEMORY_KB = 6 * 1024 * 1024
KINDS = ("op_host", "op_kernel", "launcher")

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
    kind: str  # op_host | op_kernel | launcher
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
    headers: HostHeaders | None  # None: no op_host source was compiled (``host_skipped`` says why, when CANN was missing)
    sources: tuple[SourceCheck, ...]
    launcher_headers: LauncherHeaders | None = None
    host_skipped: str | None = None
    host_only: bool = False  # the kernel code of csrc/ sources was left out (--host-only)

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
        out = [f"compiler: {self.compiler}"]
        if self.headers is not None or self.host_skipped:
            out.append(f"CANN host headers: {self.headers or 'none'}")
        if self.host_skipped:
            out.append(f"op_host not checked: {self.host_skipped}")
        if self.launcher_headers is not None:
            out.append(f"launcher headers: {self.launcher_headers}")
        for source in self.sources:
            out += [d.format(self.project) for d in source.diagnostics]
            if source.failed and not any(d.severity != "warning" for d in source.diagnostics):
                where = source.source.relative_to(self.project) if self.project in source.source.parents else source.source
                out.append(f"{where}: error: the compiler failed outside the project's files:")
                out += [f"    {line}" for line in source.outside] or [f"    exit {source.returncode}: {' '.join(source.command)}"]
        kinds = sorted({s.kind for s in self.sources})
        scope = "; ".join(
            {
                "op_host": "op_host against the CANN host headers",
                "op_kernel": "op_kernel skeleton only (opkit's stand-in kernel_operator.h)",
                "launcher": (
                    "launcher and registrations against torch's and torch_npu's headers (kernel bodies left out: --host-only)"
                    if self.host_only
                    else "launcher and registrations against torch's and torch_npu's headers (kernel and <<<>>> against opkit's stand-in kernel_operator.h)"
                ),
            }[k]
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


_INCLUDE_LINE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*["<]([^">\n]+)[">]', re.MULTILINE)
_PROJECT_HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inc", ".cpp", ".asc", ".cc")


def _unreadable_include(source: Path, roots: tuple[Path, ...]) -> Diagnostic | None:
    """An ``#include`` in the source, or in a header of the project it reaches by a quoted path, of
    something that is not a plain file (``/dev/zero``, a pipe): the compiler would read it without end."""
    seen: set[Path] = set()
    todo = [source]
    while todo and len(seen) < 1000:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            text = current.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in _INCLUDE_LINE.finditer(text):
            name = match.group(1).strip()
            candidate = Path(name) if os.path.isabs(name) else current.parent / name
            try:
                info = os.stat(candidate)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                if stat.S_ISDIR(info.st_mode):
                    continue
                line = text.count("\n", 0, match.start()) + 1
                return Diagnostic(current.resolve(), line, 1, "error", f"#include {name!r} names something that is not a plain file (a device or a pipe); opkit check does not compile it")
            if candidate.suffix in _PROJECT_HEADER_SUFFIXES and _inside(candidate.resolve(), roots):
                todo.append(candidate.resolve())
    return None


def _compile(compiler: str, headers, source: Path, kind: str, roots: tuple[Path, ...], host_only: bool = False) -> SourceCheck:
    refused = _unreadable_include(source, roots)
    if refused is not None:
        return SourceCheck(source, kind, (), (refused,), 1, ())
    if kind == "launcher":
        return _compile_launcher(compiler, headers, source, roots, host_only=host_only)
    include = (f"-I{headers.include_dir}",) if kind == "op_host" else (f"-I{STAND_IN_INCLUDE}", *KERNEL_FLAGS)
    command = (compiler, *BASE_FLAGS, *include, f"./{source.name}")  # ./: a file named -x.cpp is no option
    return _run(compiler, command, source, kind, source.parent, roots)


def _compile_launcher(compiler: str, headers: LauncherHeaders, source: Path, roots: tuple[Path, ...], *, host_only: bool = False) -> SourceCheck:
    """A .asc/.cpp of csrc/, its launches rewritten (``host_only``: its kernel bodies emptied), compiled from a
    temporary copy that #line maps back to it."""
    try:
        text = source.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CheckError(f"cannot read {source}: {exc.strerror or exc}") from None
    with tempfile.TemporaryDirectory(prefix="opkit-check-") as tmp:
        copy = Path(tmp) / (source.stem + ".cpp")
        copy.write_text(compilable_text(source.resolve(), text, host_only=host_only), encoding="utf-8")
        command = (
            compiler, "-x", "c++", *BASE_FLAGS, *KERNEL_FLAGS, f"-iquote{source.parent}", f"-I{STAND_IN_INCLUDE}", *headers.include_flags(), f"./{copy.name}",
        )  # fmt: skip
        return _run(compiler, command, source, "launcher", Path(tmp), roots, LAUNCHER_TIMEOUT_S)


def _run(compiler: str, command: tuple[str, ...], source: Path, kind: str, cwd: Path, roots: tuple[Path, ...], timeout: int = COMPILE_TIMEOUT_S) -> SourceCheck:
    env = dict(os.environ, LC_ALL="C")  # plain quotes and English messages, whatever the user's locale
    # The compiler's address space is bounded (an `#include "/dev/zero"` fails at once instead of eating the
    # machine), and at the timeout its whole process group goes (cc1plus with it). /bin/sh sets the limit:
    # a preexec_fn is not safe in the thread pool that runs the compilations.
    bounded = ("/bin/sh", "-c", f'ulimit -v {COMPILER_MEMORY_KB} 2>/dev/null; exec "$0" "$@"', *command)
    try:
        done = run_killing_group(bounded, timeout=timeout, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return SourceCheck(source, kind, command, (), -1, (f"timed out after {timeout} s",))
    except OSError as exc:
        raise ToolchainError(f"cannot run {compiler}: {exc.strerror or exc}") from None
    diagnostics, outside = parse_diagnostics(done.stdout + done.stderr, cwd, roots)
    return SourceCheck(source, kind, command, diagnostics, done.returncode, outside)


def check_project(
    project: str | os.PathLike = ".",
    *,
    cann: str | os.PathLike | None = None,
    kinds: tuple[str, ...] = KINDS,
    host_only: bool = False,
) -> CheckReport:
    """Compile every ``op_host/*.cpp`` (and, in ``kinds``, ``op_kernel/*.cpp``) of the project's Ascend C trees,
    and (kind ``launcher``) an extension-style project's ``csrc/`` sources; ``host_only``: no op_kernel source,
    and of a ``csrc/`` source only its host code (its ``__aicore__`` function bodies emptied).

    Without CANN found (and no ``cann`` named), the kernel skeleton and launchers are still compiled, and
    the report says that the op_host sources were skipped and why; with nothing else to check (op_host
    only), the missing headers are the error."""
    root = Path(project).absolute()
    if host_only:
        kinds = tuple(k for k in kinds if k != "op_kernel")
    trees = ascend_c_trees(root)
    sources = [s for tree in trees for s in _sources(tree, tuple(k for k in kinds if k != "launcher"))]
    launchers = [(s, "launcher") for s in launcher_sources(root)] if "launcher" in kinds else []
    if not sources and not launchers:
        raise CheckError(f"{project}: no Ascend C project here (looked for op_host/*.cpp in it and in its subdirectories, and for csrc/*.asc)")
    compiler = find_compiler()
    headers, host_skipped = None, None
    if any(kind == "op_host" for _, kind in sources):
        try:
            headers = find_host_headers(cann)
        except ToolchainError as exc:
            others = [s for s in sources if s[1] != "op_host"]
            if cann is not None or not (others or launchers):
                raise
            sources, host_skipped = others, str(exc)
    launcher_headers = find_launcher_headers() if launchers else None
    resolved = tuple(t.resolve() for t in trees) + ((root.resolve() / "csrc",) if launchers else ())
    jobs = sources + launchers
    with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
        checks = tuple(pool.map(lambda s: _compile(compiler, launcher_headers if s[1] == "launcher" else headers, s[0], s[1], resolved, host_only), jobs))
    return CheckReport(root, compiler, headers, checks, launcher_headers, host_skipped, host_only)
