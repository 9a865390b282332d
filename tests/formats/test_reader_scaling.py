"""The readers and the schema rules stay linear in their input: 20 times the input costs about 20 times
the CPU, under a generous bound (60: a reader that rescans per statement or per OpDef costs ~400).
CPU time of this process, the best of a few runs, so other work on the machine does not count."""

from __future__ import annotations

import time

from opkit.formats.opdef_cpp import load_opdef_cpp
from opkit.formats.schema_site import SchemaSite
from opkit.lint.rules.schema.default_before_required import default_before_required
from opkit.signature import Dialect

BOUND = 60


def _cpu(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return max(best, 1e-4)


def opdef_file(ops: int, inputs: int = 30) -> str:
    out = ['#include "register/op_def_registry.h"', "namespace ops {"]
    for k in range(ops):
        out += [f"class Op{k} : public OpDef {{", "public:", f"    explicit Op{k}(const char* name) : OpDef(name)", "    {"]
        out += [f'        this->Input("x{i}").ParamType(REQUIRED).DataType({{ge::DT_FLOAT16, ge::DT_FLOAT}}).Format({{ge::FORMAT_ND, ge::FORMAT_ND}});  // {i}' for i in range(inputs)]
        out += ['        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});', '        this->AICore().AddConfig("ascend910b");', "    }", "};", f"OP_ADD(Op{k});"]
    return "\n".join(out + ["}"]) + "\n"


def test_an_opdef_file_reads_in_time_linear_in_its_size():
    small, large = opdef_file(10), opdef_file(200)
    assert len(load_opdef_cpp("small.cpp", small).ops) == 10 and len(load_opdef_cpp("large.cpp", large).ops) == 200
    ratio = _cpu(lambda: load_opdef_cpp("large.cpp", large), repeat=2) / _cpu(lambda: load_opdef_cpp("small.cpp", small))
    assert ratio < BOUND, f"20x the OpDefs cost {ratio:.0f}x"


def test_one_long_statement_reads_in_time_linear_in_its_length():
    def chained(calls: int) -> str:
        chain = "".join("\n            .AutoContiguous()" for _ in range(calls))
        return opdef_file(1, 1).replace('.Format({ge::FORMAT_ND, ge::FORMAT_ND});  // 0', ".Format({ge::FORMAT_ND, ge::FORMAT_ND})" + chain + ";")
    small, large = chained(500), chained(10_000)
    ratio = _cpu(lambda: load_opdef_cpp("large.cpp", large), repeat=2) / _cpu(lambda: load_opdef_cpp("small.cpp", small))
    assert ratio < BOUND, f"20x the calls cost {ratio:.0f}x"


def test_the_default_before_required_rule_is_linear_in_the_argument_count():
    def site(n: int) -> SchemaSite:
        s = SchemaSite("my_op(" + ", ".join(f"float f{i}=1." for i in range(n)) + ", int[] last) -> Tensor", "<schema>", 1, 1, Dialect.OP_PLUGIN)
        assert s.signature is not None and len(s.signature.arguments) == n + 1
        return s
    small, large = site(4000), site(80_000)
    assert [v.message for v in default_before_required(large)] == ["'f0' has a default but 'last' after it has none: the default is never used"]
    ratio = _cpu(lambda: list(default_before_required(large)), repeat=2) / _cpu(lambda: list(default_before_required(small)))
    assert ratio < BOUND, f"20x the arguments cost {ratio:.0f}x"
