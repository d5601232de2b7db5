"""Mix kernels (KERNEL_TYPE_MIX_AIC_1_2: one AIC and two AIVs per logical AI Core), the pattern of asc-devkit's
examples/01_simd_cpp_api/00_introduction/03_fusion_operation/matmul_leakyrelu_basic_api: the AIC computes a tile
of C into a GM workspace and sets a mode-2 cross-core flag after its Fixpipe; each of its AIVs waits for the flag,
applies LeakyReLU to its half of the rows in UB, and writes the output. GetBlockIdx / GetSubBlockIdx /
GetTaskRatio per core kind as GetBlockIdx.md, GetSubBlockIdx(ISASI).md and GetTaskRatio.md give them."""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.sanitizer import sanitize

from mix_kernels import MIX, matmul_leaky_relu
from mix_kernels import mix_args as _args


def test_a_mix_launch_runs_an_aic_and_two_aivs_per_block():
    a, b, args = _args(3)
    result = matmul_leaky_relu[3](*args)
    c = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(args[3], np.where(c >= 0, c, 0.1 * c), rtol=1e-5, atol=1e-5)
    trace = result.trace
    assert trace.block_dim == 3 and len(trace.cores) == 9
    assert [trace.core_label(i) for i in range(9)] == [f"aiv({i})" for i in range(6)] + [f"aic({i})" for i in range(3)]
    assert {i.pipe.name for i in trace.cores[6]} >= {"MTE2", "MTE1", "M", "FIX"}
    assert {i.pipe.name for i in trace.cores[0]} >= {"MTE2", "V", "MTE3"}


def test_the_flag_orders_the_workspace_and_its_absence_is_a_race():
    _, _, args = _args(2)
    assert sanitize(matmul_leaky_relu, outputs=("y",))[2](*args).findings == []
    _, _, racy = _args(2, wait=False)
    report = sanitize(matmul_leaky_relu, outputs=("y",), replay=True)[2](*racy)
    races = [f for f in report.findings if f.tool == "racecheck" and f.buffer == "work"]
    assert races and {f.pipes for f in races} <= {("FIX", "MTE2"), ("MTE2", "FIX")}
    assert "aic(" in races[0].message and "aiv(" in races[0].message
    assert "aic(" in report.to_text()


def test_a_wait_with_cpp_default_mode_and_pipe_takes_the_aics_mode_2_sets():
    # CrossCoreWaitFlag(ISASI).md: on A2/A3 the wait's modeId and pipe have no effect; it waits for its core's
    # counter of the flag, which the AIC's mode-2 set fed (asc-devkit's matmul_leakyrelu_basic_api waits so)
    a, b, args = _args(2, defaults=True)
    report = sanitize(matmul_leaky_relu, outputs=("y",))[2](*args)
    assert report.findings == []
    c = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(args[3], np.where(c >= 0, c, 0.1 * c), rtol=1e-5, atol=1e-5)


def test_a_wait_no_aic_sets_is_a_deadlock():
    @asc.jit(kernel_type=MIX)
    def kernel():
        if asc.ascend_is_aiv():
            asc.cross_core_wait_flag(3, 2, asc.PipeID.PIPE_V)  # <wait>

    with pytest.raises(asc.KernelError, match=r"deadlock: aiv\(0\), aiv\(1\) wait .* its AIC set flag 3 in mode 2"):
        kernel[1]()


def test_block_idx_and_ratio_per_core_kind():
    seen = {}

    @asc.jit(kernel_type=MIX)
    def kernel():
        kind = "aic" if asc.ascend_is_aic() else "aiv"
        seen.setdefault(kind, []).append((int(asc.get_block_idx()), int(asc.get_block_num()),
                                          int(asc.get_sub_block_idx()), int(asc.get_task_ratio())))

    kernel[2]()
    assert sorted(seen["aic"]) == [(0, 2, 0, 1), (1, 2, 0, 1)]
    assert sorted(seen["aiv"]) == [(0, 2, 0, 2), (1, 2, 1, 2), (2, 2, 0, 2), (3, 2, 1, 2)]


@asc.jit(kernel_type=MIX)
def flag_on(x: asc.GlobalAddress, work: asc.GlobalAddress, y: asc.GlobalAddress, pipe: asc.ConstExpr[object]):
    """The AIC writes the workspace with Fixpipe and sets the mode-2 flag on ``pipe``; the AIVs wait and read it."""
    if asc.ascend_is_aic():
        xg, wg = asc.GlobalTensor(), asc.GlobalTensor()
        xg.set_global_buffer(x)
        wg.set_global_buffer(work)
        a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
        a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
        b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
        c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        asc.data_copy(a1, xg, 256)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))
        asc.load_data(b2, a1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.mmad(c, a2, b2, asc.MmadParams(16, 16, 16, 0, False, True))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.fixpipe(wg, c, asc.FixpipeParamsV220(16, 16, 16, 16))
        asc.cross_core_set_flag(0, 2, pipe)
    if asc.ascend_is_aiv():
        wg, yg = asc.GlobalTensor(), asc.GlobalTensor()
        wg.set_global_buffer(work)
        yg.set_global_buffer(y + asc.get_block_idx() * 256)
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
        asc.cross_core_wait_flag(0, 2, asc.PipeID.PIPE_MTE2)
        asc.data_copy(t, wg, 256)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(yg, t, 256)


def test_a_flag_set_on_another_pipe_than_the_writer_orders_nothing():
    """CrossCoreSetFlag<2, pipe> runs once ``pipe``'s earlier instructions are done: set on PIPE_FIX after the
    Fixpipe it orders the workspace; set on PIPE_MTE2 it does not, and the AIVs' reads race with the Fixpipe."""
    args = (np.ones(256, np.float16), np.zeros(256, np.float32), np.zeros(512, np.float32))
    assert sanitize(flag_on, outputs=("y",))[1](*args, asc.PipeID.PIPE_FIX).findings == []
    racy = sanitize(flag_on, outputs=("y",))[1](*args, asc.PipeID.PIPE_MTE2)
    assert {(f.tool, f.buffer, f.pipes) for f in racy.findings} == {("racecheck", "work", ("FIX", "MTE2"))}
