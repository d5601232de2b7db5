"""The hardware and API rules fusekit.asc enforces, one tiny kernel per rule.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range).

Error locations are checked against marker comments (``# <name>``) on kernel source lines.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import re
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Access, Mem, Pipe, Sync, SyncKind

RM = asc.RoundMode
THIS_FILE = __file__
UB_910B1, UB_310P3 = 196608, 262144


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def line_of(kernel, marker: str) -> int:
    """Source line number of the single kernel line carrying ``# <marker>``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [first + i for i, text in enumerate(lines) if f"# <{marker}>" in text]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]


@contextlib.contextmanager
def raises_at(kernel, marker: str, match: str, *, core: int = 0):
    """Expect a KernelError matching ``match``, raised on ``core`` at the kernel line marked ``# <marker>``."""
    with pytest.raises(asc.KernelError, match=match) as info:
        yield info
    err, line = info.value, line_of(kernel, marker)
    assert (err.core, err.file, err.line) == (core, THIS_FILE, line), str(err)
    assert f" on aiv({core}) at {THIS_FILE}:{line}: " in str(err)


def bits(a: np.ndarray) -> np.ndarray:
    """Raw bit patterns, so that comparisons are bit-exact (NaN, -0.0)."""
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(bits(actual), bits(expected))


def assert_poisoned(a: np.ndarray) -> None:
    """Never-written UB reads back as all-ones bytes, which is NaN in every float dtype."""
    assert a.size and np.all(np.ascontiguousarray(a).view(np.uint8) == 0xFF), a
    assert np.all(np.isnan(a.astype(np.float32)))


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


@asc.jit
def gm_view(addr: asc.GlobalAddress, size: int):
    """GlobalTensor over ``size`` elements from ``addr``."""
    t = asc.GlobalTensor()
    t.set_global_buffer(addr, size)
    return t


@asc.jit
def ub_buf(pipe: asc.TPipe, dtype, n: int):
    """A TBuf of ``n`` elements of ``dtype`` as a LocalTensor."""
    ub = asc.TBuf(asc.TPosition.VECCALC)  # messages and the trace call it "ub"
    pipe.init_buffer(buf=ub, num=n * dtype.sizeof())
    return ub.get(dtype)


# ---------------------------------------------------------------------------------------------
# GM: every access stays inside the GlobalTensor view and the GM buffer
# ---------------------------------------------------------------------------------------------

@asc.jit
def gm_access_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, per_core: int, extra: int,
                     VIEW: asc.ConstExpr[int], MODE: asc.ConstExpr[str]):
    idx = asc.get_block_idx()
    start = idx * per_core
    n = per_core + (extra if idx == 1 else 0)  # only aiv(1) oversteps
    xg = gm_view(x + start, VIEW)
    yg = gm_view(y + start, VIEW)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float16, 128)
    if MODE == "copy_in":
        asc.data_copy(t, xg, n)  # <copy_in>
        asc.data_copy(yg, t, per_core)
    if MODE == "copy_out":
        asc.data_copy(t, xg, per_core)
        asc.data_copy(yg, t, n)  # <copy_out>
    params = asc.DataCopyExtParams(1, n * 2, 0, 0, 0)
    if MODE == "pad_in":
        asc.data_copy_pad(t, xg, params, asc.DataCopyPadExtParams(asc.float16, False, 0, 0, 0))  # <pad_in>
    if MODE == "pad_out":
        asc.data_copy_pad(yg, t, params)  # <pad_out>
    if MODE == "get":
        yg.set_value(0, xg.get_value(n - 1))  # <get>
    if MODE == "set":
        yg.set_value(n - 1, 1.0)  # <set>


# mode, API call, extra elements on aiv(1), tensor, element range [lo, hi) aiv(1) asks for (its view starts at 32)
GM_CASES = [
    ("copy_in", "data_copy", 16, "x", 32, 80), ("copy_out", "data_copy", 16, "y", 32, 80),
    ("pad_in", "data_copy_pad", 5, "x", 32, 69), ("pad_out", "data_copy_pad", 5, "y", 32, 69),
    ("get", "get_value", 1, "x", 64, 65), ("set", "set_value", 1, "y", 64, 65),
]


@pytest.mark.parametrize("mode, op, extra, tensor, lo, hi", GM_CASES, ids=[c[0] for c in GM_CASES])
@pytest.mark.parametrize("view, what", [(32, "outside its GlobalTensor view [32, 64)"),
                                         (64, "outside the GM buffer {tensor} of 64 elements")], ids=["view", "buffer"])
def test_gm_access_outside_view_or_buffer_names_core_tensor_range_and_line(mode, op, extra, tensor, lo, hi, view, what):
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    expected = f"accesses {tensor} elements [{lo}, {hi}) " + what.format(tensor=tensor)
    with raises_at(gm_access_kernel, mode, f"^{op} on aiv\\(1\\) at .*: " + re.escape(expected), core=1) as info:
        gm_access_kernel[2](x, y, 32, extra, view, mode)
    assert (info.value.tensor, info.value.start, info.value.stop) == (tensor, lo, hi)
    assert not y.any(), "a failed launch must not copy results back"


@pytest.mark.parametrize("mode", [c[0] for c in GM_CASES])
def test_gm_access_inside_view_works(mode):
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    gm_access_kernel[2](x, y, 32, 0, 32, mode)   # each core: its own 32 elements, nothing more
    expected = np.zeros(64, np.float16)
    if mode in ("copy_in", "copy_out"):
        expected = x
    if mode == "get":                               # y[start] = x[start + 31]
        expected[0], expected[32] = x[31], x[63]
    if mode == "set":                               # y[start + 31] = 1
        expected[31] = expected[63] = 1
    if mode == "pad_out":                           # the never-written UB tile, copied out
        assert_poisoned(y)
    else:
        assert_bits_equal(y, expected)


def test_gm_get_value_negative_index_is_outside_the_view():
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    with raises_at(gm_access_kernel, "get", r"get_value.*outside its GlobalTensor view \[0, 32\)", core=0) as info:
        gm_access_kernel[2](x, y, 0, 0, 32, "get")  # n - 1 = -1 on aiv(0)
    assert (info.value.tensor, info.value.start, info.value.stop) == ("x", -1, 0)


# ---------------------------------------------------------------------------------------------
# UB: layout, capacity, buffer counts, one TPipe, poisoned fresh memory
# ---------------------------------------------------------------------------------------------

@asc.jit
def layout_kernel(LEN1: asc.ConstExpr[int], NUM1: asc.ConstExpr[int], LEN2: asc.ConstExpr[int], out: asc.ConstExpr[list]):  # a host list the test reads back
    pipe = asc.TPipe()
    q1 = asc.TQue(asc.TPosition.VECIN, 1)
    q2 = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=q1, num=NUM1, len=LEN1)
    pipe.init_buffer(que=q2, num=2, len=LEN2)
    a = q2.alloc_tensor(asc.float16)
    b = q2.alloc_tensor(asc.float16)
    out.extend([a.addr, b.addr, a.get_length()])
    q2.free_tensor(a)
    q2.free_tensor(b)


@pytest.mark.parametrize("len1, num1, len2, expected", [
    (34, 2, 70, [128, 224, 48]),   # q1: 2 x 64 B; q2: 2 x 96 B
    (32, 3, 64, [96, 160, 32]),    # already 32 B multiples: no rounding
    (1, 1, 33, [32, 96, 32]),
])
def test_init_buffer_rounds_lengths_up_to_32_bytes(len1, num1, len2, expected):
    out = []
    layout_kernel[1](len1, num1, len2, out)
    assert out == expected


@asc.jit
def capacity_kernel(LEN1: asc.ConstExpr[int], LEN2: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    q1 = asc.TQue(asc.TPosition.VECIN, 1)
    q2 = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q1, num=1, len=LEN1)  # <first>
    if LEN2:
        pipe.init_buffer(que=q2, num=1, len=LEN2)  # <second>


