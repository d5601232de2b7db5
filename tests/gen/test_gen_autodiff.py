"""fusekit.gen.autodiff: the derived backward graphs against PyTorch's autograd (float64).

The independent model is ``eager`` (tests/autograd_ref.py): the expression graph re-implemented with torch functions (the
ones a PyTorch user would write: F.silu, F.gelu, torch.clamp, torch.amax, ...) and differentiated by
torch's own autograd in float64. fusekit's side is the backward operator's ``exact`` model (the
backward graph in float64), so the comparison checks the derivative formulas, not kernel rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

import fusekit
from fusekit.gen import autodiff
from fusekit.gen.catalogue import CATALOGUE
from fusekit.gen.graph import GraphError, Node

torch = pytest.importorskip("torch")
from autograd_ref import torch_grads  # noqa: E402  (the independent model: tests/autograd_ref.py)

def fusekit_grads(graph, arrays: dict, attrs: dict, grads: list, dtype: str = "float32", compute=None) -> dict:
    """{input name: gradient} from the derived backward graph's float64 model, summed to each input's
    shape (what fusekit.torch does with the backward kernel's output)."""
    back = autodiff.backward(graph, dtype, compute)
    gin = {back.grad_names[o]: g for o, g in zip(graph.output_names, grads) if o in back.grad_names}
    outs = {}
    shape = np.broadcast_shapes(*(np.shape(v) for v in arrays.values()))
    if back.op is not None:
        pool = {**arrays, **gin}
        args = [np.asarray(pool[n.name]) for n in back.op.graph.inputs]
        kw = {a.name: (1.0 / shape[-1] if a.name == back.inv_cols else attrs[a.name]) for a in back.op.graph.attrs}
        outs = back.op.exact(*args, **kw)
    result = {}
    for name, where in back.grads.items():
        g = outs[where[1]] if where[0] == "output" else gin[where[1]].astype(np.float64)
        g = np.broadcast_to(g, shape)
        x = np.asarray(arrays[name])
        axes = tuple(range(g.ndim - x.ndim)) + tuple(i + g.ndim - x.ndim for i, s in enumerate(x.shape)
                                                     if s == 1 and shape[i + g.ndim - x.ndim] != 1)
        result[name] = g.sum(axis=axes).reshape(x.shape) if axes else g
    return result


# -- operators exercising every primitive
@fusekit.op(dtypes=("float32",))
def arith(a, b, *, s=0.75):
    return (a - b) * s / (fusekit.absolute(b) + 1.0) + 2.0 / (a * a + 1.0) - (-a)


@fusekit.op(dtypes=("float32",))
def unary(x):
    p = x * x + 0.5
    return fusekit.exp(x * 0.5) + fusekit.log(p) + fusekit.sqrt(p) + fusekit.rsqrt(p) + fusekit.reciprocal(p) \
        + fusekit.sigmoid(x) + fusekit.tanh(x) + fusekit.silu(x) + fusekit.leaky_relu(x, 0.1)


@fusekit.op(dtypes=("float32",))
def kinks(a, b, *, lo=-0.5, hi=0.5):
    return fusekit.relu(a) + fusekit.maximum(a, b) + fusekit.minimum(a, b) + fusekit.clamp(b, lo, hi) \
        + fusekit.absolute(a) * b + fusekit.where(a > b, a * 2.0, b * 3.0) + fusekit.where(a <= 0.25, b, 1.0)


@fusekit.op(dtypes=("float32",))
def reductions(x, w):
    m = fusekit.max(x, axis=-1, keepdims=True)
    n = fusekit.min(x * w, axis=-1, keepdims=True)
    return (x - m) * fusekit.mean(x * x, axis=-1, keepdims=True) + fusekit.sum(w * x, axis=-1, keepdims=True) * n


@fusekit.op(dtypes=("float32",))
def row_only(x):
    return fusekit.sum(x * x, axis=-1, keepdims=True)


@fusekit.op(dtypes=("float32",))
def cast_chain(x):
    return fusekit.cast(fusekit.cast(x * 3.0, "float16") * 2.0, "float32") + fusekit.cast(x, "int8") * 0.0


ATTRS = {"scale": 0.625, "a": 1.5, "b": -0.75, "lo": -0.5, "hi": 0.5, "eps": 1e-5, "offset": 0.25, "s": 0.75}
SHAPE = (3, 24)


def _arrays(op, rng, broadcast=False, ties=False):
    out = {}
    for i, n in enumerate(op.graph.inputs):
        fixed = op.graph.input_dtypes.get(n.name)
        shape = SHAPE[-1:] if broadcast and i == len(op.graph.inputs) - 1 and i > 0 else SHAPE
        if fixed is not None:
            out[n.name] = rng.integers(-50, 50, shape).astype(fixed)
        elif ties:  # quarters: exact ties between inputs, with the bounds and with 0
            out[n.name] = (rng.integers(-3, 4, shape) / 4).astype(np.float32)
        else:
            out[n.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def _attrs(op):
    return {a.name: ATTRS[a.name] for a in op.graph.attrs}


def _ops():
    # vector operators: autodiff has no derivative for matmul / conv2d (GraphError), so the cube's are left out
    ops = {k: v for k, v in CATALOGUE.items() if "float32" in v.dtypes and v.cube is None}
    ops.update({o.name: o for o in (arith, unary, kinks, reductions, row_only, cast_chain)})
    return ops


@pytest.mark.parametrize("name", sorted(_ops()))
@pytest.mark.parametrize("broadcast", [False, True])
def test_backward_matches_torch_autograd_float64(name, broadcast):
    op = _ops()[name]
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    arrays = _arrays(op, rng, broadcast)
    if name in ("unary",):
        arrays["x"] = np.clip(arrays["x"], -3, 3)
    grads = [rng.standard_normal(np.broadcast_shapes(*(v.shape for v in arrays.values()))) for _ in op.graph.outputs]
    attrs = _attrs(op)
    want = torch_grads(op.graph, arrays, attrs, grads)
    got = fusekit_grads(op.graph, arrays, attrs, grads)
    assert set(got) <= set(want)
    for k, w in want.items():
        g = got.get(k, np.zeros_like(w))
        # the erf form's Phi is Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7), as the forward kernel's
        atol = 1e-6 * np.abs(grads).max() if "erf" in name else 1e-12
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=atol, err_msg=f"{name}: d/d{k}")


@pytest.mark.parametrize("name", ["kinks", "reductions", "add_relu", "clamp", "scaled_masked_softmax"])
def test_non_differentiable_points_follow_pytorch(name):
    """Inputs on quarter values: relu at 0, ties of maximum / minimum / amax, x on clamp's bounds and where's
    edges all happen; the gradient must be torch's exactly there."""
    op = _ops()[name]
    rng = np.random.default_rng(7)
    arrays = _arrays(op, rng, ties=True)
    grads = [np.ones(SHAPE) for _ in op.graph.outputs]
    attrs = _attrs(op)
    want = torch_grads(op.graph, arrays, attrs, grads)
    got = fusekit_grads(op.graph, arrays, attrs, grads)
    for k, w in want.items():
        np.testing.assert_allclose(got[k], w, rtol=1e-12, atol=1e-12, err_msg=f"{name}: d/d{k}")
    x = next(iter(arrays.values()))
    assert (x == 0).any() and (x == np.roll(x, 1)).any()  # the points in question did occur


def test_fused_add_scale_backward_is_one_shared_scaling():
    back = autodiff.backward(CATALOGUE["fused_add_scale"].graph, "float16")
    assert [n.name for n in back.op.graph.inputs] == ["grad_y"]  # x1, x2 are not needed
    assert [a.name for a in back.op.graph.attrs] == ["scale"]
    assert back.op.graph.output_names == ("grad_x1",)            # one kernel output serves both inputs
    assert back.grads == {"x1": ("output", "grad_x1"), "x2": ("output", "grad_x1")}


def test_add_backward_needs_no_kernel():
    add = fusekit.define_op("x1 + x2", name="plain_add")
    back = autodiff.backward(add.graph, "float32")
    assert back.op is None and back.grads == {"x1": ("input", "grad_y"), "x2": ("input", "grad_y")}


def test_integer_paths_get_no_gradient():
    q = autodiff.backward(CATALOGUE["quantize"].graph, "float16")
    assert q.op is None and q.grads == {} and q.grad_names == {}
    d = autodiff.backward(CATALOGUE["dequantize"].graph, "float32")
    assert d.op is None and d.grads == {}


def test_mean_takes_inv_cols():
    back = autodiff.backward(CATALOGUE["layer_norm"].graph, "float32")
    assert back.inv_cols == "inv_cols" and "inv_cols" in [a.name for a in back.op.graph.attrs]


@pytest.mark.parametrize("dtype,compute", [("float16", "float16"), ("float32", "float32"), ("float16", "float32")])
def test_indicator_is_exact_on_the_hardware_model(dtype, compute):
    """relu's gradient on the bit-exact hardware model: exactly g or 0, down to the smallest subnormal
    (and at +-0, +-inf, the largest value)."""
    relu = fusekit.define_op("relu(x)", name="relu_only", dtypes=(dtype,))
    back = autodiff.backward(relu.graph, dtype, compute)
    info = np.finfo(dtype)
    x = np.array([0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max, np.inf, -np.inf,
                  1.0, -1.0, info.tiny, -info.tiny] * 3, dtype)
    g = np.linspace(0.5, 2.0, x.size).astype(dtype)
    model = "hardware" if compute == dtype else "fp32"
    got = back.op.reference(model, x, g)["grad_x"]
    np.testing.assert_array_equal(got, np.where(x > 0, g, 0).astype(dtype))


def test_unknown_primitive_is_refused():
    graph = fusekit.define_op("exp(x)", name="odd").graph
    graph.outputs = [Node("mystery", (graph.inputs[0],))]
    with pytest.raises(GraphError, match="mystery"):
        autodiff.backward(graph, "float32")


def test_backward_op_runs_on_the_simulator():
    """The derived backward of layer_norm is a real generated kernel: it runs and matches its own model."""
    back = autodiff.backward(CATALOGUE["layer_norm"].graph, "float32")
    rng = np.random.default_rng(3)
    x, gamma, beta = rng.standard_normal((4, 32)).astype(np.float32), rng.standard_normal(32).astype(np.float32), \
        rng.standard_normal(32).astype(np.float32)
    g = rng.standard_normal((4, 32)).astype(np.float32)
    pool = {"x": x, "gamma": gamma, "beta": beta, "grad_y": g}
    args = [pool[n.name] for n in back.op.graph.inputs]
    kw = {"eps": 1e-5, "inv_cols": 1 / 32}
    run = back.op.run(*args, **kw)
    own = back.op.reference("hardware", *args, **kw)
    for k, v in run.outputs.items():
        np.testing.assert_array_equal(v, own[k])


def _backward_cases():
    for name, op in sorted(CATALOGUE.items()):
        if op.cube is not None:  # no derivative for matmul / conv2d (autodiff raises GraphError)
            continue
        back32 = autodiff.backward(op.graph, "float32")
        if back32.op is None:
            continue
        for dtype in op.dtypes:
            for precision in ("native", "fp32"):
                if dtype == "bfloat16" and precision == "native":
                    continue
                sample = dtype == "float16" and precision == "native"
                yield pytest.param(name, dtype, precision, id=f"{name}-{dtype}-{precision}",
                                   marks=() if sample else pytest.mark.slow)


@pytest.mark.parametrize("name,dtype,precision", list(_backward_cases()))
def test_backward_kernels_are_exact_to_their_model_and_sanitizer_clean(name, dtype, precision):
    """Every catalogue op's backward kernel, on a (C,) broadcast: bit-exact to its own hardware / fp32
    model, close to float64 autograd in fp32 mode, and clean under fusekit.sanitize."""
    op = CATALOGUE[name]
    compute = "float32" if precision == "fp32" else dtype
    back = autodiff.backward(op.graph, dtype, compute)
    rng = np.random.default_rng(5)
    arrays = {k: v.astype(dtype) for k, v in _arrays(op, rng, broadcast=True).items()}
    gin = {back.grad_names[o]: rng.standard_normal(SHAPE).astype(dtype) for o in op.graph.output_names
           if o in back.grad_names}
    pool = {**arrays, **gin}
    args = [pool[n.name] for n in back.op.graph.inputs]
    kw = {a.name: (1.0 / SHAPE[-1] if a.name == back.inv_cols else ATTRS[a.name]) for a in back.op.graph.attrs}
    run = back.op.run(*args, precision=precision, **kw)
    own = back.op.reference("hardware" if precision == "native" else "fp32", *args, **kw)
    for k, v in run.outputs.items():
        np.testing.assert_array_equal(v, own[k], err_msg=f"{name} backward {k}")
    reports = back.op.sanitize(*args, precision=precision, **kw)
    assert reports and all(r.ok for r in reports), [r.findings for r in reports]
    if precision == "fp32" and dtype == "float32":
        grads = [gin[back.grad_names[o]] if o in back.grad_names else np.zeros(SHAPE) for o in op.graph.output_names]
        want = torch_grads(op.graph, arrays, _attrs(op), grads)
        for name_, where in back.grads.items():
            got = run.outputs[where[1]] if where[0] == "output" else gin[where[1]]
            w = np.broadcast_to(want[name_], SHAPE) if want[name_].shape == SHAPE else None
            if w is not None:
                np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5 * np.abs(w).max())


