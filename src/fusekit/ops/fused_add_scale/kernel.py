"""FusedAddScale device kernel, ``y = (x1 + x2) * scale``, in pyasc syntax.

The same source runs on ``fusekit.asc`` and is meant for pyasc's tracer (``import asc``), so it
keeps to what pyasc 1.1.1 traces: no ``while``, a helper is always called with the same argument
types and ConstExpr values, dtypes reach helpers through tensors.

Each core takes its range from the host's TilingData (``fusekit.tiling``) and walks it tile by
tile: copy_in (GM -> UB on MTE2, through VECIN queues), compute (V), copy_out (UB -> GM on MTE3,
through a VECOUT queue). With BUFFER_NUM = 2 each queue has two buffers, so the copy-in of tile
i + 1 can run while tile i is computed (the queues' enque/deque/alloc/free synchronise the
pipes). Full tiles are 512 B multiples and use DataCopy; an unaligned tail, which only the last
core can have, uses DataCopyPad, and the vector instructions process exactly ``n`` elements.
"""

from fusekit import asc
from fusekit.ops.elementwise import core_share, load, store


@asc.jit
def copy_in(offset: int, n: int, x1_gm: asc.GlobalTensor, x2_gm: asc.GlobalTensor, q_x1: asc.TQue, q_x2: asc.TQue):
    x1_local = q_x1.alloc_tensor(x1_gm.dtype)
    x2_local = q_x2.alloc_tensor(x2_gm.dtype)
    load(x1_local, x1_gm[offset:], n)
    load(x2_local, x2_gm[offset:], n)
    q_x1.enque(x1_local)
    q_x2.enque(x2_local)


@asc.jit
def compute(n: int, scale: float, y_gm: asc.GlobalTensor, q_x1: asc.TQue, q_x2: asc.TQue, q_y: asc.TQue,
            work: asc.TBuf, TILE_LENGTH: asc.ConstExpr[int], CAST_FP32: asc.ConstExpr[bool]):
    x1_local = q_x1.deque(y_gm.dtype)
    x2_local = q_x2.deque(y_gm.dtype)
    y_local = q_y.alloc_tensor(y_gm.dtype)
    if CAST_FP32:
        # precision "fp32": widen to float32 in UB, compute there, round once on the way back
        a = work.get(asc.float32)
        b = a[TILE_LENGTH:]
        asc.cast(a, x1_local, asc.RoundMode.CAST_NONE, n)
        asc.cast(b, x2_local, asc.RoundMode.CAST_NONE, n)
        asc.add(a, a, b, n)
        asc.muls(a, a, scale, n)
        # Cast.md: float32 -> half rounds to nearest with CAST_NONE on every SoC (310P takes no
        # CAST_RINT there); float32 -> bfloat16 takes CAST_RINT and refuses CAST_NONE
        if y_gm.dtype == asc.float16:
            asc.cast(y_local, a, asc.RoundMode.CAST_NONE, n)
        else:
            asc.cast(y_local, a, asc.RoundMode.CAST_RINT, n)
    else:
        asc.add(y_local, x1_local, x2_local, n)
        asc.muls(y_local, y_local, scale, n)
    q_y.enque(y_local)
    q_x1.free_tensor(x1_local)
    q_x2.free_tensor(x2_local)


@asc.jit
def copy_out(offset: int, n: int, y_gm: asc.GlobalTensor, q_y: asc.TQue):
    y_local = q_y.deque(y_gm.dtype)
    store(y_gm[offset:], y_local, n)
    q_y.free_tensor(y_local)


@asc.jit
def process_tile(offset: int, n: int, scale: float, x1_gm: asc.GlobalTensor, x2_gm: asc.GlobalTensor,
                 y_gm: asc.GlobalTensor, q_x1: asc.TQue, q_x2: asc.TQue, q_y: asc.TQue, work: asc.TBuf,
                 TILE_LENGTH: asc.ConstExpr[int], CAST_FP32: asc.ConstExpr[bool]):
    copy_in(offset, n, x1_gm, x2_gm, q_x1, q_x2)
    compute(n, scale, y_gm, q_x1, q_x2, q_y, work, TILE_LENGTH, CAST_FP32)
    copy_out(offset, n, y_gm, q_y)


@asc.jit
def fused_add_scale(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress,
                    block_length: int, tile_num: int, tail_length: int,
                    last_block_length: int, last_tile_num: int, last_tail_length: int, scale: float,
                    TILE_LENGTH: asc.ConstExpr[int], BUFFER_NUM: asc.ConstExpr[int], CAST_FP32: asc.ConstExpr[bool]):
    """One core's share of y = (x1 + x2) * scale; the scalar arguments are the TilingData fields."""
    start, core_length, full_tiles, tail = core_share(block_length, tile_num, tail_length, last_block_length,
                                                     last_tile_num, last_tail_length)

    x1_gm = asc.GlobalTensor()
    x2_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x1_gm.set_global_buffer(x1 + start, core_length)
    x2_gm.set_global_buffer(x2 + start, core_length)
    y_gm.set_global_buffer(y + start, core_length)

    pipe = asc.TPipe()
    q_x1 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=q_x1, num=BUFFER_NUM, len=TILE_LENGTH * x1.dtype.sizeof())
    pipe.init_buffer(que=q_x2, num=BUFFER_NUM, len=TILE_LENGTH * x2.dtype.sizeof())
    pipe.init_buffer(que=q_y, num=BUFFER_NUM, len=TILE_LENGTH * y.dtype.sizeof())
    work = asc.TBuf(asc.TPosition.VECCALC)
    if CAST_FP32:
        pipe.init_buffer(buf=work, num=2 * TILE_LENGTH * asc.float32.sizeof())

    for i in range(full_tiles):
        process_tile(i * TILE_LENGTH, TILE_LENGTH, scale, x1_gm, x2_gm, y_gm, q_x1, q_x2, q_y, work,
                     TILE_LENGTH, CAST_FP32)
    if tail > 0:
        process_tile(full_tiles * TILE_LENGTH, tail, scale, x1_gm, x2_gm, y_gm, q_x1, q_x2, q_y, work,
                     TILE_LENGTH, CAST_FP32)