@pytest.mark.parametrize("soc, ub", [("Ascend910B1", UB_910B1), ("Ascend310P3", UB_310P3)])
def test_ub_capacity(soc, ub):
    capacity_kernel[1](ub, 0, soc=soc)                 # the whole UB in one buffer fits
    capacity_kernel[1](ub - 64, 64, soc=soc)           # to the last byte
    with raises_at(capacity_kernel, "second", rf"q2: 1 x 128 B = 128 B of UB asked but only 64 B left of {ub} B on {soc}"):
        capacity_kernel[1](ub - 64, 100, soc=soc)
    with raises_at(capacity_kernel, "first", rf"q1: 1 x {ub + 32} B = {ub + 32} B of UB asked but only {ub} B left"):
        capacity_kernel[1](ub + 1, 0, soc=soc)


def test_ub_of_310p3_is_larger_than_910b1():
    capacity_kernel[1](UB_310P3, 0, soc="Ascend310P3")
    with raises_at(capacity_kernel, "first", rf"only {UB_910B1} B left of {UB_910B1} B on Ascend910B1"):
        capacity_kernel[1](UB_310P3, 0)


@asc.jit
def buffer_count_kernel(QUEUES: asc.ConstExpr[int], NUM: asc.ConstExpr[int], TBUFS: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    for _ in range(QUEUES):
        q = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que=q, num=NUM, len=32)  # <queue>
    for _ in range(TBUFS):
        b = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=b, num=32)  # <tbuf>


def test_at_most_64_buffers_per_tpipe():
    buffer_count_kernel[1](8, 8, 0)   # 64 buffers
    buffer_count_kernel[1](0, 0, 64)
    with raises_at(buffer_count_kernel, "tbuf", r"65 buffers in one TPipe; at most 64 are allowed"):
        buffer_count_kernel[1](8, 8, 1)
    with raises_at(buffer_count_kernel, "tbuf", r"65 buffers in one TPipe"):
        buffer_count_kernel[1](0, 0, 65)


def test_at_most_8_buffers_per_queue():
    buffer_count_kernel[1](1, 8, 0)
    with raises_at(buffer_count_kernel, "queue", r"num=9: a queue takes 1 to 8 buffers"):
        buffer_count_kernel[1](1, 9, 0)


@asc.jit
def two_pipes_kernel():
    asc.TPipe()
    asc.TPipe()  # <second>


def test_second_tpipe_raises():
    with raises_at(two_pipes_kernel, "second", "a second TPipe"):
        two_pipes_kernel[1]()


@asc.jit
def fresh_ub_kernel(z: asc.GlobalAddress, N: asc.ConstExpr[int], OP: asc.ConstExpr[str]):
    zg = gm_view(z, N)
    pipe = asc.TPipe()
    a = ub_buf(pipe, zg.dtype, N)
    b = ub_buf(pipe, zg.dtype, N)
    c = ub_buf(pipe, zg.dtype, N)
    if OP == "add":
        asc.add(c, a, b, N)
    if OP == "exp":
        asc.exp(c, a, N)
    if OP == "muls":
        asc.muls(c, a, 0.0, N)
    asc.data_copy(zg, c, N)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("op", ["add", "exp", "muls"])
def test_fresh_ub_is_poisoned_nan(dtype, op):
    z = np.zeros(64, dtype)
    fresh_ub_kernel[1](z, 64, op)
    assert np.all(np.isnan(z))  # computed from poison: NaN (not necessarily the poison bit pattern)


# ---------------------------------------------------------------------------------------------
# Queues: alloc / enque / deque / free discipline
# ---------------------------------------------------------------------------------------------

@asc.jit
def queue_kernel(x: asc.GlobalAddress, MODE: asc.ConstExpr[str], LEAK_CORE: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    if MODE == "uninit":
        q_in.alloc_tensor(asc.float16)  # <uninit>
    pipe.init_buffer(que=q_in, num=2, len=64)
    pipe.init_buffer(que=q_out, num=1, len=64)
    xg = gm_view(x, 32)
    if MODE == "ok":  # a correct double-buffered round trip, twice
        for _ in range(2):
            a = q_in.alloc_tensor(asc.float16)
            b = q_in.alloc_tensor(asc.float16)
            asc.data_copy(a, xg, 32)
            q_in.enque(a)
            a = q_in.deque(asc.float16)
            q_in.enque(b)
            q_in.free_tensor(a)
            b = q_in.deque(asc.float16)
            q_in.free_tensor(b)
    if MODE == "alloc_beyond":
        a = q_in.alloc_tensor(asc.float16)
        b = q_in.alloc_tensor(asc.float16)
        q_in.alloc_tensor(asc.float16)  # <alloc_beyond>
    if MODE == "deque_empty":
        q_in.deque(asc.float16)  # <deque_empty>
    if MODE == "enque_other":
        t = q_out.alloc_tensor(asc.float16)
        q_in.enque(t)  # <enque_other>
    if MODE == "enque_twice":
        t = q_in.alloc_tensor(asc.float16)
        q_in.enque(t)
        q_in.enque(t)  # <enque_twice>
    if MODE == "double_free":
        t = q_in.alloc_tensor(asc.float16)
        q_in.free_tensor(t)
        q_in.free_tensor(t)  # <double_free>
    if MODE == "free_enqueued":
        t = q_in.alloc_tensor(asc.float16)
        q_in.enque(t)
        q_in.free_tensor(t)  # <free_enqueued>
    if MODE == "beyond_depth":
        a = q_in.alloc_tensor(asc.float16)
        b = q_in.alloc_tensor(asc.float16)
        q_in.enque(a)
        q_in.enque(b)  # <beyond_depth>
    if MODE == "free_sub":
        t = q_in.alloc_tensor(asc.float16)
        q_in.free_tensor(t[16:])  # <free_sub>
    if MODE == "leak" and asc.get_block_idx() == LEAK_CORE:
        t = q_in.alloc_tensor(asc.float16)  # <leak>


QUEUE_ERRORS = [
    ("uninit", r"q_in has no buffers: call pipe\.init_buffer", "q_in"),
    ("alloc_beyond", r"q_in: all 2 buffers are in use .*alloc waits forever", "q_in"),
    ("deque_empty", r"q_in is empty.*deadlock.*waits forever", "q_in"),
    ("enque_other", r"q_out\[0\] belongs to q_out, not q_in", "q_out[0]"),
    ("enque_twice", r"q_in\[0\] is enqueued .*only a tensor from alloc_tensor or deque can be enqueued, once", "q_in[0]"),
    ("double_free", r"double free: q_in\[0\] was already freed", "q_in[0]"),
    ("free_enqueued", r"q_in\[0\] is still enqueued .*deque it before freeing", "q_in[0]"),
    ("beyond_depth", r"q_in already holds 1 tensor\(s\), its depth", "q_in[1]"),
    ("free_sub", r"not a buffer of q_in.*not a sub-tensor", "q_in[0][16:]"),
]


@pytest.mark.parametrize("mode, match, tensor", QUEUE_ERRORS)
def test_queue_misuse_raises(mode, match, tensor):
    with raises_at(queue_kernel, mode, match) as info:
        queue_kernel[1](np.zeros(32, np.float16), mode, 0)
    assert info.value.tensor == (tensor or "")


def test_queue_correct_use_passes():
    result = queue_kernel[1](np.zeros(32, np.float16), "ok", 0)
    assert result.trace.ops() == {"alloc_tensor": 4, "data_copy": 2, "enque": 4, "deque": 4, "free_tensor": 4}


@pytest.mark.parametrize("core", [0, 1])
def test_tensor_held_at_kernel_end_is_a_leak(core):
    with pytest.raises(asc.KernelError, match=r"^kernel end on aiv\(\d\) at .*test_asc_rules\.py:"
                                              rf"{line_of(queue_kernel, 'leak')}: q_in\[0\] is still allocated .*every "
                                              "alloc_tensor needs a free_tensor") as info:
        queue_kernel[2](np.zeros(32, np.float16), "leak", core)
    assert (info.value.core, info.value.tensor) == (core, "q_in[0]")


@asc.jit
def leak_with_sync_all_kernel():
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=64)
    q.alloc_tensor(asc.float16)
    asc.sync_all()


@pytest.mark.parametrize("kernel, args", [(queue_kernel, (np.zeros(32, np.float16), "leak", 0)),
                                          (leak_with_sync_all_kernel, ())], ids=["sequential", "scheduler"])
