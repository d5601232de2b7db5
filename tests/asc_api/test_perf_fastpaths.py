"""The simulator core's fast paths give what the general paths give (issue 12, Performance).

- ``sequential_sum`` of one row (numpy scalar adds) against an independent model: each step the
  exact float64 sum of two float16 values (exact: 11-bit significands, exponents 2^-24..2^15 fit
  in 53 bits), rounded once to float16; and against the general (2-D) path.
- ReduceSum's count form (dense walk: one byte range, reshaped lanes) against a model written here:
  a pairwise tree inside each 128-lane repeat, then the repeat sums in order (ReduceSum.md
  关键特性说明, 方式一), every partial sum rounded to float16.
- ``Access`` / ``Sync`` (hand-written ``__init__``): still frozen dataclasses with value equality.
- A launch pauses the garbage collector and turns it back on, also when the kernel fails.
"""

import dataclasses
import gc

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.basic.reduction import sequential_sum
from fusekit.asc.trace import Access, Mem, Pipe, Sync, SyncKind


def _model_sequential(values: np.ndarray) -> np.float16:
    acc = float(values[0])
    for v in values[1:]:
        acc = float(np.float16(acc + float(v)))  # exact float64 sum, one rounding
    return np.float16(acc)


@pytest.mark.parametrize("seed", range(6))
def test_sequential_sum_of_one_row_matches_the_model(seed):
    rng = np.random.default_rng(seed)
    sums = (rng.standard_normal(33) * 10.0 ** rng.integers(-6, 5, 33)).astype(np.float16)
    if seed % 2:
        sums[rng.integers(0, 33, 2)] = [np.float16(65504), np.float16(-np.inf)]
    fast = sequential_sum(sums, "inf_nan")
    general = sequential_sum(sums[None, :], "inf_nan")[0]
    want = _model_sequential(sums)
    assert np.float16(fast).tobytes() == want.tobytes() == np.float16(general).tobytes()


def _model_reduce_sum(x: np.ndarray, count: int) -> np.float16:
    sums = []
    for r in range(-(-count // 128)):
        lanes = [float(v) for v in x[r * 128:min((r + 1) * 128, count)]] + [-0.0] * (128 - min(128, count - r * 128))
        while len(lanes) > 1:
            lanes = [float(np.float16(a + b)) for a, b in zip(lanes[0::2], lanes[1::2])]
        sums.append(lanes[0])
    return _model_sequential(np.array(sums, np.float16))


@asc.jit
def _reduce(x: asc.GlobalAddress, y: asc.GlobalAddress, count: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 1024)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 16)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q_in, num=1, len=1024 * 2)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_out, num=1, len=32)
    tmp = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=tmp, num=1024 * 2)
    a = q_in.alloc_tensor(x.dtype)
    asc.data_copy(a, xg, 1024)
    q_in.enque(a)
    a = q_in.deque(x.dtype)
    b = q_out.alloc_tensor(x.dtype)
    asc.duplicate(b, 0.0, 16)
    asc.reduce_sum(b, a, tmp.get(x.dtype), count)
    q_in.free_tensor(a)
    q_out.enque(b)
    b = q_out.deque(x.dtype)
    asc.data_copy(yg, b, 16)
    q_out.free_tensor(b)


@pytest.mark.parametrize("count", [1024, 640, 1000, 77])
def test_reduce_sum_count_form_matches_the_model(count):
    x = (np.random.default_rng(count).standard_normal(1024) * 30).astype(np.float16)
    y = np.zeros(16, np.float16)
    result = _reduce[1](x, y, count)
    assert y[0].tobytes() == _model_reduce_sum(x, count).tobytes()
    reduce = [i for i in result.trace.cores[0] if i.op == "reduce_sum"][0]
    last = -(-count // 128) * 128 if count % 128 == 0 else None
    if last is not None:  # whole repeats: one contiguous read of the repeats' bytes
        assert [(r.stop - r.start) for r in reduce.reads] == [last * 2]


def test_access_and_sync_stay_frozen_value_objects():
    a = Access(Mem.UB, "UB", 0, 64, "x")
    assert a == Access(mem=Mem.UB, buffer="UB", start=0, stop=64, tensor="x")
    assert hash(a) == hash(Access(Mem.UB, "UB", 0, 64, "x"))
    assert (a.atomic, a.l2, a.nbytes) == ("", "", 64)
    assert dataclasses.replace(a, atomic="add.float32").atomic == "add.float32"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.start = 1
    s = Sync(SyncKind.SET, Pipe.V, Pipe.MTE3, ("flag", "V_MTE3", 0))
    assert s == Sync(SyncKind.SET, Pipe.V, Pipe.MTE3, ("flag", "V_MTE3", 0))
    assert Sync(SyncKind.ALL, Pipe.S, Pipe.S).event == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.event = ()


@asc.jit
def _fails(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 16)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=32)
    a = q.alloc_tensor(x.dtype)
    asc.data_copy(a, xg, 32)  # past the 16-element view: KernelError


def test_a_launch_turns_the_collector_back_on():
    assert gc.isenabled()
    _reduce[1](np.zeros(1024, np.float16), np.zeros(16, np.float16), 1024)
    assert gc.isenabled()
    with pytest.raises(asc.KernelError):
        _fails[1](np.zeros(16, np.float16))
    assert gc.isenabled()
    gc.disable()
    try:  # a caller that switched it off keeps it off
        _reduce[1](np.zeros(1024, np.float16), np.zeros(16, np.float16), 1024)
        assert not gc.isenabled()
    finally:
        gc.enable()
