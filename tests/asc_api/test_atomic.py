"""Store atomics (asc.set_atomic_add / max / min / type / none): GM accumulation across cores.

Expected values come from a numpy model written here: SetAtomicAdd.md ("将待拷贝的内容和GM已有内容进行
求和，然后将求和结果写入GM", GM is not cleared first), SetAtomicMax(ISASI).md / SetAtomicMin(ISASI).md
(the larger / smaller value is written). Inputs are small integers held exactly in every dtype, so
the documented result is the same in any core order (checked with reverse_cores=True).
"""

from __future__ import annotations

import numpy as np
import pytest

import fusekit
from fusekit import asc


@asc.jit
def accumulate(x: asc.GlobalAddress, y: asc.GlobalAddress, N: asc.ConstExpr[int], SET: asc.ConstExpr,
               DTYPE: asc.ConstExpr, PAD: asc.ConstExpr[bool]):
    """Each core loads its row of x and stores it into y (all cores the same N elements) under SET."""
    i = asc.get_block_idx()
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + i * N, N)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=N * DTYPE.sizeof())
    t = buf.get(DTYPE)
    asc.data_copy(t, xg, N)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    SET(DTYPE)
    if PAD:
        asc.data_copy_pad(yg, t, asc.DataCopyExtParams(1, N * DTYPE.sizeof(), 0, 0, 0))
    else:
        asc.data_copy(yg, t, N)
    asc.set_atomic_none()


def _model(op, y0, rows):
    if op is asc.set_atomic_add:
        return (y0.astype(np.float64) + rows.astype(np.float64).sum(0)).astype(y0.dtype)
    return (np.maximum if op is asc.set_atomic_max else np.minimum).reduce(np.vstack([y0[None], rows]), axis=0)


def _run(op, dtype, cores, n=64, reverse=False, pad=False, soc=None, seed=0, model_op=None):
    rng = np.random.default_rng(seed + cores)
    rows = rng.integers(-20, 20, (cores, n)).astype(dtype)
    y = rng.integers(-5, 5, n).astype(dtype)
    want = _model(model_op or op, y.copy(), rows)
    asc.launch(accumulate, cores, (rows, y, n, op, _asc(dtype), pad),
               reverse_cores=reverse, soc=soc)
    return y, want


def _asc(dtype):
    return {np.float32: asc.float32, np.float16: asc.float16, np.int32: asc.int32, np.int16: asc.int16,
            np.int8: asc.int8}[dtype]


@pytest.mark.parametrize("op", [asc.set_atomic_add, asc.set_atomic_max, asc.set_atomic_min])
@pytest.mark.parametrize("cores", [1, 7, 48])
@pytest.mark.parametrize("reverse", [False, True])
def test_cores_accumulate_the_documented_result_in_any_order(op, cores, reverse):
    y, want = _run(op, np.float32, cores, reverse=reverse)
    assert np.array_equal(y, want)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int16, np.int8])
@pytest.mark.parametrize("op", [asc.set_atomic_add, asc.set_atomic_max, asc.set_atomic_min])
def test_every_a2_dtype(op, dtype):
    y, want = _run(op, dtype, 7, n=128)
    assert np.array_equal(y, want)


def test_data_copy_pad_stores_accumulate_too():
    y, want = _run(asc.set_atomic_add, np.float32, 7, n=40, pad=True)
    assert np.array_equal(y, want)


def test_float16_sum_is_rounded_once_per_store():
    # 2048 + 1 is a tie in float16 (ulp 2 there): rounded to even, 2048; the next + 1 also gives 2048
    rows = np.ones((2, 16), np.float16)
    y = np.full(16, 2048, np.float16)
    asc.launch(accumulate, 2, (rows, y, 16, asc.set_atomic_add, asc.float16, False))
    assert np.all(y == 2048)


