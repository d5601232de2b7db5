"""Is FusedAddScale worth existing? Its predicted NPU time against the unfused Add + Muls pair, with the timeline.

Run it:  python examples/profile_plot.py [N] [PNG]   (N float16 elements, default 262144; PNG default
                                                      fused_add_scale_profile.png; needs matplotlib)

The fused kernel is the article's (``examples/article/fused_add_scale.py``). The unfused pair is what a
framework runs without it: an Add kernel that writes ``x1 + x2`` to GM, then a Muls kernel that reads it back.
``fusekit.profile`` runs a kernel and schedules its recorded Trace on each core's pipes with the SoC's costs
(``fusekit.timing``); ``fusekit.timing.predict`` times several Traces launched one after another. The answer is
the ratio of the two times, and where the fused kernel's time goes: the launch head (a fixed cost per launch,
growing with the core count) against the transfers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import fusekit
from fusekit import asc
from fusekit.timing import predict

sys.path.insert(0, str(Path(__file__).resolve().parent / "article"))
from fused_add_scale import BUFFER_NUM, TILE, fused_add_scale, tiling  # noqa: E402  (the article's kernel)


@asc.jit
def add_kernel(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress, block_length: int,
               tile_num: int, TILE_LENGTH: asc.ConstExpr[int]):
    start = asc.get_block_idx() * block_length
    x1_gm, x2_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x1_gm.set_global_buffer(x1 + start, block_length)
    x2_gm.set_global_buffer(x2 + start, block_length)
    y_gm.set_global_buffer(y + start, block_length)
    pipe = asc.TPipe()
    q_a, q_b, q_y = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECOUT, 2)
    for q in (q_a, q_b, q_y):
        pipe.init_buffer(que=q, num=2, len=TILE_LENGTH * 2)
    for i in range(tile_num):
        a, b = q_a.alloc_tensor(asc.float16), q_b.alloc_tensor(asc.float16)
        asc.data_copy(a, x1_gm[i * TILE_LENGTH:], TILE_LENGTH)
        asc.data_copy(b, x2_gm[i * TILE_LENGTH:], TILE_LENGTH)
        q_a.enque(a)
        q_b.enque(b)
        a, b, out = q_a.deque(asc.float16), q_b.deque(asc.float16), q_y.alloc_tensor(asc.float16)
        asc.add(out, a, b, TILE_LENGTH)
        q_y.enque(out)
        q_a.free_tensor(a)
        q_b.free_tensor(b)
        out = q_y.deque(asc.float16)
        asc.data_copy(y_gm[i * TILE_LENGTH:], out, TILE_LENGTH)
        q_y.free_tensor(out)


@asc.jit
def muls_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, block_length: int, tile_num: int, scale: float,
                TILE_LENGTH: asc.ConstExpr[int]):
    start = asc.get_block_idx() * block_length
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, block_length)
    y_gm.set_global_buffer(y + start, block_length)
    pipe = asc.TPipe()
    q_x, q_y = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECOUT, 2)
    for q in (q_x, q_y):
        pipe.init_buffer(que=q, num=2, len=TILE_LENGTH * 2)
    for i in range(tile_num):
        t = q_x.alloc_tensor(asc.float16)
        asc.data_copy(t, x_gm[i * TILE_LENGTH:], TILE_LENGTH)
        q_x.enque(t)
        t, out = q_x.deque(asc.float16), q_y.alloc_tensor(asc.float16)
        asc.muls(out, t, scale, TILE_LENGTH)
        q_y.enque(out)
        q_x.free_tensor(t)
        out = q_y.deque(asc.float16)
        asc.data_copy(y_gm[i * TILE_LENGTH:], out, TILE_LENGTH)
        q_y.free_tensor(out)


def compare(n: int, scale: float = 0.5):
    """(fused Profile, unfused Profile) of ``n`` float16 elements on the article's tiling."""
    rng = np.random.default_rng(0)
    x1, x2 = rng.uniform(-4, 4, n).astype(np.float16), rng.uniform(-4, 4, n).astype(np.float16)
    tmp, y = np.zeros_like(x1), np.zeros_like(x1)
    cores, block_length, tile_num = tiling(n)
    fused = fusekit.profile(fused_add_scale)[cores](x1, x2, y, block_length, tile_num, scale, TILE, BUFFER_NUM)
    add = add_kernel[cores](x1, x2, tmp, block_length, tile_num, TILE)
    muls = muls_kernel[cores](tmp, y, block_length, tile_num, scale, TILE)
    return fused, predict([add.trace, muls.trace])


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 262144
    png = Path(argv[1]) if len(argv) > 1 else Path("fused_add_scale_profile.png")
    fused, unfused = compare(n)
    print(fused.table())
    head = fused.launches[0].overhead_us
    print(f"fused {fused.kernel_time_us:.2f} us, unfused Add + Muls {unfused.kernel_time_us:.2f} us: "
          f"{unfused.kernel_time_us / fused.kernel_time_us:.2f}x; the launch head is "
          f"{head / fused.kernel_time_us:.0%} of the fused kernel")
    fused.plot(png)
    print(f"timeline: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
