// Which cores a C++ kernel's launch runs, by how the kernel declares its type (AD 核函数; 设置Kernel类型.md):
// __mix__(1, 2) and KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2) are one AIC and two AIVs per block. Each AIV
// writes its GetBlockIdx into its own 8 floats of y; the AIC only asks what it is. The pyasc twin is
// tests/cpp/twins.py: mix_ids.
#include "kernel_operator.h"
using namespace AscendC;

__aicore__ inline void WriteIds(GM_ADDR y) {
    if ASCEND_IS_AIV {
        int64_t idx = GetBlockIdx();
        GlobalTensor<float> yGm;
        yGm.SetGlobalBuffer((__gm__ float*)y + idx * 8, 8);
        LocalTensor<float> t(TPosition::VECCALC, 0, 8);
        Duplicate(t, float(idx), 8);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(yGm, t, 8);
    }
}

extern "C" __global__ __mix__(1, 2) void mix_ids(GM_ADDR y) { WriteIds(y); }

extern "C" __global__ __aicore__ void mix_ids_task_type(GM_ADDR y) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    WriteIds(y);
}

// The pattern of asc-devkit's matmul_leakyrelu_basic_api, in static tensors: the AIC of each AI Core computes a
// 32 x 32 tile of C = A x B into the GM workspace and sets a mode-2 cross-core flag after its Fixpipe; each of its
// two AIVs waits for the flag, applies LeakyReLU to its 16 rows in UB and writes them to y
// (CrossCoreSetFlag(ISASI).md, CrossCoreWaitFlag(ISASI).md). The pyasc twin is twins.py: matmul_leaky_relu.
constexpr uint32_t TILE = 32;
extern "C" __global__ __mix__(1, 2) void matmul_leaky_relu(GM_ADDR a, GM_ADDR bt, GM_ADDR work, GM_ADDR y) {
    if ASCEND_IS_AIC {
        int64_t block = GetBlockIdx();
        GlobalTensor<half> ag, bg;
        GlobalTensor<float> wg;
        ag.SetGlobalBuffer((__gm__ half*)a + block * TILE * TILE);
        bg.SetGlobalBuffer((__gm__ half*)bt);
        wg.SetGlobalBuffer((__gm__ float*)work + block * TILE * TILE);
        LocalTensor<half> a1(TPosition::A1, 0, TILE * TILE), b1(TPosition::B1, 4096, TILE * TILE);
        LocalTensor<half> a2(TPosition::A2, 0, TILE * TILE), b2(TPosition::B2, 0, TILE * TILE);
        LocalTensor<float> c(TPosition::CO1, 0, TILE * TILE);
        DataCopy(a1, ag, Nd2NzParams{1, TILE, TILE, 0, TILE, TILE, 1, 0});
        DataCopy(b1, bg, Nd2NzParams{1, TILE, TILE, 0, TILE, TILE, 1, 0});
        SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
        for (uint32_t m1 = 0; m1 < TILE / 16; ++m1) {
            LoadData(a2[m1 * TILE * 16], a1[m1 * 256], LoadData2DParams{0, TILE / 16, TILE / 16, 0, 0, false, 0});
        }
        LoadData(b2, b1, LoadData2DParams{0, TILE * TILE / 256, 1, 0, 0, false, 0});
        SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
        WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
        Mmad(c, a2, b2, MmadParams(TILE, TILE, TILE, 0, false, true));
        SetFlag<HardEvent::M_FIX>(EVENT_ID0);
        WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
        Fixpipe(wg, c, FixpipeParamsV220(TILE, TILE, TILE, TILE, QuantMode_t::NoQuant));
        CrossCoreSetFlag<2, PIPE_FIX>(0);
    }
    if ASCEND_IS_AIV {
        int64_t core = GetBlockIdx();  // [0, 2 * blocks): AI Core core / 2, its half core % 2 (GetBlockIdx.md)
        const uint32_t rows = TILE / 2, start = (core / 2) * TILE * TILE + (core % 2) * rows * TILE;
        GlobalTensor<float> wg, yg;
        wg.SetGlobalBuffer((__gm__ float*)work + start);
        yg.SetGlobalBuffer((__gm__ float*)y + start);
        LocalTensor<float> t(TPosition::VECCALC, 0, rows * TILE);
        CrossCoreWaitFlag<2, PIPE_MTE2>(0);
        DataCopy(t, wg, rows * TILE);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        LeakyRelu(t, t, 0.1f, rows * TILE);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(yg, t, rows * TILE);
    }
}
