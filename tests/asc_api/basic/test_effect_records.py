"""An instruction's effect is a record that one interpreter applies (issue 19, item 3): the Effect that a vector
instruction or a data copy hands ``Core.record`` is inspectable data (its Spec, destination and source lanes,
scalars, rounding, overflow mode), and ``fusekit.asc.effect.apply`` reproduces the documented semantics.

Sources: ``docs/design.md``, "Check, then record, then effect"; AD-API SIMD计算说明/掩码.md ("mask为0时，目的操作数
保持原值") and 高维切分.md (a repeat's lanes, the block and repeat strides: the layout model of
``tests/vector_harness.py``); 通用说明和约束.md, 通用地址重叠约束 (Add's src1 may be an earlier repeat's dst with a
repeat stride of 0); ``docs/ascendc-model.md``, "Overflow modes" (saturation: +-inf -> +-max, NaN -> 0);
类型转换/Cast.md (CAST_FLOOR toward -inf; "溢出默认按照饱和模式处理"); DataCopy（GM与UB高维切分数据搬运）.md 表3
(block b starts b * (blockLen + gap) blocks in); 原子操作/SetAtomicAdd.md (the stored values are added to GM's).
Expected values are computed here with numpy from those rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.basic.rounding import RoundMode
from fusekit.asc.basic.spec import REGISTRY
from fusekit.asc.effect import Effect, apply, copy, run

from support import gm_view, ub_buf
from vector_harness import lane_mask, split_elements

F16, F32 = np.float16, np.float32


class Recorder:
    """An executor that keeps every instruction's effect; with ``hold`` it lands them only when the core ends."""

    def __init__(self, hold: bool = False):
        self.records: list = []  # (Instr, effect)
        self.hold = hold

    def run(self, instr, effect) -> None:
        self.records.append((instr, effect))
        if not self.hold:
            run(effect)

    def end_core(self, core: int) -> None:
        if self.hold:
            for _, effect in self.records:
                run(effect)

    def effect_of(self, op: str):
        found = [(i, e) for i, e in self.records if i.op == op]
        assert len(found) == 1, [i.op for i, _ in self.records]
        return found[0]


@asc.jit
def _kernel(x: asc.GlobalAddress, d: asc.GlobalAddress, BODY: asc.ConstExpr, N: asc.ConstExpr, M: asc.ConstExpr):
    """x (N elements) and d (M elements) into UB, BODY(d, x) between barriers, d back to GM."""
    pipe = asc.TPipe()
    xg, dg = gm_view(x, N), gm_view(d, M)
    xt, dt = ub_buf(pipe, x.dtype, N), ub_buf(pipe, d.dtype, M)
    asc.data_copy(xt, xg, N)
    asc.data_copy(dt, dg, M)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    BODY(dt, xt)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(dg, dt, M)


def _launch(body, x: np.ndarray, d: np.ndarray, executor=None, **options) -> np.ndarray:
    out = d.copy()
    asc.launch(_kernel, 1, (x, out, body, x.size, d.size), executor=executor, **options)
    return out


# A split-form Adds over 2 repeats of 128 half lanes with a bit mask, the source read with block stride 2.
_MASK = [0x5555_0000_FFFF_000F, 0x8000_0000_0000_0001]
_ADDS = lambda d, x: asc.adds(d, x, 0.1, _MASK, 2, asc.UnaryRepeatParams(1, 2, 8, 16))  # noqa: E731


def _adds_model(x: np.ndarray, d0: np.ndarray, scalar: float) -> tuple[list[int], list[int], np.ndarray]:
    """(dst lanes, src lanes, dst after) of _ADDS from the layout and mask rules: an active lane gets the exact
    sum of two halves rounded once to half, every other element keeps its value."""
    active = lane_mask(_MASK, 128)
    d_lanes = sum(split_elements(2, 128, 2, 1, 8, active), [])
    s_lanes = sum(split_elements(2, 128, 2, 2, 16, active), [])
    out = d0.copy()
    for di, si in zip(d_lanes, s_lanes):
        out[di] = F16(float(x[si]) + float(F16(scalar)))
    return d_lanes, s_lanes, out


