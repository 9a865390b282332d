"""Launches written through a project's own macro: a variadic ``#define`` whose body launches the kernel one of
its parameters names and hands it ``__VA_ARGS__`` (directly, or converted to data pointers first), read from
the definition and traced into the device kernel like a ``<<<>>>`` launch."""

from __future__ import annotations

import pytest

from opkit.effects.build import compute
from opkit.effects.model import Knowledge
from opkit.formats.kernel_launches import launch_macros
from opkit.lint.engine import load_project

# The launch macro: every tensor argument becomes its data pointer, then the generated launcher runs on the
# task queue.
MACROS = """
#pragma once
#include <tuple>
#include "torch_npu/csrc/framework/OpCommand.h"
namespace tiny {
inline void *AsPointer(const at::Tensor &t) { return const_cast<void *>(t.data_ptr()); }
template <typename T> inline T AsPointer(T v) { return v; }
template <typename... A> inline auto AsPointers(A &...a) { return std::make_tuple(AsPointer(a)...); }
}
#define TINY_LAUNCH(KERNEL, BLOCKS, ...)                                       \\
    do {                                                                       \\
        auto tinyStream = c10_npu::getCurrentNPUStream().stream(false);        \\
        auto tinyArgs = tiny::AsPointers(__VA_ARGS__);                         \\
        auto tinyRun = [tinyStream, tinyArgs]() -> int {                       \\
            std::apply([&](auto &&...p) {                                      \\
                ACLRT_LAUNCH_KERNEL(KERNEL)(BLOCKS, tinyStream, p...);         \\
            }, tinyArgs);                                                      \\
            return 0;                                                          \\
        };                                                                     \\
        at_npu::native::OpCommand::RunOpApi(#KERNEL, tinyRun);                 \\
    } while (0)
#define TINY_LOG(KERNEL, ...) tiny_log(#KERNEL, __VA_ARGS__)
"""
MACRO_LINE = MACROS.splitlines().index("#define TINY_LAUNCH(KERNEL, BLOCKS, ...)                                       \\") + 1

# The device kernel: `mode` picks what it writes (0: rows into `table`, 1: the gathered rows into `out`).
KERNEL = """
#include "kernel_operator.h"
class RowCopy {
public:
    __aicore__ inline void Init(GM_ADDR rows, GM_ADDR table, GM_ADDR out)
    {
        rowsGm.SetGlobalBuffer((__gm__ int32_t *)rows);
        tableGm.SetGlobalBuffer((__gm__ int32_t *)table);
        outGm.SetGlobalBuffer((__gm__ int32_t *)out);
    }
    __aicore__ inline void Scatter()
    {
        AscendC::LocalTensor<int32_t> local = queue.AllocTensor<int32_t>();
        AscendC::DataCopy(local, rowsGm[0], 8);
        AscendC::DataCopy(tableGm[0], local, 8);
    }
    __aicore__ inline void Gather()
    {
        AscendC::LocalTensor<int32_t> local = queue.AllocTensor<int32_t>();
        AscendC::DataCopy(local, tableGm[0], 8);
        AscendC::DataCopy(outGm[0], local, 8);
    }
    AscendC::GlobalTensor<int32_t> rowsGm, tableGm, outGm;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> queue;
};
constexpr uint32_t SCATTER = 0;
constexpr uint32_t GATHER = 1;
extern "C" __global__ __aicore__ void row_copy(GM_ADDR rows, GM_ADDR table, GM_ADDR out, uint32_t mode)
{
    RowCopy op;
    op.Init(rows, table, out);
    switch (mode) {
        case SCATTER:
            op.Scatter();
            break;
        case GATHER:
            op.Gather();
            break;
    }
}
"""

HOST = """
#include "tiny_macros.h"
namespace tiny {
void scatter_rows(const at::Tensor &rows, const at::Tensor &table, const at::Tensor &out)
{
    uint32_t mode = 0;
    TINY_LAUNCH(row_copy, 8, rows, table, out, mode);
}
void gather_rows(const at::Tensor &rows, const at::Tensor &table, const at::Tensor &out)
{
    uint32_t mode = 1;
    TINY_LAUNCH(row_copy, 8, rows, table, out, mode);
}
void copy_rows(const at::Tensor &rows, const at::Tensor &table, const at::Tensor &out, int64_t mode)
{
    uint32_t m = static_cast<uint32_t>(mode);
    TINY_LAUNCH(row_copy, 8, rows, table, out, m);
}
void refreshed_rows(const at::Tensor &rows, const at::Tensor &table, const at::Tensor &out)
{
    uint32_t mode = 0;
    pick_mode(rows, mode);  // may set it through a reference
    TINY_LAUNCH(row_copy, 8, rows, table, out, mode);
}
void logged_rows(const at::Tensor &rows, const at::Tensor &table, const at::Tensor &out)
{
    TINY_LOG(row_copy, rows, table, out);
}
}
"""

