// The article's host tiling function (section 4.3), pasted as written; only the line breaks are added.
#include "register/op_def_registry.h"
#include "tiling/tiling_api.h"
namespace optiling {
constexpr uint32_t kAlign = 16;
static ge::graphStatus TilingFusedAddScale(gert::TilingContext* context) {
    auto shape = context->GetInputShape(0);
    uint32_t totalLength = 1;
    for (size_t i = 0; i < shape->GetDimNum(); ++i) { totalLength *= shape->GetDim(i); }
    uint32_t coreNum = context->GetCoreNum();
    uint32_t blockLength = (totalLength + coreNum - 1) / coreNum;
    blockLength = ((blockLength + kAlign - 1) / kAlign) * kAlign;
    uint32_t blockDim = (totalLength + blockLength - 1) / blockLength;
    blockDim = blockDim > coreNum ? coreNum : blockDim;
    context->SetBlockDim(blockDim);
    auto tilingData = context->GetTilingData();
    uint32_t* data = reinterpret_cast<uint32_t*>(tilingData);
    data[0] = totalLength;
    data[1] = blockLength;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
