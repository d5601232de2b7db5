"""``load_data`` with LoadData3DParamsV2 / LoadData3DParamsV2Pro: img2col of a feature map in L1 into L0A / L0B
(AD-API 矩阵计算的搬入/LoadData_3D.md, "LoadData（卷积数据搬运）"; its pseudo-code AD EX/03_basic_api/
03_matrix_compute/load_data_l12l0/scripts/load3d.py), and the registers it reads: ``set_fmatrix``,
``set_load_data_padding_value``, ``set_load_data_repeat``, ``set_load_data_boundary``.

The feature map is NC1HWC0 with N = 1 (数据格式说明): element (c1, h, w, c0) at ``((c1 * l1_h + h) * l1_w + w) * C0
+ c0``, C0 = 32 B / sizeof(T), C1 = channel_size / C0. The filter (filter_h (+256 with filter_size_h) x filter_w,
dilated, ``stride_h`` / ``stride_w`` apart) slides over the map padded by pad_list = [left, right, top, bottom];
``Ho = (l1_h + top + bottom - ((filter_h - 1) * dilation_h + 1)) // stride_h + 1`` (Wo alike). The img2col matrix
has a row per window, ``m = ho * Wo + wo``, and a column per (c1, kh, kw, c0), ``k = ((c1 * filter_h + kh) *
filter_w + kw) * C0 + c0``; element (m, k) is the map at ``h = ho * stride_h + kh * dilation_h - top``, ``w = wo
* stride_w + kw * dilation_w - left``, or the pad value outside it. A load copies rows [m_start_pt, +m_extension)
x columns [k_start_pt, +k_extension) of that matrix, as (m, k) -> (row, column) of the destination:

- L0A, ``en_transpose`` False: Zz of the m_extension x k_extension block (16 x C0 fractals);
- L0A, ``en_transpose`` True (b16 / b32): Zz of its transpose, 16 rows (k) x C0 columns (m) a fractal, m aligned
  to 16 (the b16 and b32 transposed cases of the pseudo-code);
- L0B (always transposed, en_transpose ignored: 约束说明): Zn, the block being B (K = m, N = k).

Rows past m_extension and columns past k_extension in the last fractals are not written (the pseudo-code's masks).
A matrix in Nz (ND2NZ's layout) is such a map with l1_h = 1, l1_w = its rows (16-aligned), channel_size its
columns and a 1 x 1 filter (关键特性说明), which is how the samples load a matmul's A, A^T and B with it.

fusekit simulates channel_size as a multiple of C0 and repeat_time <= 1; the page's other channel sizes (4, 8,
N * 16 + 4 ...: channels not filling a C0 block), the repeat of SetLoadDataRepeat, a boundary a read wraps at,
and fMatrixCtrl / FMATRIX_RIGHT (which A2/A3 do not support) are refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dtypes import to_scalar
from ..runtime import current
from ..trace import Pipe
from .layout import M0, c0, cached, ceil_to, zn, zz
from .operands import Elements, accesses, bounded, expect_space
from .params import FmatrixMode, LoadData3DParamsV2, LoadData3DParamsV2Pro, LoadDataRepeatParam, check_fields

_PAGE = "LoadData_3D.md 表4"
_PRO = "LoadData_3D.md 表5"
_FIELDS = {"l1_h": (0, 32767, _PAGE), "l1_w": (0, 32767, _PAGE), "channel_size": (0, 65535, _PAGE),
           "k_extension": (0, 65535, _PAGE), "m_extension": (0, 65535, _PAGE), "k_start_pt": (0, 65535, _PAGE),
           "m_start_pt": (0, 32767, _PAGE), "stride_w": (0, 63, _PAGE), "stride_h": (0, 63, _PAGE),
           "filter_w": (0, 255, _PAGE), "filter_h": (0, 255, _PAGE), "dilation_filter_w": (0, 255, _PAGE),
           "dilation_filter_h": (0, 255, _PAGE), "en_transpose": (0, bool, _PAGE), "filter_size_w": (0, bool, _PAGE),
           "filter_size_h": (0, bool, _PAGE), "f_matrix_ctrl": (0, bool, _PAGE), "en_small_k": (0, bool, _PAGE)}
_PRO_FIELDS = {"channel_size": (0, 65535, _PRO), "en_transpose": (0, bool, _PRO), "en_small_k": (0, bool, _PRO),
               "filter_size_w": (0, bool, _PRO), "filter_size_h": (0, bool, _PRO), "f_matrix_ctrl": (0, bool, _PRO),
               "ext_config": (0, 2 ** 64 - 1, _PRO), "filter_config": (0, 2 ** 64 - 1, _PRO)}
# 数据类型, Atlas A2/A3 (int4b_t is not a fusekit dtype); B1/B2 take no b8 (约束说明)
_DTYPES_A = frozenset({"int8", "uint8", "float16", "bfloat16", "int32", "uint32", "float32"})
_DTYPES_B = frozenset({"float16", "bfloat16", "int32", "uint32", "float32"})
# channel_size's values on A2/A3 (约束说明, channelSize): those that fill whole C0 blocks, which fusekit runs, and
# the others the page allows, which it refuses by name; N >= 1
_PARTIAL_CHANNELS = {4: (4,), 2: (4, 8), 1: (4, 8, 16)}   # by sizeof(T): the remainders past N * C0 (and alone)


@dataclass
class Img2colRegisters:
    """The registers img2col reads (LoadData_3D.md, "Feature Map、Pad属性描述寄存器设置"; SetLoadDataRepeat.md;
    SetLoadDataBoundary.md): FMATRIX (l1_h, l1_w, pad_list) once set, the pad value once set, L3D_RPT
    (repeat_time, repeat_stride, repeat_mode) and the L1 boundary in bytes (0: none)."""

    fmatrix: tuple | None = None
    pad_value: object = None
    repeat: tuple = (1, 0, 0)
    boundary: int = 0
    where: dict = field(default_factory=dict)  # register -> the call that set it (messages)


def registers(core) -> Img2colRegisters:
    """This core's img2col registers (created on first use)."""
    if core.load3d is None:
        core.load3d = Img2colRegisters()
    return core.load3d


