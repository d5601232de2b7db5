"""Tiling structs of ``asc.adv.softmax`` / ``asc.adv.rmsnorm`` and the host helpers that fill them.

Structs (pyasc 1.1.1 ``python/asc/language/adv/tiling.py``): :class:`SoftmaxTiling` (Ascend C
``SoftMaxTiling``) and :class:`RmsNormTiling`, with pyasc's snake_case field names and dtypes.

Host helpers: pyasc 1.1.1's ``asc.lib.host`` has none for softmax / rmsnorm (it binds matmul tiling only), so
fusekit provides Ascend C's host functions under their snake_case names, computing what asc-devkit
``impl/adv_api/tiling/activation/softmax_tiling.cpp`` and ``impl/adv_api/tiling/normalization/
rmsnorm_tiling_impl.cpp`` compute for Atlas A2/A3 and Atlas inference (the DAV_3510 branch is not modelled):

- :func:`get_softmax_max_tmp_size`, :func:`get_softmax_min_tmp_size` (GetSoftMaxMaxTmpSize / MinTmpSize);
- :func:`softmax_tiling_func` (SoftMaxTilingFunc);
- :func:`get_rms_norm_max_min_tmp_size` (GetRmsNormMaxMinTmpSize), :func:`get_rms_norm_tiling_info`
  (GetRmsNormTilingInfo).

Shapes are sequences of ints (Ascend C ``TensorShape``). Where the C++ host asserts or returns false these
raise ``ValueError`` naming the rule.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import float32, int32
from ..struct import Field, Struct


def _refused(message: str) -> Exception:
    """The error for a tiling call that breaks its page's rule: a ``ValueError`` on the host (as pyasc's
    host helpers), a KernelError with the kernel's file:line when the call is made inside a kernel."""
    from ..runtime import running_core
    core = running_core()
    if core is None:
        return ValueError(message)
    return core.error(message.split(":", 1)[0], message, kind="tiling")

BLOCK_BYTES = 32      # ONE_BLK_SIZE / SOFTMAX_DEFAULT_BLK_SIZE
FLOAT_BYTES = 4
REPEAT_FLOATS = 64    # SOFTMAX_BASICBLOCK_UNIT / FLOAT_REPEAT_SIZE: floats in one 256 B repeat
BASIC_TILE = 8        # BASIC_TILE_NUM: rows of a basic block
_SOFTMAX_SRC = "asc-devkit impl/adv_api/tiling/activation/softmax_tiling.cpp"
_RMS_SRC = "asc-devkit impl/adv_api/tiling/normalization/rmsnorm_tiling_impl.cpp"


class SoftmaxTiling(Struct):
    """``asc.adv.SoftmaxTiling`` (Ascend C ``SoftMaxTiling``, SoftMax-Tiling使用说明.md): 16 uint32 fields."""

    src_m = Field(dtype=int32, default=0, name="srcM")
    src_k = Field(dtype=int32, default=0, name="srcK")
    src_size = Field(dtype=int32, default=0, name="srcSize")
    out_max_m = Field(dtype=int32, default=0, name="outMaxM")
    out_max_k = Field(dtype=int32, default=0, name="outMaxK")
    out_max_size = Field(dtype=int32, default=0, name="outMaxSize")
    split_m = Field(dtype=int32, default=0, name="splitM")
    split_k = Field(dtype=int32, default=0, name="splitK")
    split_size = Field(dtype=int32, default=0, name="splitSize")
    reduce_m = Field(dtype=int32, default=0, name="reduceM")
    reduce_k = Field(dtype=int32, default=0, name="reduceK")
    reduce_size = Field(dtype=int32, default=0, name="reduceSize")
    range_m = Field(dtype=int32, default=0, name="rangeM")
    tail_m = Field(dtype=int32, default=0, name="tailM")
    tail_split_size = Field(dtype=int32, default=0, name="tailSplitSize")
    tail_reduce_size = Field(dtype=int32, default=0, name="tailReduceSize")


