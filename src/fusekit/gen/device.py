"""Device helpers of row-tiled generated kernels (pyasc syntax), beside ``fusekit.ops.elementwise``.

A row-tiled kernel holds ``rows`` rows of a tile in UB with a row stride of ROW_PAD elements, a
whole number of 32 B blocks, so that every row starts 32 B-aligned (UB operands must be:
AD-API 通用说明和约束.md) and a per-row instruction can address it.

- ``load_rows``: GM rows of ``row`` elements, ``stride`` elements apart (``row``, or a GM row's length when
  the rows are a column slab of a wider matrix) -> UB rows of ROW_PAD: one DataCopy when the rows are
  contiguous and ``row`` is ROW_PAD (the host pads rows in GM on a SoC without DataCopyPad), else one
  DataCopyPad with ``rows`` blocks ``srcStride`` bytes apart in GM, each padded in UB to 32 B with zeros
  (isPad, rightPadding) and ``dstStride`` 32 B blocks apart (AD-API DataCopyPad（GMToUB非对齐数据搬运）.md);
- ``store_rows``: the reverse; DataCopyPad writes exactly ``row`` elements per row (UB->GM form,
  ``srcStride`` in 32 B blocks, ``dstStride`` in bytes);
- ``replicate``: copy UB row 0 over TILE_ROWS rows by doubling (LOG_ROWS = ceil(log2 TILE_ROWS) vector
  copies, ``x * 1`` being exact for every float): a (C,) input broadcast along rows costs this once per
  core, never GM.

ROW_PAD, TILE_ROWS and LOG_ROWS are plain ``int`` parameters (tiling values computed per launch from the row
length), so the loops and branches here are runtime ones (``range``, ``if``), never ``asc.static_range``.
"""

from fusekit import asc


@asc.jit
def load_rows(dst: asc.LocalTensor, src: asc.GlobalTensor, rows: int, row: int, ROW_PAD: int, stride: int):
    nbytes = row * src.dtype.sizeof()
    if row == ROW_PAD and stride == row:
        asc.data_copy(dst, src, rows * row)
    else:
        pad = (32 - nbytes % 32) % 32 // src.dtype.sizeof()
        gap = (ROW_PAD * src.dtype.sizeof() - (nbytes + 31) // 32 * 32) // 32
        asc.data_copy_pad(dst, src, asc.DataCopyExtParams(rows, nbytes, (stride - row) * src.dtype.sizeof(), gap, 0),
                          asc.DataCopyPadExtParams(src.dtype, True, 0, pad, 0))


@asc.jit
def store_rows(dst: asc.GlobalTensor, src: asc.LocalTensor, rows: int, row: int, ROW_PAD: int, stride: int):
    nbytes = row * dst.dtype.sizeof()
    if row == ROW_PAD and stride == row:
        asc.data_copy(dst, src, rows * row)
    else:
        gap = (ROW_PAD * dst.dtype.sizeof() - (nbytes + 31) // 32 * 32) // 32
        asc.data_copy_pad(dst, src, asc.DataCopyExtParams(rows, nbytes, gap, (stride - row) * dst.dtype.sizeof(), 0))


@asc.jit
def replicate(t: asc.LocalTensor, ROW_PAD: int, TILE_ROWS: int, LOG_ROWS: int):
    for j in range(LOG_ROWS):  # a runtime loop: LOG_ROWS is a tiling value
        done = 1 << j
        rows = TILE_ROWS - done
        if done < rows:  # min(): pyasc 1.1.1 does not trace the builtin
            rows = done
        asc.muls(t[ROW_PAD * done:], t, 1.0, ROW_PAD * rows)
