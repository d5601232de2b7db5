"""Issue 8 B: same-pipe dependences and automatic synchronisation (``fusekit.hb`` rule 2).

Sources (asc-devkit ``docs/zh/api/SIMD-API/基础API/同步控制/核内同步/``):
- PipeBarrier(ISASI).md, 调用示例: ``Add(dst0, src0, src1, 512)`` then ``Mul(dst1, dst0, src2, 512)`` depend
  on each other and need ``PipeBarrier<PIPE_V>()``; "开启自动同步（Kernel直调算子工程和自定义算子开发工程已默认开启）
  的情况下，编译器自动插入PIPE_V同步". pyasc compiles with ``--cce-auto-sync`` unless
  ``@asc.jit(auto_sync=False)`` (pyasc ``python/asc/runtime/compiler.py``).
- PipeBarrier(ISASI).md, 约束说明, and 关键特性说明.md ("支持的同步类型 / 单流水同步", 表3): MTE2/MTE3
  transfers with overlapping destinations need ``PipeBarrier<PIPE_MTE2>`` / ``<PIPE_MTE3>`` from the
  developer; automatic synchronisation does not insert them (表3 has no MTE2->MTE2, MTE3->MTE3 entry).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Access, Instr, Mem, Pipe, Sync, SyncKind
from fusekit.hb import core_order
from fusekit.ops.fused_add_scale import host, kernel as fas_kernel
from fusekit.sanitizer import analyze, sanitize

E = asc.HardEvent
THIS = __file__


def line(kernel, marker: str) -> str:
    lines, first = inspect.getsourcelines(kernel.fn)
    (hit,) = [first + i for i, text in enumerate(lines) if f"# <{marker}>" in text]
    return f"{kernel.fn.__code__.co_filename}:{hit}"


def races(report):
    return sorted((f.kind, f.pipes, f.locations) for f in report.findings if f.tool == "racecheck")


@asc.jit
def add_mul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, e: asc.GlobalAddress,
                   MODE: asc.ConstExpr[str]):
    """The PipeBarrier page's example on 512 half: d = a + b; e = d * c."""
    gms = []
    for addr in (a, b, c, e):
        g = asc.GlobalTensor()
        g.set_global_buffer(addr, 512)
        gms.append(g)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=5 * 1024)
    t = buf.get(asc.half)
    a_l, b_l, c_l, d_l, e_l = t, t[512:], t[1024:], t[1536:], t[2048:]
    for dst, g in zip((a_l, b_l, c_l), gms):
        asc.data_copy(dst, g, 512)
    asc.set_flag(E.MTE2_V, 0)
    asc.wait_flag(E.MTE2_V, 0)
    if MODE == "war":                             # Mul reads d, then Add overwrites d
        asc.duplicate(d_l, 1.0, 512)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.mul(e_l, d_l, c_l, 512)  # <war-mul>
        asc.add(d_l, a_l, b_l, 512)  # <war-add>
    else:
        asc.add(d_l, a_l, b_l, 512)  # <add>
        if MODE == "barrier":
            asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.mul(e_l, d_l, c_l, 512)  # <mul>
    asc.set_flag(E.V_MTE3, 0)
    asc.wait_flag(E.V_MTE3, 0)
    asc.data_copy(gms[3], e_l, 512)


manual_add_mul = asc.jit(add_mul_kernel.fn, auto_sync=False)  # pyasc's jit option


def args():
    rng = np.random.default_rng(8)
    a, b, c = (rng.standard_normal(512).astype(np.float16) for _ in range(3))
    return a, b, c, np.zeros(512, np.float16)


def test_the_pipe_barrier_example_needs_its_barrier_without_auto_sync():
    raw = [("RAW", ("V", "V"), (line(add_mul_kernel, "add"), line(add_mul_kernel, "mul")))]
    assert races(sanitize(add_mul_kernel, auto_sync=False)[1](*args(), "plain")) == raw
    assert races(sanitize(manual_add_mul)[1](*args(), "plain")) == raw          # @asc.jit(auto_sync=False)
    assert races(sanitize(add_mul_kernel, auto_sync=False)[1](*args(), "barrier")) == []
    assert sanitize(add_mul_kernel)[1](*args(), "plain").findings == []        # default: the compiler inserts it
    assert sanitize(manual_add_mul, auto_sync=True)[1](*args(), "plain").findings == []  # the launch decides


def test_a_vector_war_without_barrier_is_a_race_without_auto_sync():
    found = races(sanitize(add_mul_kernel, auto_sync=False)[1](*args(), "war"))
    assert found == [("WAR", ("V", "V"), (line(add_mul_kernel, "war-mul"), line(add_mul_kernel, "war-add")))]
    assert sanitize(add_mul_kernel)[1](*args(), "war").findings == []


def test_message_names_the_barrier_and_the_option():
    (f,) = sanitize(add_mul_kernel, auto_sync=False)[1](*args(), "plain").findings
    assert "pipe_barrier(PipeID.PIPE_V)" in f.message and "auto_sync" in f.message


def test_values_do_not_depend_on_the_option():
    a, b, c, e = args()
    add_mul_kernel[1](a, b, c, e, "plain", auto_sync=False)
    d = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)   # each op rounds to half once
    np.testing.assert_array_equal(e, (d.astype(np.float32) * c.astype(np.float32)).astype(np.float16))


def test_launch_records_the_option_and_checks_it():
    assert add_mul_kernel[1](*args(), "plain").trace.auto_sync is True
    assert add_mul_kernel[1](*args(), "plain", auto_sync=False).trace.auto_sync is False
    assert manual_add_mul[1](*args(), "plain").trace.auto_sync is False
    with pytest.raises(TypeError, match="auto_sync must be True or False"):
        add_mul_kernel[1](*args(), "plain", auto_sync="no")


