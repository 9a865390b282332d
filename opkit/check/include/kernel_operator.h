// opkit's stand-in for Ascend C's kernel_operator.h, used by `opkit check` only.
//
// It declares just enough for the kernel SKELETON msOpGen writes to compile with a host C++ compiler:
// the function qualifiers, GM_ADDR and the two tiling macros. So it checks the skeleton's shape — the
// kernel's parameter list, that `tiling` is a parameter, that the tiling struct named in
// REGISTER_TILING_DEFAULT exists — and nothing of the Ascend C API: a kernel body that uses
// AscendC:: classes needs the real toolchain (bash build.sh).
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

#endif  // OPKIT_KERNEL_OPERATOR_STAND_IN_H
