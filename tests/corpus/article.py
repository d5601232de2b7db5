"""The seed article's FusedAddScale (section 4.4, host tiling of section 4.3), in pyasc syntax.

``article_kernel`` transcribes the article's C++ ``KernelFusedAddScale`` as literally as pyasc
allows: the constructor's ``SetGlobalBuffer``/``InitBuffer`` calls, ``Process()`` with its loop
``for (offset = coreStart; offset < coreEnd; offset += blockLength)`` (one tile per core: the
step is the whole block), ``CopyIn``/``Compute``/``CopyOut``, and the ``pipe.SyncIO()`` /
``pipe.SyncCompute()`` calls. The host tiling is section 4.3's: ``blockLength = ceil(total /
coreNum)`` rounded up to 16, ``blockDim = ceil(total / blockLength)``, at most coreNum.

The article's defects, and where each comes from (C++ text of section 4.4 / 4.3):

A. ``pipe.SyncIO();`` and ``pipe.SyncCompute();`` in ``Process()`` (after ``CopyIn`` and
   ``Compute``, and once more after the loop): TPipe has no such calls; queues synchronise
   through EnQue/DeQue. Tool api, at the first call reached (``<a-syncio>``); with SyncIO gone,
   at SyncCompute (``article_no_syncio``, ``<b-synccompute>``).
B. ``Add(x1Local, x2Local, yLocal, length);`` in ``Compute``: Ascend C's Add is
   ``Add(dst, src0, src1, count)``, so this computes ``x1Local = x2Local + yLocal`` and reads
   ``yLocal``, which nothing wrote. Tool initcheck (``uninitialized read``).
C. ``Muls(yLocal, (half)scale, yLocal, length);`` in ``Compute``: Muls is
   ``Muls(dst, src, scalar, count)``; the scalar and the source tensor are swapped. Tool api.
D. ``pipe.InitBuffer(inQueueX1, BUFFER_NUM, blockLength * sizeof(half));`` (three queues, in the
   constructor) with 4.3's ``blockLength = (totalLength + coreNum - 1) / coreNum``: each core puts
   its whole block in UB, twice (BUFFER_NUM = 2), for three queues. 1,000,000 float16 on 40 cores:
   blockLength 25008, 3 x 2 x 50016 B > 192 KiB. Tool memcheck ``ub-overflow`` at the second
   InitBuffer (the first one still fits).
E. ``DataCopy(x1Local, x1Gm[offset], length);`` (and the other DataCopy calls) with the last
   core's ``curLen = coreEnd - offset``: 1000 elements on 8 cores gives blockLength 128 and a
   last core of 104 halves = 208 B, not a multiple of 32 B. Tool memcheck ``unaligned-length``;
   launched with ``strict=False`` the NPU's round-down drops the last 8 elements: initcheck
   ``output never written`` (and ``uninitialized read`` of the 8 UB elements the Add then reads).

Because the simulator stops a kernel at its first illegal call, the defects are shown one after
another in variants that fix the earlier ones: ``article_kernel`` (all of them),
``article_no_syncio`` (A's SyncIO removed), ``article_no_sync`` (A removed: B and C show),
``article_muls_fixed`` (A and C fixed: B shows, the output is NaN), ``article_order_fixed``
(A, B, C fixed: D and E show at their sizes) and the corrected ``article_fixed``.
"""

import numpy as np

from fusekit import asc

from . import Case, Expect, rand

BUFFER_NUM = 2  # constexpr int32_t BUFFER_NUM = 2;
ALIGN = 16      # constexpr uint32_t kAlign = 16;  (16 halves = 32 B)


