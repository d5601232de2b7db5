"""The cube API's parameter structs and enums, with pyasc's names, parameter orders and defaults (PY
python/asc/language/core/types.py, enums.py), and the range check every field goes through.

Fields hold plain ints: they are unsigned C fields, and arithmetic on them is not the kernel's int32 scalar
arithmetic (``fusekit.asc.scalar``). A field's range is checked when an instruction reads the struct, where a
KernelError can name the call's line: :func:`check_fields`.
"""

from __future__ import annotations

import enum
import warnings

import numpy as np


def _plain(value):
    return int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value


class _Struct:
    """A parameter struct: ``__slots__`` are its fields in pyasc's order; positional and keyword arguments as pyasc."""

    __slots__: tuple[str, ...] = ()
    _defaults: tuple = ()

    def __init__(self, *args, **kwargs):
        names = self.__slots__
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} arguments ({', '.join(names)}), "
                            f"got {len(args)}")
        values = dict(zip(names, self._defaults))
        values.update(zip(names, args))
        unknown = set(kwargs) - set(names)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}; its fields are "
                            f"{', '.join(names)}")
        values.update(kwargs)
        for name in names:
            setattr(self, name, _plain(values[name]))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"


def check_fields(core, op: str, struct, ranges: dict) -> None:
    """Each field ``name`` of ``struct`` is an integer in ``ranges[name] = (lo, hi)`` (booleans: ``bool``).

    Raises:
        KernelError: a field outside its range or of the wrong type; the message names the struct, the field, the
            range and the page that gives it.
    """
    for name, (lo, hi, page) in ranges.items():
        value = getattr(struct, name)
        if hi is bool:
            if not isinstance(value, (bool, np.bool_)) and value not in (0, 1):
                raise core.error(op, f"{type(struct).__name__}.{name}={value!r} must be True or False ({page})")
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise core.error(op, f"{type(struct).__name__}.{name}={value!r} outside [{lo}, {hi}] ({page})")


class MmadParams(_Struct):
    """``MmadParams``: C (m x n) = A (m x k) x B (k x n), with pyasc's two constructors (PY core/types.py):
    ``MmadParams(m, n, k, unit_flag, cmatrix_source, cmatrix_init_val)`` (six values, or any of the last three by
    keyword) and ``MmadParams(m, n, k, is_bias, fm_offset, en_ssparse, en_winograd_a, en_winograd_b)`` (eight values,
    or ``is_bias`` / ``fm_offset`` ... by keyword).

    ``cmatrix_init_val`` (default True): L0C starts from 0; False: from what L0C holds (``cmatrix_source`` False) or
    from the bias table (True). ``is_bias`` (the older form): accumulate onto L0C; the A2 implementation starts
    from 0 only when ``cmatrix_init_val and not is_bias`` (AD impl dav_c220/kernel_operator_mm_impl.h; Mmad.md 表4).

    ``MmadParams(m, n, k)`` alone: pyasc emits a default-constructed MmadParams (m = n = k = 0, a NOP) for it
    (read in PY core/types.py; ``docs/cube.md``, "Mmad"). fusekit runs it with the given m, n, k, as the C++ API does,
    and warns.
    """

    __slots__ = ("m", "n", "k", "unit_flag", "cmatrix_source", "cmatrix_init_val", "is_bias", "fm_offset",
                 "en_ssparse", "en_winograd_a", "en_winograd_b")
    _OLD = ("is_bias", "fm_offset", "en_ssparse", "en_winograd_a", "en_winograd_b")
    _NEW = ("unit_flag", "cmatrix_source", "cmatrix_init_val")

    def __init__(self, m: int = 0, n: int = 0, k: int = 0, *args, **kwargs):
        old = len(args) == 5 or bool(set(kwargs) & set(self._OLD))
        names = self._OLD if old else self._NEW
        if len(args) not in (0, len(names)) or set(kwargs) - set(names):
            raise TypeError("MmadParams takes (m, n, k, unit_flag, cmatrix_source, cmatrix_init_val) or (m, n, k, "
                            "is_bias, fm_offset, en_ssparse, en_winograd_a, en_winograd_b)")
        if not args and not kwargs:
            warnings.warn("MmadParams(m, n, k) alone: pyasc compiles it to a default MmadParams (m = n = k = 0, a "
                          "NOP); pass cmatrix_init_val= (or the eight-value form) so the device runs what fusekit "
                          "simulates", stacklevel=2)
        super().__init__(m, n, k, 0, False, True, False, 0, False, False, False)
        for name, value in {**dict(zip(names, args)), **kwargs}.items():
            setattr(self, name, _plain(value))

    @property
    def starts_from_zero(self) -> bool:
        return bool(self.cmatrix_init_val) and not bool(self.is_bias)