class RmsNormTiling(Struct):
    """``asc.adv.RmsNormTiling`` (Ascend C ``RmsNormTiling``, RmsNorm-Tiling.md)."""

    b_length = Field(dtype=int32, default=0, name="bLength")
    s_length = Field(dtype=int32, default=0, name="sLength")
    h_length = Field(dtype=int32, default=0, name="hLength")
    original_h_length = Field(dtype=int32, default=0, name="originalHLength")
    reciprocal_of_h_length = Field(dtype=float32, default=0.0, name="reciprocalOfHLength")
    main_bsh_length = Field(dtype=int32, default=0, name="mainBshLength")
    main_bs_length = Field(dtype=int32, default=0, name="mainBsLength")
    main_bs_length_align = Field(dtype=int32, default=0, name="mainBsLengthAlign")
    loop_round = Field(dtype=int32, default=0, name="loopRound")
    input_tail_pos = Field(dtype=int32, default=0, name="inputTailPos")
    tail_bsh_length = Field(dtype=int32, default=0, name="tailBshLength")
    tail_bs_length = Field(dtype=int32, default=0, name="tailBsLength")


def plain(tiling: Struct) -> dict[str, int | float]:
    """The struct's fields as plain Python numbers (a kernel reads them as typed scalars)."""
    def value(name, field):
        raw = object.__getattribute__(tiling, name)
        return float(raw) if field.dtype.name.startswith("float") else int(raw)

    return {name: value(name, field) for name, field in type(tiling).struct_fields.items()}


# ---------------------------------------------------------------- softmax

def _last_axis(shape, type_size: int, what: str) -> tuple[int, int]:
    dims = [int(d) for d in shape]
    if not dims or math.prod(dims) <= 0:
        raise _refused(f"{what}: input srcShape size must be greater than 0 (got {list(shape)}; {_SOFTMAX_SRC})")
    if type_size not in (2, 4):
        raise _refused(f"{what}: dataTypeSize is {type_size}; only half (2) or float (4) are supported "
                         f"({_SOFTMAX_SRC})")
    k = dims[-1]
    if k * type_size % BLOCK_BYTES:
        raise _refused(f"{what}: the last axis ({k} x {type_size} B) must be 32 B aligned "
                         f"(ShapeLastAxisAlignVerifyingParameters; SoftMax.md: srcK 必须32Byte对齐)")
    return math.prod(dims) // k, k


