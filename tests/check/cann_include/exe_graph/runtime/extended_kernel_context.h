#ifndef STAND_IN_EXTENDED_KERNEL_CONTEXT_H
#define STAND_IN_EXTENDED_KERNEL_CONTEXT_H
#include "exe_graph/runtime/storage_shape.h"
#include "exe_graph/runtime/runtime_attrs.h"

namespace gert {
class ExtendedKernelContext {
public:
    const RuntimeAttrs *GetAttrs() const;
    const char *GetNodeType() const;
    const char *GetNodeName() const;
    size_t GetComputeNodeInputNum() const;
    size_t GetComputeNodeOutputNum() const;
};
}  // namespace gert
#endif
