// The article's host tiling function (section 4.3), corrected to CANN's tiling API: the dims come from the
// input's StorageShape, the core count and UB size from the platform, the tiling data is a struct, and a tile
// (three queues of BUFFER_NUM buffers) is bounded by UB, the "循环次数限制" the article leaves out.
#include "register/op_def_registry.h"
#include "tiling/tiling_api.h"
struct FusedAddScaleTiling {
    uint32_t totalLength;
    uint32_t blockLength;
    uint32_t tileLength;
};
namespace optiling {
constexpr uint32_t kAlign = 16;       // elements of 32 bytes: DataCopy's unit
constexpr uint32_t kBuffers = 3 * 2;  // x1, x2, y queues of BUFFER_NUM = 2
static ge::graphStatus TilingFusedAddScale(gert::TilingContext* context) {
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    uint32_t totalLength = 1;
    for (size_t i = 0; i < shape.GetDimNum(); ++i) { totalLength *= shape.GetDim(i); }
    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    uint32_t coreNum = platform.GetCoreNumAiv();
    uint64_t ubBytes = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubBytes);
    uint32_t blockLength = (totalLength + coreNum - 1) / coreNum;
    blockLength = ((blockLength + kAlign - 1) / kAlign) * kAlign;
    uint32_t blockDim = (totalLength + blockLength - 1) / blockLength;
    blockDim = blockDim > coreNum ? coreNum : blockDim;
    uint32_t maxTile = uint32_t(ubBytes / (kBuffers * sizeof(uint16_t))) / kAlign * kAlign;
    context->SetBlockDim(blockDim);
    FusedAddScaleTiling* tiling = context->GetTilingData<FusedAddScaleTiling>();
    tiling->totalLength = totalLength;
    tiling->blockLength = blockLength;
    tiling->tileLength = blockLength < maxTile ? blockLength : maxTile;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
