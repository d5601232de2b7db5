"""BilinearInterpolation (pyasc basic/vec_binary.py ``bilinear_interpolation``; AD-API Memory矢量计算/基础算术/
BilinearInterpolation(ISASI).md). A vector-core instruction (the coverage table used to list it under the cube
unit by mistake).

The page calls it a software emulation on Atlas A2/A3 ("为了兼容旧款产品接口而添加的软仿接口") and gives its
steps; fusekit runs exactly those basic instructions, with the parameters of asc-devkit's
dav_c220 ``BilinearInterpolationCalc``, so the Trace, the sanitizer and the timing model see each of them:
1. Gatherb: for iteration ``k = v * h_repeat + h`` (``h_repeat * v_repeat`` in all), the 8 DataBlocks of
   ``src0`` at byte offsets ``src0_offset[8k .. 8k+7]`` -> ``shared_tmp_buffer`` (256 B per iteration);
2. Brcb: ``src1`` broadcast, each element to one DataBlock, after the gathered blocks;
3. Mul (Counter mode, all ``128 * iterations`` lanes): iteration ``k`` times ``src1[k]`` (``repeat_mode``
   False: one value for the 8 blocks) or ``src1[8k + j]`` for block ``j`` (True), rounded to half;
4. Add (with ``mask``): per vertical iteration, the h_repeat products summed in order into the first;
5. Adds 0 (with ``mask``): vertical iteration ``v`` to ``dst + v * v_r_offset``, blocks ``dst_blk_stride``
   apart. Masked-off lanes of dst keep their values; the mask register ends holding ``mask`` in Normal mode.
Temporary buffer (sharedTmpBuffer空间说明, A2/A3): at least ``(src0.GetSize() + src1.GetSize()) * 32`` bytes.
dtype half only. Atlas inference AI Core runs a native ``vbi`` instead: not simulated yet.
"""

from __future__ import annotations

from .. import dtypes
from ..runtime import current
from ..sync import PipeID, pipe_barrier
from ..tensor import LocalTensor
from .iteration import BinaryRepeatParams, UnaryRepeatParams
from .mask import MaskMode, reset_mask, set_mask_count, set_mask_norm, set_vector_mask
from .spec import NO_FIGURE, Spec, export, register
from .vec_binary import add, mul
from .vec_binary_scalar import adds
from .vec_brcb import BrcbRepeatParams, brcb
from .vec_gather import GatherRepeatParams, gatherb

_PAGE = "AD-API Memory矢量计算/基础算术/BilinearInterpolation(ISASI).md"
SPEC = register(Spec("bilinear_interpolation", "BilinearInterpolation", "vec_bilinear", {"2201": frozenset({"float16"})},
                     cost=NO_FIGURE, source=_PAGE,
                     doc="gathered src0 blocks times src1, summed over h_repeat, per vertical iteration"))
_LANES = 128  # half lanes of one repeat


