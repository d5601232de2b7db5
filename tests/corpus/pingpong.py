"""Ping-pong (double buffering) over two halves of a TBuf with explicit flags, ids per half.

``y = x * scale`` in tiles of TILE float32. Tile i uses half ``h = i % 2`` of the input TBuf and
of the output TBuf, so the copy-in of tile i + 1 (other half) can overlap the Muls of tile i. The
halves are guarded by flags whose event id is the half:

- V -> MTE2 "input half h is free": set for both halves before the loop, waited before a
  copy-in into half h, set again after the Muls read half h, drained after the loop;
- MTE3 -> V "output half h is free": the same for the output halves;
- MTE2 -> V and V -> MTE3: data ready, set and waited within the iteration.

``pingpong_one_id`` uses event id 0 for both halves (``EVENT = 0`` instead of ``h``). Its
prologue sets V_MTE2 id 0 (and MTE3_V id 0) twice in a row, and in the loop each half's "free"
set comes while the other half's is still pending. A flag is one bit on the NPU: a second set
before the wait is lost, so the waits fall one set behind (the copy-in of tile 1 waits for the
Muls of tile 0: no overlap) and the last wait_flag after the loop may hang forever, depending on
timing. synccheck reports each redundant set_flag (prologue/prologue, prologue/loop and
loop/loop, for both events). No data race: a wait can only be satisfied by the set it pairs with
or a later one on the same in-order pipe, so racecheck correctly stays silent.
"""

import numpy as np

from fusekit import asc

from . import Case, Expect, rand

E = asc.HardEvent


@asc.jit
def pingpong(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, scale: float, TILE: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    pipe = asc.TPipe()
    in_buf = asc.TBuf(asc.TPosition.VECIN)
    out_buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=in_buf, num=2 * TILE * 4)
    pipe.init_buffer(buf=out_buf, num=2 * TILE * 4)
    x_all = in_buf.get(asc.float32)
    y_all = out_buf.get(asc.float32)
    asc.set_flag(E.V_MTE2, 0)
    asc.set_flag(E.V_MTE2, 1)
    asc.set_flag(E.MTE3_V, 0)
    asc.set_flag(E.MTE3_V, 1)
    for i in range(n // TILE):
        h = i % 2
        x_local = x_all[h * TILE:]
        y_local = y_all[h * TILE:]
        asc.wait_flag(E.V_MTE2, h)
        asc.data_copy(x_local, x_gm[i * TILE:], TILE)
        asc.set_flag(E.MTE2_V, h)
        asc.wait_flag(E.MTE2_V, h)
        asc.wait_flag(E.MTE3_V, h)
        asc.muls(y_local, x_local, scale, TILE)
        asc.set_flag(E.V_MTE2, h)
        asc.set_flag(E.V_MTE3, h)
        asc.wait_flag(E.V_MTE3, h)
        asc.data_copy(y_gm[i * TILE:], y_local, TILE)
        asc.set_flag(E.MTE3_V, h)
    asc.wait_flag(E.V_MTE2, 0)
    asc.wait_flag(E.V_MTE2, 1)
    asc.wait_flag(E.MTE3_V, 0)
    asc.wait_flag(E.MTE3_V, 1)


@asc.jit
def pingpong_one_id(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, scale: float, TILE: asc.ConstExpr[int]):
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, n)
    y_gm.set_global_buffer(y, n)
    pipe = asc.TPipe()
    in_buf = asc.TBuf(asc.TPosition.VECIN)
    out_buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=in_buf, num=2 * TILE * 4)
    pipe.init_buffer(buf=out_buf, num=2 * TILE * 4)
    x_all = in_buf.get(asc.float32)
    y_all = out_buf.get(asc.float32)
    EVENT = 0
    asc.set_flag(E.V_MTE2, EVENT)  # <pp-free-in-0>
    asc.set_flag(E.V_MTE2, EVENT)  # <pp-free-in-1>
    asc.set_flag(E.MTE3_V, EVENT)  # <pp-free-out-0>
    asc.set_flag(E.MTE3_V, EVENT)  # <pp-free-out-1>
    for i in range(n // TILE):
        h = i % 2
        x_local = x_all[h * TILE:]
        y_local = y_all[h * TILE:]
        asc.wait_flag(E.V_MTE2, EVENT)
        asc.data_copy(x_local, x_gm[i * TILE:], TILE)
        asc.set_flag(E.MTE2_V, EVENT)
        asc.wait_flag(E.MTE2_V, EVENT)
        asc.wait_flag(E.MTE3_V, EVENT)
        asc.muls(y_local, x_local, scale, TILE)
        asc.set_flag(E.V_MTE2, EVENT)  # <pp-free-in-loop>
        asc.set_flag(E.V_MTE3, EVENT)
        asc.wait_flag(E.V_MTE3, EVENT)
        asc.data_copy(y_gm[i * TILE:], y_local, TILE)
        asc.set_flag(E.MTE3_V, EVENT)  # <pp-free-out-loop>
    asc.wait_flag(E.V_MTE2, EVENT)
    asc.wait_flag(E.V_MTE2, EVENT)
    asc.wait_flag(E.MTE3_V, EVENT)
    asc.wait_flag(E.MTE3_V, EVENT)


TILE, TILES = 64, 4


def build(size: int):
    return (rand(size, np.float32, 4), np.zeros(size, np.float32), size, 0.5, TILE), {}


def redundant(first: str, second: str, pipes: tuple[str, str], count: int) -> Expect:
    return Expect("synccheck", "redundant set_flag", (first, second), cores=(0,), pipes=pipes, count=count,
                  says=("one bit", "another event id"))


def y_is_x_times_half(arrays: dict) -> None:
    np.testing.assert_array_equal(arrays["y"], arrays["x"] * np.float32(0.5))


CASES = [
    Case("pingpong/one-id", pingpong_one_id, 1, TILE * TILES, build, replay=True, check=y_is_x_times_half,
         expect=(redundant("pp-free-in-0", "pp-free-in-1", ("V", "MTE2"), 1),
                 redundant("pp-free-in-1", "pp-free-in-loop", ("V", "MTE2"), 1),
                 redundant("pp-free-in-loop", "pp-free-in-loop", ("V", "MTE2"), TILES - 1),
                 redundant("pp-free-out-0", "pp-free-out-1", ("MTE3", "V"), 1),
                 redundant("pp-free-out-1", "pp-free-out-loop", ("MTE3", "V"), 1),
                 redundant("pp-free-out-loop", "pp-free-out-loop", ("MTE3", "V"), TILES - 1)),
         defect="one event id for both halves of a ping-pong buffer"),
    Case("pingpong/ids-per-half", pingpong, 1, TILE * TILES, build, replay=True, check=y_is_x_times_half),
    Case("pingpong/ids-per-half-odd-tiles", pingpong, 1, TILE * (TILES + 1), build, check=y_is_x_times_half),
]
