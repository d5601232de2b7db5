"""``asc.adv.rmsnorm``: RmsNorm of a [B, S, H] tensor (Ascend C ``RmsNorm``), the normalisation API pyasc 1.1.1
exports (``python/asc/language/adv/normalization.py``; pyasc has no layernorm / batchnorm / groupnorm /
deepnorm / normalize / welford).

Sources: asc-devkit ``docs/zh/api/SIMD-API/高阶API/归一化操作/RmsNorm.md`` and ``RmsNorm-Tiling.md``; the
implementation ``impl/adv_api/detail/normalization/rmsnorm/rmsnorm_common_impl.h`` (A2/A3 and Atlas inference);
pyasc ``lib/Target/AscendC/Adv/Normalization.cpp`` (emits ``RmsNorm<T, basic>(dst, src, gamma[, tmp], eps,
tiling)``: the temp buffer is passed when given).

Call: ``rmsnorm(dst, src, gamma, epsilon, tiling, temp_buffer=None, basic_block=False)``:
dst[i, :] = src[i, :] / sqrt(mean(src[i, :H0]^2) + epsilon) * gamma for the B*S rows of H elements. The shape is
the tiling's (b_length, s_length, h_length, original_h_length = H0); RmsNorm reads no ShapeInfo.

Rules (KernelError otherwise): dst, src, gamma half or float, one dtype, 32 B aligned UB LocalTensors; src and
dst hold the elements the tiling's chunks reach (loop_round x main_bsh_length, and the tail's input_tail_pos +
tail_bsh_length) and gamma H; dst and gamma do not overlap (约束说明: 不允许复用) and dst / src are the
same tensor or apart; H x sizeof(T) is 32 B aligned and 0 < H0 <= H; each tiling field is checked only as
rmsnorm_common_impl.h reads it (:func:`_check_tiling`: a chunk's bsh = its bs x H; main_bs_length_align, the
offset of the squares in the temporary space, a multiple of 8 and at least every chunk's rows -- any such
value, not only the host's round-up to 8; the tail's fields only when tail_bs_length != 0; b_length and
s_length not at all) and the tiling computes something (an all-zero tiling would leave dst unwritten on the NPU); the temporary space
(temp_buffer, uint8, or the stack) holds at least the minimum of GetRmsNormMaxMinTmpSize, (H x (2 half | 1
float) + 8) x 4 bytes, and what the tiling uses, (main_bs_length_align + main_bsh_length x (2 | 1)) x 4;
basic_block needs H % 64 == 0, H < 2048 and B*S % 8 == 0.

Values (RmsNormCompute, in float32, one rounding per basic instruction, the overflow mode on each): x = src
(half cast exactly); x*x (Mul); row sum of the first H0 squares by repeated RepeatReduceSum (pairwise trees
over 64-element pieces, then over their sums; basic_block: the 64-wide pieces added in order, then one tree);
x Muls tiling.reciprocal_of_h_length; Adds epsilon (epsilon rounded to T first, as pyasc materialises it);
rsqrt as exp(-0.5 x ln(v)) (Ln, Muls, Exp: "high precision impl of rsqrt"); x * rsqrt (Muls); * gamma (Mul);
a half result cast with CAST_NONE (round to nearest even). H0 == 1 sums nothing on the NPU (the reduce loop
runs while more than one element is left) and uses the stale float in the temporary space: fusekit reads the
same bytes. Ln and Exp are correctly rounded (fusekit.asc.basic.transcendental, the same bits on every host):
their NPU error is not documented. Tolerance vs the NPU: float within ~4 ulp of float32 (relative 5e-7) per
element, half within 1 ulp of half.

Trace: per row chunk (main_bs_length rows, then the tail), one PIPE_V record per basic instruction above
(Cast, Mul, RepeatReduceSum, Muls, Adds, Ln, Muls, Exp, Muls, Cast of gamma, Mul, Cast), with the UB bytes
each reads and writes: the chunk's decomposition (:func:`describe`), whose walk gives the values.
ASSUMPTION: the scalar GetValue reads of the row factors (PIPE_S, with a V_S flag) are not recorded; the
repeated RepeatReduceSum passes are one record.
"""

from __future__ import annotations

import numpy as np

from .. import checks, overflow
from ..basic.overlap import intersects
from ..basic.reduction import tree_sum
from ..basic.rounding import RoundMode
from ..runtime import current
from .decompose import Step, cast_to, record, step, walk
from .tiling import BASIC_TILE, REPEAT_FLOATS, RmsNormTiling, plain
from .workspace import work_space

_PAGE = "RmsNorm.md (asc-devkit docs/zh/api/SIMD-API/高阶API/归一化操作)"


