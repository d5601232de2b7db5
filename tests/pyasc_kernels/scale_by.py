"""A kernel written for Huawei's pyasc (``import asc``), untouched by fusekit: y = x * s, tiles of TILE."""

import asc


@asc.jit
def scale_tile(offset: int, s: float, xg: asc.GlobalTensor, yg: asc.GlobalTensor, q_in: asc.TQue, q_out: asc.TQue,
               TILE: asc.ConstExpr[int]):
    t = q_in.alloc_tensor(xg.dtype)
    asc.data_copy(t, xg[offset:], TILE)
    q_in.enque(t)
    t = q_in.deque(xg.dtype)
    u = q_out.alloc_tensor(yg.dtype)
    asc.muls(u, t, s, TILE)
    q_out.enque(u)
    q_in.free_tensor(t)
    u = q_out.deque(yg.dtype)
    asc.data_copy(yg[offset:], u, TILE)
    q_out.free_tensor(u)


@asc.jit
def scale_by(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, s: float, TILE: asc.ConstExpr[int]):
    start = asc.get_block_idx() * n
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + start, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + start, n)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 2)
    q_out = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=q_in, num=2, len=TILE * x.dtype.sizeof())
    pipe.init_buffer(que=q_out, num=2, len=TILE * y.dtype.sizeof())
    for i in range(n // TILE):
        scale_tile(i * TILE, s, xg, yg, q_in, q_out, TILE)
