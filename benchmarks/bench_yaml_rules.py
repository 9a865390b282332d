"""Benchmark: all Y rules together on the real op_plugin_functions.yaml vs one bare PyYAML C load.

Run by hand:  python benchmarks/bench_yaml_rules.py [PATH] [--repeat N]
The Y rules share one index per file, so together they must cost less than loading the file once
(target: rules < bare load). Measured in one process on purpose: only the rules are timed, after
the file is loaded and its signatures parsed (those are lru-cached and shared with the S rules);
the best of N runs of each is compared. Moved here from the unit suite, where a timing assertion
fails on a loaded machine and passes on a broken one alike.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

from opkit.lint import load_rules
from opkit.formats.op_plugin_yaml import load_op_plugin_yaml

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "op-plugin" / "op_plugin_functions.yaml"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    text = Path(args.path).read_text()
    y_rules = [r for r in load_rules().values() if r.scope == "yaml"]
    bare = best(lambda: yaml.load(text, Loader=yaml.CSafeLoader), args.repeat)
    sources = [load_op_plugin_yaml(args.path, text) for _ in range(args.repeat)]
    for source in sources:  # warm the shared signature cache, as a lint run has by the time Y rules run
        for site in source.schema_sites():
            site.parsed
    it = iter(sources)
    rules = best(lambda: [v for s in [next(it)] for r in y_rules for v in r.run(s)], args.repeat)
    print(f"{len(y_rules)} Y rules: {rules * 1000:.1f} ms; bare C load: {bare * 1000:.1f} ms; ratio {rules / bare:.2f} (target < 1)")
    return 0 if rules < bare else 1


if __name__ == "__main__":
    sys.exit(main())