def set_fmatrix(l1_h: int, l1_w: int, pad_list, fmatrix_mode=FmatrixMode.FMATRIX_LEFT) -> None:
    """``SetFmatrix(l1H, l1W, padList, fmatrixMode)`` (AD-API SetFmatrix.md): the feature map img2col reads when a
    load does not set it (C++ ``IsResetLoad3dConfig.isSetFMatrix`` false; every LoadData3DParamsV2Pro load). pyasc
    has no such call; fusekit offers it under the C++ name's snake_case. PIPE_S.

    Raises:
        KernelError: l1_h or l1_w outside [1, 32767], a pad outside [0, 255] or not four of them, or FMATRIX_RIGHT
            ("当前只支持FMATRIX_LEFT", 表1).
    """
    core, op = current("set_fmatrix"), "set_fmatrix"
    for name, value in (("l1_h", l1_h), ("l1_w", l1_w)):
        if not _is_int(value) or not 1 <= value <= 32767:
            raise core.error(op, f"{name}={value!r} outside [1, 32767] (SetFmatrix.md 表1)")
    pads = _pads(core, op, pad_list, "SetFmatrix.md 表1")
    if int(fmatrix_mode) != FmatrixMode.FMATRIX_LEFT:
        raise core.error(op, "fmatrix_mode FMATRIX_RIGHT: A2/A3 support FMATRIX_LEFT only, for both matrices "
                             "(SetFmatrix.md 表1); pass FmatrixMode.FMATRIX_LEFT")
    state = registers(core)
    state.fmatrix = (int(l1_h), int(l1_w), pads)
    core.record(op, Pipe.S)


def set_load_data_padding_value(pad_value) -> None:
    """``SetLoadDataPaddingValue(padValue)`` (AD-API SetLoadDataPaddingValue.md; PY set_load_data_padding_value):
    the value img2col writes for positions outside the feature map, when a load does not set it (C++
    ``isSetPadding`` false; LoadData3DParamsV2Pro). It is converted to the loaded dtype at the load. PIPE_S."""
    core = current("set_load_data_padding_value")
    registers(core).pad_value = pad_value
    core.record("set_load_data_padding_value", Pipe.S)


