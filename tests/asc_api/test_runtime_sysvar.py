"""System variables, scalar bit helpers, trap and static_assert; expected values from the asc-devkit pages."""

import numpy as np
import pytest

from fusekit import asc

PAGES = "docs/zh/api/SIMD-API/基础API/标量计算/"


def run_scalar(fn, *args):
    """Run fn(*args) inside a one-core kernel and return its value."""
    out = {}

    @asc.jit
    def k():
        out["v"] = fn(*args)

    k[1]()
    return out["v"]


# (value, expected) from each page's 调用示例 / 约束说明
@pytest.mark.parametrize("value, expect", [(0x0100000000000020, 7), (0, 64), (1, 63), (2**64 - 1, 0)])
def test_count_leading_zero(value, expect):  # CountLeadingZero.md: 0x0100000000000020 -> 7, 0 -> 64
    assert run_scalar(asc.scalar_count_leading_zero, value) == expect


@pytest.mark.parametrize("value, expect", [(0, -1), (-1, -1), (0x7FFFFFFFFFFFFFFF, 0), (-(2**63), 0), (1, 62),
                                           (0x00F0000000000000, 7), (0x0100000000000020, 6)])
def test_count_bits_same_as_sign_bit(value, expect):  # CountBitsCntSameAsSignBit.md, 调用示例
    assert run_scalar(asc.count_bits_cnt_same_as_sign_bit, value) == expect


@pytest.mark.parametrize("value, bit, expect", [(0x1000000000000100, 1, 8), (0, 1, -1), (2**64 - 1, 0, -1),
                                                (0b0111, 0, 3), (1 << 63, 1, 63)])
def test_get_sff_value(value, bit, expect):  # GetSFFValue.md: 0x1000000000000100 -> 8; none found -> -1
    assert run_scalar(asc.scalar_get_sff_value, value, bit) == expect


@pytest.mark.parametrize("value, bit, expect", [(0xF0F0, 1, 8), (0xF0F0, 0, 56), (0, 1, 0), (2**64 - 1, 1, 64)])
def test_get_count_of_value(value, bit, expect):  # GetBitCount.md: count of bits equal to countValue
    assert run_scalar(asc.scalar_get_count_of_value, value, bit) == expect


def test_bit_helpers_refuse_count_value_other_than_0_or_1():
    with pytest.raises(asc.KernelError, match="count_value"):
        run_scalar(asc.scalar_get_sff_value, 5, 2)


@pytest.mark.parametrize("value, mode, dtype, expect", [
    (2.5, "CAST_RINT", "int32", 2), (2.5, "CAST_ROUND", "int32", 3), (-2.5, "CAST_FLOOR", "int32", -3),
    (-2.5, "CAST_CEIL", "int32", -2), (-2.7, "CAST_TRUNC", "int32", -2), (1e10, "CAST_RINT", "int32", 2**31 - 1),
    (65520.0, "CAST_RINT", "float16", float("inf")), (1.0 + 2**-11, "CAST_RINT", "float16", 1.0)])
def test_scalar_cast(value, mode, dtype, expect):
    # independent model: Python rounding rules; float32 -> int32 saturates, fp16 rounds to nearest even
    got = run_scalar(asc.scalar_cast, value, getattr(asc, dtype), asc.RoundMode[mode])
    assert got == expect


def test_scalar_cast_refuses_other_targets():
    with pytest.raises(asc.KernelError, match="int32 or half"):
        run_scalar(asc.scalar_cast, 1.0, asc.float32, asc.RoundMode.CAST_RINT)


def test_system_variables_of_a_vector_only_launch():
    seen = []

    @asc.jit
    def k():
        seen.append((int(asc.get_sub_block_idx()), int(asc.get_sub_block_num()),
                     int(asc.get_data_block_size_in_bytes())))
        c0 = asc.get_system_cycle()
        asc.get_arch_version(0)
        asc.print_time_stamp(7)
        assert asc.get_system_cycle() > c0

    result = k[2]()
    # GetSubBlockNum(ISASI).md 表2: KERNEL_TYPE_AIV_ONLY -> 1; a data block is 32 B
    assert seen == [(0, 1, 32), (0, 1, 32)]
    assert "get_system_cycle" in [i.op for i in result.trace.cores[0]]


def test_trap_stops_the_kernel_at_its_line():
    @asc.jit
    def k():
        asc.trap()

    with pytest.raises(asc.KernelError, match="trap") as info:
        k[1]()
    assert info.value.kind == "trap" and info.value.file == __file__


def test_static_assert():
    @asc.jit
    def k(n: asc.ConstExpr[int]):
        asc.static_assert(n % 16 == 0, "tile must be a multiple of 16")

    k[1](32)
    with pytest.raises(asc.KernelError, match="tile must be a multiple of 16"):
        k[1](8)
