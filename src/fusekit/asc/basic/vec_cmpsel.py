"""Compare and select (pyasc ``basic/vec_cmpsel.py``; AD-API ``Memory矢量计算/比较与选择/``).

Bit-mask layout (Compare.md, Select.md): element i of a comparison is **bit i % 8 of byte i // 8**
(little-endian bit order: "dst按照小端顺序排序成二进制结果"); 1 = true. Select takes src0 where the
selMask bit is 1 and src1 where it is 0.

- ``compare(dst, src0, src1, cmp_mode, count)`` / ``(..., cmp_mode, mask, repeat_times, BinaryRepeatParams,
  is_set_mask=True)``: dst (int8 / uint8) gets ``lanes / 8`` bytes per repeat. On A2/A3 and Atlas inference
  the mask is a reserved parameter with no effect (Compare.md, mask/mask[]参数说明): every lane of a repeat
  is compared and the mask register is left alone. The count form needs ``count * sizeof(T)`` to be a
  multiple of 256 B; the NPU drops the rest ("未对齐部分元素不参与计算"): a KernelError here unless the launch
  has ``strict=False``, which reproduces the drop. In the split form the destination repeat stride counts
  the bits of one source block (``4 / sizeof(T)`` bytes), so the default 8 packs the repeats' bytes
  back to back (AD dav_c220 ``CompareCompute``; Compares.md example: 4 float repeats -> 32 bytes).
- ``compare(src0, src1, cmp_mode, mask, repeat_params, is_set_mask=True)``: one repeat (half / float), the
  result goes to the 128-bit CmpMask register (Compare（结果存入寄存器）.md); masked lanes give 0 bits and a
  float compare leaves bits 64..127 at 0 (assumption: the page does not say).
- ``compare_scalar(dst, src0, src1_scalar, cmp_mode, ...)``: the same against a scalar converted to src0's
  dtype (Compares.md); dst uint8 only.
- ``get_cmp_mask(dst)`` writes the register's 16 bytes (dst 16 B aligned and at least 128 bytes,
  GetCmpMask.md); ``set_cmp_mask(src)`` loads 16 bytes (src 16 B aligned, SetCmpMask.md). Both on PIPE_V.
- ``select``: modes (Select.md) 0 ``VSEL_CMPMASK_SPR`` (the first ``lanes`` bits of selMask, the same for every
  repeat), 1 ``VSEL_TENSOR_SCALAR_MODE`` (src1 is a scalar; repeat r uses selMask bits ``[r*lanes, (r+1)*lanes)``),
  2 ``VSEL_TENSOR_TENSOR_MODE`` (two tensors, bits consumed like mode 1). Split forms keep masked lanes of dst.
  Register forms: ``select(dst, sel_mask, src0, repeat_times, repeat_params)`` (mode 1, the scalar is element 0
  of what set_cmp_mask loaded) and ``select(dst, src0, src1, repeat_times=, repeat_params=, sel_mode=)``
  (mode 0: the register's bits; mode 2: the register holds selMask's UB byte address, as a uint32);
  both use the vector mask register.
- UB scratch of modes 1 and 2 (Select.md 约束说明: 模式1和模式2 reserve 8 KB of UB on A2/A3 and the inference
  AI Core). What the forms that take ``sel_mask`` really do there (asc-devkit dav_c220
  kernel_operator_vec_cmpsel_impl.h ``VselIntrinsicsImplPre`` / ``VselImpl``): a Duplicate of 32 elements
  (mode 1: the scalar src1 as T; mode 2: selMask's UB byte address as uint32) at ``TMP_UB_OFFSET``
  (= TOTAL_VEC_LOCAL_SIZE, ``SoC.ub_tiling_bytes``: 184 KiB on A2/A3, 248 KiB on 310P;
  kernel_utils_constants.h), then ``set_cmpmask`` of its first 16 B. So the select writes 64 or 128 B
  there (recorded in the Trace as a Duplicate then a SetCmpMask, both on PIPE_V) and **leaves the CmpMask
  register holding that value**; a TPipe whose buffers reach into those bytes is a KernelError (the 8 KB
  must stay free).
- Split forms follow 通用地址重叠约束 (通用说明和约束.md) repeat by repeat (:func:`.overlap.repeats`): within
  a repeat a source and dst share all their bytes or none (a compare's bit-mask dst never has its
  source's bytes; selMask bits consumed by a repeat count as a source), and no repeat reads what an
  earlier repeat wrote, while a later repeat may overwrite what an earlier one read.

Comparisons follow IEEE 754 (NaN compares unequal to everything, so only NE is true): the pages say
nothing about NaN, and this is the compare unit's usual behaviour (assumption).
"""

from __future__ import annotations

import enum
import operator

import numpy as np

from fusekit.machine import space_named

from .. import checks, corestate, dtypes
from ..effect import Effect, Operand
from ..runtime import current
from ..tensor import LocalTensor
from ..trace import Access
from . import overlap
from .iteration import (BLOCK, IS_SET_MASK, MASK_INT, MASK_LIST, MAX_REPEAT, REPEAT, REQUIRED, BinaryRepeatParams,
                        Form, Iteration, Param, UnaryRepeatParams, bind, iteration)
