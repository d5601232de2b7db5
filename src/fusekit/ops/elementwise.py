"""Device helpers shared by the elementwise kernels (pyasc syntax).

- ``core_share``: this core's range and tile counts from the TilingData fields (``fusekit.tiling``:
  every core but the last has ``block_length`` elements, the last ``last_block_length``);
- ``load`` / ``store``: GM <-> UB movement of ``n`` elements of a tile: DataCopy when ``n`` fills
  whole 32-byte blocks, DataCopyPad for an unaligned tail (AD-API DataCopy, DataCopyPad).
"""

from fusekit import asc


@asc.jit
def core_share(block_length: int, tile_num: int, tail_length: int, last_block_length: int, last_tile_num: int,
               last_tail_length: int):
    """(first element, element count, full tiles, tail elements) of this core."""
    core_length = block_length
    full_tiles = tile_num
    tail = tail_length
    if asc.get_block_idx() == asc.get_block_num() - 1:
        core_length = last_block_length
        full_tiles = last_tile_num
        tail = last_tail_length
    return asc.get_block_idx() * block_length, core_length, full_tiles, tail


@asc.jit
def load(dst: asc.LocalTensor, src: asc.GlobalTensor, n: int):
    """GM -> UB, n elements: DataCopy when n fills whole 32 B blocks, else DataCopyPad."""
    nbytes = n * src.dtype.sizeof()
    if nbytes % 32 == 0:
        asc.data_copy(dst, src, n)
    else:
        asc.data_copy_pad(dst, src, asc.DataCopyExtParams(1, nbytes, 0, 0, 0),
                          asc.DataCopyPadExtParams(src.dtype, False, 0, 0, 0))


@asc.jit
def store(dst: asc.GlobalTensor, src: asc.LocalTensor, n: int):
    """UB -> GM, n elements: DataCopyPad writes exactly n elements of an unaligned tail."""
    nbytes = n * dst.dtype.sizeof()
    if nbytes % 32 == 0:
        asc.data_copy(dst, src, n)
    else:
        asc.data_copy_pad(dst, src, asc.DataCopyExtParams(1, nbytes, 0, 0, 0))
