"""``asc.adv.softmax``: row softmax of a [m, k] tensor with its row max and row sum (Ascend C ``SoftMax``).

Sources: pyasc 1.1.1 ``python/asc/language/adv/activation.py`` (the call) and ``lib/Target/AscendC/Adv/
Activation.cpp`` (what it emits); asc-devkit ``docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftMax.md`` (the
page) and its implementation ``impl/adv_api/detail/activation/softmax/`` (``softmax_base_impl.h``,
``membase/common/softmax_impl/softmax_generic_nd_impl.h``, ``membase/v220/softmax_common_impl/
softmax_common_nd_reduce.h``, ``softmax_common/softmax_common_arithmetic.h``, ``softmax_tiling_func.h``).

Call: ``softmax(dst, sum, max, src, tiling, temp_buffer=None, reuse_source=False, basic_block=False,
data_format_nz=False)``. pyasc emits ``AscendC::SoftMax<T, reuse, basic, nz>(dst, sum, max, src, tiling)``:
no SoftMaxShapeInfo, so the shape [m, k] comes from ``src``'s ShapeInfo (``src.set_shape_info``; m = product
of the leading dimensions, k = the last; the original shape gives the unpadded [m0, k0]); when it differs
from (tiling.src_m, tiling.src_k) the API recomputes the tiling from the shape and its temporary space
(isCheckTiling, SOFTMAX_DEFAULT_CFG) -- so pyasc's ``SoftmaxTiling()`` with zeros works. Note: pyasc 1.1.1
emits no ``sharedTmpBuffer`` even when ``temp_buffer`` is given (Activation.cpp); fusekit follows the API
page and uses ``temp_buffer`` when given, else the stack (:mod:`.workspace`).

Rules enforced (SoftMax.md 参数说明 / 约束说明; KernelError otherwise): (src, sum/max) dtypes half/half,
float/float or half/float; dst like src; sum and max alike; every operand a 32 B aligned UB LocalTensor;
src has a ShapeInfo and its last axis is 32 B aligned; sum and max hold [m, 32 B] (16 halves / 8 floats per
row, the row's value repeated); dst and src are the same tensor or disjoint; temp_buffer is uint8, at least
GetSoftMaxMinTmpSize = (32 / sizeof(sum) + k + 64) x 4 bytes, and overlaps no operand; a given tiling
(not recomputed) is self-consistent and its split_m rows fit the temporary space; basic_block needs
k % 64 == 0, 256 / sizeof(T) <= k < 2048 and m % 8 == 0; data_format_nz is not simulated.

Values (Atlas A2/A3, ND): as the implementation orders them, in float32 with one rounding per basic
instruction and the launch's overflow mode applied to each elementwise step (the row max too where it is
folded with the Max instruction; whole / block reductions are not saturated, as fusekit's reduce
instructions). Per row: a half src is cast to
float (exact); max over the first k0 columns; x - max (Sub); exp (Exp, correctly rounded to float, the same
bits on every host: fusekit.asc.basic.transcendental; the NPU's Exp error is not documented); the row sum in the documented order (below); e / sum (Div; on Atlas
inference 2002: 1 / sum then a Mul, TransDivToMulImpl); a half result is cast with CAST_ROUND on 2201
(FLOAT2HALF_ROUND_MODE, v220) and CAST_NONE on 2002; half max / sum outputs likewise. Columns [k0, k) of dst
get exp(x - max) / sum of the padding too (page: 补齐的数据会参与部分运算). Sum order (v220
softmax_common_nd_reduce.h): k0 < 64: one WholeReduceSum (pairwise tree); 64 <= k0 < 512: the 64-wide
chunks added in order into one 64-lane row, the tail (k0 % 64) added onto its first lanes, then a tree of
64; k0 >= 512: the first 8 chunks block-summed (trees of 8) into 64 lanes, the other chunks then the tail
added in order, then a tree of 64; basic_block (SoftMaxBasicBlock): the chunks added in order for every k,
then a tree of 64. Tolerance vs the NPU: the same bits wherever the NPU's Exp is correctly
rounded (the order is the implementation's); each ulp of Exp error moves a float result by about one ulp.
Against the exact softmax expect a relative error up to about (|x - max| + 4) x 2^-24 for float (the
rounding of x - max is amplified by exp) and 1 ulp of half for half outputs. On 2002 the sum has the same
order (membase/v200/softmax_common_impl.h NewReduceSumLastNDImpl: the same folds, then a tree of 64).

Trace: per row chunk of the tiling (split_m rows), one PIPE_V record per basic step -- Cast (half), a row
max (cost WholeReduceMax, count = chunk elements), Cast of max (half/half), Sub, Exp, a row sum
(WholeReduceSum), Cast of sum (half/half), Div, Cast (half) -- with the UB bytes each reads and writes
(temporary space included): the chunk's decomposition (:func:`describe`), whose walk gives the values.
ASSUMPTION: the folds, block reductions and broadcasts inside the row max / row sum are costed as one reduction
over the chunk, and on Atlas inference the Duplicate / Div / Mul of TransDivToMulImpl as one Div; PIPE_V
barriers between steps are not recorded.
"""