def test_leak_error_points_at_kernel_source(kernel, args):
    with pytest.raises(asc.KernelError, match="still allocated") as info:
        kernel[1](*args)
    lines, first = inspect.getsourcelines(kernel.fn)
    assert info.value.file == THIS_FILE and first <= info.value.line < first + len(lines), str(info.value)


# ---------------------------------------------------------------------------------------------
# data_copy
# ---------------------------------------------------------------------------------------------

@asc.jit
def copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n_in: int, n_out: int, N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    pipe = asc.TPipe()
    t = ub_buf(pipe, xg.dtype, N)
    asc.data_copy(t, xg, n_in)  # <in>
    asc.data_copy(yg, t, n_out)  # <out>


@pytest.mark.parametrize("dtype, count", [(np.float16, 40), (np.float32, 20), (np.float16, 1), (np.float32, 7)])
def test_data_copy_count_not_32B_multiple_raises_by_default(dtype, count):
    size = np.dtype(dtype).itemsize
    x, y = np.arange(64, dtype=dtype), np.zeros(64, dtype)
    name = "float16" if size == 2 else "float32"
    down = count * size // 32 * 32 // size
    with raises_at(copy_kernel, "in", rf"count \* sizeof\({name}\) = {count} \* {size} = {count * size} B is not a "
                                      rf"multiple of 32 B \(x -> \w+\)\. The NPU would silently round it down to {down} "
                                      "elements") as info:
        copy_kernel[1](x, y, count, 64, 64)
    assert (info.value.tensor, info.value.start, info.value.stop) == ("x", 0, count)
    with raises_at(copy_kernel, "out", "would silently round it down") as info:
        copy_kernel[1](x, y, 64, count, 64)
    assert (info.value.tensor, info.value.start, info.value.stop) == ("y", 0, count)


def test_data_copy_strict_false_rounds_gm_to_ub_down():
    x = np.arange(1, 65, dtype=np.float16)
    y = np.full(64, -7, np.float16)
    result = copy_kernel[1](x, y, 40, 48, 64, strict=False)      # 80 B -> 64 B = 32 elements copied in
    assert_bits_equal(y[:32], x[:32])
    assert_poisoned(y[32:48])                                 # UB behind the rounded copy: never written
    assert np.all(y[48:] == -7)                               # GM behind the 48 copied out: untouched
    copy_in = result.trace.cores[0][0]
    assert (copy_in.op, copy_in.count, copy_in.nbytes) == ("data_copy", 32, 64)


def test_data_copy_strict_false_rounds_ub_to_gm_down():
    x = np.arange(1, 65, dtype=np.float32)
    y = np.full(64, -7, np.float32)
    copy_kernel[1](x, y, 64, 15, 64, strict=False)               # 60 B -> 32 B = 8 elements copied out
    assert_bits_equal(y[:8], x[:8])
    assert np.all(y[8:] == -7)


@asc.jit
def copy_rules_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr[str]):
    xg = gm_view(x, 64)
    yg = gm_view(y, 64)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=256)
    t = buf.get(asc.float16)
    u = ub_buf(pipe, asc.float16, 64)
    if MODE == "misaligned":
        asc.data_copy(t[3:], xg, 16)  # <misaligned>
    if MODE == "aligned_sub":
        asc.data_copy(t[16:], xg, 16)
        asc.data_copy(yg, t[16:], 16)
    if MODE == "dtype":
        asc.data_copy(buf.get(asc.float32), xg, 16)  # <dtype>
    if MODE == "gm_gm":
        asc.data_copy(yg, xg, 16)  # <gm_gm>
    if MODE == "ub_ub":
        asc.data_copy(t, xg, 64)
        asc.data_copy(u, t, 64)  # <ub_ub>
        asc.data_copy(yg, u, 64)


@pytest.mark.parametrize("mode, match, tensor", [
    ("misaligned", r"buf\[3:\] starts at UB byte 6, not 32-byte aligned.*multiple of 16 elements", "buf[3:]"),
    ("dtype", r"dtype mismatch: dst buf is float32, src x is float16", "buf"),
    ("gm_gm", r"cannot copy GlobalTensor -> GlobalTensor.*GM -> GM has no data path", ""),
])
def test_data_copy_rules(mode, match, tensor):
    with raises_at(copy_rules_kernel, mode, match) as info:
        copy_rules_kernel[1](np.arange(64, dtype=np.float16), np.zeros(64, np.float16), mode)
    assert info.value.tensor == tensor


def test_data_copy_aligned_sub_tensor_works():
    x, y = np.arange(64, dtype=np.float16), np.zeros(64, np.float16)
    copy_rules_kernel[1](x, y, "aligned_sub")
    assert_bits_equal(y[:16], x[:16])
    assert not y[16:].any()


def test_data_copy_ub_to_ub_runs_on_pipe_v():
    x, y = np.arange(64, dtype=np.float16), np.zeros(64, np.float16)
    result = copy_rules_kernel[1](x, y, "ub_ub")
    assert_bits_equal(y, x)
    (instr,) = [i for i in result.trace if i.line == line_of(copy_rules_kernel, "ub_ub")]
    assert instr.pipe is Pipe.V
    assert instr.reads == (Access(Mem.UB, "UB", 0, 128, "buf"),)
    assert instr.writes == (Access(Mem.UB, "UB", 256, 384, "ub"),)  # ub_buf's TBuf is called b


# ---------------------------------------------------------------------------------------------
# data_copy_pad
# ---------------------------------------------------------------------------------------------

@asc.jit
def pad_in_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, count: int, block_len: int, src_stride: int,
                  dst_stride: int, is_pad: bool, left: int, right: int, pad_value: float, fill: float,
                  N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    pipe = asc.TPipe()
    t = ub_buf(pipe, xg.dtype, N)
    asc.duplicate(t, fill, N)  # UB the copy must leave alone reads back as `fill`
    params = asc.DataCopyExtParams(count, block_len, src_stride, dst_stride, 0)
    pad = asc.DataCopyPadExtParams(xg.dtype, is_pad, left, right, pad_value)
    asc.data_copy_pad(t, xg, params, pad)  # <pad>
    asc.data_copy(yg, t, N)


def pad_in(x, *, count=1, block_len, src_stride=0, dst_stride=0, is_pad=False, left=0, right=0, pad_value=0.0,
           fill=-3.0, **launch):
    y = np.zeros_like(x)
    result = pad_in_kernel[1](x, y, count, block_len, src_stride, dst_stride, is_pad, left, right, pad_value, fill,
                              x.size, **launch)
    (instr,) = [i for i in result.trace if i.op == "data_copy_pad"]
    return y, instr


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_data_copy_pad_in_unaligned_block_poisons_dummy_bytes(dtype):
    x = np.arange(1, 65, dtype=dtype)
    size = x.itemsize
    y, instr = pad_in(x, block_len=5 * size)
    per_block = 32 // size
    assert_bits_equal(y[:5], x[:5])
    assert_poisoned(y[5:per_block])
    assert np.all(y[per_block:] == -3)
    assert instr.pipe is Pipe.MTE2
    assert instr.reads == (Access(Mem.GM, "x", 0, 5 * size, "x"),)
    assert instr.writes == (Access(Mem.UB, "UB", 0, 5 * size, "ub"),)
    assert instr.undefined == (Access(Mem.UB, "UB", 5 * size, 32, "ub"),)
    assert (instr.count, instr.nbytes, instr.line) == (5, 5 * size, line_of(pad_in_kernel, "pad"))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_data_copy_pad_in_is_pad_fills_padding_value(dtype):
    x = np.arange(1, 65, dtype=dtype)
    size = x.itemsize
    y, instr = pad_in(x, block_len=5 * size, is_pad=True, pad_value=7.5)
    per_block = 32 // size
    assert_bits_equal(y[:5], x[:5])
    assert np.all(y[5:per_block] == 7.5)
    assert np.all(y[per_block:] == -3)
    assert instr.undefined == ()
    assert set(instr.writes) == {Access(Mem.UB, "UB", 0, 5 * size, "ub"), Access(Mem.UB, "UB", 5 * size, 32, "ub")}