from .lanes import lanes, merged_ranges
from .spec import F16_F32, Spec, export, register, same_on_all
from .vec_duplicate import SPEC as DUPLICATE

_PAGE = "AD-API Memory矢量计算/比较与选择/{}.md"
CMP_BYTES = 16  # the CmpMask register: 128 bits (Compare（结果存入寄存器）.md)
# addresses these instructions name by number are UB addresses: the scratch at TMP_UB_OFFSET of select modes 1 and
# 2 and the selMask address the CmpMask register holds in mode 2 (Select.md, 约束说明; module docstring)
UB = space_named("UB")


@export
class CMPMODE(enum.IntEnum):
    """pyasc ``asc.CMPMODE`` (core/enums.py)."""

    LT = 0
    GT = 1
    EQ = 2
    LE = 3
    GE = 4
    NE = 5


@export
class SelMode(enum.IntEnum):
    """pyasc ``asc.SelMode`` (core/enums.py; Ascend C ``SELMODE``)."""

    VSEL_CMPMASK_SPR = 0
    VSEL_TENSOR_SCALAR_MODE = 1
    VSEL_TENSOR_TENSOR_MODE = 2


_CMP = {CMPMODE.LT: operator.lt, CMPMODE.GT: operator.gt, CMPMODE.EQ: operator.eq, CMPMODE.LE: operator.le,
        CMPMODE.GE: operator.ge, CMPMODE.NE: operator.ne}

# Compare.md / Compares.md 数据类型: A2/A3 half and float (every mode) and int32 (EQ only); Atlas inference
# AI Core half and float. Spec.dtypes holds the source dtype T here; the destination is a bit mask.
_CMP_T = {"2201": frozenset({"float16", "float32", "int32"}), "2002": F16_F32}
_EQ_ONLY = frozenset({"int32"})
COMPARE = register(Spec("compare", "Compare", "vec_cmpsel", _CMP_T, source=_PAGE.format("Compare"),
                        doc="bit i of dst = src0[i] <cmp_mode> src1[i]"))
COMPARE_SCALAR = register(Spec("compare_scalar", "Compares", "vec_cmpsel", _CMP_T,
                               source=_PAGE.format("Compares"), doc="bit i of dst = src0[i] <cmp_mode> scalar"))
COMPARE_REG = Spec("compare", "Compare", "vec_cmpsel", same_on_all(F16_F32),
                   source=_PAGE.format("Compare（结果存入寄存器）"), doc="CmpMask bit i = src0[i] <cmp_mode> src1[i]")
SELECT = register(Spec("select", "Select", "vec_cmpsel", same_on_all(F16_F32), arithmetic=False,
                       source=_PAGE.format("Select"), doc="dst[i] = src0[i] if selMask bit i else src1[i]"))
_B8_B64 = frozenset({"int8", "uint8", "int16", "uint16", "float16", "bfloat16", "int32", "uint32", "float32",
                     "int64", "uint64"})
GET_CMP_MASK = register(Spec("get_cmp_mask", "GetCmpMask", "vec_cmpsel",
                             same_on_all(d for d in _B8_B64 if not d.endswith("64")),
                             arithmetic=False, source=_PAGE.format("GetCmpMask(ISASI)"), doc="dst[0:16 B] = CmpMask"))
SET_CMP_MASK = register(Spec("set_cmp_mask", "SetCmpMask", "vec_cmpsel", same_on_all(_B8_B64),
                             arithmetic=False, source=_PAGE.format("SetCmpMask(ISASI)"), doc="CmpMask = src[0:16 B]"))
_SEL_MASK_DTYPES = frozenset({"uint8", "uint16", "uint32", "uint64"})  # Select.md: U


class CmpMaskRegister:
    """One core's 128-bit CmpMask register. ``loaded`` is set when an instruction that fills it is
    issued; ``value`` (16 bytes) changes when that instruction's effect runs."""

    __slots__ = ("loaded", "value")

    def __init__(self):
        self.loaded = False
        self.value = np.zeros(CMP_BYTES, np.uint8)

    def __eq__(self, other) -> bool:  # by contents: two Traces' end states compare equal (Trace.__eq__)
        if not isinstance(other, CmpMaskRegister):
            return NotImplemented
        return self.loaded == other.loaded and np.array_equal(self.value, other.value)

    __hash__ = None

    def __repr__(self) -> str:
        return f"CmpMaskRegister(loaded={self.loaded}, value={bytes(self.value).hex()})"


def cmp_register(core) -> CmpMaskRegister:
    reg = core.cmp_mask
    if reg is None:
        reg = core.cmp_mask = CmpMaskRegister()
    return reg


# --------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------

def _take(core, op: str, names: tuple, args: tuple, kwargs: dict) -> tuple[list, tuple, dict]:
    """Pull the leading operands ``names`` from positional then keyword arguments."""
    args, kwargs = list(args), dict(kwargs)
    out = []
    for name in names:
        if args:
            out.append(args.pop(0))
        elif name in kwargs:
            out.append(kwargs.pop(name))
        else:
            raise core.error(op, f"asc.{op} is missing {name} (operands: {', '.join(names)})")
    return out, tuple(args), kwargs


