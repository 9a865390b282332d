#ifndef STAND_IN_OP_DEF_H
#define STAND_IN_OP_DEF_H
#include <cstdint>
#include <vector>
#include "graph/types.h"
#include "exe_graph/runtime/tiling_context.h"
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/infer_datatype_context.h"

namespace gert {
class InferShapeRangeContext;
struct OpImplRegisterV2 {
    using InferShapeKernelFunc = uint32_t (*)(InferShapeContext *);
    using InferShapeRangeKernelFunc = uint32_t (*)(InferShapeRangeContext *);
    using InferDataTypeKernelFunc = uint32_t (*)(InferDataTypeContext *);
    using TilingKernelFunc = uint32_t (*)(TilingContext *);
};
}  // namespace gert

namespace ops {
enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };
enum class DependScope : uint32_t { ALL = 0, TILING = 1, INVALID_SCOPE };
enum class FollowType : uint32_t { ALL = 0, DTYPE = 1, FORMAT = 2, SHAPE = 3, INVALID_TYPE };

class OpParamDef {
public:
    explicit OpParamDef(const char *name);
    OpParamDef &ParamType(Option param_type);
    OpParamDef &DataType(std::vector<ge::DataType> types);
    OpParamDef &DataTypeList(std::vector<ge::DataType> types);
    OpParamDef &Format(std::vector<ge::Format> formats);
    OpParamDef &FormatList(std::vector<ge::Format> formats);
    OpParamDef &UnknownShapeFormat(std::vector<ge::Format> formats);
    OpParamDef &ValueDepend(Option value_depend);
    OpParamDef &ValueDepend(Option value_depend, DependScope scope);
    OpParamDef &IgnoreContiguous(void);
    OpParamDef &AutoContiguous();
    OpParamDef &Scalar();
    OpParamDef &ScalarList();
    OpParamDef &To(const ge::DataType type);
    OpParamDef &To(const char *name);
    OpParamDef &Version(uint32_t version);
    OpParamDef &InitValue(uint64_t value);
    OpParamDef &OutputShapeDependOnCompute();
    OpParamDef &Follow(const char *paramName);
    OpParamDef &Follow(const char *paramName, FollowType ftype);
    OpParamDef &Comment(const char *comment);
};

class OpAttrDef {
public:
    explicit OpAttrDef(const char *name);
    OpAttrDef &AttrType(Option attr_type);
    OpAttrDef &Bool(void);
    OpAttrDef &Bool(bool value);
    OpAttrDef &Float(void);
    OpAttrDef &Float(float value);
    OpAttrDef &Int(void);
    OpAttrDef &Int(int64_t value);
    OpAttrDef &String(void);
    OpAttrDef &String(const char *value);
    OpAttrDef &ListBool(void);
    OpAttrDef &ListBool(std::vector<bool> value);
    OpAttrDef &ListFloat(void);
    OpAttrDef &ListFloat(std::vector<float> value);
    OpAttrDef &ListInt(void);
    OpAttrDef &ListInt(std::vector<int64_t> value);
    OpAttrDef &ListListInt(void);
    OpAttrDef &ListListInt(std::vector<std::vector<int64_t>> value);
    // What msOpGen writes for list_string, type and list_type attrs (docs/new.md, "Type mapping").
    OpAttrDef &ListString(void);
    OpAttrDef &ListString(std::vector<const char *> value);
    OpAttrDef &Type(void);
    OpAttrDef &Type(ge::DataType value);
    OpAttrDef &ListType(void);
    OpAttrDef &ListType(std::vector<ge::DataType> value);
    OpAttrDef &Version(uint32_t version);
    OpAttrDef &Comment(const char *comment);
};

class OpAICoreConfig {
public:
    OpAICoreConfig();
    OpAICoreConfig(const char *soc);
    OpParamDef &Input(const char *name);
    OpParamDef &Output(const char *name);
    OpAICoreConfig &DynamicCompileStaticFlag(bool flag);
    OpAICoreConfig &DynamicFormatFlag(bool flag);
    OpAICoreConfig &DynamicRankSupportFlag(bool flag);
    OpAICoreConfig &DynamicShapeSupportFlag(bool flag);
    OpAICoreConfig &NeedCheckSupportFlag(bool flag);
    OpAICoreConfig &PrecisionReduceFlag(bool flag);
    OpAICoreConfig &ExtendCfgInfo(const char *key, const char *value);
};

class OpAICoreDef {
public:
    OpAICoreDef &SetTiling(gert::OpImplRegisterV2::TilingKernelFunc func);
    OpAICoreDef &AddConfig(const char *soc);
    OpAICoreDef &AddConfig(const char *soc, OpAICoreConfig &aicore_config);
};

class OpDef {
public:
    explicit OpDef(const char *type);
    OpParamDef &Input(const char *name);
    OpParamDef &Output(const char *name);
    OpAttrDef &Attr(const char *name);
    OpDef &SetInferShape(gert::OpImplRegisterV2::InferShapeKernelFunc func);
    OpDef &SetInferShapeRange(gert::OpImplRegisterV2::InferShapeRangeKernelFunc func);
    OpDef &SetInferDataType(gert::OpImplRegisterV2::InferDataTypeKernelFunc func);
    OpAICoreDef &AICore(void);
};
}  // namespace ops
#endif
