// The high-level Matmul in C++ (include/lib/matmul_intf.h): the twins of tests/cube/test_cube_matmul_api.py's pyasc
// kernels cube_only (AIC_ONLY, IterateAll into GM) and leaky (MIX_AIC_1_2, Iterate + GetTensorC into UB), the same
// calls in the same order.
#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"

using namespace AscendC;

template <class T, class C>
__aicore__ inline void cube_only_body(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR bias, const TCubeTiling& tiling,
                                      bool bTrans) {
    int32_t block = GetBlockIdx();
    int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    int32_t nIndex = block / mBlocks, mIndex = block % mBlocks;
    GlobalTensor<T> ag, bg;
    GlobalTensor<C> cg;
    GlobalTensor<float> biasg;
    ag.SetGlobalBuffer((__gm__ T*)a + mIndex * tiling.Ka * tiling.singleCoreM);
    bg.SetGlobalBuffer((__gm__ T*)b + (bTrans ? nIndex * tiling.Kb * tiling.singleCoreN : nIndex * tiling.singleCoreN));
    cg.SetGlobalBuffer((__gm__ C*)c + mIndex * tiling.N * tiling.singleCoreM + nIndex * tiling.singleCoreN);
    biasg.SetGlobalBuffer((__gm__ float*)bias + nIndex * tiling.singleCoreN);
    int32_t tailM = tiling.M - mIndex * tiling.singleCoreM;
    tailM = tailM < tiling.singleCoreM ? tailM : tiling.singleCoreM;
    int32_t tailN = tiling.N - nIndex * tiling.singleCoreN;
    tailN = tailN < tiling.singleCoreN ? tailN : tiling.singleCoreN;
    TPipe pipe;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, T>, MatmulType<TPosition::GM, CubeFormat::ND, T>,
           MatmulType<TPosition::GM, CubeFormat::ND, C>, MatmulType<TPosition::GM, CubeFormat::ND, float>>
        mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    if (block < tiling.usedCoreNum) {
        mm.SetTensorA(ag);
        mm.SetTensorB(bg, bTrans);
        if (tiling.isBias) mm.SetBias(biasg);
        mm.SetTail(tailM, tailN, tiling.Ka);
        mm.IterateAll(cg);
        mm.End();
    }
}

__global__ __cube__ void cube_only_f16(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR bias, TCubeTiling tiling,
                                       GM_ADDR workspace, bool bTrans) {
    cube_only_body<half, float>(a, b, c, bias, tiling, bTrans);
}

__global__ __cube__ void cube_only_f16_f16(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR bias, TCubeTiling tiling,
                                           GM_ADDR workspace, bool bTrans) {
    cube_only_body<half, half>(a, b, c, bias, tiling, bTrans);
}

__global__ __mix__(1, 2) void leaky(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR bias, float alpha, TCubeTiling tiling,
                                    GM_ADDR workspace) {
    int32_t block = GetBlockIdx();
    int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
    int32_t mIndex = block % mBlocks, nIndex = block / mBlocks;
    GlobalTensor<half> ag, bg;
    GlobalTensor<float> cg, biasg;
    ag.SetGlobalBuffer((__gm__ half*)a + mIndex * tiling.Ka * tiling.singleCoreM);
    bg.SetGlobalBuffer((__gm__ half*)b + nIndex * tiling.singleCoreN);
    cg.SetGlobalBuffer((__gm__ float*)c + mIndex * tiling.N * tiling.singleCoreM + nIndex * tiling.singleCoreN);
    biasg.SetGlobalBuffer((__gm__ float*)bias + nIndex * tiling.singleCoreN);
    TPipe pipe;
    TQue<TPosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, tiling.baseM * tiling.baseN * 4);
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half>, MatmulType<TPosition::GM, CubeFormat::ND, half>,
           MatmulType<TPosition::VECCALC, CubeFormat::ND, float>, MatmulType<TPosition::GM, CubeFormat::ND, float>>
        mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
    mm.SetTensorA(ag);
    mm.SetTensorB(bg);
    mm.SetBias(biasg);
    int32_t count = 0;
    while (mm.Iterate()) {
        LocalTensor<float> t = que.AllocTensor<float>();
        mm.GetTensorC(t, 0, true);
        LeakyRelu(t, t, alpha, tiling.baseM * tiling.baseN);
        que.EnQue(t);
        t = que.DeQue<float>();
        int32_t rounds = tiling.singleCoreM / tiling.baseM;
        int32_t start = count % rounds * tiling.baseM * tiling.N + count / rounds * tiling.baseN;
        DataCopy(cg[start], t, DataCopyParams(tiling.baseM, tiling.baseN * 4 / 32, 0, (tiling.N - tiling.baseN) * 4 / 32));
        que.FreeTensor(t);
        count++;
    }
    mm.End();
}
