"""UB rules fusekit.asc enforces: layout, capacity, buffer counts, one TPipe, poisoned fresh memory, sub-tensors.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from support import gm_view, raises_at, ub_buf

UB_910B1, UB_310P3 = 196608, 262144


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


@asc.jit
def pipe_after_destroy_kernel():
    first = asc.TPipe()
    first.destroy()
    asc.TPipe()


def test_second_tpipe_raises():
    with raises_at(two_pipes_kernel, "second", "a second TPipe while the first is live"):
        two_pipes_kernel[1]()


def test_second_tpipe_after_destroy():
    pipe_after_destroy_kernel[1]()  # asc-devkit's tpipe_reuse example: Destroy, then a new TPipe


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
