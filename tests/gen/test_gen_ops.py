"""fusekit.gen: generated operators are bit-exact to their hardware model, within tolerance of exact
in fp32 mode, sanitizer-clean, and FusedAddScale's generated kernel equals the hand-written one.

Independent checks: the hand-written FusedAddScale kernel; numpy models written here for SwiGLU and
Clamp (each instruction's rounding spelled out: docs/ascendc-model.md); float64 + math.erf for GeLU."""

import math
import time

import ml_dtypes
import numpy as np
import pytest

from fusekit import gen
from fusekit.gen import catalogue as cat
from fusekit.gen import perf
from fusekit.ops import fused_add_scale as fas
from fusekit.timing import predict

SIZES = [1, 15, 16, 17, 255, 256, 257, 1000, 2**16 + 3]
QUICK = [1, 17, 257, 2**16 + 3]
MODES = [(np.float16, "native"), (np.float16, "fp32"), (np.float32, "native"), (ml_dtypes.bfloat16, "fp32")]

ELEMENTWISE = {  # name -> (number of float inputs, attrs)
    "fused_add_scale": (2, {"scale": 1.5}), "add_relu": (2, {}), "bias_gelu": (2, {}), "bias_gelu_erf": (2, {}),
    "swiglu": (2, {}), "geglu": (2, {}), "axpby": (2, {"a": 0.75, "b": -1.25}), "clamp": (1, {"lo": -0.5, "hi": 0.8}),
    "quantize": (1, {"scale": 20.0, "offset": 0.5}),
}


def inputs(k, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(n, dtype=np.float32) * 2).astype(dtype) for _ in range(k)]


def check(op, arrays, attrs, **kwargs):
    report = op.check(*arrays, **attrs, **kwargs)
    for name, (own, exact) in ((k, v) for k, v in report.items() if k != "run"):
        assert own.bit_identical, f"{op.name}.{name}: {own.summary()}"
        if report["run"].precision == "fp32" or report["run"].dtype == "float32":
            assert exact.passed, f"{op.name}.{name}: {exact.summary()}"
    return report["run"]


def _sweep(names, sizes, modes, cores, socs):
    for name in names:
        k, attrs = ELEMENTWISE[name]
        for n in sizes:
            for dtype, precision in modes:
                if name == "quantize" and dtype is ml_dtypes.bfloat16:
                    continue
                for core_num in cores:
                    for soc in socs:
                        if soc == "Ascend310P3" and dtype is ml_dtypes.bfloat16:
                            continue
                        yield name, n, dtype, precision, core_num, soc


@pytest.mark.parametrize("name, n, dtype, precision, core_num, soc",
                         list(_sweep(ELEMENTWISE, QUICK, MODES[:2], [7], ["Ascend910B1"]))
                         + list(_sweep(["swiglu", "quantize"], [257], MODES[:1], [1, 48], ["Ascend310P3"])))
def test_catalogue_quick(name, n, dtype, precision, core_num, soc):
    op = cat.get(name)
    k, attrs = ELEMENTWISE[name]
    result = check(op, inputs(k, n, dtype, seed=n), attrs, precision=precision, core_num=core_num, soc=soc)
    assert result.tilings[0].block_dim <= core_num
    if soc == "Ascend310P3":
        assert all("data_copy_pad" not in launch.trace.ops() for launch in result.launches)


@pytest.mark.slow
@pytest.mark.parametrize("name, n, dtype, precision, core_num, soc",
                         list(_sweep(ELEMENTWISE, SIZES, MODES, [1, 7, 48], ["Ascend910B1", "Ascend310P3"])))
def test_catalogue_full_sweep(name, n, dtype, precision, core_num, soc):
    op = cat.get(name)
    k, attrs = ELEMENTWISE[name]
    check(op, inputs(k, n, dtype, seed=n), attrs, precision=precision, core_num=core_num, soc=soc)
    if n in (17, 2**16 + 3):
        reports = op.sanitize(*inputs(k, n, dtype, seed=n), **attrs, precision=precision, core_num=core_num, soc=soc)
        assert all(r.ok for r in reports), [f for r in reports for f in r.findings]


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_sanitizer_clean(name):
    k, attrs = ELEMENTWISE[name]
    for n in (17, 1000):
        reports = cat.get(name).sanitize(*inputs(k, n, np.float16), **attrs, core_num=7)
        assert reports and all(r.ok for r in reports), [str(f) for r in reports for f in r.findings]


