"""Cube kernels the cube tests run, written as a pyasc user writes them (``@asc.jit(kernel_type=AIC_ONLY)``).

``conv2d``: a convolution lowered through img2col (see its section below).

``matmul``: C (M x N) = A (M x K) x B (K x N) (+ bias) on one AIC, B given transposed (N x K, row-major) so that
ND2NZ lands it in Zn fractals; K in steps of ``base_k``, each step a Mmad that starts C (from 0 or from the bias
row) on the first step and accumulates after; C out through Fixpipe with ``quant`` and ``deq``. A and B go
GM -> L1 (ND2NZ) -> L0A / L0B (load_data) in TQues, so every stage is synchronised by its queue's events.
"""

from __future__ import annotations

import numpy as np

from fusekit import asc
from fusekit.pyasc.shim import config

AIC = config.KernelType.AIC_ONLY


def ceil_to(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@asc.jit(kernel_type=AIC)
def matmul(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, bias: asc.GlobalAddress,
           m: asc.ConstExpr[int], n: asc.ConstExpr[int], k: asc.ConstExpr[int], base_k: asc.ConstExpr[int],
           quant: asc.ConstExpr[int], deq: asc.ConstExpr[int], with_bias: asc.ConstExpr[bool],
           relu: asc.ConstExpr[bool], barrier: asc.ConstExpr[bool], hf32: asc.ConstExpr[bool] = False):
    if hf32:
        asc.set_hf32_mode(True)
    a_gm, b_gm, c_gm, bias_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(bt)
    c_gm.set_global_buffer(c)
    bias_gm.set_global_buffer(bias)
    t = a_gm.dtype
    size = t.sizeof()
    c0 = 32 // size
    fe = 512 // size                      # elements of one fractal
    mp, np_, kp = ceil_to(m, 16), ceil_to(n, 16), ceil_to(k, c0)
    acc = asc.int32 if size == 1 else asc.float32
    pipe = asc.TPipe()
    qa1, qb1 = asc.TQue(asc.TPosition.A1, 1), asc.TQue(asc.TPosition.B1, 1)
    qa2, qb2 = asc.TQue(asc.TPosition.A2, 1), asc.TQue(asc.TPosition.B2, 1)
    qc = asc.TQue(asc.TPosition.CO1, 1)
    pipe.init_buffer(que=qa1, num=1, len=mp * kp * size)
    pipe.init_buffer(que=qb1, num=1, len=np_ * kp * size)
    pipe.init_buffer(que=qa2, num=1, len=mp * base_k * size)
    pipe.init_buffer(que=qb2, num=1, len=np_ * base_k * size)
    pipe.init_buffer(que=qc, num=1, len=mp * np_ * 4)

    a1 = qa1.alloc_tensor(t)
    asc.data_copy(a1, a_gm, asc.Nd2NzParams(1, m, k, 0, k, mp, 1, 0))
    qa1.enque(a1)
    b1 = qb1.alloc_tensor(t)
    asc.data_copy(b1, b_gm, asc.Nd2NzParams(1, n, k, 0, k, np_, 1, 0))
    qb1.enque(b1)
    if with_bias:
        qbias1, qbias2 = asc.TQue(asc.TPosition.C1, 1), asc.TQue(asc.TPosition.C2, 1)
        pipe.init_buffer(que=qbias1, num=1, len=np_ * 4)
        pipe.init_buffer(que=qbias2, num=1, len=np_ * 4)
        b_l1 = qbias1.alloc_tensor(bias_gm.dtype)
        asc.data_copy(b_l1, bias_gm, np_)
        qbias1.enque(b_l1)
        b_l1 = qbias1.deque(bias_gm.dtype)
        b_bt = qbias2.alloc_tensor(asc.float32 if bias_gm.dtype is not asc.int32 else asc.int32)
        asc.data_copy(b_bt, b_l1, asc.DataCopyParams(1, np_ * 4 // 64, 0, 0))
        qbias2.enque(b_bt)
        qbias1.free_tensor(b_l1)
        b_bt = qbias2.deque(asc.float32 if bias_gm.dtype is not asc.int32 else asc.int32)

    a1 = qa1.deque(t)
    b1 = qb1.deque(t)
    c1 = qc.alloc_tensor(acc)
    steps = -(-k // base_k)
    for s in range(steps):
        kk = min(base_k, k - s * base_k)  # this step's k (the tail is shorter)
        k1 = -(-kk // c0)
        a2 = qa2.alloc_tensor(t)
        for m1 in range(mp // 16):
            asc.load_data(a2[m1 * k1 * fe:], a1[m1 * fe:],
                          asc.LoadData2DParams(s * (base_k // c0) * (mp // 16), k1, mp // 16, 0, 0, False, 0))
        qa2.enque(a2)
        b2 = qb2.alloc_tensor(t)
        asc.load_data(b2, b1, asc.LoadData2DParams(s * (base_k // c0) * (np_ // 16), k1 * (np_ // 16), 1, 0, 0,
                                                   False, 0))
        qb2.enque(b2)
        a2 = qa2.deque(t)
        b2 = qb2.deque(t)
        if barrier and s > 0:
            asc.pipe_barrier(asc.PipeID.PIPE_M)
        if s == 0 and with_bias:
            asc.mmad(c1, a2, b2, b_bt, asc.MmadParams(m, n, kk, 0, False, False))
        else:
            asc.mmad(c1, a2, b2, asc.MmadParams(m, n, kk, 0, False, s == 0))
        qa2.free_tensor(a2)
        qb2.free_tensor(b2)
    qa1.free_tensor(a1)
    qb1.free_tensor(b1)
    if with_bias:
        qbias2.free_tensor(b_bt)
    qc.enque(c1)
    c1 = qc.deque(acc)
    asc.fixpipe(c_gm, c1, asc.FixpipeParamsV220(n, m, mp, n, quant, deq, relu_en=relu))
    qc.free_tensor(c1)


def run_matmul(a: np.ndarray, b: np.ndarray, out_dtype, *, base_k: int = 64, quant=None, deq: int = 0,
               bias: "np.ndarray | None" = None, relu: bool = False, barrier: bool = True, hf32: bool = False,
               **launch):
    """C = a @ b (+ bias) through :func:`matmul`; returns (C, LaunchResult)."""
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), out_dtype)
    quant = asc.QuantModes.NoQuant if quant is None else quant
    row = np.zeros(ceil_to(n, 16), np.float32 if bias is None else bias.dtype)
    if bias is not None:
        row[:n] = bias
    result = matmul[1](a, np.ascontiguousarray(b.T), c, row, m, n, k, base_k, int(quant), deq, bias is not None,
                       relu, barrier, hf32, **launch)
    return c, result


class Snapshots:
    """A launch executor (``launch(executor=)``) that lands each effect at once, as the default does, and keeps a
    copy of every local arena after each instruction named in ``ops``: the bytes an instruction left in L1, L0A ...
    which no API reads back to GM."""

    def __init__(self, *ops: str):
        self.ops, self.after = ops, []

    def run(self, instr, effect) -> None:
        from fusekit.asc.effect import run
        from fusekit.asc.runtime import running_core

        run(effect)
        if instr.op in self.ops:
            core = running_core()
            self.after.append((instr.op, {space.name: arena.copy() for space, arena in core.arenas.items()}))

    def end_core(self, core: int) -> None:
        pass


# ---- conv2d as img2col (A into L0A; AD-API LoadData_3D.md) x the weights (B into L0B, an Nz matrix loaded as a
# feature map) -> Mmad -> Fixpipe; tests/cube/test_cube_load3d.py and tests/cpp/test_cpp_cube.py run it

@asc.jit(kernel_type=AIC)
def conv2d_kernel(x: asc.GlobalAddress, wt: asc.GlobalAddress, y: asc.GlobalAddress, c1: asc.ConstExpr[int],
                  h: asc.ConstExpr[int], w: asc.ConstExpr[int], n: asc.ConstExpr[int], filt: asc.ConstExpr[tuple],
                  stride: asc.ConstExpr[tuple], dilation: asc.ConstExpr[tuple], pads: asc.ConstExpr[tuple],
                  m: asc.ConstExpr[int]):
    x_gm, w_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x)
    w_gm.set_global_buffer(wt)
    y_gm.set_global_buffer(y)
    t = x_gm.dtype
    c0 = 32 // t.sizeof()
    k = c1 * filt[0] * filt[1] * c0
    np_ = -(-n // 16) * 16
    fmap = asc.LocalTensor(t, asc.TPosition.A1, 0, c1 * h * w * c0)
    weights = asc.LocalTensor(t, asc.TPosition.B1, -(-(c1 * h * w * c0 * t.sizeof()) // 512) * 512, k * np_)
    a2 = asc.LocalTensor(t, asc.TPosition.A2, 0, -(-m // 16) * 16 * k)
    b2 = asc.LocalTensor(t, asc.TPosition.B2, 0, k * np_)
    c1_ = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, -(-m // 16) * 16 * np_)
    asc.data_copy(fmap, x_gm, c1 * h * w * c0)
    asc.data_copy(weights, w_gm, asc.Nd2NzParams(1, k, np_, 0, np_, k, 1, 0))   # B (K x N) in Nz
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, fmap, asc.LoadData3DParamsV2(list(pads), h, w, c1 * c0, k, m, 0, 0, stride[1], stride[0],
                                                   filt[1], filt[0], dilation[1], dilation[0], False, 0))
    # B as a feature map: H = K rows, W = 1, its N columns the channels; into L0B it lands in Zn
    asc.load_data(b2, weights, asc.LoadData3DParamsV2([0, 0, 0, 0], k, 1, np_, np_, k))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1_, a2, b2, asc.MmadParams(m, n, k, 0, False, True))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(y_gm, c1_, asc.FixpipeParamsV220(n, m, -(-m // 16) * 16, n))


def pack_conv2d(x, weight):
    """x (Cin, H, W) as NC1HWC0 (N = 1, channels zero-padded to C1 x C0) and weight (Cout, Cin, kh, kw) as the
    img2col matrix's partner B (K = (c1, kh, kw, c0) rows x Cout padded to 16), both flat."""
    cin, h, w = x.shape
    cout, _, kh, kw = weight.shape
    c0 = 32 // x.itemsize
    c1 = -(-cin // c0)
    fmap = np.zeros((c1 * c0, h, w), x.dtype)
    fmap[:cin] = x
    fmap = fmap.reshape(c1, c0, h, w).transpose(0, 2, 3, 1)
    b = np.zeros((c1, kh, kw, c0, ceil_to(cout, 16)), x.dtype)
    wpad = np.zeros((cout, c1 * c0, kh, kw), x.dtype)
    wpad[:, :cin] = weight
    b[..., :cout] = wpad.reshape(cout, c1, c0, kh, kw).transpose(1, 3, 4, 2, 0)
    return np.ascontiguousarray(fmap).reshape(-1), b.reshape(-1)


def conv2d(x, weight, stride, padding, dilation):
    """y (Cout, Ho, Wo) of x (Cin, H, W) * weight (Cout, Cin, kh, kw) through :func:`conv2d_kernel`."""
    cin, h, w = x.shape
    cout, _, kh, kw = weight.shape
    c1 = -(-cin // (32 // x.itemsize))
    fmap, b = pack_conv2d(x, weight)
    pads = (padding[1], padding[1], padding[0], padding[0])
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((ho * wo, cout), np.float32)
    conv2d_kernel[1](fmap, b, y, c1, h, w, cout, (kh, kw), stride, dilation, pads, ho * wo)
    return y.reshape(ho, wo, cout).transpose(2, 0, 1)


def conv2d_reference(x, weight, stride, padding, dilation):
    """float64 cross-correlation, as torch.nn.functional.conv2d."""
    cin, h, w = x.shape
    cout, _, kh, kw = weight.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (padding[0],) * 2, (padding[1],) * 2))
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((cout, ho, wo))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dilation[0]:i * dilation[0] + stride[0] * (ho - 1) + 1:stride[0],
                       j * dilation[1]:j * dilation[1] + stride[1] * (wo - 1) + 1:stride[1]]
            y += np.einsum("chw,oc->ohw", patch, weight[:, :, i, j].astype(np.float64))
    return y
