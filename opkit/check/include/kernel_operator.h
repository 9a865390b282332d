// opkit's stand-in for Ascend C's kernel_operator.h, used by `opkit check` only.
//
// It declares just enough for a kernel to compile with a host C++ compiler: the function qualifiers,
// GM_ADDR, the two tiling macros, the common vector API of the AscendC namespace (declarations whose
// bodies do nothing) and opkit_launch_config, which the `<<<blockDim, l2ctrl, stream>>>` launch of an
// extension-style .asc is rewritten to call. So it checks the skeleton's shape — the kernel's parameter
// list, that `tiling` is a parameter, that the tiling struct named in REGISTER_TILING_DEFAULT exists, the
// arguments a launch passes against the kernel's parameters, the launch configuration's types — and the
// names and argument counts of the AscendC calls it declares; nothing of what they compute, and an
// AscendC call it does not declare is an error here that the real toolchain may accept (bash build.sh,
// or bisheng through setup.py; `opkit check --host-only` skips the op_kernel sources).
#ifndef OPKIT_KERNEL_OPERATOR_STAND_IN_H
#define OPKIT_KERNEL_OPERATOR_STAND_IN_H

#include <cstdint>
#include <type_traits>

#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR uint8_t*

// The real macros register the struct and copy the tiling buffer into a local of that type.
#define REGISTER_TILING_DEFAULT(tiling_struct)                                                   \
    static_assert(std::is_trivially_copyable<tiling_struct>::value,                              \
                  "the tiling data must be a plain struct (" #tiling_struct ")");                 \
    using OpkitRegisteredTilingData = tiling_struct
#define GET_TILING_DATA(variable, tiling_pointer)                                                \
    [[maybe_unused]] OpkitRegisteredTilingData variable{};                                       \
    static_assert(std::is_same<decltype(tiling_pointer), GM_ADDR>::value,                        \
                  #tiling_pointer " must be the kernel's GM_ADDR tiling parameter")

#define __vector__
#define __cube__
#define __mix__

// The <<<blockDim, l2ctrl, stream>>> launch: `kernel<<<b, l, s>>>(args)` is compiled as
// `(opkit_launch_config(b, l, s), kernel)(args)`, so the arguments are checked against the kernel's parameters.
template <typename BlockDim, typename L2Ctrl, typename Stream>
inline void opkit_launch_config(BlockDim, L2Ctrl, Stream)
{
    static_assert(std::is_integral<BlockDim>::value, "<<<blockDim, ...>>>: the block count is an integer");
    static_assert(std::is_convertible<L2Ctrl, void *>::value, "<<<..., l2ctrl, ...>>>: a pointer (nullptr)");
    static_assert(std::is_convertible<Stream, void *>::value, "<<<..., stream>>>: an aclrtStream or a c10_npu::NPUStream");
}

namespace AscendC {
enum class TPosition { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, MAX };
using QuePosition = TPosition;
enum class HardEvent { MTE2_V, V_MTE2, MTE3_V, V_MTE3, MTE2_MTE3, MTE3_MTE2, S_V, V_S, MTE2_S, S_MTE2, MTE3_S, S_MTE3 };
enum class RoundMode { CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class PipeType { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };

inline int64_t GetBlockNum() { return 1; }
inline int64_t GetBlockIdx() { return 0; }
inline int64_t GetSubBlockNum() { return 1; }
inline int64_t GetSubBlockIdx() { return 0; }

template <typename T>
class LocalTensor {
public:
    LocalTensor operator[](uint32_t) const { return *this; }
    T GetValue(uint32_t) const { return T{}; }
    void SetValue(uint32_t, T) {}
    uint32_t GetSize() const { return 0; }
    template <typename U>
    LocalTensor<U> ReinterpretCast() const { return {}; }
};

template <typename T>
class GlobalTensor {
public:
    void SetGlobalBuffer(__gm__ T *, uint64_t = 0) {}
    GlobalTensor operator[](uint64_t) const { return *this; }
    T GetValue(uint64_t) const { return T{}; }
    void SetValue(uint64_t, T) {}
    uint64_t GetSize() const { return 0; }
};

template <TPosition Position, int32_t Depth = 1>
class TQue {
public:
    template <typename T>
    LocalTensor<T> AllocTensor() { return {}; }
    template <typename T>
    void EnQue(const LocalTensor<T> &) {}
    template <typename T>
    LocalTensor<T> DeQue() { return {}; }
    template <typename T>
    void FreeTensor(LocalTensor<T> &) {}
};

template <TPosition Position>
class TBuf {
public:
    template <typename T>
    LocalTensor<T> Get() { return {}; }
    template <typename T>
    LocalTensor<T> Get(uint32_t) { return {}; }
};

class TPipe {
public:
    template <TPosition Position, int32_t Depth>
    void InitBuffer(TQue<Position, Depth> &, int32_t, uint32_t) {}
    template <TPosition Position>
    void InitBuffer(TBuf<Position> &, uint32_t) {}
    void Destroy() {}
};

struct DataCopyParams { uint16_t blockCount = 1, blockLen = 0, srcStride = 0, dstStride = 0; };
struct DataCopyExtParams { uint16_t blockCount = 1; uint32_t blockLen = 0, srcStride = 0, dstStride = 0, rsv = 0; };
template <typename T>
struct DataCopyPadExtParams { bool isPad = false; uint8_t leftPadding = 0, rightPadding = 0; T paddingValue{}; };

template <typename T> void DataCopy(const LocalTensor<T> &, const GlobalTensor<T> &, uint32_t) {}
template <typename T> void DataCopy(const GlobalTensor<T> &, const LocalTensor<T> &, uint32_t) {}
template <typename T> void DataCopy(const LocalTensor<T> &, const LocalTensor<T> &, uint32_t) {}
template <typename T> void DataCopy(const LocalTensor<T> &, const GlobalTensor<T> &, const DataCopyParams &) {}
template <typename T> void DataCopy(const GlobalTensor<T> &, const LocalTensor<T> &, const DataCopyParams &) {}
template <typename T> void DataCopyPad(const LocalTensor<T> &, const GlobalTensor<T> &, const DataCopyExtParams &, const DataCopyPadExtParams<T> &) {}
template <typename T> void DataCopyPad(const GlobalTensor<T> &, const LocalTensor<T> &, const DataCopyExtParams &) {}

// Element-wise vector instructions: dst, src0, src1, count (binary); dst, src, count (unary); dst, src, scalar, count.
#define OPKIT_BINARY(name) template <typename T> void name(const LocalTensor<T> &, const LocalTensor<T> &, const LocalTensor<T> &, const int32_t &) {}
#define OPKIT_UNARY(name) template <typename T> void name(const LocalTensor<T> &, const LocalTensor<T> &, const int32_t &) {}
#define OPKIT_SCALAR(name) template <typename T, typename U> void name(const LocalTensor<T> &, const LocalTensor<T> &, const U &, const int32_t &) {}
OPKIT_BINARY(Add) OPKIT_BINARY(Sub) OPKIT_BINARY(Mul) OPKIT_BINARY(Div) OPKIT_BINARY(Max) OPKIT_BINARY(Min)
OPKIT_BINARY(And) OPKIT_BINARY(Or)
OPKIT_UNARY(Exp) OPKIT_UNARY(Ln) OPKIT_UNARY(Abs) OPKIT_UNARY(Sqrt) OPKIT_UNARY(Rsqrt) OPKIT_UNARY(Reciprocal)
OPKIT_UNARY(Relu) OPKIT_UNARY(Not) OPKIT_UNARY(Sin) OPKIT_UNARY(Cos) OPKIT_UNARY(Tan) OPKIT_UNARY(Tanh)
OPKIT_UNARY(Sigmoid)
OPKIT_SCALAR(Adds) OPKIT_SCALAR(Muls) OPKIT_SCALAR(Maxs) OPKIT_SCALAR(Mins)
#undef OPKIT_BINARY
#undef OPKIT_UNARY
#undef OPKIT_SCALAR
template <typename T, typename U> void Duplicate(const LocalTensor<T> &, const U &, const int32_t &) {}
template <typename T, typename U> void Cast(const LocalTensor<T> &, const LocalTensor<U> &, RoundMode, uint32_t) {}
template <HardEvent Event> void SetFlag(int32_t) {}
template <HardEvent Event> void WaitFlag(int32_t) {}
template <PipeType Pipe = PipeType::PIPE_ALL> void PipeBarrier() {}
inline void SyncAll() {}
}  // namespace AscendC

#endif  // OPKIT_KERNEL_OPERATOR_STAND_IN_H
