// opkit's stand-in for Ascend C's kernel_operator.h, used by `opkit check` only.
//
// It declares just enough for a kernel to compile with a host C++ compiler: the function qualifiers,
// GM_ADDR, the two tiling macros, the common vector API of the AscendC namespace (declarations whose
// bodies do nothing) and opkit_launch_config, which the `<<<blockDim, l2ctrl, stream>>>` launch of an
// extension-style .asc is rewritten to call. So it checks the skeleton's shape — the kernel's parameter
// list, that `tiling` is a parameter, that the tiling struct named in REGISTER_TILING_DEFAULT exists, the
// arguments a launch passes against the kernel's parameters, the launch configuration's types — and the
// names and argument counts of the AscendC calls it declares; nothing of what they compute. It declares
// what a normal vector kernel uses: half, bfloat16_t and <cstdint>'s types, GlobalTensor, LocalTensor,
// TPipe, TQue/TQueBind, TBuf, DataCopy(Pad), GetBlockIdx/GetBlockNum, the common element-wise, scalar,
// reduction, compare/select and cast instructions, events and barriers (PipeBarrier<PIPE_V>), the
// kernel-type and tiling-key macros. An AscendC call it does not declare (matmul, the micro API, SIMT) is
// an error here that the real toolchain may accept (bash build.sh, or bisheng through setup.py; `opkit
// check --host-only` skips the op_kernel sources and the kernel code of a .asc).
#ifndef OPKIT_KERNEL_OPERATOR_STAND_IN_H
#define OPKIT_KERNEL_OPERATOR_STAND_IN_H

#include <cstddef>
#include <cstdint>
#include <type_traits>

#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define GM_ADDR uint8_t*

// The element types a kernel names besides <cstdint>'s: 16-bit floats as host values that convert to and from float
// (what they compute is not checked, only that the names and conversions a kernel writes exist).
template <int Format>  // 0: IEEE half, 1: bfloat16
struct OpkitFloat16 {
    OpkitFloat16() = default;
    template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
    constexpr OpkitFloat16(T value) : bits(static_cast<float>(value)) {}
    constexpr operator float() const { return bits; }
    float bits = 0;
};
using half = OpkitFloat16<0>;
using bfloat16_t = OpkitFloat16<1>;

