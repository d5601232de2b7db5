// What fusekit adds to an operator project's host sources (written for fusekit): the C entry points through
// which Python reads the registered OpDef and calls its shape inference and tiling function.
#pragma once
#include <string>

#include "../register/op_def_registry.h"

namespace fusekit::op_host {

inline ops::OpDef* the_op() { return ops::registry().empty() ? nullptr : ops::registry().front(); }

inline std::string params_text(const std::deque<ops::OpParamDef>& params) {
    std::string s;
    for (auto& p : params) {
        s += std::string(s.empty() ? "" : ";") + p.name + ":" + std::to_string(int(p.option)) + ":";
        for (size_t i = 0; i < p.dtypes.size(); ++i) s += (i ? "," : "") + std::to_string(int(p.dtypes[i]));
    }
    return s;
}

}  // namespace fusekit::op_host

// "name|inputs|outputs|attrs|has tiling": inputs and outputs as name:option:dtype,dtype;... attrs as name:option:type:value
extern "C" const char* fusekit_op_describe() {
    using namespace fusekit::op_host;
    static std::string text;
    ops::OpDef* op = the_op();
    if (op == nullptr) return "";
    std::string attrs;
    for (auto& a : op->attrs)
        attrs += std::string(attrs.empty() ? "" : ";") + a.name + ":" + std::to_string(int(a.option)) + ":" + a.type + ":" +
                 std::to_string(a.value);
    text = std::string(op->name) + "|" + params_text(op->inputs) + "|" + params_text(op->outputs) + "|" + attrs + "|" +
           (op->aicore.tiling ? "1" : "0");
    return text.c_str();
}

// Shapes in: rank then dims per input. Out (results): status, block_dim, tiling_key, tiling bytes, workspace
// count, workspace sizes (up to 8); then the outputs' ranks and dims (inferred, or the first input's).
extern "C" int fusekit_op_tiling(int n_in, const int64_t* shapes, const int32_t* dtypes, int n_out, int n_attrs,
                                 const double* attrs, uint32_t cores, uint32_t aic_cores, int32_t soc_version,
                                 uint64_t ub, uint8_t* tiling, uint64_t capacity,
                                 uint64_t* results, int64_t* out_shapes) {
    ops::OpDef* op = fusekit::op_host::the_op();
    if (op == nullptr || op->aicore.tiling == nullptr) return 1;
    std::vector<gert::Shape> inputs;
    std::vector<ge::DataType> types;
    for (int i = 0, k = 0; i < n_in; ++i) {
        int64_t rank = shapes[k++];
        inputs.emplace_back(std::vector<int64_t>(shapes + k, shapes + k + rank));
        k += int(rank);
        types.push_back(ge::DataType(dtypes[i]));
    }
    std::vector<gert::Shape> outputs(size_t(n_out), inputs.empty() ? gert::Shape{} : inputs[0]);
    if (op->infer_shape != nullptr) {
        gert::InferShapeContext infer(inputs, size_t(n_out));
        if (op->infer_shape(&infer) == ge::GRAPH_SUCCESS) outputs = infer.outputs();
    }
    gert::TilingContext context(inputs, types, outputs, std::vector<double>(attrs, attrs + n_attrs),
                                fe::PlatFormInfos{cores, ub, aic_cores, soc_version});
    results[0] = op->aicore.tiling(&context);
    results[1] = context.GetBlockDim();
    results[2] = context.GetTilingKey();
    gert::TilingData* data = context.GetRawTilingData();
    results[3] = data->GetDataSize();
    std::memcpy(tiling, data->GetData(), data->GetDataSize() < capacity ? data->GetDataSize() : capacity);
    const std::vector<size_t>& workspaces = context.workspace_sizes();
    results[4] = workspaces.size() < 8 ? workspaces.size() : 8;
    for (uint64_t i = 0; i < results[4]; ++i) results[5 + i] = workspaces[i];
    for (int i = 0, k = 0; i < n_out; ++i) {
        out_shapes[k++] = int64_t(outputs[i].GetDimNum());
        for (size_t d = 0; d < outputs[i].GetDimNum(); ++d) out_shapes[k++] = outputs[i].GetDim(d);
    }
    return 0;
}
