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

- ``reduce_rows`` / ``with_rows``: the tile form of the per-row instructions on A2/A3 (below).

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


# The tile form of the per-row instructions (A2/A3, rows of at most 8 repeats: ROW * sizeof <= 2048 B). Where each
# row would take a ReduceSum/Max/Min, a GetValue and an Adds / Muls / Duplicate, a tile takes one instruction per
# 256 B column of its rows: repeat r is row r (src_rep_stride = the UB row in 32 B blocks), at most 248 rows per
# instruction (repeat_times <= 255; a multiple of 8 so Brcb's groups of 8 rows stay inside a batch). A row value
# lives in its own 32 B block, every lane holding it (Brcb), so that a binary instruction with src1_blk_stride 0
# reads it as a whole row (AD-API 数据填充/Brcb.md, 归约计算/ReduceRepeat.md, 辅助数据结构/BinaryRepeatParams.md).


def tile_form_rtmp(size: int) -> int:
    """Elements of :func:`reduce_rows`'s ``tmp`` for a compute dtype of ``size`` bytes: a batch's 256 row values,
    then 248 blocks of 32 B."""
    return 256 + 248 * 32 // size


@asc.jit
def _whole(dst: asc.LocalTensor, src: asc.LocalTensor, mask: int, n: int, dst_rep: int, src_rep: int, KIND: int):
    if KIND == 0:
        asc.whole_reduce_sum(dst, src, mask, n, dst_rep, 1, src_rep)
    elif KIND == 1:
        asc.whole_reduce_max(dst, src, mask, n, dst_rep, 1, src_rep, order=asc.ReduceOrder.ORDER_ONLY_VALUE)
    else:
        asc.whole_reduce_min(dst, src, mask, n, dst_rep, 1, src_rep, order=asc.ReduceOrder.ORDER_ONLY_VALUE)


@asc.jit
def _fold(dst: asc.LocalTensor, src: asc.LocalTensor, tmp: asc.LocalTensor, b: int, n: int, c: int, mask: int,
          ROW_PAD: int, LAST: int, KIND: int):
    # column c's results into lane 1 beside the running value, then both into the other block buffer (or tmp)
    lanes = 256 // src.dtype.sizeof()
    per = 32 // src.dtype.sizeof()
    blocks = ROW_PAD * src.dtype.sizeof() // 32
    column = src[b * ROW_PAD + c * lanes:]
    if c % 2 == 1:  # the running value in dst's blocks
        _whole(dst[b * per + 1:], column, mask, n, per, blocks, KIND)
        if LAST == 1:
            _whole(tmp, dst[b * per:], 2, n, 1, 1, KIND)
        else:
            _whole(tmp[256:], dst[b * per:], 2, n, per, 1, KIND)
    else:  # in tmp[256:]'s
        _whole(tmp[257:], column, mask, n, per, blocks, KIND)
        if LAST == 1:
            _whole(tmp, tmp[256:], 2, n, 1, 1, KIND)
        else:
            _whole(dst[b * per:], tmp[256:], 2, n, per, 1, KIND)


