"""The synchronisation lives in the loop body; the tail path after the loop forgets it.

``y = x * scale`` on one core with two TBufs, in full tiles of TILE float32 and then an
unaligned tail (DataCopyPad). The loop body orders its pipes with set_flag/wait_flag
(MTE2 -> V, V -> MTE3, MTE3 -> MTE2 before the next copy-in); ``tail_unsynced`` runs the tail's
copy-in, Muls and copy-out with no flags at all, as if the loop's waits still covered them.

- n < TILE (zero full tiles, the loop with its wait_flag runs zero times): the tail's Muls may
  read x_local before its copy-in lands (RAW MTE2 -> V), the copy-out may read y_local before the
  Muls wrote it (RAW V -> MTE3).
- full tiles and no tail: every instruction runs in the synchronised loop: no finding.
- full tiles and a tail: the same two RAWs, and the tail's Muls may overwrite y_local while the
  last full tile's copy-out still reads it (WAR MTE3 -> V): nothing orders the V pipe after MTE3.

``tail_synced`` synchronises the tail as the loop does.
"""

import numpy as np

from fusekit import asc

from . import Case, Expect, rand

E = asc.HardEvent


@asc.jit
def tail_unsynced(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, scale: float, TILE: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    pipe = asc.TPipe()
    x_buf = asc.TBuf(asc.TPosition.VECIN)
    y_buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=x_buf, num=TILE * 4)
    pipe.init_buffer(buf=y_buf, num=TILE * 4)
    x_local = x_buf.get(asc.float32)
    y_local = y_buf.get(asc.float32)
    full_tiles = n // TILE
    tail = n % TILE
    for i in range(full_tiles):
        asc.data_copy(x_local, x_gm[i * TILE:], TILE)
        asc.set_flag(E.MTE2_V, 0)
        asc.wait_flag(E.MTE2_V, 0)
        asc.muls(y_local, x_local, scale, TILE)
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(y_gm[i * TILE:], y_local, TILE)  # <ts-loop-out>
        asc.set_flag(E.MTE3_MTE2, 0)
        asc.wait_flag(E.MTE3_MTE2, 0)
    if tail > 0:
        offset = full_tiles * TILE
        asc.data_copy_pad(x_local, x_gm[offset:], asc.DataCopyExtParams(1, tail * 4, 0, 0, 0),  # <ts-tail-in>
                          asc.DataCopyPadExtParams(asc.float32, False, 0, 0, 0))
        asc.muls(y_local, x_local, scale, tail)  # <ts-tail-muls>
        asc.data_copy_pad(y_gm[offset:], y_local, asc.DataCopyExtParams(1, tail * 4, 0, 0, 0))  # <ts-tail-out>


@asc.jit
def tail_synced(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, scale: float, TILE: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    pipe = asc.TPipe()
    x_buf = asc.TBuf(asc.TPosition.VECIN)
    y_buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=x_buf, num=TILE * 4)
    pipe.init_buffer(buf=y_buf, num=TILE * 4)
    x_local = x_buf.get(asc.float32)
    y_local = y_buf.get(asc.float32)
    full_tiles = n // TILE
    tail = n % TILE
    for i in range(full_tiles):
        asc.data_copy(x_local, x_gm[i * TILE:], TILE)
        asc.set_flag(E.MTE2_V, 0)
        asc.wait_flag(E.MTE2_V, 0)
        asc.muls(y_local, x_local, scale, TILE)
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy(y_gm[i * TILE:], y_local, TILE)
        asc.set_flag(E.MTE3_MTE2, 0)
        asc.wait_flag(E.MTE3_MTE2, 0)
    if tail > 0:
        offset = full_tiles * TILE
        asc.data_copy_pad(x_local, x_gm[offset:], asc.DataCopyExtParams(1, tail * 4, 0, 0, 0),
                          asc.DataCopyPadExtParams(asc.float32, False, 0, 0, 0))
        asc.set_flag(E.MTE2_V, 0)
        asc.wait_flag(E.MTE2_V, 0)
        asc.muls(y_local, x_local, scale, tail)
        asc.set_flag(E.V_MTE3, 0)
        asc.wait_flag(E.V_MTE3, 0)
        asc.data_copy_pad(y_gm[offset:], y_local, asc.DataCopyExtParams(1, tail * 4, 0, 0, 0))


TILE = 64
TB = TILE * 4  # y_local's UB address (x_local takes the first TILE * 4 bytes)


def build(size: int):
    return (rand(size, np.float32, 5), np.zeros(size, np.float32), size, 3.0, TILE), {}


def correct(arrays: dict) -> None:
    np.testing.assert_array_equal(arrays["y"], arrays["x"] * np.float32(3.0))


def tail_races(tail: int) -> tuple[Expect, ...]:
    return (Expect("racecheck", "RAW", ("ts-tail-in", "ts-tail-muls"), cores=(0,), pipes=("MTE2", "V"), mem="UB",
                   buffer="UB", span=(0, tail * 4), count=1),
            Expect("racecheck", "RAW", ("ts-tail-muls", "ts-tail-out"), cores=(0,), pipes=("V", "MTE3"), mem="UB",
                   buffer="UB", span=(TB, TB + tail * 4), count=1))


CASES = [
    Case("tail-sync/no-full-tiles", tail_unsynced, 1, 40, build, replay=True, check=correct,
         expect=tail_races(40), defect="the loop (and its wait_flag) runs zero times; the tail is unsynchronised"),
    Case("tail-sync/full-tiles-no-tail", tail_unsynced, 1, 3 * TILE, build, replay=True, check=correct),
    Case("tail-sync/full-tiles-and-tail", tail_unsynced, 1, 2 * TILE + 40, build, replay=True, check=correct,
         expect=tail_races(40) + (
             Expect("racecheck", "WAR", ("ts-loop-out", "ts-tail-muls"), cores=(0,), pipes=("MTE3", "V"), mem="UB",
                    buffer="UB", span=(TB, TB + 40 * 4), count=1),),
         defect="the tail path has none of the loop's flags"),
    Case("tail-sync/synced-no-full-tiles", tail_synced, 1, 40, build, replay=True, check=correct),
    Case("tail-sync/synced-full-tiles-and-tail", tail_synced, 1, 2 * TILE + 40, build, replay=True, check=correct),
]
