"""``mmad``: C = A x B (+ C, or + bias) on the cube unit, PIPE_M; ``set_hf32_mode`` / ``set_hf32_trans_mode``.

Operands (AD-API Mmad.md 表2-4, under 矩阵计算（ISASI）): dst in L0C (CO1, Nz, fp32 / int32), fm = A in L0A (A2,
Zz), filter = B in L0B (B2, Zn), bias in the bias table (C2, one row of n). m, n, k in [0, 4095]; any of them 0 is
a NOP. m = 1 is GEMV: A is read as one ND row (GEMV.md). Types on A2/A3 (Mmad.md 表7): int8 x int8 -> int32,
half x half -> float, bfloat16 x bfloat16 -> float, float x float -> float; the bias is int32 / float. Padding of the
fractals past m, k or n is "无效数据 ... 在计算中会被忽略": only the m x k and k x n elements are read, only the
m x n written (``fusekit.asc.cube.layout`` for where they are).

Where C starts: ``cmatrix_init_val`` (and not the older ``is_bias``): 0; otherwise what L0C holds; the bias
overload: the bias row broadcast over m ("维度为1 x N"), whatever the flags say ("带Bias输入的接口配置该参数无效").

Numerics. No Huawei source gives the order of the additions inside or across 16 x 16 x 16 fractals (``docs/cube.md``,
"Numerics"), so fusekit chooses one and says it: **C starts from its initial value and adds the k products of each element
in ascending k, each addition rounded once to float32 (round to nearest even)**, the "fma-sequence(A, B, C0)" a
third party reports for the NPU (pto-isa issue #280). Products of half or bfloat16 are exact in float32 (11 x 11
and 8 x 8 significand bits), so each step is one correctly rounded fused multiply-add, and a K split over Mmads that
accumulate in L0C gives the same bits as one Mmad over the whole K (L0C keeps float32 between them). Float inputs:
the product is exact in float64 and the sum is rounded to float64, then to float32 (a true FMA except where that
double rounding meets a tie). int8: exact in int64, then saturated to int32 ("对于整数类型只有饱和模式",
Mmad.md). Against the device expect the official samples' tolerance, not bits: rtol 1e-6 with at most 0.01 %
of elements off for float inputs (AD examples mmad/scripts/verify_result.py), exact for int8.

HF32 (``set_hf32_mode(True)``, A2/A3): float inputs are rounded to HF32 before the products (HF32.md: "fp32数据在执行
矩阵乘法运算前会被转换并舍入为HF32"), :data:`HF32_MANTISSA_BITS` explicit mantissa bits (the ATC page's "mantissa
precision (11 bits)"; 10 on Ascend 950), ties to even, or away from zero after ``set_hf32_trans_mode(True)`` (the
SetHF32 page's transMode 1; SetHF32TransMode.md's wording is ambiguous).

Synchronisation: two Mmads into one L0C need ``PipeBarrier<PIPE_M>`` between them when ceil(m/16) x ceil(n/16) < 10;
larger ones the hardware orders (Mmad.md, 同步优化说明): ``fusekit.hb`` rule 2 reads that from the record's
``nbytes`` (the L0C fractal bytes the Mmad covers).
"""

from __future__ import annotations

import numpy as np

from .. import native
from ..runtime import current
from ..trace import Pipe
from .layout import L0C_FRACTAL, M0, c0, l0c, nz, zn, zz
from .operands import Elements, accesses, bounded, expect_space
from .params import MmadParams, check_fields

_PAGE = "Mmad.md 表4"
_RANGES = {"m": (0, 4095, _PAGE), "n": (0, 4095, _PAGE), "k": (0, 4095, _PAGE)}
# (A, B) -> (C, bias) on A2/A3 (Mmad.md 表7, 表8)
TYPES = {("int8", "int8"): ("int32", "int32"), ("float16", "float16"): ("float32", "float32"),
         ("bfloat16", "bfloat16"): ("float32", "float32"), ("float32", "float32"): ("float32", "float32")}
