// CANN's host-side operator API as a tiling function uses it, for fusekit (written for fusekit from the CANN
// documentation: "Host侧tiling实现", gert::TilingContext, gert::Shape / StorageShape, TilingData; not a CANN
// header). Only what a tiling function reads and writes is declared; fusekit constructs the context itself
// (gert::TilingContext's constructor is fusekit's: the framework builds it in CANN).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <vector>

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
enum DataType : int32_t {
    DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7,
    DT_UINT32 = 8, DT_INT64 = 9, DT_UINT64 = 10, DT_DOUBLE = 11, DT_BOOL = 12, DT_BF16 = 27,
};
enum Format : int32_t { FORMAT_NCHW = 0, FORMAT_NHWC = 1, FORMAT_ND = 2, FORMAT_NC1HWC0 = 3, FORMAT_FRACTAL_Z = 4,
                        FORMAT_FRACTAL_NZ = 29 };
}  // namespace ge

namespace ge {
// bytes of one element of a dtype (CANN graph/types.h GetSizeByDataType); -1 for a dtype it does not know
inline int GetSizeByDataType(DataType t) {
    switch (t) {
        case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
        case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: return 2;
        case DT_INT8: case DT_UINT8: case DT_BOOL: return 1;
        case DT_INT64: case DT_UINT64: case DT_DOUBLE: return 8;
    }
    return -1;
}
}  // namespace ge

// the SoC as a tiling function asks it (fusekit's fields: set from fusekit.soc)
namespace fe {
class PlatFormInfos {
public:
    uint32_t aiv_cores = 48;
    uint64_t ub_bytes = 192 * 1024;
    uint32_t aic_cores = 24;
    int32_t soc_version = 1;  // platform_ascendc::SocVersion
};
}  // namespace fe

namespace gert {

class Shape {
public:
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
    explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    int64_t GetShapeSize() const {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return n;
    }
private:
    std::vector<int64_t> dims_;
};

// GetInputShape(i) gives a StorageShape: its origin shape (as the graph gives it) and its storage shape (as
// it lies in memory, after a format change); for ND tensors the two are the same
class StorageShape {
public:
    StorageShape() = default;
    explicit StorageShape(const Shape& shape) : origin_(shape), storage_(shape) {}
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetStorageShape() const { return storage_; }
private:
    Shape origin_, storage_;
};

// an input or output tensor as the tiling sees it (GetInputTensor): its shapes and dtype, no data
class Tensor {
public:
    Tensor(const StorageShape& shape, ge::DataType t) : shape_(shape), type_(t) {}
    const Shape& GetOriginShape() const { return shape_.GetOriginShape(); }
    const Shape& GetStorageShape() const { return shape_.GetStorageShape(); }
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    ge::DataType GetDataType() const { return type_; }
private:
    StorageShape shape_;
    ge::DataType type_;
};

class CompileTimeTensorDesc {
public:
    explicit CompileTimeTensorDesc(ge::DataType t = ge::DT_FLOAT16) : type_(t) {}
    ge::DataType GetDataType() const { return type_; }
private:
    ge::DataType type_;
};

class RuntimeAttrs {
public:
    std::vector<double> values;
    const float* GetFloat(size_t i) const { return i < values.size() ? (floats_[i] = float(values[i]), &floats_[i]) : nullptr; }
    const int64_t* GetInt(size_t i) const { return i < values.size() ? (ints_[i] = int64_t(values[i]), &ints_[i]) : nullptr; }
    const bool* GetBool(size_t i) const { return i < values.size() ? (bools_[i] = values[i] != 0, &bools_[i]) : nullptr; }
    size_t GetAttrNum() const { return values.size(); }
    template <class T> const T* GetAttrPointer(size_t i) const {
        if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) return reinterpret_cast<const T*>(GetFloat(i));
        else if constexpr (sizeof(T) == 1) return reinterpret_cast<const T*>(GetBool(i));
        else return reinterpret_cast<const T*>(GetInt(i));
    }
private:
    mutable float floats_[64] = {};
    mutable int64_t ints_[64] = {};
    mutable bool bools_[64] = {};
};