from __future__ import annotations

import math

import numpy as np

from .. import checks, overflow
from ..basic.overlap import intersects
from ..basic.reduction import tree_sum
from ..basic.rounding import RoundMode
from ..runtime import current
from .decompose import Step, cast_to, record, step, walk
from .tiling import BASIC_TILE, REPEAT_FLOATS, SoftmaxTiling, plain
from .workspace import work_space

_PAGE = "SoftMax.md (asc-devkit docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口)"
_PAIRS = {("float16", "float16"), ("float32", "float32"), ("float16", "float32")}


# ---------------------------------------------------------------- numerics and the decomposition

def row_sum(e: np.ndarray, mode: str, basic: bool = False) -> np.ndarray:
    """Row sums of float32 ``e`` [rows, k0] in the order of NewReduceSumLastNDImpl (module docstring);
    ``basic``: SoftMaxBasicBlock's BasicBlockAddImpl (chunks added in order whatever k, no BigBlockReduceSum)."""
    rows, k = e.shape
    if k < REPEAT_FLOATS:
        return tree_sum(e, None, mode)
    nb, tail = divmod(k, REPEAT_FLOATS)
    chunks = e[:, :nb * REPEAT_FLOATS].reshape(rows, nb, REPEAT_FLOATS)
    with np.errstate(all="ignore"):
        if k >= 8 * REPEAT_FLOATS and not basic:  # BigBlockReduceSum: 8 chunks block-summed into 64 lanes, then the rest
            acc = tree_sum(chunks[:, :8].reshape(rows, 8, 8, 8), None, mode).reshape(rows, REPEAT_FLOATS)
            first = 8
        elif k >= 2 * REPEAT_FLOATS:  # Add(chunk 0, chunk 1), then NextBlockAddImpl
            acc = overflow.apply(chunks[:, 0] + chunks[:, 1], np.float32, mode)
            first = 2
        else:  # FirstBlockCopyImpl
            acc, first = chunks[:, 0].copy(), 1
        for j in range(first, nb):
            acc = overflow.apply(acc + chunks[:, j], np.float32, mode)
        if tail:  # TailAddImpl onto the first lanes
            acc[:, :tail] = overflow.apply(acc[:, :tail] + e[:, nb * REPEAT_FLOATS:], np.float32, mode)
    return tree_sum(np.asarray(acc, np.float32), None, mode)


def _elementwise_max(k0: int) -> bool:
    """Whether NewReduceMaxLastNDImpl folds with the elementwise Max (k0 in [128, 512), more than 8 chunks or a
    tail past 512, a tail in [64, 128)) rather than only block / whole reductions and copies."""
    nb, tail = divmod(k0, REPEAT_FLOATS)
    return 2 <= nb < 8 or (nb >= 8 and (nb > 8 or tail > 0)) or (nb == 1 and tail > 0)


def _row_max(mode: str, x: np.ndarray, k0: int) -> np.ndarray:
    """The row max [rows, 1] of float32 ``x`` over its first k0 columns (WholeReduceMax's step): put under the
    overflow ``mode`` where NewReduceMaxLastNDImpl folds with the elementwise Max (module docstring)."""
    mx = np.max(x[:, :k0], axis=1, keepdims=True)
    return overflow.apply(mx, np.float32, mode) if _elementwise_max(k0) else mx


