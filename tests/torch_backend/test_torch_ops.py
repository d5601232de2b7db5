"""fusekit.torch: fusekit operators as torch.library operators (issue 13, section 1).

- ``torch.library.opcheck`` (schema, autograd registration, FakeTensor, AOT dispatch with dynamic
  shapes) for every shipped operator, each of its dtypes and broadcast shapes: a sample by default,
  the whole sweep under ``-m slow``;
- gradients of the torch operator (the fused backward kernel, float32 inputs in precision fp32)
  against torch's autograd of an eager float64 re-implementation (test_gen_autodiff.eager);
- ``torch.compile(fullgraph=True)`` of functions calling the operators, forward and backward;
- zero-copy views, registration of user operators, and the errors for devices and dtypes.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fusekit  # noqa: E402
import fusekit.torch  # noqa: E402,F401
from fusekit.gen.catalogue import CATALOGUE  # noqa: E402
from fusekit.torch import ops as tops  # noqa: E402

from autograd_ref import torch_grads  # noqa: E402

ATTRS = {"scale": 0.625, "a": 1.5, "b": -0.75, "lo": -0.5, "hi": 0.5, "eps": 1e-5, "offset": 0.25}
SHIPPED = tops.register_shipped()
# the elementwise operators: the layouts below broadcast one shape; the cube's (a matmul or a conv2d: their
# operands' shapes differ) are test_cube_op_*'s below, without gradients (autodiff has no matmul derivative)
VECTOR = [name for name in SHIPPED if tops.spec_of(name).gen.cube is None]
CUBE = sorted(set(SHIPPED) - set(VECTOR))
C = 32
# where the last tensor input sits in the broadcast (the others are (3, C), or (2, 3, C) for "3d")
LAYOUTS = {"full": (3, C), "row": (C,), "column": (3, 1), "scalar": (), "3d": (C,), "strided": (3, C)}


def _inputs(spec, dtype: str, layout: str, seed: int = 0) -> list:
    gen = torch.Generator().manual_seed(seed)
    names = [n.name for n in spec.graph.inputs]
    out = []
    for i, name in enumerate(names):
        last = i == len(names) - 1 and i > 0
        shape = LAYOUTS[layout] if last else ((2, 3, C) if layout == "3d" else (3, C))
        fixed = spec.graph.input_dtypes.get(name)
        if fixed is not None:
            t = torch.randint(-50, 50, shape, generator=gen, dtype=getattr(torch, fixed))
        else:
            t = torch.randn(shape, generator=gen).to(getattr(torch, dtype))
            if layout == "strided" and i == 0:  # a transposed view: not contiguous
                t = torch.randn(shape[::-1], generator=gen).to(getattr(torch, dtype)).t()
            t.requires_grad_()
        out.append(t)
    return out


def _attrs(spec) -> dict:
    return {a.name: ATTRS[a.name] for a in spec.graph.attrs}


def _cases():
    for name in VECTOR:
        spec = tops.spec_of(name)
        for dtype in spec.dtypes:
            layouts = ["full", "strided"]
            if len(spec.graph.inputs) > 1 and spec.broadcast:
                layouts += ["row", "column", "scalar", "3d"]
            for layout in layouts:
                sample = dtype == spec.dtypes[-1] and layout in ("full", "row") or \
                    (name == "swiglu" and layout == "full")
                yield pytest.param(name, dtype, layout, id=f"{name}-{dtype}-{layout}",
                                   marks=() if sample else pytest.mark.slow)


@pytest.mark.parametrize("name,dtype,layout", list(_cases()))
def test_opcheck(name, dtype, layout):
    spec = tops.spec_of(name)
    args = _inputs(spec, dtype, layout)
    result = torch.library.opcheck(SHIPPED[name], tuple(args), _attrs(spec))
    assert result == {k: "SUCCESS" for k in result} and len(result) == 4


EDGE_SHAPES = [((), ()), ((0, C), (0, C)), ((5,), (5,)), ((7,), ()), ((1, 1), (1,)), ((2, 3, 4, C), (3, 1, C)),
               ((2, 1, C), (2, 5, C)), ((4, C), (4, 1))]


@pytest.mark.parametrize("shapes", EDGE_SHAPES, ids=str)
def test_opcheck_edge_shapes(shapes):
    """0-d, empty, 1-D, higher-rank and leading-axis broadcasts (folded into rows or materialised)."""
    gen = torch.Generator().manual_seed(1)
    a, b = (torch.randn(s, generator=gen, requires_grad=True) for s in shapes)
    result = torch.library.opcheck(SHIPPED["swiglu"], (a, b))
    assert set(result.values()) == {"SUCCESS"}
    y = SHIPPED["swiglu"](a, b, precision="fp32")
    assert y.shape == torch.broadcast_shapes(*shapes)
    torch.testing.assert_close(y, torch.nn.functional.silu(a) * b, rtol=1e-6, atol=1e-6)


def test_every_shipped_op_is_registered():
    assert set(SHIPPED) == {"fused_add_scale", "fused_add_scale_generated"} | set(CATALOGUE) - {"fused_add_scale"}
    for name, overload in SHIPPED.items():
        assert overload is getattr(torch.ops.fusekit, name).default


@pytest.mark.parametrize("name", sorted(VECTOR))
def test_outputs_match_the_generator(name):
    """The torch operator returns what the numpy front end computes on the same memory."""
    spec = tops.spec_of(name)
    dtype = spec.dtypes[0]
    args = [t.detach() for t in _inputs(spec, dtype, "row" if spec.broadcast and len(spec.graph.inputs) > 1
                                        else "full", seed=5)]
    got = SHIPPED[name](*args, **_attrs(spec))
    got = got if isinstance(got, tuple) else (got,)
    arrays = [tops.to_numpy(t) for t in args]
    if name == "fused_add_scale":
        want = [fusekit.fused_add_scale(*arrays, ATTRS["scale"])]
    else:
        want = list(spec.gen.run(*arrays, **_attrs(spec)).outputs.values())
    for g, w in zip(got, want):
        assert g.is_contiguous() and tuple(g.shape) == w.shape
        np.testing.assert_array_equal(tops.to_numpy(g), w)


# the cube operators' inputs and their result's shape (numpy.matmul's rule; a conv2d's NHWC (N, Ho, Wo, Cout) with
# stride 1, padding 1: Ho = H + 2 - 3 + 1, torch.nn.functional.conv2d's formula), written out by hand
CUBE_CASES = {
    "matmul_bias": ({"x": (2, 32, 48), "w": (48, 64), "bias": (64,)}, (2, 32, 64)),
    "matmul_bias_gelu": ({"x": (32, 48), "w": (48, 64), "bias": (64,)}, (32, 64)),
    "matmul_bias_gelu_erf": ({"x": (32, 48), "w": (48, 64), "bias": (64,)}, (32, 64)),
    "attention_score": ({"q": (32, 16), "k": (48, 16), "mask": (48,)}, (32, 48)),
    "quant_matmul_dequant": ({"x": (32, 64), "w": (48, 64), "scale": (48,)}, (32, 48)),
    "matmul_bias_relu_quant": ({"x": (32, 48), "w": (48, 64), "bias": (64,)}, (32, 64)),
    "matmul_swiglu": ({"x": (32, 48), "w_gate": (48, 64), "w_up": (48, 64)}, (32, 64)),
    "conv2d_bias_relu_quant": ({"x": (2, 4, 6, 6), "w": (8, 4, 3, 3), "bias": (8,)}, (2, 6, 6, 8)),
}


def _cube_inputs(name: str, seed: int = 0) -> list:
    """Inputs of a cube operator in its first dtype: int8 operands in [-8, 8) (a product far inside float16)."""
    spec = tops.spec_of(name)
    gen = torch.Generator().manual_seed(seed)
    out = []
    for n in spec.graph.inputs:
        shape, fixed = CUBE_CASES[name][0][n.name], spec.graph.input_dtypes.get(n.name)
        if fixed == "int8":
            out.append(torch.randint(-8, 8, shape, generator=gen, dtype=torch.int8))
        else:
            out.append(torch.randn(shape, generator=gen).to(getattr(torch, fixed or spec.dtypes[0])))
    return out


def test_every_cube_op_has_a_case():
    assert set(CUBE) == set(CUBE_CASES)


@pytest.mark.parametrize("name", CUBE)
def test_cube_op_matches_the_generator_in_the_products_shape(name):
    """A matmul / conv2d operator through torch: the product's shape (the fake kernel's too), and the values the
    numpy front end computes on the same memory, bit for bit."""
    spec = tops.spec_of(name)
    args = _cube_inputs(name)
    got = SHIPPED[name](*args, **_attrs(spec))
    want = spec.gen.run(*[tops.to_numpy(t) for t in args], **_attrs(spec)).y
    assert got.is_contiguous() and tuple(got.shape) == CUBE_CASES[name][1] == want.shape
    np.testing.assert_array_equal(tops.to_numpy(got), want)
    with torch._subclasses.FakeTensorMode() as mode:
        fake = SHIPPED[name](*[mode.from_tensor(t) for t in args], **_attrs(spec))
    assert tuple(fake.shape) == CUBE_CASES[name][1] and fake.dtype == got.dtype


@pytest.mark.parametrize("name", ["matmul_bias", "conv2d_bias_relu_quant"])
def test_cube_opcheck(name):
    """torch.library.opcheck (schema, FakeTensor, AOT dispatch with dynamic shapes) of a matmul and a conv2d
    operator, inputs without gradients."""
    result = torch.library.opcheck(SHIPPED[name], tuple(_cube_inputs(name)), _attrs(tops.spec_of(name)))
    assert result == {k: "SUCCESS" for k in result} and len(result) == 4


def test_conv2d_through_torch_against_float64_torch():
    """conv2d_bias_relu_quant against torch's own float64 conv2d, then NHWC: int8 within one step of
    ``rint(relu(conv + bias) * scale)`` (the float32 accumulator's rounding)."""
    x, w, bias = _cube_inputs("conv2d_bias_relu_quant", seed=3)
    got = SHIPPED["conv2d_bias_relu_quant"](x, w, bias, 4.0)
    conv = torch.nn.functional.conv2d(x.double(), w.double(), bias.double(), stride=1, padding=1)
    want = torch.clamp(torch.round(torch.relu(conv) * 4.0), -128, 127).permute(0, 2, 3, 1)
    assert got.dtype == torch.int8 and got.shape == want.shape
    assert (got.double() - want).abs().max() <= 1


GRAD_OPS = sorted(n for n in VECTOR if any(d in ("float32",) for d in tops.spec_of(n).dtypes)
                  and tops.spec_of(n).gen.graph.input_dtypes == {} and not n.startswith("quantize"))


@pytest.mark.parametrize("name", GRAD_OPS)
@pytest.mark.parametrize("layout", ["full", "row", "column"])
def test_gradients_match_torch_autograd(name, layout):
    """Float32 inputs in precision fp32 against torch's autograd of the eager expression in float64."""
    spec = tops.spec_of(name)
    if layout != "full" and (len(spec.graph.inputs) < 2 or not spec.broadcast):
        pytest.skip("one input, or the hand-written kernel: no broadcast")
    args = _inputs(spec, "float32", layout, seed=11)
    out = SHIPPED[name](*args, **_attrs(spec), precision="fp32")
    outs = out if isinstance(out, tuple) else (out,)
    gen = torch.Generator().manual_seed(12)
    grads = [torch.randn(o.shape, generator=gen) for o in outs]
    got = torch.autograd.grad(outs, args, grads)
    arrays = {n.name: t.detach().numpy() for n, t in zip(spec.graph.inputs, args)}
    want = torch_grads(spec.graph, arrays, _attrs(spec), [g.numpy() for g in grads])
    scale = max(np.abs(w).max() for w in want.values())  # a gradient that is 0 in theory gets rounding noise
    for n, g in zip(spec.graph.inputs, got):
        w = want[n.name]
        assert g.dtype == torch.float32 and tuple(g.shape) == w.shape
        np.testing.assert_allclose(g.numpy(), w, rtol=2e-5, atol=2e-6 * scale, err_msg=f"{name}: d/d{n.name}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_dtype_gradients(dtype):
    """float16 / bfloat16 gradients come back in the input's dtype and close to float64 autograd."""
    spec = tops.spec_of("layer_norm")
    args = _inputs(spec, dtype, "row", seed=3)
    y = SHIPPED["layer_norm"](*args, eps=1e-5)
    g = torch.randn(y.shape, generator=torch.Generator().manual_seed(4)).to(y.dtype)
    got = torch.autograd.grad(y, args, g)
    arrays = {n.name: t.detach().float().numpy() for n, t in zip(spec.graph.inputs, args)}
    want = torch_grads(spec.graph, arrays, {"eps": 1e-5}, [g.float().numpy()])
    for n, x, gx in zip(spec.graph.inputs, args, got):
        assert gx.dtype == x.dtype and gx.shape == x.shape
        w = want[n.name]
        np.testing.assert_allclose(gx.float().numpy(), w, rtol=0.05, atol=0.05 * np.abs(w).max())


def test_second_derivatives():
    """The backward operator is registered with its own autograd: grad of grad against float64 torch."""
    gen = torch.Generator().manual_seed(9)
    a, b = (torch.randn(3, C, generator=gen, requires_grad=True) for _ in range(2))
    ga, gb = torch.autograd.grad(SHIPPED["swiglu"](a, b, precision="fp32").sum(), (a, b), create_graph=True)
    got = torch.autograd.grad((ga * ga + ga * gb).sum(), (a, b))
    a2, b2 = (t.detach().double().requires_grad_() for t in (a, b))
    ga2, gb2 = torch.autograd.grad((torch.nn.functional.silu(a2) * b2).sum(), (a2, b2), create_graph=True)
    want = torch.autograd.grad((ga2 * ga2 + ga2 * gb2).sum(), (a2, b2))
    for g, w in zip(got, want):
        torch.testing.assert_close(g.double(), w, rtol=1e-5, atol=1e-5)


def test_integer_outputs_are_not_differentiable():
    x = torch.randn(3, C, requires_grad=True)
    q = SHIPPED["quantize"](x, 20.0)
    assert q.dtype == torch.int8 and not q.requires_grad


def test_compile_fullgraph_forward_and_backward():
    def f(a, b, bias):
        h = torch.ops.fusekit.swiglu(a, b) * 2.0
        return torch.ops.fusekit.layer_norm(h, bias, bias, eps=1e-5, precision="fp32").sum()

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    gen = torch.Generator().manual_seed(2)
    args = [torch.randn(4, C, generator=gen, requires_grad=True), torch.randn(4, C, generator=gen, requires_grad=True),
            torch.randn(C, generator=gen, requires_grad=True)]
    ref_args = [t.detach().clone().requires_grad_() for t in args]
    y = compiled(*args)
    y.backward()
    y_ref = f(*ref_args)
    y_ref.backward()
    torch.testing.assert_close(y, y_ref)
    for a, r in zip(args, ref_args):
        torch.testing.assert_close(a.grad, r.grad)


def test_compile_fullgraph_default_backend():
    def f(x1, x2):
        return torch.ops.fusekit.fused_add_scale(x1, x2, 0.5) + torch.ops.fusekit.add_relu(x1, x2)

    x1, x2 = torch.randn(2, 3, C), torch.randn(2, 3, C)
    torch.testing.assert_close(torch.compile(f, fullgraph=True)(x1, x2), torch.relu(x1 + x2) + (x1 + x2) * 0.5,
                               rtol=0, atol=1e-6)


def test_memory_is_shared_not_copied():
    x = torch.randn(4, 8)
    assert np.shares_memory(tops.to_numpy(x), x.numpy())
    xt = x.t()
    assert tops.to_numpy(xt).ctypes.data == xt.data_ptr() and tops.to_numpy(xt).strides == (4, 32)
    b = torch.randn(4, 8).to(torch.bfloat16)
    nb = tops.to_numpy(b)
    assert nb.dtype.name == "bfloat16" and nb.ctypes.data == b.data_ptr()
    assert tops.from_numpy(nb).data_ptr() == b.data_ptr() and tops.from_numpy(nb).dtype == torch.bfloat16


def test_as_torch_op_registers_once_and_names_clashes():
    """An equal op gets the same operator; another definition under the same name gets another one."""
    first = fusekit.define_op("x * x + y", name="user_fma")
    again = fusekit.define_op("x * x + y", name="user_fma")
    other = fusekit.define_op("x * y + y", name="user_fma")
    f = tops.as_torch_op(first)
    assert tops.as_torch_op(again) is f and f is getattr(torch.ops.fusekit, tops.torch_name(first)).default
    g = tops.as_torch_op(other)
    assert g is getattr(torch.ops.fusekit, tops.torch_name(other)).default and g is not f
    x, y = torch.randn(3, C), torch.randn(3, C)
    torch.testing.assert_close(f(x, y), x * x + y, rtol=0, atol=1e-6)
    torch.testing.assert_close(g(x, y), x * y + y, rtol=0, atol=1e-6)


def test_attributes_positional_or_keyword():
    x, y = torch.randn(3, C), torch.randn(3, C)
    a = SHIPPED["axpby"](x, y, 1.5, -0.75)
    b = SHIPPED["axpby"](x, y, b=-0.75, a=1.5)
    assert torch.equal(a, b)
    s = tops.spec_of("axpby").schema()
    assert s.startswith("(Tensor x, Tensor y, float a, float b, *, str? precision=None, str? soc=None)")


def test_required_attribute_after_a_default_makes_them_keyword_only():
    @fusekit.op(dtypes=("float32",))
    def kw_only(x, *, a=1.0, b):
        return x * a + b * x * x

    f = tops.as_torch_op(kw_only)
    assert str(f._schema) == (f"fusekit::{tops.torch_name(kw_only)}(Tensor x, *, float a=1., float b, "
                              "str? precision=None, str? soc=None) -> Tensor")
    x = torch.randn(3, C, requires_grad=True)
    assert set(torch.library.opcheck(f, (x,), {"b": 0.5, "a": 2.0}).values()) == {"SUCCESS"}
    (gx,) = torch.autograd.grad(f(x, b=0.5).sum(), x)
    torch.testing.assert_close(gx, 1.0 + 2 * 0.5 * x.detach(), rtol=1e-6, atol=1e-6)


def test_reserved_parameter_names_are_refused():
    @fusekit.op(dtypes=("float32",))
    def clash(x, *, precision=1.0):
        return x * precision

    with pytest.raises(ValueError, match=r"\['precision'\] are reserved by fusekit.torch"):
        tops.as_torch_op(clash)


def test_meta_tensors_get_shapes():
    x, b = torch.empty(5, C, device="meta", dtype=torch.bfloat16), torch.empty(C, device="meta", dtype=torch.bfloat16)
    y = SHIPPED["bias_gelu"](x, b)
    assert y.device.type == "meta" and y.shape == (5, C) and y.dtype == torch.bfloat16
    q = SHIPPED["quantize"](torch.empty(5, C, device="meta", dtype=torch.float16), 3.0)
    assert q.dtype == torch.int8


def test_bad_device_names_the_op():
    """Every device but CPU reaches the kernel registered for all backends (CompositeExplicitAutograd),
    which refuses it; a fake CUDA tensor (torch.compile of a CUDA model) is refused by the fake kernel."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    assert torch._C._dispatch_has_kernel_for_dispatch_key("fusekit::swiglu", "CompositeExplicitAutograd")
    spec = tops.spec_of("swiglu")
    meta = torch.empty(3, C, device="meta")
    with pytest.raises(RuntimeError, match=r"fusekit::swiglu runs on .*CPU tensors; a is on meta.*\.cpu\(\)"):
        spec.real(meta, meta)
    with FakeTensorMode():
        cuda = torch.empty(3, C, device="cuda")
        with pytest.raises(RuntimeError, match=r"fusekit::swiglu runs on .*CPU tensors; a is on cuda:0"):
            SHIPPED["swiglu"](cuda, cuda)


def test_bad_dtype_names_the_op_and_what_it_takes():
    x = torch.randn(3, C, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"fusekit::swiglu takes float16, float32, bfloat16 tensors; a is torch.float64"):
        SHIPPED["swiglu"](x, x)
    with pytest.raises(TypeError, match=r"fusekit::quantize takes float16, float32 tensors, got torch.bfloat16"):
        SHIPPED["quantize"](x.to(torch.bfloat16), 1.0)
    with pytest.raises(TypeError, match="differ in dtype"):
        SHIPPED["swiglu"](x.float(), x.half())
    with pytest.raises(TypeError, match=r"x must be torch.int32"):
        SHIPPED["dequantize"](x.float(), 1.0)


def test_hand_written_op_takes_equal_shapes():
    x = torch.randn(3, C)
    with pytest.raises(ValueError, match="fused_add_scale_generated broadcasts"):
        SHIPPED["fused_add_scale"](x, x[0], 0.5)
    torch.testing.assert_close(SHIPPED["fused_add_scale_generated"](x, x[0], 0.5), (x + x[0]) * 0.5, rtol=0, atol=1e-6)


def test_compile_backend_name_and_entry_point_are_registered():
    from torch._dynamo import list_backends

    assert "fusekit" in list_backends(exclude_tags=())
    from fusekit.torch import backend

    assert fusekit.torch.compile is backend.compile