def set_load_data_repeat(param) -> None:
    """``SetLoadDataRepeat(LoadDataRepeatParam)`` (AD-API SetLoadDataRepeat.md; PY set_load_data_repeat): img2col's
    repeat register. repeat_time 0 makes the next loads NOPs; 1 (the reset value) one block each; more is not
    simulated (the load refuses it). PIPE_S.

    Raises:
        KernelError: not a LoadDataRepeatParam, or a field outside its range (表2: repeat_time [0, 255],
            repeat_stride [0, 65535], repeat_mode [0, 1]).
    """
    core, op = current("set_load_data_repeat"), "set_load_data_repeat"
    if not isinstance(param, LoadDataRepeatParam):
        raise core.error(op, f"set_load_data_repeat takes asc.LoadDataRepeatParam, not {type(param).__name__}")
    page = "SetLoadDataRepeat.md 表2"
    check_fields(core, op, param, {"repeat_time": (0, 255, page), "repeat_stride": (0, 65535, page),
                                   "repeat_mode": (0, 1, page)})
    registers(core).repeat = (param.repeat_time, param.repeat_stride, param.repeat_mode)
    core.record(op, Pipe.S)


def set_load_data_boundary(boundary: int) -> None:
    """``SetLoadDataBoundary(boundaryValue)`` (AD-API SetLoadDataBoundary.md; PY set_load_data_boundary): img2col
    reads of L1 at or past byte ``boundary`` wrap to L1's start; 0 is no boundary. PIPE_S.

    Raises:
        KernelError: not an integer in [0, 2^32 - 1], or in [1, 1023] ("边界值大小最小值要求是1024，如果设置1~1023
            值是未定义行为", 约束说明).
    """
    core, op = current("set_load_data_boundary"), "set_load_data_boundary"
    if not _is_int(boundary) or not 0 <= boundary < 2 ** 32:
        raise core.error(op, f"boundary={boundary!r} is not a uint32 byte count (SetLoadDataBoundary.md 表1)")
    if 0 < boundary < 1024:
        raise core.error(op, f"boundary={boundary} B: the boundary must be 0 (none) or at least 1024 B; 1 to 1023 "
                             "is undefined behaviour (SetLoadDataBoundary.md, 约束说明)")
    registers(core).boundary = int(boundary)
    core.record(op, Pipe.S)


@dataclass(frozen=True)
class _Load:
    """One img2col load with every field resolved (the struct's, or the registers' where the load takes them)."""

    l1_h: int
    l1_w: int
    pads: tuple
    channel_size: int
    k_extension: int
    m_extension: int
    k_start_pt: int
    m_start_pt: int
    stride_w: int
    stride_h: int
    filter_w: int
    filter_h: int
    dilation_w: int
    dilation_h: int
    en_transpose: bool
    f_matrix_ctrl: bool
    en_small_k: bool


