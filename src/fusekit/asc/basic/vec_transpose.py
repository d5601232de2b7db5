"""Transpose: a 16 x 16 block of 2-byte elements, or [N,C,H,W] <-> [N,H,W,C]
(pyasc basic/vec_transpose.py; AD-API Memory矢量计算/数据排布转换/Transpose.md).

Forms: ``transpose(dst, src)`` (16 x 16, ``dst = src.T`` on the first 256 elements) and
``transpose(dst, src, shared_tmp_buffer, params: TransposeParamsExt)``, whose ``transpose_type`` is
TRANSPOSE_ND2ND_B16 (the 16 x 16 block), TRANSPOSE_NCHW2NHWC (``np.transpose(x, (0, 2, 3, 1))``),
TRANSPOSE_NHWC2NCHW (``(0, 3, 1, 2)``) or TRANSPOSE_TYPE_NONE (nothing); the page marks the other
types 当前不支持. The temporary buffer's bytes the page sizes are recorded as left undefined.
"""

from __future__ import annotations

import enum

import numpy as np

from .. import checks
from ..effect import Effect, Operand, copy
from ..runtime import current
from ..trace import Pipe
from .spec import Spec, export, register

_PAGE = "AD-API Memory矢量计算/数据排布转换/Transpose.md"
_B16 = frozenset({"int16", "uint16", "float16"})
_NCHW = frozenset({"int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32"})
# the registry's dtype table is the 16 x 16 form's (数据类型: 普通转置); the extended form's tables are below
SPEC = register(Spec("transpose", "Transpose", "vec_transpose", {"2201": _B16, "2002": _B16},
                     arithmetic=False, source=_PAGE, doc="dst = src.T (16 x 16) or NCHW <-> NHWC"))


class TransposeType(enum.IntEnum):
    """pyasc ``asc.TransposeType`` (core/enums.py)."""

    TRANSPOSE_TYPE_NONE = 0
    TRANSPOSE_NZ2ND_0213 = 1
    TRANSPOSE_NZ2NZ_0213 = 2
    TRANSPOSE_NZ2NZ_012_WITH_N = 3
    TRANSPOSE_NZ2ND_012_WITH_N = 4
    TRANSPOSE_NZ2ND_012_WITHOUT_N = 5
    TRANSPOSE_NZ2NZ_012_WITHOUT_N = 6
    TRANSPOSE_ND2ND_ONLY = 7
    TRANSPOSE_ND_UB_GM = 8
    TRANSPOSE_GRAD_ND_UB_GM = 9
    TRANSPOSE_ND2ND_B16 = 10
    TRANSPOSE_NCHW2NHWC = 11
    TRANSPOSE_NHWC2NCHW = 12


class TransposeParamsExt:
    """pyasc ``asc.TransposeParamsExt(n_size=0, c_size=0, h_size=0, w_size=0, transpose_type=TRANSPOSE_ND2ND_B16)``
    (core/types.py; ranges: Transpose.md 表 TransposeParamsExt)."""

    def __init__(self, n_size: int = 0, c_size: int = 0, h_size: int = 0, w_size: int = 0,
                 transpose_type: TransposeType = TransposeType.TRANSPOSE_ND2ND_B16):
        self.n_size, self.c_size, self.h_size, self.w_size = n_size, c_size, h_size, w_size
        self.transpose_type = transpose_type

    def __repr__(self) -> str:
        return (f"asc.TransposeParamsExt(n_size={self.n_size}, c_size={self.c_size}, h_size={self.h_size}, "
                f"w_size={self.w_size}, transpose_type={self.transpose_type!r})")


export(TransposeType)
export(TransposeParamsExt)


def _overlap(core, op: str, dst, d, src, s, allow_same: bool) -> None:
    if d[0] < s[1] and s[0] < d[1] and not (allow_same and d == s):
        rule = "src and dst may be the same buffer or disjoint" if allow_same else \
            "NCHW <-> NHWC does not allow src and dst to share memory"
        raise core.error(op, f"{src.name} (UB [{s[0]}, {s[1]})) overlaps {dst.name} (UB [{d[0]}, {d[1]})): {rule} "
                             "(Transpose.md 约束说明)", tensor=dst.name, kind="partial-overlap")


def _block16(core, op: str, dst, src, undefined=()) -> None:
    d, s = dst.span(core, op, 256, hint="a 16 x 16 transpose needs 256 elements"), \
        src.span(core, op, 256, hint="a 16 x 16 transpose needs 256 elements")
    _overlap(core, op, dst, d, src, s, allow_same=True)

    # a move: dst element 16r + c takes src element 16c + r; the source lanes are read before any is written, so
    # src may be dst
    effect = Effect(SPEC, Operand(dst, np.arange(256)), {"src": Operand(src, _transposed((16, 16), (1, 0)))}, copy)
    core.record(op, Pipe.V, reads=(src.access(*s),), writes=(dst.access(*d),), undefined=undefined, count=256,
                nbytes=512, dtype=dst.dtype.name, effect=effect, repeats=2, cost=SPEC.cpp)


