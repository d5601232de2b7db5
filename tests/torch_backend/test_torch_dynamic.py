"""Dynamic shapes in fusekit's torch.compile backend (issue 23): torch.compile(dynamic=True) and Dynamo's automatic
dynamic shapes (a plain torch.compile meeting a second input shape) fuse the graph's groups for symbolic sizes, once
for every size; the eager fallback, with its reason, where the generator refuses a size (a row longer than UB); the
fake kernels keep SymInts symbolic.

Expected values come from eager PyTorch (an independent implementation of the same model) under fusekit.verify's
criterion (the CANN samples' rule); compile counts from Dynamo's own counters; symbolic shapes from a FakeTensorMode
with its ShapeEnv (torch.fx.experimental.symbolic_shapes).
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("fusekit.torch needs torch >= 2.4", allow_module_level=True)

import fusekit  # noqa: E402
import fusekit.torch  # noqa: E402
from fusekit.torch import backend as B  # noqa: E402
from fusekit.torch.ops import as_torch_op, to_numpy  # noqa: E402
from fusekit.verify import compare, tolerance  # noqa: E402

F = torch.nn.functional
# (batch, sequence). The first has batch == sequence: with Dynamo's duck sizing off (run_all) the two stay two
# symbols, so a guard of the backend's relating them would show as a recompile
BATCHES = ((8, 8), (3, 8), (5, 6))


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


def close(actual, expected):
    a, e = to_numpy(actual.detach().contiguous()), to_numpy(expected.detach().contiguous())
    c = compare(a, e, reference="eager", loss=tolerance(a.dtype))
    assert c.passed, c.summary()


def compiles() -> int:
    """Graphs Dynamo compiled since the fixture's reset (one per recompile)."""
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


def run_all(compiled, model, shapes, *, c=64):
    """Call ``compiled`` and ``model`` on inputs of each (batch, sequence) and compare; the warnings caught."""
    from torch.fx.experimental import _config

    torch.manual_seed(1)
    with warnings.catch_warnings(record=True) as caught, torch.no_grad(), _config.patch(use_duck_shape=False):
        warnings.simplefilter("always")
        for b, s in shapes:
            x, r = torch.randn(b, s, c), torch.randn(b, s, c)
            close(compiled(x, r), model(x, r))
    return [str(w.message) for w in caught]


def variants(record) -> int:
    """Kernels the generator made for the record's operator (one per dtype, precision and input kinds)."""
    gen = next(g for g in B._CACHE.values() if g.overload._schema.name.endswith("::" + record.name))
    return len(gen.op.cube._variants) if gen.op.cube is not None else len(gen.op._variants)


class AddRmsNorm(torch.nn.Module):
    """Elementwise + RMSNorm: the residual add, the row's root mean square, the weight, an activation."""

    def __init__(self, c=64):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(c))

    def forward(self, x, r):
        h = x + r
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
        return F.silu(h) * 0.5


class Mlp(torch.nn.Module):
    def __init__(self, c=64):
        super().__init__()
        self.up = torch.nn.Linear(c, 2 * c)
        self.down = torch.nn.Linear(2 * c, c)

    def forward(self, x, r):
        return self.down(F.gelu(self.up(x + r))) + x


def test_add_rms_norm_is_generated_once_for_three_batch_sizes():
    torch.manual_seed(0)
    model = AddRmsNorm()
    compiled = fusekit.torch.compile(model, dynamic=True, progress=False)
    msgs = run_all(compiled, model, BATCHES)
    rep = compiled.fusekit_report
    assert compiles() == 1 and list(rep.compile_s) == ["inference"]
    assert len(rep.dynamic["inference"]) == 2  # batch and sequence symbolic; the row (the weight's 64) static
    (group,) = rep.groups
    assert group.fused and group.ops[:3] == ["add.Tensor", "pow.Tensor_Scalar", "mean.dim"]
    assert group.inputs[0].startswith("[s") and group.inputs[0].endswith(", 64] float32")
    assert variants(group) == 1 and group.fallbacks == 0
    assert not [m for m in msgs if "fusekit" in m]
    assert "dynamic shapes: sizes" in rep.text()


def test_mlp_with_linear_fuses_its_matmul_groups_for_every_batch():
    torch.manual_seed(0)
    model = Mlp()
    compiled = fusekit.torch.compile(model, dynamic=True, progress=False)
    msgs = run_all(compiled, model, BATCHES)
    rep = compiled.fusekit_report
    assert compiles() == 1
    fused = [g for g in rep.groups if g.fused]
    products = [g for g in fused if any(op.startswith("fusekit_addmm") for op in g.ops)]
    assert len(products) == 2, rep.text()  # up + gelu, down + residual add
    assert all(variants(g) == 1 and g.fallbacks == 0 for g in fused)
    assert not [m for m in msgs if "fusekit" in m]