def test_data_copy_pad_in_left_and_right_padding_layout():
    x = np.arange(1, 65, dtype=np.float16)
    y, instr = pad_in(x, block_len=10, is_pad=True, left=2, right=3, pad_value=-1.0)
    assert np.all(y[0:2] == -1)
    assert_bits_equal(y[2:7], x[:5])
    assert np.all(y[7:16] == -1)      # right pad and the dummy bytes up to 32 B
    assert np.all(y[16:] == -3)

    y, instr = pad_in(x, block_len=10, is_pad=False, left=2, right=3)
    assert_poisoned(y[0:2])
    assert_bits_equal(y[2:7], x[:5])
    assert_poisoned(y[7:16])
    assert instr.undefined == (Access(Mem.UB, "UB", 0, 4, "ub"), Access(Mem.UB, "UB", 14, 32, "ub"))

    # 16 + 20 + 16 elements = 104 B: the block spans four 32 B blocks of UB
    y, _ = pad_in(x, block_len=40, is_pad=True, left=16, right=16, pad_value=9.0)
    assert np.all(y[:16] == 9) and np.all(y[36:64] == 9)
    assert_bits_equal(y[16:36], x[:20])


def test_data_copy_pad_in_multi_block_strides():
    # 3 blocks of 5 float16 (10 B); GM gap 6 B = 3 elements; UB gap 1 block of 32 B = 16 elements
    x = np.arange(1, 97, dtype=np.float16)
    y, instr = pad_in(x, count=3, block_len=10, src_stride=6, dst_stride=1)
    for b in range(3):
        assert_bits_equal(y[32 * b:32 * b + 5], x[8 * b:8 * b + 5])
        assert_poisoned(y[32 * b + 5:32 * b + 16])
        assert np.all(y[32 * b + 16:32 * b + 32] == -3)
    assert instr.reads == tuple(Access(Mem.GM, "x", 16 * b, 16 * b + 10, "x") for b in range(3))
    assert instr.undefined == tuple(Access(Mem.UB, "UB", 64 * b + 10, 64 * b + 32, "ub") for b in range(3))
    assert (instr.count, instr.nbytes) == (15, 30)

    # blocks longer than 32 B: 2 x 20 float16 (40 B -> 64 B footprint), GM gap 8 B, UB gap 1 block
    y, _ = pad_in(x, count=2, block_len=40, src_stride=8, dst_stride=1)
    for b in range(2):
        assert_bits_equal(y[48 * b:48 * b + 20], x[24 * b:24 * b + 20])
        assert_poisoned(y[48 * b + 20:48 * b + 32])
        assert np.all(y[48 * b + 32:48 * b + 48] == -3)


def test_data_copy_pad_zero_blocks_is_a_noop():
    x = np.arange(1, 65, dtype=np.float16)
    y, instr = pad_in(x, count=0, block_len=10)
    assert np.all(y == -3)
    assert (instr.reads, instr.writes, instr.undefined) == ((), (), ())


@asc.jit
def pad_out_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, offset: int, count: int, block_len: int,
                   src_stride: int, dst_stride: int, N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    pipe = asc.TPipe()
    t = ub_buf(pipe, xg.dtype, N)
    asc.data_copy(t, xg, N)
    params = asc.DataCopyExtParams(count, block_len, src_stride, dst_stride, 0)
    asc.data_copy_pad(yg[offset:], t, params)  # <pad>


def test_data_copy_pad_out_writes_exactly_block_len_bytes():
    x = np.arange(1, 97, dtype=np.float16)
    y = np.full(96, -7, np.float16)
    result = pad_out_kernel[1](x, y, 3, 1, 10, 0, 0, 96)
    expected = np.full(96, -7, np.float16)
    expected[3:8] = x[:5]
    assert_bits_equal(y, expected)
    (instr,) = [i for i in result.trace if i.op == "data_copy_pad"]
    assert instr.pipe is Pipe.MTE3
    assert instr.writes == (Access(Mem.GM, "y", 6, 16, "y"),)
    assert instr.reads == (Access(Mem.UB, "UB", 0, 10, "ub"),)


def test_data_copy_pad_out_multi_block_strides():
    # 3 blocks of 3 float16 (6 B); UB gap 1 block (src_stride, 32 B blocks) -> UB step 64 B = 32 elements;
    # GM gap 4 B (dst_stride, bytes) -> GM step 10 B = 5 elements
    x = np.arange(1, 97, dtype=np.float16)
    y = np.full(96, -7, np.float16)
    result = pad_out_kernel[1](x, y, 1, 3, 6, 1, 4, 96)
    expected = np.full(96, -7, np.float16)
    for b in range(3):
        expected[1 + 5 * b:1 + 5 * b + 3] = x[32 * b:32 * b + 3]
    assert_bits_equal(y, expected)
    (instr,) = [i for i in result.trace if i.op == "data_copy_pad"]
    assert instr.writes == tuple(Access(Mem.GM, "y", 2 + 10 * b, 2 + 10 * b + 6, "y") for b in range(3))
    assert instr.reads == tuple(Access(Mem.UB, "UB", 64 * b, 64 * b + 6, "ub") for b in range(3))


@pytest.mark.parametrize("dtype, kwargs, match", [
    (np.float16, dict(block_len=5), r"block_len=5 must be a byte count .* multiple of sizeof\(float16\) = 2"),
    (np.float32, dict(block_len=6), r"block_len=6 .* multiple of sizeof\(float32\) = 4 \(block_len is in BYTES"),
    (np.float16, dict(block_len=10, left=17), r"left_padding=17 / right_padding=0 elements: each pad must be at most 32 B"),
    (np.float32, dict(block_len=8, right=9), r"right_padding=9 elements: each pad must be at most 32 B"),
    (np.float16, dict(block_len=10, count=4096), r"block_count=4096 outside \[0, 4095\]"),
])
def test_data_copy_pad_parameter_rules(dtype, kwargs, match):
    with raises_at(pad_in_kernel, "pad", match):
        pad_in(np.arange(64, dtype=dtype), **kwargs)


def test_data_copy_pad_padding_of_exactly_32_bytes_is_allowed():
    x = np.arange(1, 65, dtype=np.float32)
    y, _ = pad_in(x, block_len=4, is_pad=True, left=8, right=8, pad_value=2.0)
    assert np.all(y[:8] == 2) and y[8] == 1 and np.all(y[9:24] == 2)


def test_data_copy_pad_unsupported_on_310p3():
    with raises_at(pad_in_kernel, "pad", r"DataCopyPad does not exist on Ascend310P3 \(arch 2002\)"):
        pad_in(np.arange(64, dtype=np.float16), block_len=10, soc="Ascend310P3")


def test_data_copy_pad_misaligned_gm_stride_is_not_silently_floored():
    x = np.arange(1, 65, dtype=np.float16)
    with pytest.raises(asc.KernelError, match="align"):
        pad_in(x, count=2, block_len=4, src_stride=3, is_pad=True)


# ---------------------------------------------------------------------------------------------
# Vector instructions
# ---------------------------------------------------------------------------------------------

@asc.jit
def vec_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int, s: float,
               OP: asc.ConstExpr, KIND: asc.ConstExpr[str], N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    zg = gm_view(z, N)
    pipe = asc.TPipe()
    a = ub_buf(pipe, xg.dtype, N)
    b = ub_buf(pipe, xg.dtype, N)
    c = ub_buf(pipe, xg.dtype, N)
    asc.data_copy(a, xg, N)
    asc.data_copy(b, yg, N)
    if KIND == "binary":
        OP(c, a, b, n)
    if KIND == "scalar":
        OP(c, a, s, n)
    if KIND == "unary":
        OP(c, a, n)
    if KIND == "duplicate":
        OP(c, s, n)
    asc.data_copy(zg, c, N)


def run_vec(op, kind, x, y=None, n=None, s=0.0):
    y = np.zeros_like(x) if y is None else y
    z = np.zeros_like(x)
    vec_kernel[1](x, y, z, x.size if n is None else n, s, op, kind, x.size)
    return z


def _recip(x):
    return x.dtype.type(1) / x


def _rsqrt(x):  # one rounding of the exact result (the simulator's documented per-instruction rounding)
    return (1 / np.sqrt(x.astype(np.float64))).astype(x.dtype)


def _rounded(fn):  # the real function (the C library's, not numpy's CPU-dependent one) rounded once to the dtype
    return lambda x: np.array([fn(float(v)) for v in x]).astype(x.dtype)