SCHEMAS = {
    "scatter_rows": "scatter_rows(Tensor rows, Tensor(a!) table, Tensor out) -> ()",
    "gather_rows": "gather_rows(Tensor rows, Tensor table, Tensor(a!) out) -> ()",
    "copy_rows": "copy_rows(Tensor rows, Tensor(a!) table, Tensor(b!) out, int mode) -> ()",
    "refreshed_rows": "refreshed_rows(Tensor rows, Tensor(a!) table, Tensor(b!) out) -> ()",
    "logged_rows": "logged_rows(Tensor rows, Tensor table, Tensor out) -> ()",
}


def binding(schemas: dict[str, str], *, lambda_kernel: bool = False) -> str:
    defs = "\n".join(f'    m.def("{s}");' for s in schemas.values())
    impls = "\n".join(f'    m.impl("{name}", TORCH_FN(tiny::{name}));' for name in schemas if not (lambda_kernel and name == "gather_rows"))
    if lambda_kernel:
        impls += """
    m.impl("gather_rows", [](const at::Tensor &rows, const at::Tensor &table, const c10::optional<at::Tensor> &out) {
        auto out_or_empty = out.has_value() ? *out : at::empty({0}, rows.options());
        tiny::gather_rows(rows, table, out_or_empty);
    });"""
    return f'#include "op_host/rows.cpp"\nTORCH_LIBRARY(tiny, m) {{\n{defs}\n}}\nTORCH_LIBRARY_IMPL(tiny, PrivateUse1, m) {{\n{impls}\n}}\n'


def write(tmp_path, schemas=SCHEMAS, **kw) -> None:
    files = {"tiny_macros.h": MACROS, "op_kernel/row_copy.cpp": KERNEL, "op_host/rows.cpp": HOST, "ext.cpp": binding(schemas, **kw)}
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def written(effects, op: str) -> dict[str, str]:
    return {a.name: a.written.value for a in effects[f"tiny::{op}"].arguments}


def test_the_macro_is_read_from_its_define():
    [(name, macro)] = launch_macros({"m.h": MACROS}).items()
    assert (name, macro.kernel, macro.leading, macro.variadic, macro.converted) == ("TINY_LAUNCH", 0, (), 2, True)
    assert macro.where == f"m.h:{MACRO_LINE}"


@pytest.mark.parametrize(
    "define, read",
    [
        ("#define GO(k, s, ...) k<<<8, nullptr, s>>>(__VA_ARGS__)", ("GO", 0, (), 2, False)),  # forwarded as written
        ("#define GO(k, n, first, ...) ACLRT_LAUNCH_KERNEL(k)(n, nullptr, first, __VA_ARGS__)", ("GO", 0, (2,), 3, False)),
        ("#define GO(k, ...) k<<<8, nullptr, s>>>(x, __VA_ARGS__)", None),  # passes something not its own
        ("#define GO(k, ...) tiny_log(#k, __VA_ARGS__)", None),  # launches nothing
        ("#define GO(k, ...) auto t = f(__VA_ARGS__); k<<<8, nullptr, s>>>(t)", None),  # the pack is not what it passes
        ("#define GO(k, n) ACLRT_LAUNCH_KERNEL(k)(n, nullptr)", None),  # not variadic
    ],
)
def test_only_a_launch_of_the_named_kernel_with_the_variadic_arguments_is_a_launch_macro(define, read):
    found = launch_macros({"m.h": define + "\n"})
    assert (tuple(getattr(found["GO"], f) for f in ("name", "kernel", "leading", "variadic", "converted")) if found else None) == read


def test_a_macro_launch_writes_what_its_kernel_copies_into_by_the_mode_it_is_given(tmp_path):
    write(tmp_path)
    effects = compute(load_project([str(tmp_path)]))
    # mode 0 runs Scatter only: `table` written, `out` not; mode 1 the other way round
    assert written(effects, "scatter_rows") == {"rows": "no", "table": "yes", "out": "no"}
    assert written(effects, "gather_rows") == {"rows": "no", "table": "no", "out": "yes"}
    # a mode the host code does not fix: either arm may run
    assert written(effects, "copy_rows") == {"rows": "no", "table": "yes", "out": "yes"}
    assert written(effects, "refreshed_rows")["out"] == "yes"  # a mode a call may change is not taken as fixed
    [evidence] = effects["tiny::scatter_rows"].argument("table").evidence
    assert evidence.path.endswith("row_copy.cpp") and evidence.line == KERNEL.splitlines().index("        AscendC::DataCopy(tableGm[0], local, 8);") + 1
    assert "TINY_LAUNCH(row_copy, ...)" in evidence.why and f"tiny_macros.h:{MACRO_LINE})" in evidence.why and "passes it as table" in evidence.why


