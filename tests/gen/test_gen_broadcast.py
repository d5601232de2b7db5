"""Broadcasting and where in every kernel shape: (C,) rows, (N, 1) per-row values and 0-d tensors as operands of
elementwise, where (Compare + Select) and last-axis reduction kernels, each checked bit for bit against its own
model, against numpy in float64 (written here, independently of fusekit.gen.reference) and by the sanitizer."""

import numpy as np
import pytest

from fusekit.gen import mean, op, where
from fusekit.gen import max as rmax


@op(dtypes=("float16", "float32"))
def scale_add(x, s):
    return x * s + 1.0


@op(dtypes=("float16", "float32"))
def pick(x, s):
    return where(x > s, x, s * 2.0)


@op(dtypes=("float16", "float32"))
def rms_scale(x, s):
    return x * (mean(x * x, axis=-1, keepdims=True) + 1.0) * s


@op(dtypes=("float16", "float32"))
def above_mean(x, s):
    return where(x >= mean(x, axis=-1, keepdims=True), x - s, 0.0)


@op(dtypes=("float16", "float32"))
def clip_to_max(x, s):
    return where(x * s < rmax(x, axis=-1, keepdims=True), x * s, -1.0)


# the same expressions in float64 numpy (the tests' independent model)
NUMPY = {
    "scale_add": lambda x, s: x * s + 1.0,
    "pick": lambda x, s: np.where(x > s, x, s * 2.0),
    "rms_scale": lambda x, s: x * (np.mean(x * x, axis=-1, keepdims=True) + 1.0) * s,
    "above_mean": lambda x, s: np.where(x >= np.mean(x, axis=-1, keepdims=True), x - s, 0.0),
    "clip_to_max": lambda x, s: np.where(x * s < np.max(x, axis=-1, keepdims=True), x * s, -1.0),
}
OPS = {o.name: o for o in (scale_add, pick, rms_scale, above_mean, clip_to_max)}


def _second(kind: str, n: int, c: int, rng, dt):
    shape = {"full": (n, c), "row": (c,), "column": (n, 1), "scalar": ()}[kind]
    return np.asarray(rng.standard_normal(shape) * 0.5 + 0.25, dt)


def _case(name, kind, c, dtype, precision, n=9, soc=None):
    rng = np.random.default_rng(c * 7 + len(kind))
    dt = np.dtype(dtype)
    x = np.asarray(rng.standard_normal((n, c)), dt)
    s = _second(kind, n, c, rng, dt)
    o = OPS[name]
    result = o.check(x, s, precision=precision, soc=soc)
    y = result["run"].y
    assert y.shape == (n, c) and y.dtype == dt
    own, exact = result["y"]
    assert own.bit_identical, own.summary()
    if precision == "fp32":
        assert exact.passed, exact.summary()
        want = NUMPY[name](x.astype(np.float64), s.astype(np.float64))
        tol = 4e-3 if dtype == "float16" else 2e-6
        np.testing.assert_allclose(y.astype(np.float64), want, rtol=tol, atol=tol)
    return o, x, s


KINDS = ("full", "row", "column", "scalar")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype,precision", [("float16", "native"), ("float16", "fp32"), ("float32", "native")])
def test_broadcast_kinds_in_every_kernel_shape(name, kind, dtype, precision):
    for c in (16, 33):  # a row of whole 32 B blocks and one that is not
        _case(name, kind, c, dtype, precision)


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("kind", KINDS)
def test_broadcast_kernels_are_sanitizer_clean(name, kind):
    o, x, s = _case(name, kind, 40, "float16", "fp32", n=7)
    reports = o.sanitize(x, s, precision="fp32", core_num=3)
    assert reports and all(r.ok for r in reports), "\n".join(r.to_text() for r in reports)


def test_where_in_a_row_tile_of_many_rows():
    """Several rows per tile, a tile that is not a whole number of 256 B repeats (Compare's unit)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((301, 24)).astype(np.float32)
    s = rng.standard_normal(24).astype(np.float32)
    result = above_mean.check(x, s, core_num=2)
    assert result["y"][0].bit_identical and result["y"][1].passed
    assert result["run"].tilings[0].tile_length > 1  # rows per tile
    np.testing.assert_allclose(result["run"].y, NUMPY["above_mean"](x.astype(np.float64), s), rtol=1e-6, atol=1e-6)


def test_neither_input_has_the_output_shape():
    rng = np.random.default_rng(4)
    col = rng.standard_normal((6, 1)).astype(np.float32)
    row = rng.standard_normal(11).astype(np.float32)
    result = scale_add.check(col, row)
    assert result["y"][0].bit_identical
    np.testing.assert_allclose(result["run"].y, col.astype(np.float64) * row + 1.0, rtol=1e-6, atol=1e-6)


def test_310p_takes_every_kind_of_input():
    for kind in KINDS:  # (N, 1) too: whole 32 B blocks of a column the host pads, without DataCopyPad
        for name in ("pick", "rms_scale", "above_mean"):
            _case(name, kind, 32, "float16", "fp32", soc="Ascend310P3")


def test_other_broadcasts_are_refused_with_the_fix():
    with pytest.raises(ValueError, match="numpy.broadcast_to"):
        scale_add.run(np.ones((2, 3, 4), np.float32), np.ones((3, 1), np.float32))