class LoadData2DParams(_Struct):
    """``LoadData2DParams(start_index=0, repeat_times=1, src_stride=0, sid=0, dst_gap=0, if_transpose=False,
    addr_mode=0)``: ``repeat_times`` 512 B fractals, the r-th from source fractal ``start_index + r * src_stride``
    into destination fractal ``r * (1 + dst_gap)``; ``if_transpose`` transposes each (b16) fractal (AD-API
    LoadData_2D.md 表2)."""

    __slots__ = ("start_index", "repeat_times", "src_stride", "sid", "dst_gap", "if_transpose", "addr_mode")
    _defaults = (0, 1, 0, 0, 0, False, 0)


class LoadData2dTransposeParams(_Struct):
    """``LoadData2dTransposeParams(start_index=0, repeat_times=0, src_stride=0, dst_gap=0, dst_frac_gap=0,
    addr_mode=0)`` of ``load_data_with_transpose`` (AD-API LoadDataWithTranspose.md 表3): ``repeat_times`` square
    matrices, the r-th from square ``start_index + r * src_stride`` of the source (a square is one b16 fractal, two
    b32 fractals side by side, two b8 fractals one above the other), each transposed; its first fractal lands
    ``r * (1 + dst_gap)`` fractals into the destination, its second (b32, b8) ``1 + dst_frac_gap`` after that."""

    __slots__ = ("start_index", "repeat_times", "src_stride", "dst_gap", "dst_frac_gap", "addr_mode")
    _defaults = (0, 0, 0, 0, 0, 0)


class Nd2NzParams(_Struct):
    """``Nd2NzParams(nd_num, n_value, d_value, src_nd_matrix_stride, src_d_value, dst_nz_c0_stride, dst_nz_n_stride,
    dst_nz_matrix_stride)`` of the GM -> L1 ND2NZ copy (AD-API DataCopy（GMToL1随路转换-ND2NZ搬运）.md 表3): ``nd_num``
    ND matrices of ``n_value`` rows x ``d_value`` columns, ``src_d_value`` elements per source row,
    ``src_nd_matrix_stride`` elements between source matrices; in L1 the C0 column blocks are ``dst_nz_c0_stride``
    and the rows ``dst_nz_n_stride`` 32 B units apart, the matrices ``dst_nz_matrix_stride`` elements."""

    __slots__ = ("nd_num", "n_value", "d_value", "src_nd_matrix_stride", "src_d_value", "dst_nz_c0_stride",
                 "dst_nz_n_stride", "dst_nz_matrix_stride")
    _defaults = (1, 0, 0, 0, 1, 1, 1, 0)


class QuantModes(enum.IntEnum):
    """pyasc ``asc.QuantModes`` (QuantMode_t of Fixpipe: AD-API Fixpipe（L0C到GM数据搬运）.md 表4; 随路量化.md)."""

    NoQuant = 0
    F322F16 = 1       # float -> half, CAST_RINT
    F322BF16 = 2      # float -> bfloat16, CAST_RINT
    DEQF16 = 3        # int32 -> half, scalar scale
    VDEQF16 = 4       # int32 -> half, one scale per column
    QF322B8_PRE = 5   # float -> int8 / uint8, scalar scale
    VQF322B8_PRE = 6  # float -> int8 / uint8, one scale per column
    REQ8 = 7          # int32 -> int8 / uint8, scalar scale
    VREQ8 = 8         # int32 -> int8 / uint8, one scale per column


class CO2Layout(enum.IntEnum):
    """pyasc ``asc.CO2Layout``: the layout Fixpipe writes: NZ as in L0C, ROW_MAJOR (NZ2ND), COLUMN_MAJOR (NZ2DN,
    Ascend 950 only)."""

    NZ = 0
    ROW_MAJOR = 1
    COLUMN_MAJOR = 2


class CubeFormat(enum.IntEnum):
    """pyasc ``asc.CubeFormat``: how a matrix is laid out, ND (row-major) or NZ."""

    ND = 0
    NZ = 1


class FixpipeConfig:
    """pyasc ``FixpipeConfig(layout)``; ``FixpipeConfig.cfg_row_major()`` (the default, NZ2ND) and ``cfg_nz()``."""

    __slots__ = ("layout",)

    def __init__(self, layout: CO2Layout = CO2Layout.ROW_MAJOR):
        self.layout = CO2Layout(int(layout))

    @classmethod
    def cfg_row_major(cls) -> "FixpipeConfig":
        return cls(CO2Layout.ROW_MAJOR)

    @classmethod
    def cfg_nz(cls) -> "FixpipeConfig":
        return cls(CO2Layout.NZ)

    def __repr__(self) -> str:
        return f"FixpipeConfig({self.layout.name})"


