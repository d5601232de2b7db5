"""Launchers of the adv kernels that several test files run: RmsNorm and SoftMax on one core, each returning its
output and the adv instruction's Trace records (tests/asc_api/adv/test_adv_norm.py, test_adv_softmax.py and
tests/asc_api/test_reference_reductions.py use them), and the elementwise math harness with its float64
models (tests/asc_api/adv/test_adv_math.py and test_adv_math_more.py)."""

from __future__ import annotations

import math

import numpy as np

from fusekit import asc


@asc.jit
def rmsnorm_kernel(x: asc.GlobalAddress, g: asc.GlobalAddress, y: asc.GlobalAddress, N: asc.ConstExpr, H: asc.ConstExpr,
            EPS: asc.ConstExpr, TILING: asc.ConstExpr, TMP: asc.ConstExpr, SAME: asc.ConstExpr, PAD: asc.ConstExpr,
            BASIC: asc.ConstExpr):
    pipe = asc.TPipe()
    views, locals_ = [], []
    for addr, n in ((x, N), (g, H), (y, N)):
        view = asc.GlobalTensor()
        view.set_global_buffer(addr, n)
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=n * addr.dtype.sizeof())
        views.append(view)
        locals_.append(buf.get(addr.dtype))
    if PAD:
        pad = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=pad, num=PAD)
    tmp = None
    if TMP:
        tbuf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=tbuf, num=TMP)
        tmp = tbuf.get(asc.uint8)
    src, gamma, dst = locals_
    asc.data_copy(src, views[0], N)
    asc.data_copy(gamma, views[1], H)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    out = src if SAME else dst
    asc.adv.rmsnorm(out, src, gamma, EPS, TILING, temp_buffer=tmp, basic_block=BASIC)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(views[2], out, N)


def run_rmsnorm(x: np.ndarray, gamma: np.ndarray, eps=1e-5, tmp=None, tiling=None, h0=None, same=False, stack=0,
        basic=False, **launch):
    """rmsnorm of [B, S, H] ``x``; returns (dst [B, S, H], rmsnorm instructions)."""
    b, s, h = x.shape
    size = x.dtype.itemsize
    if tiling is None:
        space = tmp or asc.adv.get_rms_norm_max_min_tmp_size([b, s, h], size)[0]
        tiling = asc.adv.get_rms_norm_tiling_info([b, s, h], [b, s, h0 or h], space, size, is_basic_block=basic)
    y = np.full(x.size, 7, x.dtype)
    result = rmsnorm_kernel[1](x.reshape(-1).copy(), gamma.copy(), y, x.size, h, eps, tiling, tmp or 0, same, stack,
                               basic, **launch)
    return y.reshape(x.shape), [i for i in result.trace if i.op == "rmsnorm"]


