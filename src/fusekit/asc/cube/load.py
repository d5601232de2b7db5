"""``load_data`` with LoadData2DParams: whole 512 B fractals from L1 into L0A / L0B (AD-API 矩阵计算的搬入/
LoadData_2D.md).

Repeat r copies source fractal ``start_index + r * src_stride`` (0 repeats the same fractal) to destination
fractal ``r * (1 + dst_gap)``; ``if_transpose`` transposes each fractal (L1 -> L0 only, b16 only: 16 x 16); a
fractal is 512 B whatever the dtype (b8 16 x 32 in L0A, 32 x 16 in L0B; b32 16 x 8 / 8 x 16). repeat_times 0 is
a NOP. Destination 512 B aligned (L0A / L0B), source 32 B (L1). From L1 it runs on PIPE_MTE1. The layouts a
matmul needs (``docs/cube.md``, "Fractal layouts"): A's Nz blocks from ND2NZ become L0A's Zz with one load per row of fractals
(start_index = m1, src_stride = the Nz rows / 16); B given transposed (N x K in GM) lands in Zn with one load;
B as K x N needs ``if_transpose``.
"""

from __future__ import annotations

import numpy as np

from ..runtime import current
from ..trace import Pipe
from .layout import FRACTAL_BYTES, M0, cached
from .operands import Elements, accesses, bounded, expect_space
from .load3d import load_data_3dv2
from .params import (LoadData2dTransposeParams, LoadData2DParams, LoadData3DParamsV2, LoadData3DParamsV2Pro,
                     check_fields)

_PAGE = "LoadData_2D.md 表2"
_RANGES = {"start_index": (0, 65535, _PAGE), "repeat_times": (0, 255, _PAGE), "src_stride": (0, 65535, _PAGE),
           "dst_gap": (0, 65535, _PAGE), "if_transpose": (0, bool, _PAGE), "addr_mode": (0, 1, _PAGE),
           "sid": (0, 255, _PAGE)}
# LoadData 2D element types on A2/A3 (数据类型; int4b_t is not a fusekit dtype)
_DTYPES = frozenset({"uint8", "int8", "uint16", "int16", "float16", "bfloat16", "uint32", "int32", "float32"})