# ------------------------------------------------------------------------------------------
# MTE2 / MTE3: overlapping transfers need their barrier whatever auto_sync says
# ------------------------------------------------------------------------------------------

@asc.jit
def overlap_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, PIPE: asc.ConstExpr[str], BARRIER: asc.ConstExpr[bool]):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, 64)
    y_gm = asc.GlobalTensor()
    y_gm.set_global_buffer(y, 64)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=256)
    t = buf.get(asc.float32)
    if PIPE == "MTE2":                   # two loads whose UB destinations overlap in [32, 64) B
        asc.data_copy(t, x_gm, 16)  # <mte2-a>
        if BARRIER:
            asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
        asc.data_copy(t[8:], x_gm[32:], 16)  # <mte2-b>
        asc.set_flag(E.MTE2_MTE3, 0)
        asc.wait_flag(E.MTE2_MTE3, 0)
        asc.data_copy(y_gm, t, 24)
        asc.data_copy(y_gm[24:], t, 24)
        asc.data_copy(y_gm[48:], t, 16)
    else:                                # two stores whose GM destinations overlap in [32, 64) B
        asc.data_copy(t, x_gm, 64)
        asc.set_flag(E.MTE2_MTE3, 0)
        asc.wait_flag(E.MTE2_MTE3, 0)
        asc.data_copy(y_gm, t, 16)  # <mte3-a>
        if BARRIER:
            asc.pipe_barrier(asc.PipeID.PIPE_MTE3)
        asc.data_copy(y_gm[8:], t[8:], 56)  # <mte3-b>


@pytest.mark.parametrize("auto_sync", [True, False])
@pytest.mark.parametrize("pipe, mem", [("MTE2", "UB"), ("MTE3", "GM")])
def test_overlapping_transfers_need_their_barrier_with_or_without_auto_sync(pipe, mem, auto_sync):
    x = np.arange(64, dtype=np.float32)
    k = overlap_kernel
    lines = (line(k, f"{pipe.lower()}-a"), line(k, f"{pipe.lower()}-b"))
    report = sanitize(k, auto_sync=auto_sync)[1](x, np.zeros(64, np.float32), pipe, False)
    assert [(f.tool, f.kind, f.pipes, f.locations, f.mem, f.start, f.stop) for f in report.findings] == [
        ("racecheck", "WAW", (pipe, pipe), lines, mem, 32, 64)]
    assert "needed even with automatic synchronisation" in report.findings[0].message
    assert sanitize(k, auto_sync=auto_sync)[1](x, np.zeros(64, np.float32), pipe, True).findings == []


# ------------------------------------------------------------------------------------------
# the clocks, and the shipped kernel
# ------------------------------------------------------------------------------------------

def test_core_order_keeps_v_in_order_only_with_auto_sync():
    ub = lambda a, b: Access(Mem.UB, "UB", a, b, "t")  # noqa: E731
    instrs = [Instr(0, 0, "add", Pipe.V, (ub(0, 32),), (ub(64, 96),)),
              Instr(0, 1, "mul", Pipe.V, (ub(64, 96),), (ub(96, 128),)),
              Instr(0, 2, "pipe_barrier", Pipe.V, sync=Sync(SyncKind.BARRIER, Pipe.V, Pipe.V, ("PIPE_V",))),
              Instr(0, 3, "muls", Pipe.V, (ub(96, 128),), (ub(96, 128),))]
    assert core_order(instrs).before(0, 1)
    manual = core_order(instrs, auto_sync=False)
    assert not manual.before(0, 1) and manual.before(0, 3) and manual.before(1, 3)


@pytest.mark.parametrize("precision, pairs", [
    # muls(y, y, scale) reads (RAW) and rewrites (WAW) add's y in place
    ("native", [("RAW", ("add", "muls")), ("WAW", ("add", "muls"))]),
    # cast a, cast b -> add(a, a, b) -> muls(a, a, s) -> cast(y, a)
    ("fp32", [("RAW", ("cast", "add")), ("WAW", ("cast", "add")), ("RAW", ("cast", "add")),
              ("RAW", ("add", "muls")), ("WAW", ("add", "muls")), ("RAW", ("muls", "cast"))]),
])
def test_shipped_kernel_under_auto_sync_false_needs_pipe_v_barriers(precision, pairs):
    """README: FusedAddScale relies on automatic synchronisation for its dependent vector
    instructions (add -> muls, and in fp32 cast -> add -> muls -> cast)."""
    x = np.linspace(-2, 2, 1000).astype(np.float16)
    clean = host.run(x, x, 1.5, core_num=2, precision=precision)
    assert all(analyze(r.trace, outputs={"y"}) == [] for r in clean.launches)
    manual = host.run(x, x, 1.5, core_num=2, precision=precision, auto_sync=False)
    for r in manual.launches:
        found = analyze(r.trace, outputs={"y"})
        assert {f.tool for f in found} == {"racecheck"} and all(f.pipes == ("V", "V") for f in found)
        assert sorted((f.kind, f.ops) for f in found) == sorted(pairs)
        assert all(f.count == 2 and f.cores == (0, 1) for f in found)  # once per core, 1 tile each
        assert all(f.locations[0].startswith(fas_kernel.__file__) for f in found)


def test_unfused_kernels_need_no_barrier_either_way():
    """One vector instruction per tile: nothing on PIPE_V depends on another PIPE_V instruction."""
    from fusekit.ops.unfused_add_muls import host as unfused

    x = np.linspace(-2, 2, 1000).astype(np.float16)
    for r in unfused.run(x, x, 1.5, core_num=2).launches:
        r.trace.auto_sync = False  # the analyses read the option from the Trace
        assert analyze(r.trace, outputs={"y"}) == []
