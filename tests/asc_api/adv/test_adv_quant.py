"""asc.adv.quant / QuantConfig (fusekit.asc.adv.quant) with our own @asc.jit kernels.

Expected values come from an independent exact model of AscendQuant.md 实现原理 steps 1-5 written with
tests/ieee754_ref.py (Fractions, one rounding per step): float src -> half, x half(scale), + half(offset), each
rounded to half, then to int8 rounding half to even and saturating; NaN -> 0 (the vector Cast's NaN rule).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

import ieee754_ref as ref


@asc.jit
def _kernel(s: asc.GlobalAddress, d: asc.GlobalAddress, BODY: asc.ConstExpr, N: asc.ConstExpr, TMP: asc.ConstExpr):
    pipe = asc.TPipe()
    tensors = []
    for addr in (s, d):
        view = asc.GlobalTensor()
        view.set_global_buffer(addr, N)
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=max(N * addr.dtype.sizeof(), 32))
        t = buf.get(addr.dtype)
        asc.data_copy(t, view, N)
        tensors.append((t, view))
    tmp_buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=tmp_buf, num=TMP)
    tmp = tmp_buf.get(asc.uint8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    BODY(tensors[1][0], tensors[0][0], tmp)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(tensors[1][1], tensors[1][0], N)


def _run(body, src, tmp=1024, **launch):
    dst = np.full(src.size, 99, np.int8)
    result = _kernel[1](src, dst, body, src.size, tmp, **launch)
    return dst, [i for i in result.trace if i.op not in ("data_copy", "pipe_barrier")]


def _model(src, scale, offset, mode="inf_nan"):
    fmt = ref.FLOAT16 if src.dtype == np.float16 else ref.FLOAT32

    def half(v):  # one rounding to half; saturation mode: inf -> +-65504, NaN -> 0 (overflow.py rule)
        r = ref.round_to(v, ref.FLOAT16)
        if mode == "saturation":
            if r is ref.NAN:
                return ref.POS_ZERO
            if r is ref.INF or r is ref.NEG_INF:
                return ref.FLOAT16.max_finite * (1 if r is ref.INF else -1)
        return r

    s = half(ref.values(np.array([scale], src.dtype), fmt)[0])
    o = half(ref.values(np.array([offset], src.dtype), fmt)[0])
    out = []
    for x in ref.values(src, fmt):
        t2 = half(ref.add(half(ref.mul(half(x), s)), o))
        out.append(0 if t2 is ref.NAN else ref.round_to_int(t2, -128, 127, ref.RINT))
    return np.array(out, np.int8)


def _edges(dtype):
    tiny = [2.0 ** -24, -2.0 ** -24] if dtype == np.float16 else [2.0 ** -149, -2.0 ** -126, 1e5, -7e4]
    vals = [0.0, -0.0, *tiny, np.inf, -np.inf, np.nan, 1.25, 1.75, -1.25, 0.25, -0.75, 63.5, 64.25, -64.25, 100.0,
            -100.0, 3.0e4, -3.0e4, 0.7379, -1.7006, 2.2810, 1.0 / 3]
    x = np.array(vals, dtype)
    return np.concatenate([x, np.linspace(-70, 70, 64 - x.size).astype(dtype)])


@pytest.mark.parametrize("mode", ["inf_nan", "saturation"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("scale, offset", [(2.0, 0.0), (2.0, 0.9), (-0.5, 1.1)])
def test_values_follow_the_half_sequence(dtype, scale, offset, mode):
    src = _edges(dtype)
    got, (instr,) = _run(lambda d, s, t: asc.adv.quant(d, s, scale, offset, src.size, t), src, overflow=mode)
    np.testing.assert_array_equal(got, _model(src, scale, offset, mode))
    steps = 4 if dtype == np.float32 else 3  # Cast, Muls, Adds, Cast / Muls, Adds, Cast
    assert (instr.op, instr.cost, instr.count, instr.repeats) == ("quant", "AscendQuant", 64, steps * 1)
    (read,), (write,), (tmp,) = instr.reads, instr.writes, instr.undefined
    assert (read.nbytes, write.nbytes, tmp.nbytes) == (64 * src.itemsize, 64, 512)  # max = 512 B for 64 elements


def test_ties_round_to_even_and_saturate():
    # 1.25 * 2 = 2.5 -> 2; 1.75 * 2 = 3.5 -> 4; -2.5 -> -2 (四舍六入五成双); 100 * 2 = 200 -> 127; -200 -> -128
    src = np.array([1.25, 1.75, -1.25, 100, -100, 0.25, 0.75, 63.75] * 4, np.float16)
    got, _ = _run(lambda d, s, t: asc.adv.quant(d, s, 2.0, 0.0, 32, t), src)
    np.testing.assert_array_equal(got[:8], [2, 4, -2, 127, -128, 0, 2, 127])


def test_float_source_is_rounded_to_half_first():
    """-1.7006 (float) -> half -1.7001953; x2 = -3.4003906; + half(0.9) = 0.89990234 -> -2.5004883 rounds to half
    -2.5 (spacing 2**-9 there), and -2.5 rounds to even: -2. The float32 formula round(x * 2 + 0.9) gives -3 (the
    reference pyasc's generalization/adv/test_quant.py uses for its float32 case)."""
    src = np.full(32, -1.7006, np.float32)
    got, _ = _run(lambda d, s, t: asc.adv.quant(d, s, 2.0, 0.9, 32, t), src)
    assert got[0] == -2 and np.round(np.float32(-1.7006) * 2.0 + 0.9) == -3


def test_pyasc_sample_inputs():
    """pyasc python/test/kernels/insert_sync/test_quant.py: seed 2025, 32 halves in [-4, 4], scale 2, offset 0.9,
    reference np.round(src * 2.0 + 0.9) computed in numpy float16 (each step rounded to half, as the NPU)."""
    rng = np.random.default_rng(seed=2025)
    src = (rng.random(32) * 8.0 - 4.0).astype(np.float16)
    got, _ = _run(lambda d, s, t: asc.adv.quant(d, s, 2.0, 0.9, 32, t), src, tmp=512)
    np.testing.assert_array_equal(got, np.round((src * 2.0) + 0.9).astype(np.int8))


def test_tmp_buffer_minimum_and_one_byte_short():
    src = np.linspace(-3, 3, 64).astype(np.float32)
    _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 64, t), src, tmp=512)  # GetAscendQuantMaxMinTmpSize min
    with pytest.raises(asc.KernelError, match="at least 512"):
        _run(lambda d, s, t: (t.set_size(511), asc.adv.quant(d, s, 1.0, 0.0, 64, t)), src, tmp=512)
    # no temp_buffer: the API pops its scratch from the UB after TPipe's buffers (src 256 B + dst 64 B + tmp 1024 B
    # = 1344 B), using at most the helper's max (512 B for 64 elements)
    got, (instr,) = _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 64), src)
    ((start, stop),) = [(a.start, a.stop) for a in instr.undefined]
    assert (start, stop) == (1344, 1856) and got[0] == -3