FAS_SIZES = [0, 1, 15, 16, 17, 255, 256, 257, 1000, 2**16 + 3, 2**20 + 5]
FAS_MODES = [(np.float16, "native"), (np.float16, "fp32"), (np.float32, "native"), (np.float32, "fp32"),
             (ml_dtypes.bfloat16, "fp32")]


def _fas_case(n, dtype, precision, cores, buffer_num, soc="Ascend910B1"):
    x1, x2 = inputs(2, n, dtype, seed=n)
    mine = cat.fused_add_scale.run(x1, x2, scale=1.5, core_num=cores, buffer_num=buffer_num, precision=precision,
                                   soc=soc)
    hand = fas.run(x1, x2, 1.5, core_num=cores, buffer_num=buffer_num, precision=precision, soc=soc)
    assert np.array_equal(mine.y.view(np.uint8), hand.y.view(np.uint8))
    if n:
        t_mine = predict([r.trace for r in mine.launches]).kernel_time_us
        t_hand = predict([r.trace for r in hand.launches]).kernel_time_us
        assert abs(t_mine - t_hand) <= 0.05 * t_hand, (t_mine, t_hand)


@pytest.mark.parametrize("n", [0, 17, 257, 2**16 + 3])
@pytest.mark.parametrize("dtype, precision", FAS_MODES, ids=str)
def test_fused_add_scale_generated_equals_hand_written(n, dtype, precision):
    _fas_case(n, dtype, precision, 7, 2)


@pytest.mark.slow
@pytest.mark.parametrize("buffer_num", [1, 2])
@pytest.mark.parametrize("cores", [1, 2, 7, 48])
@pytest.mark.parametrize("dtype, precision", FAS_MODES, ids=str)
@pytest.mark.parametrize("n", FAS_SIZES)
def test_fused_add_scale_generated_equals_hand_written_full(n, dtype, precision, cores, buffer_num):
    _fas_case(n, dtype, precision, cores, buffer_num)


@pytest.mark.parametrize("soc", ["Ascend910B4", "Ascend310P3"])
def test_fused_add_scale_generated_other_socs(soc):
    _fas_case(70_001, np.float16, "native", None, 2, soc)


def test_swiglu_matches_a_hand_written_float16_model():
    a, b = inputs(2, 4099, np.float16, seed=3)
    y = cat.swiglu(a, b)
    # silu(a) * b as muls(-1), exp, adds(1), div, mul: each rounded to float16 (numpy float16 ufuncs round once)
    with np.errstate(all="ignore"):
        t = np.exp(a * np.float16(-1))
        t = t + np.float16(1)
        expect = (a / t) * b
    assert np.array_equal(y.view(np.uint16), expect.view(np.uint16))


def test_clamp_matches_numpy_clip_bit_for_bit():
    (x,) = inputs(1, 3001, np.float32, seed=4)
    y = cat.clamp(x, lo=-0.5, hi=0.8)
    assert np.array_equal(y, np.clip(x, np.float32(-0.5), np.float32(0.8)))


def test_gelu_erf_fp32_within_tolerance_of_math_erf():
    x = np.linspace(-9, 9, 5001).astype(np.float32)
    zero = np.zeros_like(x)
    y = cat.bias_gelu_erf(x, zero)
    exact = np.array([0.5 * float(v) * (1 + math.erf(float(v) / math.sqrt(2))) for v in x])
    ok = np.isclose(y.astype(np.float64), exact, rtol=1e-4, atol=1e-6)
    assert ok.all(), x[~ok][:5]


def test_quantize_saturates_and_rounds_to_nearest_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, 1000, -1000, 126.6, -128.4], np.float16)
    y = cat.quantize(x, scale=1.0, precision="fp32")
    assert y.dtype == np.int8
    assert y.tolist() == [0, 2, 2, 0, 127, -128, 127, -128]


