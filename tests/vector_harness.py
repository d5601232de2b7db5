"""Shared helpers of the tests/test_vector_*.py files: one-core kernels around a vector call, and
independent models of the repeat / mask layout written from the documents (not from fusekit).

Layout model (AD-API SIMD计算说明/高维切分.md): a repeat processes 8 DataBlocks of 32 B; block j of
repeat r of an operand starts ``r * rep_stride + j * blk_stride`` blocks from the operand's start.
Mask (掩码.md): continuous ``m`` selects lanes 0..m-1 (m past the lanes of a repeat selects all);
a bit mask ``[low, high]`` selects lane i when bit i of ``low | high << 64`` is 1.
"""

from __future__ import annotations

import inspect

import numpy as np

from fusekit import asc

THIS_DIR = __file__.rsplit("/", 1)[0]


@asc.jit
def _kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, d: asc.GlobalAddress, BODY: asc.ConstExpr,
            SIZES: asc.ConstExpr):
    pipe = asc.TPipe()
    tensors, views = [], []
    for addr, n in zip((a, b, d), SIZES):
        view = asc.GlobalTensor()
        view.set_global_buffer(addr, n)
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=n * addr.dtype.sizeof())
        t = buf.get(addr.dtype)
        asc.data_copy(t, view, n)
        tensors.append(t)
        views.append(view)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    BODY(tensors[2], tensors[0], tensors[1])
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(views[2], tensors[2], SIZES[2])


def padded(x: np.ndarray) -> np.ndarray:
    """``x`` with zeros appended up to a 32 B multiple (data_copy's unit)."""
    per = 32 // x.dtype.itemsize
    return np.concatenate([x, np.zeros(-x.size % per, x.dtype)])


def run(body, dst: np.ndarray, src0: np.ndarray, src1: np.ndarray | None = None, **launch):
    """Run ``body(dst_t, src0_t, src1_t)`` on one core with UB tensors loaded from the arrays.

    Returns (dst after the kernel, the vector instructions of the Trace).
    """
    src1 = src0[:0] if src1 is None else src1
    arrays = [padded(np.asarray(v)) for v in (src0, src1 if src1.size else np.zeros(16, src0.dtype), dst)]
    result = _kernel[1](*arrays, body, tuple(v.size for v in arrays), **launch)
    vector = [i for i in result.trace if i.op not in ("data_copy", "pipe_barrier")]
    return arrays[2][:dst.size], vector


def lane_mask(mask, lanes: int) -> np.ndarray:
    """bool[lanes] selected by a continuous (int) or bit (list) mask, per 掩码.md."""
    if isinstance(mask, int):
        return np.arange(lanes) < mask
    value = mask[0] | ((mask[1] if len(mask) > 1 else 0) << 64)
    return np.array([(value >> i) & 1 == 1 for i in range(lanes)])


def split_elements(repeats: int, lanes: int, size: int, blk: int, rep: int, active) -> list[list[int]]:
    """Per repeat, the element index of each active lane (高维切分.md layout)."""
    per_block = 32 // size
    out = []
    for r in range(repeats):
        row = []
        for lane in range(lanes):
            if active[lane] if np.ndim(active) == 1 else active[r][lane]:
                block, within = divmod(lane, per_block)
                row.append((r * rep + block * blk) * per_block + within)
        out.append(row)
    return out


def line_of(fn, marker: str) -> int:
    """Line of the source line of ``fn`` carrying ``# <marker>``."""
    lines, first = inspect.getsourcelines(fn)
    return next(first + i for i, text in enumerate(lines) if f"# <{marker}>" in text)