def load_data_3dv2(dst, src, params, is_set_fmatrix: bool = True, is_set_padding: bool = True) -> None:
    """``load_data(dst, src, LoadData3DParamsV2 | LoadData3DParamsV2Pro)``: img2col from L1 into L0A / L0B (module
    docstring), on PIPE_MTE1. ``is_set_fmatrix`` / ``is_set_padding`` are the C++ template's IsResetLoad3dConfig
    (default {true, true}, as pyasc compiles it): True takes l1_h, l1_w, pad_list / pad_value from the struct and
    writes them to the registers; False reads the registers (set_fmatrix, set_load_data_padding_value). A
    LoadData3DParamsV2Pro load always reads them.

    Raises:
        KernelError: dst not in L0A / L0B or src not in L1; dtypes that differ or that the page does not list for
            the destination (b8 into L0B, a transposed b8 into L0A); a field outside its range; k_start_pt not a
            multiple of C0; a channel_size the page does not list; an m_extension (b8 / b16) or k_extension not a
            multiple of 16 / C0 that stops before the matrix's last fractal; columns past the matrix; a filter
            larger than the padded map; registers never set; f_matrix_ctrl or en_small_k set; reads outside src or
            writes outside dst; the unsimulated cases of the module docstring (kind "unsupported").
    """
    core, op = current("load_data"), "load_data"
    expect_space(core, op, "dst", dst, ("L0A", "L0B"), "L0A / L0B (TPosition.A2 / B2)")
    expect_space(core, op, "src", src, ("L1",), "L1 (TPosition.A1 / B1)")
    to_b = dst.space.name == "L0B"
    allowed = _DTYPES_B if to_b else _DTYPES_A
    if dst.dtype is not src.dtype or dst.dtype.name not in allowed:
        raise core.error(op, f"img2col into {dst.space.name} copies one dtype of {', '.join(sorted(allowed))}; got "
                             f"dst {dst.dtype.name}, src {src.dtype.name} (LoadData_3D.md, 数据类型, 约束说明)")
    state = registers(core)
    load, pad_value = _resolve(core, op, params, state, is_set_fmatrix, is_set_padding)
    size = dst.dtype.sizeof()
    if load.en_transpose and not to_b and size == 1:
        raise core.error(op, "en_transpose=True with a b8 dtype: A2/A3 transpose b16 / b32 only (LoadData_3D.md, "
                             "约束说明); load b8 without the transpose")
    if _nop(load, state):
        core.record(op, Pipe.MTE1, dtype=dst.dtype.name)  # any of the sizes 0, or repeat_time 0: a NOP (约束说明)
        return
    geometry = _check(core, op, load, state, size)
    s_valid, mask, d_off = img2col_offsets(*geometry, "zn" if to_b else "zz_t" if load.en_transpose else "zz")
    bounded(core, op, src, s_valid, "the feature map C1 x l1_h x l1_w x C0 (channel_size / C0 blocks)")
    bounded(core, op, dst, d_off, "m_extension x k_extension in 512 B fractals")
    _check_boundary(core, op, src, s_valid, state.boundary)
    if pad_value is None and not mask.all():  # a load with no position outside the map never reads it
        raise core.error(op, "img2col pads positions outside the feature map with the padding register, which this "
                             "kernel never set: call set_load_data_padding_value first (SetLoadDataPaddingValue.md)")
    source, target = Elements(src, s_valid), Elements(dst, d_off)
    fill = to_scalar(0 if pad_value is None else pad_value, dst.dtype)

    def effect():
        values = source.read()  # (..., valid positions): a lockstep group's cores lead
        block = np.full(values.shape[:-1] + mask.shape, fill, dtype=dst.dtype.np)
        block[..., mask] = values
        target.write(block)

    core.record(op, Pipe.MTE1, reads=accesses(src, s_valid), writes=accesses(dst, d_off), count=d_off.size,
                nbytes=d_off.size * size, dtype=dst.dtype.name, effect=effect)


def _resolve(core, op: str, params, state: Img2colRegisters, set_fmatrix_: bool, set_padding: bool):
    """The load's fields and pad value, from the struct and the registers; writes the registers a V2 load sets."""
    if isinstance(params, LoadData3DParamsV2Pro):
        check_fields(core, op, params, _PRO_FIELDS)
        ext, flt = params.ext_config, params.filter_config
        k_ext, m_ext, k_start, m_start = (ext >> s & 0xFFFF for s in (0, 16, 32, 48))
        sw, sh, fw, fh, dw, dh = (flt >> s & 0xFF for s in (0, 8, 16, 24, 32, 40))
        if m_start > 32767:
            raise core.error(op, f"ext_config's m_start_pt={m_start} outside [0, 32767] ({_PRO}, {_PAGE})")
        if sw > 63 or sh > 63:
            raise core.error(op, f"filter_config's stride_w={sw}, stride_h={sh}: each in [0, 63] ({_PRO}, {_PAGE})")
        set_fmatrix_ = set_padding = False
        fields = dict(channel_size=params.channel_size, k_extension=k_ext, m_extension=m_ext, k_start_pt=k_start,
                      m_start_pt=m_start, stride_w=sw, stride_h=sh, filter_w=fw, filter_h=fh, dilation_w=dw,
                      dilation_h=dh)
    elif isinstance(params, LoadData3DParamsV2):
        check_fields(core, op, params, _FIELDS)
        fields = dict(channel_size=params.channel_size, k_extension=params.k_extension,
                      m_extension=params.m_extension, k_start_pt=params.k_start_pt, m_start_pt=params.m_start_pt,
                      stride_w=params.stride_w, stride_h=params.stride_h, filter_w=params.filter_w,
                      filter_h=params.filter_h, dilation_w=params.dilation_filter_w,
                      dilation_h=params.dilation_filter_h)
    else:
        raise core.error(op, f"img2col takes LoadData3DParamsV2 or LoadData3DParamsV2Pro, not {type(params).__name__}")
    for flag in ("filter_size_w", "filter_size_h"):  # +256 on the filter (表4)
        fields["filter_w" if flag.endswith("w") else "filter_h"] += 256 * bool(getattr(params, flag))
    if set_fmatrix_:
        state.fmatrix = (params.l1_h, params.l1_w, _pads(core, op, params.pad_list, _PAGE))
    if set_padding:
        state.pad_value = params.pad_value
    if state.fmatrix is None:
        raise core.error(op, "img2col reads the FMATRIX register (l1_h, l1_w, pad_list), which this kernel never set: "
                             "call set_fmatrix first, or load with LoadData3DParamsV2 and is_set_fmatrix (LoadData_3D.md, "
                             "Feature Map、Pad属性描述寄存器设置)")
    l1_h, l1_w, pads = state.fmatrix
    load = _Load(l1_h, l1_w, pads, en_transpose=bool(params.en_transpose), f_matrix_ctrl=bool(params.f_matrix_ctrl),
                 en_small_k=bool(params.en_small_k), **fields)
    return load, state.pad_value


