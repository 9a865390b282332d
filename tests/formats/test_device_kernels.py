"""The device-kernel reader: which global-memory parameters an Ascend C kernel writes, in the shapes real
kernels take (a kernel class whose Init binds GlobalTensors and whose CopyOut copies into them, free
functions, pto's TSTORE, macro-declared kernels), and "unknown" where the code goes where it cannot follow."""

from __future__ import annotations

from opkit.formats.device_kernels import NO, UNKNOWN, YES, DeviceCode, has_device_kernels

CLASS_KERNEL = """
#include "kernel_operator.h"
constexpr int32_t BUFFER_NUM = 2;

class KernelScale {
public:
    __aicore__ inline KernelScale() {}
    __aicore__ inline void Init(GM_ADDR src, GM_ADDR dst, GM_ADDR stats, uint32_t n)
    {
        srcGm.SetGlobalBuffer((__gm__ half *)src + n * AscendC::GetBlockIdx(), n);
        dstGm.SetGlobalBuffer((__gm__ half *)dst + n * AscendC::GetBlockIdx(), n);
        this->statsAddr = stats;  // bound later, in Process
        pipe.InitBuffer(inQueue, BUFFER_NUM, n * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        statsGm.SetGlobalBuffer((__gm__ float *)statsAddr);
        CopyIn();
        CopyOut();
    }

private:
    __aicore__ inline void CopyIn()
    {
        AscendC::LocalTensor<half> local = inQueue.AllocTensor<half>();
        AscendC::DataCopy(local, srcGm[0], 16);  // a read: the GM tensor is the source
        inQueue.EnQue(local);
    }
    __aicore__ inline void CopyOut()
    {
        AscendC::LocalTensor<half> local = inQueue.DeQue<half>();
        AscendC::DataCopyPad(dstGm[0], local, {1, 32, 0, 0});
        statsGm.SetValue(0, 1.0f);
        inQueue.FreeTensor(local);
    }
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueue;
    AscendC::GlobalTensor<half> srcGm, dstGm;
    AscendC::GlobalTensor<float> statsGm;
    GM_ADDR statsAddr;
};

extern "C" __global__ __aicore__ void scale_kernel(GM_ADDR src, GM_ADDR dst, GM_ADDR stats, uint32_t n)
{
    KernelScale op;
    op.Init(src, dst, stats, n);
    op.Process();
}
"""


def written(code: DeviceCode, kernel: str) -> dict[str, str]:
    found = code.kernel(kernel)
    assert found is not None, kernel
    return {p.name: p.written for p in found.parameters}


def test_a_kernel_class_writes_what_copy_out_copies_into():
    code = DeviceCode({"scale.asc": CLASS_KERNEL})
    assert written(code, "scale_kernel") == {"src": NO, "dst": YES, "stats": YES, "n": NO}
    kernel = code.kernel("scale_kernel")
    dst = kernel.parameter(1)
    assert dst.writes[0].line == CLASS_KERNEL.splitlines().index("        AscendC::DataCopyPad(dstGm[0], local, {1, 32, 0, 0});") + 1
    assert "DataCopyPad(dstGm[0], ...)" in dst.writes[0].why and "KernelScale::CopyOut" in dst.writes[0].why
    assert "SetGlobalBuffer" in dst.writes[0].why  # how dstGm came to point at dst
    stats = kernel.parameter(2)
    assert "statsGm.SetValue" in stats.writes[0].why  # through a member pointer bound in another method


def test_members_of_two_classes_with_one_name_are_kept_apart():
    text = """
class Reader {
public:
    __aicore__ inline void Init(GM_ADDR x) { xGm.SetGlobalBuffer((__gm__ float *)x); }
    __aicore__ inline void Run() { AscendC::DataCopy(local, xGm, 8); }
    AscendC::GlobalTensor<float> xGm;
};
class Writer {
public:
    __aicore__ inline void Init(GM_ADDR x) { xGm.SetGlobalBuffer((__gm__ float *)x); }
    __aicore__ inline void Run() { AscendC::DataCopy(xGm, local, 8); }
    AscendC::GlobalTensor<float> xGm;
};
__global__ __aicore__ void read_kernel(GM_ADDR x) { Reader r; r.Init(x); r.Run(); }
__global__ __aicore__ void write_kernel(GM_ADDR x) { Writer w; w.Init(x); w.Run(); }
"""
    code = DeviceCode({"two.asc": text})
    assert written(code, "read_kernel") == {"x": NO}
    assert written(code, "write_kernel") == {"x": YES}


