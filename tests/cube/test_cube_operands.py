"""The cube operands' strided form (fusekit.asc.cube.operands.strided): where it exists, the strided view reads and
writes exactly the elements a gather by index does, in the same order; where the offsets are no such view it is
None and the gather is used."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusekit.asc.cube import layout
from fusekit.asc.cube.operands import Elements, _view, strided


class _Tensor:
    """A stand-in with the one method Elements uses: the array of its first ``count`` elements."""

    def __init__(self, data):
        self.data = data

    def array(self, count):
        return self.data[..., :count]

    def __getitem__(self, start):  # as_issued takes a GlobalTensor as tensor[0]
        return self


def _same_as_gather(offsets, lanes=3):
    form = strided(offsets)
    data = np.random.default_rng(1).standard_normal((lanes, int(offsets.max()) + 5)).astype(np.float32)
    if form is not None:
        assert np.array_equal(_view(data, form).reshape(lanes, -1), data[..., offsets.ravel()])
    got = Elements(_Tensor(data), offsets).read()
    assert np.array_equal(got, data[..., offsets])
    values = np.arange(lanes * offsets.size, dtype=np.float32).reshape((lanes,) + offsets.shape)
    a, b = data.copy(), data.copy()
    Elements(_Tensor(a), offsets).write(values)
    b[..., offsets] = values
    assert np.array_equal(a, b)
    return form


@pytest.mark.parametrize("offsets", [layout.zz(32, 64, 8), layout.zz(16, 32, 16), layout.zn(64, 48, 8),
                                     layout.zn(32, 32, 16), layout.l0c(48, 32), layout.nz(20, 24, 8, 8, 24 * 8)],
                         ids=["zz-b32", "zz-b16", "zn-b32", "zn-b16", "l0c", "nz"])
def test_the_fractal_layouts_are_strided_views(offsets):
    assert _same_as_gather(offsets) is not None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 40)), min_size=1, max_size=4), st.integers(0, 50),
       st.permutations(range(4)))
def test_any_affine_layout_reads_and_writes_as_the_gather(axes, first, order):
    axes = axes[:4]
    shape = tuple(r for r, _ in axes)
    # distinct offsets: each stride past the span of the axes inside it, the axes then permuted
    steps, span = [], 1
    for r, s in reversed(axes):
        steps.insert(0, span * s)
        span += (r - 1) * span * s
    grid = first + sum(np.arange(r)[(slice(None),) + (None,) * (len(shape) - 1 - i)] * steps[i]
                       for i, r in enumerate(shape)) * np.ones(shape, np.int64)
    perm = [p for p in order if p < len(shape)]
    offsets = np.ascontiguousarray(np.transpose(grid, perm))
    offsets.flags.writeable = False
    assert _same_as_gather(offsets) is not None or offsets.size == 1


@pytest.mark.parametrize("offsets", [np.array([0, 5, 6, 7]), np.array([3, 3, 4, 5]), np.array([0, 1, 2, 4, 5, 7]),
                                     np.array([[0, 1], [2, 9]])], ids=["irregular", "repeat", "ragged", "2-d"])
def test_offsets_that_are_no_view_fall_back_to_the_gather(offsets):
    assert _same_as_gather(offsets) is None
