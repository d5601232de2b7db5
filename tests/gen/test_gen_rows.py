"""fusekit.gen row tiling: last-axis reductions and (C,) inputs broadcast along rows.

Independent checks: float64 numpy formulas (RMSNorm, LayerNorm, softmax) within the samples'
tolerance in fp32 mode, and ReduceSum's documented order (a tree inside each 256 B repeat, repeats
in order: ReduceSum.md 方式一) written out here for one float16 row."""

import ml_dtypes
import numpy as np
import pytest

from fusekit import gen
from fusekit.gen import catalogue as cat
from fusekit.gen import perf

SHAPES = [(1, 1), (1, 15), (3, 16), (5, 17), (37, 100), (300, 257), (2, 1000)]
QUICK = [(1, 15), (5, 17), (37, 100)]
MODES = [(np.float16, "native"), (np.float16, "fp32"), (np.float32, "native"), (ml_dtypes.bfloat16, "fp32")]


def _inputs(name, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = lambda s: rng.standard_normal(s, dtype=np.float32).astype(dtype)  # noqa: E731
    c = shape[-1]
    return {"add_rms_norm": (x(shape), x(shape), x(c)), "layer_norm": (x(shape), x(c), x(c)),
            "scaled_masked_softmax": (x(shape), x(c)), "bias_gelu": (x(shape), x(c)),
            "bias_gelu_erf": (x(shape), x(c)),
            "quantize_per_channel": (x(shape), (x(c) * 10).astype(dtype), x(c))}[name]


ATTRS = {"add_rms_norm": {"eps": 1e-6}, "layer_norm": {"eps": 1e-5}, "scaled_masked_softmax": {"scale": 0.5}}
NAMES = list(ATTRS) + ["bias_gelu", "bias_gelu_erf"]


def check(name, shape, dtype, precision, **kwargs):
    op = cat.get(name)
    report = op.check(*_inputs(name, shape, dtype, seed=shape[0]), **ATTRS.get(name, {}), precision=precision, **kwargs)
    run = report["run"]
    for out, (own, exact) in ((k, v) for k, v in report.items() if k != "run"):
        assert own.bit_identical, f"{name}.{out}: {own.summary()}"
        if run.precision == "fp32" or run.dtype == "float32":
            assert exact.passed, f"{name}.{out}: {exact.summary()}"
    return run


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", QUICK, ids=str)
@pytest.mark.parametrize("dtype, precision", MODES[:2], ids=str)
def test_row_ops_quick(name, shape, dtype, precision):
    check(name, shape, dtype, precision, core_num=7)


@pytest.mark.parametrize("name", ["add_rms_norm", "scaled_masked_softmax"])
@pytest.mark.parametrize("soc", ["Ascend310P3", "Ascend910B4"])
def test_row_ops_other_socs(name, soc):
    run = check(name, (9, 17), np.float16, "native", soc=soc)
    if soc == "Ascend310P3":  # no DataCopyPad: rows padded in GM by the host
        assert "data_copy_pad" not in run.launches[0].trace.ops()


@pytest.mark.slow
@pytest.mark.parametrize("core_num", [1, 7, 48])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype, precision", MODES, ids=str)
@pytest.mark.parametrize("soc", ["Ascend910B1", "Ascend310P3"])
def test_row_ops_full_sweep(name, shape, dtype, precision, core_num, soc):
    if soc == "Ascend310P3" and dtype is ml_dtypes.bfloat16:
        pytest.skip("310P has no bfloat16")
    check(name, shape, dtype, precision, core_num=core_num, soc=soc)


@pytest.mark.parametrize("name", NAMES)
def test_row_ops_sanitizer_clean(name):
    for shape in ((5, 17), (37, 100)):
        reports = cat.get(name).sanitize(*_inputs(name, shape, np.float16), **ATTRS.get(name, {}), core_num=7)
        assert reports and all(r.ok for r in reports), [str(f) for r in reports for f in r.findings]


def test_quantize_per_channel_on_whole_blocks_and_refusal_otherwise():
    x, scale, offset = _inputs("quantize_per_channel", (7, 64), np.float16)
    report = cat.quantize_per_channel.check(x, scale, offset, precision="fp32")
    assert report["y"][0].bit_identical and report["run"].y.dtype == np.int8
    assert all(r.ok for r in cat.quantize_per_channel.sanitize(x, scale, offset))
    x, scale, offset = _inputs("quantize_per_channel", (7, 40), np.float16)
    with pytest.raises(ValueError, match="multiple of 32"):
        cat.quantize_per_channel(x, scale, offset)


def test_rms_norm_and_softmax_against_float64_formulas():
    rng = np.random.default_rng(5)
    x, r = (rng.standard_normal((64, 384)).astype(np.float32) for _ in range(2))
    g = rng.standard_normal(384).astype(np.float32)
    y, s = cat.add_rms_norm(x, r, g, eps=1e-6)
    s64 = x.astype(np.float64) + r
    y64 = s64 / np.sqrt((s64 * s64).mean(axis=-1, keepdims=True) + 1e-6) * g
    np.testing.assert_allclose(y, y64, rtol=2e-5, atol=1e-5)
    np.testing.assert_array_equal(s, x + r)
    z = x.astype(np.float64) * 0.5 + g
    soft = np.exp(z - z.max(axis=-1, keepdims=True))
    soft /= soft.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(cat.scaled_masked_softmax(x, g, scale=0.5), soft, rtol=1e-5, atol=1e-7)


def test_row_sum_follows_reduce_sums_documented_order():
    # float16, 300 lanes: repeats of 128 lanes summed as binary trees, then in order
    row = np.full(300, 0.1, np.float16)
    row[::7] = np.float16(1000.0)
    op = gen.define_op("x * 0 + sum(x, axis=-1, keepdims=True)", name="row_total")

    def tree(v):
        v = list(v) + [np.float16(-0.0)] * (128 - len(v))
        while len(v) > 1:
            v = [np.float16(v[i] + v[i + 1]) for i in range(0, len(v), 2)]
        return v[0]
    parts = [tree(row[i:i + 128]) for i in range(0, 300, 128)]
    total = parts[0]
    for p in parts[1:]:
        total = np.float16(total + p)
    got = op(row.reshape(1, 300))
    assert got[0, 0] == total and float(total) != float(row.astype(np.float64).sum().astype(np.float16))


def test_a_row_too_long_for_ub_is_refused_with_the_limit():
    x = np.zeros((2, 100_000), np.float16)
    with pytest.raises(ValueError, match=r"one row of 100000 elements needs .* rows of at most about \d+ elements"):
        cat.add_rms_norm(x, x, np.zeros(100_000, np.float16))


def test_per_row_and_per_channel_inputs_broadcast_by_offsets():
    @gen.op(dtypes=("float16", "float32"))
    def row_affine(x, s, b):
        return x * s + b

    rng = np.random.default_rng(2)
    x = rng.standard_normal((37, 100)).astype(np.float16)
    s = rng.standard_normal((37, 1)).astype(np.float16)
    b = rng.standard_normal(100).astype(np.float16)
    run = row_affine.run(x, s, b, core_num=7)
    assert np.array_equal(run.y, x * s + b)  # mul then add, each rounded to float16 once, as numpy's float16 ops
    assert run.variant.program.columns == {"s"} and set(run.variant.program.broadcast) == {"b"}
    assert all(r.ok for r in row_affine.sanitize(x, s, b, core_num=7))
    on_310p = row_affine.run(x, s, b, soc="Ascend310P3", core_num=7)  # no DataCopyPad: whole 32 B blocks of s
    assert np.array_equal(on_310p.y, x * s + b) and "data_copy_pad" not in on_310p.launches[0].trace.ops()
    assert all(r.ok for r in row_affine.sanitize(x, s, b, soc="Ascend310P3", core_num=7))
    with pytest.raises(ValueError, match="other broadcasts are not generated"):
        row_affine(np.ones((2, 37, 100), np.float16), s, b)


def test_add_rms_norm_fused_beats_unfused_at_2_20():
    r = perf.compare(cat.add_rms_norm, shapes={"x": (1024, 1024), "residual": (1024, 1024), "gamma": (1024,)})
    assert r.fused_us < r.unfused_us, r.table()


# The tile form (A2/A3, rows of at most 8 repeats, at least two rows per 256 B column: fusekit.gen.device) and the
# per-row form must give the same bits; both are checked here against ReduceSum's order written out independently.
def _in_order_tree_sum(row):
    """ReduceSum's count form on A2/A3 for one float16 row: a tree per 128 lanes (masked lanes -0), then in order."""
    def tree(v):
        v = list(v) + [np.float16(-0.0)] * (128 - len(v))
        while len(v) > 1:
            v = [np.float16(v[i] + v[i + 1]) for i in range(0, len(v), 2)]
        return v[0]
    total = None
    for i in range(0, row.size, 128):
        part = tree(row[i:i + 128])
        total = part if total is None else np.float16(total + part)
    return total


@pytest.mark.parametrize("width", [500, 600])
@pytest.mark.parametrize("rows", [1, 40, 300], ids=lambda r: f"{r}rows")
def test_row_sums_in_both_forms_follow_reduce_sums_order(rows, width):
    # 4 or 5 repeats of float16 (the last column's fold from either block buffer) whose sum depends on the order:
    # 1 core with 40 or 300 rows per tile takes the tile form (300: two batches of at most 248 rows), 1 row the
    # per-row form
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, width)).astype(np.float16)
    x[:, ::128] = np.float16(2048.0)
    op = gen.define_op("x * 0 + sum(x, axis=-1, keepdims=True)", name="row_total_forms")
    run = op.run(x, core_num=1)
    ops = {i.op for i in run.launches[0].trace.cores[0]}
    assert ("whole_reduce_sum" in ops) == (rows > 1)  # the tile form (a short last tile takes the per-row form)
    assert rows > 1 or "reduce_sum" in ops
    want = np.array([_in_order_tree_sum(r) for r in x], np.float16)
    assert np.array_equal(run.outputs["y"][:, 0].view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("kind", ["max", "min"])
def test_row_extremes_in_the_tile_form_are_the_first_one_of_the_row(kind):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    x[3] = np.float32(-5.0) if kind == "max" else np.float32(5.0)
    x[3, ::7] = np.float32(-0.0) if kind == "max" else np.float32(0.0)  # ties of signed zeros: the first one wins,
    x[3, 200] = np.float32(0.0) if kind == "max" else np.float32(-0.0)  # in another 256 B column than this one
    x[5, 100], x[5, 250] = np.nan, np.inf
    op = gen.define_op(f"x * 0 + {kind}(x, axis=-1, keepdims=True)", name=f"row_{kind}_forms")
    got = op(x, core_num=1)[:, 0]
    first = np.array([r[np.argmax(r) if kind == "max" else np.argmin(r)] for r in x], np.float32)  # NaN first too
    assert np.array_equal(got.view(np.uint32)[np.arange(64) != 5], first.view(np.uint32)[np.arange(64) != 5])
    assert np.isnan(got[5])


def test_a_tile_form_row_sum_that_overflows_is_recorded_and_warns():
    # two float16 columns of 128 lanes each summing to 40000: finite alone, 80000 together
    x = np.full((16, 256), 40000 / 128, np.float16)
    op = gen.define_op("x * 0 + sum(x, axis=-1, keepdims=True)", name="row_total_overflow")
    with pytest.warns(Warning, match="whole_reduce_sum at .* overflowed float16 from finite inputs"):
        run = op.run(x, core_num=1)
    assert {i.op for i in run.launches[0].trace.overflows} == {"whole_reduce_sum"}
    assert np.isinf(run.outputs["y"]).all()


def test_310p_keeps_the_per_row_form():
    x = np.random.default_rng(2).standard_normal((64, 128)).astype(np.float16)
    run = cat.get("scaled_masked_softmax").run(x, x[0], scale=0.5, soc="Ascend310P3", core_num=1)
    ops = {i.op for i in run.launches[0].trace.cores[0]}
    assert "reduce_max" in ops and "whole_reduce_max" not in ops
