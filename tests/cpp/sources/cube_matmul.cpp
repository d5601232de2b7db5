// The C++ twin of tests/cube/cube_kernels.py's matmul: C (m x n) = A (m x k) x B (k x n) (+ bias) on one AIC, B given
// transposed (n x k, row-major) so that ND2NZ lands it in Zn fractals; K in steps of baseK, each step a Mmad that
// starts C (from 0, or from the bias row) on the first step and accumulates after; C out through Fixpipe with quant
// and deq. The same calls in the same order as the pyasc kernel, in Ascend C's API (AD-API 矩阵计算（ISASI）: Mmad.md,
// LoadData_2D.md, DataCopy（GMToL1随路转换-ND2NZ搬运）.md, Fixpipe（L0C到GM数据搬运）.md). One __global__ kernel per
// (input, output) type pair, each declaring its kernel type one of the ways asc-devkit's samples do.
#include "kernel_operator.h"
using namespace AscendC;

__aicore__ inline uint32_t CeilTo(uint32_t x, uint32_t unit) { return (x + unit - 1) / unit * unit; }

// T: A and B; Acc: L0C (float, or int32 for int8); Out: C in GM; Bias: the bias row (and the bias table)
template <class T, class Acc, class Out, class Bias>
__aicore__ inline void Matmul(GM_ADDR a, GM_ADDR bt, GM_ADDR c, GM_ADDR bias, uint32_t m, uint32_t n, uint32_t k,
                              uint32_t baseK, uint32_t quant, uint64_t deq, bool withBias, bool relu, bool barrier,
                              bool hf32) {
    if (hf32) {
        SetHF32Mode(HF32Mode::ENABLE);  // float inputs rounded to HF32 (SetHF32Mode.md)
    }
    GlobalTensor<T> aGm, bGm;
    GlobalTensor<Out> cGm;
    GlobalTensor<Bias> biasGm;
    aGm.SetGlobalBuffer((__gm__ T*)a);
    bGm.SetGlobalBuffer((__gm__ T*)bt);
    cGm.SetGlobalBuffer((__gm__ Out*)c);
    biasGm.SetGlobalBuffer((__gm__ Bias*)bias);
    constexpr uint32_t size = sizeof(T), c0 = 32 / size, fe = 512 / size;  // c0: a fractal row; fe: a fractal
    const uint32_t mp = CeilTo(m, 16), np = CeilTo(n, 16), kp = CeilTo(k, c0);
    TPipe pipe;
    TQue<TPosition::A1, 1> qa1;
    TQue<TPosition::B1, 1> qb1;
    TQue<TPosition::A2, 1> qa2;
    TQue<TPosition::B2, 1> qb2;
    TQue<TPosition::CO1, 1> qc;
    TQue<TPosition::C1, 1> qbias1;  // used with a bias only; constructing a queue records nothing
    TQue<TPosition::C2, 1> qbias2;
    pipe.InitBuffer(qa1, 1, mp * kp * size);
    pipe.InitBuffer(qb1, 1, np * kp * size);
    pipe.InitBuffer(qa2, 1, mp * baseK * size);
    pipe.InitBuffer(qb2, 1, np * baseK * size);
    pipe.InitBuffer(qc, 1, mp * np * 4);

    LocalTensor<T> a1 = qa1.AllocTensor<T>();
    DataCopy(a1, aGm, Nd2NzParams{1, m, k, 0, k, mp, 1, 0});
    qa1.EnQue(a1);
    LocalTensor<T> b1 = qb1.AllocTensor<T>();
    DataCopy(b1, bGm, Nd2NzParams{1, n, k, 0, k, np, 1, 0});
    qb1.EnQue(b1);
    LocalTensor<Bias> bBt;
    if (withBias) {
        pipe.InitBuffer(qbias1, 1, np * 4);
        pipe.InitBuffer(qbias2, 1, np * 4);
        LocalTensor<Bias> bL1 = qbias1.AllocTensor<Bias>();
        DataCopy(bL1, biasGm, np);
        qbias1.EnQue(bL1);
        bL1 = qbias1.DeQue<Bias>();
        bBt = qbias2.AllocTensor<Bias>();
        DataCopy(bBt, bL1, DataCopyParams{1, static_cast<uint16_t>(np * 4 / 64), 0, 0});  // blockLen: 64 B units
        qbias2.EnQue(bBt);
        qbias1.FreeTensor(bL1);
        bBt = qbias2.DeQue<Bias>();
    }

    a1 = qa1.DeQue<T>();
    b1 = qb1.DeQue<T>();
    LocalTensor<Acc> c1 = qc.AllocTensor<Acc>();
    const uint32_t steps = (k + baseK - 1) / baseK;
    for (uint32_t s = 0; s < steps; ++s) {
        const uint32_t kk = baseK < k - s * baseK ? baseK : k - s * baseK;  // this step's k (the tail is shorter)
        const uint32_t k1 = (kk + c0 - 1) / c0;
        LocalTensor<T> a2 = qa2.AllocTensor<T>();
        for (uint32_t m1 = 0; m1 < mp / 16; ++m1) {  // L1 Nz -> L0A Zz: one load per row of fractals
            LoadData(a2[m1 * k1 * fe], a1[m1 * fe], LoadData2DParams{s * (baseK / c0) * (mp / 16), k1, mp / 16, 0, 0,
                                                                      false, 0});
        }
        qa2.EnQue(a2);
        LocalTensor<T> b2 = qb2.AllocTensor<T>();
        LoadData(b2, b1, LoadData2DParams{s * (baseK / c0) * (np / 16), k1 * (np / 16), 1, 0, 0, false, 0});
        qb2.EnQue(b2);
        a2 = qa2.DeQue<T>();
        b2 = qb2.DeQue<T>();
        if (barrier && s > 0) {
            PipeBarrier<PIPE_M>();  // Mmads into one L0C of fewer than 10 fractals (Mmad.md, 同步优化说明)
        }
        if (s == 0 && withBias) {
            Mmad(c1, a2, b2, bBt, MmadParams(m, n, kk, 0, false, false));
        } else {
            Mmad(c1, a2, b2, MmadParams(m, n, kk, 0, false, s == 0));
        }
        qa2.FreeTensor(a2);
        qb2.FreeTensor(b2);
    }
    qa1.FreeTensor(a1);
    qb1.FreeTensor(b1);
    if (withBias) {
        qbias2.FreeTensor(bBt);
    }
    qc.EnQue(c1);
    c1 = qc.DeQue<Acc>();
    // pyasc's order (quantPre fifth); reluEn is the tenth field of that form
    Fixpipe(cGm, c1, FixpipeParamsV220(n, m, mp, n, static_cast<QuantMode_t>(quant), deq, 1, 0, 0, relu));
    qc.FreeTensor(c1);
}

