// FusedAddScale in Ascend C, the shape of asc-devkit's add_tpipe_tque: each core walks its block in tiles through
// TPipe/TQue queues (CopyIn, Compute, CopyOut). Its pyasc twin is tests/cpp/twins.py: fused_add_scale.
#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t BUFFER_NUM = 2;
class KernelFusedAddScale {
public:
    __aicore__ inline KernelFusedAddScale(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, uint32_t totalLength, uint32_t tileLength, float scale)
        : tileLength(tileLength), scale(scale) {
        blockLength = totalLength / GetBlockNum();
        x1Gm.SetGlobalBuffer((__gm__ half*)x1 + blockLength * GetBlockIdx(), blockLength);
        x2Gm.SetGlobalBuffer((__gm__ half*)x2 + blockLength * GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ half*)y + blockLength * GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueueX1, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(inQueueX2, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(half));
    }
    __aicore__ inline void Process() {
        for (uint32_t offset = 0; offset < blockLength; offset += tileLength) {
            CopyIn(offset); Compute(); CopyOut(offset);
        }
    }
private:
    __aicore__ inline void CopyIn(uint32_t offset) {
        LocalTensor<half> a = inQueueX1.AllocTensor<half>();
        LocalTensor<half> b = inQueueX2.AllocTensor<half>();
        DataCopy(a, x1Gm[offset], tileLength);
        DataCopy(b, x2Gm[offset], tileLength);
        inQueueX1.EnQue(a); inQueueX2.EnQue(b);
    }
    __aicore__ inline void Compute() {
        LocalTensor<half> a = inQueueX1.DeQue<half>();
        LocalTensor<half> b = inQueueX2.DeQue<half>();
        LocalTensor<half> y = outQueueY.AllocTensor<half>();
        Add(y, a, b, tileLength);
        Muls(y, y, (half)scale, tileLength);
        outQueueY.EnQue<half>(y);
        inQueueX1.FreeTensor(a); inQueueX2.FreeTensor(b);
    }
    __aicore__ inline void CopyOut(uint32_t offset) {
        LocalTensor<half> y = outQueueY.DeQue<half>();
        DataCopy(yGm[offset], y, tileLength);
        outQueueY.FreeTensor(y);
    }
    GlobalTensor<half> x1Gm, x2Gm, yGm;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX1, inQueueX2;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TPipe pipe;
    uint32_t blockLength, tileLength;
    float scale;
};
extern "C" __global__ __aicore__ void fused_add_scale(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, uint32_t totalLength, uint32_t tileLength, float scale) {
    KernelFusedAddScale op(x1, x2, y, totalLength, tileLength, scale);
    op.Process();
}
