"""Run by hand: ``python benchmarks/bench_verify_many.py [--ops 10] [--rounds 3] [--backend aot_eager] [--singles 3]``.

Many ops, one run: ``opkit verify --from ops.cpp --meta ops_meta.py`` over a C++ file defining N ops (a Python
Meta file registers all of them: no C++ build is timed), against

1. the same N ops one ``opkit verify --from ops.cpp --op NAME`` process each (timed on ``--singles`` of them,
   scaled to N), and
2. N bare ``torch.compile(backend="aot_eager", fullgraph=True, dynamic=False)`` compiles of the same ops, each
   called twice, in one script.

Each side runs as fresh processes, once with 2 ops and once with N: the cost of each further op is
(time(N) - time(2)) / (N - 2), which leaves out what every run pays once (interpreter, ``import torch``, the
wheel's loading, the warm-up, the first op). (A file of one op is checked as one ``--op`` is, so 2 is the base.) Target: after the first op, each further op of ``opkit verify`` costs at most
twice a further bare compile. Wall-clock and CPU seconds (user + system of the process and its children) are
both printed; on a shared, loaded machine the CPU figures are the steadier.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE = 2  # ops in the base run
OPS_CPP_HEAD = "#include <torch/library.h>\nTORCH_LIBRARY(opkit_bench_many, m) {\n"
META_HEAD = "import torch\nfrom torch.library import Library, impl\n\nlib = Library('opkit_bench_many', 'IMPL', 'Meta')\n"
META_OP = "\n\n@impl(lib, 'op{i}')\ndef op{i}_meta(x, y, alpha):\n    return torch.empty_like(x)\n"
BARE = """
import sys, torch
from torch.library import Library
n = int(sys.argv[1])
lib = Library("opkit_bench_bare", "FRAGMENT")
for i in range(n):
    lib.define(f"op{i}(Tensor x, Tensor y, float alpha) -> Tensor")
    lib.impl(f"op{i}", lambda x, y, alpha: x + alpha * y, "CPU")
    lib.impl(f"op{i}", lambda x, y, alpha: torch.empty_like(x), "Meta")
for i in range(n):
    op = getattr(torch.ops.opkit_bench_bare, f"op{i}").default
    def entry(x, y, alpha, op=op):
        return op(x, y, alpha)
    with torch.no_grad():
        compiled = torch.compile(entry, backend="aot_eager", fullgraph=True, dynamic=False)
        for _ in range(2):
            compiled(torch.randn(8, 16), torch.randn(8, 16), 0.5)
"""


def write_ops(directory: Path, n: int) -> tuple[Path, Path]:
    cpp, meta = directory / f"ops{n}.cpp", directory / f"ops{n}_meta.py"
    cpp.write_text(OPS_CPP_HEAD + "".join(f'  m.def("op{i}(Tensor x, Tensor y, float alpha) -> Tensor");\n' for i in range(n)) + "}\n")
    meta.write_text(META_HEAD + "".join(META_OP.format(i=i) for i in range(n)))
    return cpp, meta


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system, the process and its children) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--singles", type=int, default=3, help="single-op processes timed (scaled to --ops)")
    parser.add_argument("--timeout", type=float, default=600, help="verify's per-op timeout (a loaded machine is slow, not hung)")
    parser.add_argument("--backend", default="aot_eager", help="verify's backend (npugraph_ex is emulated off the NPU)")
    ns = parser.parse_args()
    n = ns.ops
    opkit = [sys.executable, "-m", "opkit", "verify", "--backend", ns.backend, "--timeout", str(ns.timeout)]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (two_cpp, two_meta), (n_cpp, n_meta) = write_ops(directory, BASE), write_ops(directory, n)
        bare = directory / "bare.py"
        bare.write_text(BARE)
        sides = {
            "bare": lambda k: [sys.executable, str(bare), str(k)],
            "many": lambda k: [*opkit, "--from", str(two_cpp if k == BASE else n_cpp), "--meta", str(two_meta if k == BASE else n_meta)],
        }
        timed(sides["bare"](BASE)), timed(sides["many"](BASE))  # bytecode and caches warm for both
        runs: dict[tuple[str, int], list[tuple[float, float]]] = {}
        for _ in range(ns.rounds):  # interleaved, so drift in machine load hits every side alike
            for name, cmd in sides.items():
                for k in (BASE, n):
                    runs.setdefault((name, k), []).append(timed(cmd(k)))
        singles = [timed([*opkit, "--from", str(n_cpp), "--op", f"op{i}", "--meta", str(n_meta)]) for i in range(ns.singles)]

    def med(name: str, k: int, i: int) -> float:
        return statistics.median(r[i] for r in runs[(name, k)])

    print(f"{n} ops, {ns.rounds} rounds (medians), backend {ns.backend}, load average {os.getloadavg()[0]:.1f}")
    for clock, i in (("wall", 0), ("CPU", 1)):
        bare_2, bare_n = med("bare", BASE, i), med("bare", n, i)
        many_2, many_n = med("many", BASE, i), med("many", n, i)
        single = statistics.median(s[i] for s in singles)
        bare_each, many_each = (bare_n - bare_2) / (n - BASE), (many_n - many_2) / (n - BASE)
        print(
            f"{clock:>4}: {n} bare compiles in one script {bare_n:6.1f} s ({bare_each * 1000:5.0f} ms per further op); "
            f"opkit verify, {n} ops one run {many_n:6.1f} s ({many_each * 1000:5.0f} ms per further op, {many_each / bare_each:.2f}x a bare compile); "
            f"{n} single runs {single * n:6.1f} s ({single:.1f} s each, {ns.singles} timed)"
        )


if __name__ == "__main__":
    main()
