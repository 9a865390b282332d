"""Benchmark: the whole `opkit lint` process on the real op_plugin_functions.yaml vs a bare PyYAML C load.

Run by hand:  python benchmarks/bench_lint.py [PATH] [--meta META_PY] [--repeat N]
Both are measured as fresh processes in the same run (interpreter start-up included, bytecode
compiled), interleaved, and the medians are compared, for a run with warm caches (the usual case in
CI and pre-commit: the result cache answers) and one without any cache (cold). Targets on the yaml:
warm <= 1.5x and cold <= 3x the bare load. With ``--meta`` (op-plugin's real _meta_registrations.py,
from the torch-npu wheel: ``pip download --no-deps torch-npu==2.13.0``, unzip, never install) the
yaml and the Meta file are linted together: targets < 0.5 s warm, < 1.5 s cold. Also asserts that
the lint process never imports torch.
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
    "try:\n    main(['lint', *sys.argv[1:], '--output', '/dev/null'])\nexcept SystemExit:\n    pass\n"
    "assert 'torch' not in sys.modules, 'opkit lint imported torch'\n"
)


# As on an installed system, modules load from bytecode: PYTHONDONTWRITEBYTECODE would make every
# run recompile opkit's sources (an editable install has no .pyc until one run writes them).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(code: str, paths: list[str], env: dict[str, str] = ENV) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *paths], check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument("--meta", help="also lint this Meta registration file with the yaml (reported separately)")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    for path in (args.path, args.meta):
        if path and not Path(path).is_file():
            sys.exit(f"no such file: {path}")
    setups = [("yaml", [args.path], "1.5x", "3x")]
    if args.meta:
        setups.append(("yaml + Meta", [args.path, args.meta], "0.5 s", "1.5 s"))
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as empty:
        warm_env = {**ENV, "OPKIT_CACHE_DIR": cache}
        cold_env = {**ENV, "OPKIT_CACHE_DIR": empty, "OPKIT_NO_CACHE": "1"}
        timed(BARE, [args.path])
        for _, paths, _, _ in setups:  # warm the page cache, .pyc files and the caches
            timed(LINT, paths, warm_env)
        bare, runs = [], {label: ([], []) for label, *_ in setups}
        for _ in range(args.repeat):
            bare.append(timed(BARE, [args.path]))
            for label, paths, _, _ in setups:
                runs[label][0].append(timed(LINT, paths, warm_env))
                runs[label][1].append(timed(LINT, paths, cold_env))
    b = statistics.median(bare)
    print(f"file: {args.path}" + (f"\nmeta: {args.meta}" if args.meta else ""))
    print(f"bare PyYAML CSafeLoader process:          median {b * 1000:.0f} ms")
    for label, _, warm_target, cold_target in setups:
        for kind, values, target in (("warm caches", runs[label][0], warm_target), ("no cache (cold)", runs[label][1], cold_target)):
            m = statistics.median(values)
            print(f"opkit lint {label}, {kind + ':':<17} median {m * 1000:.0f} ms  ratio {m / b:.2f}x  (target {target})")


if __name__ == "__main__":
    main()
