"""Run by hand: ``python benchmarks/bench_verify.py [--rounds 5] [--ops 20] [--no-opcheck] [--processes 3]
[--backend npugraph_ex]``.

1. Overhead: ``check_graph_entry(op, args, backend=...)`` (default: npugraph_ex, emulated off the NPU:
   its own compiler from the torch-npu wheel, capture and four calls; in a forked child, as by default,
   unless OPKIT_VERIFY_ISOLATION=0, and the child's CPU time is counted) against a bare
   ``torch.compile(backend="aot_eager", fullgraph=True, dynamic=False)`` of the same op called twice under
   ``torch.no_grad()``, in one run, on fresh ops each round (no cache reuse on either side).
   Target: check / bare <= 2.
2. Per-op cost when many ops are verified in one process.
3. The whole ``opkit verify --op`` command against a bare script, as fresh processes.

Both sides compile a new code object per round (Dynamo caches per code object), and both are warmed
once first so that one-time imports are not charged to either. Each side is timed by the wall clock and
by the process's CPU time: on a shared, loaded machine the CPU-time ratio is the steadier of the two.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import types

import torch
from torch.library import Library

from opkit.verify import check_graph_entry

NS = "opkit_bench"
_lib = Library(NS, "FRAGMENT")
_meta = Library(NS, "IMPL", "Meta")
_cpu = Library(NS, "IMPL", "CPU")
_count = 0


def fresh_op():
    """A new out-of-place op with a Meta function and a CPU kernel."""
    global _count
    _count += 1
    name = f"op{_count}"
    _lib.define(f"{name}(Tensor x, Tensor y, float alpha) -> Tensor")
    _cpu.impl(name, lambda x, y, alpha: x + alpha * y)
    _meta.impl(name, lambda x, y, alpha: torch.empty_like(x))
    return getattr(getattr(torch.ops, NS), name).default


def fresh_entry(op):
    def entry(*args):
        return op(*args)

    return types.FunctionType(entry.__code__.replace(), entry.__globals__, "entry", None, entry.__closure__)


def args():
    return torch.randn(64, 64), torch.randn(64, 64), 0.5


def cpu_seconds() -> float:
    """This process's CPU time and that of its reaped children (a check runs in a forked child)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


class Timed:
    """Wall-clock and CPU seconds of the block."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), cpu_seconds()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, cpu_seconds() - self.cpu


def bare_compile(op) -> Timed:
    """What a user would write: compile, call (capture), call (replay)."""
    with Timed() as timed, torch.no_grad():
        compiled = torch.compile(fresh_entry(op), backend="aot_eager", fullgraph=True, dynamic=False)
        compiled(*args())
        compiled(*args())
    return timed


BACKEND = "npugraph_ex"


def checked(op, opcheck: bool) -> Timed:
    with Timed() as timed:
        report = check_graph_entry(op, args(), backend=BACKEND, opcheck=opcheck)
    assert report.ok, str(report)
    return timed


OPS_FILE = """
import torch
from torch.library import Library
lib = Library("opkit_bench_cli", "FRAGMENT")
lib.define("op(Tensor x, Tensor y, float alpha) -> Tensor")
lib.impl("op", lambda x, y, alpha: x + alpha * y, "CPU")
lib.impl("op", lambda x, y, alpha: torch.empty_like(x), "Meta")
"""
BARE_SCRIPT = """
import runpy, sys, torch
runpy.run_path(sys.argv[1])
op = torch.ops.opkit_bench_cli.op.default
def entry(x, y, alpha):
    return op(x, y, alpha)
with torch.no_grad():
    compiled = torch.compile(entry, backend="aot_eager", fullgraph=True, dynamic=False)
    for _ in range(2):
        compiled(torch.randn(64, 64), torch.randn(64, 64), 0.5)