// The pipes and event ids of PipeBarrier<PIPE_V>() and SetFlag<HardEvent::V_MTE3>(EVENT_ID0).
enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX };
enum event_t { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

// Kernel type and tiling-key macros of op_kernel sources (ops-nn, ops-math): the kernel type is a declaration
// only; every TILING_KEY_IS branch is compiled, as each is one template instance on the device.
enum KernelTaskType { KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIC_1_0, KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_MIX_AIV_1_0 };
#define KERNEL_TASK_TYPE_DEFAULT(type) static_assert(static_cast<int>(type) >= 0, "kernel type")
#define KERNEL_TASK_TYPE(key, type) static_assert(static_cast<int>(type) >= 0 && (key) >= 0, "kernel type")
inline bool opkit_tiling_key_is(uint64_t) { return true; }
#define TILING_KEY_IS(key) opkit_tiling_key_is(key)
#define ASCEND_IS_AIV true
#define ASCEND_IS_AIC false
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, variable, tiling_pointer)                    \
    [[maybe_unused]] tiling_struct variable{};                                                   \
    static_assert(std::is_convertible<decltype(tiling_pointer), GM_ADDR>::value, #tiling_pointer " must be a GM_ADDR")
#define GET_TILING_DATA_PTR_WITH_STRUCT(tiling_struct, variable, tiling_pointer)                \
    [[maybe_unused]] const tiling_struct *variable = nullptr;                                    \
    static_assert(std::is_convertible<decltype(tiling_pointer), GM_ADDR>::value, #tiling_pointer " must be a GM_ADDR")

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
enum class CMPMODE { LT, GT, EQ, LE, GE, NE };
enum class SELMODE { VSEL_CMPMASK_SPR, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
using TEventID = int32_t;

template <typename T, typename U>
struct IsSameType { static constexpr bool value = std::is_same<T, U>::value; };

constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr uint32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint32_t DEFAULT_BLK_NUM = 8;
constexpr uint32_t BLOCK_CUBE = 16;
constexpr uint32_t VECTOR_REG_WIDTH = 256;
constexpr uint32_t TOTAL_UB_SIZE = 192 * 1024;
constexpr uint32_t MAX_REPEAT_TIMES = 255;

template <typename T>
constexpr T CeilDivision(T a, T b) { return (a + b - 1) / b; }
template <typename T>
constexpr T DivCeil(T a, T b) { return (a + b - 1) / b; }
template <typename T>
constexpr T AlignUp(T a, T b) { return (a + b - 1) / b * b; }

inline float ToFloat(bfloat16_t value) { return value; }
inline bfloat16_t ToBfloat16(float value) { return value; }
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return workspace; }
inline GM_ADDR GetSysWorkSpacePtr() { return nullptr; }
inline void SetSysWorkspace(GM_ADDR) {}

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
    uint32_t GetLength() const { return 0; }
    void SetSize(uint32_t) {}
    uint64_t GetPhyAddr() const { return 0; }
    T *GetPhyAddr(uint32_t) const { return nullptr; }
    template <typename U>
    LocalTensor<U> ReinterpretCast() const { return {}; }
    using PrimType = T;
};

template <typename T>
class GlobalTensor {
public:
    void SetGlobalBuffer(__gm__ T *, uint64_t = 0) {}
    GlobalTensor operator[](uint64_t) const { return *this; }
    T GetValue(uint64_t) const { return T{}; }
    void SetValue(uint64_t, T) {}
    uint64_t GetSize() const { return 0; }
    __gm__ T *GetPhyAddr() const { return nullptr; }
    __gm__ T *GetPhyAddr(uint64_t) const { return nullptr; }
    template <int Mode>
    void SetL2CacheHint() {}
    using PrimType = T;
};

template <TPosition Src, TPosition Dst, int32_t Depth = 1>
class TQueBind {
public:
    template <typename T>
    LocalTensor<T> AllocTensor() { return {}; }
    template <typename T>
    bool EnQue(const LocalTensor<T> &) { return true; }
    template <typename T>
    LocalTensor<T> DeQue() { return {}; }
    template <typename T>
    void FreeTensor(LocalTensor<T> &) {}
    bool VacantInQue() const { return true; }
    bool HasTensorInQue() const { return false; }
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
    bool VacantInQue() const { return true; }
    bool HasTensorInQue() const { return false; }
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
    template <TPosition Src, TPosition Dst, int32_t Depth>
    void InitBuffer(TQueBind<Src, Dst, Depth> &, int32_t, uint32_t) {}
    template <TPosition Position>
    void InitBuffer(TBuf<Position> &, uint32_t) {}
    template <HardEvent Event>
    TEventID FetchEventID() { return 0; }
    TEventID FetchEventID(HardEvent) { return 0; }
    template <HardEvent Event>
    TEventID AllocEventID() { return 0; }
    template <HardEvent Event>
    void ReleaseEventID(TEventID) {}
    void Reset() {}
    void Destroy() {}
};
inline TPipe *GetTPipePtr() { static TPipe pipe; return &pipe; }

// The repeat form of the vector instructions: (..., mask, repeatTimes, params).
struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t d, uint8_t s0, uint8_t s1, uint8_t dr, uint8_t s0r, uint8_t s1r)
        : dstBlkStride(d), src0BlkStride(s0), src1BlkStride(s1), dstRepStride(dr), src0RepStride(s0r), src1RepStride(s1r) {}
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1, dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
};
struct UnaryRepeatParams {
    UnaryRepeatParams() = default;
    UnaryRepeatParams(uint16_t d, uint16_t s, uint8_t dr, uint8_t sr) : dstBlkStride(d), srcBlkStride(s), dstRepStride(dr), srcRepStride(sr) {}
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint8_t dstRepStride = 8, srcRepStride = 8;
};

struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t src, uint16_t dst) : blockCount(count), blockLen(len), srcStride(src), dstStride(dst) {}
    uint16_t blockCount = 1, blockLen = 0, srcStride = 0, dstStride = 0;
};
struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src, uint32_t dst, uint32_t reserved)
        : blockCount(count), blockLen(len), srcStride(src), dstStride(dst), rsv(reserved) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0, srcStride = 0, dstStride = 0, rsv = 0;
};
template <typename T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value) : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    T paddingValue{};
};
struct DataCopyPadParams {
    DataCopyPadParams() = default;
    DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value) : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    uint64_t paddingValue = 0;
};

template <typename T> void DataCopy(const LocalTensor<T> &, const GlobalTensor<T> &, uint32_t) {}
template <typename T> void DataCopy(const GlobalTensor<T> &, const LocalTensor<T> &, uint32_t) {}
template <typename T> void DataCopy(const LocalTensor<T> &, const LocalTensor<T> &, uint32_t) {}
template <typename T> void DataCopy(const LocalTensor<T> &, const GlobalTensor<T> &, const DataCopyParams &) {}
template <typename T> void DataCopy(const GlobalTensor<T> &, const LocalTensor<T> &, const DataCopyParams &) {}
template <typename T> void DataCopyPad(const LocalTensor<T> &, const GlobalTensor<T> &, const DataCopyExtParams &, const DataCopyPadExtParams<T> &) {}
template <typename T> void DataCopyPad(const GlobalTensor<T> &, const LocalTensor<T> &, const DataCopyExtParams &) {}
template <typename T> void DataCopy(const LocalTensor<T> &, const LocalTensor<T> &, const DataCopyParams &) {}
template <typename T> void DataCopyPad(const LocalTensor<T> &, const GlobalTensor<T> &, const DataCopyParams &, const DataCopyPadParams &) {}
template <typename T> void DataCopyPad(const GlobalTensor<T> &, const LocalTensor<T> &, const DataCopyParams &) {}

// Element-wise vector instructions: dst, src0, src1, count (binary); dst, src, count (unary); dst, src, scalar, count;
// each also in its repeat form (..., mask, repeatTimes, params), the mask a uint64_t or a uint64_t[2].
#define OPKIT_BINARY(name)                                                                                                           \
    template <typename T> void name(const LocalTensor<T> &, const LocalTensor<T> &, const LocalTensor<T> &, const int32_t &) {}      \
    template <typename T, typename Mask>                                                                                             \
    void name(const LocalTensor<T> &, const LocalTensor<T> &, const LocalTensor<T> &, const Mask &, uint8_t, const BinaryRepeatParams &) {}
#define OPKIT_UNARY(name)                                                                                                            \
    template <typename T> void name(const LocalTensor<T> &, const LocalTensor<T> &, const int32_t &) {}                              \
    template <typename T, typename Mask>                                                                                             \
    void name(const LocalTensor<T> &, const LocalTensor<T> &, const Mask &, uint8_t, const UnaryRepeatParams &) {}
#define OPKIT_SCALAR(name)                                                                                                           \
    template <typename T, typename U> void name(const LocalTensor<T> &, const LocalTensor<T> &, const U &, const int32_t &) {}       \
    template <typename T, typename U, typename Mask>                                                                                 \
    void name(const LocalTensor<T> &, const LocalTensor<T> &, const U &, const Mask &, uint8_t, const UnaryRepeatParams &) {}
