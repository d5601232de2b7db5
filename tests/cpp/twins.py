"""pyasc twins of the C++ kernels in sources/: the same instructions, in the same order, written in pyasc's API, and
:func:`instructions`, what a twin's Trace must share with its C++ kernel's. The cube twin of sources/cube_matmul.cpp
is tests/cube/cube_kernels.py's matmul."""

from fusekit import asc
from fusekit.pyasc.shim import config

BUFFER_NUM = 2


def instructions(trace):
    """Every field of every record but the call site and the tensors' names (C++ has no variable names)."""
    def access(a):
        return a.mem, a.buffer, a.start, a.stop, a.atomic, a.l2

    return [[(i.op, i.pipe, tuple(map(access, i.reads)), tuple(map(access, i.writes)), tuple(map(access, i.undefined)),
              i.sync, i.count, i.nbytes, i.dtype, i.repeats, i.cost) for i in core] for core in trace.cores]


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


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def mix_ids(y: asc.GlobalAddress):
    if asc.ascend_is_aiv():
        idx = asc.get_block_idx()
        y_gm = asc.GlobalTensor()
        y_gm.set_global_buffer(y + idx * 8, 8)
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 8)
        asc.duplicate(t, float(idx), 8)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(y_gm, t, 8)


TILE = 32


@asc.jit(kernel_type=config.KernelType.MIX_AIC_1_2)
def matmul_leaky_relu(a: asc.GlobalAddress, bt: asc.GlobalAddress, work: asc.GlobalAddress, y: asc.GlobalAddress):
    if asc.ascend_is_aic():
        block = asc.get_block_idx()
        ag, bg, wg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        ag.set_global_buffer(a + block * TILE * TILE)
        bg.set_global_buffer(bt)
        wg.set_global_buffer(work + block * TILE * TILE)
        a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, TILE * TILE)
        b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 4096, TILE * TILE)
        a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, TILE * TILE)
        b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, TILE * TILE)
        c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, TILE * TILE)
        asc.data_copy(a1, ag, asc.Nd2NzParams(1, TILE, TILE, 0, TILE, TILE, 1, 0))
        asc.data_copy(b1, bg, asc.Nd2NzParams(1, TILE, TILE, 0, TILE, TILE, 1, 0))
        asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
        for m1 in range(TILE // 16):
            asc.load_data(a2[m1 * TILE * 16:], a1[m1 * 256:],
                          asc.LoadData2DParams(0, TILE // 16, TILE // 16, 0, 0, False, 0))
        asc.load_data(b2, b1, asc.LoadData2DParams(0, TILE * TILE // 256, 1, 0, 0, False, 0))
        asc.set_flag(asc.HardEvent.MTE1_M, 0)
        asc.wait_flag(asc.HardEvent.MTE1_M, 0)
        asc.mmad(c, a2, b2, asc.MmadParams(TILE, TILE, TILE, 0, False, True))
        asc.set_flag(asc.HardEvent.M_FIX, 0)
        asc.wait_flag(asc.HardEvent.M_FIX, 0)
        asc.fixpipe(wg, c, asc.FixpipeParamsV220(TILE, TILE, TILE, TILE, asc.QuantModes.NoQuant))
        asc.cross_core_set_flag(0, 2, asc.PipeID.PIPE_FIX)
    if asc.ascend_is_aiv():
        core = asc.get_block_idx()
        rows = TILE // 2
        start = (core // 2) * TILE * TILE + (core % 2) * rows * TILE
        wg, yg = asc.GlobalTensor(), asc.GlobalTensor()
        wg.set_global_buffer(work + start)
        yg.set_global_buffer(y + start)
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, rows * TILE)
        asc.cross_core_wait_flag(0, 2, asc.PipeID.PIPE_MTE2)
        asc.data_copy(t, wg, rows * TILE)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.leaky_relu(t, t, 0.1, rows * TILE)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(yg, t, rows * TILE)