def _local(core, op: str, t, role: str, align: int = BLOCK, rule: str = "通用地址对齐约束: 32 B") -> None:
    if not isinstance(t, LocalTensor):
        raise core.error(op, f"{role} must be a LocalTensor in UB, got {type(t).__name__}: copy GM data into UB with "
                             "data_copy first (and check the argument order: destination first)")
    if t.addr % align:
        raise core.error(op, f"{role} {t.name} starts at UB byte {t.addr}, not {align}-byte aligned ({rule})",
                         tensor=t.name, kind="misaligned")


def _mode(core, op: str, value, kind, what: str):
    if not isinstance(value, kind):
        names = ", ".join(f"asc.{kind.__name__}.{m.name}" for m in kind)
        raise core.error(op, f"{what} must be one of {names}, got {value!r}")
    return value


def _bits_bytes(bits: np.ndarray) -> np.ndarray:
    """bool[..., 8k] -> uint8[..., k] with element i at bit i % 8 of byte i // 8 (little-endian)."""
    return np.packbits(bits, axis=-1, bitorder="little")


def _unbits(raw: np.ndarray) -> np.ndarray:
    return np.unpackbits(np.asarray(raw, np.uint8), bitorder="little").astype(bool)


def _ub_bytes(t: LocalTensor) -> np.ndarray:
    return t.core.ub[t.addr:t.addr + t.length * t.dtype.sizeof()]


def _cmp_dtype(core, spec: Spec, src0, mode: CMPMODE) -> None:
    checks.dtype_supported(core, spec, src0)
    if src0.dtype.name in _EQ_ONLY and mode is not CMPMODE.EQ:
        raise core.error(spec.name, f"{spec.cpp} on {src0.dtype.name} supports CMPMODE.EQ only ({spec.source}, 数据类型: "
                                    f"int32_t只支持CMPMODE::EQ), got CMPMODE.{mode.name}", kind="unsupported",
                         tensor=src0.name)


# --------------------------------------------------------------------------------------------
# compare / compare_scalar into a tensor
# --------------------------------------------------------------------------------------------

_CMP_MODE = Param("cmp_mode", (CMPMODE,), "CMPMODE")
_COUNT = Param("count", (int, np.integer), "int")
_REPEAT_TIMES = Param("repeat_times", (int, np.integer), "int")


def _cmp_forms(params_type) -> tuple[Form, ...]:
    rp = Param("repeat_params", (params_type,), params_type.__name__)
    return (Form("count", (_CMP_MODE, _COUNT)),
            Form("split", (_CMP_MODE, MASK_INT, _REPEAT_TIMES, rp, IS_SET_MASK)),
            Form("split", (_CMP_MODE, MASK_LIST, _REPEAT_TIMES, rp, IS_SET_MASK)))


COMPARE_FORMS = _cmp_forms(BinaryRepeatParams)
COMPARE_SCALAR_FORMS = _cmp_forms(UnaryRepeatParams)
COMPARE_REG_FORMS = (Form("split", (_CMP_MODE, MASK_LIST, Param("repeat_params", (BinaryRepeatParams,),
                                                                  "BinaryRepeatParams"), IS_SET_MASK)),
                     Form("split", (_CMP_MODE, MASK_INT, Param("repeat_params", (BinaryRepeatParams,),
                                                                 "BinaryRepeatParams"), IS_SET_MASK)))


