#ifndef STAND_IN_STORAGE_SHAPE_H
#define STAND_IN_STORAGE_SHAPE_H
#include "exe_graph/runtime/shape.h"

namespace gert {
class StorageShape {
public:
    const Shape &GetOriginShape() const;
    const Shape &GetShape() const;
    const Shape &GetStorageShape() const;
    Shape &MutableOriginShape();
    Shape &MutableShape();
    Shape &MutableStorageShape();
};
}  // namespace gert
#endif
