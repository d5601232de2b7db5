"""Add and Muls device kernels (pyasc syntax), the unfused pair FusedAddScale replaces.

Same structure as ``fusekit.ops.fused_add_scale.kernel``: per-core ranges from the host tiling,
a tile loop through VECIN/VECOUT queues with BUFFER_NUM buffers, DataCopyPad for an unaligned tail.
"""

from fusekit import asc
from fusekit.ops.elementwise import core_share, load, store


@asc.jit
def add_tile(offset: int, n: int, x1_gm: asc.GlobalTensor, x2_gm: asc.GlobalTensor, y_gm: asc.GlobalTensor,
             q_x1: asc.TQue, q_x2: asc.TQue, q_y: asc.TQue):
    x1_local = q_x1.alloc_tensor(x1_gm.dtype)
    x2_local = q_x2.alloc_tensor(x2_gm.dtype)
    load(x1_local, x1_gm[offset:], n)
    load(x2_local, x2_gm[offset:], n)
    q_x1.enque(x1_local)
    q_x2.enque(x2_local)
    x1_local = q_x1.deque(x1_gm.dtype)
    x2_local = q_x2.deque(x2_gm.dtype)
    y_local = q_y.alloc_tensor(y_gm.dtype)
    asc.add(y_local, x1_local, x2_local, n)
    q_y.enque(y_local)
    q_x1.free_tensor(x1_local)
    q_x2.free_tensor(x2_local)
    y_local = q_y.deque(y_gm.dtype)
    store(y_gm[offset:], y_local, n)
    q_y.free_tensor(y_local)


@asc.jit
def add(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress,
        block_length: int, tile_num: int, tail_length: int,
        last_block_length: int, last_tile_num: int, last_tail_length: int,
        TILE_LENGTH: asc.ConstExpr[int], BUFFER_NUM: asc.ConstExpr[int]):
    """y = x1 + x2 over this core's range; the scalar arguments are the TilingData fields."""
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
    for i in range(full_tiles):
        add_tile(i * TILE_LENGTH, TILE_LENGTH, x1_gm, x2_gm, y_gm, q_x1, q_x2, q_y)
    if tail > 0:
        add_tile(full_tiles * TILE_LENGTH, tail, x1_gm, x2_gm, y_gm, q_x1, q_x2, q_y)


@asc.jit
def muls_tile(offset: int, n: int, scale: float, x_gm: asc.GlobalTensor, y_gm: asc.GlobalTensor, q_x: asc.TQue,
              q_y: asc.TQue):
    x_local = q_x.alloc_tensor(x_gm.dtype)
    load(x_local, x_gm[offset:], n)
    q_x.enque(x_local)
    x_local = q_x.deque(x_gm.dtype)
    y_local = q_y.alloc_tensor(y_gm.dtype)
    asc.muls(y_local, x_local, scale, n)
    q_y.enque(y_local)
    q_x.free_tensor(x_local)
    y_local = q_y.deque(y_gm.dtype)
    store(y_gm[offset:], y_local, n)
    q_y.free_tensor(y_local)


@asc.jit
def muls(x: asc.GlobalAddress, y: asc.GlobalAddress,
         block_length: int, tile_num: int, tail_length: int,
         last_block_length: int, last_tile_num: int, last_tail_length: int, scale: float,
         TILE_LENGTH: asc.ConstExpr[int], BUFFER_NUM: asc.ConstExpr[int]):
    """y = x * scale over this core's range; the scalar arguments are the TilingData fields."""
    start, core_length, full_tiles, tail = core_share(block_length, tile_num, tail_length, last_block_length,
                                                     last_tile_num, last_tail_length)
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, core_length)
    y_gm.set_global_buffer(y + start, core_length)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=q_x, num=BUFFER_NUM, len=TILE_LENGTH * x.dtype.sizeof())
    pipe.init_buffer(que=q_y, num=BUFFER_NUM, len=TILE_LENGTH * y.dtype.sizeof())
    for i in range(full_tiles):
        muls_tile(i * TILE_LENGTH, TILE_LENGTH, scale, x_gm, y_gm, q_x, q_y)
    if tail > 0:
        muls_tile(full_tiles * TILE_LENGTH, tail, scale, x_gm, y_gm, q_x, q_y)
