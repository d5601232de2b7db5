"""The vector framework: pyasc's call forms, masks, repeats, strides, the mask register, overlap
rules and what the Trace records. Expected values come from models in tests/vector_harness.py
(written from AD-API SIMD计算说明/高维切分.md, 掩码.md, 通用说明和约束.md), not from fusekit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.trace import Pipe

from vector_harness import lane_mask, line_of, run, split_elements

RNG = np.random.default_rng(7)
F16, F32 = np.float16, np.float32


def exact_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded once to a's dtype (float64 holds the exact sum of these small values)."""
    return (a.astype(np.float64) + b.astype(np.float64)).astype(a.dtype)


def vals(n: int, dtype, lo=-100, hi=100) -> np.ndarray:
    return RNG.uniform(lo, hi, n).astype(dtype)


# --------------------------------------------------------------------------------------------
# count form
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, n", [(F16, 0), (F16, 1), (F16, 127), (F16, 128), (F16, 129), (F32, 63),
                                      (F32, 64), (F32, 65)])
def test_count_form_processes_the_first_n_elements(dtype, n):
    size = 512
    a, b, d = vals(size, dtype), vals(size, dtype), vals(size, dtype)
    out, (instr,) = run(lambda dst, x, y: asc.add(dst, x, y, n), d, a, b)
    np.testing.assert_array_equal(out[:n], exact_sum(a[:n], b[:n]))
    np.testing.assert_array_equal(out[n:], d[n:])  # untouched past count
    lanes = 256 // np.dtype(dtype).itemsize
    assert (instr.op, instr.pipe, instr.count, instr.repeats, instr.cost) == ("add", Pipe.V, n, -(-n // lanes), "Add")
    nbytes = n * np.dtype(dtype).itemsize
    assert [a.nbytes for a in instr.reads] == [nbytes, nbytes] and [w.nbytes for w in instr.writes] == [nbytes]


def test_count_form_keywords_and_is_set_mask_are_accepted():
    a, b, d = vals(64, F32), vals(64, F32), np.zeros(64, F32)
    out, _ = run(lambda dst, x, y: asc.add(dst, x, y, count=64, is_set_mask=False), d, a, b)
    np.testing.assert_array_equal(out, exact_sum(a, b))


# --------------------------------------------------------------------------------------------
# split form: masks, repeats, strides
# --------------------------------------------------------------------------------------------

def split_model(d, a, b, mask, repeats, strides, op=np.add):
    """dst after one binary split-form instruction, per the documented layout (no overlaps)."""
    lanes = 256 // d.dtype.itemsize
    active = lane_mask(mask, lanes)
    idx = {role: split_elements(repeats, lanes, d.dtype.itemsize, *strides[role], active)
           for role in ("dst", "src0", "src1")}
    out = d.copy()
    for r in range(repeats):
        for di, ai, bi in zip(idx["dst"][r], idx["src0"][r], idx["src1"][r]):
            out[di] = d.dtype.type(op(np.float64(a[ai]), np.float64(b[bi])))
    return out


CASES = [  # (dtype, mask, repeats, (dst, src0, src1) x (blk, rep))
    (F16, 128, 2, {"dst": (1, 8), "src0": (1, 8), "src1": (1, 8)}),
    (F16, 64, 3, {"dst": (1, 8), "src0": (2, 16), "src1": (1, 8)}),          # 高维切分.md: src blk stride 2
    (F16, 100, 2, {"dst": (1, 10), "src0": (1, 10), "src1": (1, 9)}),        # repeat stride 10 / 9: gaps
    (F32, 33, 4, {"dst": (2, 16), "src0": (1, 0), "src1": (0, 1)}),          # rep stride 0, blk stride 0
    (F16, [0x69A569A569A569A5, 0x69A569A569A569A5], 2, {"dst": (2, 16), "src0": (2, 16), "src1": (1, 8)}),
    (F16, [0, 1 << 63], 3, {"dst": (1, 8), "src0": (1, 8), "src1": (1, 8)}),  # only lane 127
    (F32, [0x8000000000000001], 2, {"dst": (1, 8), "src0": (1, 8), "src1": (1, 8)}),
    (F32, [0xF0F0F0F0F0F0F0F0, 0], 1, {"dst": (1, 8), "src0": (1, 8), "src1": (1, 8)}),  # 32-bit: maskHigh = 0 (掩码.md 表5)
    (F16, 200, 1, {"dst": (1, 8), "src0": (1, 8), "src1": (1, 8)}),          # past 128: all lanes (掩码.md)
]


@pytest.mark.parametrize("dtype, mask, repeats, strides", CASES)
def test_split_form_matches_the_documented_layout(dtype, mask, repeats, strides):
    size = 2048
    a, b, d = vals(size, dtype), vals(size, dtype), vals(size, dtype)
    params = asc.BinaryRepeatParams(strides["dst"][0], strides["src0"][0], strides["src1"][0],
                                    strides["dst"][1], strides["src0"][1], strides["src1"][1])
    out, (instr,) = run(lambda dst, x, y: asc.add(dst, x, y, mask, repeats, params), d, a, b)
    np.testing.assert_array_equal(out, split_model(d, a, b, mask, repeats, strides))
    lanes = 256 // np.dtype(dtype).itemsize
    assert (instr.repeats, instr.count) == (repeats, int(lane_mask(mask, lanes).sum()) * repeats)


def test_repeat_255_with_keywords():
    dtype, repeats = F32, 255
    strides = {"dst": (1, 8), "src0": (1, 0), "src1": (1, 1)}
    a, b, d = vals(64, dtype), vals(64 + 8 * 254 + 64, dtype), vals(64 * 255, dtype)
    params = asc.BinaryRepeatParams(dst_rep_stride=8, src0_rep_stride=0, src1_rep_stride=1)
    out, (instr,) = run(lambda dst, x, y: asc.add(dst, x, y, mask=64, repeat_times=repeats, repeat_params=params),
                        d, a, b)
    expected = d.copy()
    for r in range(repeats):
        expected[r * 64:(r + 1) * 64] = exact_sum(a[:64], b[8 * r:8 * r + 64])
    np.testing.assert_array_equal(out, expected)
    assert instr.repeats == 255


@pytest.mark.parametrize("mask, repeats", [(0, 3), ([0, 0], 2), (128, 0)])
def test_mask_zero_and_repeat_zero_are_nops(mask, repeats):
    a, b, d = vals(256, F16), vals(256, F16), vals(256, F16)
    out, (instr,) = run(lambda dst, x, y: asc.add(dst, x, y, mask, repeats, asc.BinaryRepeatParams()), d, a, b)
    np.testing.assert_array_equal(out, d)
    assert (instr.count, instr.repeats, instr.writes) == (0, 0, ())


def test_destination_rewritten_by_a_later_repeat_keeps_the_later_value():
    # dst repeat stride 4 blocks < 8: repeat r+1 rewrites half of repeat r's blocks; repeats run in order
    a, b, d = vals(512, F16), vals(512, F16), vals(512, F16)
    strides = {"dst": (1, 4), "src0": (1, 8), "src1": (1, 8)}
    out, _ = run(lambda dst, x, y: asc.add(dst, x, y, 128, 3, asc.BinaryRepeatParams(1, 1, 1, 4, 8, 8)), d, a, b)
    np.testing.assert_array_equal(out, split_model(d, a, b, 128, 3, strides))


def test_src1_accumulates_into_dst_with_repeat_stride_0():
    # 通用地址重叠约束: Add may read as src1 what an earlier repeat wrote, when dstRepStride is 0
    a, d = vals(64 * 4, F32), vals(64, F32)

    def body(dst, x, _):
        asc.add(dst, x, dst, 64, 4, asc.BinaryRepeatParams(1, 1, 1, 0, 8, 0))

    out, _ = run(body, d, a)
    acc = d.copy()
    for r in range(4):
        acc = exact_sum(acc, a[64 * r:64 * (r + 1)])
    np.testing.assert_array_equal(out, acc)


# --------------------------------------------------------------------------------------------
# the mask register: is_set_mask=False, Counter mode, reset by the count form
# --------------------------------------------------------------------------------------------

def test_is_set_mask_false_uses_set_vector_mask_then_reset_mask():
    a, b, d = vals(256, F16), vals(256, F16), vals(256, F16)
    high, low = 0x00FF00FF00FF00FF, 0x0F0F0F0F0F0F0F0F
    p = asc.BinaryRepeatParams()

    def body(dst, x, y):
        asc.set_vector_mask(high, low, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
        asc.add(dst, x, y, 128, 1, p, is_set_mask=False)      # the mask argument is a placeholder
        asc.reset_mask()
        asc.add(dst[128:], x[128:], y[128:], 1, 1, p, False)  # all 128 lanes

    out, instrs = run(body, d, a, b)
    first = split_model(d[:128], a[:128], b[:128], [low, high], 1, {r: (1, 8) for r in ("dst", "src0", "src1")})
    np.testing.assert_array_equal(out[:128], first)
    np.testing.assert_array_equal(out[128:], exact_sum(a[128:], b[128:]))
    assert [i.op for i in instrs] == ["set_vector_mask", "add", "reset_mask", "add"]
    assert instrs[0].pipe is Pipe.S


def counter_model(d, a, count, blk, rep):
    """Counter mode: ``count`` elements fill the lanes of consecutive repeats (掩码.md, Counter模式)."""
    lanes, repeats = 128, -(-count // 128)
    active = (np.arange(repeats * lanes) < count).reshape(repeats, lanes)
    out = d.copy()
    for row in split_elements(repeats, lanes, 2, blk, rep, active):  # src and dst share the strides
        for i in row:
            out[i] = F16(np.float64(a[i]) + 1.0)
    return out


def test_counter_mode_set_outside_the_call():
    # 掩码.md 图8: SetMaskCount; SetVectorMask<half, COUNTER>(130); Adds<half, false>(..., {2, 2, 16, 16}); SetMaskNorm
    a, d = vals(1024, F16), vals(1024, F16)

    def body(dst, x, _):
        asc.set_mask_count()
        asc.set_vector_mask(130, dtype=asc.float16, mode=asc.MaskMode.COUNTER)
        asc.adds(dst, x, 1.0, 0, 1, asc.UnaryRepeatParams(2, 2, 16, 16), False)
        asc.set_mask_norm()

    out, instrs = run(body, d, a)
    np.testing.assert_array_equal(out, counter_model(d, a, 130, 2, 16))
    assert [(i.op, i.count, i.repeats) for i in instrs if i.op == "adds"] == [("adds", 130, 2)]


def test_counter_mode_with_the_mask_array_in_the_call():
    # 掩码.md 图4: SetMaskCount; mask[2] = {130, 0}; Adds<half, true>(..., mask, 1, {2, 2, 16, 16})
    a, d = vals(1024, F16), vals(1024, F16)

    def body(dst, x, _):
        asc.set_mask_count()
        asc.adds(dst, x, 1.0, [130, 0], 1, asc.UnaryRepeatParams(2, 2, 16, 16))
        asc.set_mask_norm()

    out, _ = run(body, d, a)
    np.testing.assert_array_equal(out, counter_model(d, a, 130, 2, 16))


def test_a_count_form_call_restores_normal_mode_and_a_full_mask():
    # dav_c220 AddImpl(count): set_mask_count ... set_mask_norm; set_vector_mask(-1, -1)
    a, b, d = vals(256, F16), vals(256, F16), vals(256, F16)

    def body(dst, x, y):
        asc.set_vector_mask(1, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
        asc.add(dst, x, y, 16)
        asc.add(dst[128:], x[128:], y[128:], 0, 1, asc.BinaryRepeatParams(), False)

    out, _ = run(body, d, a, b)
    np.testing.assert_array_equal(out[:16], exact_sum(a[:16], b[:16]))
    np.testing.assert_array_equal(out[16:128], d[16:128])
    np.testing.assert_array_equal(out[128:], exact_sum(a[128:], b[128:]))


def test_set_vector_mask_mode_must_match_the_register():
    with pytest.raises(asc.KernelError, match=r"mode=COUNTER but the mask register is in NORMAL mode: call "
                                              r"set_mask_count\(\) first"):
        run(lambda d, x, y: asc.set_vector_mask(64, dtype=asc.float32, mode=asc.MaskMode.COUNTER),
            np.zeros(64, F32), np.zeros(64, F32))


# --------------------------------------------------------------------------------------------
# what the Trace records
# --------------------------------------------------------------------------------------------

def test_trace_records_the_bytes_a_strided_masked_repeat_touches():
    a, b, d = vals(1024, F16), vals(1024, F16), vals(1024, F16)
    mask = [0b1011, 0]  # lanes 0, 1, 3
    _, (instr,) = run(lambda dst, x, y: asc.add(dst, x, y, mask, 2, asc.BinaryRepeatParams(1, 2, 1, 8, 8, 4)),
                      d, a, b)

    def relative(accesses):
        base = accesses[0].start
        return [(x.start - base, x.stop - base) for x in accesses]

    # lanes 0, 1 and 3 of repeats 0 and 1: dst repeat stride 8 blocks = 256 B, src1 4 blocks = 128 B;
    # src0's block stride 2 does not matter: the lanes are all in block 0
    assert relative(instr.writes) == [(0, 4), (6, 8), (256, 260), (262, 264)]
    assert relative(instr.reads[:4]) == [(0, 4), (6, 8), (256, 260), (262, 264)]
    assert relative(instr.reads[4:]) == [(0, 4), (6, 8), (128, 132), (134, 136)]


def test_count_form_records_one_access_per_operand():
    a, b, d = vals(4096, F16), vals(4096, F16), vals(4096, F16)
    _, (instr,) = run(lambda dst, x, y: asc.add(dst, x, y, 4096), d, a, b)
    assert (len(instr.reads), len(instr.writes), instr.writes[0].nbytes) == (2, 1, 8192)


def test_contiguous_split_form_merges_into_one_range():
    a, b, d = vals(1024, F16), vals(1024, F16), vals(1024, F16)
    _, (instr,) = run(lambda dst, x, y: asc.add(dst, x, y, 128, 8, asc.BinaryRepeatParams()), d, a, b)
    assert [w.nbytes for w in instr.writes] == [2048] and [r.nbytes for r in instr.reads] == [2048, 2048]


# --------------------------------------------------------------------------------------------
# errors: bad forms (issue 8 J), ranges, overlaps
# --------------------------------------------------------------------------------------------

def bad_forms(dst, x, y):
    if BAD == "none_params":
        asc.add(dst, x, y, 128, 2, None)  # <none_params>
    if BAD == "no_params":
        asc.add(dst, x, y, mask=[2**64 - 1, 2**64 - 1], repeat_times=1)  # <no_params>
    if BAD == "unary_set_mask":
        asc.exp(dst, x, 64, is_set_mask=True)  # <unary_set_mask>
    if BAD == "float_count":
        asc.muls(dst, x, 2.0, 64.0)  # <float_count>


BAD = ""


@pytest.mark.parametrize("which, passed", [
    ("none_params", r"asc\.add\(dst, src0, src1, int, int, NoneType\)"),
    ("no_params", r"asc\.add\(dst, src0, src1, mask=list of 2, repeat_times=int\)"),
    ("unary_set_mask", r"asc\.exp\(dst, src, int, is_set_mask=bool\)"),
    ("float_count", r"asc\.muls\(dst, src, scalar, float\)"),
])
def test_a_call_no_form_takes_is_a_kernel_error_listing_the_forms(which, passed):
    global BAD
    BAD = which
    with pytest.raises(asc.KernelError, match=passed + " matches no call form of pyasc's asc") as info:
        run(bad_forms, np.zeros(128, F16), np.zeros(128, F16), np.zeros(128, F16))
    err = info.value
    assert (err.file, err.line) == (__file__, line_of(bad_forms, which))
    assert "Accepted forms:" in str(err) and "repeat_times: int" in str(err)


def error_of(body, dtype=F16, n=256, **launch):
    with pytest.raises(asc.KernelError) as info:
        run(body, np.zeros(n, dtype), np.zeros(n, dtype), np.zeros(n, dtype), **launch)
    return info.value


@pytest.mark.parametrize("body, match", [
    (lambda d, x, y: asc.add(d, x, y, 128, 256, asc.BinaryRepeatParams()), r"repeat_times must be in \[0, 255\]"),
    (lambda d, x, y: asc.add(d, x, y, 128, 1, asc.BinaryRepeatParams(0, 1, 1, 8, 8, 8)),
     r"destination's block stride is 0"),
    (lambda d, x, y: asc.add(d, x, y, [1], 1, asc.BinaryRepeatParams()), r"bit mask for 128-lane repeats takes two"),
    (lambda d, x, y: asc.add(d, x, y, -1, 1, asc.BinaryRepeatParams()), r"continuous mask must be >= 0"),
    (lambda d, x, y: asc.add(d, x, y, 128, 1, asc.BinaryRepeatParams(1, 1, 1, 256, 8, 8)),
     r"BinaryRepeatParams\.dst_rep_stride must be an integer in \[0, 255\]"),
    (lambda d, x, y: asc.add(d, x, y, 128, 3, asc.BinaryRepeatParams()), r"dst .* reaches element 383 but the tensor "
                                                                          r"has 256 elements"),
    (lambda d, x, y: asc.add(d, x, y, -5), r"count must be a non-negative element count"),
])
def test_range_errors(body, match):
    with pytest.raises(asc.KernelError, match=match):
        run(body, np.zeros(256, F16), np.zeros(256, F16), np.zeros(256, F16))


def test_partial_overlap_within_a_repeat_is_refused():
    def body(d, x, y):
        asc.add(x[16:], x, y, 128, 1, asc.BinaryRepeatParams())

    err = error_of(body)
    assert err.kind == "partial-overlap" and "within one repeat" in err.detail


def test_a_repeat_reading_an_earlier_repeats_destination_is_refused():
    def body(d, x, y):  # repeat 1 reads src0 = x[128:256], which repeat 0 wrote
        asc.div(x[128:], x, y, 128, 2, asc.BinaryRepeatParams())

    err = error_of(body, n=512)
    assert err.kind == "partial-overlap" and "earlier repeat wrote" in err.detail


def test_full_overlap_in_place_split_form_works():
    a, b = vals(256, F16), vals(256, F16)

    def body(d, x, y):
        asc.add(x, x, y, 128, 2, asc.BinaryRepeatParams())
        asc.muls(d, x, 1.0, 256)

    out, _ = run(body, np.zeros(256, F16), a, b)
    np.testing.assert_array_equal(out, exact_sum(a, b))


def test_a_soc_refuses_a_dtype_the_other_takes():
    def body(d, x, y):
        asc.duplicate(d, 1.5, 64)

    bf16 = np.zeros(64, ml_dtypes.bfloat16)
    out, _ = run(body, bf16, bf16)
    assert out.astype(np.float32).tolist() == [1.5] * 64
    err = error_of(body, dtype=ml_dtypes.bfloat16, n=64, soc="Ascend310P3")
    assert err.kind == "unsupported" and "duplicate does not support bfloat16" in err.detail


def test_a_missing_operand_is_a_kernel_error_not_a_type_error():
    def body(d, x, y):
        asc.add(d, x)  # <short>

    with pytest.raises(asc.KernelError, match=r"asc\.add is missing src1\. Accepted forms:") as info:
        run(body, np.zeros(16, F16), np.zeros(16, F16))
    assert info.value.line == line_of(body, "short")


def test_duplicate_split_form_uses_its_two_strides():
    # Duplicate.md: dst_block_stride, dst_repeat_stride in 32 B blocks; mask 20 of 64 float lanes
    d = vals(512, F32)
    out, (instr,) = run(lambda dst, x, y: asc.duplicate(dst, 2.5, 20, 3, 2, 20), d, np.zeros(8, F32))
    expected = d.copy()
    for row in split_elements(3, 64, 4, 2, 20, lane_mask(20, 64)):
        expected[row] = 2.5
    np.testing.assert_array_equal(out, expected)
    assert (instr.repeats, instr.count, instr.cost) == (3, 60, "Duplicate")


def test_cast_split_form_counts_lanes_in_the_wider_dtype():
    # Cast.md: a repeat holds 64 lanes for float32 -> float16; dst half uses 4 blocks of its own
    # (dst repeat stride 4 blocks, src 8 blocks: the page's UnaryRepeatParams(1, 1, 4, 8) pattern)
    x = vals(64 * 3, F32)
    d = np.zeros(64 * 3, F16)
    p = asc.UnaryRepeatParams(1, 1, 4, 8)
    out, (instr,) = run(lambda dst, s, _: asc.cast(dst, s, asc.RoundMode.CAST_RINT, 64, 3, p), d, x)
    np.testing.assert_array_equal(out, x.astype(np.float64).astype(F16))
    assert (instr.repeats, instr.count) == (3, 192)


def test_unary_split_form_with_is_set_mask_false():
    x = vals(256, F16, 0, 9)
    d = vals(256, F16)

    def body(dst, s, _):
        asc.set_vector_mask(0, 0xFF, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
        asc.sqrt(dst, s, 0, 2, asc.UnaryRepeatParams(), False)
        asc.reset_mask()

    out, _ = run(body, d, x)
    want = d.copy()
    for r in range(2):
        want[128 * r:128 * r + 8] = np.sqrt(x[128 * r:128 * r + 8].astype(np.float64)).astype(F16)
    np.testing.assert_array_equal(out, want)


@asc.jit
def _counter_mode_split_form(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=1024)
    t = buf.get(asc.float16)
    u = t[256:]
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 256)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 256)
    asc.data_copy(t, xg, 256)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.duplicate(u, 0.0, 256)
    asc.set_mask_count()
    asc.add(u, t, t, n, 1, asc.BinaryRepeatParams())  # Counter mode: mask = element count
    asc.set_mask_norm()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, u, 256)


@pytest.mark.parametrize("n", [1, 100, 129, 256])
def test_counter_mode_split_form_takes_the_int_mask_as_an_element_count(n):
    """掩码.md: in Counter mode the mask argument is the number of elements to process, across repeats."""
    x = np.arange(256, dtype=np.float16)
    y = np.zeros(256, np.float16)
    _counter_mode_split_form[1](x, y, n)
    expect = np.where(np.arange(256) < n, x + x, 0).astype(np.float16)
    assert y.tobytes() == expect.tobytes()
