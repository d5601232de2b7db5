"""A per-core split that is not a multiple of 32 bytes: neighbouring cores share a GM block.

``y = x + 1`` on 100 float32 over 8 cores. ``split_unaligned`` gives each core
``ceil(100 / 8) = 13`` elements (52 B; the last core 9) and moves them with DataCopyPad, which
copies exactly 52 B. But GM moves in 32 B blocks: aiv(0) writes y bytes [0, 52) and aiv(1) bytes
[52, 104), both inside block [32, 64), and so on for every pair of neighbours (52 k is a multiple
of 32 only for k = 0 or 8). memcheck "overlapping block write", first between aiv(0) and aiv(1)
at the copy-out, 7 pairs in all.

``split_aligned`` is the corrected kernel: the host rounds the per-core length up to 8 float32
(32 B), so 16 per core on 7 cores (the last one 4), and each core's range starts on a block.
"""

import numpy as np

from fusekit import asc

from . import Case, Expect, rand


@asc.jit
def add_one(per_core: int, total: int, x: asc.GlobalAddress, y: asc.GlobalAddress, TILE: asc.ConstExpr[int]):
    start = asc.get_block_idx() * per_core
    n = per_core
    if start + per_core > total:
        n = total - start
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, n)
    y_gm.set_global_buffer(y + start, n)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, 1)
    q_y = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_x, num=1, len=TILE * 4)
    pipe.init_buffer(que=q_y, num=1, len=TILE * 4)
    x_local = q_x.alloc_tensor(asc.float32)
    asc.data_copy_pad(x_local, x_gm, asc.DataCopyExtParams(1, n * 4, 0, 0, 0),
                      asc.DataCopyPadExtParams(asc.float32, False, 0, 0, 0))
    q_x.enque(x_local)
    x_local = q_x.deque(asc.float32)
    y_local = q_y.alloc_tensor(asc.float32)
    asc.adds(y_local, x_local, 1.0, n)
    q_y.enque(y_local)
    q_x.free_tensor(x_local)
    y_local = q_y.deque(asc.float32)
    asc.data_copy_pad(y_gm, y_local, asc.DataCopyExtParams(1, n * 4, 0, 0, 0))  # <split-out>
    q_y.free_tensor(y_local)


@asc.jit
def split_unaligned(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int):
    per_core = (total + asc.get_block_num() - 1) // asc.get_block_num()  # 13 float32 = 52 B
    add_one(per_core, total, x, y, 64)


@asc.jit
def split_aligned(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, per_core: int):
    add_one(per_core, total, x, y, 64)


def aligned_split(total: int, core_num: int) -> tuple[int, int]:
    """Host tiling: (per-core length rounded up to 32 B of float32, cores used)."""
    per_core = -(-total // core_num)
    per_core = -(-per_core // 8) * 8
    return per_core, -(-total // per_core)


def build_unaligned(size: int):
    return (rand(size, np.float32, 6), np.zeros(size, np.float32), size), {}


def build_aligned(size: int):
    return (rand(size, np.float32, 6), np.zeros(size, np.float32), size, aligned_split(size, 8)[0]), {}


def correct(arrays: dict) -> None:
    np.testing.assert_array_equal(arrays["y"], arrays["x"] + np.float32(1))


CASES = [
    Case("core-split/13-per-core", split_unaligned, 8, 100, build_unaligned, check=correct,
         expect=(Expect("memcheck", "overlapping block write", ("split-out", "split-out"), cores=tuple(range(8)),
                        pipes=("MTE3", "MTE3"), mem="GM", buffer="y", span=(32, 64), count=7,
                        says=("aiv(0) and aiv(1)", "32 B")),),
         defect="per-core length 13 x 4 B = 52 B is not a multiple of 32 B"),
    Case("core-split/aligned", split_aligned, aligned_split(100, 8)[1], 100, build_aligned, check=correct),
]