BINARY = [(asc.add, np.add), (asc.sub, np.subtract), (asc.mul, np.multiply), (asc.div, np.divide),
          (asc.max, np.maximum), (asc.min, np.minimum)]
UNARY = [(asc.exp, _rounded(math.exp), (-6, 6)), (asc.ln, _rounded(math.log), (0.01, 100)), (asc.sqrt, np.sqrt, (0, 100)),
         (asc.rsqrt, _rsqrt, (0.01, 100)), (asc.reciprocal, _recip, (0.1, 100)), (asc.abs, np.abs, (-50, 50)),
         (asc.relu, lambda v: np.maximum(v, v.dtype.type(0)), (-50, 50))]
SCALAR = [(asc.adds, np.add), (asc.muls, np.multiply), (asc.maxs, np.maximum), (asc.mins, np.minimum)]
COUNTS = [0, 1, 17, 100, 256]
DTYPES = [np.float16, np.float32]


def _check_vector_result(z, expected, n):
    assert_bits_equal(z[:n], expected[:n])
    if n < z.size:
        assert_poisoned(z[n:])  # the instruction touched exactly `count` elements


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, ref", BINARY, ids=[b[0].__name__ for b in BINARY])
def test_binary_ops_bit_identical_to_numpy(op, ref, dtype, rng):
    x = rng.uniform(-100, 100, 256).astype(dtype)
    y = rng.uniform(-100, 100, 256).astype(dtype)
    y[np.abs(y) < 0.5] = 3  # keep div finite
    for n in COUNTS:
        _check_vector_result(run_vec(op, "binary", x, y, n), ref(x, y), n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, ref, lim", UNARY, ids=[u[0].__name__ for u in UNARY])
def test_unary_ops_bit_identical_to_numpy(op, ref, lim, dtype, rng):
    x = rng.uniform(*lim, 256).astype(dtype)
    for n in COUNTS:
        _check_vector_result(run_vec(op, "unary", x, n=n), ref(x), n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op, ref", SCALAR, ids=[s[0].__name__ for s in SCALAR])
@pytest.mark.parametrize("s", [0.1, -2.5, 1 / 3, 1 + 2**-11 + 2**-40])
def test_scalar_ops_convert_scalar_to_dtype_first(op, ref, s, dtype, rng):
    x = rng.uniform(-100, 100, 256).astype(dtype)
    scalar = dtype(np.float32(s))  # launch: Python float -> float32; instruction: -> tensor dtype
    for n in (0, 17, 256):
        _check_vector_result(run_vec(op, "scalar", x, n=n, s=s), ref(x, scalar), n)


def test_muls_float16_scale_is_double_rounded_through_float32():
    # 1 + 2**-11 + 2**-40 is above the float16 tie, so np.float16(s) == 1 + 2**-10; but the launch rounds
    # it to float32 first (1 + 2**-11, exactly the tie), which then rounds to even: 1.0.
    s = 1 + 2**-11 + 2**-40
    assert np.float16(s) != np.float16(np.float32(s)) == 1
    x = np.arange(1, 257, dtype=np.float16)
    assert_bits_equal(run_vec(asc.muls, "scalar", x, s=s), x)
    x = np.linspace(-3, 3, 256).astype(np.float16)
    assert_bits_equal(run_vec(asc.muls, "scalar", x, s=0.1), x * np.float16(np.float32(0.1)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, ml_dtypes.bfloat16])
def test_duplicate(dtype):
    x = np.zeros(64, dtype)
    for n in (0, 17, 64):
        _check_vector_result(run_vec(asc.duplicate, "duplicate", x, n=n, s=0.1), np.full(64, np.float32(0.1)).astype(dtype), n)


@asc.jit
def vec_rules_kernel(MODE: asc.ConstExpr[str], SOC_DTYPE: asc.ConstExpr):
    pipe = asc.TPipe()
    a_buf = asc.TBuf(asc.TPosition.VECCALC)
    b_buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=a_buf, num=128)
    pipe.init_buffer(buf=b_buf, num=128)
    a = a_buf.get(asc.float16)
    b = b_buf.get(asc.float16)
    asc.duplicate(a, 1.0, 64)
    asc.duplicate(b, 2.0, 64)
    if MODE == "count":
        asc.add(a, a, b, 80)  # <count>
    if MODE == "count_src":
        asc.add(b, a[32:], b, 48)  # <count_src>
    if MODE == "partial":
        asc.add(a[16:], a, b, 32)  # <partial>
    if MODE == "in_place":
        asc.add(a, a, b, 64)
        asc.muls(a, a, 3.0, 64)
        asc.add(a, a, a, 64)
        return a.get_value(63)
    if MODE == "bf16":
        asc.add(a_buf.get(SOC_DTYPE), a_buf.get(SOC_DTYPE), b_buf.get(SOC_DTYPE), 16)  # <bf16>
    if MODE == "mismatch":
        asc.add(a, a, b_buf.get(asc.float32), 16)  # <mismatch>
    if MODE == "global":
        g = asc.GlobalTensor()
        asc.add(a, g, b, 16)  # <global>
    if MODE == "misaligned":
        asc.exp(a, b[8:], 16)  # <misaligned>


@pytest.mark.parametrize("mode, match, tensor, start_stop", [
    ("count", r"add on aiv\(0\).*accesses a_buf elements \[0, 80\) but the tensor has 64 elements", "a_buf", (0, 80)),
    ("count_src", r"accesses a_buf\[32:\] elements \[0, 48\) but the tensor has 32 elements", "a_buf[32:]", (0, 48)),
    ("partial", r"a_buf \(UB \[0, 64\)\) partially overlaps the destination a_buf\[16:\] \(UB \[32, 96\)\)",
     "a_buf[16:]", (None, None)),
    ("bf16", r"add does not support bfloat16 \(\w+\) on Ascend910B1 \(supported: float16, float32, int16, int32\); "
             r"cast to float32 first", "a_buf", (None, None)),
    ("mismatch", r"dtype mismatch: a_buf is float16 but b_buf is float32", "b_buf", (None, None)),
    ("global", r"operands must be LocalTensors in UB, got GlobalTensor", "", (None, None)),
    ("misaligned", r"b_buf\[8:\] starts at UB byte 144, not 32-byte aligned", "b_buf[8:]", (None, None)),
])
def test_vector_operand_rules(mode, match, tensor, start_stop):
    with raises_at(vec_rules_kernel, mode, match) as info:
        vec_rules_kernel[1](mode, asc.bfloat16)
    assert (info.value.tensor, (info.value.start, info.value.stop)) == (tensor, start_stop)


def test_vector_full_overlap_in_place_works():
    out = []

    @asc.jit
    def wrapper():
        out.append(vec_rules_kernel("in_place", None))

    wrapper[1]()
    assert out == [18.0]  # ((1 + 2) * 3) * 2


def test_vector_count_zero_is_a_noop_even_with_partial_overlap():
    @asc.jit
    def k():
        pipe = asc.TPipe()
        a = ub_buf(pipe, asc.float32, 64)
        asc.add(a[8:], a, a, 0)

    result = k[1]()
    (instr,) = [i for i in result.trace if i.op == "add"]
    assert (instr.count, instr.nbytes, instr.writes[0].nbytes) == (0, 0, 0)


# ---------------------------------------------------------------------------------------------
# cast
# ---------------------------------------------------------------------------------------------

@asc.jit
def cast_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, MODE: asc.ConstExpr, N: asc.ConstExpr[int]):
    xg = gm_view(x, N)
    yg = gm_view(y, N)
    pipe = asc.TPipe()
    a = ub_buf(pipe, xg.dtype, N)
    b = ub_buf(pipe, yg.dtype, N)
    asc.data_copy(a, xg, N)
    asc.cast(b, a, MODE, N)  # <cast>
    asc.data_copy(yg, b, N)


def run_cast(x, dst_dtype, mode):
    y = np.zeros(x.size, dst_dtype)
    cast_kernel[1](x, y, mode, x.size)
    return y