def _nop(load: _Load, state: Img2colRegisters) -> bool:
    """Whether the load does nothing: l1H, l1W, channelSize, kExtension, mExtension or a filter side 0, or
    repeat_time 0 (LoadData_3D.md 约束说明; SetLoadDataRepeat.md 约束说明)."""
    return 0 in (load.l1_h, load.l1_w, load.channel_size, load.k_extension, load.m_extension, load.filter_w,
                 load.filter_h, state.repeat[0])


def _check(core, op: str, load: _Load, state: Img2colRegisters, size: int) -> tuple:
    """The documented rules a non-NOP load must keep; returns the geometry :func:`img2col_offsets` takes."""
    c0_ = c0(size)
    if load.f_matrix_ctrl:
        raise core.error(op, "f_matrix_ctrl=True (the right FMATRIX): A2/A3 support false only (LoadData_3D.md 表4)")
    if load.en_small_k:
        raise core.error(op, "en_small_k=True: small k is no longer supported (LoadData_3D.md 表4, 表5)")
    if state.repeat[0] > 1:
        raise core.error(op, f"set_load_data_repeat's repeat_time={state.repeat[0]}: img2col repeats (SetLoadDataRepeat.md) "
                             "are not simulated; issue one load per block", kind="unsupported")
    _check_channels(core, op, load.channel_size, size, c0_)
    if 0 in (load.stride_w, load.stride_h):
        raise core.error(op, f"stride_w={load.stride_w}, stride_h={load.stride_h}: the page's range admits 0 but not "
                             "what it does; fusekit simulates strides >= 1", kind="unsupported")
    if load.k_start_pt % c0_:
        raise core.error(op, f"k_start_pt={load.k_start_pt} is not a multiple of C0 = {c0_} for {size}-byte elements "
                             f"({_PAGE})")
    left, right, top, bottom = load.pads
    ho = (load.l1_h + top + bottom - ((load.filter_h - 1) * load.dilation_h + 1)) // load.stride_h + 1
    wo = (load.l1_w + left + right - ((load.filter_w - 1) * load.dilation_w + 1)) // load.stride_w + 1
    if ho <= 0 or wo <= 0:
        raise core.error(op, f"the dilated {load.filter_h} x {load.filter_w} filter does not fit the padded "
                             f"{load.l1_h} x {load.l1_w} map (Ho = {ho}, Wo = {wo}); img2col has no rows")
    k_total = load.channel_size * load.filter_h * load.filter_w
    if load.k_start_pt + load.k_extension > k_total:
        raise core.error(op, f"columns [{load.k_start_pt}, {load.k_start_pt + load.k_extension}) past the img2col "
                             f"matrix's {k_total} (channel_size x filter_h x filter_w)")
    if load.k_extension % c0_ and load.k_start_pt + load.k_extension < k_total:
        raise core.error(op, f"k_extension={load.k_extension} is not a multiple of C0 = {c0_} and stops before the "
                             f"matrix's last column {k_total - 1} ({_PAGE}: only a load covering the last fractal may "
                             "end mid-fractal)")
    m_total = ho * wo
    if size < 4 and load.m_extension % M0 and load.m_start_pt + load.m_extension < m_total:
        raise core.error(op, f"m_extension={load.m_extension} is not a multiple of 16 and stops before the img2col "
                             f"matrix's last row (Ho x Wo = {m_total}; {_PAGE}: only a load covering the last fractal "
                             "may end mid-fractal)")
    return (load.l1_h, load.l1_w, left, top, wo, c0_, load.filter_h, load.filter_w, load.stride_h, load.stride_w,
            load.dilation_h, load.dilation_w, load.m_start_pt, load.m_extension, load.k_start_pt, load.k_extension)