// the tiling data a tiling function writes: raw bytes of a capacity, and the size it used
class TilingData {
public:
    explicit TilingData(size_t capacity = 64 * 1024) : bytes_(capacity) {}
    void* GetData() { return bytes_.data(); }
    size_t GetCapacity() const { return bytes_.size(); }
    void SetDataSize(size_t size) { size_ = size; }
    size_t GetDataSize() const { return size_; }
private:
    std::vector<uint8_t> bytes_;
    size_t size_ = 0;
};

class TilingContext {
public:
    // fusekit's: the inputs' shapes and dtypes, the outputs' shapes, the attributes, the SoC
    TilingContext(std::vector<Shape> inputs, std::vector<ge::DataType> dtypes, std::vector<Shape> outputs,
                  std::vector<double> attrs, fe::PlatFormInfos platform)
        : platform_(platform) {
        for (auto& s : inputs) inputs_.emplace_back(s);
        for (auto t : dtypes) descs_.emplace_back(t);
        for (auto& s : outputs) outputs_.emplace_back(s);
        attrs_.values = std::move(attrs);
        for (size_t i = 0; i < inputs_.size(); ++i)
            tensors_.emplace_back(inputs_[i], i < descs_.size() ? descs_[i].GetDataType() : ge::DT_FLOAT16);
    }
    const StorageShape* GetInputShape(size_t i) const { return i < inputs_.size() ? &inputs_[i] : nullptr; }
    const StorageShape* GetOutputShape(size_t i) const { return i < outputs_.size() ? &outputs_[i] : nullptr; }
    const CompileTimeTensorDesc* GetInputDesc(size_t i) const { return i < descs_.size() ? &descs_[i] : nullptr; }
    size_t GetComputeNodeInputNum() const { return inputs_.size(); }
    const Tensor* GetInputTensor(size_t i) const { return i < tensors_.size() ? &tensors_[i] : nullptr; }
    const RuntimeAttrs* GetAttrs() const { return &attrs_; }
    ge::graphStatus SetBlockDim(uint32_t blockDim) { block_dim_ = blockDim; return ge::GRAPH_SUCCESS; }
    uint32_t GetBlockDim() const { return block_dim_; }
    ge::graphStatus SetTilingKey(uint64_t key) { tiling_key_ = key; return ge::GRAPH_SUCCESS; }
    uint64_t GetTilingKey() const { return tiling_key_; }
    TilingData* GetRawTilingData() { return &tiling_; }
    template <class T> T* GetTilingData() { tiling_.SetDataSize(sizeof(T)); return static_cast<T*>(tiling_.GetData()); }
    size_t* GetWorkspaceSizes(size_t num) { workspaces_.resize(num); return workspaces_.data(); }
    fe::PlatFormInfos* GetPlatformInfo() { return &platform_; }
    const std::vector<size_t>& workspace_sizes() const { return workspaces_; }  // fusekit's: what was asked
private:
    std::vector<StorageShape> inputs_, outputs_;
    std::vector<CompileTimeTensorDesc> descs_;
    std::vector<Tensor> tensors_;
    RuntimeAttrs attrs_;
    fe::PlatFormInfos platform_;
    TilingData tiling_;
    std::vector<size_t> workspaces_;
    uint32_t block_dim_ = 0;
    uint64_t tiling_key_ = 0;
};

}  // namespace gert

namespace gert {
// InferShape / InferDataType: what an operator's shape and dtype inference reads and writes
class InferShapeContext {
public:
    InferShapeContext(std::vector<Shape> inputs, size_t outputs) : inputs_(std::move(inputs)), outputs_(outputs) {}
    const Shape* GetInputShape(size_t i) const { return i < inputs_.size() ? &inputs_[i] : nullptr; }
    Shape* GetOutputShape(size_t i) { return i < outputs_.size() ? &outputs_[i] : nullptr; }
    const std::vector<Shape>& outputs() const { return outputs_; }
private:
    std::vector<Shape> inputs_;
    std::vector<Shape> outputs_;
};
class InferDataTypeContext {
public:
    InferDataTypeContext(std::vector<ge::DataType> inputs, size_t outputs) : inputs_(std::move(inputs)), outputs_(outputs) {}
    ge::DataType GetInputDataType(size_t i) const { return i < inputs_.size() ? inputs_[i] : ge::DT_FLOAT; }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType t) {
        if (i >= outputs_.size()) return ge::GRAPH_FAILED;
        outputs_[i] = t;
        return ge::GRAPH_SUCCESS;
    }
    const std::vector<ge::DataType>& outputs() const { return outputs_; }
private:
    std::vector<ge::DataType> inputs_;
    std::vector<ge::DataType> outputs_;
};
}  // namespace gert

