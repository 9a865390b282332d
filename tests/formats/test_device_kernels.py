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
