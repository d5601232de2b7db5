"""Kernels written for Huawei's pyasc the way its newer users write them (``import asc``), untouched by fusekit.

Equivalents, written for these tests, of the gelu / rmsnorm samples of compiler-team-ru/pyasc's ``examples/``
(``06_gelu``, ``08_rmsnorm`` at 739ef7e / bddff08; those files are under the CANN Open Software License, so
they are not copied here): host code that sizes the launch with ``rt.device_info`` and the enums of
``asc.lib.runtime.support``; ``pipe.init_buffer(buf=..., len=...)`` (pyasc after 1.1.1: ``fwk/tpipe.py``
registers ``buf=TBuf, len=RuntimeInt``); an RmsNorm tiling built by hand with ``main_bs_length_align``
rounded up to 16 rows (the sample's RMSNORM_ROW_ALIGN), not the host's 8.
"""

import math

import asc
import asc.lib.runtime as rt
import asc.runtime.config as config
from asc.lib.runtime.support import DeviceInfoType, DeviceModuleType

CUBIC = 0.044715
SCALE = math.sqrt(2.0 / math.pi)
ROW_ALIGN = 16


def vector_cores() -> int:
    """The AIV cores of the device, as the samples ask for them."""
    return int(rt.device_info(DeviceModuleType.RT_MODULE_TYPE_VECTOR_CORE, DeviceInfoType.INFO_TYPE_CORE_NUM))


@asc.jit
def gelu_tile(i: int, xg: asc.GlobalTensor, yg: asc.GlobalTensor, q_in: asc.TQue, q_out: asc.TQue,
              tmp_buf: asc.TBuf, th_buf: asc.TBuf, TILE: asc.ConstExpr[int], IN_PLACE: asc.ConstExpr[bool]):
    x = q_in.alloc_tensor(xg.dtype)
    asc.data_copy(x, xg[i * TILE:], count=TILE)
    q_in.enque(x)
    x = q_in.deque(xg.dtype)
    y = q_out.alloc_tensor(yg.dtype)
    tmp = tmp_buf.get(xg.dtype)
    asc.mul(tmp, x, x, count=TILE)
    asc.mul(tmp, tmp, x, count=TILE)
    asc.muls(tmp, tmp, CUBIC, count=TILE)
    asc.add(tmp, tmp, x, count=TILE)
    asc.muls(tmp, tmp, SCALE, count=TILE)
    if IN_PLACE:
        asc.adv.tanh(tmp, tmp, count=TILE)  # the sample's call: Tanh.md forbids dst overlapping src
        th = tmp
    else:
        th = th_buf.get(xg.dtype)
        asc.adv.tanh(th, tmp, count=TILE)
    asc.adds(th, th, 1.0, count=TILE)
    asc.muls(th, th, 0.5, count=TILE)
    asc.mul(y, x, th, count=TILE)
    q_out.enque(y)
    q_in.free_tensor(x)
    y = q_out.deque(yg.dtype)
    asc.data_copy(yg[i * TILE:], y, count=TILE)
    q_out.free_tensor(y)


@asc.jit(kernel_type=config.KernelType.AIV_ONLY)
def gelu(x: asc.GlobalAddress, y: asc.GlobalAddress, block: asc.ConstExpr[int], TILE: asc.ConstExpr[int],
         IN_PLACE: asc.ConstExpr[bool]):
    start = asc.get_block_idx() * block
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + start)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + start)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    tmp_buf = asc.TBuf(asc.TPosition.VECCALC)
    th_buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(que=q_in, num=2, len=TILE * x.dtype.sizeof())
    pipe.init_buffer(que=q_out, num=2, len=TILE * y.dtype.sizeof())
    pipe.init_buffer(buf=tmp_buf, len=TILE * x.dtype.sizeof())
    pipe.init_buffer(buf=th_buf, len=TILE * x.dtype.sizeof())
    for i in asc.range(block // TILE):
        gelu_tile(i, xg, yg, q_in, q_out, tmp_buf, th_buf, TILE, IN_PLACE)


@asc.jit
def row_tiling(rows: asc.ConstExpr[int], h: asc.ConstExpr[int]):
    """RmsNormTiling by hand, as the sample builds it (one chunk of all rows, no tail)."""
    return asc.adv.RmsNormTiling(
        b_length=1, s_length=rows, h_length=h, original_h_length=h, reciprocal_of_h_length=1.0 / float(h),
        main_bsh_length=rows * h, main_bs_length=rows,
        main_bs_length_align=(rows + ROW_ALIGN - 1) // ROW_ALIGN * ROW_ALIGN, loop_round=1,
        input_tail_pos=rows * h, tail_bsh_length=0, tail_bs_length=0)


@asc.jit(kernel_type=config.KernelType.AIV_ONLY)
def rmsnorm(x: asc.GlobalAddress, gamma: asc.GlobalAddress, y: asc.GlobalAddress, rows: asc.ConstExpr[int],
            h: asc.ConstExpr[int], eps: asc.ConstExpr[float]):
    start = asc.get_block_idx() * rows * h
    xg, gg, yg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x + start)
    gg.set_global_buffer(gamma)
    yg.set_global_buffer(y + start)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    g_buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(que=q_in, num=1, len=rows * h * x.dtype.sizeof())
    pipe.init_buffer(que=q_out, num=1, len=rows * h * x.dtype.sizeof())
    pipe.init_buffer(buf=g_buf, len=h * x.dtype.sizeof())
    g = g_buf.get(gg.dtype, len=h)
    asc.data_copy(g, gg, count=h)
    asc.set_flag(asc.HardEvent.MTE2_V)
    asc.wait_flag(asc.HardEvent.MTE2_V)
    t = q_in.alloc_tensor(xg.dtype)
    asc.data_copy(t, xg, count=rows * h)
    q_in.enque(t)
    t = q_in.deque(xg.dtype)
    u = q_out.alloc_tensor(yg.dtype)
    asc.adv.rmsnorm(u, t, g, eps, row_tiling(rows, h))
    q_in.free_tensor(t)
    q_out.enque(u)
    u = q_out.deque(yg.dtype)
    asc.data_copy(yg, u, count=rows * h)
    q_out.free_tensor(u)