def test_a_vector_instruction_hands_the_record_an_inspectable_effect():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(512).astype(F16)
    d0 = np.full(256, -7, F16)
    rec = Recorder()
    out = _launch(_ADDS, x, d0, rec)
    instr, effect = rec.effect_of("adds")
    d_lanes, s_lanes, want = _adds_model(x, d0, 0.1)
    assert isinstance(effect, Effect)
    assert effect.spec is REGISTRY["adds"] and effect.spec.cpp == "Adds"
    assert list(effect.srcs) == ["src"]
    assert effect.dst.index.tolist() == d_lanes
    assert effect.srcs["src"].index.tolist() == s_lanes
    assert effect.scalars == (F16(0.1),) and effect.scalars[0].dtype == np.float16  # converted to the dtype
    assert (effect.reads_dst, effect.sequential, effect.rounding, effect.mode) == (False, (), None, "inf_nan")
    assert effect.dst.tensor.dtype is asc.float16 and effect.srcs["src"].tensor.dtype is asc.float16
    # the Effect writes exactly the bytes the Trace record says it writes
    lane_bytes = {effect.dst.tensor.addr + 2 * i + b for i in d_lanes for b in (0, 1)}
    assert lane_bytes == {a for w in instr.writes for a in range(w.start, w.stop)}
    np.testing.assert_array_equal(out, want)


def test_masked_lanes_keep_their_values_under_the_interpreter():
    """掩码.md: lanes whose mask bit is 0 keep the destination's old values (here inf and NaN, untouched by the
    overflow mode too), whether the effect lands at once or is held to the end of the core."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(512).astype(F16)
    d0 = np.tile(np.array([np.inf, np.nan, -3, 65504], F16), 64)
    d_lanes, _, want = _adds_model(x, d0, 0.1)
    inactive = sorted(set(range(256)) - set(d_lanes))
    for options in ({}, {"overflow": "saturation"}):
        now = _launch(_ADDS, x, d0, **options)
        held = _launch(_ADDS, x, d0, Recorder(hold=True), **options)
        np.testing.assert_array_equal(now, want)
        np.testing.assert_array_equal(held, want)
        assert {4, 5} <= set(inactive) and np.isinf(now[4]) and np.isnan(now[5])  # mask bits 4, 5 are 0


@pytest.mark.parametrize("mode", ["inf_nan", "saturation"])
def test_the_effect_applies_the_overflow_mode(mode):
    """``docs/ascendc-model.md``, "Overflow modes": an overflowing half sum (65504 + 64 > 65520 rounds to inf) or an
    infinite one is +-inf (INF/NaN mode) or +-65504 (saturation); a NaN result is NaN or 0."""
    x = np.array([65504, -np.inf, np.nan, 1] * 4, F16)
    rec = Recorder()
    out = _launch(lambda d, s: asc.adds(d, s, 64.0, 16), x, np.zeros(16, F16), rec, overflow=mode)
    _, effect = rec.effect_of("adds")
    assert effect.mode == mode and effect.dst.index == 16 and effect.srcs["src"].index == 16  # the count form
    big = 65504.0 if mode == "saturation" else np.inf
    nan = 0.0 if mode == "saturation" else np.nan
    np.testing.assert_array_equal(out, np.array([big, -big, nan, 65.0] * 4, F16))


def test_a_cast_effect_names_its_round_mode():
    """Cast.md: CAST_FLOOR rounds toward -inf and an integer destination saturates."""
    x = np.array([-1.5, 2.5, 200.0, -300.0, 0.75, -0.25, 127.9, -128.5] * 4, F16)
    rec = Recorder()
    out = _launch(lambda d, s: asc.cast(d, s, asc.RoundMode.CAST_FLOOR, 32), x, np.zeros(32, np.int8), rec)
    _, effect = rec.effect_of("cast")
    assert effect.spec is REGISTRY["cast"] and effect.rounding is RoundMode.CAST_FLOOR and effect.compute is copy
    want = np.clip(np.floor(x.astype(np.float64)), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(out, want)


def test_repeats_that_read_an_earlier_repeat_run_in_order():
    """通用地址重叠约束: Add's src1 may be the destination of an earlier repeat when its repeat stride is 0, so
    dst accumulates src0's repeats one after another, each sum rounded to float."""
    x = np.random.default_rng(3).standard_normal(192).astype(F32)
    d0 = np.random.default_rng(4).standard_normal(64).astype(F32)
    rec = Recorder()
    out = _launch(lambda d, s: asc.add(d, s, d, 64, 3, asc.BinaryRepeatParams(1, 1, 1, 0, 8, 0)), x, d0, rec)
    _, effect = rec.effect_of("add")
    assert effect.sequential == (64, 64, 64) and list(effect.srcs) == ["src0", "src1"]
    want = d0.copy()
    for r in range(3):
        want = (x[64 * r:64 * (r + 1)].astype(np.float64) + want.astype(np.float64)).astype(F32)
    np.testing.assert_array_equal(out, want)