OPKIT_BINARY(Add) OPKIT_BINARY(Sub) OPKIT_BINARY(Mul) OPKIT_BINARY(Div) OPKIT_BINARY(Max) OPKIT_BINARY(Min)
OPKIT_BINARY(And) OPKIT_BINARY(Or) OPKIT_BINARY(AddRelu) OPKIT_BINARY(SubRelu) OPKIT_BINARY(MulAddDst) OPKIT_BINARY(FusedMulAdd)
OPKIT_BINARY(Prelu)
OPKIT_UNARY(Exp) OPKIT_UNARY(Ln) OPKIT_UNARY(Abs) OPKIT_UNARY(Sqrt) OPKIT_UNARY(Rsqrt) OPKIT_UNARY(Reciprocal)
OPKIT_UNARY(Relu) OPKIT_UNARY(Not) OPKIT_UNARY(Sin) OPKIT_UNARY(Cos) OPKIT_UNARY(Tan) OPKIT_UNARY(Tanh)
OPKIT_UNARY(Sigmoid) OPKIT_UNARY(Log) OPKIT_UNARY(Erf) OPKIT_UNARY(Floor) OPKIT_UNARY(Ceil) OPKIT_UNARY(Round)
OPKIT_UNARY(Trunc) OPKIT_UNARY(Sign) OPKIT_UNARY(Neg) OPKIT_UNARY(Gelu) OPKIT_UNARY(Silu)
OPKIT_SCALAR(Adds) OPKIT_SCALAR(Muls) OPKIT_SCALAR(Maxs) OPKIT_SCALAR(Mins) OPKIT_SCALAR(LeakyRelu)
OPKIT_SCALAR(ShiftLeft) OPKIT_SCALAR(ShiftRight)
#undef OPKIT_BINARY
#undef OPKIT_UNARY
#undef OPKIT_SCALAR
template <typename T, typename U> void Axpy(const LocalTensor<T> &, const LocalTensor<U> &, const U &, const int32_t &) {}
template <typename T, typename U> void Duplicate(const LocalTensor<T> &, const U &, const int32_t &) {}
template <typename T, typename U, typename Mask> void Duplicate(const LocalTensor<T> &, const U &, const Mask &, uint8_t, uint16_t, uint8_t) {}
template <typename T, typename U> void Cast(const LocalTensor<T> &, const LocalTensor<U> &, RoundMode, uint32_t) {}
template <typename T, typename U, typename Mask>
void Cast(const LocalTensor<T> &, const LocalTensor<U> &, RoundMode, const Mask &, uint8_t, const UnaryRepeatParams &) {}
template <typename T> void Brcb(const LocalTensor<T> &, const LocalTensor<T> &, uint8_t, const UnaryRepeatParams &) {}
// Reductions: dst, src, work, count (and the forms with a mask and repeat arguments after them).
#define OPKIT_REDUCE(name)                                                                                                           \
    template <typename T, typename... Rest> void name(const LocalTensor<T> &, const LocalTensor<T> &, const LocalTensor<T> &, const Rest &...) {}
OPKIT_REDUCE(ReduceSum) OPKIT_REDUCE(ReduceMax) OPKIT_REDUCE(ReduceMin)
#undef OPKIT_REDUCE
template <typename T, typename... Rest> void WholeReduceSum(const LocalTensor<T> &, const LocalTensor<T> &, const Rest &...) {}
template <typename T, typename... Rest> void WholeReduceMax(const LocalTensor<T> &, const LocalTensor<T> &, const Rest &...) {}
template <typename T, typename... Rest> void WholeReduceMin(const LocalTensor<T> &, const LocalTensor<T> &, const Rest &...) {}
template <typename T, typename... Rest> void BlockReduceSum(const LocalTensor<T> &, const LocalTensor<T> &, const Rest &...) {}
template <typename T, typename U> void Compare(const LocalTensor<U> &, const LocalTensor<T> &, const LocalTensor<T> &, CMPMODE, uint32_t) {}
template <typename T, typename U, typename S> void CompareScalar(const LocalTensor<U> &, const LocalTensor<T> &, const S &, CMPMODE, uint32_t) {}
template <typename T, typename U> void Select(const LocalTensor<T> &, const LocalTensor<U> &, const LocalTensor<T> &, const LocalTensor<T> &, SELMODE, uint32_t) {}
template <typename T, typename U> void Select(const LocalTensor<T> &, const LocalTensor<U> &, const LocalTensor<T> &, T, SELMODE, uint32_t) {}
template <HardEvent Event> void SetFlag(int32_t) {}
template <HardEvent Event> void WaitFlag(int32_t) {}
template <pipe_t Pipe = PIPE_ALL> void PipeBarrier() {}
template <typename T> void SetAtomicAdd() {}
inline void SetAtomicNone() {}
template <typename T, typename... Mask> void SetVectorMask(const Mask &...) {}
inline void ResetMask() {}
inline void SetMaskNorm() {}
inline void SetMaskCount() {}
inline void SyncAll() {}
}  // namespace AscendC

#endif  // OPKIT_KERNEL_OPERATOR_STAND_IN_H
