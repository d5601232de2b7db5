"""fusekit.asc.effect.strided: a regular lane index read (and written) through a view gives what numpy's fancy
indexing gives, and anything else is left to fancy indexing."""

import numpy as np
import pytest

from fusekit.asc.effect import strided


def _runs(start, stride, runs, m):
    return (start + stride * np.arange(runs)[:, None] + np.arange(m)).reshape(-1)


@pytest.mark.parametrize("start, stride, runs, m", [(0, 128, 22, 64), (5, 64, 3, 64), (16, 8, 4, 64), (0, 0, 5, 8),
                                                    (7, 1, 1, 40), (3, 9, 6, 9), (0, 300, 4, 2)])
def test_regular_runs_read_as_fancy_indexing_does(start, stride, runs, m):
    a = np.random.default_rng(0).random((3, 3000)).astype(np.float32)
    index = _runs(start, stride, runs, m)
    view = strided(a, index)
    assert view is not None
    assert np.array_equal(view.reshape(3, -1), a[..., index])


@pytest.mark.parametrize("start, stride, runs, m", [(0, 128, 22, 64), (3, 9, 6, 9), (0, 300, 4, 2)])
def test_regular_runs_write_as_fancy_indexing_does(start, stride, runs, m):
    a = np.zeros((3, 3000), np.float32)
    b = a.copy()
    index = _runs(start, stride, runs, m)
    values = np.arange(3 * index.size, dtype=np.float32).reshape(3, -1)
    view = strided(a, index, write=True)
    view[...] = values.reshape(view.shape)
    b[..., index] = values
    assert np.array_equal(a, b)


def test_irregular_overlapping_or_out_of_range_lanes_are_not_viewed():
    a = np.zeros((2, 100), np.float32)
    assert strided(a, np.array([0, 1, 2, 5, 6, 9])) is None            # runs of different lengths
    assert strided(a, np.array([0, 1, 2, 3, 1, 2, 3, 4]), write=True) is None  # overlapping runs: no write view
    assert strided(a, _runs(90, 8, 3, 8)) is None                        # past the end
    assert strided(np.zeros(100, np.float32), np.arange(10)) is None     # one core: fancy indexing is as fast


@pytest.mark.parametrize("rep, blk", [(1, 0), (16, 0), (16, 2), (3, 1)])
def test_repeats_of_eight_blocks_read_as_fancy_indexing_does(rep, blk):
    # float32: 8 elements per 32 B block; lane k of repeat r is r * rep * 8 + (k // 8) * blk * 8 + k % 8
    a = np.random.default_rng(1).random((4, 4000)).astype(np.float32)
    k = np.arange(64)
    index = (np.arange(20)[:, None] * rep * 8 + (k // 8) * blk * 8 + k % 8).reshape(-1)
    view = strided(a, index)
    assert view is not None
    assert np.array_equal(view.reshape(4, -1), a[..., index])
    if blk == 0:  # a block read 8 times: never a destination
        assert strided(a, index, write=True) is None