def test_310p_has_no_atomic_max_and_no_int32_add():
    with pytest.raises(asc.KernelError, match=r"set_atomic_max does not exist on Ascend310P3"):
        _run(asc.set_atomic_max, np.float16, 1, soc="Ascend310P3")
    with pytest.raises(asc.KernelError, match=r"set_atomic_add does not take int32 on Ascend310P3.*float16, float32, "
                                              r"int16"):
        _run(asc.set_atomic_add, np.int32, 1, soc="Ascend310P3")
    y, want = _run(asc.set_atomic_add, np.float16, 3, soc="Ascend310P3")
    assert np.array_equal(y, want)


def test_atomic_dtype_must_match_the_stored_tensor():
    @asc.jit
    def wrong(x: asc.GlobalAddress, y: asc.GlobalAddress):
        xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
        xg.set_global_buffer(x, 16)
        yg.set_global_buffer(y, 16)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=64)
        t = buf.get(asc.float32)
        asc.data_copy(t, xg, 16)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.set_atomic_add(asc.int32)
        asc.data_copy(yg, t, 16)

    with pytest.raises(asc.KernelError, match=r"atomic add is set for int32 but .* is float32"):
        wrong[1](np.zeros(16, np.float32), np.zeros(16, np.float32))


def test_set_atomic_type_then_add_without_dtype():
    @asc.jit
    def typed(x: asc.GlobalAddress, y: asc.GlobalAddress):
        xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
        xg.set_global_buffer(x + asc.get_block_idx() * 16, 16)
        yg.set_global_buffer(y, 16)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=64)
        t = buf.get(asc.float32)
        asc.data_copy(t, xg, 16)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.set_atomic_type(asc.float32)
        asc.set_atomic_add()
        asc.data_copy(yg, t, 16)
        asc.set_atomic_none()
        asc.data_copy(yg, t, 16)  # atomics off again: a plain overwrite

    x = np.arange(32, dtype=np.float32).reshape(2, 16)
    y = np.zeros(16, np.float32)
    typed[1](x[:1].copy(), y)
    assert np.array_equal(y, x[0])  # 0 + x0, then overwritten with x0


def test_sanitizer_does_not_call_atomic_adds_a_race_but_does_plain_stores():
    rows = np.ones((7, 64), np.float32)
    report = fusekit.sanitize(accumulate)[7](rows, np.zeros(64, np.float32), 64, asc.set_atomic_add, asc.float32,
                                                False)
    assert report.ok, report.to_text()

    def plain(dtype):  # no atomics: set_atomic_type only sets the dtype (SetAtomicType.md)
        asc.set_atomic_type(dtype)

    report = fusekit.sanitize(accumulate)[7](rows, np.zeros(64, np.float32), 64, plain, asc.float32, False)
    assert any(f.tool == "racecheck" and f.kind == "WAW" for f in report.findings), report.to_text()


def test_trace_marks_atomic_writes():
    rows = np.ones((2, 64), np.float32)
    trace = asc.launch(accumulate, 2, (rows, np.zeros(64, np.float32), 64, asc.set_atomic_max, asc.float32,
                                       False)).trace
    stores = [i for i in trace if i.op == "data_copy" and i.writes[0].mem is asc.Mem.GM]
    assert [w.atomic for i in stores for w in i.writes] == ["max.float32", "max.float32"]


def test_store_atomic_config_turns_atomic_add_on_and_reads_back():
    def config(dtype):
        asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_F32, asc.AtomicOp.ATOMIC_SUM)

    y, want = _run(config, np.float32, 7, model_op=asc.set_atomic_add)
    assert np.array_equal(y, want)

    seen = []

    @asc.jit
    def k(x: asc.GlobalAddress):
        seen.append(asc.get_store_atomic_config())
        asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_F16, asc.AtomicOp.ATOMIC_SUM)
        seen.append(asc.get_store_atomic_config())
        asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_NONE, asc.AtomicOp.ATOMIC_SUM)
        seen.append(asc.get_store_atomic_config())

    k[1](np.zeros(8, np.float32))
    assert seen == [(0, 0), (2, 0), (0, 0)]  # GetStoreAtomicConfig(ISASI).md: 2 = half
