"""Data-movement edge cases with clear errors (issue 8, item J: zero-length copies, DataCopyPad stride
units, unaligned UB sub-tensors).

Rules and sources:
- count 0: DataCopyPad with blockCount or blockLen 0 is a NOP on A2/A3 (AD-API DataCopyPad（GMToUB…）.md
  and （UBToGM…）.md, 约束说明); DataCopy of count * sizeof(T) = 0 B moves nothing (AD-API DataCopy
  （GM与UB连续数据搬运）.md: the amount is count * sizeof(T) rounded down to 32 B). A copy that moves no
  bytes touches no memory, so it has no bounds or alignment to break.
- strides: GM -> UB srcStride is in bytes and dstStride in 32 B blocks; UB -> GM the reverse (the
  same pages, 参数说明).
- sub-tensors: ``operator[]`` takes any element offset up to the tensor's size (AD-API
  LocalTensor/operator[].md); UB operands of instructions start on 32 B (AD-API 通用说明和约束.md).
"""

from __future__ import annotations


import numpy as np
import pytest

from fusekit import asc
from support import gm_view, line_of, ub_buf


# -- count 0 ---------------------------------------------------------------------------------

@asc.jit
def zero_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, CASE: asc.ConstExpr[str]):
    xg, yg = gm_view(x, 100), gm_view(y, 100)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float16, 64)
    if CASE == "copy-in":
        asc.data_copy(t, xg[112:], 0)                 # past the end of the view, but moves nothing
    elif CASE == "copy-out":
        asc.data_copy(yg[112:], t, 0)
    elif CASE == "copy-unaligned-ub":
        asc.data_copy(t[3:], xg, 0)                   # a UB address that could not move data
    elif CASE == "rounded-to-zero":
        asc.data_copy(t, xg[112:], 8)                 # 16 B, rounded down to 0 B with strict=False
    elif CASE == "pad-count":
        asc.data_copy_pad(t, xg[112:], asc.DataCopyExtParams(0, 64, 0, 0, 0),
                          asc.DataCopyPadExtParams(asc.float16, False, 0, 0, 0))
    elif CASE == "pad-len":
        asc.data_copy_pad(yg[112:], t, asc.DataCopyExtParams(3, 0, 0, 0, 0))
    elif CASE == "pad-unaligned-ub":
        asc.data_copy_pad(t[3:], xg, asc.DataCopyExtParams(1, 0, 0, 0, 0),
                          asc.DataCopyPadExtParams(asc.float16, False, 0, 0, 0))
    elif CASE == "dtype":
        asc.data_copy(t.reinterpret_cast(asc.int16), xg, 0)  # <dtype>


@pytest.mark.parametrize("case", ["copy-in", "copy-out", "copy-unaligned-ub", "pad-count", "pad-len",
                                  "pad-unaligned-ub"])
def test_zero_length_copies_are_no_ops_for_both_apis(case):
    x, y = np.ones(100, np.float16), np.zeros(100, np.float16)
    trace = zero_kernel[1](x, y, case).trace
    (instr,) = [i for i in trace if i.op.startswith("data_copy")]
    assert (instr.reads, instr.writes, instr.count) == ((), (), 0)
    assert not y.any()


def test_a_count_rounded_down_to_zero_bytes_is_a_no_op_without_strict():
    trace = zero_kernel[1](np.ones(100, np.float16), np.zeros(100, np.float16), "rounded-to-zero",
                           strict=False).trace
    (instr,) = [i for i in trace if i.op == "data_copy"]
    assert (instr.reads, instr.writes) == ((), ())


def test_zero_length_copy_still_checks_its_types():
    with pytest.raises(asc.KernelError, match="dtype mismatch") as info:
        zero_kernel[1](np.ones(100, np.float16), np.zeros(100, np.float16), "dtype")
    assert info.value.line == line_of(zero_kernel, "dtype")


# -- DataCopyPad stride units ----------------------------------------------------------------

@asc.jit
def stride_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, COUNT: asc.ConstExpr[int], SRC: asc.ConstExpr[int],
                  DST: asc.ConstExpr[int], OUT: asc.ConstExpr[bool]):
    xg, yg = gm_view(x, 256), gm_view(y, 256)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float32, 64)
    if OUT:
        asc.data_copy_pad(yg, t, asc.DataCopyExtParams(COUNT, 32, SRC, DST, 0))
    else:
        asc.data_copy_pad(t, xg, asc.DataCopyExtParams(COUNT, 32, SRC, DST, 0),
                          asc.DataCopyPadExtParams(asc.float32, False, 0, 0, 0))


def run_stride(count, src, dst, out):
    stride_kernel[1](np.ones(256, np.float32), np.zeros(256, np.float32), count, src, dst, out)


