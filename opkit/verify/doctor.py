"""``opkit doctor``: what is installed, whether an NPU is usable, and the known traps. Never crashes.

torch itself is probed in a child process: with torch_npu installed and CANN missing, ``import torch``
fails (torch auto-loads device backends), and a broken CANN can even abort the interpreter; a child
process turns either into a finding. A second probe with ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` tells
that trap apart from a broken torch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path


_PROBE = r"""
import json, sys
info = {}
import torch
info["torch"] = torch.__version__
info["torch_path"] = torch.__file__
try:
    import torch_npu
    info["torch_npu"] = getattr(torch_npu, "__version__", "?")
    info["npu_available"] = bool(torch.npu.is_available())
    info["npu_count"] = torch.npu.device_count() if info["npu_available"] else 0
    if info["npu_count"]:
        info["soc"] = torch.npu.get_device_name(0)
    import torch._dynamo
    info["npugraph_ex_backend"] = "npugraph_ex" in torch._dynamo.list_backends(exclude_tags=())
except ImportError as e:
    info["torch_npu_error"] = f"{type(e).__name__}: {e}"
except Exception as e:
    info["torch_npu_error"] = f"{type(e).__name__}: {e}"
print("OPKIT_PROBE" + json.dumps(info))
"""


@dataclass(frozen=True)
class Finding:
    name: str
    status: str  # "ok", "info", "warn" or "fail"
    detail: str


@dataclass(frozen=True)
class DoctorReport:
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not any(f.status == "fail" for f in self.findings)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "findings": [f.__dict__ for f in self.findings]}

    def __str__(self) -> str:
        mark = {"ok": "ok  ", "info": "info", "warn": "WARN", "fail": "FAIL"}
        return "\n".join(f"[{mark.get(f.status, f.status)}] {f.name}: {f.detail}" for f in self.findings)


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
    except Exception:
        return None


def _probe(env_overrides: dict[str, str] | None = None, timeout: float = 120.0) -> tuple[dict | None, str]:
    from opkit.subprocess_safety import clean_cwd, python_argv, python_env

    env = python_env(dict(os.environ, **(env_overrides or {})))
    try:
        with clean_cwd() as cwd:  # never the working directory's ./json.py or ./torch/
            proc = subprocess.run(python_argv("-c", _PROBE), capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    for line in proc.stdout.splitlines():
        if line.startswith("OPKIT_PROBE"):
            return json.loads(line[len("OPKIT_PROBE") :]), ""
    tail = (proc.stderr or proc.stdout).strip().splitlines()
    return None, f"exit {proc.returncode}: {tail[-1] if tail else 'no output'}"


def _base_version(version: str) -> str:
    return version.split("+", 1)[0].split(".post", 1)[0].split("rc", 1)[0]


def _cann_root() -> Path | None:
    from opkit.check.toolchain import cann_roots

    return next((root for root, _ in cann_roots() if root.is_dir()), None)


def _cann_version(root: Path) -> str | None:
    for rel in ("version.cfg", "ascend_toolkit_install.info", "compiler/version.info", "runtime/version.info"):
        path = root / rel
        try:
            for line in path.read_text(errors="replace").splitlines():
                if "version" in line.lower() and "=" in line:
                    return line.split("=", 1)[1].strip().strip("[]\"")
        except OSError:
            continue
    return None


def _check(fn, name: str) -> list[Finding]:
    try:
        return fn()
    except Exception as exc:  # the doctor reports, never crashes
        return [Finding(name, "warn", f"could not check: {type(exc).__name__}: {exc}")]


def _packages() -> list[Finding]:
    torch_v, npu_v = _dist_version("torch"), _dist_version("torch-npu") or _dist_version("torch_npu")
    out = [
        Finding("torch (installed)", "ok" if torch_v else "fail", torch_v or "not installed: pip install torch"),
        Finding(
            "torch_npu (installed)",
            "ok" if npu_v else "info",
            npu_v or "not installed: CPU checks only (npugraph_ex needs torch_npu, CANN and an Ascend NPU)",
        ),
    ]
    if torch_v and npu_v and _base_version(torch_v) != _base_version(npu_v):
        out.append(
            Finding(
                "torch/torch_npu versions",
                "fail",
                f"torch {torch_v} with torch_npu {npu_v}: torch_npu wheels match torch one to one "
                f"(pip install torch-npu=={_base_version(torch_v)})",
            )
        )
    return out


def _torch_import() -> list[Finding]:
    info, error = _probe()
    out: list[Finding] = []
    if info is None:
        retry, _ = _probe({"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
        if retry is not None and _dist_version("torch-npu"):
            out.append(
                Finding(
                    "import torch",
                    "fail",
                    f"fails ({error}) but works with TORCH_DEVICE_BACKEND_AUTOLOAD=0: torch auto-loads torch_npu, "
                    "which needs CANN; source CANN's set_env.sh, or export TORCH_DEVICE_BACKEND_AUTOLOAD=0 "
                    "(CPU checks only), or uninstall torch-npu",
                )
            )
        else:
            out.append(Finding("import torch", "fail", error))
        return out
    out.append(Finding("import torch", "ok", f"{info['torch']} at {Path(info['torch_path']).parent}"))
    if "torch_npu_error" in info:
        out.append(Finding("import torch_npu", "fail" if _dist_version("torch-npu") else "info", info["torch_npu_error"]))
    elif "torch_npu" in info:
        out.append(Finding("import torch_npu", "ok", info["torch_npu"]))
        count = info.get("npu_count", 0)
        visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
        out.append(
            Finding(
                "NPU",
                "ok" if count else "warn",
                f"{count} visible" + (f" (ASCEND_RT_VISIBLE_DEVICES={visible})" if visible is not None else ""),
            )
        )
        if info.get("soc"):
            soc = info["soc"]
            a2_a3 = any(tag in soc for tag in ("910B", "910_93", "910C", "A2", "A3"))
            out.append(Finding("SoC", "ok" if a2_a3 else "warn", soc + ("" if a2_a3 else ": npugraph_ex supports Atlas A2/A3 only")))
        out.append(
            Finding(
                "npugraph_ex backend",
                "ok" if info.get("npugraph_ex_backend") else "warn",
                "registered with Dynamo" if info.get("npugraph_ex_backend") else "not registered: torch_npu built without TorchAir?",
            )
        )
    return out


def _cann() -> list[Finding]:
    root = _cann_root()
    if root is None:
        return [Finding("CANN", "info", "not found (set by CANN's set_env.sh as ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME)")]
    version = _cann_version(root)
    return [Finding("CANN", "ok", f"{version or 'version unknown'} at {root}")]


def _msopgen() -> list[Finding]:
    path = shutil.which("msopgen")
    root = _cann_root()
    if path is None and root is not None:
        candidate = root / "python" / "site-packages" / "bin" / "msopgen"
        path = str(candidate) if candidate.exists() else None
    return [Finding("msopgen", "ok" if path else "info", path or "not on PATH (comes with the CANN toolkit)")]


def _compile_check_tools() -> list[Finding]:
    """What `opkit check` compiles with (it runs without an NPU; CANN's host headers are enough)."""
    from opkit.check import ToolchainError, find_compiler, find_host_headers

    out = []
    for name, find in (("C++ compiler", find_compiler), ("CANN host headers", find_host_headers)):
        try:
            out.append(Finding(name, "ok", str(find())))
        except ToolchainError as exc:
            out.append(Finding(name, "info", f"{exc} (needed by opkit check only)"))
    return out


def _emulation_modules() -> list[Finding]:
    """The third-party modules the torch-npu wheel's npugraph_ex imports when `opkit verify` runs it off the NPU."""
    from opkit.verify.npugraph_ex.requirements import WHEEL_IMPORTS, missing, pip_name

    absent = missing()
    if absent:
        return [
            Finding(
                "npugraph_ex's imports",
                "fail",
                f"{', '.join(absent)} not installed: `opkit verify` fails inside npugraph_ex's compiler; "
                f"pip install {' '.join(pip_name(m) for m in absent)}",
            )
        ]
    return [Finding("npugraph_ex's imports", "ok", ", ".join(WHEEL_IMPORTS))]


def _torch_npu_source() -> list[Finding]:
    """Whether the OPKIT_TORCH_NPU wheel or tree is one opkit pins (by sha256), or the user's own choice."""
    from opkit.torch_npu_wheel import ENV_VAR, WheelUnavailable, pin_of, wheel_sha256

    source = os.environ.get(ENV_VAR)
    if not source:
        return []
    path = Path(source).expanduser()
    if path.is_dir():
        return [Finding(ENV_VAR, "warn", f"{source} is a directory: your own choice, used unchecked (opkit pins wheels by sha256, not trees)")]
    if not path.is_file():
        return [Finding(ENV_VAR, "fail", f"{source}: no such wheel file or directory")]
    digest = wheel_sha256(path)
    try:
        pinned = pin_of(path.name, digest)
    except WheelUnavailable as exc:
        return [Finding(ENV_VAR, "fail", str(exc))]
    if pinned:
        return [Finding(ENV_VAR, "ok", f"{path.name}: sha256 {digest[:16]}... matches opkit's pin")]
    return [Finding(ENV_VAR, "warn", f"{path.name} (sha256 {digest}) is not a wheel opkit pins: your own choice, its code runs in verify")]


def _environment_traps() -> list[Finding]:
    out = []
    autoload = os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD")
    if autoload is not None:
        out.append(
            Finding(
                "TORCH_DEVICE_BACKEND_AUTOLOAD",
                "info",
                f"={autoload}: " + ("torch will not auto-load torch_npu; `import torch_npu` explicitly" if autoload == "0" else "auto-loading on"),
            )
        )
    visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
    if visible and "," in visible:
        out.append(
            Finding(
                "ASCEND_RT_VISIBLE_DEVICES",
                "info",
                f"={visible}: npugraph_ex uses one NPU per process; run `pytest -n <devices>` and the opkit plugin "
                "gives each worker one device",
            )
        )
    return out


def diagnose_environment() -> DoctorReport:
    findings: list[Finding] = [Finding("python", "ok", f"{sys.version.split()[0]} at {sys.executable}")]
    for fn, name in ((_packages, "packages"), (_torch_import, "import torch"), (_cann, "CANN"), (_msopgen, "msopgen"), (_compile_check_tools, "opkit check"), (_emulation_modules, "npugraph_ex's imports"), (_torch_npu_source, "OPKIT_TORCH_NPU"), (_environment_traps, "environment")):
        findings += _check(fn, name)
    return DoctorReport(tuple(findings))