def test_free_functions_pointer_arithmetic_and_raw_stores():
    text = """
template <typename T>
__aicore__ inline void Store(__gm__ T *dst, uint32_t i) { dst[i] = 0; }
__aicore__ inline void Load(__gm__ float *p, float &v) { v = p[0]; }
__global__ __aicore__ void k(__gm__ uint8_t *a, __gm__ uint8_t *b, GM_ADDR c)
{
    float v;
    Load((__gm__ float *)a, v);
    __gm__ float *shifted = (__gm__ float *)b + 8;
    Store<float>(shifted, 1);
    AscendC::GlobalTensor<float> cGm;
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(c));
    AscendC::DataCopy(cGm[4], local, 8);
}
"""
    assert written(DeviceCode({"k.cpp": text}), "k") == {"a": NO, "b": YES, "c": YES}


def test_pto_tstore_through_a_global_tensor_made_from_the_pointer():
    text = """
template <typename T>
AICORE void StoreTile(__gm__ T *y, uint32_t offset)
{
    GlobalData yGlobal(y + offset);
    TASSIGN(yGlobal, (y + offset));
    TSTORE(yGlobal, tile);
}
template <typename T>
AICORE void LoadTile(__gm__ T *x) { GlobalData xGlobal(x); TLOAD(tile, xGlobal); }
__global__ __aicore__ void hadamard(__gm__ uint8_t *x, __gm__ uint8_t *y)
{
    LoadTile<half>((__gm__ half *)x);
    StoreTile<half>((__gm__ half *)y, 0);
}
"""
    assert written(DeviceCode({"h.cpp": text}), "hadamard") == {"x": NO, "y": YES}


def test_what_cannot_be_followed_is_unknown_with_the_reason():
    text = """
__global__ __aicore__ void k(GM_ADDR x, GM_ADDR y)
{
    Common::CopyTiles(x, 8);  // declared in a header not read
    AscendC::GlobalTensor<half> yGm;
    yGm.SetGlobalBuffer((__gm__ half *)y);
    yGm.Mystery();
}
__global__ __aicore__ void stub(GM_ADDR x) {}
"""
    code = DeviceCode({"k.asc": text})
    kernel = code.kernel("k")
    x, y = kernel.parameters
    assert x.written == UNKNOWN and "CopyTiles" in x.unknown_because and "line 4" in x.unknown_because
    assert y.written == UNKNOWN and "yGm.Mystery" in y.unknown_because
    assert code.kernel("stub").parameters[0].written == UNKNOWN  # an empty skeleton body tells nothing yet


def test_a_kernel_declared_by_a_macro_is_read_at_each_use():
    text = """
class Op {
public:
    __aicore__ inline void Init(GM_ADDR in, GM_ADDR out) { outGm.SetGlobalBuffer((__gm__ half *)out); inGm.SetGlobalBuffer((__gm__ half *)in); }
    __aicore__ inline void Process() { AscendC::DataCopy(outGm, local, 16); }
    AscendC::GlobalTensor<half> inGm, outGm;
};
#define DECLARE_KERNEL(TYPE)                                                  \\
    extern "C" __global__ __aicore__ void op_##TYPE(GM_ADDR in, GM_ADDR out)  \\
    {                                                                         \\
        Op op;                                                                \\
        op.Init(in, out);                                                     \\
        op.Process();                                                         \\
    }
DECLARE_KERNEL(half)
DECLARE_KERNEL(bfloat16_t)
"""
    code = DeviceCode({"m.cpp": text})
    assert code.kernel_names() == ["op_bfloat16_t", "op_half"]
    assert written(code, "op_half") == {"in": NO, "out": YES}
    assert code.kernel("op_half").line == text.splitlines().index("DECLARE_KERNEL(half)") + 1


def test_a_kernel_defined_twice_or_not_at_all_is_not_guessed():
    text = "__global__ __aicore__ void k(GM_ADDR x) { }\n__global__ __aicore__ void k(GM_ADDR x, GM_ADDR y) { }\n"
    code = DeviceCode({"a.asc": text})
    assert code.kernel("k") is None and code.kernel("absent") is None
    assert has_device_kernels(text) and not has_device_kernels("int main() { return 0; }")


