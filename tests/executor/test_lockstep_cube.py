"""The lockstep executor on the cube unit and mix kernels: the same bytes, Trace and errors as the reference.

AIC_ONLY kernels run their AICs as groups one after another; a mix kernel's groups (its AICs, its AIVs) run together
under the reference's scheduler, a mode-2 cross-core wait handing the turn on. A mix run counts only where cross-core
flags order every pair of GM accesses of two cores to the same bytes (one a write): an AIV reading the workspace
with no wait for its AIC's flag sends the launch to the reference, as do flags in modes 0 and 1. Each case says
which executor must have run (``lockstep_harness.compare``), so that a silent fall back cannot make it pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc import launch
from fusekit.gen import catalogue as cat
from fusekit.pyasc.shim import config

from lockstep_harness import compare
from mix_kernels import MIX, matmul_leaky_relu, mix_args



def _rand(shape, dtype, seed):
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if dtype == "bfloat16":
        from ml_dtypes import bfloat16
        return values.astype(bfloat16)
    return values.astype(dtype)


# (op, dtype, arrays, attrs): AIC_ONLY with the columns split over AICs (small M), row tails, K tails, batches, and mix
# kernels whose AIV epilogue reads the AIC's bands (the odd and even AIVs split there)
CASES = [
    ("matmul_bias", "float16", lambda d: (_rand((40, 96), d, 1), _rand((96, 300), d, 2), _rand((300,), d, 3)), {}),
    ("matmul_bias", "float32", lambda d: (_rand((128, 72), d, 1), _rand((72, 160), d, 2), _rand((160,), d, 3)), {}),
    ("matmul_bias", "bfloat16", lambda d: (_rand((2, 48, 64), d, 1), _rand((64, 64), d, 2), _rand((64,), d, 3)), {}),
    ("matmul_bias_gelu", "float16", lambda d: (_rand((96, 64), d, 1), _rand((64, 160), d, 2), _rand((160,), d, 3)), {}),
    ("matmul_bias_gelu_erf", "float32", lambda d: (_rand((33, 40), d, 1), _rand((40, 48), d, 2), _rand((48,), d, 3)),
     {}),
    ("matmul_swiglu", "float16", lambda d: (_rand((64, 64), d, 1), _rand((64, 96), d, 2), _rand((64, 96), d, 3)), {}),
    ("attention_score", "float16", lambda d: (_rand((2, 64, 32), d, 1), _rand((2, 64, 32), d, 2),
                                               _rand((64, 64), d, 3)), {"scale": 0.125}),
]


@pytest.mark.parametrize("name, dtype, make, attrs", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_catalogue_cube_ops(name, dtype, make, attrs):
    op = cat.get(name)
    compare(lambda: list(make(dtype)), lambda *arrays: op.run(*arrays, **attrs), lockstep=True)


def test_per_channel_quant_matmul_in_fixpipe():
    x = np.random.default_rng(1).integers(-128, 128, (48, 64)).astype(np.int8)
    w = np.random.default_rng(2).integers(-128, 128, (96, 64)).astype(np.int8)
    scale = np.random.default_rng(3).uniform(1e-4, 2e-3, 96).astype(np.float32)
    op = cat.get("quant_matmul_dequant")
    compare(lambda: [x, w, scale], lambda *arrays: op.run(*arrays), lockstep=True)


def _mix(blocks: int, wait: bool):
    """(make inputs, launch) of mix_kernels.matmul_leaky_relu on ``blocks`` AI Cores, with or without the AIVs' wait."""
    return (lambda: list(mix_args(blocks, wait)[2]),
            lambda *args: launch(matmul_leaky_relu, blocks, tuple(args)))


def test_a_mix_kernel_whose_flags_order_the_workspace_runs_in_lockstep():
    got = compare(*_mix(3, wait=True), lockstep=True)
    assert got.trace.kinds == ("AIV",) * 6 + ("AIC",) * 3


def test_an_aiv_reading_the_workspace_without_a_wait_falls_back():
    # racy on the NPU: which of the AIC's Fixpipe and the AIV's DataCopy runs first decides y; the reference's order
    # is kept, and the reason names the bytes and the two cores
    got = compare(*_mix(2, wait=False), lockstep=False)
    assert "no cross-core flag between them" in got.trace.fallback and "aic(" in got.trace.fallback


def test_flags_in_mode_0_fall_back():
    # mode 0 synchronises every core of a kind: a wait of it is released by cores whose knowledge no group tracks
    @asc.jit(kernel_type=config.KernelType.AIV_ONLY)
    def all_aivs(x: asc.GlobalAddress):
        asc.cross_core_set_flag(1, 0, asc.PipeID.PIPE_MTE3)
        asc.cross_core_wait_flag(1, 0, asc.PipeID.PIPE_S)

    got = compare(lambda: [np.zeros(8, np.float32)], lambda x: launch(all_aivs, 4, (x,)), lockstep=False)
    assert got.trace.fallback == "cross-core flags in mode 0"


def test_the_overlap_search_finds_every_pair_with_a_write():
    # crossing._pairs against a brute-force search over random byte ranges
    from fusekit.asc.lockstep.crossing import _pairs

    rng = np.random.default_rng(7)
    for _ in range(50):
        rs = np.sort(rng.integers(0, 60, 30))
        re = rs + rng.integers(1, 12, 30)
        ws = np.sort(rng.integers(0, 60, 10))
        we = ws + rng.integers(1, 12, 10)
        w, r = _pairs(ws, we, rs, re)
        want = {(x, y) for x in range(10) for y in range(30) if ws[x] < re[y] and rs[y] < we[x]}
        assert sorted(zip(w.tolist(), r.tolist())) == sorted(want)


@asc.jit(kernel_type=MIX)
def _aivs_set_twice(x: asc.GlobalAddress):
    if asc.ascend_is_aiv():
        asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_MTE3)
        asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_MTE3)
    if asc.ascend_is_aic():
        asc.cross_core_wait_flag(1, 2, asc.PipeID.PIPE_MTE2)
        asc.cross_core_wait_flag(1, 2, asc.PipeID.PIPE_MTE2)


def test_an_aic_wait_takes_the_kth_set_of_each_of_its_aivs():
    # the AIVs' sets interleave in lockstep and come one AIV after the other on the reference; either way the AIC's
    # k-th wait is released by the k-th set of each of its AIVs (CrossCoreSetFlag(ISASI).md: the AIC's wait needs
    # the sets of all its AIVs), so both Traces name the same sets
    got = compare(lambda: [np.zeros(8, np.float32)], lambda x: launch(_aivs_set_twice, 2, (x,)), lockstep=True)
    waits = [i.sync.event[2] for i in got.trace.cores[4] if i.op == "cross_core_wait_flag"]
    assert waits == [((0, 1), (1, 1)), ((0, 2), (1, 2))]  # aic(0)'s AIVs are aiv(0) and aiv(1); set k at instr k
