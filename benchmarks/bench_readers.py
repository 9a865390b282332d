"""Benchmark: the readers on large inputs, CPU time of this process (the best of --repeat runs).

Run by hand:  python benchmarks/bench_readers.py [--repeat N]
- an OpDef file of 100 OpDefs (about 1 MB): every OpDef read from one lexing of the file. Target: well
  under a second (before the readers layer each OpDef re-read the whole file: 25 s of CPU);
- one OpDef with 7,500 inputs (about 1 MB), and one statement of 10,000 chained calls;
- the schema rules on an 80,000-argument func (S107 was quadratic: 28 s).
"""

from __future__ import annotations

import argparse
import time

from opkit.formats.opdef_cpp import load_opdef_cpp
from opkit.lint.engine import lint


def opdef_file(ops: int, inputs: int, chained: int = 0) -> str:
    out = ['#include "register/op_def_registry.h"', "namespace ops {"]
    chain = "".join("\n            .AutoContiguous()" for _ in range(chained))
    for k in range(ops):
        out += [f"class Op{k} : public OpDef {{", "public:", f"    explicit Op{k}(const char* name) : OpDef(name)", "    {"]
        out += [
            f'        this->Input("x{i}").ParamType(REQUIRED).DataType({{ge::DT_FLOAT16, ge::DT_FLOAT}}).Format({{ge::FORMAT_ND, ge::FORMAT_ND}}){chain};  // {i}'
            for i in range(inputs)
        ]
        out += ['        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});', '        this->AICore().AddConfig("ascend910b");', "    }", "};", f"OP_ADD(Op{k});"]
    return "\n".join(out + ["}"]) + "\n"


def cpu(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    ns = parser.parse_args()
    for label, text in (
        ("100 OpDefs of 75 inputs", opdef_file(100, 75)),
        ("1 OpDef of 7,500 inputs", opdef_file(1, 7500)),
        ("1 statement of 10,000 calls", opdef_file(1, 1, chained=10_000)),
    ):
        seconds = cpu(lambda: load_opdef_cpp("bench_def.cpp", text), ns.repeat)
        print(f"OpDef reader, {label} ({len(text) / 1e6:.2f} MB): {seconds:.3f} s CPU")
    schema = "my_op(" + ", ".join(f"float f{i}=1." for i in range(80_000)) + ", int[] last) -> Tensor"
    seconds = cpu(lambda: lint([], schemas=[schema], use_cache=False), 1)  # once: parse results are remembered per process
    print(f"opkit lint --schema with 80,000 arguments (parse and every schema rule): {seconds:.3f} s CPU")


if __name__ == "__main__":
    main()