def f16_reference(v: float, mode: asc.RoundMode) -> np.float16:
    """Independent float32 -> float16 rounding with exact rational arithmetic (finite results only)."""
    x = Fraction(v)
    if x == 0:
        return np.float16(v)
    sign = -1 if x < 0 else 1
    _, e = math.frexp(abs(v))                   # |v| = m * 2**e, m in [0.5, 1)
    ulp = Fraction(2) ** (max(e - 1, -14) - 10)  # 11-bit significand; subnormals below 2**-14
    q = abs(x) / ulp
    lo, frac = math.floor(q), q - math.floor(q)
    if frac == 0:
        k = lo
    elif mode in (RM.CAST_RINT, RM.CAST_NONE):
        k = lo + 1 if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and lo % 2) else lo
    elif mode is RM.CAST_ROUND:
        k = lo + 1 if frac >= Fraction(1, 2) else lo
    elif mode is RM.CAST_TRUNC:
        k = lo
    elif mode is RM.CAST_FLOOR:
        k = lo if sign > 0 else lo + 1
    elif mode is RM.CAST_CEIL:
        k = lo + 1 if sign > 0 else lo
    else:  # CAST_ODD
        k = lo if lo % 2 else lo + 1
    r = k * ulp
    if r > 65504:
        return np.float16(sign * np.inf)
    return np.float16(math.copysign(float(r), sign))


CAST_VALUES = np.array(
    [1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-12, 1 + 2**-11 + 2**-22, 2.5 + 2**-10, 2049.0, 2051.0, 2050.5,
     2**-25, 3 * 2**-25, 2**-26, 5 * 2**-26, 2**-14 + 2**-25, 0.1, 1 / 3, 2 / 3, 65504.0, 65519.0, 65519.996,
     1.0, 0.0, 2**-30, 1234.567, 7.0009765625],
    dtype=np.float32)


@pytest.mark.parametrize("mode", list(RM), ids=[m.name for m in RM])
def test_cast_float32_to_float16_all_round_modes(mode, rng):
    x = np.concatenate([CAST_VALUES, -CAST_VALUES])
    x = np.concatenate([x, rng.uniform(-60000, 60000, 64 - x.size).astype(np.float32)])
    x[-8:] = rng.uniform(-1e-3, 1e-3, 8).astype(np.float32)
    expected = np.array([f16_reference(float(v), mode) for v in x], np.float16)
    assert_bits_equal(run_cast(x, np.float16, mode), expected)


def test_cast_reference_sanity():
    # the ties really are ties, and the modes disagree where they should
    tie = float(np.float32(1 + 2**-11))
    assert {m: float(f16_reference(tie, m)) for m in (RM.CAST_RINT, RM.CAST_ROUND, RM.CAST_FLOOR, RM.CAST_ODD)} == {
        RM.CAST_RINT: 1.0, RM.CAST_ROUND: 1 + 2**-10, RM.CAST_FLOOR: 1.0, RM.CAST_ODD: 1 + 2**-10}
    assert float(f16_reference(-float(np.float32(2**-25)), RM.CAST_TRUNC)) == 0.0
    assert math.copysign(1, float(f16_reference(-float(np.float32(2**-25)), RM.CAST_TRUNC))) == -1


def test_cast_float32_to_bfloat16_rint_matches_ml_dtypes(rng):
    x = np.concatenate([rng.standard_normal(40).astype(np.float32) * 1000,
                        np.array([1 + 2**-8, 1 + 3 * 2**-8, -1 - 2**-8, 1 + 2**-9, 3e38, 1e-40], np.float32)])
    x = np.concatenate([x, rng.uniform(-1, 1, 64 - x.size).astype(np.float32)])
    for mode in (RM.CAST_RINT,):  # float -> bfloat16 takes no CAST_NONE (Cast.md A2 table)
        assert_bits_equal(run_cast(x, ml_dtypes.bfloat16, mode), x.astype(ml_dtypes.bfloat16))


FLOAT_TO_INT = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6, 2.6, 7.0, -7.0, 0.0])
INT_EXPECTED = {
    RM.CAST_FLOOR: [-3, -2, -1, 0, 1, 2, 2, -3, 2, 7, -7, 0],
    RM.CAST_CEIL: [-2, -1, 0, 1, 2, 3, 3, -2, 3, 7, -7, 0],
    RM.CAST_TRUNC: [-2, -1, 0, 0, 1, 2, 2, -2, 2, 7, -7, 0],
    RM.CAST_ROUND: [-3, -2, -1, 1, 2, 3, 2, -3, 3, 7, -7, 0],
    RM.CAST_RINT: [-2, -2, 0, 0, 2, 2, 2, -3, 3, 7, -7, 0],
}


@pytest.mark.parametrize("src", [np.float16, np.float32])
@pytest.mark.parametrize("mode", list(INT_EXPECTED), ids=[m.name for m in INT_EXPECTED])
def test_cast_float_to_int32(src, mode):
    x = np.resize(FLOAT_TO_INT, 64).astype(src)
    assert np.array_equal(run_cast(x, np.int32, mode), np.resize(INT_EXPECTED[mode], 64).astype(np.int32))


def test_cast_float_to_int32_saturates():
    x = np.resize(np.array([3e9, -3e9, np.inf, -np.inf, np.nan], np.float32), 64)
    assert np.array_equal(run_cast(x, np.int32, RM.CAST_RINT)[:5], [2**31 - 1, -2**31, 2**31 - 1, -2**31, 0])


def test_cast_float32_to_int64_saturates():
    x = np.resize(np.array([1e30, -1e30, np.inf, 3e9], np.float32), 64)
    assert np.array_equal(run_cast(x, np.int64, RM.CAST_RINT)[:4], [2**63 - 1, -2**63, 2**63 - 1, 3000000000])


@pytest.mark.parametrize("src, dst, soc", [
    (np.float16, ml_dtypes.bfloat16, None), (np.int16, np.int32, None),
    (np.float32, ml_dtypes.bfloat16, "Ascend310P3"),
])
def test_cast_unsupported_pair_raises(src, dst, soc):
    src_name, dst_name = np.dtype(src).name, np.dtype(dst).name
    launch = {"soc": soc} if soc else {}
    with raises_at(cast_kernel, "cast", rf"Cast {src_name} -> {dst_name} is not available on {soc or 'Ascend910B1'}"):
        cast_kernel[1](np.zeros(64, src), np.zeros(64, dst), RM.CAST_RINT, 64, **launch)


def test_cast_to_the_same_dtype_points_at_data_copy():
    with raises_at(cast_kernel, "cast", "cast from float16 to itself: copy within UB with data_copy"):
        cast_kernel[1](np.zeros(64, np.float16), np.zeros(64, np.float16), RM.CAST_RINT, 64)


def test_cast_bad_round_mode_raises():
    with raises_at(cast_kernel, "cast", r"round_mode must be an asc\.RoundMode"):
        cast_kernel[1](np.zeros(64, np.float32), np.zeros(64, np.float16), "rint", 64)


# ---------------------------------------------------------------------------------------------
# Launch
# ---------------------------------------------------------------------------------------------

@asc.jit
def nothing_kernel(x: asc.GlobalAddress):
    pass


@pytest.mark.parametrize("core_num", [0, 65536, -1, True, 2.0])
def test_core_num_outside_1_to_65535_raises(core_num):
    with pytest.raises(ValueError, match=r"core_num must be an integer in \[1, 65535\]"):
        nothing_kernel[core_num](np.zeros(8, np.float32))


def test_core_num_65535_is_accepted_and_runs():  # about 0.5 s: cores without sync_all run one at a time
    @asc.jit
    def last_core_writes(y: asc.GlobalAddress):
        if asc.get_block_idx() == asc.get_block_num() - 1:
            gm_view(y, 1).set_value(0, asc.get_block_idx())

    y = np.zeros(1, np.int32)
    result = last_core_writes[65535](y)
    assert y[0] == 65534 and len(result.trace.cores) == 65535


@asc.jit
def order_kernel(order: asc.GlobalAddress):
    g = gm_view(order, asc.get_block_num() + 1)
    seen = g.get_value(0)
    g.set_value(1 + seen, asc.get_block_idx())
    g.set_value(0, seen + 1)


def test_cores_run_in_block_order_and_trace_is_per_core():
    order = np.zeros(6, np.int32)
    result = order_kernel[5](order)
    assert order.tolist() == [5, 0, 1, 2, 3, 4]
    assert result.trace.block_dim == 5 and len(result.trace.cores) == 5
    for idx, instrs in enumerate(result.trace.cores):
        assert [(i.core, i.seq, i.op, i.pipe) for i in instrs] == [
            (idx, 0, "get_value", Pipe.S), (idx, 1, "set_value", Pipe.S), (idx, 2, "set_value", Pipe.S)]
        assert instrs[1].writes == (Access(Mem.GM, "order", 4 * (1 + idx), 4 * (2 + idx), "order"),)


