"""Benchmark: the whole `opkit lint` process on the real op_plugin_functions.yaml vs a bare PyYAML C load.

Run by hand:  python benchmarks/bench_lint.py [PATH] [--repeat N]
Both are measured as fresh processes in the same run (interpreter start-up included), interleaved,
and the medians are compared, for a run with a warm parse cache (the usual case in CI and
pre-commit) and one without. Target: opkit lint within 3x of the bare load. Also asserts that the
lint process never imports torch.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import sys
import time
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "op-plugin" / "op_plugin_functions.yaml"

BARE = "import sys, yaml\nwith open(sys.argv[1]) as f:\n    yaml.load(f, Loader=yaml.CSafeLoader)\n"
LINT = (
    "import sys\nfrom opkit.cli import main\n"
    "try:\n    main(['lint', sys.argv[1], '--output', '/dev/null'])\nexcept SystemExit:\n    pass\n"
    "assert 'torch' not in sys.modules, 'opkit lint imported torch'\n"
)


# As on an installed system, modules load from bytecode: PYTHONDONTWRITEBYTECODE would make every
# run recompile opkit's sources (an editable install has no .pyc until one run writes them).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(code: str, path: str, env: dict[str, str] = ENV) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, path], check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    if not Path(args.path).is_file():
        sys.exit(f"no such file: {args.path}")
    timed(BARE, args.path), timed(LINT, args.path)  # warm the page cache, .pyc files and parse cache
    with tempfile.TemporaryDirectory() as empty:
        cold_env = {**ENV, "OPKIT_CACHE_DIR": empty, "OPKIT_NO_CACHE": "1"}
        bare, warm, cold = [], [], []
        for _ in range(args.repeat):
            bare.append(timed(BARE, args.path))
            warm.append(timed(LINT, args.path))
            cold.append(timed(LINT, args.path, cold_env))
    b = statistics.median(bare)
    print(f"file: {args.path}")
    print(f"bare PyYAML CSafeLoader process:     median {b * 1000:.0f} ms")
    for label, runs in (("opkit lint, parse cache warm", warm), ("opkit lint, no cache (cold)", cold)):
        m = statistics.median(runs)
        print(f"{label + ':':<37}median {m * 1000:.0f} ms  ratio {m / b:.2f}x  (target <= 3x)")


if __name__ == "__main__":
    main()
