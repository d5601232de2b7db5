"""A mix kernel the cube and executor tests share: the pattern of asc-devkit's
examples/01_simd_cpp_api/00_introduction/03_fusion_operation/matmul_leakyrelu_basic_api. The AIC computes a 32 x 32
tile of C into a GM workspace and sets a mode-2 cross-core flag after its Fixpipe; each of its two AIVs waits for the
flag (unless ``wait`` is False: a race), applies LeakyReLU to its 16 rows in UB and writes the output."""

from __future__ import annotations

import numpy as np

from fusekit import asc
from fusekit.pyasc.shim import config

MIX = config.KernelType.MIX_AIC_1_2
M = N = K = 32  # one 32 x 32 tile per AI Core; each AIV takes 16 rows


@asc.jit(kernel_type=MIX)
def matmul_leaky_relu(a: asc.GlobalAddress, bt: asc.GlobalAddress, work: asc.GlobalAddress, y: asc.GlobalAddress,
                      wait: asc.ConstExpr[bool], defaults: asc.ConstExpr[bool] = False):
    if asc.ascend_is_aic():
        block = asc.get_block_idx()
        ag, bg, wg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        ag.set_global_buffer(a + block * M * K)
        bg.set_global_buffer(bt)
        wg.set_global_buffer(work + block * M * N)
        a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, M * K)
        b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 4096, N * K)
        a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, M * K)
        b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, N * K)
        c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, M * N)
        asc.data_copy(a1, ag, asc.Nd2NzParams(1, M, K, 0, K, M, 1, 0))
        asc.data_copy(b1, bg, asc.Nd2NzParams(1, N, K, 0, K, N, 1, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        for m1 in range(M // 16):
            asc.load_data(a2[m1 * K * 16:], a1[m1 * 256:], asc.LoadData2DParams(0, K // 16, M // 16, 0, 0, False, 0))
        asc.load_data(b2, b1, asc.LoadData2DParams(0, K * N // 256, 1, 0, 0, False, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.mmad(c, a2, b2, asc.MmadParams(M, N, K, 0, False, True))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.fixpipe(wg, c, asc.FixpipeParamsV220(N, M, M, N, asc.QuantModes.NoQuant))
        asc.cross_core_set_flag(0, 2, asc.PipeID.PIPE_FIX)
    if asc.ascend_is_aiv():
        core = asc.get_block_idx()  # [0, 2 * block_num): AI Core core // 2, half core % 2 (GetBlockIdx.md)
        assert asc.get_task_ratio() == 2 and asc.get_sub_block_idx() == core % 2
        rows = M // 2
        start = (core // 2) * M * N + (core % 2) * rows * N
        wg, yg = asc.GlobalTensor(), asc.GlobalTensor()
        wg.set_global_buffer(work + start)
        yg.set_global_buffer(y + start)
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, rows * N)
        if wait and defaults:  # C++'s CrossCoreWaitFlag(0): modeId 0 and PIPE_S, which A2/A3 ignore
            asc.cross_core_wait_flag(0, 0, asc.PipeID.PIPE_S)
        elif wait:
            asc.cross_core_wait_flag(0, 2, asc.PipeID.PIPE_MTE2)
        asc.data_copy(t, wg, rows * N)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.leaky_relu(t, t, 0.1, rows * N)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(yg, t, rows * N)


def mix_args(blocks: int, wait: bool = True, defaults: bool = False):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((blocks * M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    work = np.zeros((blocks * M, N), np.float32)
    y = np.zeros((blocks * M, N), np.float32)
    return a, b, (a, np.ascontiguousarray(b.T), work, y, wait, defaults)