def _int(core, op: str, name: str, value, top: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
        raise core.error(op, f"TransposeParamsExt.{name} must be an integer in [0, {top}] (Transpose.md), got {value!r}")
    return int(value)


@export
def transpose(dst, src, shared_tmp_buffer=None, params=None) -> None:
    """Transpose a 16 x 16 block (2-byte dtypes) or convert NCHW <-> NHWC, on PIPE_V.

    Args: ``dst``, ``src`` same dtype, 32 B aligned; ``shared_tmp_buffer`` a uint8 LocalTensor and
    ``params`` a TransposeParamsExt for the extended form. dtypes (Transpose.md 数据类型): 16 x 16:
    int16, uint16, half; ND2ND_B16: uint16; NCHW <-> NHWC: int8, uint8, int16, uint16, half, int32,
    uint32, float. Temporary buffer on A2/A3 (表 sharedTmpBuffer所需的内存): NCHW2NHWC
    ``(c + 2) * h0 * w0 * sizeof(T)`` bytes, NHWC2NCHW ``(2c + 1) * h0 * w0 * sizeof(T)``, with
    ``h0 = 32`` for 1-byte types else 16 and ``w0 = 32 / sizeof(T)``; 310P needs none.

    Raises:
        KernelError: dtype, shapes out of range, h*w*sizeof(T) not a multiple of 32, a short
            temporary buffer, an unsupported transpose_type, a forbidden overlap, bounds.
    """
    op = "transpose"
    core = current(op)
    checks.local_operands(core, op, dst, src)
    checks.same_dtype(core, op, dst, src)
    if shared_tmp_buffer is None and params is None:
        checks.dtype_supported(core, SPEC, dst)
        return _block16(core, op, dst, src)
    if params is None or not isinstance(params, TransposeParamsExt):
        raise core.error(op, "asc.transpose takes (dst, src) or (dst, src, shared_tmp_buffer, params: "
                             f"TransposeParamsExt); got params={type(params).__name__}")
    checks.local_operands(core, op, shared_tmp_buffer)
    if shared_tmp_buffer.dtype.name != "uint8":
        raise core.error(op, f"shared_tmp_buffer must be a uint8 LocalTensor, got {shared_tmp_buffer.dtype.name}",
                         tensor=shared_tmp_buffer.name)
    try:
        kind = TransposeType(params.transpose_type)
    except ValueError:
        raise core.error(op, f"transpose_type must be an asc.TransposeType, got {params.transpose_type!r}") from None
    name = dst.dtype.name
    if kind is TransposeType.TRANSPOSE_TYPE_NONE:
        core.record(op, Pipe.V, dtype=name, cost=SPEC.cpp)  # "API不做任何处理"
        return
    if kind is TransposeType.TRANSPOSE_ND2ND_B16:
        if name != "uint16":
            raise core.error(op, f"TRANSPOSE_ND2ND_B16 takes uint16 only, got {name} (Transpose.md 数据类型: 增强转置); "
                                 "reinterpret_cast the tensors to uint16", tensor=dst.name, kind="unsupported")
        return _block16(core, op, dst, src)
    if kind not in (TransposeType.TRANSPOSE_NCHW2NHWC, TransposeType.TRANSPOSE_NHWC2NCHW):
        raise core.error(op, f"{kind.name} is not supported by Transpose (Transpose.md: 当前不支持); use "
                             "TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC or TRANSPOSE_NHWC2NCHW", kind="unsupported")
    if name not in _NCHW:
        raise core.error(op, f"{kind.name} does not take {name} (supported: {', '.join(sorted(_NCHW))}; Transpose.md "
                             "数据类型)", tensor=dst.name, kind="unsupported")
    n, c = _int(core, op, "n_size", params.n_size, 65535), _int(core, op, "c_size", params.c_size, 4095)
    h, w = _int(core, op, "h_size", params.h_size, 65535), _int(core, op, "w_size", params.w_size, 65535)
    size = dst.dtype.sizeof()
    if h * w > 4095 or h * w * size % 32:
        raise core.error(op, f"h_size * w_size = {h * w} must be in [0, 4095] with h*w*sizeof({name}) a multiple of 32 B "
                             "(Transpose.md 表 TransposeParamsExt)")
    total = n * c * h * w
    d, s = dst.span(core, op, total), src.span(core, op, total)
    _overlap(core, op, dst, d, src, s, allow_same=False)
    undefined = ()
    if core.soc.arch == "2201":
        h0, w0 = (32 if size == 1 else 16), 32 // size
        need = ((c + 2) if kind is TransposeType.TRANSPOSE_NCHW2NHWC else (2 * c + 1)) * h0 * w0 * size
        t = shared_tmp_buffer.span(core, op, need, hint=f"{kind.name} needs a {need} B temporary buffer "
                                                        "(Transpose.md 表 sharedTmpBuffer所需的内存)")
        _overlap(core, op, shared_tmp_buffer, t, src, s, allow_same=False)
        _overlap(core, op, shared_tmp_buffer, t, dst, d, allow_same=False)
        undefined = (shared_tmp_buffer.access(*t),) if need else ()
    shape, axes = ((n, c, h, w), (0, 2, 3, 1)) if kind is TransposeType.TRANSPOSE_NCHW2NHWC else ((n, h, w, c), (0, 3, 1, 2))

    # a move: each dst element takes the src element the layout change puts there
    effect = Effect(SPEC, Operand(dst, np.arange(total)), {"src": Operand(src, _transposed(shape, axes))}, copy)
    core.record(op, Pipe.V, reads=(src.access(*s),) if total else (), writes=(dst.access(*d),) if total else (),
                undefined=undefined, count=total, nbytes=total * size, dtype=name, effect=effect,
                repeats=-(-total * size // 256), cost=SPEC.cpp)


def _transposed(shape: tuple, axes: tuple) -> np.ndarray:
    """The source element of each destination element, in order, when ``shape`` (row-major) moves by ``axes``."""
    return np.transpose(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape), axes).ravel()