def test_a_macro_that_does_not_launch_leaves_its_arguments_unknown(tmp_path):
    write(tmp_path)
    effects = compute(load_project([str(tmp_path)]))
    logged = effects["tiny::logged_rows"]
    assert {a.name: a.written for a in logged.arguments} == dict.fromkeys(("rows", "table", "out"), Knowledge.UNKNOWN)
    assert "passed to TINY_LOG(...), which opkit does not follow (a macro)" in logged.argument("table").unknown_because


def test_a_kernel_registered_as_a_lambda_is_followed_into_the_launch(tmp_path):
    write(tmp_path, lambda_kernel=True, schemas={**SCHEMAS, "gather_rows": "gather_rows(Tensor rows, Tensor table, Tensor? out=None) -> ()"})
    effects = compute(load_project([str(tmp_path)]))
    # `out` reaches the kernel as `c ? *out : at::empty(...)`: it is `out` whenever the op is given one
    assert written(effects, "gather_rows") == {"rows": "no", "table": "no", "out": "yes"}
    assert effects["tiny::gather_rows"].argument("out").evidence[0].why.endswith("passes it as out")


@pytest.mark.parametrize("annotated", [False, True])
def test_lint_reports_a_macro_launchs_undeclared_write_and_not_its_twins(tmp_path, annotated):
    from opkit.lint import Selection, lint

    schema = SCHEMAS["scatter_rows"] if annotated else "scatter_rows(Tensor rows, Tensor table, Tensor out) -> ()"
    write(tmp_path, {"scatter_rows": schema, "gather_rows": SCHEMAS["gather_rows"]})
    findings = lint([str(tmp_path)], selection=Selection(("K2",)), use_cache=False).findings
    assert [(f.code, f.path.endswith("ext.cpp")) for f in findings] == ([] if annotated else [("K201", True)])
    if not annotated:
        assert "'table'" in findings[0].message and "TINY_LAUNCH(row_copy, ...)" in findings[0].message
        assert "torch.compile removes the call" in findings[0].message  # a `-> ()` op with no mutable argument


# CANN's generated launcher called directly, for kernels a macro declares per dtype (`tiny_fill_##TYPE`).
PASTED_KERNEL = """
#include "kernel_operator.h"
#define TINY_FILL_DECLARE(TYPE)                                                        \\
    extern "C" __global__ __aicore__ void tiny_fill_##TYPE(GM_ADDR src, GM_ADDR dst)   \\
    {                                                                                  \\
        AscendC::GlobalTensor<TYPE> srcGm, dstGm;                                      \\
        srcGm.SetGlobalBuffer((__gm__ TYPE *)src);                                     \\
        dstGm.SetGlobalBuffer((__gm__ TYPE *)dst);                                     \\
        AscendC::LocalTensor<TYPE> local;                                              \\
        AscendC::DataCopy(local, srcGm[0], 16);                                        \\
        AscendC::DataCopy(dstGm[0], local, 16);                                        \\
    }
TINY_FILL_DECLARE(half)
"""
PASTED_HOST = """
namespace tiny {
void tiny_fill(const at::Tensor &src, const at::Tensor &dst)
{
    void *src_ptr = src.data_ptr();
    void *dst_ptr = dst.data_ptr();
    auto stream = c10_npu::getCurrentNPUStream().stream(false);
    ACLRT_LAUNCH_KERNEL(tiny_fill_half)
    (8, stream, src_ptr, dst_ptr);
}
}
TORCH_LIBRARY(tiny, m) { m.def("SCHEMA"); }
TORCH_LIBRARY_IMPL(tiny, PrivateUse1, m) { m.impl("tiny_fill", TORCH_FN(tiny::tiny_fill)); }
"""


@pytest.mark.parametrize("schema, fires", [("tiny_fill(Tensor! src, Tensor! dst) -> ()", "K202"), ("tiny_fill(Tensor src, Tensor(a!) dst) -> ()", None)])
def test_a_direct_aclrt_launch_of_a_macro_declared_kernel(tmp_path, schema, fires):
    from opkit.lint import Selection, lint

    (tmp_path / "op_kernel").mkdir()
    (tmp_path / "op_kernel" / "tiny_fill.cpp").write_text(PASTED_KERNEL)
    (tmp_path / "fill.cpp").write_text(PASTED_HOST.replace("SCHEMA", schema))
    effects = compute(load_project([str(tmp_path)]))
    assert written(effects, "tiny_fill") == {"src": "no", "dst": "yes"}
    assert "ACLRT_LAUNCH_KERNEL(tiny_fill_half)" in effects["tiny::tiny_fill"].argument("dst").evidence[-1].why
    findings = lint([str(tmp_path)], selection=Selection(("K2",)), use_cache=False).findings
    assert [(f.code, "'src'" in f.message) for f in findings] == ([(fires, True)] if fires else [])
