#ifndef STAND_IN_TILING_CONTEXT_H
#define STAND_IN_TILING_CONTEXT_H
#include "exe_graph/runtime/extended_kernel_context.h"

namespace gert {
class TilingData {
public:
    size_t GetCapacity() const;
    size_t GetDataSize() const;
    void SetDataSize(const size_t size);
    void *GetData();
};

class TilingContext : public ExtendedKernelContext {
public:
    const void *GetCompileInfo() const;
    template <typename T> const T *GetCompileInfo() const;
    const StorageShape *GetInputShape(const size_t index) const;
    const Tensor *GetInputTensor(const size_t index) const;
    const Tensor *GetOptionalInputTensor(const size_t ir_index) const;
    const Tensor *GetDynamicInputTensor(const size_t ir_index, const size_t relative_index) const;
    const StorageShape *GetOptionalInputShape(const size_t ir_index) const;
    const Tensor *GetRequiredInputTensor(const size_t ir_index) const;
    const StorageShape *GetRequiredInputShape(const size_t ir_index) const;
    const StorageShape *GetDynamicInputShape(const size_t ir_index, const size_t relative_index) const;
    const StorageShape *GetOutputShape(const size_t index) const;
    ge::graphStatus SetTilingKey(const uint64_t tiling_key);
    uint64_t GetTilingKey() const;
    ge::graphStatus SetScheduleMode(const uint32_t schedule_mode);
    ge::graphStatus SetBlockDim(const uint32_t block_dim);
    uint32_t GetBlockDim() const;
    ge::graphStatus SetNeedAtomic(const bool atomic);
    template <typename T> auto GetTilingData() -> T *;
    TilingData *GetRawTilingData();
    size_t *GetWorkspaceSizes(const size_t workspace_count);
    size_t GetWorkspaceNum() const;
};
}  // namespace gert
#endif
