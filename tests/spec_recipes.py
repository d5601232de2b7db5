"""One recipe per vector family: a call of one of its instructions on UB operands of given dtypes, for the
registry-driven walk of ``tests/asc_api/basic/test_spec_conformance.py`` (every Spec x SoC x dtype).

A recipe takes ``(name, src, dst, arch)``: the spec's name, the dtypes its table keys on (the source and the
destination of a pair table; one dtype twice otherwise) and the SoC's architecture, and returns a
:class:`Case`: the initial contents of the UB tensors and the body that issues the instruction on them,
after setting the registers the instruction reads (DEQSCALE: SetDeqScale.md; CmpMask: SetCmpMask(ISASI).md).
Operands the table does not key on get the dtype their page fixes (uint32 offsets and indices, a uint8 bit
mask or selMask). Every value is 1 and every offset 0 or distinct: the walk asks which dtypes an
instruction takes, not what it computes (the family tests do that against references).

``RECIPES`` maps a family to one recipe, or to ``{spec name: recipe}`` when the calls of the family differ
per instruction; :func:`recipe_for` fails for a spec that has neither, so a new family or instruction
fails the walk until it gets a recipe here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from fusekit import asc
from fusekit.asc.basic.vec_vconv import MODES
import support

REPEAT = 256  # bytes of one repeat (AD-API SIMD计算说明/高维切分.md)
MIN_BYTES = 512  # every operand at least this big: room for one repeat of any layout the recipes use
MAX_TENSORS = 6


@dataclass(frozen=True)
class Case:
    """UB tensors loaded from ``arrays`` (in order), then ``body(*tensors)``."""

    arrays: tuple[np.ndarray, ...]
    body: Callable


@asc.jit
def _kernel(a0: asc.GlobalAddress, a1: asc.GlobalAddress, a2: asc.GlobalAddress, a3: asc.GlobalAddress,
            a4: asc.GlobalAddress, a5: asc.GlobalAddress, BODY: asc.ConstExpr, SIZES: asc.ConstExpr):
    pipe = asc.TPipe()
    tensors = []
    for addr, n in zip((a0, a1, a2, a3, a4, a5), SIZES):  # the GM buffers past len(SIZES) are placeholders
        t = support.ub_buf(pipe, addr.dtype, n)
        asc.data_copy(t, support.gm_view(addr, n), n)
        tensors.append(t)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    BODY(*tensors)


def run_case(case: Case, soc: str):
    """Launch ``case`` on one core of ``soc``; returns the LaunchResult (KernelError if the call is refused)."""
    assert len(case.arrays) <= MAX_TENSORS, "the walk's kernel loads at most six tensors"
    spare = [np.zeros(32, np.uint8)] * (MAX_TENSORS - len(case.arrays))
    return _kernel[1](*case.arrays, *spare, case.body, tuple(a.size for a in case.arrays), soc=soc)


def full(dtype: asc.DataType, n: int = 0, value=1) -> np.ndarray:
    """``n`` elements of ``value`` (at least MIN_BYTES, a whole number of 32 B blocks)."""
    size = dtype.sizeof()
    count = max(n, MIN_BYTES // size)
    count += -count % (32 // size)
    return np.full(count, value, dtype.np)


def _lanes(*dts: asc.DataType) -> int:
    """Elements of one repeat: 256 B of the widest operand (Cast.md: 以数据类型的字节较大的为准)."""
    return REPEAT // max(d.sizeof() for d in dts)


U8, U32 = asc.uint8, asc.uint32


# -- elementwise families: one call per family -----------------------------------------------------

def _binary(name, src, dst, arch) -> Case:
    n = _lanes(src, dst)

    def body(d, a, b):
        asc.set_deq_scale(1.0)  # AddDeqRelu reads DEQSCALE's half scale (AddDeqRelu.md); the others ignore it
        getattr(asc, name)(d, a, b, n)
    return Case((full(dst), full(src), full(src)), body)


def _unary(name, src, dst, arch) -> Case:
    n = _lanes(src, dst)
    return Case((full(dst), full(src)), lambda d, a: getattr(asc, name)(d, a, n))


def _with_scalar(name, src, dst, arch) -> Case:
    n = _lanes(src, dst)  # scalar 1: also a shift amount in range (ShiftLeft.md scalarValue取值说明)
    return Case((full(dst), full(src)), lambda d, a: getattr(asc, name)(d, a, 1, n))


def _duplicate(name, src, dst, arch) -> Case:
    n = _lanes(dst)
    return Case((full(dst),), lambda d: getattr(asc, name)(d, 1, n))


# -- vec_vconv: Cast takes a RoundMode, CastDequant reads DEQSCALE in the form its pair needs ----------

def _cast(name, src, dst, arch) -> Case:
    n = _lanes(src, dst)
    takes = MODES.get(arch, {}).get((src.name, dst.name), ())
    mode = next((m for m in asc.RoundMode if m in takes), asc.RoundMode.CAST_RINT)  # a mode of the pair's row

    def body(d, a):
        asc.set_deq_scale(1.0)  # int32 -> half multiplies by DEQSCALE's half scale (Cast.md, SetDeqScale.md 表1)
        asc.cast(d, a, mode, n)
    return Case((full(dst), full(src)), body)


def _cast_deq(name, src, dst, arch) -> Case:
    n = _lanes(src, dst)
    quantise = src is asc.int16  # int16 -> int8 / uint8 reads (scale, offset, sign_mode) (CastDequant.md)

    def body(d, a):
        if quantise:
            asc.set_deq_scale(1.0, 0, dst is asc.int8)
            asc.cast_deq(d, a, n, False)
        else:
            asc.set_deq_scale(1.0)
            asc.cast_deq(d, a, n)
    return Case((full(dst), full(src)), body)


# -- vec_cmpsel: T keys the table; bit masks are uint8 ---------------------------------------------

def _compare(name, src, dst, arch) -> Case:
    n = _lanes(src)  # whole 256 B repeats (Compare.md); EQ: the one mode int32 takes
    return Case((full(U8), full(src), full(src)), lambda d, a, b: asc.compare(d, a, b, asc.CMPMODE.EQ, n))


def _compare_scalar(name, src, dst, arch) -> Case:
    n = _lanes(src)
    return Case((full(U8), full(src)), lambda d, a: asc.compare_scalar(d, a, 1, asc.CMPMODE.EQ, n))


def _select(name, src, dst, arch) -> Case:
    n = _lanes(dst)
    return Case((full(dst), full(U8), full(dst), full(dst)),
                lambda d, sel, a, b: asc.select(d, sel, a, b, asc.SelMode.VSEL_CMPMASK_SPR, n))


def _get_cmp_mask(name, src, dst, arch) -> Case:
    def body(d, mask):
        asc.set_cmp_mask(mask)  # GetCmpMask reads the register: load it first
        asc.get_cmp_mask(d)
    return Case((full(dst), full(U8)), body)


def _set_cmp_mask(name, src, dst, arch) -> Case:
    return Case((full(src),), lambda s: asc.set_cmp_mask(s))


# -- vec_reduce: dst, src (and the whole-tensor forms' shared_tmp_buffer) of T ---------------------

_MASK = 32  # a continuous mask every 16- and 32-bit repeat takes (掩码.md)
_REDUCE_CALLS = {  # name -> call on (dst, src, tmp) in its split form (the pages' parameter order)
    "whole_reduce_sum": lambda f, d, s, t, n: f(d, s, _MASK, 1, 1, 1, 8),
    "whole_reduce_max": lambda f, d, s, t, n: f(d, s, _MASK, 1, 1, 1, 8),
    "whole_reduce_min": lambda f, d, s, t, n: f(d, s, _MASK, 1, 1, 1, 8),
    "repeat_reduce_sum": lambda f, d, s, t, n: f(d, s, 1, _MASK, 1, 1, 1, 8),
    "block_reduce_sum": lambda f, d, s, t, n: f(d, s, 1, _MASK, 1, 1, 8),
    "block_reduce_max": lambda f, d, s, t, n: f(d, s, 1, _MASK, 1, 1, 8),
    "block_reduce_min": lambda f, d, s, t, n: f(d, s, 1, _MASK, 1, 1, 8),
    "pair_reduce_sum": lambda f, d, s, t, n: f(d, s, 1, _MASK, 1, 1, 8),
    "reduce_sum": lambda f, d, s, t, n: f(d, s, t, n),
    "reduce_max": lambda f, d, s, t, n: f(d, s, t, n),
    "reduce_min": lambda f, d, s, t, n: f(d, s, t, n),
}


def _reduce(name, src, dst, arch) -> Case:
    n, call, fn = _lanes(dst), _REDUCE_CALLS[name], getattr(asc, name)
    return Case((full(dst), full(src), full(dst)), lambda d, s, t: call(fn, d, s, t, n))


# -- proposal: 8-byte (score, index) elements on A2/A3, 8-element Region Proposals on 310P --------

def _sort32(name, src, dst, arch) -> Case:
    return Case((full(dst), full(dst, 32), full(U32, 32, 0)), lambda d, s, i: asc.sort32(d, s, i, 1))


def _sort(name, src, dst, arch) -> Case:
    return Case((full(dst), full(dst, 32), full(U32, 32, 0), full(dst)),
                lambda d, s, i, t: asc.sort(d, s, i, t, 1))


def _mrg_sort(name, src, dst, arch) -> Case:
    # two queues of 4 equal scores: sorted (MrgSort.md); valid_bit 3 = the first two queues
    return Case((full(dst), full(dst), full(dst)),
                lambda d, q1, q2: asc.mrg_sort(d, asc.MrgSortSrcList(q1, q2), asc.MrgSort4Info([4, 4], False, 3, 1)))


def _proposal_field(name, src, dst, arch) -> Case:
    return Case((full(dst), full(dst)), lambda d, s: getattr(asc, name)(d, s, 1, 4))  # 16 proposals, field 4 (score)


def _rp_sort16(name, src, dst, arch) -> Case:
    return Case((full(dst), full(dst)), lambda d, s: asc.rp_sort16(d, s, 1))


def _mrg_sort4(name, src, dst, arch) -> Case:
    return Case((full(dst), full(dst), full(dst)),
                lambda d, q1, q2: asc.mrg_sort4(d, asc.MrgSortSrcList(q1, q2), asc.MrgSort4Info([2, 2], False, 3, 1)))


# -- data rearrangement ------------------------------------------------------------------------------

def _brcb(name, src, dst, arch) -> Case:
    return Case((full(dst), full(dst)), lambda d, s: asc.brcb(d, s, 1, asc.BrcbRepeatParams(1, 8)))


def _copy(name, src, dst, arch) -> Case:
    return Case((full(dst), full(dst)), lambda d, s: asc.copy(d, s, _MASK, 1, asc.CopyRepeatParams(1, 1, 8, 8)))


def _gather(name, src, dst, arch) -> Case:
    n = _lanes(dst)  # every offset 0: element 0 of src, n times
    return Case((full(dst), full(dst), full(U32, n, 0)), lambda d, s, o: asc.gather(d, s, o, 0, n))


def _gatherb(name, src, dst, arch) -> Case:
    return Case((full(dst), full(dst), full(U32, 8, 0)),
                lambda d, s, o: asc.gatherb(d, s, o, 1, asc.GatherRepeatParams(1, 8)))


def _gather_mask(name, src, dst, arch) -> Case:
    # built-in pattern 1 (even lanes, on every SoC), Normal mode: mask ignored
    return Case((full(dst), full(dst)),
                lambda d, s: asc.gather_mask(d, s, 1, False, 0, asc.GatherMaskParams(1, 1, 0, 0)))


def _scatter(name, src, dst, arch) -> Case:
    n = _lanes(dst)  # distinct byte offsets, multiples of sizeof(T) (Scatter(ISASI).md 约束说明)
    offsets = full(U32, n, 0)
    offsets[:n] = np.arange(n) * dst.sizeof()
    return Case((full(dst, n), full(dst), offsets), lambda d, s, o: asc.scatter(d, s, o, 0, n))


def _transpose(name, src, dst, arch) -> Case:
    return Case((full(dst, 256), full(dst, 256)), lambda d, s: asc.transpose(d, s))  # the 16 x 16 form


def _trans_5hd(name, src, dst, arch) -> Case:
    per = max(32 // dst.sizeof(), 1)  # elements of a DataBlock

    def body(d, s):
        asc.trans_data_to_5hd([d[k * per] for k in range(16)], [s[k * per] for k in range(16)],
                              asc.TransDataTo5HDParams(False, False, 1, 0, 0))
    return Case((full(dst), full(dst)), body)


def _bilinear(name, src, dst, arch) -> Case:
    # one iteration (h_repeat = v_repeat = 1), 8 blocks at offset 0; the buffer (src0 + src1 elements) * 32 B
    src0, src1 = full(dst, 16), full(dst, 16)
    tmp = np.zeros((src0.size + src1.size) * 32, np.uint8)
    return Case((full(dst, 128), src0, full(U32, 8, 0), src1, tmp),
                lambda d, s0, o, s1, t: asc.bilinear_interpolation(d, s0, o, s1, 128, 1, False, 1, 128, 1, t))


RECIPES: dict[str, Callable | dict[str, Callable]] = {
    "vec_binary": _binary,
    "vec_unary": _unary,
    "vec_binary_scalar": _with_scalar,
    "vec_ternary_scalar": _with_scalar,
    "vec_duplicate": _duplicate,
    "vec_vconv": {"cast": _cast, "cast_deq": _cast_deq, "add_relu_cast": _binary, "sub_relu_cast": _binary},
    "vec_cmpsel": {"compare": _compare, "compare_scalar": _compare_scalar, "select": _select,
                   "get_cmp_mask": _get_cmp_mask, "set_cmp_mask": _set_cmp_mask},
    "vec_reduce": dict.fromkeys(_REDUCE_CALLS, _reduce),
    "proposal": {"sort32": _sort32, "sort": _sort, "mrg_sort": _mrg_sort, "proposal_concat": _proposal_field,
                 "proposal_extract": _proposal_field, "rp_sort16": _rp_sort16, "mrg_sort4": _mrg_sort4},
    "vec_brcb": _brcb,
    "vec_copy": _copy,
    "vec_gather": {"gather": _gather, "gatherb": _gatherb},
    "vec_gather_mask": _gather_mask,
    "vec_scatter": _scatter,
    "vec_transpose": _transpose,
    "vec_5hd": _trans_5hd,
    "vec_bilinear": _bilinear,
}


# families the simulator runs as the sequence of basic instructions their page describes: what the Trace holds
# instead of the instruction's own record (BilinearInterpolation(ISASI).md: a software emulation on A2/A3)
RECORDED_AS = {"vec_bilinear": frozenset({"gatherb", "brcb", "mul", "adds"})}


def recorded_ops(spec) -> frozenset:
    """The Trace ops a run of ``spec``'s recipe must hold: its own name, or its emulation's steps."""
    return RECORDED_AS.get(spec.family, frozenset({spec.name}))


def recipe_for(spec) -> Callable:
    """The recipe of ``spec`` (a fusekit Spec).

    Raises:
        LookupError: its family, or its name within a family whose calls differ, has no recipe here.
    """
    entry = RECIPES.get(spec.family)
    if entry is None:
        raise LookupError(f"family {spec.family} ({spec.name}) has no recipe: add one to tests/spec_recipes.py RECIPES")
    if isinstance(entry, dict):
        if spec.name not in entry:
            raise LookupError(f"{spec.name} (family {spec.family}) has no recipe: add one to the family's entry in "
                              "tests/spec_recipes.py RECIPES")
        return entry[spec.name]
    return entry
