"""Scalar GM access goes through the core's data cache (issue 8, item D).

Facts (AD-API 缓存控制/DataCacheCleanAndInvalid.md): the scalar unit reaches GM through a per-core
Data Cache that DMA (DataCopy) and other cores do not keep coherent; lines are 64 bytes
(SINGLE_CACHE_LINE, examples 1 and 2); lines are written back whole, so cores storing to one line
overwrite each other (example 3). pyasc 1.1.1's ``data_cache_clean_and_invalid(entire_type, dst,
dcci_dst=None)`` with ``CacheLine`` {SINGLE_CACHE_LINE 0, ENTIRE_DATA_CACHE 1} and ``DcciDst``
{CACHELINE_ALL 0, CACHELINE_UB 1, CACHELINE_OUT 2, CACHELINE_ATOMIC 3} (``language/basic/cache.py``,
``language/core/enums.py``). Expected values follow from those facts, not from fusekit's output.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import fusekit
from fusekit import asc
from fusekit.asc.trace import Access, Mem, Pipe
from support import gm_view, ub_buf

LINE = 64  # bytes, the page's SINGLE_CACHE_LINE granule
SINGLE, ENTIRE = asc.CacheLine.SINGLE_CACHE_LINE, asc.CacheLine.ENTIRE_DATA_CACHE
OUT = asc.DcciDst.CACHELINE_OUT
CACHE_KINDS = {"shared cache line", "dirty line read by MTE", "stale cached read"}


def cache_findings(report):
    return [f for f in report.findings if f.kind in CACHE_KINDS]


def test_signature_and_enums_are_pyascs():
    params = inspect.signature(asc.data_cache_clean_and_invalid).parameters
    assert list(params) == ["entire_type", "dst", "dcci_dst"] and params["dcci_dst"].default is None
    assert [(m.name, int(m)) for m in asc.CacheLine] == [("SINGLE_CACHE_LINE", 0), ("ENTIRE_DATA_CACHE", 1)]
    assert [(m.name, int(m)) for m in asc.DcciDst] == [("CACHELINE_ALL", 0), ("CACHELINE_UB", 1),
                                                       ("CACHELINE_OUT", 2), ("CACHELINE_ATOMIC", 3)]


# -- the example: scalar stores of neighbouring cores into one 64 B line --------------

@asc.jit
def scatter_kernel(o: asc.GlobalAddress, STRIDE: asc.ConstExpr[int]):
    g = gm_view(o)
    g.set_value(asc.get_block_idx() * STRIDE, 12345)


@pytest.mark.parametrize("stride", [8, 16, 1])
def test_cores_storing_into_one_line_are_flagged(stride):
    cores = 16
    o = np.zeros(cores * 16, np.int32)
    report = fusekit.sanitize(scatter_kernel)[cores](o, stride)
    lines = {}  # independent model: which cores' stores fall in each 64 B line
    for e in range(cores):
        lines.setdefault(e * stride * 4 // LINE, []).append(e)
    sharing = sorted(c for members in lines.values() if len(members) > 1 for c in members)
    found = [f for f in report.findings if f.kind == "shared cache line"]
    assert sorted({c for f in found for c in f.cores}) == sharing
    assert all(f.tool == "memcheck" and f.mem == "GM" and f.buffer == "o" and f.stop - f.start == LINE
               for f in found)
    assert bool(found) == (stride * 4 < LINE)  # 8 x int32 = 32 B apart: shared; 16 x int32 = 64 B: not


def test_store_one_line_per_core_with_dcci_and_sync_is_clean():
    @asc.jit
    def k(o: asc.GlobalAddress):
        g = gm_view(o)
        g.set_value(asc.get_block_idx() * 16, 7)
        asc.data_cache_clean_and_invalid(SINGLE, g[asc.get_block_idx() * 16:], OUT)

    o = np.zeros(4 * 16, np.int32)
    report = fusekit.sanitize(k)[4](o)
    assert not cache_findings(report)
    assert o[::16].tolist() == [7] * 4


# -- a scalar store, then an MTE read of the same GM -------------------------------------------

@asc.jit
def store_then_copy(x: asc.GlobalAddress, y: asc.GlobalAddress, DCCI: asc.ConstExpr[bool]):
    g, out = gm_view(x, 8), gm_view(y, 8)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.int32, 8)
    g.set_value(0, 12345)
    if DCCI:
        asc.data_cache_clean_and_invalid(SINGLE, g, OUT)
    asc.set_flag(asc.HardEvent.S_MTE2, 0)
    asc.wait_flag(asc.HardEvent.S_MTE2, 0)
    asc.data_copy(t, g, 8)  # <read>
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(out, t, 8)


@pytest.mark.parametrize("dcci", [False, True])
def test_mte_read_after_scalar_store_needs_dcci(dcci):
    x, y = np.full(8, -1, np.int32), np.zeros(8, np.int32)
    report = fusekit.sanitize(store_then_copy)[1](x, y, dcci)
    # without the clean, GM still holds -1 when MTE2 reads it (the store sits in the data cache)
    assert y[0] == (12345 if dcci else -1)
    assert x[0] == 12345  # the line reaches GM at the latest when the kernel ends
    found = cache_findings(report)
    if dcci:
        assert found == []
    else:
        (f,) = found
        assert (f.kind, f.tool, f.buffer) == ("dirty line read by MTE", "memcheck", "x")
        assert f.ops == ("set_value", "data_copy")
        assert f.locations[1].endswith(f":{inspect.getsourcelines(store_then_copy.fn)[1] + 10}")


# -- an MTE write, then a scalar read -------------------------------------------------------

@asc.jit
def copy_then_read(x: asc.GlobalAddress, y: asc.GlobalAddress, WARM: asc.ConstExpr[bool], DCCI: asc.ConstExpr[bool]):
    g, out = gm_view(x, 8), gm_view(y, 2)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.int32, 8)
    if WARM:
        out.set_value(0, g.get_value(0))  # the line is now in this core's data cache
    asc.duplicate(t, 777, 8)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(g, t, 8)
    asc.set_flag(asc.HardEvent.MTE3_S, 0)
    asc.wait_flag(asc.HardEvent.MTE3_S, 0)
    if DCCI:
        asc.data_cache_clean_and_invalid(SINGLE, g, OUT)
    out.set_value(1, g.get_value(0))


@pytest.mark.parametrize("warm, dcci", [(True, False), (True, True), (False, False), (False, True)])
def test_scalar_read_after_mte_write_needs_dcci(warm, dcci):
    x, y = np.full(8, 5, np.int32), np.zeros(2, np.int32)
    report = fusekit.sanitize(copy_then_read)[1](x, y, warm, dcci)
    # a line cached before the DMA write and not invalidated returns the old 5; otherwise GM's 777
    assert y[1] == (5 if warm and not dcci else 777)
    kinds = [f.kind for f in cache_findings(report)]
    # the GetValue rule: after another agent's write, clean and invalidate before reading
    assert kinds == ([] if dcci else ["stale cached read"])


# -- across cores, ordered by sync_all -------------------------------------------------------

@asc.jit
def cross_core(x: asc.GlobalAddress, y: asc.GlobalAddress, DCCI: asc.ConstExpr[bool]):
    g, out = gm_view(x, 8), gm_view(y, 8)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.int32, 8)
    if asc.get_block_idx() == 0:
        g.set_value(3, 99)
        if DCCI:
            asc.data_cache_clean_and_invalid(SINGLE, g, OUT)
    asc.sync_all()
    if asc.get_block_idx() == 1:
        asc.data_copy(t, g, 8)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(out, t, 8)


@pytest.mark.parametrize("dcci", [False, True])
def test_store_on_one_core_mte_read_on_another_after_sync_all(dcci):
    x, y = np.zeros(8, np.int32), np.full(8, -7, np.int32)
    report = fusekit.sanitize(cross_core)[2](x, y, dcci)
    assert y[3] == (99 if dcci else 0)
    found = cache_findings(report)
    assert [(f.kind, f.cores) for f in found] == ([] if dcci else [("dirty line read by MTE", (0, 1))])


@asc.jit
def scalar_both_cores(x: asc.GlobalAddress, y: asc.GlobalAddress, CLEAN: asc.ConstExpr[bool],
                      DROP: asc.ConstExpr[bool]):
    g = gm_view(x, 16)
    if asc.get_block_idx() == 0:
        gm_view(y, 2).set_value(0, g.get_value(8))  # core 0 caches the line [0, 64) before the barrier
    if asc.get_block_idx() == 1:
        g.set_value(1, 42)                      # core 1 stores into that line
        if CLEAN:
            asc.data_cache_clean_and_invalid(SINGLE, g, OUT)
    asc.sync_all()
    if asc.get_block_idx() == 0:
        if DROP:
            asc.data_cache_clean_and_invalid(SINGLE, g, OUT)
        gm_view(y, 2).set_value(1, g.get_value(1))


@pytest.mark.parametrize("clean, drop", [(False, False), (True, False), (False, True), (True, True)])
def test_scalar_read_of_another_cores_store_needs_clean_and_invalidate(clean, drop):
    x, y = np.zeros(16, np.int32), np.zeros(2, np.int32)
    report = fusekit.sanitize(scalar_both_cores)[2](x, y, clean, drop)
    # the store must reach GM (clean on core 1) and the reader's old line must go (drop on core 0)
    assert y[1] == (42 if clean and drop else 0)
    assert x[1] == 42  # written back by the end of the kernel in any case
    kinds = {f.kind for f in cache_findings(report)}
    assert kinds == (set() if clean and drop else {"stale cached read"})


# -- what the instruction records, and its lines -----------------------------------------------

def test_single_line_is_the_64_byte_line_of_the_address_and_is_recorded():
    @asc.jit
    def k(x: asc.GlobalAddress):
        g = gm_view(x)
        asc.data_cache_clean_and_invalid(SINGLE, g[3:], OUT)   # int32 element 3: byte 12, line [0, 64)
        asc.data_cache_clean_and_invalid(SINGLE, g[20:])       # byte 80: line [64, 128)

    trace = k[1](np.zeros(40, np.int32)).trace
    instrs = [i for i in trace if i.op == "data_cache_clean_and_invalid"]
    assert [(i.pipe, i.lines, i.reads, i.writes) for i in instrs] == [
        (Pipe.S, (Access(Mem.GM, "x", 0, 64, "x"),), (), ()),
        (Pipe.S, (Access(Mem.GM, "x", 64, 128, "x"),), (), ())]


@asc.jit
def doc_example_2(x: asc.GlobalAddress, y: asc.GlobalAddress, SECOND: asc.ConstExpr[bool]):
    # the page's example 2: uint64 values from byte 0x20, which is not 64 B aligned
    g, out = gm_view(x + 4), gm_view(y, 8)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.uint64, 8)
    for i in range(8):
        g.set_value(i, 1)
    asc.data_cache_clean_and_invalid(SINGLE, g, OUT)          # writes back the first 4 values only
    if SECOND:
        asc.data_cache_clean_and_invalid(SINGLE, g[4:], OUT)  # and the next 4
    asc.set_flag(asc.HardEvent.S_MTE2, 0)
    asc.wait_flag(asc.HardEvent.S_MTE2, 0)
    asc.data_copy(t, g, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(out, t, 8)


@pytest.mark.parametrize("second", [False, True])
def test_documented_example_2_unaligned_address_needs_two_calls(second):
    x, y = np.zeros(16, np.uint64), np.zeros(8, np.uint64)
    report = fusekit.sanitize(doc_example_2)[1](x, y, second)
    assert y.tolist() == [1] * 8 if second else [1, 1, 1, 1, 0, 0, 0, 0]
    assert bool(cache_findings(report)) == (not second)


def test_entire_data_cache_writes_back_every_line():
    @asc.jit
    def k(x: asc.GlobalAddress, y: asc.GlobalAddress):
        g, out = gm_view(x), gm_view(y, 64)
        pipe = asc.TPipe()
        t = ub_buf(pipe, asc.int32, 64)
        for line in range(4):
            g.set_value(line * 16 + 1, line + 10)
        asc.data_cache_clean_and_invalid(ENTIRE, g)
        asc.set_flag(asc.HardEvent.S_MTE2, 0)
        asc.wait_flag(asc.HardEvent.S_MTE2, 0)
        asc.data_copy(t, g, 64)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(out, t, 64)

    x, y = np.zeros(64, np.int32), np.zeros(64, np.int32)
    report = fusekit.sanitize(k)[1](x, y)
    assert y[1::16].tolist() == [10, 11, 12, 13]
    assert not cache_findings(report)
    (instr,) = [i for i in report.trace if i.op == "data_cache_clean_and_invalid"]
    assert sorted(a.start for a in instr.lines) == [0, 64, 128, 192]


def test_own_scalar_stores_are_coherent_with_own_scalar_reads():
    @asc.jit
    def k(x: asc.GlobalAddress, y: asc.GlobalAddress):
        g = gm_view(x, 4)
        g.set_value(2, 5)
        gm_view(y, 1).set_value(0, g.get_value(2) * 3)

    x, y = np.zeros(4, np.int32), np.zeros(1, np.int32)
    report = fusekit.sanitize(k)[1](x, y)
    assert y[0] == 15 and not cache_findings(report)


# -- arguments --------------------------------------------------------------------------------

@asc.jit
def bad_args(x: asc.GlobalAddress, CASE: asc.ConstExpr[str]):
    g = gm_view(x)
    if CASE == "ub":
        asc.data_cache_clean_and_invalid(SINGLE, g, asc.DcciDst.CACHELINE_UB)
    elif CASE == "atomic":
        asc.data_cache_clean_and_invalid(SINGLE, g, asc.DcciDst.CACHELINE_ATOMIC)
    elif CASE == "doc-order":
        asc.data_cache_clean_and_invalid(SINGLE, OUT, g)
    elif CASE == "type":
        asc.data_cache_clean_and_invalid(0, g)
    elif CASE == "keywords":
        asc.data_cache_clean_and_invalid(entire_type=SINGLE, dcci_dst=OUT, dst=g)
    elif CASE == "all":
        asc.data_cache_clean_and_invalid(SINGLE, g, asc.DcciDst.CACHELINE_ALL)


@pytest.mark.parametrize("case, match", [
    ("ub", "CACHELINE_UB is not supported"),
    ("atomic", "CACHELINE_ATOMIC is not supported"),
    ("doc-order", "by keyword"),
    ("type", "entire_type must be asc.CacheLine"),
])
def test_bad_arguments_are_refused(case, match):
    with pytest.raises(asc.KernelError, match=match):
        bad_args[1](np.zeros(16, np.int32), case)


@pytest.mark.parametrize("case", ["keywords", "all"])
def test_documented_calls_are_accepted(case):
    bad_args[1](np.zeros(16, np.int32), case)


def test_310p_takes_only_the_form_without_dcci_dst():
    with pytest.raises(asc.KernelError, match="without dcci_dst"):
        bad_args[1](np.zeros(16, np.int32), "all", soc="Ascend310P3")


# -- more members of the class: another core's MTE against scalar accesses ----------------------

@asc.jit
def mte_vs_scalar(x: asc.GlobalAddress, y: asc.GlobalAddress, CASE: asc.ConstExpr[str]):
    g, out = gm_view(x, 32), gm_view(y, 2)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.int32, 8)
    if asc.get_block_idx() == 0:
        if CASE == "store-vs-copy":
            g.set_value(0, 5)                 # bytes [0, 4) of line [0, 64), dirty in core 0's cache
        else:
            out.set_value(0, g.get_value(0))  # core 0 caches line [0, 64)
    if asc.get_block_idx() == 1:
        asc.duplicate(t, 9, 8)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(g[8:], t, 8)            # bytes [32, 64): the same line, by DMA
    asc.sync_all()
    if asc.get_block_idx() == 0 and CASE != "store-vs-copy":
        if CASE == "read-dcci":
            asc.data_cache_clean_and_invalid(SINGLE, g[8:], OUT)
        out.set_value(1, g.get_value(8))


@pytest.mark.parametrize("case, value, kinds", [
    ("read", 0, {"stale cached read"}),     # core 0's line predates core 1's DMA write
    ("read-dcci", 9, set()),
])
def test_scalar_read_after_another_cores_mte_write(case, value, kinds):
    x, y = np.zeros(32, np.int32), np.zeros(2, np.int32)
    report = fusekit.sanitize(mte_vs_scalar)[2](x, y, case)
    assert y[1] == value
    assert {f.kind for f in cache_findings(report)} == kinds


def test_scalar_store_and_another_cores_mte_write_to_one_line():
    x, y = np.zeros(32, np.int32), np.zeros(2, np.int32)
    report = fusekit.sanitize(mte_vs_scalar)[2](x, y, "store-vs-copy")
    found = [f for f in cache_findings(report)]
    assert [(f.kind, f.cores, f.start, f.stop) for f in found] == [("shared cache line", (0, 1), 0, 64)]
    # core 0's whole-line write-back, at the end of the launch here, overwrites core 1's DMA bytes
    assert x[:9].tolist() == [5, 0, 0, 0, 0, 0, 0, 0, 0]
