"""fusekit.torch's guards and messages, the faults a tester found (issue 13): the overflow guard, mixed devices, groups without a
prediction, dynamic shapes, and the small messages (misspelt options, float64, broadcast, progress bar,
reuse wording).

Expected values come from eager PyTorch (an independent implementation) or from float64 arithmetic
written here.
"""

from __future__ import annotations

import io
import warnings

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("fusekit.torch needs torch >= 2.4", allow_module_level=True)

import fusekit.torch  # noqa: E402
from fusekit.torch import backend as B  # noqa: E402
from fusekit.torch.report import GroupRecord, Report  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(m.message) for m in w]


# -- 1. the runtime overflow guard --------------------------------------------------------------------
def _centre(x):
    return x - x.mean(-1, keepdim=True) + 1


def test_native_float16_overflow_falls_back_to_eager_with_one_warning():
    """Regression: tester report, issue 13."""
    # the row sum 4096 * 30 = 122880 exceeds float16's largest finite value 65504 when the kernel sums in
    # float16; eager PyTorch accumulates in float32, so x - mean + 1 is exactly 1 everywhere
    x = torch.full((4, 4096), 30.0, dtype=torch.float16)
    compiled = fusekit.torch.compile(_centre, precision="native", progress=False)
    y, msgs = _caught(lambda: compiled(x))
    assert torch.equal(y, torch.ones_like(x))
    guard = [m for m in msgs if "overflowed" in m]
    assert len(guard) == 1 and "precision='fp32'" in guard[0]
    rec = [g for g in compiled.fusekit_report.groups if g.fused]
    assert len(rec) == 1 and rec[0].name in guard[0] and rec[0].fallbacks == 1
    # once per group: a second overflowing call recomputes without a second warning
    y2, msgs2 = _caught(lambda: compiled(x * 1.0))
    assert torch.equal(y2, torch.ones_like(x)) and not [m for m in msgs2 if "overflowed" in m]
    assert rec[0].fallbacks == 2
    assert "runtime guard: 2 call(s)" in compiled.fusekit_report.text()


def test_guard_leaves_finite_results_and_non_finite_inputs_alone():
    """Regression: tester report, issue 13."""
    compiled = fusekit.torch.compile(_centre, precision="native", progress=False)
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(1)).half()
    y, msgs = _caught(lambda: compiled(x))
    assert not [m for m in msgs if "overflowed" in m]
    ref = (x.double() - x.double().mean(-1, keepdim=True) + 1)
    assert (y.double() - ref).abs().max() < 2e-2
    x[0, 0] = float("inf")  # non-finite in, non-finite out: no fallback, no warning
    y, msgs = _caught(lambda: compiled(x))
    assert not [m for m in msgs if "overflowed" in m]
    assert not torch.isfinite(y[0]).all() and torch.isfinite(y[1:]).all()


def test_guard_per_row_output_falls_back_in_its_shape():
    """Regression: tester report, issue 13."""
    # two outputs, one per row: the eager fallback's (N, 1) value comes back as the graph expects it
    def f(x):
        m = x.mean(-1, keepdim=True)
        return x - m + 1, m

    x = torch.full((2, 4096), 30.0, dtype=torch.float16)
    compiled = fusekit.torch.compile(f, precision="native", progress=False)
    (a, m), msgs = _caught(lambda: compiled(x))
    assert torch.equal(a, torch.ones_like(x)) and torch.equal(m, torch.full((2, 1), 30.0, dtype=torch.float16))
    assert len([w for w in msgs if "overflowed" in w]) == 1


# -- 2. mixed devices ---------------------------------------------------------------------------------
def test_cpu_and_meta_arguments_are_refused():
    """Regression: tester report, issue 13."""
    a, m = torch.randn(4, 8), torch.empty(4, 8, device="meta")
    with pytest.raises(RuntimeError, match=r"fusekit::swiglu: .*different devices.*\.cpu\(\)"):
        torch.ops.fusekit.swiglu(a, m)
    with pytest.raises(RuntimeError, match="different devices"):
        torch.ops.fusekit.swiglu(m, a)
    # all meta: shapes only, as before
    out = torch.ops.fusekit.swiglu(m, m)
    assert out.device.type == "meta" and out.shape == (4, 8)