def _vector_compare(core, spec: Spec, dst, srcs: dict, form: Form, values: dict, compute) -> None:
    """Compare into a bit-mask tensor (shared by compare and compare_scalar)."""
    op = spec.name
    first = next(iter(srcs.values()))
    size = first.dtype.sizeof()
    lanes_per = REPEAT // size
    if form.kind == "count":
        count = values["count"]
        if count < 0:
            raise core.error(op, f"count must be >= 0, got {count}")
        if count * size % REPEAT:
            kept = count * size // REPEAT * lanes_per
            if core.strict:
                raise core.error(op, f"count {count} x {size} B is not a multiple of 256 B: {spec.cpp}'s count must "
                                     "cover "
                                     f"whole repeats ({spec.source}: 需要保证count个元素所占空间256字节对齐); the NPU "
                                     f"compares only the first {kept} elements. Use a count that is a multiple of "
                                     f"{lanes_per}, or launch with strict=False to reproduce the drop")
        repeats = count * size // REPEAT
        strides = {role: (1, 8) for role in srcs}
        dst_rep = 8
    else:
        repeats = values["repeat_times"]
        if not 0 <= repeats <= MAX_REPEAT:
            raise core.error(op, f"repeat_times must be in [0, {MAX_REPEAT}] (高维切分.md), got {repeats}")
        mask = values["mask"]  # reserved on A2/A3 and Atlas inference (mask/mask[]参数说明): type-checked only
        if isinstance(mask, (list, tuple)) and not 1 <= len(mask) <= 2:
            raise core.error(op, f"a bit mask is [low] or [low, high], got {len(mask)} values")
        strides = values["repeat_params"].strides(core, op)
        dst_rep = strides.pop("dst")[1]
        if "src" in strides:
            strides["src0"] = strides.pop("src")
    it = Iteration("split", lanes_per, int(repeats), bits=np.ones(lanes_per, bool), strides=strides)
    s = {role: lanes(core, op, t, it, role) for role, t in srcs.items()}
    per_rep = lanes_per // 8
    unit = 4 // size  # bytes of mask per source block: dst_rep_stride counts these
    starts = np.arange(it.repeats) * dst_rep * unit
    need = int(starts.max()) + per_rep if it.repeats else 0
    if need > dst.length * dst.dtype.sizeof():
        raise core.error(op, f"dst {dst.name} gets {per_rep} bytes per repeat up to byte {need} but has "
                             f"{dst.length * dst.dtype.sizeof()} bytes; allocate {need} bytes (lanes / 8 per repeat)",
                         kind="out-of-bounds", **dst.describe(dst.length))
    byte_index = (starts[:, None] + np.arange(per_rep)[None, :]).reshape(-1)
    writes = tuple(Access(dst.space, dst.space.name, a, b, dst.name)
                   for a, b in merged_ranges(byte_index, 1, dst.addr))
    reads = {role: s[role].accesses(t) for role, t in srcs.items()}
    d_rep = np.repeat(np.arange(it.repeats), per_rep)
    for role, t in srcs.items():
        s_addr, s_rep = overlap.lane_bytes(t, s[role].grid, np.ones(s[role].grid.shape, bool))
        overlap.repeats(core, op, dst.name, dst.addr + byte_index, d_rep, role, t.name, s_addr, s_rep, exact_ok=False)

    # a closure, not an Effect: the results are bits, 8 lanes packed into each destination byte
    def effect():
        vals = [t.array(t.length)[s[role].grid] for role, t in srcs.items()]
        with np.errstate(all="ignore"):
            bits = compute(*vals)
        out = _bits_bytes(bits)  # [repeats, per_rep]
        mem = _ub_bytes(dst)
        mem[byte_index] = out.reshape(-1)  # dst_rep_stride 0: the last repeat's bytes stay, as numpy assigns in order

    core.record(op, spec.pipe, reads=tuple(a for r in reads.values() for a in r), writes=writes,
                count=it.repeats * lanes_per, nbytes=it.repeats * per_rep, dtype=first.dtype.name, effect=effect,
                repeats=it.repeats, cost=spec.cpp)


def _register_compare(core, src0, src1, args, kwargs) -> None:
    spec, op = COMPARE_REG, "compare"
    form, values = bind(core, op, "src0, src1", COMPARE_REG_FORMS, args, kwargs)
    mode = values["cmp_mode"]
    for role, t in (("src0", src0), ("src1", src1)):
        _local(core, op, t, role)
    checks.same_dtype(core, op, src0, src1)
    checks.dtype_supported(core, spec, src0)
    values = dict(values, repeat_times=1)
    strides = lambda v, c, o: v["repeat_params"].strides(c, o)  # noqa: E731
    it = iteration(core, op, Form("split", form.params, strides), values, src0.dtype.sizeof())
    s0, s1 = lanes(core, op, src0, it, "src0"), lanes(core, op, src1, it, "src1")
    reg = cmp_register(core)
    reg.loaded = True
    corestate.written(core, "cmp_mask")
    active = it.active()
    lanes_per = it.lanes

    def effect():
        bits = np.zeros(CMP_BYTES * 8, bool)
        if it.repeats:
            a = src0.array(src0.length)[np.where(active, s0.grid, 0)][0]
            b = src1.array(src1.length)[np.where(active, s1.grid, 0)][0]
            with np.errstate(all="ignore"):
                bits[:lanes_per] = _CMP[mode](a, b) & active[0]
        reg.value = _bits_bytes(bits)

    core.record(op, spec.pipe, reads=s0.accesses(src0) + s1.accesses(src1), count=it.elements, nbytes=CMP_BYTES,
                dtype=src0.dtype.name, effect=effect, repeats=it.repeats, cost=spec.cpp)