def test_tmp_size_helper_matches_pyasc_formula():
    """get_min_max_tmp_size of pyasc's generalization/adv/test_quant.py: min 2 x 256, max = max(n x 2, 512) rounded
    up to 32 B."""
    for n in (16, 32, 256, 257 * 32, 4096):
        want_max = (max(n * 2, 512) + 31) // 32 * 32
        assert asc.adv.max_min_tmp_size("quant", n, 2) == (want_max, 512)
    with pytest.raises(ValueError, match="32 B aligned"):
        asc.adv.max_min_tmp_size("quant", 15, 2)


def test_count_must_be_a_multiple_of_32_and_fit():
    src = np.ones(64, np.float16)
    with pytest.raises(asc.KernelError, match="multiple of 32"):
        _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 48, t), src)
    with pytest.raises(asc.KernelError, match="elements"):
        _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 96, t), src)


def test_config_constant_path_uses_calc_count():
    src = np.full(64, 3.0, np.float16)
    cfg = asc.adv.QuantConfig(32, 0, 0, 512)  # pyasc generalization/adv/test_quant.py's config
    got, (instr,) = _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 64, t, config=cfg), src)
    assert list(got[30:34]) == [3, 3, 99, 99] and instr.count == 32  # calc_count replaces count
    with pytest.raises(asc.KernelError, match="work_local_size 2048 exceeds"):
        _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 64, t, config=asc.adv.QuantConfig(32, 0, 0, 2048)), src)
    with pytest.raises(asc.KernelError, match="calc_count 96 is larger"):
        _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 64, t, config=asc.adv.QuantConfig(96, 0, 0, 512)), src)
    with pytest.raises(asc.KernelError, match="per-channel"):
        _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 64, t, config=asc.adv.QuantConfig(32, 0, 32, 512)), src)
    with pytest.raises(ValueError, match="uint32"):
        asc.adv.QuantConfig(-1)


def test_in_place_reuse_allowed_partial_overlap_refused():
    src = np.linspace(-5, 5, 64).astype(np.float32)
    got, _ = _run(lambda d, s, t: (asc.adv.quant(s.reinterpret_cast(asc.int8), s, 1.0, 0.0, 64, t),
                                   asc.data_copy(d, s.reinterpret_cast(asc.int8), 64)), src)
    np.testing.assert_array_equal(got, _model(src, 1.0, 0.0))  # 源操作数与目的操作数可以复用
    with pytest.raises(asc.KernelError, match="partially overlaps"):
        _run(lambda d, s, t: asc.adv.quant(s.reinterpret_cast(asc.int8)[32:], s, 1.0, 0.0, 32, t), src)


def test_refused_dtypes_and_operands():
    src = np.ones(32, np.float16)
    with pytest.raises(asc.KernelError, match="int8 dst"):
        _run(lambda d, s, t: asc.adv.quant(s, s, 1.0, 0.0, 32, t), src)
    with pytest.raises(asc.KernelError, match="uint8"):
        _run(lambda d, s, t: asc.adv.quant(d, s, 1.0, 0.0, 32, s), src)
    with pytest.raises(asc.KernelError, match="Python number"):
        _run(lambda d, s, t: asc.adv.quant(d, s, s, 0.0, 32, t), src)
