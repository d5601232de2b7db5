"""A tiled matmul on the cube unit, in pyasc's Python: C (M x N, float32) = A (M x K) x B (K x N), half inputs.

Run it:  python examples/cube/matmul.py [M N K]       (prints the error against numpy and the predicted time)
Check it: fusekit check examples/cube/matmul.py   (CHECK_SIZES below; check_launch: M = N = K = size)

Each AIC takes C's row bands of ``BASE_M`` rows in turn (block i: bands i, i + block_dim, ...) and each column
tile of ``BASE_N``; K runs in steps of ``BASE_K``. Data path (``docs/cube.md``, "Data path and buffers"): GM -> L1 (A1 / B1, ND2NZ) on MTE2,
L1 -> L0A / L0B (A2 / B2, load_data) on MTE1, Mmad into L0C (CO1) on M, L0C -> GM with Fixpipe (NZ2ND, float) on
FIX. Every stage is a TQue of two buffers (double buffering, BUFFER_NUM = 2), so its events order the pipes; the
Mmads of one tile accumulate in L0C and need ``PipeBarrier<PIPE_M>`` only when the tile is under 10 fractals
(Mmad.md, 同步优化说明). B is passed transposed (N x K, row-major), so ND2NZ lands it in L0B's Zn fractals.
"""

from __future__ import annotations

import sys

import numpy as np

from fusekit import asc
from fusekit.pyasc.shim import config

BASE_M, BASE_N, BASE_K = 128, 128, 64
BUFFER_NUM = 2
# fusekit check's default sweep for this file: a size is M = N = K (one row, tails of 16, a one-row last band)
CHECK_SIZES = (1, 16, 100, 129, 256)


@asc.jit(kernel_type=config.KernelType.AIC_ONLY)
def matmul(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, m: asc.ConstExpr[int],
           n: asc.ConstExpr[int], k: asc.ConstExpr[int]):
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(bt)
    c_gm.set_global_buffer(c)
    pipe = asc.TPipe()
    qa1, qb1 = asc.TQue(asc.TPosition.A1, BUFFER_NUM), asc.TQue(asc.TPosition.B1, BUFFER_NUM)
    qa2, qb2 = asc.TQue(asc.TPosition.A2, BUFFER_NUM), asc.TQue(asc.TPosition.B2, BUFFER_NUM)
    qc = asc.TQue(asc.TPosition.CO1, 1)
    pipe.init_buffer(que=qa1, num=BUFFER_NUM, len=BASE_M * BASE_K * 2)
    pipe.init_buffer(que=qb1, num=BUFFER_NUM, len=BASE_N * BASE_K * 2)
    pipe.init_buffer(que=qa2, num=BUFFER_NUM, len=BASE_M * BASE_K * 2)
    pipe.init_buffer(que=qb2, num=BUFFER_NUM, len=BASE_N * BASE_K * 2)
    pipe.init_buffer(que=qc, num=1, len=BASE_M * BASE_N * 4)
    bands = -(-m // BASE_M)
    for band in range(asc.get_block_idx(), bands, asc.get_block_num()):
        m0 = band * BASE_M
        tm = min(BASE_M, m - m0)
        tm16 = -(-tm // 16) * 16
        for n0 in range(0, n, BASE_N):
            tn = min(BASE_N, n - n0)
            tn16 = -(-tn // 16) * 16
            c1 = qc.alloc_tensor(asc.float32)
            for k0 in range(0, k, BASE_K):
                tk = min(BASE_K, k - k0)
                k1 = -(-tk // 16)
                a1 = qa1.alloc_tensor(asc.float16)  # A[m0:m0+tm, k0:k0+tk] -> Nz (k1 blocks of tm16 rows)
                asc.data_copy(a1, a_gm[m0 * k + k0:], asc.Nd2NzParams(1, tm, tk, 0, k, tm16, 1, 0))
                qa1.enque(a1)
                b1 = qb1.alloc_tensor(asc.float16)  # B^T[n0:n0+tn, k0:k0+tk] -> Nz = Zn fractals
                asc.data_copy(b1, b_gm[n0 * k + k0:], asc.Nd2NzParams(1, tn, tk, 0, k, tn16, 1, 0))
                qb1.enque(b1)
                a1, b1 = qa1.deque(asc.float16), qb1.deque(asc.float16)
                a2 = qa2.alloc_tensor(asc.float16)
                for m1 in range(tm16 // 16):  # Nz -> Zz: one row of fractals per load
                    asc.load_data(a2[m1 * k1 * 256:], a1[m1 * 256:],
                                  asc.LoadData2DParams(0, k1, tm16 // 16, 0, 0, False, 0))
                qa2.enque(a2)
                b2 = qb2.alloc_tensor(asc.float16)
                asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * tn16 // 16, 1, 0, 0, False, 0))
                qb2.enque(b2)
                qa1.free_tensor(a1)
                qb1.free_tensor(b1)
                a2, b2 = qa2.deque(asc.float16), qb2.deque(asc.float16)
                if k0 > 0 and (tm16 // 16) * (tn16 // 16) < 10:
                    asc.pipe_barrier(asc.PipeID.PIPE_M)  # a small tile: the hardware does not order the Mmads
                # m = 1 would make Mmad a GEMV reading A as one row (GEMV.md), but A is in Zz fractals: compute the
                # padding row too (Fixpipe writes tm rows)
                asc.mmad(c1, a2, b2, asc.MmadParams(max(tm, 2), tn, tk, 0, False, k0 == 0))
                qa2.free_tensor(a2)
                qb2.free_tensor(b2)
            qc.enque(c1)
            c1 = qc.deque(asc.float32)
            asc.fixpipe(c_gm[m0 * n + n0:], c1, asc.FixpipeParamsV220(tn, tm, tm16, n, asc.QuantModes.NoQuant))
            qc.free_tensor(c1)


def arguments(m: int, n: int, k: int, seed: int = 0):
    """Random half A (m x k) and B (k x n), B passed transposed, and the output C (m x n, float32)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    return a, b, np.zeros((m, n), np.float32)


def check_launch(size: int, dtype=None):
    """``fusekit check``'s launch for one size of its sweep: M = N = K = size on as many AICs as there are bands."""
    a, b, c = arguments(size, size, size)
    return max(1, min(24, -(-size // BASE_M))), {"a": a, "bt": np.ascontiguousarray(b.T), "c": c, "m": size,
                                                  "n": size, "k": size}


if __name__ == "__main__":
    import fusekit

    m, n, k = (int(v) for v in sys.argv[1:4]) if len(sys.argv) == 4 else (256, 192, 320)
    a, b, c = arguments(m, n, k)
    cores = min(24, -(-m // BASE_M))
    prof = fusekit.profile(matmul)[cores](a, np.ascontiguousarray(b.T), c, m, n, k)
    err = np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max()
    print(f"C = A x B, {m} x {n} x {k} half on {cores} AIC(s): max |error| against float64 {err:.3g}")
    print(prof.table())
