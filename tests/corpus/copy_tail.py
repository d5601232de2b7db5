"""A plain DataCopy of an unaligned tail.

``y = x * 2`` on one core in tiles of TILE = 64 float32 through TQues (depth 1). ``tail_data_copy``
moves the tail with ``data_copy`` too: 100 elements = one tile and a tail of 36 float32 = 144 B,
not a multiple of 32 B. The simulator (strict) stops at the tail's copy-in: memcheck
``unaligned-length``. On the NPU (``strict=False``) DataCopy silently rounds 144 B down to 128 B:
the copy-in brings 32 elements (lanes 32..35 keep the previous tile's values), the copy-out writes
32, and y[96:100] is never written: initcheck ``output never written``, y bytes [384, 400).

``tail_data_copy_pad`` is the corrected kernel: DataCopyPad for the unaligned tail.
"""

import numpy as np

from fusekit import asc

from . import Case, Expect, rand


@asc.jit
def tail_data_copy(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, 1)
    q_y = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_x, num=1, len=TILE * 4)
    pipe.init_buffer(que=q_y, num=1, len=TILE * 4)
    for offset in range(0, n, TILE):
        length = n - offset
        if length > TILE:
            length = TILE
        x_local = q_x.alloc_tensor(asc.float32)
        asc.data_copy(x_local, x_gm[offset:], length)  # <ct-in>
        q_x.enque(x_local)
        x_local = q_x.deque(asc.float32)
        y_local = q_y.alloc_tensor(asc.float32)
        asc.muls(y_local, x_local, 2.0, length)
        q_y.enque(y_local)
        q_x.free_tensor(x_local)
        y_local = q_y.deque(asc.float32)
        asc.data_copy(y_gm[offset:], y_local, length)  # <ct-out>
        q_y.free_tensor(y_local)


@asc.jit
def tail_data_copy_pad(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, 1)
    q_y = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_x, num=1, len=TILE * 4)
    pipe.init_buffer(que=q_y, num=1, len=TILE * 4)
    for offset in range(0, n, TILE):
        length = n - offset
        if length > TILE:
            length = TILE
        x_local = q_x.alloc_tensor(asc.float32)
        if length * 4 % 32 == 0:
            asc.data_copy(x_local, x_gm[offset:], length)
        else:
            asc.data_copy_pad(x_local, x_gm[offset:], asc.DataCopyExtParams(1, length * 4, 0, 0, 0),
                              asc.DataCopyPadExtParams(asc.float32, False, 0, 0, 0))
        q_x.enque(x_local)
        x_local = q_x.deque(asc.float32)
        y_local = q_y.alloc_tensor(asc.float32)
        asc.muls(y_local, x_local, 2.0, length)
        q_y.enque(y_local)
        q_x.free_tensor(x_local)
        y_local = q_y.deque(asc.float32)
        if length * 4 % 32 == 0:
            asc.data_copy(y_gm[offset:], y_local, length)
        else:
            asc.data_copy_pad(y_gm[offset:], y_local, asc.DataCopyExtParams(1, length * 4, 0, 0, 0))
        q_y.free_tensor(y_local)


TILE = 64


def build(size: int):
    return (rand(size, np.float32, 7), np.zeros(size, np.float32), size, TILE), {}


def correct(arrays: dict) -> None:
    np.testing.assert_array_equal(arrays["y"], arrays["x"] * np.float32(2))


def tail_dropped(arrays: dict) -> None:
    y, x = arrays["y"], arrays["x"]
    np.testing.assert_array_equal(y[:96], x[:96] * np.float32(2))
    assert not y[96:].any(), "the rounded-down DataCopy must leave y[96:100] as it was"


CASES = [
    Case("copy-tail/strict", tail_data_copy, 1, 100, build,
         expect=(Expect("memcheck", "unaligned-length", ("ct-in",), cores=(0,),
                        says=("36 * 4 = 144 B", "round it down to 32 elements", "data_copy_pad")),),
         defect="DataCopy of a 36-element float32 tail"),
    Case("copy-tail/npu-round-down", tail_data_copy, 1, 100, build, strict=False, check=tail_dropped,
         expect=(Expect("initcheck", "output never written", (), mem="GM", buffer="y", span=(384, 400),
                        says=("output y", "rounded down to 32 B")),),
         defect="the NPU rounds the tail's DataCopy down: y[96:100] never written"),
    Case("copy-tail/aligned-size", tail_data_copy, 1, 128, build, check=correct),
    Case("copy-tail/data-copy-pad", tail_data_copy_pad, 1, 100, build, check=correct),
    Case("copy-tail/data-copy-pad-npu", tail_data_copy_pad, 1, 100, build, strict=False, check=correct),
]