def test_real_kernel_refuses_a_meta_tensor():
    """Regression: tester report, issue 13."""
    spec = fusekit.torch.ops.spec_of("swiglu")
    with pytest.raises(RuntimeError, match=r"fusekit::swiglu runs on .* b is on meta"):
        spec.real(torch.randn(4, 8), torch.empty(4, 8, device="meta"))


# -- 3. groups without a prediction, and per-row outputs now predicted ---------------------------------
def test_training_layer_norm_group_with_per_row_outputs_is_predicted(tmp_path):
    """Regression: tester report, issue 13."""
    ln = torch.nn.LayerNorm(64)

    def f(x, r):
        return ln(x + r)

    x = torch.randn(8, 64, requires_grad=True)
    compiled = fusekit.torch.compile(f, report=str(tmp_path / "r.txt"), project=False, progress=False)
    compiled(x, torch.randn(8, 64)).sum().backward()
    fwd = [g for g in compiled.fusekit_report.groups if g.graph == "forward" and g.fused]
    assert fwd and any("[8, 1]" in o for g in fwd for o in g.outputs)  # mean / rstd saved per row
    for g in fwd:
        assert g.fused_us is not None and g.unfused_us > g.fused_us, g.reason
        assert "where(eq" not in g.expression


def test_text_report_prints_groups_without_prediction():
    """Regression: tester report, issue 13."""
    rep = Report("Ascend910B1", "fp32")
    rep.groups.append(GroupRecord("fx_a", "forward", ["add", "mul"], [], expression="y0 = x0", fused=True,
                                  fused_us=1.0, unfused_us=3.0, unfused_kernels=2, launch_share=0.2))
    rep.groups.append(GroupRecord("fx_b", "forward", ["mean", "sub"], [], expression="y0 = x0", fused=True,
                                  reason="no prediction: some reason"))
    text = rep.text()
    assert "predicted: none (some reason)" in text
    assert "1 fused group(s) without a prediction not counted" in text
    only = Report("Ascend910B1", "fp32", groups=[rep.groups[1]])
    assert "1 fused group(s) without a prediction" in only.text()


# -- 4. dynamic shapes --------------------------------------------------------------------------------
def _relu_chain(a):
    return torch.relu(a * 2 + 1)


def test_dynamic_shapes_recompile_fuses_with_separate_sections():
    """Regression: tester report, issue 13 (a section per recompile); since issue 23 the dynamic recompile fuses."""
    compiled = fusekit.torch.compile(_relu_chain, progress=False, dynamic=None)  # Dynamo's automatic dynamic
    _, first = _caught(lambda: compiled(torch.randn(4, 8)))
    x = torch.randn(6, 8)
    y, second = _caught(lambda: compiled(x))
    assert torch.equal(y, _relu_chain(x))
    assert not [m for m in first + second if "fusekit" in m]
    rep = compiled.fusekit_report
    text = rep.text()
    assert "== inference graph: 1 fused" in text and "== inference #2 graph: 1 fused" in text
    assert "inference #2" in rep.dynamic and "inference" not in rep.dynamic
    assert [g.graph for g in rep.groups] == ["inference", "inference #2"]


def test_string_backend_report_keeps_a_section_per_recompile(tmp_path):
    """Regression: tester report, issue 13."""
    path = tmp_path / "fusion.txt"
    compiled = torch.compile(_relu_chain, backend="fusekit", options={"report": str(path), "progress": False,
                                                                     "project": False})
    compiled(torch.randn(4, 8))
    compiled(torch.randn(6, 8))
    text = path.read_text()
    assert "== inference graph: 1 fused" in text and "== inference #2 graph: 1 fused" in text
    assert "dynamic shapes: sizes s" in text