@asc.jit
def scalar_kernel(y: asc.GlobalAddress, h: asc.GlobalAddress, i: asc.GlobalAddress, s: float, n: int):
    gm_view(y, 1).set_value(0, s)
    gm_view(h, 1).set_value(0, s)
    gm_view(i, 1).set_value(0, n)


@pytest.mark.parametrize("s", [0.1, 1 + 2**-11 + 2**-40, 1e-50, -3.0000001])
def test_float_arguments_are_rounded_to_float32(s):
    y, h, i = np.zeros(8, np.float32), np.zeros(16, np.float16), np.zeros(8, np.int32)
    scalar_kernel[1](y, h, i, s, 5)
    assert_bits_equal(y[:1], np.array([s], np.float32))
    assert_bits_equal(h[:1], np.array([s], np.float32).astype(np.float16))  # double rounding, as pyasc does


@pytest.mark.parametrize("n", [2**31 - 1, -2**31])
def test_int_arguments_within_int32_are_accepted(n):
    i = np.zeros(8, np.int32)
    scalar_kernel[1](np.zeros(8, np.float32), np.zeros(16, np.float16), i, 0.0, n)
    assert i[0] == n


@pytest.mark.parametrize("n", [2**31, -2**31 - 1, np.int64(2**40)])
def test_int_arguments_outside_int32_raise(n):
    with pytest.raises(ValueError, match=rf"argument n={n} does not fit the kernel's int32 scalar"):
        scalar_kernel[1](np.zeros(8, np.float32), np.zeros(16, np.float16), np.zeros(8, np.int32), 0.0, n)


def test_kernel_called_without_core_num_raises_type_error():
    with pytest.raises(TypeError, match=r"nothing_kernel is an @asc\.jit kernel: launch it with nothing_kernel\[core_num\]"):
        nothing_kernel(np.zeros(8, np.float32))
    with pytest.raises(TypeError, match=r"gm_view is an @asc\.jit kernel"):
        gm_view(None, 1)


def test_jit_helpers_are_plain_calls_inside_a_kernel():
    seen = []

    @asc.jit
    def helper(a, b):
        seen.append(asc.get_block_idx())
        return a * 10 + b

    @asc.jit
    def k(y: asc.GlobalAddress):
        gm_view(y, 2).set_value(asc.get_block_idx(), helper(asc.get_block_idx(), 7))

    y = np.zeros(8, np.int32)
    k[2, None](y)  # kernel[core_num, stream] form
    assert y[:2].tolist() == [7, 17] and seen == [0, 1]


@asc.jit
def sync_kernel(g: asc.GlobalAddress, WHO: asc.ConstExpr[str]):
    t = gm_view(g, 4)
    idx = asc.get_block_idx()
    if WHO == "all":
        if idx == 0:
            t.set_value(0, 7)          # core 0 writes before the barrier ...
        if idx == 1:
            t.set_value(1, 42)         # ... and so does core 1, which runs after core 0
        # scalar stores stay in the core's data cache until cleaned, and a cached line goes stale
        # (AD-API DataCacheCleanAndInvalid.md): write back before the barrier, drop it after
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
        asc.sync_all()
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
        if idx == 0:
            t.set_value(2, t.get_value(1) + 1)  # core 0 sees core 1's write only thanks to sync_all
        if idx == 1:
            t.set_value(3, t.get_value(0))
        # both stores share one 64 B line: written back at once they would overwrite each other
        # (the cores run one after another here, so the write-back of each lands in turn)
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
    if WHO == "core0" and idx == 0:
        asc.sync_all()  # <sync-core0>
    if WHO == "core1" and idx == 1:
        asc.sync_all()  # <sync-core1>


def test_sync_all_makes_other_cores_writes_visible():
    g = np.zeros(4, np.int32)
    result = sync_kernel[2](g, "all")
    assert g.tolist() == [7, 42, 43, 7]
    syncs = [i for i in result.trace if i.op == "sync_all"]
    assert [(i.core, i.pipe, i.sync) for i in syncs] == [(c, Pipe.S, Sync(SyncKind.ALL, Pipe.S, Pipe.S)) for c in (0, 1)]


@pytest.mark.parametrize("who, waiting, done", [("core0", 0, 1), ("core1", 1, 0)])
def test_sync_all_on_some_cores_only_is_a_deadlock(who, waiting, done):
    with pytest.raises(asc.KernelError, match=rf"sync_all.*deadlock: aiv\({waiting}\) wait in sync_all but "
                                              rf"aiv\({done}\) finished without calling it") as info:
        sync_kernel[2](np.zeros(4, np.int32), who)
    # the waiting core's own sync_all call is the line that never returns
    assert (info.value.core, info.value.file, info.value.line) == (waiting, THIS_FILE, line_of(sync_kernel, f"sync-{who}"))


@asc.jit
def hidden_sync_kernel(g: asc.GlobalAddress, BARRIER: asc.ConstExpr):
    t = gm_view(g, 4)
    idx = asc.get_block_idx()
    asc.printf("core %d starts\\n", idx)
    t.set_value(idx, t.get_value(idx) + 1)
    if idx == 1:
        t.set_value(2, 42)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)  # scalar stores reach GM (data cache)
    BARRIER()  # sync_all, which the kernel's source does not name
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
    if idx == 0:
        t.set_value(3, t.get_value(2))


def test_sync_all_reached_through_a_callable_argument_still_synchronises():
    g = np.zeros(4, np.int32)
    result = hidden_sync_kernel[2](g, asc.sync_all)
    assert g.tolist() == [1, 1, 42, 42]  # each core incremented its counter exactly once
    assert result.trace.ops() == {"get_value": 3, "set_value": 4, "sync_all": 2, "data_cache_clean_and_invalid": 4}


def test_sync_all_reached_through_a_callable_argument_prints_once(capsys):
    hidden_sync_kernel[2](np.zeros(4, np.int32), asc.sync_all)
    assert capsys.readouterr().out == "[aiv(0)] core 0 starts\n[aiv(1)] core 1 starts\n"


def test_sync_all_deadlock_with_three_cores_names_all_finished_cores():
    with pytest.raises(asc.KernelError, match=r"aiv\(0\) wait in sync_all but aiv\(1, 2\) finished"):
        sync_kernel[3](np.zeros(4, np.int32), "core0")


# ---------------------------------------------------------------------------------------------
# Trace
# ---------------------------------------------------------------------------------------------

@asc.jit
def trace_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, s: float, TILE: asc.ConstExpr[int]):
    start = asc.get_block_idx() * TILE
    xg = gm_view(x + start, TILE)
    yg = gm_view(y + start, TILE)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_in, num=1, len=TILE * 2)
    pipe.init_buffer(que=q_out, num=1, len=TILE * 2)
    a = q_in.alloc_tensor(asc.float16)  # <alloc_in>
    asc.data_copy(a, xg, TILE)  # <copy_in>
    q_in.enque(a)  # <enque_in>
    a = q_in.deque(asc.float16)  # <deque_in>
    b = q_out.alloc_tensor(asc.float16)  # <alloc_out>
    asc.muls(b, a, s, TILE)  # <muls>
    q_out.enque(b)  # <enque_out>
    q_in.free_tensor(a)  # <free_in>
    b = q_out.deque(asc.float16)  # <deque_out>
    asc.data_copy(yg, b, TILE)  # <copy_out>
    q_out.free_tensor(b)  # <free_out>
    asc.set_flag(asc.HardEvent.MTE3_S, 3)  # <set_flag>
    asc.wait_flag(asc.HardEvent.MTE3_S, 3)  # <wait_flag>
    v = yg.get_value(0)  # <get_value>
    yg.set_value(1, v)  # <set_value>
    asc.pipe_barrier(asc.PipeID.PIPE_V)  # <pipe_barrier>


def _data(q, slot=0):
    return ("data", q, slot)


def _free(q, slot=0):
    return ("free", q, slot)