@pytest.mark.parametrize("rounding, expect", [("floor", [0, 1, 2, -1, 127, -128]), ("ceil", [1, 2, 3, 0, 127, -128]),
                                              ("trunc", [0, 1, 2, 0, 127, -128]), ("round", [1, 2, 3, -1, 127, -128])])
def test_quantize_rounding_modes(rounding, expect):
    x = np.array([0.5, 1.5, 2.5, -0.5, 300, -300], np.float16)
    assert cat.quantize_with(rounding)(x, scale=1.0).tolist() == expect


def test_library_entry_points():
    a, b = inputs(2, 100, np.float16)
    assert np.array_equal(gen.run("swiglu", a, b).y, cat.swiglu(a, b))
    assert gen.profile("swiglu", 2**16).fused_us > 0


def test_dequantize_int32_and_int8_to_float16():
    x = np.array([-(2**31), -7, 0, 3, 2**31 - 1], np.int32)
    y = cat.dequantize(x, scale=0.5)
    assert y.dtype == np.float16
    with np.errstate(over="ignore"):  # beyond 65504 float16 overflows to inf (inf_nan mode), as the kernel's cast does
        expect = (x.astype(np.float32) * np.float32(0.5)).astype(np.float16)
    assert np.array_equal(y, expect)
    q = np.array([-128, -1, 0, 5, 127], np.int8)
    assert np.array_equal(cat.dequantize_int8(q, scale=0.25), (q * 0.25).astype(np.float16))


def test_zero_d_and_one_element_inputs_are_kernel_scalars():
    @gen.op(dtypes=("float16", "float32"))
    def scaled_sub(x, s):
        return (x - s) / s

    x = inputs(1, 1000, np.float32)[0]
    s = np.array(0.3, np.float32)
    result = scaled_sub.run(x, s)
    assert "s" in result.variant.program.scalars
    own = scaled_sub.reference("hardware", x, s)["y"]
    assert np.array_equal(result.y, own)
    assert np.array_equal(result.y, (x - s) / s)  # adds(-s) then duplicate + div: one rounding each, like numpy


def test_string_form_matches_the_decorator():
    op = gen.define_op("y = silu(a) * b", name="swiglu_text")
    a, b = inputs(2, 1000, np.float16, seed=9)
    assert np.array_equal(op(a, b), cat.swiglu(a, b))
    with_attr = gen.define_op("(x1 + x2) * scale; scale: attr = 2.0", name="fas_text")
    assert with_attr.graph.defaults == {"scale": 2.0}
    x1, x2 = inputs(2, 100, np.float16)
    assert np.array_equal(with_attr(x1, x2), fas.fused_add_scale(x1, x2, 2.0))


def test_generated_source_is_a_readable_pyasc_kernel_that_runs_as_written():
    result = cat.swiglu.run(*inputs(2, 257, np.float16))
    text = result.variant.path.read_text()
    assert text == result.variant.source
    for piece in ("def copy_in(", "def compute(", "def copy_out(", "asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)",
                  "asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)", "load(", "store(", "asc.exp(", "asc.div("):
        assert piece in text
    ops = result.launches[0].trace.ops()
    assert ops.get("data_copy_pad", 0) == 3  # the unaligned tail: two inputs in, one output out


def test_ub_plan_reuses_dead_temporaries():
    program = cat.bias_gelu_erf.variant("float16", "native").program
    assert len(program.instrs) >= 20 and program.slots <= 3


def test_generation_takes_under_a_second():
    op = gen.define_op("gelu(x + b, approximate='none') * sigmoid(x)", name="gen_timing")
    started = time.perf_counter()
    op.variant("float16", "fp32")
    assert time.perf_counter() - started < 1.0


def test_op_info_prototype():
    info = cat.dequantize.op_info()[0]
    assert info["op"] == "Dequantize"
    assert info["input_desc"][0]["type"] == ["int32"] and info["output_desc"][0]["type"] == ["fp16"]
    assert cat.axpby.op_info()[0]["attr"] == [{"name": "a", "param_type": "required", "type": "float"},
                                              {"name": "b", "param_type": "required", "type": "float"}]