def test_dynamic_true_fuses_and_matches_eager():
    """Regression: tester report, issue 13; since issue 23 dynamic=True fuses (tests/torch_backend/test_torch_dynamic.py)."""
    compiled = fusekit.torch.compile(_relu_chain, progress=False, dynamic=True)
    x = torch.randn(5, 8)
    y, msgs = _caught(lambda: compiled(x))
    assert torch.equal(y, _relu_chain(x))
    assert not [m for m in msgs if "fusekit" in m]
    assert [g.fused for g in compiled.fusekit_report.groups] == [True]


# -- 5. small messages --------------------------------------------------------------------------------
def test_misspelt_option_lists_the_valid_ones():
    """Regression: tester report, issue 13."""
    with pytest.raises(ValueError, match=r"unknown option 'precison' \(did you mean 'precision'\?\).*soc, "
                                         r"precision, report"):
        B.Options.from_dict({"precison": "native"})
    with pytest.raises(ValueError, match="unknown option 'precison'"):
        fusekit.torch.compile(_relu_chain, precison="native")
    with pytest.raises(Exception, match="unknown option 'precison'"):
        torch.compile(_relu_chain, backend="fusekit", options={"precison": "native"})(torch.randn(2, 8))


def test_float64_suggests_float32_and_broadcast_error_names_the_op():
    """Regression: tester report, issue 13."""
    x = torch.randn(4, 8, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"fusekit::swiglu .*float64.*\.to\(torch\.float32\)"):
        torch.ops.fusekit.swiglu(x, x)
    with pytest.raises(ValueError, match=r"fusekit::swiglu: shapes a\[4, 8\], b\[3, 8\] do not broadcast"):
        torch.ops.fusekit.swiglu(torch.randn(4, 8), torch.randn(3, 8))


def test_progress_bar_only_on_a_terminal(monkeypatch):
    """Regression: tester report, issue 13."""
    items = [1, 2]
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert B._progress(items, "inference", True) is items

    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr("sys.stderr", Tty())
    bar = B._progress(items, "inference", True)
    assert bar is not items and list(bar) == items


def test_reuse_wording_tells_an_earlier_compile_from_this_one():
    """Regression: tester report, issue 13."""
    def f(a):
        return torch.sigmoid(a * 5 + 2)

    fusekit.torch.compile(f, progress=False)(torch.randn(4, 8))
    torch._dynamo.reset()
    again = fusekit.torch.compile(f, progress=False)
    again(torch.randn(4, 8))
    rec = [g for g in again.fusekit_report.groups if g.fused][0]
    assert rec.reused and rec.reused_from == "an earlier compile"
    assert "(generated op reused from an earlier compile)" in again.fusekit_report.text()

    def g(a, b):  # the same chain twice in one graph, on an expression no other test compiles
        return torch.sigmoid(a * 7 + 3), torch.sigmoid(b * 7 + 3)

    pair = fusekit.torch.compile(g, progress=False)
    pair(torch.randn(4, 8), torch.randn(4, 8))
    recs = [r for r in pair.fusekit_report.groups if r.fused]
    assert [r.reused_from for r in recs] == ["", "an identical group"]
    assert "(generated op reused from an identical group)" in pair.fusekit_report.text()


def _rms(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def test_guard_catches_a_row_sum_overflow_that_leaves_finite_outputs():
    """Regression: tester report, issue 13."""
    # sum(x*x) over 4096 values of 8 is 262144 > 65504: the float16 kernel's rsqrt(inf) = 0 zeroes every row,
    # a finite but wrong answer; eager PyTorch (float32 accumulation) gives x / 8 = 1 everywhere
    x = torch.full((4, 4096), 8.0, dtype=torch.float16)
    compiled = fusekit.torch.compile(_rms, precision="native", progress=False)
    y, msgs = _caught(lambda: compiled(x))
    assert torch.allclose(y.float(), torch.ones(4, 4096), atol=1e-2)
    assert len([m for m in msgs if "overflowed" in m]) == 1