def test_unreadable_text_is_an_error_of_that_file_only():
    code = DeviceCode({"bad.asc": 'const char *s = "never closed;\n', "good.asc": CLASS_KERNEL})
    assert "bad.asc" in code.errors and code.kernel("scale_kernel") is not None


def test_a_parameter_named_inside_a_macro_the_body_uses_is_unknown():
    """X-macros: the kernel's body names y only through a macro it passes to another; nothing is expanded,
    so y is unknown, never "not written"."""
    text = """
#define CASES(X) X(16) X(32)
#define DISPATCH_CASE(N) case N: Store<N>((__gm__ half *)y); break;
template <int N> __aicore__ inline void Store(__gm__ half *dst) { dst[0] = 0; }
__global__ __aicore__ void k(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    switch (n) {
        CASES(DISPATCH_CASE)
        default: break;
    }
}
"""
    kernel = DeviceCode({"k.cpp": text}).kernel("k")
    x, y, _ = kernel.parameters
    assert (x.written, y.written) == (NO, UNKNOWN) and "DISPATCH_CASE" in y.unknown_because


# A cube kernel in the shape vllm-ascend's matmuls take: copies are functors (a class template whose constructor
# copies) named through a class's `using` alias, defined in an `.inc` fragment a header includes; the primary
# template's constructor is empty and each explicit specialization copies (Fixpipe out of L0C, DataCopy in).
COPY_FUNCTORS = """
template <typename T>
struct cc_to_gm {
    __aicore__ cc_to_gm(AscendC::GlobalTensor<T> gmTensor, AscendC::LocalTensor<float> cc, uint32_t rows, uint8_t flag = 0) {};
};
template <>
struct cc_to_gm<half> {
    __aicore__ cc_to_gm(AscendC::GlobalTensor<half> gmTensor, AscendC::LocalTensor<float> cc, uint32_t rows, uint8_t flag = 0)
    {
        AscendC::Fixpipe<half, float, AscendC::CFG_ROW_MAJOR>(gmTensor, cc, rows);
    };
};
template <typename T>
struct gm_to_cb {
    __aicore__ gm_to_cb(AscendC::LocalTensor<T> cb, AscendC::GlobalTensor<T> gmTensor, uint32_t rows) { AscendC::DataCopy(cb, gmTensor, rows); };
};
"""

CUBE_KERNEL = """
struct Tiling { uint32_t rows; uint32_t cols; };
template <typename T>
class Matmul {
    template <uint32_t Unused = 0>
    using CopyIn = gm_to_cb<T>;
    using CopyOut = cc_to_gm<T>;
public:
    __aicore__ void Init(GM_ADDR a, GM_ADDR c, GM_ADDR tiling)
    {
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(a));
        cGm.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(c));
        auto t = reinterpret_cast<__gm__ Tiling *>(tiling);
        rows = t->rows;
        cols = t->cols;
    }
    __aicore__ void Process()
    {
        uint64_t offset = rows * cols;
        CopyIn<0>(cb, aGm[offset], Pick<uint32_t, 16>(rows));
        CopyOut(cGm[offset], cc, rows);
    }
    AscendC::GlobalTensor<T> aGm, cGm;
    AscendC::LocalTensor<T> cb;
    AscendC::LocalTensor<float> cc;
    uint32_t rows, cols;
};
extern "C" __global__ __aicore__ void cube_kernel(GM_ADDR a, GM_ADDR c, GM_ADDR tiling)
{
    Matmul<half> op;
    op.Init(a, c, tiling);
    op.Process();
}
"""


def test_a_copy_functor_named_by_a_using_alias_writes_through_its_specializations():
    code = DeviceCode({"kernel/copies.inc": COPY_FUNCTORS, "kernel/cube.cpp": CUBE_KERNEL})
    # `offset` is computed from the tiling's fields and used as an index: neither makes `tiling` the memory
    # the copies write; the template's comma (`Pick<uint32_t, 16>(rows)`) does not shift the arguments
    assert written(code, "cube_kernel") == {"a": NO, "c": YES, "tiling": NO}
    [write] = code.kernel("cube_kernel").parameter(1).writes
    assert write.path == "kernel/copies.inc" and "Fixpipe(gmTensor, ...) in cc_to_gm::cc_to_gm" in write.why
    assert write.line == COPY_FUNCTORS.splitlines().index("        AscendC::Fixpipe<half, float, AscendC::CFG_ROW_MAJOR>(gmTensor, cc, rows);") + 1