def test_ub_stride_given_in_bytes_gets_a_unit_hint():
    # GM -> UB, 4 blocks of 32 B into a 256 B UB tensor; dst_stride=32 meant as bytes is 32 blocks = 1 KiB
    with pytest.raises(asc.KernelError, match=r"dst_stride=32 is counted in 32-byte BLOCKS on the UB side "
                                              r"\(1024 B between blocks\), not bytes \(check the stride's unit\); "
                                              r"if you meant 32 bytes, pass dst_stride=1"):
        run_stride(4, 0, 32, False)
    run_stride(4, 0, 1, False)  # the stride in blocks fits: 4 x (32 + 32) B = 256 B


def test_ub_source_stride_of_ub_to_gm_gets_the_same_hint():
    with pytest.raises(asc.KernelError, match=r"src_stride=64 is counted in 32-byte BLOCKS.*pass src_stride=2"):
        run_stride(2, 64, 0, True)


def test_gm_stride_given_in_blocks_gets_a_unit_hint():
    # float32 blocks 1 byte apart on GM cannot be element-aligned: the stride is in bytes there
    with pytest.raises(asc.KernelError, match=r"src_stride is counted in BYTES on the GM side; if you meant 1 "
                                              r"blocks of 32 B, pass src_stride=32"):
        run_stride(2, 1, 0, False)
    with pytest.raises(asc.KernelError, match=r"dst_stride is counted in BYTES on the GM side"):
        run_stride(2, 0, 2, True)


def test_gm_side_out_of_bounds_names_the_byte_unit():
    # 8 blocks of 32 B with a 1000 B gap run past the 1 KiB GM view
    with pytest.raises(asc.KernelError, match=r"src_stride=1000 is counted in BYTES on the GM side"):
        run_stride(2, 1000, 0, False)


# -- unaligned UB sub-tensors ------------------------------------------------------------------

@asc.jit
def slice_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, CASE: asc.ConstExpr[str]):
    xg, yg = gm_view(x, 64), gm_view(y, 64)
    pipe = asc.TPipe()
    t = ub_buf(pipe, asc.float16, 64)
    asc.data_copy(t, xg, 64)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    part = t[3:]  # <slice>
    if CASE == "add":
        asc.add(part, part, part, 16)  # <use>
    elif CASE == "copy":
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(yg, part, 16)  # <use-copy>
    elif CASE == "scalar":
        asc.set_flag(asc.HardEvent.MTE2_S, 0)
        asc.wait_flag(asc.HardEvent.MTE2_S, 0)
        part.set_value(1, part.get_value(0) + 100)    # element 3 -> element 4: fine on the scalar unit
        asc.set_flag(asc.HardEvent.S_MTE3, 0)
        asc.wait_flag(asc.HardEvent.S_MTE3, 0)
        asc.data_copy(yg, t, 64)
    elif CASE == "cast":
        asc.add(part.reinterpret_cast(asc.int16), t.reinterpret_cast(asc.int16), t.reinterpret_cast(asc.int16), 16)
    elif CASE == "past-end":
        t[65:]  # <past-end>


@pytest.mark.parametrize("case, use", [("add", "use"), ("copy", "use-copy"), ("cast", None)])
def test_unaligned_sub_tensor_is_reported_where_it_was_made(case, use):
    with pytest.raises(asc.KernelError, match=r"starts at UB byte 6, not 32-byte aligned") as info:
        slice_kernel[1](np.ones(64, np.float16), np.zeros(64, np.float16), case)
    err = info.value
    assert (err.file, err.line, err.kind) == (__file__, line_of(slice_kernel, "slice"), "misaligned")
    if use:
        assert f"{__file__}:{line_of(slice_kernel, use)}" in str(err)


def test_unaligned_sub_tensor_works_for_scalar_access():
    x = np.arange(64, dtype=np.float16)
    y = np.zeros(64, np.float16)
    slice_kernel[1](x, y, "scalar")
    expected = x.copy()
    expected[4] = x[3] + 100  # t[3:].get_value(0) is element 3; set_value(1) writes element 4
    np.testing.assert_array_equal(y, expected)


def test_sub_tensor_offset_past_the_length_is_reported_at_the_slice():
    with pytest.raises(asc.KernelError, match=r"offset must be in \[0, 64\]") as info:
        slice_kernel[1](np.ones(64, np.float16), np.zeros(64, np.float16), "past-end")
    assert info.value.line == line_of(slice_kernel, "past-end")


def test_hand_placed_unaligned_local_tensor_is_reported_where_it_was_placed():
    @asc.jit
    def k(x: asc.GlobalAddress):
        t = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 48, 64)  # <place>
        asc.data_copy(t, gm_view(x, 64), 64)

    with pytest.raises(asc.KernelError, match="starts at UB byte 48, not 32-byte aligned") as info:
        k[1](np.ones(64, np.float16))
    assert info.value.line == line_of(k, "place")
