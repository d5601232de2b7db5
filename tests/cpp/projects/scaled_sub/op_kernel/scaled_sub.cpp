// ScaledSub's kernel: each core walks its block (the last one may be shorter) tile by tile.
#include "kernel_operator.h"

template <typename T>
class KernelScaledSub {
public:
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, uint32_t total, uint32_t block, uint32_t tile)
    {
        uint32_t start = block * AscendC::GetBlockIdx();
        length = total - start < block ? total - start : block;
        tileLength = tile;
        x1Gm.SetGlobalBuffer((__gm__ T*)x1 + start, length);
        x2Gm.SetGlobalBuffer((__gm__ T*)x2 + start, length);
        yGm.SetGlobalBuffer((__gm__ T*)y + start, length);
        pipe.InitBuffer(inX1, 2, tile * sizeof(T));
        pipe.InitBuffer(inX2, 2, tile * sizeof(T));
        pipe.InitBuffer(outY, 2, tile * sizeof(T));
    }
    __aicore__ inline void Process(float alpha)
    {
        for (uint32_t offset = 0; offset < length; offset += tileLength) {
            uint32_t n = length - offset < tileLength ? length - offset : tileLength;
            AscendC::LocalTensor<T> a = inX1.AllocTensor<T>();
            AscendC::LocalTensor<T> b = inX2.AllocTensor<T>();
            AscendC::DataCopy(a, x1Gm[offset], n);
            AscendC::DataCopy(b, x2Gm[offset], n);
            inX1.EnQue(a);
            inX2.EnQue(b);
            a = inX1.DeQue<T>();
            b = inX2.DeQue<T>();
            AscendC::LocalTensor<T> c = outY.AllocTensor<T>();
            AscendC::Sub(c, a, b, n);
            AscendC::Muls(c, c, (T)alpha, n);
            outY.EnQue(c);
            inX1.FreeTensor(a);
            inX2.FreeTensor(b);
            c = outY.DeQue<T>();
            AscendC::DataCopy(yGm[offset], c, n);
            outY.FreeTensor(c);
        }
    }
private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inX1, inX2;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outY;
    AscendC::GlobalTensor<T> x1Gm, x2Gm, yGm;
    uint32_t length, tileLength;
};

extern "C" __global__ __aicore__ void scaled_sub(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    if (TILING_KEY_IS(1)) {
        KernelScaledSub<half> op;
        op.Init(x1, x2, y, t.totalLength, t.blockLength, t.tileLength);
        op.Process(t.alpha);
    } else if (TILING_KEY_IS(2)) {
        KernelScaledSub<float> op;
        op.Init(x1, x2, y, t.totalLength, t.blockLength, t.tileLength);
        op.Process(t.alpha);
    }
}
