#ifndef STAND_IN_RUNTIME_ATTRS_H
#define STAND_IN_RUNTIME_ATTRS_H
#include <cstddef>
#include <cstdint>
#include "graph/types.h"
#include "exe_graph/runtime/shape.h"

namespace gert {
class Tensor {
public:
    const Shape &GetOriginShape() const;
    const Shape &GetStorageShape() const;
    int64_t GetShapeSize() const;
    ge::DataType GetDataType() const;
    template <typename T> const T *GetData() const;
};

class ContinuousVector {
public:
    size_t GetSize() const;
    size_t GetCapacity() const;
    const void *GetData() const;
};

template <typename T>
class TypedContinuousVector : public ContinuousVector {
public:
    const T *GetData() const;
};

class ContinuousVectorVector {
public:
    size_t GetSize() const;
    const ContinuousVector *Get(const size_t index) const;
};

class RuntimeAttrs {
public:
    template <typename T> const T *GetAttrPointer(size_t index) const;
    const int64_t *GetInt(const size_t index) const;
    const TypedContinuousVector<int64_t> *GetListInt(const size_t index) const;
    const ContinuousVectorVector *GetListListInt(const size_t index) const;
    const char *GetStr(const size_t index) const;
    const Tensor *GetTensor(const size_t index) const;
    const float *GetFloat(const size_t index) const;
    const bool *GetBool(const size_t index) const;
    const TypedContinuousVector<float> *GetListFloat(const size_t index) const;
    const ContinuousVectorVector *GetListListFloat(const size_t index) const;
    size_t GetAttrNum() const;
};
}  // namespace gert
#endif
