"""AIC kernels as a whole: the kernel types that run on the AIC, the core's label, what the timing model and the
sanitizer make of a cube kernel, and the launches fusekit refuses with the reason."""

from __future__ import annotations

import numpy as np
import pytest

import fusekit
from fusekit import asc, timing
from fusekit.asc.cube.mmad import cube_cycles
from fusekit.pyasc.shim import config
from fusekit.sanitizer import sanitize

from cube_kernels import AIC, matmul, run_matmul


def _args(m=32, n=48, k=64):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    return (a, np.ascontiguousarray(b.T), np.zeros((m, n), np.float32), np.zeros(n, np.float32), m, n, k, 64, 0, 0,
            False, False, True)


def test_aic_kernels_run_on_aic_cores():
    _, result = run_matmul(np.ones((16, 16), np.float16), np.ones((16, 16), np.float16), np.float32)
    assert result.trace.core_kind == "AIC" and result.trace.core_label(0) == "aic(0)"
    assert {i.pipe.name for i in result.trace.cores[0]} == {"MTE2", "MTE1", "M", "FIX"}


def test_matmul_cube_only_is_an_aic_kernel_too():
    @asc.jit(matmul_cube_only=True)
    def kernel():
        assert asc.ascend_is_aic() and not asc.ascend_is_aiv()
        asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 16)

    assert kernel[2]().trace.core_kind == "AIC"


def test_an_aic_kernel_has_no_ub():
    @asc.jit(kernel_type=AIC)
    def kernel():
        asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 16)

    with pytest.raises(asc.KernelError, match=r"on aic\(0\).*TPosition.VECIN is the AIV's UB, which an AIC core does "
                                              r"not have"):
        kernel[1]()


@pytest.mark.parametrize("options, soc, message", [
    (dict(kernel_type=config.KernelType.MIX_AIV_HARD_SYNC), None, "the HARD_SYNC mix types are not simulated"),
    (dict(kernel_type=AIC), "Ascend310P3", "arch 2002 couples the cube unit with the vector unit"),
])
def test_refused_launches_say_why(options, soc, message):
    @asc.jit(**options)
    def kernel():
        pass

    with pytest.raises(asc.KernelError, match=message):
        kernel[1](soc=soc)


def test_the_profile_has_the_aic_columns_and_the_documented_mmad_cycles():
    """msprof's aic_* columns (AD matmul_high_performance/README.md); a Mmad costs dt + ceil(m/16) ceil(n/16)
    ceil(k/16) cycles for half (Cube指令理论性能汇总.md), here 6 + 2 * 3 * 4."""
    prof = fusekit.profile(matmul)[1](*_args())
    row = prof.utilization()[0]
    assert {"aic_time(us)", "aic_mac_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio",
            "aic_scalar_ratio"} <= set(row)
    params = timing.load()
    assert cube_cycles(32, 48, 64, 2) == 24 and cube_cycles(32, 48, 64, 4) == 2 * 3 * 8 * 2
    sched = prof.launches[0].cores[0]
    (mmad,) = [b for i, b in zip(sched.instrs, sched.busy) if i.op == "mmad"]
    assert mmad == pytest.approx(params.cycles_us(params.mmad_head_cycles + 24))
    syncs = sum(b for i, b in zip(sched.instrs, sched.busy) if i.pipe.name == "M" and i.sync is not None)
    assert row["aic_mac_time(us)"] == pytest.approx(mmad + syncs, abs=1e-4)  # the pipe's flags count as on the AIV
    assert "aic_time(us)" in prof.table().splitlines()[1]


def test_mte1_time_follows_the_documented_bandwidths():
    """L1 -> L0A at 256 B/cycle, L1 -> L0B at 128 B/cycle (Cube指令理论性能汇总.md): A 32 x 64 half in two loads of
    2 KiB, B 48 x 64 (6 KiB) in one."""
    sched = fusekit.profile(matmul)[1](*_args()).launches[0].cores[0]
    params = timing.load()
    loads = [b for i, b in zip(sched.instrs, sched.busy) if i.op == "load_data"]
    assert loads == pytest.approx([params.cycles_us(params.mte1_head_cycles + 2048 / 256)] * 2  # A: one per m1
                                  + [params.cycles_us(params.mte1_head_cycles + 6144 / 128)])


def test_reading_l0c_before_any_mmad_is_an_initcheck_finding():
    @asc.jit(kernel_type=AIC)
    def kernel(y: asc.GlobalAddress):
        yg = asc.GlobalTensor()
        yg.set_global_buffer(y)
        c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        asc.fixpipe(yg, c, asc.FixpipeParamsV220(16, 16, 16, 16))

    report = sanitize(kernel)[1](np.zeros(256, np.float32))
    assert [(f.tool, f.kind, f.mem) for f in report.findings] == [("initcheck", "uninitialized read", "L0C")]


def test_a_clean_matmul_has_no_findings_even_under_replay():
    assert sanitize(matmul, replay=True)[1](*_args()).findings == []