def _trans_div_to_mul(mode: str, e: np.ndarray, s: np.ndarray) -> np.ndarray:
    """e / s on Atlas inference (arch 2002): TransDivToMulImpl's Duplicate 1, Div into the row's reciprocal, then
    Mul: two roundings, each under the overflow ``mode`` (the walk applies it to the product)."""
    f32 = np.float32
    inverse = overflow.apply((f32(1) / s).astype(f32), f32, mode)
    return (e * inverse).astype(f32)


def describe(src_dtype: str, sum_dtype: str, arch: str, rows: int, k: int, k0: int, basic: bool = False,
             at=lambda *names: ()) -> list[Step]:
    """SoftMaxGenericNDImpl on one chunk of ``rows`` rows of ``k`` columns (k0 of them reduced), as a
    decomposition (:mod:`.decompose`): the value "src" in ([rows, k] of ``src_dtype``), "dst" ([rows, k]),
    "max" and "sum" ([rows, 1] of ``sum_dtype``) out. ``at(*names)``: the chunk's UB Accesses of the named
    buffers ("src", "dst", "max", "sum", "tmp0", "red", "scratch"; default none: values only).

    Steps (module docstring, Values and Trace): a half src is cast to float into tmp0; the row max (the reduced
    float row red, or max itself when sum/max are float), its Cast to half (half/half), Sub, Exp, the row sum, its
    Cast, Div, the Cast of the result to half. Where the values are not a plain composition of the basic
    instructions the step says why (``overflow=False``: the values fusekit has always given; they differ from a
    saturating instruction only for +-inf sources in saturation mode)."""
    f32, n, blk = "float32", rows * k, 32 // np.dtype(sum_dtype).itemsize
    red = lambda mode, x: _row_max(mode, x, k0)  # noqa: E731
    total = lambda mode, e: row_sum(e[:, :k0], mode, basic).reshape(-1, 1)  # noqa: E731
    # Atlas inference divides through the reciprocal (Duplicate, Div, Mul); its Trace keeps the one Div record of
    # the chunk that fusekit has always given there, whose values are the three instructions'
    divide = _trans_div_to_mul if arch == "2002" else None
    half_cast = cast_to("float16", RoundMode.CAST_ROUND if arch == "2201" else RoundMode.CAST_NONE)
    if src_dtype == "float32":
        return [step("whole_reduce_max", "max", ("src",), rows * k0, f32, reads=at("src"), writes=at("scratch", "max"),
                     compute=red, overflow=False),
                step("sub", "dst", ("src", "max"), n, f32, reads=at("src", "max"), writes=at("dst")),
                step("exp", "dst", ("dst",), n, f32, reads=at("dst"), writes=at("dst")),
                step("whole_reduce_sum", "sum", ("dst",), rows * k0, f32, reads=at("dst"), writes=at("scratch", "sum"),
                     compute=total, overflow=False),
                step("div", "dst", ("dst", "sum"), n, f32, reads=at("dst", "sum"), writes=at("dst"), compute=divide)]
    mixed = sum_dtype == "float32"
    mx, sm = ("max", "sum") if mixed else ("red", "red")  # half/half reduces into the float row red, then casts it
    # The exact widening of the half src is not put under the overflow mode (fusekit's values since SoftMax
    # was simulated: +-inf stays +-inf in saturation mode, where a saturating Cast would give +-FLT_MAX).
    steps = [step("cast", "tmp0", ("src",), n, f32, reads=at("src"), writes=at("tmp0"),
                  compute=cast_to(f32, RoundMode.CAST_NONE), overflow=False),
             step("whole_reduce_max", mx, ("tmp0",), rows * k0, f32, reads=at("tmp0"), writes=at("scratch", mx),
                  compute=red, overflow=False)]
    if not mixed:  # the max is a half of src's, exact in half; not put under the overflow mode (as above)
        steps.append(step("cast", "max", ("red",), rows * blk, "float16", reads=at("red"), writes=at("max"),
                          compute=half_cast, overflow=False))
    steps += [step("sub", "tmp0", ("tmp0", mx), n, f32, reads=at("tmp0", mx), writes=at("tmp0")),
              step("exp", "tmp0", ("tmp0",), n, f32, reads=at("tmp0"), writes=at("tmp0")),
              step("whole_reduce_sum", sm, ("tmp0",), rows * k0, f32, reads=at("tmp0"), writes=at("scratch", sm),
                   compute=total, overflow=False)]
    if not mixed:
        steps.append(step("cast", "sum", ("red",), rows * blk, "float16", reads=at("red"), writes=at("sum"),
                          compute=half_cast))
    return steps + [step("div", "tmp0", ("tmp0", sm), n, f32, reads=at("tmp0", sm), writes=at("tmp0"), compute=divide),
                    step("cast", "dst", ("tmp0",), n, "float16", reads=at("tmp0"), writes=at("dst"), compute=half_cast)]