ROW_OPS = {"add_rms_norm", "layer_norm", "scaled_masked_softmax", "bias_gelu", "bias_gelu_erf", "quantize_per_channel"}


# the vector operators: a cube operator's elementwise (2**20,) shape is no matmul, and its fused-vs-unfused
# figure is tests/gen_cube/test_gen_matmul's
@pytest.mark.parametrize("name", [name for name, op in cat.CATALOGUE.items() if op.cube is None])
def test_every_catalogue_op_beats_its_unfused_chain_at_2_20(name):
    from fusekit.cli.generated import inputs as random_inputs

    op = cat.get(name)
    dtype = "float32" if name.startswith("dequantize") else "float16"
    shape = (1024, 1024) if name in ROW_OPS else (2**20,)
    shapes = {k.name: x.shape for k, x in zip(op.graph.inputs, random_inputs(op, shape, dtype))}
    r = perf.compare(op, dtype=dtype, shapes=shapes)
    assert r.n == 2**20 and r.fused_us < r.unfused_us, r.table()


def test_small_ops_warn_about_launch_overhead():
    small = perf.compare(cat.swiglu, 1000)
    assert small.warning and "fuse" in small.warning


@pytest.mark.parametrize("n", [1, 17, 257, 1000, 2**16 + 3])
@pytest.mark.parametrize("dtype, precision", MODES, ids=str)
def test_where_with_comparisons(n, dtype, precision):
    @gen.op(dtypes=("float16", "float32", "bfloat16"))
    def select_op(x, z):
        return gen.where(x > z, x, 0.1 * x) + gen.where(x <= 0.25, 1.0, z)

    x, z = inputs(2, n, dtype, seed=n)
    x[:3] = np.array([0.25, np.nan, -0.0], np.float32).astype(dtype)[: min(3, n)]
    check(select_op, [x, z], {}, precision=precision, core_num=7)
    assert all(r.ok for r in select_op.sanitize(x, z, precision=precision, core_num=7))
    if dtype is np.float32:  # a numpy model: compare, then select, one rounding each
        with np.errstate(invalid="ignore"):
            expect = np.where(x > z, x, np.float32(0.1) * x) + np.where(x <= np.float32(0.25), np.float32(1.0), z)
        assert np.array_equal(select_op(x, z), expect, equal_nan=True)


@pytest.mark.parametrize("expr, match", [
    ("x > 0", "bit mask"), ("where(x, x, 0.5 * x)", "must be a comparison"),
    ("sum(x, axis=-1)", "keepdims=True|one value per row"),
    ("x * 0 + sum(x, axis=-1, keepdims=True) * 0 + max(x, axis=-1, keepdims=True)", None),
])
def test_unsupported_primitives_are_refused_by_name(expr, match):
    op = gen.define_op(expr, name="refused")
    if match is None:  # supported: the row maximum, broadcast back
        x = np.arange(32, dtype=np.float16).reshape(2, 16)
        assert np.array_equal(op(x), np.broadcast_to(x.max(axis=-1, keepdims=True), x.shape))
        return
    with pytest.raises(gen.GraphError, match=match):
        op(np.ones(16, np.float16))


def test_bad_inputs_get_clear_errors():
    a = np.ones(10, np.float16)
    with pytest.raises(TypeError, match="differ in dtype"):
        cat.swiglu(a, a.astype(np.float32))
    with pytest.raises(TypeError, match="needs the attribute scale"):
        cat.fused_add_scale(a, a)
    with pytest.raises(ValueError, match="do not broadcast"):
        cat.swiglu(a, np.ones(3, np.float16))
    with pytest.raises(ValueError, match="no bfloat16"):
        cat.swiglu(a.astype(ml_dtypes.bfloat16), a.astype(ml_dtypes.bfloat16), soc="Ascend310P3")
    with pytest.raises(gen.GraphError, match="truth value"):
        gen.define_op("x if x else x", name="bad")
    with pytest.raises(gen.GraphError, match=r"\*\* 3"):
        gen.define_op("x ** 3", name="bad_pow")
