"""Wall time of `opkit check` against the bare compiler runs it makes (run by hand):

    python benchmarks/bench_check.py [CANN_OR_INCLUDE_DIR] [RUNS]

Headers default to the tests' stand-in tree (tests/check/cann_include); pass a CANN installation (or an include
directory, with CPLUS_INCLUDE_PATH for the rest) to time the real headers. Each run is a fresh process; the
baseline is the same compiler commands, run one after the other by a bare Python loop in this process.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCHEMA = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
REPO = Path(__file__).resolve().parent.parent


def _median_ms(run, runs: int) -> tuple[float, float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times), max(times)


def main(cann: str, runs: int) -> None:
    from opkit.check import check_project

    project = Path(tempfile.mkdtemp()) / "my_op"
    subprocess.run([sys.executable, "-m", "opkit", "new", "my_op", "--schema", SCHEMA, "--no-verify", "--msopgen", "builtin", "-o", str(project)], check=True, capture_output=True)
    commands = [(s.command, s.source.parent) for s in check_project(project, cann=cann).sources]

    def bare() -> None:
        for command, cwd in commands:
            subprocess.run(command, cwd=cwd, check=True, capture_output=True)

    def opkit() -> None:
        subprocess.run([sys.executable, "-m", "opkit", "check", str(project), "--cann", cann], check=True, capture_output=True)

    base, opk = _median_ms(bare, runs), _median_ms(opkit, runs)
    print(f"bare compiler ({len(commands)} files, sequential): median {base[0]:.0f} ms (min {base[1]:.0f}, max {base[2]:.0f})")
    print(f"opkit check (whole process): median {opk[0]:.0f} ms (min {opk[1]:.0f}, max {opk[2]:.0f}), {opk[0] / base[0]:.2f}x over {runs} runs")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(REPO / "tests" / "check" / "cann_include"), int(sys.argv[2]) if len(sys.argv) > 2 else 5)