def test_automatic_dynamic_recompile_fuses_and_serves_later_shapes():
    """A plain torch.compile: the first shape compiles static, the second recompiles with symbolic sizes (Dynamo's
    automatic dynamic shapes), which then serve the third without a recompile."""
    def fn(a):
        return torch.relu(a * 2 + 1)
    backend = B.Backend(B.Options(progress=False))
    compiled = torch.compile(fn, backend=backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in (4, 6, 9):
            x = torch.randn(n, 32)
            close(compiled(x), fn(x))
    assert compiles() == 2
    assert not [str(m.message) for m in caught if "fusekit" in str(m.message)]
    rep = backend.report
    assert "inference" not in rep.dynamic and len(rep.dynamic["inference #2"]) == 1
    assert [(g.graph, g.fused) for g in rep.groups] == [("inference", True), ("inference #2", True)]
    assert rep.groups[1].reused and rep.groups[1].fallbacks == 0  # the static graph's operator, now for any size


def test_row_longer_than_ub_runs_eagerly_with_its_reason():
    """The row length symbolic: rows of 64 fit UB, rows of 100000 float32 (400 kB) do not (Ascend910B1's UB is
    192 KiB, docs/ascendc-model.md): that call runs the ATen ops eagerly; the report says why; fitting rows fuse."""
    def norm(x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) + 1.0
    compiled = fusekit.torch.compile(norm, dynamic=True, progress=False)
    small, big, again = torch.randn(4, 64), torch.randn(2, 100_000), torch.randn(3, 96)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        close(compiled(small), norm(small))
        assert torch.equal(compiled(big), norm(big))  # the eager ops themselves: the same answer
        close(compiled(again), norm(again))
    assert compiles() == 1
    (group,) = compiled.fusekit_report.groups
    assert group.fused and group.fallbacks == 1
    (reason,) = group.refusals
    assert "100000 elements" in reason and "UB" in reason
    msgs = [str(m.message) for m in caught if "cannot run" in str(m.message)]
    assert len(msgs) == 1 and "[2, 100000]" in msgs[0] and "ran its ATen ops eagerly" in msgs[0]
    assert "1 call(s) ran eagerly, sizes the generator refuses" in compiled.fusekit_report.text()


def test_transposed_output_keeps_eager_strides_for_every_size(monkeypatch):
    """An elementwise chain on a transposed input: eager PyTorch's result keeps the input's layout (TensorIterator),
    and the graph's later views were traced on those strides; the fused output is laid out alike, sizes symbolic."""
    def fn(x):
        return torch.relu(x.transpose(0, 1) * 2 + 1)
    laid, real = [], B.permute_layout
    monkeypatch.setattr(B, "permute_layout", lambda t, order: laid.append(order) or real(t, order))
    compiled = fusekit.torch.compile(fn, dynamic=True, progress=False)
    for n in (4, 6, 9):
        x = torch.randn(n, 5, 32)
        y, e = compiled(x), fn(x)
        assert y.shape == e.shape and y.stride() == e.stride()
        close(y, e)
    assert compiles() == 1 and [g.fused for g in compiled.fusekit_report.groups] == [True]
    assert laid == [(1, 0, 2)] * 3  # eager's (5, n, 32) result lies as the input, n outermost


# -- the fake kernels under a ShapeEnv --------------------------------------------------------------------------
def _symbolic(*shapes):
    """Fake tensors whose every size is a fresh symbol (hints: the given sizes), and their ShapeEnv."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    out = []
    for shape, dynamic in shapes:
        ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC if d else DimDynamic.STATIC for d in dynamic])
        out.append(mode.from_tensor(torch.empty(shape), symbolic_context=ctx))
    return env, mode, out


def test_fake_kernel_keeps_sizes_symbolic():
    env, mode, (a, bias) = _symbolic(((8, 8, 64), (True, True, False)), ((64,), (False,)))
    with mode:
        y = torch.ops.fusekit.swiglu(a, torch.empty_like(a))
        z = torch.ops.fusekit.bias_gelu(a, bias)
    for out in (y, z):
        assert [str(d) for d in out.shape] == [str(d) for d in a.shape]
        assert isinstance(out.shape[0], torch.SymInt) and isinstance(out.shape[1], torch.SymInt)
    assert str(a.shape[0]) != str(a.shape[1])  # batch == sequence in the hints, still two symbols
    assert not env.guards, [str(g.expr) for g in env.guards]


def test_fake_matmul_kernel_keeps_m_symbolic():
    op = fusekit.define_op("matmul(x, w, transpose_b=True) + bias", "dyn_linear", dtypes=("float32",))
    f = as_torch_op(op)
    env, mode, (x, w, bias) = _symbolic(((6, 64), (True, False)), ((32, 64), (False, False)), ((32,), (False,)))
    with mode:
        y = f(x, w, bias)
    assert str(y.shape[0]) == str(x.shape[0]) and y.shape[1] == 32
    assert not env.guards, [str(g.expr) for g in env.guards]