def load_data(dst, src, params, *, is_set_fmatrix: bool = True, is_set_padding: bool = True) -> None:
    """pyasc ``load_data(dst, src, LoadData2DParams)`` from L1 (module docstring); with LoadData3DParamsV2 /
    LoadData3DParamsV2Pro, img2col (``fusekit.asc.cube.load3d.load_data_3dv2``, which the two keywords, C++'s
    IsResetLoad3dConfig, are for).

    Raises:
        KernelError: dst not in L0A / L0B or src not in L1 (GM -> L0 and the 2D V2 / 3D V1 forms are not simulated),
            dtypes that differ or the page does not list, a transpose of a non-b16 dtype, a field outside its range,
            addr_mode 1 (decrementing: GM -> L1 only), or a fractal outside either tensor.
    """
    if isinstance(params, (LoadData3DParamsV2, LoadData3DParamsV2Pro)):
        return load_data_3dv2(dst, src, params, is_set_fmatrix, is_set_padding)
    core, op = current("load_data"), "load_data"
    if not isinstance(params, LoadData2DParams):
        raise core.error(op, f"load_data takes asc.LoadData2DParams, LoadData3DParamsV2 or LoadData3DParamsV2Pro "
                             f"here; {type(params).__name__} (the 2D V2 and 3D V1 forms) is not simulated yet",
                         kind="unsupported")
    expect_space(core, op, "dst", dst, ("L0A", "L0B"), "L0A / L0B (TPosition.A2 / B2)")
    expect_space(core, op, "src", src, ("L1",), "L1 (TPosition.A1 / B1); GM -> L0 loads are not simulated yet")
    check_fields(core, op, params, _RANGES)
    if dst.dtype is not src.dtype or dst.dtype.name not in _DTYPES:
        raise core.error(op, f"load_data copies one dtype of {', '.join(sorted(_DTYPES))}; got dst {dst.dtype.name}, "
                             f"src {src.dtype.name} (LoadData_2D.md, 数据类型)")
    size = dst.dtype.sizeof()
    if params.if_transpose and size != 2:
        raise core.error(op, f"if_transpose transposes b16 fractals only, not {dst.dtype.name} (LoadData_2D.md, 约束说明); "
                             "b8 / b32 take load_data_with_transpose")
    if params.addr_mode:
        raise core.error(op, "addr_mode=1 (decrementing fractal index) is for GM -> L1 only: keep 0 (LoadData_2D.md 表2)")
    if params.repeat_times == 0:
        core.record(op, Pipe.MTE1, dtype=dst.dtype.name)  # a NOP (约束说明)
        return
    s_off, d_off = fractal_offsets(params.start_index, params.repeat_times, params.src_stride, params.dst_gap,
                                   bool(params.if_transpose), FRACTAL_BYTES // size)
    _move(core, op, dst, src, d_off, s_off, "start_index and src_stride count 512 B fractals",
          "dst_gap counts 512 B fractals")


def _move(core, op: str, dst, src, d_off, s_off, src_hint: str, dst_hint: str) -> None:
    """Record the MTE1 copy of ``src``'s elements at ``s_off`` to ``dst``'s at ``d_off``, after bounding both."""
    bounded(core, op, src, s_off, src_hint)
    bounded(core, op, dst, d_off, dst_hint)
    source, target = Elements(src, s_off), Elements(dst, d_off)

    def effect():
        target.write(source.read())

    core.record(op, Pipe.MTE1, reads=accesses(src, s_off), writes=accesses(dst, d_off), count=d_off.size,
                nbytes=d_off.size * dst.dtype.sizeof(), dtype=dst.dtype.name, effect=effect)


@cached
def fractal_offsets(start: int, repeats: int, src_stride: int, dst_gap: int, transpose: bool,
                    per: int) -> tuple[np.ndarray, np.ndarray]:
    """(source, destination) element offsets of a 2D load of ``repeats`` fractals of ``per`` elements, shape
    (repeats, per) (module docstring)."""
    r = np.arange(repeats, dtype=np.int64)[:, None]
    lane = np.arange(per, dtype=np.int64)[None, :]
    s_off = (start + r * src_stride) * per + lane
    if transpose:  # element (i, j) of each 16 x 16 destination fractal is (j, i) of its source
        s_off = s_off.reshape(-1, M0, M0).transpose(0, 2, 1).reshape(s_off.shape)
    return s_off, r * (1 + dst_gap) * per + lane


_T_PAGE = "LoadDataWithTranspose.md 表3"
_T_RANGES = {"start_index": (0, 65535, _T_PAGE), "repeat_times": (0, 255, _T_PAGE), "src_stride": (0, 65535, _T_PAGE),
             "dst_gap": (0, 65535, _T_PAGE), "dst_frac_gap": (0, 65535, _T_PAGE), "addr_mode": (0, 0, _T_PAGE)}
_T_DTYPES = frozenset({"int8", "uint8", "float16", "bfloat16", "int32", "uint32", "float32"})


def load_data_with_transpose(dst, src, params) -> None:
    """pyasc ``load_data_with_transpose(dst, src, LoadData2dTransposeParams)``: square matrices of L1 transposed into
    L0A / L0B (AD-API LoadDataWithTranspose.md): a b16 square is one 16 x 16 fractal; a b32 square is two 16 x 8
    fractals next to each other (fp32 "2个连续的16*8分形将被合并为1个16*16的方块矩阵", so L1 must be ZZ or NZ with 16
    rows per column block), whose transpose splits into two 16 x 8 fractals by columns; a b8 square is two 16 x 32
    fractals one above the other (32 x 32), whose transpose splits into two 16 x 32 fractals by rows. PIPE_MTE1;
    dst 512 B aligned, src 32 B; repeat_times 0 is a NOP.

    Raises:
        KernelError: dst not in L0A / L0B or src not in L1, dtypes that differ or the page does not list, a field out
            of range (addr_mode 1 is not simulated), destination fractals that overlap, or fractals outside a tensor.
    """
    core, op = current("load_data_with_transpose"), "load_data_with_transpose"
    if not isinstance(params, LoadData2dTransposeParams):
        raise core.error(op, f"load_data_with_transpose takes asc.LoadData2dTransposeParams, not "
                             f"{type(params).__name__} (LoadData2dTransposeParamsV2 is Ascend 950's)", kind="unsupported")
    expect_space(core, op, "dst", dst, ("L0A", "L0B"), "L0A / L0B (TPosition.A2 / B2)")
    expect_space(core, op, "src", src, ("L1",), "L1 (TPosition.A1 / B1)")
    check_fields(core, op, params, _T_RANGES)
    if dst.dtype is not src.dtype or dst.dtype.name not in _T_DTYPES:
        raise core.error(op, f"load_data_with_transpose copies one dtype of {', '.join(sorted(_T_DTYPES))}; got dst "
                             f"{dst.dtype.name}, src {src.dtype.name} (LoadDataWithTranspose.md, 数据类型)")
    if params.repeat_times == 0:
        core.record(op, Pipe.MTE1, dtype=dst.dtype.name)
        return
    size = dst.dtype.sizeof()
    s_off, d_off, twice = square_offsets(params.start_index, params.repeat_times, params.src_stride, params.dst_gap,
                                         params.dst_frac_gap, size)
    if twice:
        raise core.error(op, f"{params} writes some fractals twice: the transposed fractals must not overlap "
                             "(LoadDataWithTranspose.md, 约束说明); widen dst_gap or dst_frac_gap")
    _move(core, op, dst, src, d_off, s_off, "start_index and src_stride count square matrices (b32 / b8: two "
          "fractals)", "dst_gap and dst_frac_gap count 512 B fractals")


@cached
def square_offsets(start: int, repeats: int, src_stride: int, dst_gap: int, dst_frac_gap: int,
                   size: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(source, destination) element offsets of ``load_data_with_transpose`` (its docstring), destination element
    (i, j) of each square taking source element (j, i); and whether a destination offset repeats."""
    from .operands import repeated

    per = FRACTAL_BYTES // size          # elements of one fractal
    side = {2: 16, 4: 16, 1: 32}[size]   # the square's side
    fractals = 1 if size == 2 else 2     # fractals per square
    i = np.arange(side, dtype=np.int64)[:, None]
    j = np.arange(side, dtype=np.int64)[None, :]

    def at(row, col):
        """Offset in a square's fractals of element (row, col): b16 one fractal; b32 two 16 x 8 side by side; b8
        two 16 x 32 one above the other."""
        if size == 4:
            return (col // 8) * per + row * 8 + col % 8
        if size == 1:
            return (row // 16) * per + (row % 16) * 32 + col
        return row * 16 + col

    src_square = at(j, i)  # destination (i, j) reads source (j, i): the transpose
    dst_square = at(i, j)
    r = np.arange(repeats, dtype=np.int64)[:, None, None]
    s_off = (start + r * src_stride) * fractals * per + src_square[None]
    first = r * (1 + dst_gap) * per
    frac = dst_square // per          # which fractal of the square the element lands in
    d_off = first + frac * (1 + dst_frac_gap) * per + dst_square % per
    return s_off, d_off, repeated(d_off)
