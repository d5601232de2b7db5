"""asc.adv.concat / asc.adv.extract (fusekit.asc.adv.sort) around asc.sort, with our own @asc.jit kernels.

Expected orders come from a model written here from the pages (Sort.md / Sort32.md): descending score, equal scores
in input order; sorted elements are 8 bytes (score low, uint32 index high). What Concat / Extract do on Atlas A2 is
asc-devkit impl/basic_api/kernel_operator_proposal_intf_impl.h (``concat = src``; two GatherMask passes).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc


@asc.jit
def _pipeline(value: asc.GlobalAddress, index: asc.GlobalAddress, out_value: asc.GlobalAddress,
              out_index: asc.GlobalAddress, N: asc.ConstExpr, NIDX: asc.ConstExpr, FULL: asc.ConstExpr):
    pipe = asc.TPipe()
    dt = value.dtype
    per = 8 // dt.sizeof()  # elements of dt per sorted 8-byte element

    def ub(dtype, count):
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=count * dtype.sizeof())
        return buf.get(dtype)

    gv, gi, gov, goi = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gv.set_global_buffer(value, N)
    gi.set_global_buffer(index, N)
    gov.set_global_buffer(out_value, N)
    goi.set_global_buffer(out_index, NIDX)
    v, i = ub(dt, N), ub(asc.uint32, N)
    concat_tmp, sorted_, sort_tmp = ub(dt, N * per), ub(dt, NIDX * per), ub(dt, N * per)
    dv, di = ub(dt, N), ub(asc.uint32, NIDX)
    asc.data_copy(v, gv, N)
    asc.data_copy(i, gi, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    concat = asc.LocalTensor(dt)
    asc.adv.concat(concat, v, concat_tmp, N // 16)
    asc.sort(sorted_, concat, i, sort_tmp, N // 32, is_full_sort=FULL)
    asc.adv.extract(dv, di, sorted_, N // 32)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gov, dv, N)
    asc.data_copy(goi, di, NIDX)


def _model(scores, index, group):
    """Descending, ties in input order, within each group of ``group`` elements."""
    out_s, out_i = [], []
    for g in range(0, len(scores), group):
        pairs = sorted(range(g, g + group), key=lambda k: (-float(scores[k]), k))
        out_s += [scores[k] for k in pairs]
        out_i += [index[k] for k in pairs]
    return np.array(out_s, scores.dtype), np.array(out_i, np.uint32)


@pytest.mark.parametrize("full", [True, False])
def test_concat_sort_extract_float(full):
    rng = np.random.default_rng(11)
    n = 128
    scores = rng.integers(-40, 40, n).astype(np.float32)  # many ties
    index = (np.arange(n) * 3 + 7).astype(np.uint32)
    out_v, out_i = np.zeros(n, np.float32), np.zeros(n, np.uint32)
    result = _pipeline[1](scores, index, out_v, out_i, n, n, full)
    want_s, want_i = _model(scores, index, n if full else 32)
    np.testing.assert_array_equal(out_v, want_s)
    np.testing.assert_array_equal(out_i, want_i)
    ops = [ins.op for ins in result.trace if ins.pipe == asc.Pipe.V]
    assert "concat" not in ops and ops.count("gather_mask") == 2  # Concat issues nothing; Extract = 2 GatherMask


def test_concat_sort_extract_half_index_pass_runs_twice_the_repeats():
    """Half on A2: the implementation's index GatherMask runs 2 x repeat_time repeats of 256 B (64 indices per
    repeat): dst_index and the sorted buffer must hold twice the elements, or fusekit reports the out-of-bounds."""
    rng = np.random.default_rng(3)
    n = 64
    scores = rng.standard_normal(n).astype(np.float16)
    index = np.arange(n, dtype=np.uint32)
    out_v, out_i = np.zeros(n, np.float16), np.zeros(2 * n, np.uint32)
    _pipeline[1](scores, index, out_v, out_i, n, 2 * n, True)
    want_s, want_i = _model(scores, index, n)
    np.testing.assert_array_equal(out_v, want_s)
    np.testing.assert_array_equal(out_i[:n], want_i)
    with pytest.raises(asc.KernelError, match="gather_mask"):
        _pipeline[1](scores, index, out_v, np.zeros(n, np.uint32), n, n, True)


@asc.jit
def _body_kernel(a: asc.GlobalAddress, BODY: asc.ConstExpr, N: asc.ConstExpr):
    pipe = asc.TPipe()
    view = asc.GlobalTensor()
    view.set_global_buffer(a, N)
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N * a.dtype.sizeof())
    t = buf.get(a.dtype)
    asc.data_copy(t, view, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    BODY(t, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(view, t, N)


def test_concat_rebinds_dst_to_src():
    seen = {}

    def body(t, n):
        dst = t[2 * n:]
        asc.adv.concat(dst, t, t[n:], n // 16)
        seen.update(addr=(dst.addr, t.addr), length=(dst.length, t.length))

    x = np.arange(64, dtype=np.float32)
    result = _body_kernel[1](x, body, 64)
    assert seen["addr"][0] == seen["addr"][1] and seen["length"][0] == seen["length"][1]
    assert [i.op for i in result.trace if i.pipe == asc.Pipe.V and i.op != "pipe_barrier"] == []


def test_extract_of_handmade_sorted_elements():
    """Extract alone: 32 8-byte elements (float score, uint32 index) written by the test at UB [0, 256); values go
    to [256, 384), indices to [384, 512)."""
    n = 32
    x = np.zeros(4 * n, np.float32)
    x[0:2 * n:2] = np.linspace(10, -10, n, dtype=np.float32)
    x.view(np.uint32)[1:2 * n:2] = np.arange(n, dtype=np.uint32) + 500
    raw = x.copy()
    _body_kernel[1](x, lambda t, _: asc.adv.extract(t[2 * n:], t[3 * n:].reinterpret_cast(asc.uint32), t, 1), 4 * n)
    np.testing.assert_array_equal(x[2 * n:3 * n], raw[0:2 * n:2])
    np.testing.assert_array_equal(x[3 * n:].view(np.uint32), np.arange(n) + 500)


@pytest.mark.parametrize("bad, match", [
    (lambda t, n: asc.adv.concat(t[n:], t, t[2 * n:], 256), r"repeat_time must be an int in \[0, 255\]"),
    (lambda t, n: asc.adv.concat(t[n:], t, t[2 * n:].reinterpret_cast(asc.int32), 1), "half or float"),
    (lambda t, n: asc.adv.concat(t[n + 1:], t, t[2 * n:], 1), "32"),
    (lambda t, n: asc.adv.extract(t[n:], t[2 * n:], t, 1), "uint32"),
])
def test_refusals(bad, match):
    with pytest.raises(asc.KernelError, match=match):
        _body_kernel[1](np.zeros(64, np.float32), bad, 64)


def test_310p_is_not_simulated():
    with pytest.raises(asc.KernelError, match="ProposalConcat"):
        _body_kernel[1](np.zeros(64, np.float32), lambda t, n: asc.adv.concat(t[n:], t, t[2 * n:], 1), 64,
                        soc="Ascend310P3")
