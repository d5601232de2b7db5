"""pyasc twins of the C++ kernels in sources/: the same instructions, in the same order, written in pyasc's API."""

from fusekit import asc

BUFFER_NUM = 2


@asc.jit
def fused_add_scale(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress, total_length: int,
                    tile_length: int, scale: float):
    block_length = total_length // asc.get_block_num()
    start = block_length * asc.get_block_idx()
    x1_gm, x2_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x1_gm.set_global_buffer(x1 + start, block_length)
    x2_gm.set_global_buffer(x2 + start, block_length)
    y_gm.set_global_buffer(y + start, block_length)
    pipe = asc.TPipe()
    in_x1, in_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM), asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(in_x1, BUFFER_NUM, tile_length * 2)
    pipe.init_buffer(in_x2, BUFFER_NUM, tile_length * 2)
    pipe.init_buffer(out_y, BUFFER_NUM, tile_length * 2)
    for offset in range(0, block_length, tile_length):
        a = in_x1.alloc_tensor(asc.float16)
        b = in_x2.alloc_tensor(asc.float16)
        asc.data_copy(a, x1_gm[offset], tile_length)
        asc.data_copy(b, x2_gm[offset], tile_length)
        in_x1.enque(a)
        in_x2.enque(b)
        a = in_x1.deque(asc.float16)
        b = in_x2.deque(asc.float16)
        out = out_y.alloc_tensor(asc.float16)
        asc.add(out, a, b, tile_length)
        asc.muls(out, out, scale, tile_length)
        out_y.enque(out)
        in_x1.free_tensor(a)
        in_x2.free_tensor(b)
        out = out_y.deque(asc.float16)
        asc.data_copy(y_gm[offset], out, tile_length)
        out_y.free_tensor(out)