@export
def compare(*args, **kwargs) -> None:
    """``bit i of dst = src0[i] <cmp_mode> src1[i]`` (Compare, AD-API 比较与选择/Compare.md), on PIPE_V.

    Forms: (dst, src0, src1, cmp_mode, count); (dst, src0, src1, cmp_mode, mask, repeat_times,
    repeat_params: BinaryRepeatParams, is_set_mask=True); register form (src0, src1, cmp_mode, mask,
    repeat_params, is_set_mask=True) -> CmpMask. dst: int8 / uint8, ``lanes / 8`` bytes per repeat, bit i of
    byte i // 8 little-endian. dtypes: half, float (int32 with EQ only on A2/A3).

    Raises:
        KernelError: a call form, dtype, mode, alignment, bounds, 256 B count or overlap rule is broken.
    """
    core = current("compare")
    op = "compare"
    if (len(args) >= 3 and isinstance(args[2], LocalTensor)) or "dst" in kwargs:
        (dst, src0, src1), rest, kw = _take(core, op, ("dst", "src0", "src1"), args, kwargs)
        form, values = bind(core, op, "dst, src0, src1", COMPARE_FORMS, rest, kw)
        mode = values["cmp_mode"]
        for role, t in (("dst", dst), ("src0", src0), ("src1", src1)):
            _local(core, op, t, role)
        checks.same_dtype(core, op, src0, src1)
        _cmp_dtype(core, COMPARE, src0, mode)
        if dst.dtype.name not in ("int8", "uint8"):
            raise core.error(op, f"dst {dst.name} must be int8 or uint8 (the bit mask; Compare.md 数据类型 U), got "
                                 f"{dst.dtype.name}", kind="unsupported", tensor=dst.name)
        _vector_compare(core, COMPARE, dst, {"src0": src0, "src1": src1}, form, values, _CMP[mode])
        return
    (src0, src1), rest, kw = _take(core, op, ("src0", "src1"), args, kwargs)
    _register_compare(core, src0, src1, rest, kw)


@export
def compare_scalar(dst, src0, src1_scalar, cmp_mode, *args, **kwargs) -> None:
    """``bit i of dst = src0[i] <cmp_mode> src1_scalar`` (Compares, AD-API 比较与选择/Compares.md), on PIPE_V.

    Forms: (dst, src0, src1_scalar, cmp_mode, count) or (..., cmp_mode, mask, repeat_times,
    repeat_params: UnaryRepeatParams, is_set_mask=True). The scalar is converted to src0's dtype. dst:
    uint8 bit mask. dtypes: half, float (int32 with EQ only on A2/A3).

    Raises:
        KernelError: a call form, dtype, mode, alignment, bounds, 256 B count or overlap rule is broken.
    """
    op = "compare_scalar"
    core = current(op)
    form, values = bind(core, op, "dst, src0, src1_scalar", COMPARE_SCALAR_FORMS, (cmp_mode, *args), kwargs)
    mode = values["cmp_mode"]
    for role, t in (("dst", dst), ("src0", src0)):
        _local(core, op, t, role)
    checks.scalar_not_tensor(core, op, src0, src1_scalar)
    _cmp_dtype(core, COMPARE_SCALAR, src0, mode)
    if dst.dtype.name != "uint8":
        raise core.error(op, f"dst {dst.name} must be uint8 (the bit mask; Compares.md 数据类型 U), got {dst.dtype.name}",
                         kind="unsupported", tensor=dst.name)
    scalar = dtypes.to_scalar(src1_scalar, src0.dtype)
    _vector_compare(core, COMPARE_SCALAR, dst, {"src0": src0}, form, values, lambda a: _CMP[mode](a, scalar))


# --------------------------------------------------------------------------------------------
# the CmpMask register
# --------------------------------------------------------------------------------------------

def _need_register(core, op: str) -> CmpMaskRegister:
    corestate.read(core, "cmp_mask", op)
    reg = cmp_register(core)
    if not reg.loaded:
        raise core.error(op, f"{op} reads the CmpMask register, but nothing has set it on this core: call "
                             "compare(src0, src1, cmp_mode, mask, repeat_params) or set_cmp_mask(tensor) first "
                             "(GetCmpMask.md / SetCmpMask.md)")
    return reg


@export
def get_cmp_mask(dst) -> None:
    """Write the 128-bit CmpMask register into ``dst``'s first 16 bytes (GetCmpMask, AD-API
    比较与选择/GetCmpMask(ISASI).md), on PIPE_V. dst: 16 B aligned, at least 128 bytes (the page), an 8-,
    16- or 32-bit dtype.

    Raises:
        KernelError: the register was never set, or dst breaks the alignment, size or dtype rule.
    """
    op = "get_cmp_mask"
    core = current(op)
    _local(core, op, dst, "dst", 16, "GetCmpMask.md: 16 B")
    checks.dtype_supported(core, GET_CMP_MASK, dst)
    nbytes = dst.length * dst.dtype.sizeof()
    if nbytes < 128:
        raise core.error(op, f"dst {dst.name} has {nbytes} bytes; GetCmpMask needs at least 128 (GetCmpMask.md 约束说明)",
                         kind="out-of-bounds", **dst.describe(dst.length))
    reg = _need_register(core, op)

    # a closure, not an Effect: the source is the CmpMask register as it is when the instruction runs
    def effect():
        _ub_bytes(dst)[:CMP_BYTES] = reg.value

    core.record(op, GET_CMP_MASK.pipe, writes=(dst.access(dst.addr, dst.addr + CMP_BYTES),), count=CMP_BYTES * 8,
                nbytes=CMP_BYTES, dtype=dst.dtype.name, effect=effect, repeats=1, cost=GET_CMP_MASK.cpp)


