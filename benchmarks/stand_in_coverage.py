"""How many real Ascend C kernels compile against `opkit check`'s stand-in kernel_operator.h.

Usage: python benchmarks/stand_in_coverage.py [--include DIR] [--sample N] [--seed S] TREE...

Every ``.asc`` file under the TREEs and a seeded sample of their ``op_kernel/*.cpp`` files outside tests/
(sorted paths, ``random.Random(seed).sample``) are compiled syntax-only with the system C++ compiler as ``opkit check``
compiles a kernel (``-std=c++17 -fsyntax-only`` against the stand-in; a ``.asc`` with its ``<<<>>>`` launches
rewritten and, when it includes torch, against torch's and torch_npu's headers). Each failure is put in one
class: ``missing header`` (a CANN or repository header the stand-in does not provide: not the stand-in's
fault), ``undeclared`` (a name the stand-in lacks), ``other``. ``--include`` compares another stand-in
directory (e.g. an older one from ``git show``).
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from opkit.check.compile import BASE_FLAGS, KERNEL_FLAGS, STAND_IN_INCLUDE
from opkit.check.launcher import compilable_text, find_launcher_headers
from opkit.check.toolchain import find_compiler

_UNDECLARED = re.compile(r"error: (?:'([^']+)' (?:was not declared|is not a member of|does not name a type|has not been declared)|no matching function for call to '([^'(]+))")


def files(trees: list[Path], sample: int, seed: int) -> list[Path]:
    asc = sorted(p for tree in trees for p in tree.rglob("*.asc"))
    # kernel sources, not their unit tests (gtest harnesses under tests/ut/op_kernel/)
    kernels = sorted(p for tree in trees for p in tree.rglob("*.cpp") if "op_kernel" in p.parts and not {"tests", "test", "ut"} & set(p.parts))
    picked = random.Random(seed).sample(kernels, min(sample, len(kernels)))
    return asc + sorted(picked)


def compile_one(compiler: str, include: Path, path: Path, launcher_flags: tuple[str, ...]) -> tuple[str, str]:
    flags = (*BASE_FLAGS, *KERNEL_FLAGS, f"-I{include}")
    with tempfile.TemporaryDirectory(prefix="opkit-cov-") as tmp:
        if path.suffix == ".asc":
            copy = Path(tmp) / (path.stem + ".cpp")
            copy.write_text(compilable_text(path.resolve(), path.read_text(errors="replace")))
            command = (compiler, "-x", "c++", *flags, f"-iquote{path.parent}", *launcher_flags, str(copy))
        else:
            command = (compiler, *flags, str(path))
        try:
            done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=600, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
        except subprocess.TimeoutExpired:
            return "other", "timeout"
    if done.returncode == 0:
        return "ok", ""
    text = done.stderr
    if "fatal error:" in text and "No such file or directory" in text:
        return "missing header", re.search(r"fatal error: (\S+): No such file", text).group(1)
    names = [a or b for a, b in _UNDECLARED.findall(text)]
    if names:
        return "undeclared", names[0]
    first = next((line for line in text.splitlines() if "error:" in line), text[:200])
    return "other", first.split("error:", 1)[1].strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--include", type=Path, default=STAND_IN_INCLUDE)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    compiler = find_compiler()
    launcher_flags = find_launcher_headers().include_flags()
    paths = files(args.trees, args.sample, args.seed)
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda p: compile_one(compiler, args.include, p, launcher_flags), paths))
    classes = Counter(kind for kind, _ in results)
    print(f"{len(paths)} files ({sum(p.suffix == '.asc' for p in paths)} .asc), stand-in {args.include}")
    for kind in ("ok", "missing header", "undeclared", "other"):
        print(f"  {kind}: {classes[kind]}")
    compilable = len(paths) - classes["missing header"]
    print(f"  compiled: {classes['ok']} of {len(paths)}; of the {compilable} whose headers all exist: {classes['ok']}")
    for kind in ("missing header", "undeclared", "other"):
        top = Counter(detail for k, detail in results if k == kind).most_common(12)
        if top:
            print(f"  top {kind}: " + "; ".join(f"{d} ({n})" for d, n in top))
    if args.verbose:
        for path, (kind, detail) in zip(paths, results):
            print(f"{kind}\t{detail}\t{path}")


if __name__ == "__main__":
    sys.exit(main())