#define MATMUL_PARAMS                                                                                             \
    GM_ADDR a, GM_ADDR bt, GM_ADDR c, GM_ADDR bias, uint32_t m, uint32_t n, uint32_t k, uint32_t baseK,           \
        uint32_t quant, uint64_t deq, bool withBias, bool relu, bool barrier, bool hf32
#define MATMUL_ARGS a, bt, c, bias, m, n, k, baseK, quant, deq, withBias, relu, barrier, hf32

// float x float -> float (HF32 when hf32 is set)
extern "C" __global__ __cube__ void matmul_f32_f32(MATMUL_PARAMS) { Matmul<float, float, float, float>(MATMUL_ARGS); }
// half x half -> float in L0C, out as float (NoQuant) or half (F322F16)
extern "C" __global__ __cube__ void matmul_f16_f32(MATMUL_PARAMS) { Matmul<half, float, float, float>(MATMUL_ARGS); }
extern "C" __cube__ __global__ void matmul_f16_f16(MATMUL_PARAMS) { Matmul<half, float, half, float>(MATMUL_ARGS); }
// int8 x int8 -> int32 in L0C, out as int32 (NoQuant) or half (DEQF16); the type from KERNEL_TASK_TYPE_DEFAULT
extern "C" __global__ __aicore__ void matmul_s8_s32(MATMUL_PARAMS) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    Matmul<int8_t, int32_t, int32_t, int32_t>(MATMUL_ARGS);
}
extern "C" __global__ __cube__ void matmul_s8_f16(MATMUL_PARAMS) { Matmul<int8_t, int32_t, half, int32_t>(MATMUL_ARGS); }