@export
def set_cmp_mask(src) -> None:
    """Load 16 bytes of ``src`` into the 128-bit CmpMask register (SetCmpMask, AD-API
    比较与选择/SetCmpMask(ISASI).md), on PIPE_V: a selMask (select mode 0), the scalar src1 (mode 1) or a
    tensor holding selMask's UB address (mode 2). src: 16 B aligned, any 8- to 64-bit dtype.

    Raises:
        KernelError: src breaks the alignment or dtype rule, or has fewer than 16 bytes.
    """
    op = "set_cmp_mask"
    core = current(op)
    _local(core, op, src, "src", 16, "SetCmpMask.md: 16 B")
    checks.dtype_supported(core, SET_CMP_MASK, src)
    if src.length * src.dtype.sizeof() < CMP_BYTES:
        raise core.error(op, f"src {src.name} has {src.length * src.dtype.sizeof()} bytes; the register loads 16",
                         kind="out-of-bounds", **src.describe(src.length))
    reg = cmp_register(core)
    reg.loaded = True
    corestate.written(core, "cmp_mask")

    # a closure, not an Effect: its destination is the CmpMask register, not memory
    def effect():
        reg.value = _ub_bytes(src)[:CMP_BYTES].copy()

    core.record(op, SET_CMP_MASK.pipe, reads=(src.access(src.addr, src.addr + CMP_BYTES),), count=CMP_BYTES * 8,
                nbytes=CMP_BYTES, dtype=src.dtype.name, effect=effect, repeats=1, cost=SET_CMP_MASK.cpp)


# --------------------------------------------------------------------------------------------
# select
# --------------------------------------------------------------------------------------------

_SCALAR = Param("src1", (int, float, np.integer, np.floating), "float")
_TENSOR = Param("src1", (LocalTensor,), "LocalTensor")
_SEL_MODE = Param("sel_mode", (SelMode,), "SelMode")
_RP = Param("repeat_params", (BinaryRepeatParams,), "BinaryRepeatParams")
_COUNT_P = Param("count", (int, np.integer), "int", REQUIRED)


def _sel_strides(values, core, op) -> dict:
    return values["repeat_params"].strides(core, op)


SELECT_FORMS = (
    Form("count", (_SCALAR, _SEL_MODE, _COUNT_P)),
    Form("count", (_TENSOR, _SEL_MODE, _COUNT_P)),
    Form("split", (_SCALAR, _SEL_MODE, MASK_LIST, _REPEAT_TIMES, _RP, IS_SET_MASK), _sel_strides),
    Form("split", (_SCALAR, _SEL_MODE, MASK_INT, _REPEAT_TIMES, _RP, IS_SET_MASK), _sel_strides),
    Form("register", (_REPEAT_TIMES, _RP), _sel_strides),
    Form("split", (_TENSOR, _SEL_MODE, MASK_LIST, _REPEAT_TIMES, _RP, IS_SET_MASK), _sel_strides),
    Form("split", (_TENSOR, _SEL_MODE, MASK_INT, _REPEAT_TIMES, _RP, IS_SET_MASK), _sel_strides),
)


@export
def select(dst, *args, **kwargs) -> None:
    """``dst[i] = src0[i] if selMask bit i else src1[i]`` (Select, AD-API 比较与选择/Select.md), on PIPE_V.

    Forms: (dst, sel_mask, src0, src1: float | LocalTensor, sel_mode, count); (dst, sel_mask, src0, src1,
    sel_mode, mask, repeat_times, repeat_params: BinaryRepeatParams, is_set_mask=True); (dst, sel_mask, src0,
    repeat_times, repeat_params) [mode 1, scalar from set_cmp_mask]; (dst, src0, src1, repeat_times=,
    repeat_params=, sel_mode=) [mode 0 / 2 from the CmpMask register]. Modes: see the module docstring.
    dtypes: half, float; sel_mask uint8 / 16 / 32 / 64.

    Raises:
        KernelError: a call form, mode, dtype, alignment, bounds or register rule is broken.
    """
    op = "select"
    core = current(op)
    if len(args) == 2 and {"repeat_times", "repeat_params", "sel_mode"} <= set(kwargs):
        return _select_register_tensor(core, dst, args[0], args[1], kwargs)
    (sel, src0), rest, kw = _take(core, op, ("sel_mask", "src0"), args, kwargs)
    form, values = bind(core, op, "dst, sel_mask, src0", SELECT_FORMS, rest, kw)
    for role, t in (("dst", dst), ("sel_mask", sel), ("src0", src0)):
        _local(core, op, t, role)
    checks.same_dtype(core, op, dst, src0)
    checks.dtype_supported(core, SELECT, dst)
    if sel.dtype.name not in _SEL_MASK_DTYPES:
        raise core.error(op, f"sel_mask {sel.name} must be uint8, uint16, uint32 or uint64 (Select.md 数据类型 U), got "
                             f"{sel.dtype.name}", kind="unsupported", tensor=sel.name)
    if form.kind == "register":  # mode 1, scalar from the register, mask from the mask register
        reg = _need_register(core, op)
        values = dict(values, is_set_mask=False, mask=0)
        it = iteration(core, op, Form("split", (), _sel_strides), values, dst.dtype.sizeof())
        scalar = lambda: reg.value[:dst.dtype.sizeof()].view(dst.dtype.np)[0]  # noqa: E731
        return _select(core, dst, sel, src0, None, SelMode.VSEL_TENSOR_SCALAR_MODE, it, scalar=scalar)
    mode = values["sel_mode"]
    src1 = values["src1"]
    tensor = isinstance(src1, LocalTensor)
    if tensor == (mode is SelMode.VSEL_TENSOR_SCALAR_MODE):
        want = "a scalar src1" if mode is SelMode.VSEL_TENSOR_SCALAR_MODE else "a LocalTensor src1"
        raise core.error(op, f"sel_mode {mode.name} takes {want} (Select.md: 模式0/2 src1 is a LocalTensor, 模式1 a "
                             "scalar)")
    if tensor:
        _local(core, op, src1, "src1")
        checks.same_dtype(core, op, dst, src1)
    it = iteration(core, op, form, values, dst.dtype.sizeof())
    if tensor:
        if mode is SelMode.VSEL_TENSOR_TENSOR_MODE:
            _stage_in_scratch(core, op, np.full(32, sel.addr, np.uint32))
        return _select(core, dst, sel, src0, src1, mode, it)
    value = dtypes.to_scalar(src1, dst.dtype)
    _stage_in_scratch(core, op, np.full(32, value, dst.dtype.np))
    return _select(core, dst, sel, src0, None, mode, it, scalar=lambda: value)