def softmax_rows(x: np.ndarray, k0: int, arch: str, mode: str, basic: bool = False):
    """(result float32 [rows, k], max [rows], sum [rows]) of float32 rows ``x`` reduced over the first k0: the
    float decomposition (:func:`describe`) walked on them."""
    rows, k = x.shape
    v = walk(describe("float32", "float32", arch, rows, k, k0, basic), {"src": x}, mode)
    return v["dst"], v["max"][:, 0], v["sum"][:, 0]


# ---------------------------------------------------------------- tiling on the kernel side

def kernel_tiling(work_floats: int, m: int, k: int, m0: int, size1: int, blk: int, basic: bool) -> dict:
    """SoftMaxTilingFunc of the kernel (softmax_tiling_func.h) for shape [m, k], original rows m0: split_m
    from CalculateNDSplitM (half: W / (blk + k + 64), float: W / (blk + 64)). split_m may be 0 (too little
    space): the caller refuses it."""
    split = work_floats // (blk + k + REPEAT_FLOATS) if size1 == 2 else work_floats // (blk + REPEAT_FLOATS)
    split = min(split, m)
    if basic and split > BASIC_TILE and m % BASIC_TILE == 0:
        split = split // BASIC_TILE * BASIC_TILE
        while m % split:
            split -= BASIC_TILE
        while split * k >= REPEAT_FLOATS * 256:
            split //= 2
    if 0 < split < m0 and split > BASIC_TILE:
        split = split // BASIC_TILE * BASIC_TILE
    split = min(split, m0)
    return dict(src_m=m, src_k=k, split_m=split, split_k=k, split_size=split * k, reduce_m=split, reduce_k=blk,
                reduce_size=split * blk, range_m=m0 // split if split else 0, tail_m=m0 % split if split else 0,
                tail_split_size=(m0 % split) * k if split else 0)


def _check_given(core, op: str, t: dict, blk: int) -> None:
    """A tiling the API uses as given (its src_m / src_k match the shape) must be self-consistent in the fields
    SoftMaxNDExtImpl reads (softmax_generic_nd_impl.h): split / reduce sizes and offsets of each chunk, range_m
    and tail_m; the tail's sizes only when tail_m != 0 (the loop breaks before reading them otherwise);
    src_size and out_max_* are not read by the ND kernel, so not checked."""
    tail = t["tail_m"] != 0
    rules = [("split_m > 0", t["split_m"] > 0), ("split_k == src_k", t["split_k"] == t["src_k"]),
             ("split_size == split_m * split_k", t["split_size"] == t["split_m"] * t["split_k"]),
             ("reduce_k == 32 / sizeof(sum)", t["reduce_k"] == blk),
             ("reduce_size == split_m * reduce_k", t["reduce_size"] == t["split_m"] * blk),
             ("range_m * split_m + tail_m == src_m", t["range_m"] * t["split_m"] + t["tail_m"] == t["src_m"]),
             ("tail_split_size == tail_m * split_k", not tail or t["tail_split_size"] == t["tail_m"] * t["split_k"]),
             ("tail_reduce_size == tail_m * reduce_k", not tail or t["tail_reduce_size"] == t["tail_m"] * blk)]
    bad = [name for name, ok in rules if not ok]
    if bad:
        raise core.error(op, f"tiling matches src's shape [{t['src_m']}, {t['src_k']}] so SoftMax uses it as given, "
                             f"but it breaks {', '.join(bad)} ({t}): fill it with softmax_tiling_func(shape, "
                             "sizeof(sum), temporary bytes) (SoftMax-SimpleSoftMax-Tiling.md)")


# ---------------------------------------------------------------- the API

