// Minimal stand-ins for the CANN host headers a generated op_host/<op>.cpp includes (test only).
#pragma once
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <vector>
#include <climits>
namespace ge {
enum DataType { DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_BF16 = 27, DT_UNDEFINED = 28 };
enum Format { FORMAT_ND = 2 };
using graphStatus = uint32_t;
const graphStatus GRAPH_SUCCESS = 0, GRAPH_FAILED = 0xFFFFFFFF;
}
namespace gert {
struct Shape {
    std::vector<int64_t> dims;
    int64_t GetShapeSize() const { int64_t n = 1; for (auto d : dims) n *= d; return n; }
    size_t GetDimNum() const { return dims.size(); }
    int64_t GetDim(size_t i) const { return dims[i]; }
};
struct StorageShape { Shape s; const Shape& GetStorageShape() const { return s; } };
struct Desc { ge::DataType t; ge::DataType GetDataType() const { return t; } };
struct Attrs { std::vector<float> v; template <class T> const T* GetAttrPointer(size_t i) const { return &v[i]; } };
struct Raw { char buf[4096]; size_t n = 0; void* GetData() { return buf; } size_t GetCapacity() { return sizeof buf; } void SetDataSize(size_t k) { n = k; } };
struct TilingContext {
    std::vector<StorageShape> in, out; std::vector<Desc> in_desc, out_desc; Attrs attrs; Raw raw;
    uint32_t block_dim = 0; uint64_t key = 0; size_t ws[1];
    void* GetPlatformInfo() { return nullptr; }
    const StorageShape* GetInputShape(size_t i) { return &in[i]; }
    const StorageShape* GetOutputShape(size_t i) { return &out[i]; }
    const Desc* GetInputDesc(size_t i) { return &in_desc[i]; }
    const Desc* GetOutputDesc(size_t i) { return &out_desc[i]; }
    const Attrs* GetAttrs() { return &attrs; }
    size_t GetComputeNodeInputNum() { return in.size(); }
    Raw* GetRawTilingData() { return &raw; }
    void SetBlockDim(uint32_t d) { block_dim = d; }
    void SetTilingKey(uint64_t k) { key = k; }
    size_t* GetWorkspaceSizes(size_t) { return ws; }
};
struct InferShapeContext { Shape* GetOutputShape(size_t) { return nullptr; } const Shape* GetInputShape(size_t) { return nullptr; } };
struct InferDataTypeContext { ge::DataType GetInputDataType(size_t) { return ge::DT_FLOAT; } void SetOutputDataType(size_t, ge::DataType) {} };
}
extern uint32_t g_cores;
namespace platform_ascendc { struct PlatformAscendC { explicit PlatformAscendC(void*) {} uint32_t GetCoreNumAiv() { return g_cores; } }; }
#define BEGIN_TILING_DATA_DEF(name) struct name {
#define TILING_DATA_FIELD_DEF(type, field) type field{}; void set_##field(type v) { field = v; }
#define END_TILING_DATA_DEF void SaveToBuffer(void* p, size_t) { std::memcpy(p, this, sizeof *this); } size_t GetDataSize() { return sizeof *this; } }
#define REGISTER_TILING_DATA_CLASS(op, s)
namespace ops {
enum ParamType { REQUIRED, OPTIONAL };
struct Param { Param& ParamType(ops::ParamType) { return *this; } Param& DataType(std::vector<ge::DataType>) { return *this; }
               Param& Format(std::vector<ge::Format>) { return *this; } Param& AttrType(ops::ParamType) { return *this; }
               Param& Float(float = 0) { return *this; } };
struct AICoreDef { AICoreDef& SetTiling(ge::graphStatus (*)(gert::TilingContext*)) { return *this; } AICoreDef& AddConfig(const char*) { return *this; } };
struct OpDef { explicit OpDef(const char*) {} Param p; AICoreDef a;
    Param& Input(const char*) { return p; } Param& Output(const char*) { return p; } Param& Attr(const char*) { return p; }
    OpDef& SetInferShape(ge::graphStatus (*)(gert::InferShapeContext*)) { return *this; }
    OpDef& SetInferDataType(ge::graphStatus (*)(gert::InferDataTypeContext*)) { return *this; }
    AICoreDef& AICore() { return a; } };
}
#define OP_ADD(op) static op g_op_##op(#op)