@asc.jit
def _copies(x: asc.GlobalAddress, y: asc.GlobalAddress, ATOMIC: asc.ConstExpr):
    """x[0:16] and x[32:48] into UB as two blocks of DataCopyParams (gap 1 block), then the 32 halves to y, under
    set_atomic_add when ATOMIC."""
    pipe = asc.TPipe()
    xg, yg = gm_view(x), gm_view(y)
    t = ub_buf(pipe, x.dtype, 32)
    asc.data_copy(t, xg, asc.DataCopyParams(2, 1, 1, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if ATOMIC:
        asc.set_atomic_add(asc.float16)
    asc.data_copy(yg, t, 32)
    if ATOMIC:
        asc.set_atomic_none()


@pytest.mark.parametrize("atomic", [False, True])
def test_data_copies_are_effect_records(atomic):
    """A DataCopy moves each source lane's bits to its destination lane (DataCopy（GM与UB高维切分数据搬运）.md 表3 for
    the blocks); under SetAtomicAdd the stored lanes are added to what GM holds."""
    x = np.arange(64).astype(F16)
    y0 = np.full(32, 0.5, F16)
    y = y0.copy()
    rec = Recorder()
    asc.launch(_copies, 1, (x, y, atomic), executor=rec)
    (_, load), (_, store) = [(i, e) for i, e in rec.records if i.op == "data_copy"]
    assert isinstance(load, Effect) and load.spec is None and load.compute is copy
    assert isinstance(load.srcs["src"].tensor, asc.GlobalTensor) and isinstance(load.dst.tensor, asc.LocalTensor)
    assert load.dst.index.tolist() == list(range(32))
    assert load.srcs["src"].index.tolist() == list(range(16)) + list(range(32, 48))  # block 1 starts 2 blocks in
    assert store.dst.index == 32 and store.reads_dst is atomic and (store.compute is copy) is not atomic
    moved = np.concatenate([x[:16], x[32:48]])
    np.testing.assert_array_equal(y, (moved.astype(np.float64) + y0).astype(F16) if atomic else moved)


def test_apply_is_the_interpreter_core_record_runs():
    """The Effect a launch recorded, applied again by hand, writes the same lanes the same way."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(512).astype(F16)
    rec = Recorder()
    out = _launch(_ADDS, x, np.zeros(256, F16), rec)
    _, effect = rec.effect_of("adds")
    view = np.zeros(256, F16)

    class Lanes:
        """A stand-in tensor over a numpy array (what the interpreter reads: array, length, dtype)."""

        def __init__(self, values, dtype):
            self.values, self.length, self.dtype = values, values.size, dtype

        def array(self, count):
            return self.values[:count]

    again = Effect(effect.spec, effect.dst._replace(tensor=Lanes(view, asc.float16)),
                   {"src": effect.srcs["src"]._replace(tensor=Lanes(x.copy(), asc.float16))}, effect.compute,
                   effect.scalars, effect.reads_dst, effect.sequential, effect.rounding, effect.mode)
    apply(again)
    np.testing.assert_array_equal(view, out)
