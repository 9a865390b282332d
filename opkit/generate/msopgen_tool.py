"""Find and run CANN's msOpGen, the tool that writes the Ascend C project from the prototype JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from opkit import msopgen

# Where CANN installs it (msopgen.md §1); set_env.sh exports ASCEND_HOME_PATH.
CANN_RELATIVE_PATH = Path("python", "site-packages", "bin", "msopgen")
MSOPGEN_TIMEOUT_S = 600


class MsOpGenError(RuntimeError):
    """msOpGen was asked for and is missing, or it failed; the message carries its output."""


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_msopgen(mode: str) -> str | None:
    """``builtin`` → None; ``auto`` → PATH, then $ASCEND_HOME_PATH, else None; a path → that file or an error."""
    if mode == "builtin":
        return None
    if mode == "auto":
        found = shutil.which("msopgen")
        if found:
            return found
        home = os.environ.get("ASCEND_HOME_PATH")
        if home and _executable(Path(home) / CANN_RELATIVE_PATH):
            return str(Path(home) / CANN_RELATIVE_PATH)
        return None
    path = Path(mode).expanduser()
    if not _executable(path):
        raise MsOpGenError(f"--msopgen {mode}: no executable file there (use auto, builtin or the path of CANN's msopgen)")
    return str(path.absolute())


def msopgen_command(executable: str, prototype_json: Path, soc: str | tuple[str, ...], out_dir: Path) -> list[str]:
    """``msopgen gen -i OP.json -c ai_core-<soc>[,ai_core-<soc>...] -f pytorch -lan cpp -out DIR``: -lan defaults to py (TBE)."""
    return [executable, "gen", "-i", str(prototype_json), "-c", msopgen.compute_unit(soc), "-f", "pytorch", "-lan", "cpp", "-out", str(out_dir)]


@dataclass(frozen=True)
class MsOpGenRun:
    command: tuple[str, ...]
    output: str


def run_msopgen(executable: str, prototype_json: Path, soc: str | tuple[str, ...], out_dir: Path) -> MsOpGenRun:
    command = msopgen_command(executable, prototype_json, soc, out_dir)
    try:
        # stdin closed: msOpGen prompts on multi-op files; this JSON holds one op, so a prompt is a failure.
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=MSOPGEN_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MsOpGenError(f"{' '.join(command)}: {exc}") from None
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or not out_dir.is_dir():
        raise MsOpGenError(f"{' '.join(command)} failed (exit {done.returncode}):\n{output}")
    return MsOpGenRun(tuple(command), output)


def set_vendor_name(tree: Path, vendor: str) -> None:
    """Give msOpGen's tree the project's vendor name: msOpGen always writes ``customize``, and packages
    that share a vendor name overwrite each other when installed."""
    presets = tree / "CMakePresets.json"
    if not presets.is_file():
        return
    document = json.loads(presets.read_text(encoding="utf-8"))
    for preset in document.get("configurePresets", []):
        variable = preset.get("cacheVariables", {}).get("vendor_name")
        if isinstance(variable, dict):
            variable["value"] = vendor
    presets.write_text(json.dumps(document, indent=4) + "\n", encoding="utf-8")
