"""Wall time of `opkit new` (run by hand): python benchmarks/bench_new.py [RUNS]

Each run is a fresh `opkit new` process (interpreter start included, as a user sees it), writing the
built-in Ascend C tree for the torchair my_op example into a temporary directory.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCHEMA = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"


def main(runs: int = 10) -> None:
    command = [sys.executable, "-c", "from opkit.cli import main; main()", "new", "my_op", "--schema", SCHEMA, "--no-verify", "--msopgen", "builtin", "-o"]
    times = []
    for _ in range(runs):
        out = Path(tempfile.mkdtemp()) / "my_op"
        start = time.perf_counter()
        subprocess.run([*command, str(out)], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
        shutil.rmtree(out.parent)
    print(f"opkit new: median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms over {runs} runs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
