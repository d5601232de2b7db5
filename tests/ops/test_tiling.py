"""Host tiling: coverage, 32-byte core boundaries, UB budget, small inputs, 32-bit limits."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusekit import tiling
from fusekit.asc import dtypes
from fusekit.soc import SOCS, get_soc

DTYPES = ["float16", "float32", "bfloat16"]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 2**31 - 1) | st.integers(0, 5000), dtype=st.sampled_from(DTYPES),
       buffer_num=st.integers(1, 4), num_queues=st.integers(1, 4), scratch=st.sampled_from([0, 8]),
       soc=st.sampled_from(sorted(SOCS)), cores=st.none() | st.integers(1, 100))
def test_plan_properties(n, dtype, buffer_num, num_queues, scratch, soc, cores):
    plan = tiling.compute_tiling(n, dtype, num_queues=num_queues, buffer_num=buffer_num, soc=soc, core_num=cores,
                                 scratch_bytes_per_element=scratch)
    size = dtypes.from_name(dtype).sizeof()
    spec = get_soc(soc)
    if n == 0:
        assert plan.block_dim == 0
        return
    assert 1 <= plan.block_dim <= (cores or spec.vector_cores)
    # every element covered exactly once, in order: consecutive core ranges, consecutive tiles
    position = 0
    previous_last_block = -1
    for core in range(plan.block_dim):
        start, length = plan.core_range(core)
        assert start == position and length > 0
        assert start * size % 512 == 0, "each core starts on a 512-byte GM boundary"
        first_block, last_block = start * size // 32, ((start + length) * size - 1) // 32
        assert first_block > previous_last_block, "two cores touch the same 32-byte GM block"
        previous_last_block = last_block
        full, tail = (plan.last_tile_num, plan.last_tail_length) if core == plan.block_dim - 1 else \
            (plan.tile_num, plan.tail_length)
        assert full * plan.tile_length + tail == length and 0 <= tail < plan.tile_length
        if length // plan.tile_length < 64:  # walk the tiles themselves when there are few
            tile_pos = start
            for first, count in plan.tiles(core):
                assert first == tile_pos and 0 < count <= plan.tile_length
                tile_pos += count
            assert tile_pos == start + length
        position += length
    assert position == n
    # UB never exceeded: the whole footprint fits the tiling budget and the hardware UB
    assert plan.tile_length * size % 512 == 0
    assert plan.ub_bytes <= spec.ub_tiling_bytes <= spec.ub_bytes
    assert plan.ub_bytes == num_queues * buffer_num * plan.tile_length * size + scratch * plan.tile_length


def test_small_inputs_use_fewer_cores():
    # one 512-byte GM block per core at least: 1000 float16 elements (2000 B) run on 4 cores
    assert tiling.compute_tiling(200, "float16").block_dim == 1
    assert tiling.compute_tiling(1000, "float16").block_dim == 4
    assert tiling.compute_tiling(10 * 256, "float16").block_dim == 10
    assert tiling.compute_tiling(2**24, "float16").block_dim == 48
    assert tiling.compute_tiling(2**24, "float16", soc="Ascend910B3").block_dim == 40
    assert tiling.compute_tiling(2**24, "float16", core_num=7).block_dim == 7


def test_article_example_100_float32_on_8_cores_is_split_on_32_byte_blocks():
    plan = tiling.compute_tiling(100 * 1024, "float32", core_num=8)
    assert plan.block_length * 4 % 32 == 0
    assert plan.core_range(plan.block_dim - 1)[0] + plan.last_block_length == 100 * 1024


def test_zero_launches_nothing():
    plan = tiling.compute_tiling(0, "float16")
    assert plan.block_dim == 0 and plan.ub_bytes == 0
    with pytest.raises(IndexError):
        plan.core_range(0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(total_length=-1), "total_length"),
    (dict(total_length=2**31), "split larger inputs"),
    (dict(total_length=10, buffer_num=0), "buffer_num"),
    (dict(total_length=10, buffer_num=9), "buffer_num"),
    (dict(total_length=10, core_num=0), "core_num"),
    (dict(total_length=10, core_num=65536), "core_num"),
    (dict(total_length=10, tile_length=100), "tile_length=100 must be a positive multiple of 256"),
    (dict(total_length=10, tile_length=256 * 1000), "at most"),
    (dict(total_length=10, soc="ascend910b1"), "Did you mean 'Ascend910B1'"),
])
def test_bad_parameters(kwargs, match):
    kwargs = {"dtype": "float16", **kwargs}
    with pytest.raises(ValueError, match=match):
        tiling.compute_tiling(kwargs.pop("total_length"), **kwargs)


def test_forced_tile_length_is_used():
    plan = tiling.compute_tiling(10000, "float16", core_num=1, tile_length=1024)
    assert plan.tile_length == 1024 and plan.tile_num == 9


def test_split_launches_covers_everything_on_512_byte_boundaries():
    parts = tiling.split_launches(10_000, "float16", max_elements=3000)
    assert parts == [(0, 2816), (2816, 2816), (5632, 2816), (8448, 1552)]
    assert all(first * 2 % 512 == 0 for first, _ in parts)
    assert tiling.split_launches(0, "float16") == []
    big = tiling.split_launches(2**33 + 5, "float16")
    assert sum(count for _, count in big) == 2**33 + 5
    assert all(count <= tiling.MAX_LAUNCH_ELEMENTS for _, count in big)


def test_kernel_args_are_the_device_fields():
    plan = tiling.compute_tiling(100_000, "float32")
    assert set(plan.kernel_args()) == {"block_length", "tile_num", "tail_length", "last_block_length",
                                       "last_tile_num", "last_tail_length"}
