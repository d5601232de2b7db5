"""An atomic store reads GM (SetAtomicAdd.md: "将待拷贝的内容和GM已有内容进行求和，然后将求和结果写入GM"):
the Trace records that read (same bytes as the write, same atomic mark), the sanitizer still treats
atomic stores of one kind as commuting, and it reports a plain store racing with them.
"""

from __future__ import annotations

import numpy as np
import pytest

import fusekit
from fusekit import asc


@asc.jit
def store(x: asc.GlobalAddress, y: asc.GlobalAddress, N: asc.ConstExpr[int], ATOMIC_CORES: asc.ConstExpr,
          PAD: asc.ConstExpr[bool]):
    """Core i stores row i of x into y: atomically (add, float32) on the cores in ATOMIC_CORES, plainly elsewhere."""
    i = asc.get_block_idx()
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x + i * N, N)
    yg.set_global_buffer(y, N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=N * 4)
    t = buf.get(asc.float32)
    asc.data_copy(t, xg, N)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    if int(i) in ATOMIC_CORES:
        asc.set_atomic_add(asc.float32)
    if PAD:
        asc.data_copy_pad(yg, t, asc.DataCopyExtParams(1, N * 4, 0, 0, 0))
    else:
        asc.data_copy(yg, t, N)
    asc.set_atomic_none()


@pytest.mark.parametrize("pad", [False, True])
def test_atomic_store_records_its_gm_read(pad):
    rows = np.ones((2, 64), np.float32)
    y = np.full(64, 3.0, np.float32)
    trace = asc.launch(store, 2, (rows, y, 64, (0,), pad)).trace
    stores = [i for i in trace if i.writes and i.writes[0].mem is asc.Mem.GM]
    atomic_store, plain_store = sorted(stores, key=lambda i: i.core)
    gm_reads = [a for a in atomic_store.reads if a.mem is asc.Mem.GM]
    assert [(a.buffer, a.start, a.stop, a.atomic) for a in gm_reads] == \
        [(w.buffer, w.start, w.stop, "add.float32") for w in atomic_store.writes]
    assert not [a for a in plain_store.reads if a.mem is asc.Mem.GM]


def test_sanitizer_atomic_reads_commute_but_a_plain_store_races():
    rows = np.ones((6, 64), np.float32)
    report = fusekit.sanitize(store)[6](rows, np.zeros(64, np.float32), 64, tuple(range(6)), False)
    assert report.ok, report.to_text()
    # core 0 stores plainly, unordered with the other cores' read-modify-writes: a race both ways
    report = fusekit.sanitize(store)[6](rows, np.zeros(64, np.float32), 64, tuple(range(1, 6)), False)
    kinds = {f.kind for f in report.findings if f.tool == "racecheck"}
    assert {"RAW", "WAW"} & kinds, report.to_text()
    assert any(f.kind in ("RAW", "WAR") for f in report.findings), report.to_text()  # the GM read is seen