def reduce_rows(sq: np.ndarray, basic: bool, mode: str) -> np.ndarray:
    """Row sums of float32 ``sq`` [rows, n] as RmsNormReduceSum orders them (module docstring)."""
    rows, n = sq.shape
    if basic:
        acc = sq[:, :REPEAT_FLOATS]
        with np.errstate(all="ignore"):
            for i in range(1, n // REPEAT_FLOATS):
                acc = overflow.apply(acc + sq[:, i * REPEAT_FLOATS:(i + 1) * REPEAT_FLOATS], np.float32, mode)
        return tree_sum(np.asarray(acc, np.float32), None, mode)
    level = sq
    while level.shape[1] > 1:
        width = level.shape[1]
        pieces = -(-width // REPEAT_FLOATS)
        padded = np.full((rows, pieces * REPEAT_FLOATS), -0.0, np.float32)  # masked lanes: the identity
        padded[:, :width] = level
        level = tree_sum(padded.reshape(rows, pieces, REPEAT_FLOATS), None, mode)
    return level[:, 0]


def describe(dtype: str, rows: int, h: int, h0: int, recip, eps, basic: bool = False,
             at=lambda *names: ()) -> list[Step]:
    """RmsNormCompute on one chunk of ``rows`` rows of H = ``h`` as a decomposition (:mod:`.decompose`): the values
    "src" ([rows, H] of ``dtype``), "gamma" ([H]) and, where H0 == 1, "red" ([rows, 1] float32: the stale floats
    the row factors are read from) in; "dst" ([rows, H]) out, "red" left holding the chunk's rsqrt. ``recip``,
    ``eps``: float32 scalars (tiling.reciprocal_of_h_length, epsilon rounded to T). ``at(*names)``: the chunk's
    UB Accesses of the named buffers ("src", "dst", "gamma", "x" (half: the float copy of src), "tmp", "red",
    "g" (half: the float copy of gamma)); default none: values only.

    Steps (module docstring, Values and Trace): the float copy of a half src, x*x, the row sums of the first H0
    squares (not run where H0 == 1), x tiling.reciprocal_of_h_length, + epsilon, the rsqrt as Exp(Muls(Ln, -0.5)),
    x * rsqrt, the float copy of a half gamma, * gamma, the Cast of a half result. The exact widening Casts of src
    and gamma are not put under the overflow mode (fusekit's values since RmsNorm was simulated: an +-inf src
    stays +-inf in saturation mode, where a saturating Cast would give +-FLT_MAX)."""
    f32, n, half = "float32", rows * h, dtype == "float16"
    x = "x" if half else "src"
    sums = lambda mode, sq: reduce_rows(sq if basic else sq[:, :h0], basic, mode).reshape(-1, 1)  # noqa: E731
    widen = cast_to(f32, RoundMode.CAST_NONE)
    steps = [step("cast", "x", ("src",), n, f32, reads=at("src"), writes=at("x"), compute=widen, overflow=False)] \
        if half else []
    steps.append(step("mul", "tmp", (x, x), n, f32, reads=at(x), writes=at("tmp")))
    if h0 > 1:  # with H0 == 1 the reduce loop does not run: the row factors read stale bytes
        steps.append(step("repeat_reduce_sum", "red", ("tmp",), rows * h0, f32, reads=at("tmp"),
                          writes=at("tmp", "red"), compute=sums, overflow=False))
    for name, scalar in (("muls", recip), ("adds", eps), ("ln", None), ("muls", np.float32(-0.5)), ("exp", None)):
        steps.append(step(name, "red", ("red",), rows, f32, reads=at("red"), writes=at("red"),
                          scalars=() if scalar is None else (np.float32(scalar),)))
    steps.append(step("muls", "tmp", (x, "red"), n, f32, reads=at(x, "red"), writes=at("tmp")))  # the row's factor
    if not half:
        return steps + [step("mul", "dst", ("tmp", "gamma"), n, f32, reads=at("tmp", "gamma"), writes=at("dst"))]
    return steps + [step("cast", "g", ("gamma",), h, f32, reads=at("gamma"), writes=at("g"), compute=widen,
                         overflow=False),
                    step("mul", "tmp", ("tmp", "g"), n, f32, reads=at("tmp", "g"), writes=at("tmp")),
                    step("cast", "dst", ("tmp",), n, "float16", reads=at("tmp"), writes=at("dst"),
                         compute=cast_to("float16", RoundMode.CAST_NONE))]


def rmsnorm_rows(x: np.ndarray, gamma: np.ndarray, h0: int, recip, eps, basic: bool, mode: str,
                 stale: np.ndarray | None = None) -> np.ndarray:
    """float32 result [rows, H] of RmsNormCompute on float32 rows ``x`` (``stale``: the sums when H0 == 1): the
    float decomposition (:func:`describe`) walked on them."""
    rows, h = x.shape
    values = {"src": x, "gamma": gamma}
    if stale is not None:
        values["red"] = np.asarray(stale, np.float32).reshape(-1, 1)
    return walk(describe("float32", rows, h, h0, recip, eps, basic), values, mode)["dst"]


def extent(t: dict) -> int:
    """Elements of src / dst the tiling's chunks reach: RmsNormImpl runs loop_round chunks of main_bsh_length,
    then, when tail_bs_length != 0, one of tail_bsh_length at input_tail_pos (b_length / s_length are not read)."""
    main = t["loop_round"] * t["main_bsh_length"]
    return max(main, t["input_tail_pos"] + t["tail_bsh_length"]) if t["tail_bs_length"] else main


def _check_tiling(core, op: str, t: dict, size: int, basic: bool) -> None:
    """Refuse a tiling only where rmsnorm_common_impl.h would go wrong with it: each field as the implementation
    reads it (GetRmsNormInfo lays the temporary space out as main_bs_length_align reduced floats, then the
    main_bsh_length squares, then (half) the float copy of src; each chunk's mask is its bsh length and its row
    loop its bs length). Fields of a part that does not run (the tail with tail_bs_length = 0, the main chunks
    with loop_round = 0) are not read, so not checked; b_length and s_length are never read by the kernel."""
    h, h0, align = t["h_length"], t["original_h_length"], t["main_bs_length_align"]
    main, tail = t["loop_round"] > 0, t["tail_bs_length"] != 0
    if not main and not tail:
        raise core.error(op, f"tiling computes nothing (loop_round = 0 and tail_bs_length = 0: {t}); on the NPU dst "
                             "would be left unwritten: fill it with get_rms_norm_tiling_info(...) (RmsNorm-Tiling.md)")
    rows = [t["main_bs_length"]] * main + [t["tail_bs_length"]] * tail
    rules = [("h_length x sizeof(T) 32 B aligned", h > 0 and h * size % 32 == 0),
             ("0 < original_h_length <= h_length", 0 < h0 <= h),
             ("main_bsh_length == main_bs_length x h_length", not main or t["main_bsh_length"] == t["main_bs_length"] * h),
             # tmpLocal[mainBsLengthAlign] starts the squares: a vector operand, so 32 B (8 floats) aligned, and
             # past every chunk's reduced row sums
             ("main_bs_length_align a multiple of 8 (32 B of floats)", align % BASIC_TILE == 0),
             ("main_bs_length_align >= the rows of every chunk", all(align >= r for r in rows)),
             ("tail_bsh_length == tail_bs_length x h_length", not tail or t["tail_bsh_length"] == t["tail_bs_length"] * h),
             # the tail's squares go where main_bsh_length squares were laid out
             ("tail_bsh_length <= main_bsh_length", not tail or t["tail_bsh_length"] <= t["main_bsh_length"]),
             ("input_tail_pos x sizeof(T) 32 B aligned", not tail or t["input_tail_pos"] * size % 32 == 0)]
    bad = [name for name, ok in rules if not ok]
    if bad:
        raise core.error(op, f"tiling breaks {', '.join(bad)} ({t}): fill it with get_rms_norm_tiling_info(...) "
                             "(RmsNorm-Tiling.md; rmsnorm_common_impl.h)")
    if basic and not (h % 64 == 0 and h < 2048 and extent(t) // h % 8 == 0):
        raise core.error(op, f"basic_block=True needs H % 64 == 0, H < 2048 and B*S % 8 == 0 ({_PAGE}, isBasicBlock); "
                             f"the tiling covers {extent(t) // h} rows of H = {h}: pass basic_block=False")


def rmsnorm(dst, src, gamma, epsilon, tiling, temp_buffer=None, basic_block=False) -> None:
    """asc.adv.rmsnorm: dst = src / sqrt(mean(src^2) + epsilon) * gamma per row of H (module docstring for
    rules, value order, tolerance and Trace).

    dst, src: half or float UB LocalTensors of B*S*H elements; gamma: [H] of the same dtype; epsilon: a number
    (rounded to T); tiling: :class:`RmsNormTiling` from get_rms_norm_tiling_info; temp_buffer: uint8 UB
    LocalTensor or None (the free UB after TPipe).

    Raises:
        KernelError: a rule of the module docstring broken.
    """
    op = "rmsnorm"
    core = current(op)
    checks.local_operands(core, op, dst, src, gamma)
    if not isinstance(tiling, RmsNormTiling):
        raise core.error(op, f"tiling must be an asc.adv.RmsNormTiling, got {type(tiling).__name__}")
    checks.same_dtype(core, op, dst, src, gamma)
    if src.dtype.name not in ("float16", "float32"):
        raise core.error(op, f"{src.name} is {src.dtype.name}; RmsNorm takes half or float ({_PAGE}, 模板参数 T)",
                         kind="unsupported", **src.describe(0))
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)) \
            and not hasattr(epsilon, "__float__"):
        raise core.error(op, f"epsilon must be a number, got {type(epsilon).__name__}")
    size = src.dtype.sizeof()
    t = plain(tiling)
    _check_tiling(core, op, t, size, basic_block)
    h, h0 = t["h_length"], t["original_h_length"]
    total = extent(t)
    spans = {dst: dst.span(core, op, total), src: src.span(core, op, total), gamma: gamma.span(core, op, h)}
    if intersects(spans[dst], spans[gamma]):
        raise core.error(op, f"dst {dst.name} and gamma {gamma.name} overlap ({_PAGE}, 约束说明: dstLocal和gammaLocal的"
                             "Tensor空间不允许复用)", kind="partial-overlap", **dst.describe(total))
    if dst.addr != src.addr and intersects(spans[dst], spans[src]):
        raise core.error(op, f"dst {dst.name} and src {src.name} overlap without being the same tensor",
                         kind="partial-overlap", **dst.describe(total))
    work = work_space(core, op, _PAGE, temp_buffer, list(spans.items()))
    coeff = 2 if size == 2 else 1
    minimum = (h * coeff + BASIC_TILE) * 4
    used = (t["main_bs_length_align"] + coeff * t["main_bsh_length"]) * 4
    where = "temp_buffer" if work.given else "the UB left after TPipe (the API's stack)"
    if work.nbytes < max(minimum, used):
        raise core.error(op, f"{where} has {work.nbytes} B but RmsNorm needs {max(minimum, used)} B (minimum of "
                             f"GetRmsNormMaxMinTmpSize {minimum} B; the tiling's main_bs_length = "
                             f"{t['main_bs_length']} rows use {used} B): " + (
                                 f"pass a buffer of at least the minimum {minimum} B" if work.nbytes < minimum else
                                 "pass a larger buffer or compute the tiling with "
                                 f"get_rms_norm_tiling_info(..., {work.nbytes}, {size})"), kind="out-of-bounds")
    mode = overflow.mode_of(core)
    eps = np.float32(np.array(float(epsilon)).astype(src.dtype.np))  # pyasc materialises it as T
    recip = np.float32(t["reciprocal_of_h_length"])
    chunks = [(i * t["main_bsh_length"], t["main_bs_length"]) for i in range(t["loop_round"])]
    if t["tail_bs_length"]:
        chunks.append((t["input_tail_pos"], t["tail_bs_length"]))
    described = _chunks(dst, src, gamma, work, chunks, h, h0, t["main_bs_length_align"], t["main_bsh_length"], recip,
                        eps, bool(basic_block))

    # a closure, not an Effect: it walks each chunk's decomposition, reductions and roundings in between, and reads the
    # temporary space a previous chunk left
    def effect():
        g = gamma.array(h).copy()
        # the reduced row factors' floats at the start of the temporary space: stale where H0 == 1
        red = np.frombuffer(core.ub[work.start:work.start + t["main_bs_length_align"] * 4].tobytes(),
                            np.float32).copy()
        for (first, rows), steps in zip(chunks, described):
            x = src.array(first + rows * h)[first:].reshape(rows, h).copy()
            v = walk(steps, {"src": x, "gamma": g, "red": red[:rows].reshape(-1, 1)}, mode)
            red[:rows] = v["red"].reshape(-1)  # that chunk's rsqrt: what the next chunk finds where H0 == 1
            dst.array(first + rows * h)[first:] = v["dst"].reshape(-1)

    record(core, op, [s for steps in described for s in steps], work, used, effect)


def _chunks(dst, src, gamma, work, chunks, h: int, h0: int, align: int, bsh: int, recip, eps,
            basic: bool) -> list[list[Step]]:
    """Each chunk's steps (:func:`describe`) with the UB bytes they read and write: the temporary space as
    GetRmsNormInfo lays it out (``align`` reduced floats, then ``bsh`` squares, then (half) the float copies)."""
    size = src.dtype.sizeof()
    half = size == 2
    out = []
    for first, rows in chunks:
        n = rows * h
        acc = {"src": src.access(src.addr + first * size, src.addr + (first + n) * size),
               "dst": dst.access(dst.addr + first * size, dst.addr + (first + n) * size),
               "gamma": gamma.access(gamma.addr, gamma.addr + h * size),
               "tmp": work.access(align * 4, n * 4), "red": work.access(0, rows * 4)}
        if half:
            acc["x"] = work.access((align + bsh) * 4, n * 4)
            acc["g"] = work.access((align + bsh) * 4, h * 4)
        at = lambda *names, acc=acc: tuple(acc[name] for name in names)  # noqa: E731
        out.append(describe(src.dtype.name, rows, h, h0, recip, eps, basic, at))
    return out


__all__ = ["rmsnorm"]