def softmax(dst, sum, max, src, tiling, temp_buffer=None, reuse_source=False,  # noqa: A002 - pyasc's names
            basic_block=False, data_format_nz=False) -> None:
    """asc.adv.softmax: dst = exp(src - rowmax) / rowsum over the last axis; sum / max get each row's sum and max
    repeated over 32 B (module docstring for shapes, rules, value order, tolerance and Trace).

    dst, src: half or float UB LocalTensors [m, k] (src's ShapeInfo gives m and k; k x sizeof 32 B aligned);
    sum, max: [m, 32 / sizeof] of half (half src) or float; tiling: :class:`SoftmaxTiling`; temp_buffer: uint8
    UB LocalTensor of at least get_softmax_min_tmp_size bytes, or None (the API takes the free UB after TPipe).

    Raises:
        KernelError: any rule of the module docstring broken (dtypes, alignment, missing ShapeInfo, too small
        temporary space or tensors, overlaps, an inconsistent tiling, basic_block on a non-basic shape, NZ).
    """
    op = "softmax"
    core = current(op)
    checks.local_operands(core, op, dst, sum, max, src)
    if not isinstance(tiling, SoftmaxTiling):
        raise core.error(op, f"tiling must be an asc.adv.SoftmaxTiling, got {type(tiling).__name__}")
    pair = (src.dtype.name, sum.dtype.name)
    if pair not in _PAIRS or dst.dtype != src.dtype or max.dtype != sum.dtype:
        raise core.error(op, f"dtypes (dst, sum, max, src) = ({dst.dtype.name}, {sum.dtype.name}, {max.dtype.name}, "
                             f"{src.dtype.name}); SoftMax takes half/half/half/half, float x 4, or half dst/src with "
                             f"float sum/max ({_PAGE}, 函数原型)", kind="unsupported", **src.describe(0))
    if data_format_nz:
        raise core.error(op, "data_format_nz=True (NZ layout) is not simulated yet by fusekit: only ND softmax is",
                         kind="unsupported")
    arch = core.soc.arch
    size1, size2 = src.dtype.sizeof(), sum.dtype.sizeof()
    blk = 32 // size2
    info = src.get_shape_info()
    if not info.dims or 0 in info.dims:
        raise core.error(op, f"{src.name} has no ShapeInfo: pyasc's asc.adv.softmax passes no SoftMaxShapeInfo, so "
                             "SoftMax reads [m, k] from src.GetShapeInfo() (softmax_base_impl.h); call "
                             "src.set_shape_info(asc.ShapeInfo(asc.array(asc.int32, (m, k)))) first",
                         **src.describe(0))
    k = info.dims[-1]
    m = math.prod(info.dims) // k
    k0 = info.original_dims[-1] if info.original_dims else k
    m0 = math.prod(info.original_dims) // k0 if info.original_dims and k0 else m
    if k * size1 % 32:
        raise core.error(op, f"src's last axis is {k} x {src.dtype.name} = {k * size1} B; it must be 32 B aligned "
                             f"({_PAGE}: srcTensor last轴长度需要32Byte对齐): pad it to {-(-k * size1 // 32) * 32 // size1}",
                         kind="misaligned", **src.describe(0))
    if not (0 < k0 <= k and 0 < m0 <= m):
        raise core.error(op, f"src's original shape [{m0}, {k0}] must lie within its shape [{m}, {k}] (the shape is "
                             "the original padded)", **src.describe(0))
    if basic_block and not (k % 64 == 0 and 256 // size1 <= k < 2048 and m % 8 == 0):
        raise core.error(op, f"basic_block=True needs k % 64 == 0, {256 // size1} <= k < 2048 and m % 8 == 0 "
                             f"({_PAGE}, isBasicBlock); src is [{m}, {k}]: pass basic_block=False")
    spans = {t: t.span(core, op, n) for t, n in ((src, m * k), (dst, m * k), (sum, m * blk), (max, m * blk))}
    if dst.addr != src.addr and intersects(spans[dst], spans[src]):
        raise core.error(op, f"dst {dst.name} and src {src.name} overlap without being the same tensor ({_PAGE}: "
                         "src和dst的Tensor空间可以复用 -- the same address, or apart)", kind="partial-overlap",
                         **dst.describe(m * k))
    work = work_space(core, op, _PAGE, temp_buffer, list(spans.items()))
    minimum = (blk + k + REPEAT_FLOATS) * 4
    if work.nbytes < minimum:
        where = "temp_buffer" if work.given else "the UB left after TPipe (the API's stack)"
        raise core.error(op, f"{where} has {work.nbytes} B but SoftMax needs at least GetSoftMaxMinTmpSize = "
                             f"(32 / {size2} + {k} + 64) x 4 = {minimum} B for k = {k} (SoftMax-SimpleSoftMax-Tiling.md)"
                             f": give it {minimum} B or more", kind="out-of-bounds")
    t = plain(tiling)
    per_row = blk + k + REPEAT_FLOATS if size1 == 2 else blk + REPEAT_FLOATS
    if (t["src_m"], t["src_k"]) != (m, k):
        t = kernel_tiling(work.nbytes // 4, m, k, m0, size1, blk, basic_block)
        rows = m0
    else:
        _check_given(core, op, t, blk)
        rows = m
        if t["split_m"] * per_row * 4 > work.nbytes:
            raise core.error(op, f"tiling.split_m = {t['split_m']} rows need {t['split_m'] * per_row * 4} B of "
                                 f"temporary space but {work.name} has {work.nbytes} B: compute the tiling with "
                                 f"softmax_tiling_func(shape, {size2}, {work.nbytes})", kind="out-of-bounds")
    mode = overflow.mode_of(core)
    split = t["split_m"]
    chunks = _chunks(src, dst, sum, max, work, arch, rows, split, k, k0, blk, bool(basic_block))

    # a closure, not an Effect: it walks each chunk's decomposition (row reductions, roundings in between) and writes
    # three outputs
    def effect():
        x = src.array(rows * k).reshape(rows, k).copy()  # every row read before any output is written
        done = [walk(steps, {"src": x[first:first + r]}, mode) for first, r, steps in chunks]
        outs = [(dst, np.concatenate([v["dst"] for v in done]).reshape(-1))]
        outs += [(t, np.repeat(np.concatenate([v[name] for v in done]).reshape(-1), blk))
                 for t, name in ((max, "max"), (sum, "sum"))]  # each row's value repeated over its 32 B
        for tensor, values in outs:
            tensor.array(values.size)[:] = values

    record(core, op, [s for _, _, steps in chunks for s in steps], work, split * per_row * 4, effect)


def _chunks(src, dst, sum_t, max_t, work, arch: str, rows: int, split: int, k: int, k0: int, blk: int,
            basic: bool) -> list[tuple[int, int, list[Step]]]:
    """(first row, rows, its steps) of each chunk of split_m rows (module docstring, Trace): the decomposition
    (:func:`describe`) with the UB bytes each step reads and writes, the temporary space laid out as
    SoftMaxGenericNDImpl lays it out."""
    half, mixed = src.dtype.sizeof() == 2, src.dtype.sizeof() == 2 and sum_t.dtype.sizeof() == 4
    s1, s2 = src.dtype.sizeof(), sum_t.dtype.sizeof()
    out = []
    for first in range(0, rows, split):
        r = min(split, rows - first)

        def part(t, unit, size, a=first, rr=r):
            return t.access(t.addr + a * unit * size, t.addr + (a + rr) * unit * size)

        acc = {"src": part(src, k, s1), "dst": part(dst, k, s1), "max": part(max_t, blk, s2),
               "sum": part(sum_t, blk, s2)}
        if half:  # tmp0 = float copy [r, k], then the reduced row [r, 8 floats], then the reduce scratch
            acc["tmp0"] = work.access(0, r * k * 4)
            if not mixed:
                acc["red"] = work.access(split * k * 4, r * blk * 4)
            acc["scratch"] = work.access(split * k * 4 + (0 if mixed else split * blk * 4), r * REPEAT_FLOATS * 4)
        else:
            acc["scratch"] = work.access(0, r * REPEAT_FLOATS * 4)
        at = lambda *names, acc=acc: tuple(acc[n] for n in names)  # noqa: E731
        out.append((first, r, describe(src.dtype.name, sum_t.dtype.name, arch, r, k, k0, basic, at)))
    return out


__all__ = ["softmax"]