READING_SPECIALIZATION = """
template <>
struct cc_to_gm<float> {
    __aicore__ cc_to_gm(AscendC::GlobalTensor<float> gmTensor, AscendC::LocalTensor<float> cc, uint32_t rows, uint8_t flag = 0)
    {
        AscendC::DataCopy(cc, gmTensor, rows);
    };
};
"""


def test_a_functor_whose_specializations_differ_is_unknown_and_its_primary_template_alone_is_read():
    code = DeviceCode({"copies.inc": COPY_FUNCTORS + READING_SPECIALIZATION, "cube.cpp": CUBE_KERNEL})
    c = code.kernel("cube_kernel").parameter(1)
    assert c.written == UNKNOWN and "overloads that differ" in c.unknown_because
    # without specializations the primary template's empty constructor is what runs: it writes nothing
    primary_only = COPY_FUNCTORS.split("template <>")[0] + "template <typename T>\nstruct gm_to_cb" + COPY_FUNCTORS.split("struct gm_to_cb")[1]
    assert "Fixpipe" not in primary_only
    assert written(DeviceCode({"copies.inc": primary_only, "cube.cpp": CUBE_KERNEL}), "cube_kernel")["c"] == NO


def test_a_field_store_through_a_gm_struct_pointer_is_a_write_and_a_field_read_is_not():
    text = """
struct Counters { uint32_t done; uint32_t total; };
__global__ __aicore__ void count_kernel(GM_ADDR counters, GM_ADDR config)
{
    auto c = reinterpret_cast<__gm__ Counters *>(counters);
    auto cfg = reinterpret_cast<__gm__ Counters *>(config);
    uint32_t total = cfg->total;
    c->done = total;
}
"""
    code = DeviceCode({"count.asc": text})
    assert written(code, "count_kernel") == {"counters": YES, "config": NO}
    assert "c->done = ..." in code.kernel("count_kernel").parameter(0).writes[0].why


def test_memory_a_helper_returns_from_its_parameter_is_followed_where_the_call_goes():
    # a Tensor[] reaches the kernel as one GM_ADDR to a list descriptor: a helper returns the address of item i
    text = """
template <typename T>
__aicore__ inline __gm__ T *ItemAddr(uint32_t i, GM_ADDR list)
{
    __gm__ uint64_t *base = reinterpret_cast<__gm__ uint64_t *>(list);
    uint64_t offset = *base;
    return reinterpret_cast<__gm__ T *>(*(base + (offset >> 3) + i));
}
class Shift {
public:
    __aicore__ inline void Init(GM_ADDR caches, GM_ADDR ids) { cachesPtr_ = caches; idsGm_.SetGlobalBuffer((__gm__ int64_t *)ids); }
    __aicore__ inline void Process(uint32_t layer)
    {
        cacheGm_.SetGlobalBuffer(ItemAddr<half>(layer, cachesPtr_));
        AscendC::DataCopy(cacheGm_[idsGm_.GetValue(0)], local, 16);
    }
    GM_ADDR cachesPtr_;
    AscendC::GlobalTensor<half> cacheGm_;
    AscendC::GlobalTensor<int64_t> idsGm_;
    AscendC::LocalTensor<half> local;
};
extern "C" __global__ __aicore__ void shift_kernel(GM_ADDR caches, GM_ADDR ids, GM_ADDR probe)
{
    Shift op;
    op.Init(caches, ids);
    op.Process(0);
    uint64_t n = *ItemAddr<uint64_t>(0, probe);
}
"""
    code = DeviceCode({"shift.cpp": text})
    # `__gm__ uint64_t *base = ...` declares a pointer: no store through it; the value read from `probe` is a read
    assert written(code, "shift_kernel") == {"caches": YES, "ids": NO, "probe": NO}
    assert "DataCopy(cacheGm_[idsGm_.GetValue(0)], ...)" in code.kernel("shift_kernel").parameter(0).writes[0].why