def _stage_in_scratch(core, op: str, values: np.ndarray) -> None:
    """Modes 1 / 2 with a selMask tensor: Duplicate ``values`` (32 elements) to UB ``TMP_UB_OFFSET`` and
    load the CmpMask register from its first 16 B (module docstring: UB scratch of modes 1 and 2)."""
    base = core.soc.ub_tiling_bytes  # TMP_UB_OFFSET == TOTAL_VEC_LOCAL_SIZE (kernel_utils_constants.h)
    n = values.nbytes
    reach = core.pipe.ub_used() if core.pipe is not None else 0
    if reach > base:
        raise core.error(op, f"select modes 1 and 2 use UB [{base}, {base + n}) as scratch (TMP_UB_OFFSET), but the "
                             f"TPipe's buffers reach UB byte {reach}: leave the last "
                             f"{core.soc.ub_bytes - base} B of UB free (Select.md 约束说明: 模式1和模式2 需要预留8KB的"
                             "Unified Buffer空间)", kind="ub-overflow")
    reg = cmp_register(core)
    reg.loaded = True
    corestate.written(core, "cmp_mask")
    name = "select scratch (TMP_UB_OFFSET)"

    scratch = LocalTensor.at(core, base, values.size, dtypes.from_numpy(values.dtype), name, space=UB)
    duplicate = Effect(DUPLICATE, Operand(scratch, values.size), {}, np.asarray, (values,))  # the fill: regular

    # a closure, not an Effect: its destination is the CmpMask register, not memory
    def load():
        reg.value = core.ub[base:base + CMP_BYTES].copy()

    core.record(op, SELECT.pipe, writes=(Access(UB, UB.name, base, base + n, name),), count=values.size, nbytes=n,
                dtype=values.dtype.name, effect=duplicate, repeats=1, cost="Duplicate")
    core.record(op, SELECT.pipe, reads=(Access(UB, UB.name, base, base + CMP_BYTES, name),), count=CMP_BYTES * 8,
                nbytes=CMP_BYTES, dtype="uint8", effect=load, repeats=1, cost=SET_CMP_MASK.cpp)


def _select_register_tensor(core, dst, src0, src1, kwargs) -> None:
    """select(dst, src0, src1, repeat_times=, repeat_params=, sel_mode=): mode 0 or 2 from CmpMask."""
    op = "select"
    mode = _mode(core, op, kwargs["sel_mode"], SelMode, "sel_mode")
    if mode is SelMode.VSEL_TENSOR_SCALAR_MODE:
        raise core.error(op, "the register form select(dst, src0, src1, repeat_times=, repeat_params=, sel_mode=) "
                             "takes "
                             "VSEL_CMPMASK_SPR or VSEL_TENSOR_TENSOR_MODE (Select.md: 模式0和模式2 - 不传入mask参数)")
    for role, t in (("dst", dst), ("src0", src0), ("src1", src1)):
        _local(core, op, t, role)
    checks.same_dtype(core, op, dst, src0, src1)
    checks.dtype_supported(core, SELECT, dst)
    rp, repeat = kwargs["repeat_params"], kwargs["repeat_times"]
    if not isinstance(rp, BinaryRepeatParams) or isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)):
        raise core.error(op, "repeat_times must be an int and repeat_params an asc.BinaryRepeatParams")
    reg = _need_register(core, op)
    values = {"repeat_times": repeat, "repeat_params": rp, "is_set_mask": False, "mask": 0}
    it = iteration(core, op, Form("split", (), _sel_strides), values, dst.dtype.sizeof())
    return _select(core, dst, None, src0, src1, mode, it, register=reg)