def article_tiling(total_length: int, core_num: int) -> tuple[int, int]:
    """Section 4.3's TilingFusedAddScale: (blockLength, blockDim)."""
    block_length = (total_length + core_num - 1) // core_num
    block_length = ((block_length + ALIGN - 1) // ALIGN) * ALIGN
    block_dim = (total_length + block_length - 1) // block_length
    block_dim = core_num if block_dim > core_num else block_dim
    return block_length, block_dim


# ---------------------------------------------------------------------------------------------
# CopyIn / Compute / CopyOut, as in the article (Compute with its Add and Muls argument orders)
# ---------------------------------------------------------------------------------------------

@asc.jit
def copy_in(offset: int, length: int, x1_gm: asc.GlobalTensor, x2_gm: asc.GlobalTensor,
            in_queue_x1: asc.TQue, in_queue_x2: asc.TQue):
    x1_local = in_queue_x1.alloc_tensor(asc.half)
    x2_local = in_queue_x2.alloc_tensor(asc.half)
    asc.data_copy(x1_local, x1_gm[offset:], length)  # <e-copy-in>  DataCopy(x1Local, x1Gm[offset], length);
    asc.data_copy(x2_local, x2_gm[offset:], length)
    in_queue_x1.enque(x1_local)
    in_queue_x2.enque(x2_local)


@asc.jit
def compute(offset: int, length: int, scale: float, in_queue_x1: asc.TQue, in_queue_x2: asc.TQue,
            out_queue_y: asc.TQue):
    x1_local = in_queue_x1.deque(asc.half)
    x2_local = in_queue_x2.deque(asc.half)
    y_local = out_queue_y.alloc_tensor(asc.half)
    asc.add(x1_local, x2_local, y_local, length)  # <b-add>  Add(x1Local, x2Local, yLocal, length);
    asc.muls(y_local, scale, y_local, length)  # <c-muls>  Muls(yLocal, (half)scale, yLocal, length);
    out_queue_y.enque(y_local)
    in_queue_x1.free_tensor(x1_local)
    in_queue_x2.free_tensor(x2_local)


@asc.jit
def copy_out(offset: int, length: int, y_gm: asc.GlobalTensor, out_queue_y: asc.TQue):
    y_local = out_queue_y.deque(asc.half)
    asc.data_copy(y_gm[offset:], y_local, length)  # <e-copy-out>  DataCopy(yGm[offset], yLocal, length);
    out_queue_y.free_tensor(y_local)


@asc.jit
def article_kernel(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress,
                   total_length: int, block_length: int, scale: float):
    """extern "C" __global__ __aicore__ void FusedAddScale(...): constructor, then Process()."""
    # KernelFusedAddScale(...)
    x1_gm = asc.GlobalTensor()
    x2_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x1_gm.set_global_buffer(x1, total_length)
    x2_gm.set_global_buffer(x2, total_length)
    y_gm.set_global_buffer(y, total_length)
    pipe = asc.TPipe()
    in_queue_x1 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_queue_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_queue_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_queue_x1, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    pipe.init_buffer(que=in_queue_x2, num=BUFFER_NUM, len=block_length * asc.half.sizeof())  # <d-init-x2>
    pipe.init_buffer(que=out_queue_y, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    # Process()
    core_idx = asc.get_block_idx()
    core_start = core_idx * block_length
    core_end = core_start + block_length
    if core_end > total_length:
        core_end = total_length
    step = block_length
    for offset in range(core_start, core_end, step):
        cur_len = core_end - offset
        if offset + step < core_end:
            cur_len = step
        copy_in(offset, cur_len, x1_gm, x2_gm, in_queue_x1, in_queue_x2)
        pipe.SyncIO()  # <a-syncio>
        compute(offset, cur_len, scale, in_queue_x1, in_queue_x2, out_queue_y)
        pipe.SyncCompute()
        copy_out(offset, cur_len, y_gm, out_queue_y)
    pipe.SyncIO()


@asc.jit
def article_no_syncio(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress,
                      total_length: int, block_length: int, scale: float):
    """The article's kernel without its pipe.SyncIO() calls and with Muls fixed (C): SyncCompute is reached.

    (With the article's Muls, Compute stops at Muls before the SyncCompute call.)
    """
    x1_gm = asc.GlobalTensor()
    x2_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x1_gm.set_global_buffer(x1, total_length)
    x2_gm.set_global_buffer(x2, total_length)
    y_gm.set_global_buffer(y, total_length)
    pipe = asc.TPipe()
    in_queue_x1 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_queue_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_queue_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_queue_x1, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    pipe.init_buffer(que=in_queue_x2, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    pipe.init_buffer(que=out_queue_y, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    core_idx = asc.get_block_idx()
    core_start = core_idx * block_length
    core_end = core_start + block_length
    if core_end > total_length:
        core_end = total_length
    step = block_length
    for offset in range(core_start, core_end, step):
        cur_len = core_end - offset
        if offset + step < core_end:
            cur_len = step
        copy_in(offset, cur_len, x1_gm, x2_gm, in_queue_x1, in_queue_x2)
        compute_muls_fixed(offset, cur_len, scale, in_queue_x1, in_queue_x2, out_queue_y)
        pipe.SyncCompute()  # <a-synccompute>
        copy_out(offset, cur_len, y_gm, out_queue_y)


@asc.jit
def article_no_sync(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress,
                    total_length: int, block_length: int, scale: float):
    """Defect A fixed (no SyncIO/SyncCompute: the queues synchronise); Compute still as written."""
    x1_gm = asc.GlobalTensor()
    x2_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x1_gm.set_global_buffer(x1, total_length)
    x2_gm.set_global_buffer(x2, total_length)
    y_gm.set_global_buffer(y, total_length)
    pipe = asc.TPipe()
    in_queue_x1 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_queue_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_queue_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_queue_x1, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    pipe.init_buffer(que=in_queue_x2, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    pipe.init_buffer(que=out_queue_y, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    core_idx = asc.get_block_idx()
    core_start = core_idx * block_length
    core_end = core_start + block_length
    if core_end > total_length:
        core_end = total_length
    step = block_length
    for offset in range(core_start, core_end, step):
        cur_len = core_end - offset
        if offset + step < core_end:
            cur_len = step
        copy_in(offset, cur_len, x1_gm, x2_gm, in_queue_x1, in_queue_x2)
        compute(offset, cur_len, scale, in_queue_x1, in_queue_x2, out_queue_y)
        copy_out(offset, cur_len, y_gm, out_queue_y)


# ---------------------------------------------------------------------------------------------
# Compute with Muls fixed (Add still reversed), and with both fixed
# ---------------------------------------------------------------------------------------------

@asc.jit
def compute_muls_fixed(offset: int, length: int, scale: float, in_queue_x1: asc.TQue, in_queue_x2: asc.TQue,
                       out_queue_y: asc.TQue):
    x1_local = in_queue_x1.deque(asc.half)
    x2_local = in_queue_x2.deque(asc.half)
    y_local = out_queue_y.alloc_tensor(asc.half)
    asc.add(x1_local, x2_local, y_local, length)  # <b2-add>  Add(x1Local, x2Local, yLocal, length);
    asc.muls(y_local, y_local, scale, length)  # <b2-muls>  Muls(yLocal, yLocal, (half)scale, length);
    out_queue_y.enque(y_local)
    in_queue_x1.free_tensor(x1_local)
    in_queue_x2.free_tensor(x2_local)


@asc.jit
def compute_fixed(offset: int, length: int, scale: float, in_queue_x1: asc.TQue, in_queue_x2: asc.TQue,
                  out_queue_y: asc.TQue):
    x1_local = in_queue_x1.deque(asc.half)
    x2_local = in_queue_x2.deque(asc.half)
    y_local = out_queue_y.alloc_tensor(asc.half)
    asc.add(y_local, x1_local, x2_local, length)  # <e-add>  Add(yLocal, x1Local, x2Local, length);
    asc.muls(y_local, y_local, scale, length)
    out_queue_y.enque(y_local)
    in_queue_x1.free_tensor(x1_local)
    in_queue_x2.free_tensor(x2_local)


@asc.jit
def article_muls_fixed(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress,
                       total_length: int, block_length: int, scale: float):
    """Defects A and C fixed: runs to the end, and y is NaN (B: y_local is never written)."""
    x1_gm = asc.GlobalTensor()
    x2_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x1_gm.set_global_buffer(x1, total_length)
    x2_gm.set_global_buffer(x2, total_length)
    y_gm.set_global_buffer(y, total_length)
    pipe = asc.TPipe()
    in_queue_x1 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_queue_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_queue_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_queue_x1, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    pipe.init_buffer(que=in_queue_x2, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    pipe.init_buffer(que=out_queue_y, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    core_idx = asc.get_block_idx()
    core_start = core_idx * block_length
    core_end = core_start + block_length
    if core_end > total_length:
        core_end = total_length
    step = block_length
    for offset in range(core_start, core_end, step):
        cur_len = core_end - offset
        if offset + step < core_end:
            cur_len = step
        copy_in(offset, cur_len, x1_gm, x2_gm, in_queue_x1, in_queue_x2)
        compute_muls_fixed(offset, cur_len, scale, in_queue_x1, in_queue_x2, out_queue_y)
        copy_out(offset, cur_len, y_gm, out_queue_y)


@asc.jit
def article_order_fixed(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress,
                        total_length: int, block_length: int, scale: float):
    """Defects A, B, C fixed; still the whole block in UB (D) and plain DataCopy of the last core (E)."""
    x1_gm = asc.GlobalTensor()
    x2_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x1_gm.set_global_buffer(x1, total_length)
    x2_gm.set_global_buffer(x2, total_length)
    y_gm.set_global_buffer(y, total_length)
    pipe = asc.TPipe()
    in_queue_x1 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_queue_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_queue_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_queue_x1, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    pipe.init_buffer(que=in_queue_x2, num=BUFFER_NUM, len=block_length * asc.half.sizeof())  # <d2-init-x2>
    pipe.init_buffer(que=out_queue_y, num=BUFFER_NUM, len=block_length * asc.half.sizeof())
    core_idx = asc.get_block_idx()
    core_start = core_idx * block_length
    core_end = core_start + block_length
    if core_end > total_length:
        core_end = total_length
    step = block_length
    for offset in range(core_start, core_end, step):
        cur_len = core_end - offset
        if offset + step < core_end:
            cur_len = step
        copy_in(offset, cur_len, x1_gm, x2_gm, in_queue_x1, in_queue_x2)
        compute_fixed(offset, cur_len, scale, in_queue_x1, in_queue_x2, out_queue_y)
        copy_out(offset, cur_len, y_gm, out_queue_y)


# ---------------------------------------------------------------------------------------------
# The corrected kernel: UB tiles of TILE_LENGTH, DataCopyPad for an unaligned tail, dst first
# ---------------------------------------------------------------------------------------------

@asc.jit
def load(dst: asc.LocalTensor, src: asc.GlobalTensor, n: int):
    nbytes = n * src.dtype.sizeof()
    if nbytes % 32 == 0:
        asc.data_copy(dst, src, n)
    else:
        asc.data_copy_pad(dst, src, asc.DataCopyExtParams(1, nbytes, 0, 0, 0),
                          asc.DataCopyPadExtParams(src.dtype, False, 0, 0, 0))


@asc.jit
def store(dst: asc.GlobalTensor, src: asc.LocalTensor, n: int):
    nbytes = n * dst.dtype.sizeof()
    if nbytes % 32 == 0:
        asc.data_copy(dst, src, n)
    else:
        asc.data_copy_pad(dst, src, asc.DataCopyExtParams(1, nbytes, 0, 0, 0))


@asc.jit
def tile(offset: int, length: int, scale: float, x1_gm: asc.GlobalTensor, x2_gm: asc.GlobalTensor,
         y_gm: asc.GlobalTensor, in_queue_x1: asc.TQue, in_queue_x2: asc.TQue, out_queue_y: asc.TQue):
    x1_local = in_queue_x1.alloc_tensor(asc.half)
    x2_local = in_queue_x2.alloc_tensor(asc.half)
    load(x1_local, x1_gm[offset:], length)
    load(x2_local, x2_gm[offset:], length)
    in_queue_x1.enque(x1_local)
    in_queue_x2.enque(x2_local)
    compute_fixed(offset, length, scale, in_queue_x1, in_queue_x2, out_queue_y)
    y_local = out_queue_y.deque(asc.half)
    store(y_gm[offset:], y_local, length)
    out_queue_y.free_tensor(y_local)


@asc.jit
def article_fixed(x1: asc.GlobalAddress, x2: asc.GlobalAddress, y: asc.GlobalAddress,
                  total_length: int, block_length: int, scale: float, TILE_LENGTH: asc.ConstExpr[int]):
    """All five defects fixed: the same tiling and structure, tiles of TILE_LENGTH in UB."""
    x1_gm = asc.GlobalTensor()
    x2_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    x1_gm.set_global_buffer(x1, total_length)
    x2_gm.set_global_buffer(x2, total_length)
    y_gm.set_global_buffer(y, total_length)
    pipe = asc.TPipe()
    in_queue_x1 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    in_queue_x2 = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_queue_y = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_queue_x1, num=BUFFER_NUM, len=TILE_LENGTH * asc.half.sizeof())
    pipe.init_buffer(que=in_queue_x2, num=BUFFER_NUM, len=TILE_LENGTH * asc.half.sizeof())
    pipe.init_buffer(que=out_queue_y, num=BUFFER_NUM, len=TILE_LENGTH * asc.half.sizeof())
    core_idx = asc.get_block_idx()
    core_start = core_idx * block_length
    core_end = core_start + block_length
    if core_end > total_length:
        core_end = total_length
    for offset in range(core_start, core_end, TILE_LENGTH):
        cur_len = core_end - offset
        if offset + TILE_LENGTH < core_end:
            cur_len = TILE_LENGTH
        tile(offset, cur_len, scale, x1_gm, x2_gm, y_gm, in_queue_x1, in_queue_x2, out_queue_y)


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------

SCALE = 1.5
TILE = 4096  # article_fixed: 3 queues x 2 x 8 KiB = 48 KiB of UB


def host(total: int, core_num: int, *extra):
    """Launch arguments (x1, x2, y, totalLength, blockLength, scale) for section 4.3's tiling."""
    block_length, _ = article_tiling(total, core_num)

    def build(n: int):
        x1, x2 = rand(n, "float16", 1), rand(n, "float16", 2)
        return (x1, x2, np.zeros(n, "float16"), n, block_length, SCALE, *extra), {}

    return build


def cores(total: int, core_num: int) -> int:
    return article_tiling(total, core_num)[1]


def y_is_nan(arrays: dict) -> None:
    assert arrays["y"].size and bool(np.isnan(arrays["y"].astype("float32")).all()), arrays["y"][:8]


def y_is_correct(arrays: dict) -> None:
    x1, x2, y = arrays["x1"], arrays["x2"], arrays["y"]
    expected = ((x1 + x2) * np.float16(SCALE)).astype("float16")
    np.testing.assert_array_equal(y, expected)


N_SMALL, CORES_SMALL = 2048, 8          # blockLength 256: every core's block is 32 B aligned
N_UB, CORES_UB = 1_000_000, 40          # D: blockLength 25008
N_TAIL, CORES_TAIL = 1000, 8            # E: blockLength 128, the last core gets 104
B = CORES_SMALL                         # every core meets the defect: merged count
ALL_SMALL = tuple(range(CORES_SMALL))
SYNC_API = ("enque", "deque", "set_flag", "wait_flag", "pipe_barrier")
Y_UB = 2 * 2 * 256 * 2                  # y_local's UB address: after 2 queues x 2 buffers x 512 B
BLOCK_BYTES = 256 * 2

CASES = [
    Case("article/literal", article_kernel, cores(N_SMALL, CORES_SMALL), N_SMALL, host(N_SMALL, CORES_SMALL),
         expect=(Expect("api", "api", ("a-syncio",), cores=(0,), says=("SyncIO",) + SYNC_API),),
         defect="A: pipe.SyncIO() does not exist"),
    Case("article/no-syncio", article_no_syncio, cores(N_SMALL, CORES_SMALL), N_SMALL, host(N_SMALL, CORES_SMALL),
         expect=(Expect("api", "api", ("a-synccompute",), cores=(0,), says=("SyncCompute",) + SYNC_API),
                 Expect("initcheck", "uninitialized read", ("b2-add",), cores=(0,), pipes=("V",), mem="UB",
                        buffer="UB", span=(Y_UB, Y_UB + BLOCK_BYTES), count=1),
                 Expect("initcheck", "uninitialized read", ("b2-muls",), cores=(0,), pipes=("V",), mem="UB",
                        buffer="UB", span=(Y_UB, Y_UB + BLOCK_BYTES), count=1)),
         defect="A: pipe.SyncCompute() does not exist (B shows before it)"),
    Case("article/no-sync", article_no_sync, cores(N_SMALL, CORES_SMALL), N_SMALL, host(N_SMALL, CORES_SMALL),
         expect=(Expect("initcheck", "uninitialized read", ("b-add",), cores=(0,), pipes=("V",), mem="UB",
                        buffer="UB", span=(Y_UB, Y_UB + BLOCK_BYTES), count=1, says=("destination first",)),
                 Expect("api", "api", ("c-muls",), cores=(0,), says=("scalar", "source tensor comes second"))),
         defect="B: Add(x1Local, x2Local, yLocal) reads yLocal; C: Muls(yLocal, scale, yLocal) swaps scalar and tensor"),
    Case("article/muls-fixed", article_muls_fixed, cores(N_SMALL, CORES_SMALL), N_SMALL, host(N_SMALL, CORES_SMALL),
         expect=(Expect("initcheck", "uninitialized read", ("b2-add",), cores=ALL_SMALL, pipes=("V",), mem="UB",
                        buffer="UB", span=(Y_UB, Y_UB + BLOCK_BYTES), count=B),
                 Expect("initcheck", "uninitialized read", ("b2-muls",), cores=ALL_SMALL, pipes=("V",), mem="UB",
                        buffer="UB", span=(Y_UB, Y_UB + BLOCK_BYTES), count=B)),
         check=y_is_nan, defect="B: x1Local = x2Local + never-written yLocal; Muls then scales the never-written "
                                "yLocal in place: every element of y is NaN"),
    Case("article/ub-overflow", article_kernel, cores(N_UB, CORES_UB), N_UB, host(N_UB, CORES_UB),
         expect=(Expect("memcheck", "ub-overflow", ("d-init-x2",), cores=(0,),
                        says=("100032 B", "shrink the tile length")),),
         defect="D: InitBuffer(..., blockLength * sizeof(half)) with blockLength 25008"),
    Case("article/ub-overflow-order-fixed", article_order_fixed, cores(N_UB, CORES_UB), N_UB, host(N_UB, CORES_UB),
         expect=(Expect("memcheck", "ub-overflow", ("d2-init-x2",), cores=(0,), says=("100032 B",)),),
         defect="D, also once the argument orders are fixed"),
    Case("article/unaligned-tail", article_order_fixed, cores(N_TAIL, CORES_TAIL), N_TAIL, host(N_TAIL, CORES_TAIL),
         expect=(Expect("memcheck", "unaligned-length", ("e-copy-in",), cores=(7,),
                        says=("104 * 2 = 208 B", "data_copy_pad", "round it down to 96")),),
         defect="E: DataCopy(x1Local, x1Gm[offset], 104) on the last core"),
    Case("article/unaligned-tail-npu", article_order_fixed, cores(N_TAIL, CORES_TAIL), N_TAIL,
         host(N_TAIL, CORES_TAIL), strict=False,
         expect=(Expect("initcheck", "uninitialized read", ("e-add",), cores=(7,), pipes=("V",), mem="UB",
                        buffer="UB"),  # x1_local[96:104]; spans: see test_uninitialized_read_range_is_the_unwritten_bytes
                 Expect("initcheck", "uninitialized read", ("e-add",), cores=(7,), pipes=("V",), mem="UB",
                        buffer="UB"),  # x2_local[96:104]
                 Expect("initcheck", "output never written", (), mem="GM", buffer="y", span=(992 * 2, 1000 * 2),
                        says=("rounded down",))),
         defect="E on the NPU: the DataCopy round-down drops y[992:1000]"),
    Case("article/fixed", article_fixed, cores(N_SMALL, CORES_SMALL), N_SMALL, host(N_SMALL, CORES_SMALL, TILE),
         check=y_is_correct),
    Case("article/fixed-unaligned", article_fixed, cores(N_TAIL, CORES_TAIL), N_TAIL, host(N_TAIL, CORES_TAIL, TILE),
         check=y_is_correct),
    Case("article/fixed-1e6-40", article_fixed, cores(N_UB, CORES_UB), N_UB, host(N_UB, CORES_UB, TILE),
         check=y_is_correct),
]