def _check_channels(core, op: str, channels: int, size: int, c0_: int) -> None:
    """channel_size takes one of the page's values; fusekit runs whole C0 blocks (约束说明, channelSize)."""
    rest = channels % c0_
    if rest == 0:
        return
    partial = _PARTIAL_CHANNELS[size]
    if rest in partial:
        raise core.error(op, f"channel_size={channels}: channels that do not fill the last C0 = {c0_} block (the "
                             "page's 4 / 8 / N*C0+4 ... forms) are not simulated; pad the channels to a multiple of "
                             f"{c0_}", kind="unsupported")
    forms = ", ".join(f"N*{c0_}+{r}" for r in partial)
    raise core.error(op, f"channel_size={channels} is not a value the page allows for {size}-byte elements: N*{c0_}, "
                         f"{forms} (and {', '.join(map(str, partial))} alone) (LoadData_3D.md, 约束说明)")


def _check_boundary(core, op: str, src, s_valid: np.ndarray, boundary: int) -> None:
    """With a boundary set, src starts inside it, and no read reaches it (the wrap is not simulated)."""
    if not boundary or not s_valid.size:
        return
    last = src.addr + (int(s_valid.max()) + 1) * src.dtype.sizeof()
    if src.addr >= boundary:
        raise core.error(op, f"src starts at L1 byte {src.addr}, past the boundary {boundary} B set by "
                             "set_load_data_boundary: the source must start inside it (SetLoadDataBoundary.md, 约束说明)",
                         tensor=src.name)
    if last > boundary:
        raise core.error(op, f"reads reach L1 byte {last - 1}, past the boundary {boundary} B, where the hardware "
                             "wraps to L1's start (SetLoadDataBoundary.md); the wrap is not simulated",
                         kind="unsupported", tensor=src.name)


@cached
def img2col_offsets(l1_h: int, l1_w: int, left: int, top: int, wo: int, c0_: int, filter_h: int, filter_w: int,
                    stride_h: int, stride_w: int, dilation_h: int, dilation_w: int, m_start: int, m_ext: int,
                    k_start: int, k_ext: int, layout: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source offsets of the map elements read, the (m_ext, k_ext) mask of the elements inside the map, the
    (m_ext, k_ext) destination offsets) of an img2col load (module docstring); ``layout`` "zz", "zz_t" (L0A
    transposed) or "zn" (L0B)."""
    m = m_start + np.arange(m_ext, dtype=np.int64)[:, None]
    k = k_start + np.arange(k_ext, dtype=np.int64)[None, :]
    ho, wo_ = np.divmod(m, wo)
    block, lane = np.divmod(k, c0_)
    c1, tap = np.divmod(block, filter_h * filter_w)
    kh, kw = np.divmod(tap, filter_w)
    h = ho * stride_h + kh * dilation_h - top
    w = wo_ * stride_w + kw * dilation_w - left
    mask = (h >= 0) & (h < l1_h) & (w >= 0) & (w < l1_w)
    s_off = ((c1 * l1_h + h) * l1_w + w) * c0_ + lane
    if layout == "zz":
        d_off = zz(m_ext, k_ext, c0_)
    elif layout == "zn":
        d_off = zn(m_ext, k_ext, c0_)
    else:  # Zz of the transpose: element (m, k) at row k, column m; m aligned to 16, C0 columns a fractal
        i = np.arange(m_ext, dtype=np.int64)[:, None]
        j = np.arange(k_ext, dtype=np.int64)[None, :]
        m1 = ceil_to(m_ext, M0) // c0_
        d_off = ((j // M0) * m1 + i // c0_) * (M0 * c0_) + (j % M0) * c0_ + i % c0_
    return s_off[mask], mask, np.ascontiguousarray(d_off)


def _pads(core, op: str, pad_list, page: str) -> tuple:
    """pad_list as four ints in [0, 255]."""
    pads = tuple(pad_list) if isinstance(pad_list, (list, tuple, np.ndarray)) else ()
    if len(pads) != 4 or not all(_is_int(p) and 0 <= p <= 255 for p in pads):
        raise core.error(op, f"pad_list={pad_list!r} must be four pads [left, right, top, bottom], each in [0, 255] "
                             f"({page})")
    return tuple(int(p) for p in pads)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