CUBE_K = {1: 32, 2: 16, 4: 4}  # k of one cube cycle by input size: 16x16x32 int8, 16x16x16 b16, 16x16x4 float
HF32_CUBE_K = 8                # float with HF32: 16x16x8 (附录/Cube指令理论性能汇总.md)
HF32_MANTISSA_BITS = 11
HARDWARE_ORDERED_FRACTALS = 10  # ceil(m/16) * ceil(n/16) from which the hardware orders same-L0C Mmads
INT32 = np.iinfo(np.int32)


def cube_cycles(m: int, n: int, k: int, size: int, hf32: bool = False) -> int:
    """Cube cycles of one Mmad without its head: ceil(m/16) ceil(n/16) ceil(k/k0) x k0 / cube_k, k0 the fractal's
    k (32 B / size) and cube_k what one cycle multiplies (附录/Cube指令理论性能汇总.md: 2201 int8 16x16x32, b16
    16x16x16, float 16x16x4, HF32 16x16x8)."""
    k0 = c0(size)
    cube_k = HF32_CUBE_K if hf32 and size == 4 else CUBE_K[size]
    return -(-m // M0) * -(-n // M0) * -(-k // k0) * k0 // cube_k


def set_hf32_mode(hf32_mode: bool) -> None:
    """``SetHF32Mode(hf32Mode)``: float Mmad inputs are rounded to HF32 (module docstring). PIPE_S."""
    core = current("set_hf32_mode")
    core.hf32 = bool(hf32_mode)
    core.record("set_hf32_mode", Pipe.S)


def set_hf32_trans_mode(trans_mode: bool) -> None:
    """``SetHF32TransMode(hf32TransMode)``: HF32 ties go away from zero (True) instead of to even. PIPE_S."""
    core = current("set_hf32_trans_mode")
    core.hf32_round_away = bool(trans_mode)
    core.record("set_hf32_trans_mode", Pipe.S)


def to_hf32(x: np.ndarray, round_away: bool = False, bits: int = HF32_MANTISSA_BITS) -> np.ndarray:
    """float32 values rounded to ``bits`` explicit mantissa bits (ties to even, or away from zero), as float32."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    drop = 23 - bits
    half = np.uint64(1 << (drop - 1))
    if round_away:
        u = u + half
    else:
        u = u + half - np.uint64(1) + ((u >> np.uint64(drop)) & np.uint64(1))
    u = (u >> np.uint64(drop)) << np.uint64(drop)
    finite = np.isfinite(x)
    return np.where(finite, (u & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32), x).astype(np.float32)


def mmad(dst, fm, filter, bias=None, params=None) -> None:  # noqa: A002 - pyasc's parameter names
    """pyasc ``mmad(dst, fm, filter, params)`` and ``mmad(dst, fm, filter, bias, params)`` (module docstring).

    Raises:
        KernelError: operands in the wrong memory or misaligned (fm / filter 512 B, dst / bias 64 B), a dtype
            combination Mmad.md does not list, m / n / k outside [0, 4095], cmatrix_source=True without a bias
            tensor, or elements outside a tensor.
    """
    core, op = current("mmad"), "mmad"
    if params is None and isinstance(bias, MmadParams):  # the four-argument form
        bias, params = None, bias
    if not isinstance(params, MmadParams):
        raise core.error(op, "mmad takes (dst, fm, filter, params: asc.MmadParams) or (dst, fm, filter, bias, params)")
    expect_space(core, op, "dst", dst, ("L0C",), "L0C (TPosition.CO1)")
    expect_space(core, op, "fm", fm, ("L0A",), "L0A (TPosition.A2)")
    expect_space(core, op, "filter", filter, ("L0B",), "L0B (TPosition.B2)")
    if bias is not None:
        expect_space(core, op, "bias", bias, ("BT",), "the bias table (TPosition.C2)")
    check_fields(core, op, params, _RANGES)
    types = TYPES.get((fm.dtype.name, filter.dtype.name))
    if types is None or dst.dtype.name != types[0] or (bias is not None and bias.dtype.name != types[1]):
        listed = "; ".join(f"{a} x {b} -> {c} (bias {d})" for (a, b), (c, d) in TYPES.items())
        given = f"{fm.dtype.name} x {filter.dtype.name} -> {dst.dtype.name}" + \
            (f" (bias {bias.dtype.name})" if bias is not None else "")
        raise core.error(op, f"{given} is not a Mmad of {core.soc.name}: {listed} (Mmad.md 表7, 表8)")
    m, n, k = params.m, params.n, params.k
    if bias is None and not params.starts_from_zero and params.cmatrix_source:
        raise core.error(op, "cmatrix_source=True starts C from the bias table: pass the bias tensor, "
                             "mmad(dst, fm, filter, bias, params) (Mmad.md 表4)")
    if 0 in (m, n, k):
        core.record(op, Pipe.M, dtype=fm.dtype.name)  # a NOP (Mmad.md 表4)
        return
    k0 = c0(fm.dtype.sizeof())
    a_off = nz(1, k, k, k, k) if m == 1 else zz(m, k, k0)  # GEMV: one ND row
    b_off, c_off = zn(k, n, k0), l0c(m, n)
    bounded(core, op, fm, a_off, f"A ({m} x {k}) in Zz fractals of 16 x {k0}")
    bounded(core, op, filter, b_off, f"B ({k} x {n}) in Zn fractals of {k0} x 16")
    bounded(core, op, dst, c_off, f"C ({m} x {n}) in 16 x 16 Nz fractals")
    start = "bias" if bias is not None else "zero" if params.starts_from_zero else "l0c"
    b_row = nz(1, n, n, n, n)[0]
    if bias is not None:
        bounded(core, op, bias, b_row, "the bias row has n elements")
    a, b, c = Elements(fm, a_off), Elements(filter, b_off), Elements(dst, c_off)
    row = Elements(bias, b_row) if bias is not None else None
    hf32 = bool(core.hf32) and fm.dtype.name == "float32"
    round_away = bool(core.hf32_round_away)

    def effect():
        init = np.zeros((m, n), dst.dtype.np) if start == "zero" else \
            row.read()[..., None, :] if start == "bias" else c.read()  # the bias row: broadcast over m
        c.write(product(a.read(), b.read(), init, hf32, round_away))

    reads = accesses(fm, a_off) + accesses(filter, b_off) + (accesses(dst, c_off) if start == "l0c" else ()) + \
        (accesses(bias, b_row) if bias is not None else ())
    # nbytes: the L0C fractals written (fusekit.hb rule 2 reads from it whether the hardware orders this Mmad)
    core.record(op, Pipe.M, reads=reads, writes=accesses(dst, c_off), count=m * n * k,
                nbytes=-(-m // M0) * -(-n // M0) * L0C_FRACTAL * 4,
                dtype=fm.dtype.name, repeats=cube_cycles(m, n, k, fm.dtype.sizeof(), hf32), effect=effect)


def product(a: np.ndarray, b: np.ndarray, init: np.ndarray, hf32: bool = False, round_away: bool = False) -> np.ndarray:
    """``init + a @ b`` in the order the module docstring chooses: a (..., m, k), b (..., k, n), init (..., m, n) of
    C's dtype; leading axes broadcast (a lockstep group's cores)."""
    if init.dtype == np.int32:  # int8 products (|a b| <= 2^14) summed in float64 stay integers below 2^53: exact
        exact = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64) + init.astype(np.int64)
        return np.clip(exact, INT32.min, INT32.max).astype(np.int32)
    shape = np.broadcast_shapes(a.shape[:-1] + b.shape[-1:], b.shape[:-2] + (1, 1), init.shape)
    wide = a.dtype == np.float32  # float: each step in float64 (exact products); half / bfloat16: in float32 (exact)
    if hf32 and wide:
        a, b = to_hf32(a, round_away), to_hf32(b, round_away)
    acc = np.empty(shape, np.float32)  # C order, whatever init's strides
    acc[...] = init
    a32, b32 = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)  # one copy at most
    if native.mmad(acc.reshape((-1,) + shape[-2:]), a32.reshape((-1,) + a.shape[-2:]),
                   b32.reshape((-1,) + b.shape[-2:]), wide):  # the same steps in C, the leading axes as lanes
        return acc
    if wide:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        for kk in range(a.shape[-1]):
            acc = (acc + a64[..., kk:kk + 1] * b64[..., kk:kk + 1, :]).astype(np.float32)
        return acc
    for kk in range(a.shape[-1]):
        acc += a32[..., kk:kk + 1] * b32[..., kk:kk + 1, :]
    return acc