def _int(core, op: str, name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise core.error(op, f"{name} must be an integer in [{lo}, {hi}] ({_PAGE} 参数说明), got {value!r}")
    return int(value)


@export
def bilinear_interpolation(dst, src0, src0_offset, src1, mask, h_repeat, repeat_mode, dst_blk_stride, v_r_offset,
                           v_repeat, shared_tmp_buffer) -> None:
    """BilinearInterpolation on PIPE_V, as the sequence of basic instructions in the module docstring.

    Args: ``dst``, ``src0``, ``src1`` half LocalTensors; ``src0_offset`` uint32 byte offsets (multiples of
    32) into src0, 8 per iteration; ``mask`` an int or [high, low]-style list as the vector instructions
    take it; ``h_repeat`` / ``v_repeat`` in [1, 255]; ``dst_blk_stride`` in 32 B blocks; ``v_r_offset`` in
    elements, [128, 65535) and a multiple of 16; ``shared_tmp_buffer`` uint8.

    Raises:
        KernelError: SoC / dtype, a parameter out of range, a temporary buffer smaller than the page's
            minimum (kind out-of-bounds when the instruction would also write past it), and whatever
            the basic instructions raise (offsets past src0, dst out of bounds, overlaps).
    """
    op = "bilinear_interpolation"
    core = current(op)
    if core.soc.arch != "2201":
        raise core.error(op, f"on {core.soc.name} BilinearInterpolation is the native vbi instruction, which fusekit "
                             "does not simulate yet (it simulates the Atlas A2/A3 emulation)", kind="unsupported")
    for name, t in (("dst", dst), ("src0", src0), ("src0_offset", src0_offset), ("src1", src1),
                    ("shared_tmp_buffer", shared_tmp_buffer)):
        if not isinstance(t, LocalTensor):
            raise core.error(op, f"{name} must be a LocalTensor, got {type(t).__name__}")
    for name, t, want in (("dst", dst, "float16"), ("src0", src0, "float16"), ("src1", src1, "float16"),
                          ("src0_offset", src0_offset, "uint32"), ("shared_tmp_buffer", shared_tmp_buffer, "uint8")):
        if t.dtype.name != want:
            raise core.error(op, f"{name} {t.name} must be {want}, got {t.dtype.name} ({_PAGE} 数据类型: half)",
                             tensor=t.name, kind="unsupported")
    h = _int(core, op, "h_repeat", h_repeat, 1, 255)
    v = _int(core, op, "v_repeat", v_repeat, 1, 255)
    offset = _int(core, op, "v_r_offset", v_r_offset, 128, 65534)
    if offset % 16:
        raise core.error(op, f"v_r_offset * sizeof(half) must be a multiple of 32 B, got v_r_offset={offset} ({_PAGE} "
                             "参数说明)", kind="misaligned")
    # the emulation's UnaryRepeatParams keeps both repeat strides in uint8 (dav_c220 impl)
    if h * 8 > 255 or offset // 16 > 255:
        raise core.error(op, f"h_repeat={h} / v_r_offset={offset}: the A2/A3 emulation stores h_repeat * 8 and "
                             "v_r_offset / 16 in 8-bit repeat strides (dav_c220 BilinearInterpolationCalc), so they "
                             "must be at most 255; split the call", kind="unsupported")
    inner = h * v
    brcb_repeats = src1.length // 8
    need = (src0.length + src1.length) * 32
    uses = inner * 256 + brcb_repeats * 256
    have = shared_tmp_buffer.length
    if have < need:
        past = f"; the instruction writes {uses} B of it, past its end" if uses > have else ""
        raise core.error(op, f"shared_tmp_buffer {shared_tmp_buffer.name} has {have} B; the page asks at least "
                             f"(src0.GetSize() + src1.GetSize()) * 32 = ({src0.length} + {src1.length}) * 32 = {need} B "
                             f"({_PAGE} sharedTmpBuffer空间说明){past}", tensor=shared_tmp_buffer.name,
                         kind="out-of-bounds" if uses > have else "api")
    tmp = shared_tmp_buffer.reinterpret_cast(dtypes.float16)
    pos = inner * _LANES
    gatherb(tmp.reinterpret_cast(dtypes.uint16), src0.reinterpret_cast(dtypes.uint16), src0_offset, inner,
            GatherRepeatParams())
    brcb(tmp[pos], src1, brcb_repeats, BrcbRepeatParams())
    pipe_barrier(PipeID.PIPE_V)
    mul_params = BinaryRepeatParams() if repeat_mode else BinaryRepeatParams(1, 0, 1, 8, 1, 8)
    set_mask_count()
    set_vector_mask(inner * _LANES, dtype=dtypes.float16, mode=MaskMode.COUNTER)
    mul(tmp, tmp[pos], tmp, mask, inner, mul_params, is_set_mask=False)
    set_mask_norm()
    reset_mask()
    pipe_barrier(PipeID.PIPE_V)
    if h > 1:
        for i in range(v):
            add(tmp[i * h * _LANES], tmp[(i * h + 1) * _LANES], tmp[i * h * _LANES], mask, h - 1,
                BinaryRepeatParams(1, 1, 1, 0, 8, 0))
    pipe_barrier(PipeID.PIPE_V)
    adds(dst, tmp, 0.0, mask, v, UnaryRepeatParams(dst_blk_stride, 1, offset // 16, h * 8))

