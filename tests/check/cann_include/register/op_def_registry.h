#ifndef STAND_IN_OP_DEF_REGISTRY_H
#define STAND_IN_OP_DEF_REGISTRY_H
#include "register/op_def.h"

namespace ops {
struct OpDefFactory {
    static int OpDefRegister(const char *name, OpDef (*creator)(const char *));
};
}  // namespace ops

// As CANN's, when neither OP_PROTO_LIB nor OP_TILING_LIB is defined: the op class is built by name.
#define OP_ADD(opType, ...)                                                                              \
    static int g_##opType##_added [[maybe_unused]] =                                                     \
        ops::OpDefFactory::OpDefRegister(#opType, [](const char *name) -> ops::OpDef { return opType(name); })
#endif
