"""``fixpipe``: L0C (CO1) -> GM or L1 on PIPE_FIX, with the layout change, cast, quantisation and ReLU on the way
(AD-API 矩阵计算（ISASI）/矩阵计算的搬出/Fixpipe（L0C到GM数据搬运）.md; 矩阵搬出关键特性说明/随路量化.md, 随路ReLU.md).

Layout: the source is an m_size x n_size region of L0C in Nz (16 x 16 fractals, column blocks ``src_stride`` rows
of 16 elements apart). ``CO2Layout.ROW_MAJOR`` (NZ2ND, the default) writes row r at ``r * dst_stride`` elements;
``CO2Layout.NZ`` writes Nz with C0 = 16 columns (8 with ``is_channel_split``, float only; 32 for an int8 / uint8
destination, whose pairs of 16-column fractals Int8 Channel Merge joins: :func:`channel_merge`), its column blocks
``dst_stride`` 32 B units apart. ``nd_num`` matrices, ``src_nd_stride`` x 1 KB and ``dst_nd_stride`` elements
apart. n_size 0, m_size 0 or nd_num 0 is a NOP.

Conversion, by ``quant_pre`` (the A2/A3 pairs of the page's 数据类型 table):

========================  ================  ===================================================================
mode                      L0C -> dst        what each element becomes
========================  ================  ===================================================================
NoQuant                   float -> float,   as it is (ReLU: max(0, x))
                          int32 -> int32
F322F16 / F322BF16        float -> half /   rounded to nearest even (CAST_RINT); overflow follows the launch's
                          bfloat16          mode (INF_NAN keeps inf)
QF322B8_PRE / VQF322B8    float -> int8 /   y = x * M1 (x >= 0) or x * M2 (x < 0); q = clip(rint(y), -256, 255) + offset,
                          uint8             then saturated to the destination
REQ8 / VREQ8              int32 -> int8 /   with MCB: x = sat_int16(x >> N) first; then as QF322B8_PRE
                          uint8
DEQF16 / VDEQF16          int32 -> half     with MCB: x = sat(x >> N); y = sat_half(x * M1) + offset, saturated
                                            again (never inf: "不支持INF_NAN模式")
========================  ================  ===================================================================

The scale (``deq_scalar``, or one uint64 per column from ``cbuf_workspace`` in L1 for the V modes) packs, per
随路量化.md 表1: M1 = bits 0-31 as a float with its low 13 mantissa bits ignored ((1,8,10)); N = bits 32-35; MCB =
bit 36; offset = bits 37-45 (9-bit two's complement); sign = bit 46 (1: int8, 0: uint8). M2 = M1, or 0 with
``relu_en`` (随路量化与随路ReLU场景组合.md 表1). The order of the steps is the one Huawei's golden scripts compute
(AD examples 03_basic_api/03_matrix_compute/fixpipe_l0c2gm/scripts/gen_data_*.py), where the sources disagree
(``docs/cube.md``, "Fixpipe"): N is taken as the raw bits 0-15 as the scripts do (the page says "[1, 16], b'0000 = 1"), and
DEQF16 adds the offset as the scripts do (the page calls it unused).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..runtime import current
from ..trace import Pipe
from .layout import L0C_FRACTAL, M0, cached, nz
from .operands import Elements, accesses, bounded, expect_space, repeated
from .params import CO2Layout, FixpipeConfig, FixpipeParamsV220, QuantModes, check_fields

_PAGE = "Fixpipe（L0C到GM数据搬运）.md 表4"
_RANGES = {"n_size": (0, 4095, _PAGE), "m_size": (0, 65535, _PAGE), "src_stride": (0, 65535, _PAGE),
           "dst_stride": (0, 2**32 - 1, _PAGE), "nd_num": (0, 65535, _PAGE), "src_nd_stride": (0, 512, _PAGE),
           "dst_nd_stride": (0, 65535, _PAGE), "relu_en": (0, bool, _PAGE), "is_channel_split": (0, bool, _PAGE),
           "unit_flag": (0, 3, _PAGE)}
Q = QuantModes
# mode -> (L0C dtype, destination dtypes) on A2/A3 (the page's 数据类型 table)
MODES = {Q.NoQuant: (("float32", ("float32",)), ("int32", ("int32",))), Q.F322F16: (("float32", ("float16",)),),
         Q.F322BF16: (("float32", ("bfloat16",)),), Q.QF322B8_PRE: (("float32", ("int8", "uint8")),),
         Q.VQF322B8_PRE: (("float32", ("int8", "uint8")),), Q.REQ8: (("int32", ("int8", "uint8")),),
         Q.VREQ8: (("int32", ("int8", "uint8")),), Q.DEQF16: (("int32", ("float16",)),),
         Q.VDEQF16: (("int32", ("float16",)),)}
VECTOR_MODES = frozenset({Q.VQF322B8_PRE, Q.VREQ8, Q.VDEQF16})
HALF_MAX = float(np.finfo(np.float16).max)


class Scale:
    """A QUANT_PRE value (uint64) unpacked (module docstring); the fields are numpy arrays for the vector modes."""

    def __init__(self, value):
        v = np.asarray(value, dtype=np.uint64)
        low = (v & np.uint64(0xFFFFE000)).astype(np.uint32)  # (1,8,10): the low 13 mantissa bits are ignored
        self.m1 = low.view(np.float32)
        self.shift = ((v >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64)
        self.mcb = ((v >> np.uint64(36)) & np.uint64(1)).astype(bool)
        offset = ((v >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)
        self.offset = np.where(offset >= 256, offset - 512, offset)
        self.signed = ((v >> np.uint64(46)) & np.uint64(1)).astype(bool)


def convert(x: np.ndarray, mode: QuantModes, out: str, scale: "Scale | None", relu: bool, saturate: bool) -> np.ndarray:
    """L0C values ``x`` (float32 or int32, any shape; the columns last, for per-column scales) as the destination
    dtype ``out`` gets them under ``mode`` (module docstring). ``saturate``: the launch's overflow mode is
    saturation (F322F16 / F322BF16 clip instead of giving inf)."""
    if mode is Q.NoQuant:
        return np.maximum(x, 0) if relu else x.copy()
    if mode in (Q.F322F16, Q.F322BF16):
        y = np.maximum(x, np.float32(0)) if relu else x
        target = dtypes.from_name(out).np
        if saturate:
            top = float(np.finfo(target).max) if out == "float16" else 3.3895313892515355e38
            y = np.clip(y, -top, top)
        with np.errstate(over="ignore"):
            return y.astype(target)
    if mode in (Q.REQ8, Q.VREQ8, Q.DEQF16, Q.VDEQF16):
        x = x.astype(np.int64)
        if scale.mcb.any():  # shift right into int16 (REQ8) or half (DEQF16) range first
            lo, hi = (-32768, 32767) if mode in (Q.REQ8, Q.VREQ8) else (-HALF_MAX, HALF_MAX)
            x = np.where(scale.mcb, np.clip(x >> scale.shift, lo, hi), x)
        x = x.astype(np.float32)
    m2 = np.zeros_like(scale.m1) if relu else scale.m1
    y = np.where(x >= 0, x * scale.m1, x * m2).astype(np.float32)
    if mode in (Q.DEQF16, Q.VDEQF16):
        half = np.clip(y, -HALF_MAX, HALF_MAX).astype(np.float16)
        return np.clip(half.astype(np.float32) + scale.offset, -HALF_MAX, HALF_MAX).astype(np.float16)
    q = np.clip(np.rint(y), -256, 255).astype(np.int64) + scale.offset
    lo, hi = (-128, 127) if out == "int8" else (0, 255)
    return np.clip(q, lo, hi).astype(dtypes.from_name(out).np)


def fixpipe(dst, src, *args, **kwargs) -> None:
    """pyasc ``fixpipe(dst, src, params, config=FixpipeConfig.cfg_row_major())`` and ``fixpipe(dst, src,
    cbuf_workspace, params, config)`` (module docstring).

    Raises:
        KernelError: src not in L0C or dst not in GM / L1, a quant mode whose dtypes are not the tensors', a V mode
            without cbuf_workspace (or a workspace not in L1 of uint64), a field outside its range, n_size not a
            multiple of 16 (8 with channel split) for NZ output, a scale that is inf, NaN or denormal, or whose sign
            bit says int8 for a uint8 destination (or the other way), destination elements written twice, or an
            access outside a tensor.
    """
    core, op = current("fixpipe"), "fixpipe"
    workspace, params, config = _form(core, op, args, kwargs)
    expect_space(core, op, "src", src, ("L0C",), "L0C (TPosition.CO1)")
    expect_space(core, op, "dst", dst, ("GM", "L1"), "GM (a GlobalTensor) or L1 (TPosition.A1 / B1)")
    check_fields(core, op, params, _RANGES)
    mode = Q(int(params.quant_pre))
    outs = dict(MODES[mode]).get(src.dtype.name)
    if outs is None or dst.dtype.name not in outs:
        pairs = ", ".join(f"{a} -> {'/'.join(b)}" for a, b in MODES[mode])
        raise core.error(op, f"quant_pre=QuantModes.{mode.name} converts {pairs}, not {src.dtype.name} -> "
                             f"{dst.dtype.name}; choose the mode for these dtypes (the mode is not inferred: {_PAGE})")
    nd_out = config.layout is CO2Layout.ROW_MAJOR
    if config.layout is CO2Layout.COLUMN_MAJOR:
        raise core.error(op, "CO2Layout.COLUMN_MAJOR (NZ2DN) exists on Ascend 950 only (Fixpipe page)", kind="unsupported")
    c0_out = 8 if params.is_channel_split else M0
    if params.is_channel_split and (nd_out or (src.dtype.name, dst.dtype.name) != ("float32", "float32")):
        raise core.error(op, "is_channel_split needs float -> float and NZ output (not with NZ2ND; F32-Channel-Split.md)")
    if not nd_out and params.n_size % c0_out:
        raise core.error(op, f"n_size={params.n_size}: NZ output needs a multiple of {c0_out} ({_PAGE})")
    if nd_out and params.m_size > 8192:
        raise core.error(op, f"m_size={params.m_size}: NZ2ND takes m_size in [0, 8192] ({_PAGE})")
    if 0 in (params.n_size, params.m_size, params.nd_num):
        core.record(op, Pipe.FIX, dtype=dst.dtype.name)  # a NOP
        return
    if params.dst_stride == 0:
        raise core.error(op, f"dst_stride must not be 0 ({_PAGE})")
    n = params.n_size
    s_off, d_off, twice = _offsets(*(getattr(params, f) for f in _LAYOUT_FIELDS), nd_out, c0_out, dst.dtype.sizeof())
    if twice:
        raise core.error(op, f"{params} writes some elements of {dst.name} twice, in an order the page does not "
                             "guarantee: dst_stride must hold a whole row (n_size elements, ND) or column block "
                             "(m_size rows, NZ), and dst_nd_stride a whole matrix", tensor=dst.name)
    bounded(core, op, src, s_off, "src_stride counts 16-element rows (ceil16(m_size)); src_nd_stride 1 KB")
    bounded(core, op, dst, d_off, "dst_stride counts elements per row (ND) or 32 B units (NZ)")
    scale, ws = _scale(core, op, mode, params, workspace, dst, n)
    source, target = Elements(src, s_off), Elements(dst, d_off)
    relu, saturate, out = bool(params.relu_en), core.overflow == "saturation", dst.dtype.name

    def effect():
        target.write(convert(source.read(), mode, out, scale() if scale else None, relu, saturate))

    reads = accesses(src, s_off) + (accesses(workspace, ws) if ws is not None else ())
    core.record(op, Pipe.FIX, reads=reads, writes=accesses(dst, d_off), count=d_off.size,
                nbytes=d_off.size * dst.dtype.sizeof(), dtype=out, effect=effect)


def _form(core, op: str, args: tuple, kwargs: dict):
    """(cbuf_workspace, params, config) of either call form."""
    args = list(args)
    workspace = kwargs.pop("cbuf_workspace", None)
    if args and not isinstance(args[0], FixpipeParamsV220):
        workspace = args.pop(0)
    params = kwargs.pop("intri_params", kwargs.pop("params", args.pop(0) if args else None))
    config = kwargs.pop("config", args.pop(0) if args else FixpipeConfig.cfg_row_major())
    if callable(config) and not isinstance(config, FixpipeConfig):
        config = config()  # FixpipeConfig.cfg_row_major passed without calling it
    if isinstance(config, (CO2Layout, int)) and not isinstance(config, bool):
        config = FixpipeConfig(config)
    if not isinstance(params, FixpipeParamsV220) or not isinstance(config, FixpipeConfig) or args or kwargs:
        raise core.error(op, "fixpipe takes (dst, src, params: asc.FixpipeParamsV220, config: asc.FixpipeConfig) or "
                             "(dst, src, cbuf_workspace, params, config)")
    return workspace, params, config


_LAYOUT_FIELDS = ("n_size", "m_size", "src_stride", "dst_stride", "nd_num", "src_nd_stride", "dst_nd_stride")


@cached
def _offsets(n_size, m_size, src_stride, dst_stride, nd_num, src_nd_stride, dst_nd_stride, nd_out: bool, c0_out: int,
             out_size: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(L0C offsets, destination offsets, whether a destination offset repeats) of every element, shape (nd_num,
    m_size, n_size)."""
    t = np.arange(nd_num, dtype=np.int64)[:, None, None]
    src = t * src_nd_stride * L0C_FRACTAL + nz(m_size, n_size, M0, M0, src_stride * M0)[None]
    if nd_out:
        r = np.arange(m_size, dtype=np.int64)[None, :, None]
        c = np.arange(n_size, dtype=np.int64)[None, None, :]
        dst = t * dst_nd_stride + r * dst_stride + c
    elif out_size == 1:
        dst = t * dst_nd_stride + channel_merge(m_size, n_size, dst_stride * 32)[None]
    else:
        dst = t * dst_nd_stride + nz(m_size, n_size, c0_out, c0_out, dst_stride * 32 // out_size)[None]
    return src, dst, repeated(dst)


def channel_merge(m_size: int, n_size: int, block_stride: int) -> np.ndarray:
    """Destination offsets (m_size, n_size) of an int8 / uint8 NZ output, which Int8 Channel Merge always lays out
    (矩阵搬出关键特性说明/Int8-Channel-Merge.md): each two 16 x 16 fractals side by side become one 16 x 32, so column
    blocks of 32 channels, rows 32 B apart, blocks ``block_stride`` bytes apart; when n_size is an odd multiple of 16
    the last 16 channels stay one unmerged block, its rows 16 B apart."""
    r = np.arange(m_size, dtype=np.int64)[:, None]
    c = np.arange(n_size, dtype=np.int64)[None, :]
    width = np.where(c >= n_size - n_size % 32, M0, 2 * M0)
    return (c // (2 * M0)) * block_stride + r * width + c % (2 * M0)


def _scale(core, op: str, mode: QuantModes, p: FixpipeParamsV220, workspace, dst, n: int):
    """(a function giving the Scale when the effect lands, the workspace offsets read) for a quantising mode;
    (None, None) for the casts."""
    if mode not in (Q.QF322B8_PRE, Q.VQF322B8_PRE, Q.REQ8, Q.VREQ8, Q.DEQF16, Q.VDEQF16):
        return None, None
    if mode not in VECTOR_MODES:
        scale = Scale(p.deq_scalar)
        _check_scale(core, op, scale, dst, f"deq_scalar={p.deq_scalar:#x}")
        return (lambda: scale), None
    if workspace is None:
        raise core.error(op, f"QuantModes.{mode.name} reads one scale per column from cbuf_workspace (uint64 in L1): "
                             "call fixpipe(dst, src, cbuf_workspace, params, config)")
    expect_space(core, op, "cbuf_workspace", workspace, ("L1",), "L1 (TPosition.A1 / C1)")
    if workspace.dtype.name != "uint64":
        raise core.error(op, f"cbuf_workspace must be uint64, got {workspace.dtype.name} ({_PAGE}: S = uint64_t)")
    ws = np.arange(n, dtype=np.int64)
    bounded(core, op, workspace, ws, "one uint64 scale per output column")
    values = Elements(workspace, ws)

    def scale():
        words = values.read()  # (..., n): one column axis under the (nd, m) of the values (a group's cores lead)
        unpacked = Scale(words.reshape(words.shape[:-1] + (1, 1, n)))
        _check_scale(core, op, unpacked, dst, f"{workspace.name}")
        return unpacked

    return scale, ws


def _check_scale(core, op: str, scale: Scale, dst, what: str) -> None:
    m1 = np.asarray(scale.m1, np.float32)
    bad = ~np.isfinite(m1) | ((m1 != 0) & (np.abs(m1) < np.finfo(np.float32).tiny))
    if bad.any():
        raise core.error(op, f"{what}: a quantisation scale M1 is inf, NaN or denormal (Fixpipe page, 约束说明)")
    if dst.dtype.name in ("int8", "uint8") and (np.asarray(scale.signed) != (dst.dtype.name == "int8")).any():
        raise core.error(op, f"{what}: bit 46 (sign) says {'int8' if np.asarray(scale.signed).any() else 'uint8'} but "
                             f"dst is {dst.dtype.name} (随路量化.md 表1)")