// ---- OpDef: the operator's prototype, as the host file registers it (CANN "OpDef"; OP_ADD)
namespace ops {
enum Option { OPTIONAL = 0, REQUIRED = 1, DYNAMIC = 2 };
using TilingFunc = ge::graphStatus (*)(gert::TilingContext*);
using InferShapeFunc = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeFunc = ge::graphStatus (*)(gert::InferDataTypeContext*);

class OpParamDef {
public:
    explicit OpParamDef(const char* name) : name(name) {}
    OpParamDef& ParamType(Option o) { option = o; return *this; }
    OpParamDef& DataType(std::vector<ge::DataType> types) { dtypes = std::move(types); return *this; }
    OpParamDef& DataTypeList(std::vector<ge::DataType> types) { dtypes = std::move(types); return *this; }
    OpParamDef& Format(std::vector<ge::Format> f) { formats = std::move(f); return *this; }
    OpParamDef& FormatList(std::vector<ge::Format> f) { formats = std::move(f); return *this; }
    OpParamDef& UnknownShapeFormat(std::vector<ge::Format> f) { return Format(std::move(f)); }
    OpParamDef& ValueDepend(Option) { return *this; }
    OpParamDef& AutoContiguous() { return *this; }
    OpParamDef& IgnoreContiguous() { return *this; }
    const char* name;
    Option option = REQUIRED;
    std::vector<ge::DataType> dtypes;
    std::vector<ge::Format> formats;
};

class OpAttrDef {
public:
    explicit OpAttrDef(const char* name) : name(name) {}
    OpAttrDef& AttrType(Option o) { option = o; return *this; }
    OpAttrDef& Float(float v = 0.0f) { type = "float"; value = v; return *this; }
    OpAttrDef& Int(int64_t v = 0) { type = "int"; value = double(v); return *this; }
    OpAttrDef& Bool(bool v = false) { type = "bool"; value = v ? 1 : 0; return *this; }
    const char* name;
    Option option = REQUIRED;
    const char* type = "float";
    double value = 0;
};

class OpAICoreConfig {
public:
    OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }
    OpParamDef& Input(const char* name) { return params.emplace_back(name); }
    OpParamDef& Output(const char* name) { return params.emplace_back(name); }
    std::deque<OpParamDef> params;
};

class OpAICoreDef {
public:
    OpAICoreDef& SetTiling(TilingFunc f) { tiling = f; return *this; }
    OpAICoreDef& SetCheckSupport(void*) { return *this; }
    OpAICoreDef& SetOpSelectFormat(void*) { return *this; }
    OpAICoreDef& AddConfig(const char* soc) { socs.push_back(soc); return *this; }
    OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig&) { return AddConfig(soc); }
    TilingFunc tiling = nullptr;
    std::vector<const char*> socs;
};

class OpDef;
// static: each compiled project keeps its own registry (an inline function's static would be one object for
// every library the process loads: g++ makes it a unique symbol)
static std::vector<OpDef*>& registry() { static std::vector<OpDef*> ops; return ops; }

class OpDef {
public:
    explicit OpDef(const char* name) : name(name) { registry().push_back(this); }
    virtual ~OpDef() = default;
    OpParamDef& Input(const char* n) { return inputs.emplace_back(n); }
    OpParamDef& Output(const char* n) { return outputs.emplace_back(n); }
    OpAttrDef& Attr(const char* n) { return attrs.emplace_back(n); }
    OpDef& SetInferShape(InferShapeFunc f) { infer_shape = f; return *this; }
    OpDef& SetInferShapeRange(void*) { return *this; }
    OpDef& SetInferDataType(InferDataTypeFunc f) { infer_dtype = f; return *this; }
    OpAICoreDef& AICore() { return aicore; }
    const char* name;
    std::deque<OpParamDef> inputs, outputs;
    std::deque<OpAttrDef> attrs;
    InferShapeFunc infer_shape = nullptr;
    InferDataTypeFunc infer_dtype = nullptr;
    OpAICoreDef aicore;
};
}  // namespace ops

#define OP_ADD(op, ...) static ops::op fusekit_registered_op_##op(#op)
