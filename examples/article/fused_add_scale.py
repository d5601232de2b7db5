"""The seed article's FusedAddScale, ``y = (x1 + x2) * scale``, written with pyasc's Python API.

Run it:   python examples/article/fused_add_scale.py [N]      (N float16 elements, default 65536)
Check it: fusekit check examples/article/fused_add_scale.py   (check_launch below; --cores C, tune varies it)

The structure is the article's KernelFusedAddScale (section 4.4): each core takes ``block_length`` elements
(its ``get_block_idx()`` share), walks them in ``TILE`` element tiles, and for each tile runs CopyIn (GM -> UB
through VECIN queues, on MTE2), Compute (``Add`` then ``Muls`` on V) and CopyOut (UB -> GM through a VECOUT
queue, on MTE3). With ``BUFFER_NUM = 2`` every queue holds two buffers, so tile i + 1 is copied in while tile i
is computed; the queues' enque / deque order the pipes, so no set_flag / wait_flag is written by hand.

The article's host tiling (section 4.3) gives each core ``ceil(n / cores)`` elements in one tile; here the
tiling keeps the per-core share a whole number of tiles, so that every DataCopy moves 32 B multiples (AD-API
DataCopy.md: "搬运的数据长度必须 32 字节对齐"), and the last core also takes the ``tail_length < TILE``
elements left over, moved with DataCopyPad, which copies any byte count (AD-API DataCopyPad.md), so any n runs.
"""

from __future__ import annotations

import sys

import numpy as np

from fusekit import asc
from fusekit.ops.elementwise import load, store  # DataCopy for whole 32 B blocks, DataCopyPad for a tail

TILE = 1024  # elements per tile: 2 KiB of float16 per buffer, 3 queues x BUFFER_NUM buffers in UB
BUFFER_NUM = 2


@asc.jit
def process_tile(offset: int, count: int, scale: float, x1_gm: asc.GlobalTensor, x2_gm: asc.GlobalTensor,
                 y_gm: asc.GlobalTensor, in_x1: asc.TQue, in_x2: asc.TQue, out_y: asc.TQue):
    """One tile of ``count`` (at most TILE_LENGTH) elements at ``offset``: CopyIn, Compute, CopyOut."""
    # CopyIn
    x1_local = in_x1.alloc_tensor(asc.float16)
    x2_local = in_x2.alloc_tensor(asc.float16)
    load(x1_local, x1_gm[offset:], count)
    load(x2_local, x2_gm[offset:], count)
    in_x1.enque(x1_local)
    in_x2.enque(x2_local)
    # Compute: Add(dst, src0, src1, count), then Muls(dst, src, scalar, count)
    x1_local = in_x1.deque(asc.float16)
    x2_local = in_x2.deque(asc.float16)
    y_local = out_y.alloc_tensor(asc.float16)
    asc.add(y_local, x1_local, x2_local, count)
    asc.muls(y_local, y_local, scale, count)
    out_y.enque(y_local)
    in_x1.free_tensor(x1_local)
    in_x2.free_tensor(x2_local)
    # CopyOut
    y_local = out_y.deque(asc.float16)
    store(y_gm[offset:], y_local, count)
    out_y.free_tensor(y_local)


@asc.jit
def fused_add_scale(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress, block_length: int,
                    tile_num: int, scale: float, TILE_LENGTH: asc.ConstExpr[int], BUFFER_NUM: asc.ConstExpr[int],
                    tail_length: int = 0):
    start = asc.get_block_idx() * block_length
    tail = 0 * tail_length  # a run-time int: pyasc keeps a variable's type across the branch below
    if asc.get_block_idx() == asc.get_block_num() - 1:
        tail = tail_length  # the last core also takes the elements after the whole tiles
    x1_gm, x2_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x1_gm.set_global_buffer(x1 + start, block_length + tail)
    x2_gm.set_global_buffer(x2 + start, block_length + tail)
    y_gm.set_global_buffer(y + start, block_length + tail)
    pipe = asc.TPipe()
    in_x1 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_x1, num=BUFFER_NUM, len=TILE_LENGTH * 2)
    pipe.init_buffer(que=in_x2, num=BUFFER_NUM, len=TILE_LENGTH * 2)
    pipe.init_buffer(que=out_y, num=BUFFER_NUM, len=TILE_LENGTH * 2)
    for i in range(tile_num):
        process_tile(i * TILE_LENGTH, TILE_LENGTH, scale, x1_gm, x2_gm, y_gm, in_x1, in_x2, out_y)
    if tail > 0:
        process_tile(tile_num * TILE_LENGTH, tail, scale, x1_gm, x2_gm, y_gm, in_x1, in_x2, out_y)


def tiling(n: int, cores: int = 48) -> tuple[int, int, int]:
    """(block_dim, block_length, tile_num) for the ``n // TILE`` whole tiles of ``n >= 0`` elements on at most
    ``cores`` AIV cores: split evenly over the most cores (up to ``cores``) that divide their count. The last core
    also takes the ``n % TILE`` elements left over (the kernel's ``tail_length``). n < TILE launches one core."""
    tiles = n // TILE
    block_dim = max(d for d in range(1, max(1, min(cores, tiles)) + 1) if tiles % d == 0)
    return block_dim, tiles // block_dim * TILE, tiles // block_dim


def check_launch(n, dtype=None, cores=None):
    """The host side for ``fusekit check`` (and ``run``, ``profile``, ``tune`` FILE.py:fused_add_scale): the
    launch of ``n`` elements on at most ``cores`` AIV cores (--cores; default 48, Ascend910B1's)."""
    block_dim, block_length, tile_num = tiling(n, cores or 48)
    return block_dim, {"block_length": block_length, "tile_num": tile_num, "tail_length": n % TILE,
                       "TILE_LENGTH": TILE, "BUFFER_NUM": BUFFER_NUM, "scale": 0.5}


def run(n: int, scale: float = 0.5, seed: int = 0):
    """Launch the kernel on ``n`` random float16 elements; returns (x1, x2, y, LaunchResult)."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(-4, 4, n).astype(np.float16)
    x2 = rng.uniform(-4, 4, n).astype(np.float16)
    y = np.zeros_like(x1)
    block_dim, block_length, tile_num = tiling(n)
    result = fused_add_scale[block_dim](x1, x2, y, block_length, tile_num, scale, TILE, BUFFER_NUM, n % TILE)
    return x1, x2, y, result


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 65536
    x1, x2, y, result = run(n)
    # the half kernel's arithmetic: the sum rounded to float16, then the product with float16(scale)
    expected = ((x1 + x2).astype(np.float16) * np.float16(0.5)).astype(np.float16)
    same = np.array_equal(y.view(np.uint16), expected.view(np.uint16))
    print(f"{n} float16 elements on {len(result.trace.cores)} cores: "
          f"{'bit-identical to' if same else 'DIFFERENT from'} numpy's float16 model")
    print("instructions:", dict(sorted(result.trace.ops().items())))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