class FixpipeParamsV220(_Struct):
    """``FixpipeParamsV220(n_size, m_size, src_stride, dst_stride, quant_pre=NoQuant, deq_scalar=0, nd_num=1,
    src_nd_stride=0, dst_nd_stride=0, relu_en=False, unit_flag=0, is_channel_split=False)`` (AD-API Fixpipe（L0C到GM
    数据搬运）.md 表4): an m_size x n_size region of L0C, its column blocks ``src_stride`` 16-element rows apart; in
    the destination each row ``dst_stride`` elements (ND) or the column blocks ``dst_stride`` 32 B units apart (NZ);
    ``nd_num`` such matrices, ``src_nd_stride`` x 1024 B and ``dst_nd_stride`` elements apart."""

    __slots__ = ("n_size", "m_size", "src_stride", "dst_stride", "quant_pre", "deq_scalar", "nd_num", "src_nd_stride",
                 "dst_nd_stride", "relu_en", "unit_flag", "is_channel_split")
    _defaults = (0, 0, 0, 0, QuantModes.NoQuant, 0, 1, 0, 0, False, 0, False)


class LoadData3DParamsV2(_Struct):
    """``LoadData3DParamsV2(pad_list=(0, 0, 0, 0), l1_h=1, l1_w=1, channel_size=1, k_extension=1, m_extension=1,
    k_start_pt=0, m_start_pt=0, stride_w=1, stride_h=1, filter_w=1, filter_h=1, dilation_filter_w=1,
    dilation_filter_h=1, en_transpose=False, pad_value=0, filter_size_w=False, filter_size_h=False,
    f_matrix_ctrl=False, en_small_k=False)`` of the img2col ``load_data`` (AD-API LoadData_3D.md 表4): pyasc's order
    and defaults (PY core/types.py; the C++ struct's defaults are 0 for l1H ... mExtension), then the C++ field
    ``enSmallK``, which pyasc's struct lacks. ``pad_list`` is [left, right, top, bottom]; ``pad_value`` a value of
    the tensors' dtype. The img2col matrix and what each field selects of it: ``fusekit.asc.cube.load3d``."""

    __slots__ = ("pad_list", "l1_h", "l1_w", "channel_size", "k_extension", "m_extension", "k_start_pt", "m_start_pt",
                 "stride_w", "stride_h", "filter_w", "filter_h", "dilation_filter_w", "dilation_filter_h",
                 "en_transpose", "pad_value", "filter_size_w", "filter_size_h", "f_matrix_ctrl", "en_small_k")
    _defaults = ((0, 0, 0, 0), 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, False, 0, False, False, False, False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # all 20 values come from the C++ struct (fusekit/cube.h), whose channelSize is 16 bits: no pyasc narrowing
        if len(args) < 20 and isinstance(self.channel_size, int) and self.channel_size > 255:
            warnings.warn(f"LoadData3DParamsV2(channel_size={self.channel_size}): pyasc builds the struct with "
                          "channel_size as uint8 (PY core/types.py), so the device gets it modulo 256; fusekit "
                          "runs the value given, as the C++ API (uint16_t channelSize) does", stacklevel=2)


class LoadData3DParamsV2Pro(_Struct):
    """``LoadData3DParamsV2Pro(channel_size=0, en_transpose=False, en_small_k=False, filter_size_w=False,
    filter_size_h=False, f_matrix_ctrl=False, ext_config=0, filter_config=0x10101010101)`` (AD-API LoadData_3D.md
    表5): LoadData3DParamsV2's fields packed into two words, ``ext_config = m_start_pt << 48 | k_start_pt << 32 |
    m_extension << 16 | k_extension`` and ``filter_config = dilation_filter_h << 40 | dilation_filter_w << 32 |
    filter_h << 24 | filter_w << 16 | stride_h << 8 | stride_w``; the feature map (l1H, l1W, padList) and the pad
    value come from the registers ``set_fmatrix`` / ``set_load_data_padding_value`` (or an earlier
    LoadData3DParamsV2 load) set."""

    __slots__ = ("channel_size", "en_transpose", "en_small_k", "filter_size_w", "filter_size_h", "f_matrix_ctrl",
                 "ext_config", "filter_config")
    _defaults = (0, False, False, False, False, False, 0, 0x10101010101)


class LoadDataRepeatParam(_Struct):
    """``LoadDataRepeatParam(repeat_time=1, repeat_stride=0, repeat_mode=0)`` of ``set_load_data_repeat`` (pyasc's
    order; the C++ struct's is repeatStride, repeatTime, repeatMode: AD-API SetLoadDataRepeat.md 表2)."""

    __slots__ = ("repeat_time", "repeat_stride", "repeat_mode")
    _defaults = (1, 0, 0)


class FmatrixMode(enum.IntEnum):
    """``FmatrixMode`` of ``SetFmatrix`` (AD-API SetFmatrix.md 表1): which FMATRIX register is written; A2/A3 have
    FMATRIX_LEFT only ("当前只支持FMATRIX_LEFT")."""

    FMATRIX_LEFT = 0
    FMATRIX_RIGHT = 1