def test_a_value_returned_twice_gets_both_gradients():
    @fusekit.op(dtypes=("float32",), outputs=("p", "q"))
    def twice(x):
        s = fusekit.exp(x)
        return s, s

    rng = np.random.default_rng(1)
    arrays = {"x": rng.standard_normal(SHAPE).astype(np.float32)}
    grads = [rng.standard_normal(SHAPE), rng.standard_normal(SHAPE)]
    np.testing.assert_allclose(fusekit_grads(twice.graph, arrays, {}, grads)["x"],
                               torch_grads(twice.graph, arrays, {}, grads)["x"], rtol=1e-12)


def test_deep_chain_backward_stays_linear():
    """A 12-deep chain shares every forward value with its backward: the backward graph (264 nodes) must
    generate and run (its text in steps, not the exponential tree form) and match float64 autograd."""
    @fusekit.op(dtypes=("float32",))
    def deep(x, y):
        for _ in range(12):
            x = fusekit.silu(x * y + 0.1) + fusekit.tanh(x)
        return x

    back = autodiff.backward(deep.graph, "float32")
    assert back.op.graph.text().startswith("t0 = ")
    rng = np.random.default_rng(4)
    arrays = {"x": rng.random(SHAPE).astype(np.float32), "y": rng.random(SHAPE).astype(np.float32)}
    grads = [rng.standard_normal(SHAPE)]
    want = torch_grads(deep.graph, arrays, {}, grads)
    got = fusekit_grads(deep.graph, arrays, {}, grads)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-9)
    run = back.op.run(arrays["x"], arrays["y"], grads[0].astype(np.float32), precision="fp32")
    for k, where in back.grads.items():
        np.testing.assert_allclose(run.outputs[where[1]], want[k], rtol=1e-4, atol=1e-4 * np.abs(want[k]).max())
