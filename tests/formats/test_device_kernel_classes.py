"""The device-kernel reader on kernel classes built the way larger kernels are: a base class whose methods copy
out into members a derived class's Init binds, methods defined outside the class through a macro naming it,
tiling read through a pointer, pointers stored in aggregates, and a mode parameter choosing what is written."""

from __future__ import annotations

from opkit.formats.device_kernels import NO, UNKNOWN, YES, DeviceCode

BASE_AND_DERIVED = """
#include "kernel_operator.h"
struct Tiling { uint32_t rows; uint32_t cols; };
template <typename T, int N>
class RingBase {
public:
    __aicore__ inline void Flush();
protected:
    AscendC::GlobalTensor<T> stateGm, inGm;
    const __gm__ Tiling *tiling_{nullptr};
};
#define RING_BASE RingBase<T, N>
template <typename T, int N>
__aicore__ inline void RING_BASE::Flush()
{
    AscendC::LocalTensor<T> local;
    AscendC::DataCopy(stateGm[tiling_->cols], local, 8);
}
template <typename T, int N>
class RingFwd : public RingBase<T, N> {
public:
    __aicore__ inline void Init(GM_ADDR in, GM_ADDR state, GM_ADDR, const __gm__ Tiling *tiling)
    {
        this->tiling_ = tiling;
        this->inGm.SetGlobalBuffer((__gm__ T *)in);
        this->stateGm.SetGlobalBuffer((__gm__ T *)state);
    }
    __aicore__ inline void Process() { this->Flush(); }
};
extern "C" __global__ __aicore__ void ring_fwd(GM_ADDR in, GM_ADDR state, GM_ADDR unused, GM_ADDR tiling)
{
    __gm__ Tiling *t = reinterpret_cast<__gm__ Tiling *>(tiling);
    uint32_t rows = t->rows;
    RingFwd<half, 4> op;
    op.Init(in, state, unused, t);
    op.Process();
}
"""


def written(code: DeviceCode, kernel: str, values=None) -> dict[str, str]:
    found = code.kernel(kernel, values)
    assert found is not None, kernel
    return {p.name: p.written for p in found.parameters}


def test_a_member_a_derived_init_binds_is_written_by_the_base_class_method():
    code = DeviceCode({"ring.cpp": BASE_AND_DERIVED})
    # state: bound in RingFwd::Init, copied into by RingBase::Flush (defined through the RING_BASE macro);
    # unused: an unnamed parameter of Init; tiling: a struct read through a pointer (t->rows), never stored to
    assert written(code, "ring_fwd") == {"in": NO, "state": YES, "unused": NO, "tiling": NO}
    [write] = code.kernel("ring_fwd").parameters[1].writes
    assert "RingBase::Flush" in write.why and "RingFwd::Init" in write.why


def test_a_store_through_a_field_writes_and_a_pointer_declaration_does_not():
    text = """
struct Counter { uint32_t hits; };
extern "C" __global__ __aicore__ void count(GM_ADDR counter, GM_ADDR out)
{
    __gm__ Counter *c = reinterpret_cast<__gm__ Counter *>(counter);
    __gm__ int32_t *o = (__gm__ int32_t *)out;
    c->hits = 1;
}
"""
    assert written(DeviceCode({"k.cpp": text}), "count") == {"counter": YES, "out": NO}


def test_a_pointer_stored_in_an_aggregate_is_unknown_not_silently_unwritten():
    text = """
struct Args { GM_ADDR a; GM_ADDR b; };
extern "C" __global__ __aicore__ void agg(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    Args args{a, b};
    LibraryKernel k;
    k(args);
}
"""
    code = DeviceCode({"k.cpp": text})
    assert written(code, "agg") == {"a": UNKNOWN, "b": UNKNOWN, "c": NO}
    assert "stored in the aggregate Args args{...}" in code.kernel("agg").parameters[0].unknown_because


MODES = """
constexpr uint32_t PUSH = 0;
#define POP 1
class Stack {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b) { aGm.SetGlobalBuffer((__gm__ half *)a); bGm.SetGlobalBuffer((__gm__ half *)b); }
    __aicore__ inline void Push() { WriteA(); }
    __aicore__ inline void WriteA() { AscendC::LocalTensor<half> l; AscendC::DataCopy(aGm[0], l, 8); }
    __aicore__ inline void Pop() { AscendC::LocalTensor<half> l; AscendC::DataCopy(bGm[0], l, 8); }
    AscendC::GlobalTensor<half> aGm, bGm;
};
extern "C" __global__ __aicore__ void stack_op(GM_ADDR a, GM_ADDR b, uint32_t mode, uint32_t other)
{
    Stack op;
    op.Init(a, b);
    switch (mode) {
        case PUSH:
            op.Push();
            break;
        case POP: {
            op.Pop();
            break;
        }
    }
}
extern "C" __global__ __aicore__ void stack_if(GM_ADDR a, GM_ADDR b, uint32_t mode)
{
    Stack op;
    op.Init(a, b);
    if (mode == POP) {
        op.Pop();
    } else {
        op.Push();
    }
}
extern "C" __global__ __aicore__ void stack_fallthrough(GM_ADDR a, GM_ADDR b, uint32_t mode)
{
    Stack op;
    op.Init(a, b);
    switch (mode) {
        case PUSH:
            op.Push();
        case POP:
            op.Pop();
            break;
    }
}
"""


def test_the_arms_a_constant_mode_never_takes_are_not_read():
    code = DeviceCode({"k.cpp": MODES})
    assert written(code, "stack_op") == {"a": YES, "b": YES, "mode": NO, "other": NO}  # mode not given: either arm
    assert written(code, "stack_op", {2: 0}) == {"a": YES, "b": NO, "mode": NO, "other": NO}
    assert written(code, "stack_op", {2: 1}) == {"a": NO, "b": YES, "mode": NO, "other": NO}
    assert written(code, "stack_op", {3: 1}) == {"a": YES, "b": YES, "mode": NO, "other": NO}  # another parameter's value
    assert written(code, "stack_if", {2: 1}) == {"a": NO, "b": YES, "mode": NO}
    assert written(code, "stack_if", {2: 0}) == {"a": YES, "b": NO, "mode": NO}
    assert written(code, "stack_fallthrough", {2: 0}) == {"a": YES, "b": YES, "mode": NO}  # case PUSH falls into POP
    assert written(code, "stack_fallthrough", {2: 1}) == {"a": NO, "b": YES, "mode": NO}
    assert written(code, "stack_op") == {"a": YES, "b": YES, "mode": NO, "other": NO}  # each launch's answer is its own