@asc.jit
def softmax_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, s: asc.GlobalAddress, mx: asc.GlobalAddress,
            SHAPE: asc.ConstExpr, ORIGINAL: asc.ConstExpr, N: asc.ConstExpr, NR: asc.ConstExpr, TMP: asc.ConstExpr,
            TILING: asc.ConstExpr, SAME: asc.ConstExpr, SET_SHAPE: asc.ConstExpr, PAD: asc.ConstExpr,
            BASIC: asc.ConstExpr):
    pipe = asc.TPipe()
    views, locals_ = [], []
    for addr, n in ((x, N), (y, N), (s, NR), (mx, NR)):
        view = asc.GlobalTensor()
        view.set_global_buffer(addr, n)
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=n * addr.dtype.sizeof())
        views.append(view)
        locals_.append(buf.get(addr.dtype))
    if PAD:  # take UB so that the API's stack shrinks to PAD bytes
        pad = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=pad, num=PAD)
    tmp = None
    if TMP:
        tbuf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=tbuf, num=TMP)
        tmp = tbuf.get(asc.uint8)
    src, dst, sm, mt = locals_
    asc.data_copy(src, views[0], N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if SET_SHAPE:
        src.set_shape_info(asc.ShapeInfo(asc.array(asc.int32, SHAPE), asc.array(asc.int32, ORIGINAL)))
    out = src if SAME else dst
    asc.adv.softmax(out, sm, mt, src, TILING, temp_buffer=tmp, basic_block=BASIC)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(views[1], out, N)
    asc.data_copy(views[2], sm, NR)
    asc.data_copy(views[3], mt, NR)


def run_softmax(x: np.ndarray, sum_dtype=None, tmp=None, tiling=None, original=None, same=False, set_shape=True,
        stack=0, basic=False, **launch):
    """softmax of 2-D ``x``; returns (dst, sum, max, vector instructions)."""
    m, k = x.shape
    sum_dtype = np.dtype(sum_dtype or x.dtype)
    blk = 32 // sum_dtype.itemsize
    y = np.full(x.shape, 7, x.dtype)
    s, mx = np.full(m * blk, 7, sum_dtype), np.full(m * blk, 7, sum_dtype)
    result = softmax_kernel[1](x.reshape(-1).copy(), y.reshape(-1), s, mx, (m, k), original or (m, k), m * k, m * blk,
                               tmp or 0, tiling or asc.adv.SoftmaxTiling(), same, set_shape, stack, basic, **launch)
    vec = [i for i in result.trace if i.op == "softmax"]
    return y.reshape(m, k), s.reshape(m, blk), mx.reshape(m, blk), vec


# -- elementwise math (fusekit.asc.adv.math) -------------------------------------------------------------------

@asc.jit
def math_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, d: asc.GlobalAddress, BODY: asc.ConstExpr,
            N: asc.ConstExpr, TMP: asc.ConstExpr):
    pipe = asc.TPipe()
    tensors = []
    for addr in (a, b, d):
        view = asc.GlobalTensor()
        view.set_global_buffer(addr, N)
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=N * addr.dtype.sizeof())
        t = buf.get(addr.dtype)
        asc.data_copy(t, view, N)
        tensors.append((t, view))
    tmp_buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=tmp_buf, num=TMP)
    tmp = tmp_buf.get(asc.uint8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    BODY(tensors[2][0], tensors[0][0], tensors[1][0], tmp)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(tensors[2][1], tensors[2][0], N)


def run_math(body, x, y=None, tmp=8192, dst=None, **launch):
    n = -(-x.size // 16) * 16
    pad = lambda v: np.concatenate([v, np.ones(n - v.size, v.dtype)])  # noqa: E731
    a = pad(x)
    b = pad(y if y is not None else x)
    d = np.full(n, 7, x.dtype) if dst is None else pad(dst)
    result = math_kernel[1](a, b, d, body, n, tmp, **launch)
    return d[:x.size], [i for i in result.trace if i.op not in ("data_copy", "pipe_barrier")]


def math_edges(dtype) -> np.ndarray:
    tiny = [2.0 ** -24, 2.0 ** -20] if dtype == np.float16 else [2.0 ** -149, 2.0 ** -130]
    big = [60000.0, -65504.0] if dtype == np.float16 else [3.0e38, -1.0e30]
    vals = [0.0, -0.0, *tiny, -tiny[0], np.inf, -np.inf, np.nan, *big, 0.5, -0.5, 1.5, 2.5, -2.5, 0.75, -0.999, 1.0,
            -1.0, 3.0, 10.0, -7.25, 0.1]
    return np.array(vals, dtype)


def _scalar(fn, name):
    """fn as IEEE / C99 Annex F defines it where Python's math raises."""
    def f(x: float) -> float:
        if math.isnan(x):
            return math.nan
        if name in ("ceil", "floor", "trunc", "round") and math.isinf(x):
            return x
        try:
            r = float(fn(x))
            # math.ceil / floor / trunc / round return ints: IEEE keeps the sign of a zero result
            return math.copysign(r, x) if r == 0 and name in ("ceil", "floor", "trunc", "round") else r
        except OverflowError:
            return math.inf if name in ("exp", "cosh") else math.copysign(math.inf, x)
        except ValueError:
            if name == "log" and x == 0:
                return -math.inf
            if name == "atanh" and abs(x) == 1:
                return math.copysign(math.inf, x)
            return math.nan
    return f


def _sign(x):
    return 1.0 if x > 0 else -1.0 if x < 0 else 0.0


MODELS = {
    "acos": math.acos, "acosh": math.acosh, "asin": math.asin, "asinh": math.asinh, "atan": math.atan,
    "atanh": math.atanh, "ceil": math.ceil, "cos": math.cos, "cosh": math.cosh, "erf": math.erf,
    "erfc": math.erfc, "floor": math.floor, "frac": lambda x: x - math.trunc(x), "log": math.log,
    "round": round, "sign": _sign, "sin": math.sin, "sinh": math.sinh, "tan": math.tan, "tanh": math.tanh,
    "trunc": math.trunc, "exp": math.exp,
}


def expected_math(name, x):
    f = _scalar(MODELS[name], name)
    if name == "frac":
        # x - trunc(x) in IEEE arithmetic (trunc keeps the sign: -0 - -0 = +0), inf - inf = NaN
        f = lambda v: math.nan if math.isinf(v) or math.isnan(v) else v - math.copysign(math.trunc(v), v)  # noqa: E731
    return np.array([f(float(v)) for v in x], np.float64).astype(x.dtype)


@np.errstate(invalid="ignore")
def assert_ulps(got, want, ulps):
    both_nan = np.isnan(got) & np.isnan(want)
    assert not (np.isnan(got) ^ np.isnan(want)).any(), (got, want)
    g, w = got[~both_nan], want[~both_nan]
    exact = g == w
    # finite values may differ by `ulps` units in the last place (the model's libm vs numpy's, before rounding)
    spacing = np.spacing(np.abs(w).astype(w.dtype))
    close = np.isfinite(w) & (np.abs(g.astype(np.float64) - w.astype(np.float64)) <= ulps * spacing.astype(np.float64))
    assert (exact | close).all(), list(zip(g[~(exact | close)], w[~(exact | close)]))
