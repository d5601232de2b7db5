"""Misused TQue calls: a deque with no enque, a leaked tensor, a double free.

``y = relu(x) * 3`` on one core in tiles of TILE float32 (aligned sizes), with a VECCALC queue
for the intermediate relu(x):

- ``deque_without_enque``: CopyIn forgets ``q_x.enque(x_local)``; Compute's ``q_x.deque`` finds
  the queue empty: on the NPU it waits forever. synccheck ``deadlock`` at the deque.
- ``leak_tmp``: Compute never frees the VECCALC tensor. With one tile, the kernel ends holding it:
  memcheck ``leak``, located at its alloc_tensor. With two tiles the second alloc_tensor finds the
  queue's only buffer taken and waits forever: synccheck ``deadlock`` at the same alloc_tensor.
- ``double_free``: CopyOut frees y_local twice: memcheck ``double-free`` at the second free.
- ``queues_ok``: the corrected kernel.
"""

import numpy as np

from fusekit import asc

from . import Case, Expect, rand


@asc.jit
def setup(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, 1)
    q_tmp = asc.TQue(asc.TPosition.VECCALC, 1)
    q_y = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_x, num=1, len=TILE * 4)
    pipe.init_buffer(que=q_tmp, num=1, len=TILE * 4)
    pipe.init_buffer(que=q_y, num=1, len=TILE * 4)
    return x_gm, y_gm, pipe, q_x, q_tmp, q_y


@asc.jit
def copy_in(offset: int, x_gm: asc.GlobalTensor, q_x: asc.TQue, TILE: asc.ConstExpr[int]):
    x_local = q_x.alloc_tensor(asc.float32)
    asc.data_copy(x_local, x_gm[offset:], TILE)
    q_x.enque(x_local)


@asc.jit
def copy_in_no_enque(offset: int, x_gm: asc.GlobalTensor, q_x: asc.TQue, TILE: asc.ConstExpr[int]):
    x_local = q_x.alloc_tensor(asc.float32)
    asc.data_copy(x_local, x_gm[offset:], TILE)


@asc.jit
def compute(q_x: asc.TQue, q_tmp: asc.TQue, q_y: asc.TQue, TILE: asc.ConstExpr[int]):
    x_local = q_x.deque(asc.float32)  # <q-deque>
    tmp = q_tmp.alloc_tensor(asc.float32)
    y_local = q_y.alloc_tensor(asc.float32)
    asc.relu(tmp, x_local, TILE)
    asc.muls(y_local, tmp, 3.0, TILE)
    q_y.enque(y_local)
    q_tmp.free_tensor(tmp)
    q_x.free_tensor(x_local)


@asc.jit
def compute_leak(q_x: asc.TQue, q_tmp: asc.TQue, q_y: asc.TQue, TILE: asc.ConstExpr[int]):
    x_local = q_x.deque(asc.float32)
    tmp = q_tmp.alloc_tensor(asc.float32)  # <q-leak-alloc>
    y_local = q_y.alloc_tensor(asc.float32)
    asc.relu(tmp, x_local, TILE)
    asc.muls(y_local, tmp, 3.0, TILE)
    q_y.enque(y_local)
    q_x.free_tensor(x_local)


@asc.jit
def copy_out(offset: int, y_gm: asc.GlobalTensor, q_y: asc.TQue, TILE: asc.ConstExpr[int]):
    y_local = q_y.deque(asc.float32)
    asc.data_copy(y_gm[offset:], y_local, TILE)
    q_y.free_tensor(y_local)


@asc.jit
def copy_out_double_free(offset: int, y_gm: asc.GlobalTensor, q_y: asc.TQue, TILE: asc.ConstExpr[int]):
    y_local = q_y.deque(asc.float32)
    asc.data_copy(y_gm[offset:], y_local, TILE)
    q_y.free_tensor(y_local)
    q_y.free_tensor(y_local)  # <q-double-free>


@asc.jit
def deque_without_enque(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    x_gm, y_gm, pipe, q_x, q_tmp, q_y = setup(x, y, n, TILE)
    for offset in range(0, n, TILE):
        copy_in_no_enque(offset, x_gm, q_x, TILE)
        compute(q_x, q_tmp, q_y, TILE)
        copy_out(offset, y_gm, q_y, TILE)


@asc.jit
def leak_tmp(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    x_gm, y_gm, pipe, q_x, q_tmp, q_y = setup(x, y, n, TILE)
    for offset in range(0, n, TILE):
        copy_in(offset, x_gm, q_x, TILE)
        compute_leak(q_x, q_tmp, q_y, TILE)
        copy_out(offset, y_gm, q_y, TILE)


@asc.jit
def double_free(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    x_gm, y_gm, pipe, q_x, q_tmp, q_y = setup(x, y, n, TILE)
    for offset in range(0, n, TILE):
        copy_in(offset, x_gm, q_x, TILE)
        compute(q_x, q_tmp, q_y, TILE)
        copy_out_double_free(offset, y_gm, q_y, TILE)


@asc.jit
def queues_ok(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, TILE: asc.ConstExpr[int]):
    x_gm, y_gm, pipe, q_x, q_tmp, q_y = setup(x, y, n, TILE)
    for offset in range(0, n, TILE):
        copy_in(offset, x_gm, q_x, TILE)
        compute(q_x, q_tmp, q_y, TILE)
        copy_out(offset, y_gm, q_y, TILE)


TILE = 64


def build(size: int):
    return (rand(size, np.float32, 8), np.zeros(size, np.float32), size, TILE), {}


def correct(arrays: dict) -> None:
    np.testing.assert_array_equal(arrays["y"], np.maximum(arrays["x"], 0) * np.float32(3))


CASES = [
    Case("queues/deque-without-enque", deque_without_enque, 1, TILE, build,
         expect=(Expect("synccheck", "deadlock", ("q-deque",), cores=(0,), says=("empty", "enque")),),
         defect="CopyIn never enqueues x_local"),
    Case("queues/leak", leak_tmp, 1, TILE, build,
         expect=(Expect("memcheck", "leak", ("q-leak-alloc",), cores=(0,), says=("never freed", "free_tensor")),),
         defect="Compute never frees its VECCALC tensor (one tile: the kernel ends holding it)"),
    Case("queues/leak-second-tile", leak_tmp, 1, 2 * TILE, build,
         expect=(Expect("synccheck", "deadlock", ("q-leak-alloc",), cores=(0,),
                        says=("in use", "free_tensor")),),
         defect="Compute never frees its VECCALC tensor (two tiles: the second alloc waits forever)"),
    Case("queues/double-free", double_free, 1, TILE, build,
         expect=(Expect("memcheck", "double-free", ("q-double-free",), cores=(0,), says=("already freed",)),),
         defect="CopyOut frees y_local twice"),
    Case("queues/ok", queues_ok, 1, 3 * TILE, build, check=correct),
]