# marker, op, pipe, sync. q_in (VECIN) is queue 0: MTE2 -> V; q_out (VECOUT) is queue 1: V -> MTE3.
TRACE_EXPECTED = [
    ("alloc_in", "alloc_tensor", Pipe.MTE2, Sync(SyncKind.WAIT, Pipe.V, Pipe.MTE2, _free(0))),
    ("copy_in", "data_copy", Pipe.MTE2, None),
    ("enque_in", "enque", Pipe.MTE2, Sync(SyncKind.SET, Pipe.MTE2, Pipe.V, _data(0))),
    ("deque_in", "deque", Pipe.V, Sync(SyncKind.WAIT, Pipe.MTE2, Pipe.V, _data(0))),
    ("alloc_out", "alloc_tensor", Pipe.V, Sync(SyncKind.WAIT, Pipe.MTE3, Pipe.V, _free(1))),
    ("muls", "muls", Pipe.V, None),
    ("enque_out", "enque", Pipe.V, Sync(SyncKind.SET, Pipe.V, Pipe.MTE3, _data(1))),
    ("free_in", "free_tensor", Pipe.V, Sync(SyncKind.SET, Pipe.V, Pipe.MTE2, _free(0))),
    ("deque_out", "deque", Pipe.MTE3, Sync(SyncKind.WAIT, Pipe.V, Pipe.MTE3, _data(1))),
    ("copy_out", "data_copy", Pipe.MTE3, None),
    ("free_out", "free_tensor", Pipe.MTE3, Sync(SyncKind.SET, Pipe.MTE3, Pipe.V, _free(1))),
    ("set_flag", "set_flag", Pipe.MTE3, Sync(SyncKind.SET, Pipe.MTE3, Pipe.S, ("flag", "MTE3_S", 3))),
    ("wait_flag", "wait_flag", Pipe.S, Sync(SyncKind.WAIT, Pipe.MTE3, Pipe.S, ("flag", "MTE3_S", 3))),
    ("get_value", "get_value", Pipe.S, None),
    ("set_value", "set_value", Pipe.S, None),
    ("pipe_barrier", "pipe_barrier", Pipe.V, Sync(SyncKind.BARRIER, Pipe.V, Pipe.V, ("PIPE_V",))),
]


def test_trace_records_every_instruction_with_pipe_sync_and_source_line():
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    result = trace_kernel[2](x, y, 0.5, 32)
    expected = x * np.float16(0.5)
    expected[1], expected[33] = expected[0], expected[32]
    assert_bits_equal(y, expected)

    trace = result.trace
    assert (trace.kernel, trace.soc, trace.block_dim, trace.ub_bytes) == ("trace_kernel", "Ascend910B1", 2, UB_910B1)
    assert {n: (b.dtype, b.nbytes) for n, b in trace.gm.items()} == {"x": ("float16", 128), "y": ("float16", 128)}
    assert len(trace) == 2 * len(TRACE_EXPECTED)
    for core, instrs in enumerate(trace.cores):
        got = [(i.core, i.seq, i.op, i.pipe, i.sync, i.file, i.line) for i in instrs]
        want = [(core, seq, op, pipe, sync, THIS_FILE, line_of(trace_kernel, marker))
                for seq, (marker, op, pipe, sync) in enumerate(TRACE_EXPECTED)]
        assert got == want


def test_trace_data_copy_byte_ranges():
    x = np.arange(64, dtype=np.float16)
    result = trace_kernel[2](x, np.zeros(64, np.float16), 0.5, 32)
    core1 = result.trace.cores[1]
    copy_in, muls, copy_out = core1[1], core1[5], core1[9]
    # aiv(1) handles elements [32, 64): GM bytes [64, 128); q_in at UB 0, q_out at UB 64
    assert (copy_in.reads, copy_in.writes, copy_in.undefined) == (
        (Access(Mem.GM, "x", 64, 128, "x"),), (Access(Mem.UB, "UB", 0, 64, "q_in[0]"),), ())
    assert (copy_in.count, copy_in.nbytes, copy_in.dtype) == (32, 64, "float16")
    assert (muls.reads, muls.writes) == ((Access(Mem.UB, "UB", 0, 64, "q_in[0]"),),
                                         (Access(Mem.UB, "UB", 64, 128, "q_out[0]"),))
    assert (copy_out.reads, copy_out.writes) == ((Access(Mem.UB, "UB", 64, 128, "q_out[0]"),),
                                                 (Access(Mem.GM, "y", 64, 128, "y"),))
    get_value, set_value = core1[13], core1[14]
    assert get_value.reads == (Access(Mem.GM, "y", 64, 66, "y"),) and get_value.writes == ()
    assert set_value.writes == (Access(Mem.GM, "y", 66, 68, "y"),) and set_value.reads == ()
    assert result.trace.ops() == {op: 2 * n for op, n in {
        "alloc_tensor": 2, "data_copy": 2, "enque": 2, "deque": 2, "muls": 1, "free_tensor": 2, "set_flag": 1,
        "wait_flag": 1, "get_value": 1, "set_value": 1, "pipe_barrier": 1}.items()}


# ---------------------------------------------------------------------------------------------
# Explicit synchronisation
# ---------------------------------------------------------------------------------------------

@asc.jit
def flag_kernel(OP: asc.ConstExpr, ARG: asc.ConstExpr, EVENT_ID: asc.ConstExpr):
    if OP is asc.pipe_barrier:
        OP(ARG)  # <barrier>
    else:
        OP(ARG, EVENT_ID)  # <flag>


@pytest.mark.parametrize("op", [asc.set_flag, asc.wait_flag], ids=["set_flag", "wait_flag"])
@pytest.mark.parametrize("event_id", [-1, 8, 100])
def test_flag_event_id_outside_0_8_raises(op, event_id):
    with raises_at(flag_kernel, "flag", rf"{op.__name__} on aiv\(0\).*event id {event_id} outside \[0, 8\)"):
        flag_kernel[1](op, asc.HardEvent.MTE2_V, event_id)


@pytest.mark.parametrize("event_id", [0, 7])
def test_flag_event_ids_0_to_7_work(event_id):
    result = flag_kernel[1](asc.set_flag, asc.HardEvent.V_MTE3, event_id)
    (instr,) = result.trace.cores[0]
    assert (instr.pipe, instr.sync) == (Pipe.V, Sync(SyncKind.SET, Pipe.V, Pipe.MTE3, ("flag", "V_MTE3", event_id)))


def test_pipe_barrier_pipe_s_raises():
    with raises_at(flag_kernel, "barrier", r"pipe_barrier takes PipeID\.PIPE_V, PIPE_MTE2, PIPE_MTE3 or PIPE_ALL"):
        flag_kernel[1](asc.pipe_barrier, asc.PipeID.PIPE_S, None)


def test_pipe_barrier_all_orders_v_mte2_mte3():
    result = flag_kernel[1](asc.pipe_barrier, asc.PipeID.PIPE_ALL, None)
    assert [(i.pipe, i.sync.kind) for i in result.trace] == [
        (Pipe.V, SyncKind.BARRIER), (Pipe.MTE2, SyncKind.BARRIER), (Pipe.MTE3, SyncKind.BARRIER)]


# ---------------------------------------------------------------------------------------------
# UB sub-tensors
# ---------------------------------------------------------------------------------------------

@asc.jit
def negative_offset_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress):
    xg = gm_view(x, 64)
    yg = gm_view(y, 64)
    pipe = asc.TPipe()
    first = ub_buf(pipe, asc.float16, 64)
    second = ub_buf(pipe, asc.float16, 64)
    asc.duplicate(first, 5.0, 64)
    asc.data_copy(second[-16:], xg, 16)  # <negative>
    asc.data_copy(yg, first, 64)


def test_negative_local_sub_tensor_offset_raises():
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    with raises_at(negative_offset_kernel, "negative", r"^LocalTensor\[\] on aiv\(0\) at .*: ub\[-16:\]: a sub-tensor "
                                                       "offset must be") as info:
        negative_offset_kernel[1](x, y)
    # second is the second 64 x half TBuf: UB bytes [128, 256); element -16 would be byte 128 - 32 = 96
    err = info.value
    assert (err.kind, err.tensor, err.mem, err.start, err.byte_range[0]) == ("out-of-bounds", "ub", "UB", -16, 96)