@asc.jit
def _reduce_batch(dst: asc.LocalTensor, src: asc.LocalTensor, tmp: asc.LocalTensor, b: int, n: int, ROW: int,
                  ROW_PAD: int, KIND: int):
    lanes = 256 // src.dtype.sizeof()
    per = 32 // src.dtype.sizeof()
    blocks = ROW_PAD * src.dtype.sizeof() // 32
    chunks = (ROW + lanes - 1) // lanes
    if chunks == 1:
        _whole(tmp, src[b * ROW_PAD:], ROW, n, 1, blocks, KIND)
    else:
        _whole(dst[b * per:], src[b * ROW_PAD:], lanes, n, per, blocks, KIND)
        for c in range(1, chunks - 1):
            _fold(dst, src, tmp, b, n, c, lanes, ROW_PAD, 0, KIND)
        _fold(dst, src, tmp, b, n, chunks - 1, ROW - (chunks - 1) * lanes, ROW_PAD, 1, KIND)
    asc.brcb(dst[b * per:], tmp, (n + 7) // 8, asc.BrcbRepeatParams(1, 8))


@asc.jit
def reduce_rows(dst: asc.LocalTensor, src: asc.LocalTensor, tmp: asc.LocalTensor, rows: int, ROW: int, ROW_PAD: int,
                KIND: int):
    """Row r's sum (KIND 0), max (1) or min (2) over its first ROW lanes -> every lane of dst's block r, in
    ReduceSum's count-form order on A2/A3 (ReduceSum.md 方式一: a tree inside each repeat, the repeats' results in
    order). One WholeReduce per 256 B column of the rows writes each row's result into lane 1 of its block beside
    the running value in lane 0, and a WholeReduce over those two lanes combines them into the other block buffer
    (dst's blocks and ``tmp[256:]`` take turns) or, after the last column, into ``tmp[:256]``, which Brcb spreads
    over the blocks. ``tmp``: 256 + 248 blocks' elements (RTMP). Batches of 248 rows, then the rest (pyasc keeps a
    variable's type across branches, so a count is never clamped by reassignment)."""
    full = rows // 248
    for i in range(full):
        _reduce_batch(dst, src, tmp, i * 248, 248, ROW, ROW_PAD, KIND)
    if rows - full * 248 > 0:
        _reduce_batch(dst, src, tmp, full * 248, rows - full * 248, ROW, ROW_PAD, KIND)


@asc.jit
def _with_column(dst: asc.LocalTensor, src: asc.LocalTensor, vals: asc.LocalTensor, b: int, n: int, c: int, mask: int,
                 ROW_PAD: int, KIND: int):
    lanes = 256 // dst.dtype.sizeof()
    per = 32 // dst.dtype.sizeof()
    blocks = ROW_PAD * dst.dtype.sizeof() // 32
    at = b * ROW_PAD + c * lanes
    if KIND == 0:
        asc.add(dst[at:], src[at:], vals[b * per:], mask, n, asc.BinaryRepeatParams(1, 1, 0, blocks, blocks, 1))
    elif KIND == 1:
        asc.mul(dst[at:], src[at:], vals[b * per:], mask, n, asc.BinaryRepeatParams(1, 1, 0, blocks, blocks, 1))
    else:  # x * 1, exact for every float (Copy would do, but pyasc 1.1.1's copy takes only a literal mask)
        asc.muls(dst[at:], vals[b * per:], 1.0, mask, n, asc.UnaryRepeatParams(1, 0, blocks, 1))


@asc.jit
def _with_batch(dst: asc.LocalTensor, src: asc.LocalTensor, vals: asc.LocalTensor, b: int, n: int, ROW_PAD: int,
                KIND: int):
    lanes = 256 // dst.dtype.sizeof()
    chunks = (ROW_PAD + lanes - 1) // lanes
    for c in range(chunks - 1):
        _with_column(dst, src, vals, b, n, c, lanes, ROW_PAD, KIND)
    _with_column(dst, src, vals, b, n, chunks - 1, ROW_PAD - (chunks - 1) * lanes, ROW_PAD, KIND)


@asc.jit
def with_rows(dst: asc.LocalTensor, src: asc.LocalTensor, vals: asc.LocalTensor, rows: int, ROW_PAD: int, KIND: int):
    """dst row r = src row r + (KIND 0) or * (1) its row value, or (KIND 2) the row value itself (times 1), over ROW_PAD
    lanes; ``vals`` holds row r's value in every lane of block r (:func:`reduce_rows`). Batches as there."""
    full = rows // 248
    for i in range(full):
        _with_batch(dst, src, vals, i * 248, 248, ROW_PAD, KIND)
    if rows - full * 248 > 0:
        _with_batch(dst, src, vals, full * 248, rows - full * 248, ROW_PAD, KIND)
