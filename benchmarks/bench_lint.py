"""Benchmark: the whole `opkit lint` process on the real op_plugin_functions.yaml vs a bare PyYAML C load.

Run by hand:  python benchmarks/bench_lint.py [PATH] [--meta META_PY] [--repeat N] [--against CHECKOUT]
Both are measured as fresh processes in the same run (interpreter start-up included, bytecode
compiled), interleaved, and the medians are compared, for a run with warm caches (the usual case in
CI and pre-commit: the result cache answers) and one without any cache (cold). Targets on the yaml:
warm <= 1.5x and cold <= 3x the bare load. With ``--meta`` (op-plugin's real _meta_registrations.py,
from the torch-npu wheel: ``pip download --no-deps torch-npu==2.13.0``, unzip, never install) the
yaml and the Meta file are linted together: targets < 0.5 s warm, < 1.5 s cold. Also asserts that
the lint process never imports torch. ``--against`` also times another opkit checkout (``git archive REV |
tar -x -C DIR``) in the same rounds, so a change is measured against the code before it on the same
(possibly busy) machine; both then run from an empty directory with their checkout on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import contextlib
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
    # the report goes to stdout, which timed() discards (--output refuses /dev/null: not a regular file);
    # exit 2 (a usage error, an unreadable input) would time an early exit, so it stops the benchmark
    "try:\n    main(['lint', *sys.argv[1:]])\nexcept SystemExit as exc:\n    assert exc.code in (0, 1, None), f'opkit lint exited {exc.code}'\n"
    "assert 'torch' not in sys.modules, 'opkit lint imported torch'\n"
)


# As on an installed system, modules load from bytecode: PYTHONDONTWRITEBYTECODE would make every
# run recompile opkit's sources (an editable install has no .pyc until one run writes them).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


ROOT = Path(__file__).resolve().parents[1]


def timed(code: str, paths: list[str], env: dict[str, str] = ENV, cwd: str | None = None) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *paths], check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument("--meta", help="also lint this Meta registration file with the yaml (reported separately)")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--against", metavar="CHECKOUT", help="also time this other opkit checkout, alternated in the same rounds")
    args = parser.parse_args()
    for path in (args.path, args.meta):
        if path and not Path(path).is_file():
            sys.exit(f"no such file: {path}")
    if args.against and not (Path(args.against) / "opkit" / "__init__.py").is_file():
        sys.exit(f"not an opkit checkout: {args.against}")
    args.path, args.meta = (str(Path(p).resolve()) if p else p for p in (args.path, args.meta))
    setups = [("yaml", [args.path], "1.5x", "3x")]
    if args.meta:
        setups.append(("yaml + Meta", [args.path, args.meta], "0.5 s", "1.5 s"))
    checkouts = [("", None)] + ([(" (--against)", args.against)] if args.against else [])
    with contextlib.ExitStack() as stack:
        empty = stack.enter_context(tempfile.TemporaryDirectory())
        caches = {name: stack.enter_context(tempfile.TemporaryDirectory()) for name, _ in checkouts}
        envs = {}
        for name, checkout in checkouts:
            pythonpath = {"PYTHONPATH": str(Path(checkout or ROOT).resolve())} if args.against else {}
            envs[name] = ({**ENV, **pythonpath, "OPKIT_CACHE_DIR": caches[name]},
                          {**ENV, **pythonpath, "OPKIT_CACHE_DIR": empty, "OPKIT_NO_CACHE": "1"})  # fmt: skip
        cwd = empty if args.against else None  # '' on sys.path must not pick the current checkout for both
        timed(BARE, [args.path])
        for name, _ in checkouts:
            for _, paths, _, _ in setups:  # warm the page cache, .pyc files and the caches
                timed(LINT, paths, envs[name][0], cwd)
        bare, runs = [], {label + name: ([], []) for label, *_ in setups for name, _ in checkouts}
        for _ in range(args.repeat):
            bare.append(timed(BARE, [args.path]))
            for label, paths, _, _ in setups:
                for name, _ in checkouts:
                    runs[label + name][0].append(timed(LINT, paths, envs[name][0], cwd))
                    runs[label + name][1].append(timed(LINT, paths, envs[name][1], cwd))
    b = statistics.median(bare)
    print(f"file: {args.path}" + (f"\nmeta: {args.meta}" if args.meta else "") + (f"\nagainst: {args.against}" if args.against else ""))
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"bare PyYAML CSafeLoader process:          median {b * 1000:.0f} ms")
    for label, _, warm_target, cold_target in setups:
        for name, _ in checkouts:
            for kind, values, target in (("warm caches", runs[label + name][0], warm_target), ("no cache (cold)", runs[label + name][1], cold_target)):
                m = statistics.median(values)
                print(f"opkit lint {label}{name}, {kind + ':':<17} median {m * 1000:.0f} ms  ratio {m / b:.2f}x  (target {target})")


if __name__ == "__main__":
    main()