def get_softmax_max_tmp_size(src_shape, data_type_size: int, is_reuse_source: bool = False) -> int:
    """Bytes of temporary space SoftMax / SimpleSoftMax can use at most: srcM x (32 / size + srcK + 64) x 4.

    ``data_type_size``: bytes of the max / sum dtype (half 2, float 4), as GetSoftMaxMaxTmpSize takes it.

    Raises:
        ValueError: empty shape, a type size other than 2 / 4, a last axis not 32 B aligned.
    """
    m, k = _last_axis(src_shape, data_type_size, "get_softmax_max_tmp_size")
    return m * (BLOCK_BYTES // data_type_size + k + REPEAT_FLOATS) * FLOAT_BYTES


def get_softmax_min_tmp_size(src_shape, data_type_size: int, is_reuse_source: bool = False) -> int:
    """Bytes SoftMax / SimpleSoftMax need at least (one row): (32 / size + srcK + 64) x 4 (GetSoftMaxMinTmpSize).

    Raises:
        ValueError: as :func:`get_softmax_max_tmp_size`.
    """
    _, k = _last_axis(src_shape, data_type_size, "get_softmax_min_tmp_size")
    return (BLOCK_BYTES // data_type_size + k + REPEAT_FLOATS) * FLOAT_BYTES


def softmax_tiling_func(src_shape, data_type_size: int, local_work_space_size: int,
                        tiling: SoftmaxTiling | None = None) -> SoftmaxTiling:
    """SoftMaxTilingFunc: fill (and return) a :class:`SoftmaxTiling` for ``src_shape`` [.., srcK] given
    ``local_work_space_size`` bytes of temporary space (>= :func:`get_softmax_min_tmp_size`).

    Rows per pass: baseM = min(space / 4 / (32 / size + srcK + 64), srcM), floored to a multiple of 8 when
    8 < baseM < srcM, then (srcM % 8 == 0 and srcK % 64 == 0) shrunk to divide srcM and halved while
    baseM x srcK >= 16384 (AdjustToBasicBlockBaseM, "max repeat only support 255").

    Raises:
        ValueError: as :func:`get_softmax_max_tmp_size`, or space below the minimum (SoftMax-SimpleSoftMax-Tiling.md:
        localWorkSpaceSize的取值必须大于GetSoftMaxMinTmpSize).
    """
    m, k = _last_axis(src_shape, data_type_size, "softmax_tiling_func")
    need = get_softmax_min_tmp_size(src_shape, data_type_size)
    if local_work_space_size < need:
        raise _refused(f"softmax_tiling_func: local_work_space_size {local_work_space_size} B is below "
                         f"get_softmax_min_tmp_size = {need} B for srcK = {k}")
    blk = BLOCK_BYTES // data_type_size
    base_m = min(local_work_space_size // FLOAT_BYTES // (blk + k + REPEAT_FLOATS), m)
    if base_m < m and base_m > BASIC_TILE:
        base_m = base_m // BASIC_TILE * BASIC_TILE
    if base_m > BASIC_TILE and m % BASIC_TILE == 0 and k % REPEAT_FLOATS == 0:  # AdjustToBasicBlockBaseM
        base_m = base_m // BASIC_TILE * BASIC_TILE
        while m % base_m:
            base_m -= BASIC_TILE
        while base_m * k >= REPEAT_FLOATS * 256:
            base_m //= 2
    tail = m % base_m
    tiling = SoftmaxTiling() if tiling is None else tiling
    for name, value in dict(src_m=m, src_k=k, src_size=m * k, out_max_m=m, out_max_k=blk, out_max_size=m * blk,
                            split_m=base_m, split_k=k, split_size=base_m * k, reduce_m=base_m, reduce_k=blk,
                            reduce_size=base_m * blk, range_m=m // base_m, tail_m=tail, tail_split_size=tail * k,
                            tail_reduce_size=tail * blk).items():
        setattr(tiling, name, value)
    return tiling


# ---------------------------------------------------------------- rmsnorm

def _bsh(shape, what: str) -> tuple[int, int, int]:
    dims = [int(d) for d in shape]
    if len(dims) != 3:
        raise _refused(f"{what}: RmsNorm takes a [B, S, H] shape, got {list(shape)} ({_RMS_SRC})")
    return dims[0], dims[1], dims[2]


def _basic_block_ok(b: int, s: int, h: int) -> bool:
    return h % 64 == 0 and b * s % 8 == 0 and h < 2048  # RmsNormCheckBasicBlockShape, negated


def get_rms_norm_max_min_tmp_size(src_shape, type_size: int, is_basic_block: bool = False) -> tuple[int, int]:
    """(max, min) bytes of RmsNorm's temporary space (GetRmsNormMaxMinTmpSize).

    max = (B*S*H x (2 for half, 1 for float) + align8(B*S)) x 4; min = (H x (2 or 1) + 8) x 4.

    Raises:
        ValueError: not [B, S, H]; with ``is_basic_block``, H not a multiple of 64 below 2048 or B*S not a
        multiple of 8 (the C++ returns false).
    """
    b, s, h = _bsh(src_shape, "get_rms_norm_max_min_tmp_size")
    if is_basic_block and not _basic_block_ok(b, s, h):
        raise _refused(f"get_rms_norm_max_min_tmp_size: [B, S, H] = {[b, s, h]} is not a basic block (H a "
                         "multiple of 64 below 2048, B*S a multiple of 8; RmsNorm.md isBasicBlock)")
    coeff = 2 if type_size == 2 else 1
    align = BLOCK_BYTES // type_size
    bs_aligned = -(-(b * s) // align) * align
    return (b * s * h * coeff + bs_aligned) * FLOAT_BYTES, (h * coeff + BASIC_TILE) * FLOAT_BYTES


def get_rms_norm_tiling_info(src_shape, origin_src_shape, stack_buffer_byte_size: int, type_size: int,
                             tiling: RmsNormTiling | None = None, is_basic_block: bool = False) -> RmsNormTiling:
    """GetRmsNormTilingInfo: fill (and return) a :class:`RmsNormTiling`.

    ``src_shape`` [B, S, H] with H 32 B aligned; ``origin_src_shape`` [B, S, H0] with H0 <= H (the unpadded
    length, used for the mean); ``stack_buffer_byte_size``: the temporary space (>= the minimum).

    Raises:
        ValueError: where the C++ returns false: shapes not [B, S, H] or not matching, H0 = 0 or > H, H x
        type_size not 32 B aligned, a basic block shape refused, space below the minimum.
    """
    b, s, h = _bsh(src_shape, "get_rms_norm_tiling_info")
    ob, os_, oh = _bsh(origin_src_shape, "get_rms_norm_tiling_info")
    if (b, s) != (ob, os_) or h < oh or oh == 0:
        raise _refused(f"get_rms_norm_tiling_info: origin shape {[ob, os_, oh]} must have src_shape's B, S and "
                         f"0 < H0 <= H (src_shape {[b, s, h]})")
    if h * type_size % BLOCK_BYTES:
        raise _refused(f"get_rms_norm_tiling_info: H = {h} x {type_size} B is not 32 B aligned (RmsNorm.md: "
                         "尾轴H长度需要满足32字节对齐)")
    if is_basic_block and not _basic_block_ok(b, s, h):
        raise _refused(f"get_rms_norm_tiling_info: [B, S, H] = {[b, s, h]} is not a basic block")
    minimum = get_rms_norm_max_min_tmp_size(src_shape, type_size)[1]
    if stack_buffer_byte_size < minimum:
        raise _refused(f"get_rms_norm_tiling_info: stack_buffer_byte_size {stack_buffer_byte_size} B is below "
                         f"the minimum {minimum} B (get_rms_norm_max_min_tmp_size)")
    total = stack_buffer_byte_size // FLOAT_BYTES
    coeff = 1 if type_size == 4 else 2
    bs = 1
    while total >= (bs + 1) * h * coeff + -(-(bs + 1) // BASIC_TILE) * BASIC_TILE:
        bs += 1
    size = min(bs * h, b * s * h)
    bs = size // h
    if is_basic_block:
        bs = bs if bs < BASIC_TILE else bs // BASIC_TILE * BASIC_TILE
    elif bs > 255:
        bs = 255
    size = bs * h
    total_x = b * s * h
    tail = total_x % size
    tiling = RmsNormTiling() if tiling is None else tiling
    for name, value in dict(b_length=b, s_length=s, h_length=h, original_h_length=oh,
                            reciprocal_of_h_length=float(np.float32(1.0 / float(np.float32(oh)))), main_bsh_length=size,
                            main_bs_length=bs, main_bs_length_align=-(-bs // BASIC_TILE) * BASIC_TILE,
                            loop_round=total_x // size, input_tail_pos=total_x - tail, tail_bsh_length=tail,
                            tail_bs_length=tail // h).items():
        setattr(tiling, name, value)
    return tiling


__all__ = ["RmsNormTiling", "SoftmaxTiling", "get_rms_norm_max_min_tmp_size", "get_rms_norm_tiling_info",
           "get_softmax_max_tmp_size", "get_softmax_min_tmp_size", "softmax_tiling_func"]
