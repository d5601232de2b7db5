"""A missing sync, found on the CPU: ``y = x * scale`` in raw TBuf buffers, without and with its flags.

Run it:   python examples/sanitizer_catch.py      (prints both reports; exits 0 when the sanitizer finds the race
                                                   in the first kernel and nothing in the second)
Check it: fusekit check examples/sanitizer_catch.py:scale_racy --sizes 512,1024 --dtype float32   (exit 1: the race)

A TBuf has no queue, so no enque / deque orders the pipes for you: each hand-over between pipes needs its
set_flag / wait_flag pair. ``scale_racy`` copies x into UB on MTE2 and runs Muls on V with no ``wait_flag(MTE2_V)`` between them: on
the NPU the Muls may read the UB before the copy has landed. The simulator runs instructions in order, so the
result looks right; the sanitizer reasons about the pipes' concurrency from the recorded synchronisation and
reports the read-after-write race with both source lines, and ``replay=True`` reruns the kernel in the order the
NPU may choose, showing the wrong output. ``scale_synced`` adds the two flag pairs and is clean.
"""

from __future__ import annotations

import sys

import numpy as np

import fusekit
from fusekit import asc

N = 256  # float32 elements per core


@asc.jit
def scale_racy(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + asc.get_block_idx() * N, N)
    y_gm.set_global_buffer(y + asc.get_block_idx() * N, N)
    pipe = asc.TPipe()
    x_buf, y_buf = asc.TBuf(asc.TPosition.VECIN), asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=x_buf, num=N * 4)
    pipe.init_buffer(buf=y_buf, num=N * 4)
    x_local, y_local = x_buf.get(asc.float32), y_buf.get(asc.float32)
    asc.data_copy(x_local, x_gm, N)                # MTE2 writes x_local
    asc.muls(y_local, x_local, scale, N)           # V reads it: no wait_flag(MTE2_V) in between
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


@asc.jit
def scale_synced(x: asc.GlobalAddress, y: asc.GlobalAddress, scale: float, N: asc.ConstExpr[int]):
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + asc.get_block_idx() * N, N)
    y_gm.set_global_buffer(y + asc.get_block_idx() * N, N)
    pipe = asc.TPipe()
    x_buf, y_buf = asc.TBuf(asc.TPosition.VECIN), asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf=x_buf, num=N * 4)
    pipe.init_buffer(buf=y_buf, num=N * 4)
    x_local, y_local = x_buf.get(asc.float32), y_buf.get(asc.float32)
    asc.data_copy(x_local, x_gm, N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)          # the copy-in has landed ...
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)         # ... before V reads it
    asc.muls(y_local, x_local, scale, N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(y_gm, y_local, N)


def check_launch(n, dtype=None):
    """The host side for ``fusekit check``: one core per N elements (sizes are multiples of N)."""
    return max(1, n // N), {"N": N, "scale": 2.0}


def sanitize(kernel, cores: int = 2):
    """The sanitizer's report of ``kernel`` on ``cores`` cores of N float32 each, with the race replay."""
    x = np.arange(cores * N, dtype=np.float32)
    y = np.zeros_like(x)
    return fusekit.sanitize(kernel, outputs=["y"], replay=True)[cores](x, y, 2.0, N)


def main() -> int:
    racy, synced = sanitize(scale_racy), sanitize(scale_synced)
    print(racy.to_text())
    print(synced.to_text())
    found = [f for f in racy.findings if f.tool == "racecheck" and f.kind == "RAW"]
    return 0 if found and synced.ok else 1


if __name__ == "__main__":
    sys.exit(main())