def _select(core, dst, sel, src0, src1, mode: SelMode, it: Iteration, scalar=None, register=None) -> None:
    """Record and run one Select over ``it``'s active lanes."""
    op = "select"
    d = lanes(core, op, dst, it, "dst")
    s0 = lanes(core, op, src0, it, "src0")
    s1 = lanes(core, op, src1, it, "src1") if src1 is not None else None
    if it.contiguous:
        g = np.arange(it.count)
        d_idx = s0_idx = s1_idx = g
    else:
        active = it.active()
        g = (np.arange(it.repeats)[:, None] * it.lanes + np.arange(it.lanes)[None, :])[active]
        d_idx, s0_idx = d.index, s0.index
        s1_idx = s1.index if s1 is not None else None
    lane = g % it.lanes
    reads = list(s0.accesses(src0)) + (list(s1.accesses(src1)) if s1 is not None else [])
    sel_read = None  # (tensor-like accessor) of the selMask bytes this instruction reads
    if mode is SelMode.VSEL_CMPMASK_SPR and register is None:  # set_cmpmask(selMask): 16 bytes
        n = min(CMP_BYTES, sel.length * sel.dtype.sizeof())
        reads.append(sel.access(sel.addr, sel.addr + n))
        sel_read = (sel.addr, n)
    elif mode is not SelMode.VSEL_CMPMASK_SPR:
        n = -(-int(g.max() + 1) // 8) if g.size else 0
        if register is not None:  # mode 2 via the register: the address is read when the effect runs
            sel_read = "register-address"
        else:
            if n > sel.length * sel.dtype.sizeof():
                raise core.error(op, f"sel_mask {sel.name} has {sel.length * sel.dtype.sizeof()} bytes but this select "
                                     f"consumes {n} ({it.repeats} repeats x {it.lanes} bits; Select.md: 模式1/2 use "
                                     "256/sizeof(T) bits per repeat, repeat after repeat)", 
                                 kind="out-of-bounds", **sel.describe(sel.length))
            if n:
                reads.append(sel.access(sel.addr, sel.addr + n))
            sel_read = (sel.addr, n)
    writes = d.accesses(dst)
    if not it.contiguous and it.elements:  # split form: 通用地址重叠约束 per repeat and across repeats
        active = it.active()
        d_addr, d_rep = overlap.lane_bytes(dst, d.grid, active)
        for role, sl, t in (("src0", s0, src0), ("src1", s1, src1)):
            if sl is not None:
                overlap.repeats(core, op, dst.name, d_addr, d_rep, role, t.name, *overlap.lane_bytes(t, sl.grid, active),
                                exact_ok=True)
        if mode is not SelMode.VSEL_CMPMASK_SPR and sel is not None:  # repeat r consumes selMask bits of its lanes
            bit = (np.arange(it.repeats)[:, None] * it.lanes + np.arange(it.lanes)[None, :])[active]
            overlap.repeats(core, op, dst.name, d_addr, d_rep, "sel_mask", sel.name, sel.addr + bit // 8,
                            np.nonzero(active)[0], exact_ok=False)
    if it.contiguous and it.count:  # count form: a source overlaps dst completely or not at all (通用地址重叠约束)
        for role, s, t in (("src0", s0, src0), ("src1", s1, src1)):
            if s is None:
                continue
            overlap.whole_or_none(core, op, f"{role} {t.name}", s.ranges[0], f"dst {dst.name}", d.ranges[0], dst.name)
    if it.elements == 0:
        core.record(op, SELECT.pipe, count=0, dtype=dst.dtype.name, repeats=it.repeats, cost=SELECT.cpp)
        return
    if sel_read == "register-address":
        addr = int(register.value[:4].view(np.uint32)[0])
        n = -(-int(g.max() + 1) // 8)
        if addr + n > core.soc.ub_bytes:
            raise core.error(op, f"the CmpMask register points selMask at UB byte {addr}, {n} bytes past the end of UB",
                             kind="out-of-bounds")
        reads.append(Access(UB, UB.name, addr, addr + n, f"UB@{addr}"))
        sel_read = (addr, n)

    # a closure, not an Effect: each lane's choice is a selMask bit (bit i of byte i // 8), read from UB or the CmpMask
    # register when the instruction runs, as is the register form's scalar
    def effect():
        if mode is SelMode.VSEL_CMPMASK_SPR:
            raw = register.value if register is not None else core.ub[sel_read[0]:sel_read[0] + sel_read[1]]
            choose = _unbits(raw)[lane]
        else:
            choose = _unbits(core.ub[sel_read[0]:sel_read[0] + sel_read[1]])[g]
        a = src0.array(src0.length)[s0_idx]
        b = src1.array(src1.length)[s1_idx] if src1 is not None else scalar()
        dst.array(dst.length)[d_idx] = np.where(choose, a, b)

    core.record(op, SELECT.pipe, reads=tuple(reads), writes=writes, count=it.elements,
                nbytes=it.elements * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect, repeats=it.repeats,
                cost=SELECT.cpp)


__all__ = ["CMPMODE", "SelMode", "CmpMaskRegister", "cmp_register"]
