"""Benchmark: the whole `opkit lint` process on the real op_plugin_functions.yaml vs a bare PyYAML C load.

Run by hand:  python benchmarks/bench_lint.py [PATH] [--repeat N]
Both are measured as fresh processes in the same run (interpreter start-up included), interleaved,
and the medians are compared. Target: opkit lint within 3x of the bare load. Also asserts that the
lint process never imports torch.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
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


def timed(code: str, path: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, path], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    if not Path(args.path).is_file():
        sys.exit(f"no such file: {args.path}")
    timed(BARE, args.path), timed(LINT, args.path)  # warm the page cache and .pyc files
    bare, lint = [], []
    for _ in range(args.repeat):
        bare.append(timed(BARE, args.path))
        lint.append(timed(LINT, args.path))
    b, l = statistics.median(bare), statistics.median(lint)
    print(f"file: {args.path}")
    print(f"bare PyYAML CSafeLoader process: median {b * 1000:.0f} ms  (min {min(bare) * 1000:.0f})")
    print(f"opkit lint process:              median {l * 1000:.0f} ms  (min {min(lint) * 1000:.0f})")
    print(f"ratio: {l / b:.2f}x  (target <= 3x)")


if __name__ == "__main__":
    main()