"""


def processes(rounds: int) -> None:
    """The whole `opkit verify --op` command against a bare script making the same torch.compile call."""
    import resource
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        ops, bare = Path(tmp, "ops.py"), Path(tmp, "bare.py")
        ops.write_text(OPS_FILE)
        bare.write_text(BARE_SCRIPT)
        verify = [sys.executable, "-m", "opkit", "verify", "--op", "opkit_bench_cli::op", "--load", str(ops),
                  "--example", "torch.randn(64, 64), torch.randn(64, 64), 0.5", "--backend", BACKEND]  # fmt: skip

        def timed(cmd: list[str]) -> tuple[float, float]:
            """Wall-clock and CPU seconds (user + system) of the child process."""
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

        timed([sys.executable, str(bare), str(ops)]), timed(verify)  # warm caches and bytecode
        bares, verifies = [], []
        for _ in range(rounds):  # interleaved, as above
            bares.append(timed([sys.executable, str(bare), str(ops)]))
            verifies.append(timed(verify))
    (bw, bc), (vw, vc) = ([statistics.median(x[i] for x in runs) for i in (0, 1)] for runs in (bares, verifies))
    print(
        f"processes: bare script {bw * 1000:.0f} ms wall {bc * 1000:.0f} ms CPU, `opkit verify --op` {vw * 1000:.0f} ms wall "
        f"{vc * 1000:.0f} ms CPU, ratio wall {vw / bw:.2f}  CPU {vc / bc:.2f}"
    )


def median(runs: list[Timed], clock: str) -> float:
    return statistics.median(getattr(t, clock) for t in runs)


def emulated() -> bool:
    return check_graph_entry(fresh_op(), args(), backend=BACKEND, opcheck=False).emulated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ops", type=int, default=20)
    parser.add_argument("--no-opcheck", action="store_true", help="leave torch.library.opcheck out of the check")
    parser.add_argument("--processes", type=int, default=3, metavar="N", help="rounds of the whole-command comparison (0: skip)")
    parser.add_argument("--backend", default="npugraph_ex", help="the checked side's backend (npugraph_ex is emulated off the NPU)")
    ns = parser.parse_args()
    global BACKEND
    BACKEND = ns.backend
    opcheck = not ns.no_opcheck

    bare_compile(fresh_op())  # warm both paths: imports and first-use costs belong to neither
    checked(fresh_op(), opcheck)

    bare, check, check_no_opcheck = [], [], []
    for _ in range(ns.rounds):  # interleaved, so drift in machine load hits both sides alike
        bare.append(bare_compile(fresh_op()))
        check.append(checked(fresh_op(), opcheck))
        check_no_opcheck.append(checked(fresh_op(), False))
    print(f"torch {torch.__version__}, checked backend npugraph_ex{' (emulated)' if emulated() else ''}, {ns.rounds} rounds, medians, load average {os.getloadavg()[0]:.1f}")
    b_wall, b_cpu = median(bare, "wall"), median(bare, "cpu")
    print(f"bare torch.compile (compile + capture + replay): {b_wall * 1000:7.1f} ms wall {b_cpu * 1000:7.1f} ms CPU")
    for label, runs in ((f"all checks{'' if opcheck else ', no opcheck'}", check), ("no opcheck", check_no_opcheck)):
        w, c = median(runs, "wall"), median(runs, "cpu")
        print(f"check_graph_entry ({label}): {w * 1000:7.1f} ms wall {c * 1000:7.1f} ms CPU   ratio wall {w / b_wall:.2f}  CPU {c / b_cpu:.2f}")

    per_op = [checked(fresh_op(), opcheck) for _ in range(ns.ops)]
    total = sum(t.wall for t in per_op)
    half = len(per_op) // 2
    print(
        f"{ns.ops} ops verified in one process: {total:.2f} s total, {1000 * total / ns.ops:.1f} ms per op "
        f"(CPU medians: first half {1000 * median(per_op[:half], 'cpu'):.1f} ms, "
        f"second half {1000 * median(per_op[half:], 'cpu'):.1f} ms)"
    )
    if ns.processes:
        processes(ns.processes)


if __name__ == "__main__":
    main()
