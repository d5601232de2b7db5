// The article's device kernel (section 4.4), corrected: the queues order the stages (no SyncIO / SyncCompute),
// Add and Muls take their documented arguments (destination first; Muls(dst, src, scalar, count)), and each core
// walks its block in tiles of tileLength elements that fit UB with BUFFER_NUM buffers per queue.
#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t BUFFER_NUM = 2;
class KernelFusedAddScale {
public:
    __aicore__ inline KernelFusedAddScale(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, uint32_t totalLength, uint32_t blockLength,
                                          uint32_t tileLength, float scale)
        : totalLength(totalLength), blockLength(blockLength), tileLength(tileLength), scale(scale) {
        x1Gm.SetGlobalBuffer((__gm__ half*)x1, totalLength);
        x2Gm.SetGlobalBuffer((__gm__ half*)x2, totalLength);
        yGm.SetGlobalBuffer((__gm__ half*)y, totalLength);
        pipe.InitBuffer(inQueueX1, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(inQueueX2, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(half));
    }
    __aicore__ inline void Process() {
        uint32_t coreIdx = GetBlockIdx();
        uint32_t coreStart = coreIdx * blockLength;
        uint32_t coreEnd = coreStart + blockLength;
        if (coreEnd > totalLength) { coreEnd = totalLength; }
        uint32_t step = tileLength;
        for (uint32_t offset = coreStart; offset < coreEnd; offset += step) {
            uint32_t curLen = (offset + step) < coreEnd ? step : (coreEnd - offset);
            CopyIn(offset, curLen);
            Compute(offset, curLen);
            CopyOut(offset, curLen);
        }
    }
private:
    __aicore__ inline void CopyIn(uint32_t offset, uint32_t length) {
        LocalTensor<half> x1Local = inQueueX1.AllocTensor<half>();
        LocalTensor<half> x2Local = inQueueX2.AllocTensor<half>();
        DataCopy(x1Local, x1Gm[offset], length);
        DataCopy(x2Local, x2Gm[offset], length);
        inQueueX1.EnQue(x1Local);
        inQueueX2.EnQue(x2Local);
    }
    __aicore__ inline void Compute(uint32_t offset, uint32_t length) {
        LocalTensor<half> x1Local = inQueueX1.DeQue<half>();
        LocalTensor<half> x2Local = inQueueX2.DeQue<half>();
        LocalTensor<half> yLocal = outQueueY.AllocTensor<half>();
        Add(yLocal, x1Local, x2Local, length);
        Muls(yLocal, yLocal, (half)scale, length);
        outQueueY.EnQue(yLocal);
        inQueueX1.FreeTensor(x1Local);
        inQueueX2.FreeTensor(x2Local);
    }
    __aicore__ inline void CopyOut(uint32_t offset, uint32_t length) {
        LocalTensor<half> yLocal = outQueueY.DeQue<half>();
        DataCopy(yGm[offset], yLocal, length);
        outQueueY.FreeTensor(yLocal);
    }
private:
    GlobalTensor<half> x1Gm, x2Gm, yGm;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX1, inQueueX2;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TPipe pipe;
    uint32_t totalLength;
    uint32_t blockLength;
    uint32_t tileLength;
    float scale;
};
extern "C" __global__ __aicore__ void FusedAddScale(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, uint32_t totalLength,
                                                    uint32_t blockLength, uint32_t tileLength, float scale) {
    KernelFusedAddScale op(x1, x2, y, totalLength, blockLength, tileLength, scale);
    op.Process();
}
