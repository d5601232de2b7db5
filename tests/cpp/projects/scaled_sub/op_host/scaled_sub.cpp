// ScaledSub's host side: the OpDef, shape inference and the tiling (one block of whole 32 B units per core,
// tiles that fit UB with two buffers for each of three queues; tiling key 1 = float16, 2 = float32).
#include "scaled_sub_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ScaledSubTilingData tiling;
    uint32_t total = uint32_t(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    uint32_t size = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT16 ? 2 : 4;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint32_t unit = 32 / size;
    if (total % unit != 0) return ge::GRAPH_FAILED;  // whole 32 B blocks only: DataCopy's unit
    uint32_t cores = platform.GetCoreNumAiv();
    uint32_t block = (total / unit + cores - 1) / cores * unit;
    uint32_t tile = uint32_t(ub / (6 * size)) / unit * unit;
    tiling.set_totalLength(total);
    tiling.set_blockLength(block);
    tiling.set_tileLength(block < tile ? block : tile);
    tiling.set_alpha(*context->GetAttrs()->GetFloat(0));
    context->SetBlockDim((total + block - 1) / block);
    context->SetTilingKey(size == 2 ? 1 : 2);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class ScaledSub : public OpDef {
public:
    explicit ScaledSub(const char* name) : OpDef(name)
    {
        this->Input("x1").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("x2").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("alpha").AttrType(REQUIRED).Float();
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }
};
OP_ADD(ScaledSub);
}  // namespace ops
