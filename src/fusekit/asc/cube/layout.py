"""Fractal layouts of the cube unit as element offsets: where element (row, col) of a matrix lives in a buffer.

A fractal is 512 B, 16 x (32 B / sizeof(T)) elements: ``C0 = 32 B / sizeof(T)`` is 16 for b16, 32 for b8, 8 for
b32; an L0C fractal is always 16 x 16 (fp32 / int32: 1 KB). The names say outer order, then inner order ("大Y小x":
Z row-major, N column-major; AD-API 矩阵计算分形介绍/背景与核心概念.md, 关键分形格式详解.md):

- **Nz** (L1 after ND2NZ, L0C, GM in NZ): column blocks of C0 columns, one after another, each block holding its
  rows one after another, each row C0 elements. Element (r, c) at ``(c // C0) * block_stride + r * row_stride +
  c % C0``; packed, ``row_stride = C0`` and ``block_stride = rows * C0`` with rows rounded up to 16.
- **Zz** (L0A, the left matrix A, m x k): fractals of 16 rows x K0 (= C0) columns in row-major order of fractals,
  rows inside each: (i, j) at ``((i // 16) * K1 + j // K0) * 16 * K0 + (i % 16) * K0 + j % K0``, K1 = ceil(k / K0).
- **Zn** (L0B, the right matrix B, k x n): fractals of K0 rows (k) x 16 columns (n) in row-major order of
  fractals, columns inside each (the fractal holds B transposed): (kk, j) at ``((kk // K0) * N1 + j // 16) * 16 * K0
  + (j % 16) * K0 + kk % K0``, N1 = ceil(n / 16).

A2/A3 compute "Zz x Zn = Nz" (A x B = C; 关键分形格式详解.md). Every function returns int64 element offsets of shape
(rows, cols), for numpy fancy indexing; the arithmetic is the documents' and nothing else of fusekit's. The
arrays are cached by their arguments (a kernel asks for the same few shapes again and again) and read-only.
"""

from __future__ import annotations

import functools

import numpy as np

FRACTAL_BYTES = 512  # one fractal (LoadData's unit, L0A / L0B's alignment): AD-API LoadData_2D.md
M0 = 16              # rows of an A / C fractal, columns of a B fractal, and both sides of an L0C fractal
L0C_FRACTAL = 16 * 16  # elements of an L0C fractal (fp32 / int32)


def c0(size: int) -> int:
    """Elements of one 32 B fractal row for an element of ``size`` bytes: 16 (b16), 32 (b8), 8 (b32)."""
    return 32 // size


def ceil_to(x: int, unit: int) -> int:
    """``x`` rounded up to a multiple of ``unit``."""
    return -(-int(x) // unit) * unit


def cached(fn):
    """``fn`` (of ints, returning an array) cached by its arguments; the arrays it returns are read-only."""
    @functools.lru_cache(maxsize=512)
    def frozen(*args):
        out = fn(*args)
        for array in out if isinstance(out, tuple) else (out,):
            if isinstance(array, np.ndarray):
                array.flags.writeable = False
        return out

    return functools.wraps(fn)(frozen)


@cached
def nz(rows: int, cols: int, c0_: int, row_stride: int, block_stride: int) -> np.ndarray:
    """Nz offsets of a rows x cols matrix: column blocks of ``c0_`` columns ``block_stride`` elements apart, rows
    ``row_stride`` elements apart inside a block."""
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    return (c // c0_) * block_stride + r * row_stride + c % c0_


@cached
def zz(m: int, k: int, k0: int) -> np.ndarray:
    """Zz offsets of A (m x k) in L0A, fractals 16 x ``k0``."""
    k1 = -(-k // k0)
    i = np.arange(m, dtype=np.int64)[:, None]
    j = np.arange(k, dtype=np.int64)[None, :]
    return ((i // M0) * k1 + j // k0) * (M0 * k0) + (i % M0) * k0 + j % k0


@cached
def zn(k: int, n: int, k0: int) -> np.ndarray:
    """Zn offsets of B (k x n) in L0B, fractals ``k0`` x 16."""
    n1 = -(-n // M0)
    kk = np.arange(k, dtype=np.int64)[:, None]
    j = np.arange(n, dtype=np.int64)[None, :]
    return ((kk // k0) * n1 + j // M0) * (M0 * k0) + (j % M0) * k0 + kk % k0


@cached
def l0c(m: int, n: int) -> np.ndarray:
    """Nz offsets of C (m x n) in L0C: 16 x 16 fractals, column blocks ``ceil(m / 16) * 256`` elements apart (with
    m = 1, GEMV, each 1 x 16 row still takes a whole fractal: AD-API Mmad计算关键特性说明/GEMV.md)."""
    return nz(m, n, M0, M0, ceil_to(m, M0) * M0)
