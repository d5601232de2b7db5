"""fusekit's torch.compile backend (fusekit.torch.backend): groups found, outputs and gradients against eager
PyTorch, the report, fallbacks; on hand-made modules and on transformers' BERT and LLaMA layers.

Expected values are eager PyTorch's (an independent implementation of the same model); the criterion is
fusekit.verify's (the CANN samples' verify_result.py rule, loss 1e-4 for float32, 1.6e-2 for bfloat16).
"""

from __future__ import annotations

import json
import warnings

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("fusekit.torch needs torch >= 2.4", allow_module_level=True)

import fusekit.torch  # noqa: E402
from fusekit.torch import backend as B  # noqa: E402
from fusekit.torch.ops import to_numpy  # noqa: E402
from fusekit.verify import compare, tolerance  # noqa: E402

F = torch.nn.functional


def close(actual, expected, loss=None, scale=None):
    """fusekit.verify's criterion (the samples' rule) between a compiled and an eager tensor."""
    a, e = to_numpy(actual.detach().contiguous()), to_numpy(expected.detach().contiguous())
    c = compare(a, e, reference="eager", loss=loss or tolerance(a.dtype), scale=scale)
    assert c.passed, c.summary()


class RmsSwiglu(torch.nn.Module):
    def __init__(self, c=64):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(c))
        self.gate = torch.nn.Linear(c, 2 * c)
        self.up = torch.nn.Linear(c, 2 * c)

    def forward(self, x, r):
        h = x + r
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
        return F.silu(self.gate(h)) * self.up(h)


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_backend_name_is_registered():
    assert "fusekit" in torch._dynamo.list_backends(exclude_tags=())


def test_string_backend_fuses_and_matches():
    def fn(a, b):
        return F.silu(a) * b + 1.0
    a, b = torch.randn(4, 96), torch.randn(4, 96)
    compiled = torch.compile(fn, backend="fusekit", options={"progress": False})
    close(compiled(a, b), fn(a, b))


def test_small_module_groups_report_and_outputs(tmp_path):
    torch.manual_seed(0)
    m = RmsSwiglu()
    x, r = torch.randn(2, 8, 64), torch.randn(2, 8, 64)
    path = tmp_path / "fusion.txt"
    compiled = fusekit.torch.compile(m, report=str(path), progress=False)
    with torch.no_grad():
        close(compiled(x, r), m(x, r))
    rep = compiled.fusekit_report
    fused = [g for g in rep.groups if g.fused]
    assert len(fused) == 2
    norm, mlp = fused
    assert norm.ops[:3] == ["add.Tensor", "pow.Tensor_Scalar", "mean.dim"]
    assert "rsqrt" in norm.expression and "mean(" in norm.expression
    # the gate Linear fuses with SwiGLU (the up Linear's product enters as x3: one matmul per operator)
    assert mlp.expression == "y0 = mul(silu(add(matmul(x0, x1, transpose_a=False, transpose_b=True), x2)), x3)"
    assert any("test_torch_backend.py" in s and "torch.rsqrt" in s for s in norm.sources)
    for g in fused:  # one kernel per primitive must cost more than the fused kernel, launches included
        assert g.fused_us is not None and g.unfused_us > g.fused_us > 0
        assert g is mlp or 0 < g.launch_share <= 1  # a matmul group's comparison has no launch share
        assert g.verify.startswith("passed")
        assert "@asc.jit" in open(g.kernel).read() or "asc." in open(g.kernel).read()
    text = path.read_text()
    assert "predicted NPU time of the fused groups" in text and "addmm" in text
    assert rep.saving_us("inference") == pytest.approx(sum(g.unfused_us - g.fused_us for g in fused))


def test_json_report(tmp_path):
    m = RmsSwiglu()
    path = tmp_path / "fusion.json"
    compiled = fusekit.torch.compile(m, report=str(path), progress=False, project=False)
    with torch.no_grad():
        compiled(torch.randn(1, 4, 64), torch.randn(1, 4, 64))
    data = json.loads(path.read_text())
    assert data["soc"] == "Ascend910B1" and data["precision"] == "fp32"
    assert [g["fused"] for g in data["groups"]] == [True, True]
    assert data["saving_us"]["inference"] > 0


def test_training_gradients_match():
    torch.manual_seed(1)
    m = RmsSwiglu(32)
    x0, r = torch.randn(2, 4, 32), torch.randn(2, 4, 32)
    compiled = fusekit.torch.compile(m, progress=False)

    def run(model):
        m.zero_grad()
        x = x0.clone().requires_grad_(True)
        y = model(x, r)
        (y * torch.linspace(-1, 1, y.numel()).reshape(y.shape)).sum().backward()
        return [y, x.grad] + [p.grad.clone() for p in m.parameters()]
    for got, want in zip(run(compiled), run(m)):
        close(got, want)
    graphs = {g.graph for g in compiled.fusekit_report.groups if g.fused}
    assert graphs == {"forward", "backward"}
    # the saved per-row 1/rms (shape (N, 1)) is a kernel output, written over full rows and sliced
    forward = [g for g in compiled.fusekit_report.groups if g.graph == "forward" and g.fused]
    assert any("[2, 4, 1] float32" in g.outputs for g in forward)


VOCABULARY = {
    "gelu_erf": lambda x, y: F.gelu(x) * y,
    "gelu_tanh": lambda x, y: F.gelu(x + y, approximate="tanh"),
    "leaky_relu": lambda x, y: F.leaky_relu(x, 0.2) + y,
    "clamp": lambda x, y: torch.clamp(x * y, -0.5, 0.5) + 1,
    "where": lambda x, y: torch.where(x > y, x, 0.1 * y) * 2,
    "log_softmax": lambda x, y: F.log_softmax(x * y, dim=-1),
    "sigmoid_tanh": lambda x, y: torch.sigmoid(x) * torch.tanh(y),
    "max_min_abs": lambda x, y: torch.maximum(x, y) - torch.minimum(x, y).abs(),
    "sqrt_div": lambda x, y: torch.sqrt(x.abs() + 1) / (y * y + 1),
    "exp_log": lambda x, y: torch.log(torch.exp(x) + 1) * y,
    "layer_norm": lambda x, y: F.layer_norm(x + y, (x.shape[-1],)),
    "amax": lambda x, y: x.amax(-1, keepdim=True) * y + x,
    "float16_chain": lambda x, y: (x.half() * y.half()).float() + 1,
    "bool_output": lambda x, y: ((x > 0) & (y > 0), x * y + 1),
}


@pytest.mark.parametrize("name", sorted(VOCABULARY))
def test_pointwise_vocabulary_forward_and_backward(name):
    fn = VOCABULARY[name]
    torch.manual_seed(6)
    x, y = torch.randn(4, 32, requires_grad=True), torch.randn(4, 32, requires_grad=True)
    compiled = fusekit.torch.compile(fn, progress=False)
    got, want = compiled(x, y), fn(x, y)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    loss = tolerance("float16") if name == "float16_chain" else None  # eager rounds the product to float16
    for a, b in zip(got, want):
        if not a.is_floating_point():
            assert torch.equal(a, b)
            continue
        close(a, b, loss)
        # a random cotangent: with sum()'s ones, layer_norm's (and softmax's) exact gradient is 0 and both sides
        # are rounding noise, which fusekit.verify's magnitude-scaled bound rightly refuses to call equal
        w = torch.randn(b.shape, generator=torch.Generator().manual_seed(7)).to(b.dtype)
        for ga, gb in zip(torch.autograd.grad((a * w).sum(), (x, y), allow_unused=True),
                          torch.autograd.grad((b * w).sum(), (x, y), allow_unused=True)):
            if gb is not None:
                close(ga, gb, loss)  # float16_chain's backward rounds through float16 as its forward does
    groups = compiled.fusekit_report.groups
    assert groups and all(g.fused for g in groups), [(g.ops, g.reason) for g in groups if not g.fused]


def test_per_row_results_are_written_over_rows_and_sliced():
    def fn(x):
        return torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5), torch.softmax(x, -1).amax(-1, keepdim=True)
    x = torch.randn(8, 32)
    compiled = fusekit.torch.compile(fn, progress=False)
    for got, want in zip(compiled(x), fn(x)):
        assert got.shape == want.shape == (8, 1)
        close(got, want)
    assert all(g.fused for g in compiled.fusekit_report.groups)


def test_outputs_keep_the_eager_strides_later_views_rely_on():
    # y keeps x.t()'s strides in eager PyTorch, so y.t().reshape(-1) is traced as a view
    def fn(x):
        y = torch.exp(x.t()) * 2.0 + 1.0
        return y.t().reshape(-1)
    x = torch.randn(4, 8)
    compiled = fusekit.torch.compile(fn, progress=False)
    close(compiled(x), fn(x))
    assert [g.fused for g in compiled.fusekit_report.groups] == [True]


def test_a_group_never_closes_a_cycle():
    # y -> mm -> z; out = (y + 1) * z: (y + 1) * z cannot join y's group (z depends on it through mm), and y's group
    # cannot join the product's (the product's operands are its kernel's GM inputs): two fused groups, no fall back
    w = torch.randn(16, 16)

    def fn(x):
        y = torch.exp(x) * 0.5
        z = y @ w
        return (y + 1.0) * z, torch.sigmoid(z) * y
    x = torch.randn(8, 16)
    backend = B.Backend(B.Options(progress=False))
    compiled = torch.compile(fn, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "the inference graph runs eagerly" would raise here
        for got, want in zip(compiled(x), fn(x)):
            close(got, want)
    assert sorted(tuple(g.ops) for g in backend.report.groups if g.fused) == [
        ("exp", "mul.Tensor", "add.Tensor"), ("fusekit_mm", "mul.Tensor", "sigmoid", "mul.Tensor")]


def test_repeated_layers_reuse_one_operator():
    torch.manual_seed(2)
    m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.GELU(approximate="tanh"),
                                                  torch.nn.Dropout(0.0)) for _ in range(3)])

    class Blocks(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):
            for block in self.m:
                x = torch.tanh(block(x)) * 2.0 + x
            return x
    x = torch.randn(4, 32)
    compiled = fusekit.torch.compile(Blocks(), progress=False)
    with torch.no_grad():
        close(compiled(x), Blocks()(x))
    fused = [g for g in compiled.fusekit_report.groups if g.fused]
    # per block: the Linear with its GELU (fusekit.torch.matmul), then tanh * 2 + x
    assert len(fused) == 6 and len({g.name for g in fused}) == 2
    assert [g.reused for g in fused] == [False, False, True, True, True, True]


def test_unfusible_group_is_left_eager_with_the_reason():
    # a softmax row of 70000 float32 does not fit UB: the generator refuses, the group stays eager
    def fn(x):
        return torch.softmax(x * 0.5, dim=-1)
    x = torch.randn(2, 70000)
    compiled = fusekit.torch.compile(fn, progress=False, predict=False)
    close(compiled(x), fn(x))
    (g,) = compiled.fusekit_report.groups
    assert not g.fused and "UB" in g.reason


def test_reduction_over_other_axes_and_float64_stay_eager():
    def fn(x, d):
        return torch.exp(x).sum(0, keepdim=True) * 2.0, torch.exp(d) * 2.0
    x, d = torch.randn(4, 8), torch.randn(4, 8, dtype=torch.float64)
    compiled = fusekit.torch.compile(fn, progress=False, min_ops=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(x, d)
    want = fn(x, d)
    assert torch.equal(got[1], want[1])  # float64 ran eagerly: bit for bit
    close(got[0], want[0])
    eager = compiled.fusekit_report.eager["inference"]
    assert any("last axis only" in k for k in eager)
    assert any("float64" in k for k in eager)
    assert any("float64" in str(w.message) for w in caught)


def test_graph_on_another_device_runs_eagerly_with_a_warning():
    gm = torch.fx.symbolic_trace(lambda a: torch.exp(a) * 2.0)
    backend = B.Backend(B.Options(progress=False))
    with pytest.warns(UserWarning, match="meta.*runs eagerly"):
        fn = backend(gm, [torch.empty(3, device="meta")])
    assert fn == gm.forward


def test_bad_options():
    with pytest.raises(ValueError, match="precision"):
        fusekit.torch.compile(torch.nn.Identity(), precision="fp16")
    with pytest.raises(ValueError, match="min_ops"):
        fusekit.torch.compile(torch.nn.Identity(), min_ops=0)
    with pytest.raises(ValueError, match="report=.*no_such_dir"):
        fusekit.torch.compile(torch.nn.Identity(), report="/no_such_dir/fusion.txt")
    with pytest.raises(ValueError, match="Ascend999"):
        fusekit.torch.compile(torch.nn.Identity(), soc="Ascend999")


# -- transformers: real architectures from configs, random weights, no downloads --------------------------
def _bert(dtype, hidden=64):
    tf = pytest.importorskip("transformers")
    from transformers.models.bert.modeling_bert import BertLayer

    cfg = tf.BertConfig(hidden_size=hidden, intermediate_size=2 * hidden, num_attention_heads=4,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, attn_implementation="eager")
    layer = BertLayer(cfg).to(dtype)
    x = torch.randn(2, 8, hidden, dtype=dtype)
    return layer, x, lambda m, inp: m(inp)[0] if isinstance(m(inp), tuple) else m(inp)


def _llama(dtype, hidden=64, seq=16):
    tf = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    heads = max(hidden // 64, 2) * 2
    cfg = tf.LlamaConfig(hidden_size=hidden, intermediate_size=hidden * 43 // 16, num_attention_heads=heads,
                         num_key_value_heads=heads // 2, attn_implementation="eager")
    layer = LlamaDecoderLayer(cfg, layer_idx=0).to(dtype)
    x = torch.randn(1, seq, hidden, dtype=dtype)
    pos = torch.arange(seq)[None]
    cos, sin = (t.to(dtype) for t in LlamaRotaryEmbedding(cfg)(x, pos))
    mask = torch.full((seq, seq), float("-inf")).triu(1)[None, None].to(dtype)

    def forward(m, inp):
        out = m(inp, attention_mask=mask.to(inp.dtype), position_embeddings=(cos.to(inp.dtype), sin.to(inp.dtype)),
                position_ids=pos)
        return out[0] if isinstance(out, tuple) else out
    return layer, x, forward


def _train_and_compare(layer, x0, forward):
    """Output and gradients of the compiled layer in training mode against eager PyTorch. float32: the
    samples' criterion. bfloat16: eager bfloat16 is itself only an approximation (every op rounds, and
    gradients sum many rounded terms), so both are measured against the layer in float64 (same weights
    and input): the compiled layer's largest error may be at most twice eager bfloat16's."""
    import copy

    compiled = fusekit.torch.compile(layer, progress=False)

    def run(model, owner, x0):
        owner.zero_grad()
        x = x0.clone().requires_grad_(True)
        y = forward(model, x)
        (y.to(torch.float64) * torch.linspace(-1, 1, y.numel(), dtype=torch.float64).reshape(y.shape)).sum().backward()
        return [y, x.grad] + [p.grad.clone() for p in owner.parameters()]
    got, want = run(compiled, layer, x0), run(layer, layer, x0)
    if x0.dtype == torch.float32:
        # a gradient that is 0 in exact arithmetic (a key bias under softmax) is rounding noise on both sides:
        # judge every tensor at the scale of the largest one the backward pass computed
        scale = max(w.detach().abs().max().item() for w in want)
        for g, w in zip(got, want):
            close(g, w, scale=scale)
    else:
        wide = copy.deepcopy(layer).to(torch.float64)
        truth = run(wide, wide, x0.to(torch.float64))
        for g, w, t in zip(got, want, truth):
            err_c = (g.detach().double() - t).abs().max().item()
            err_e = (w.detach().double() - t).abs().max().item()
            assert err_c <= 2 * err_e + 1e-6, (err_c, err_e)
    return compiled.fusekit_report


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_bert_encoder_layer(dtype):
    torch.manual_seed(3)
    layer, x, forward = _bert(dtype)
    layer.eval()
    compiled = fusekit.torch.compile(layer, progress=False)
    with torch.no_grad():
        close(forward(compiled, x), forward(layer, x))
    ops = [g.ops for g in compiled.fusekit_report.groups if g.fused]
    assert ["add.Tensor", "native_layer_norm"] in ops and any("_softmax" in o for o in ops)
    layer.train()
    torch._dynamo.reset()
    report = _train_and_compare(layer, x, forward)
    assert any(g.graph == "backward" and g.fused for g in report.groups)
    assert not report.warnings


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_llama_decoder_layer(dtype):
    torch.manual_seed(4)
    layer, x, forward = _llama(dtype)
    layer.eval()
    compiled = fusekit.torch.compile(layer, progress=False)
    with torch.no_grad():
        close(forward(compiled, x), forward(layer, x))
    groups = [g for g in compiled.fusekit_report.groups if g.fused]
    text = " | ".join(g.expression for g in groups)
    assert "rsqrt(" in text and "silu(" in text and "exp(" in text  # RMSNorm, SwiGLU, softmax
    assert len(groups) == 7 and all(g.fused for g in compiled.fusekit_report.groups)  # 4 with a matmul
    assert any("modeling_llama.py" in src and "rsqrt" in src for g in groups for src in g.sources)
    assert not compiled.fusekit_report.warnings
    layer.train()
    torch._dynamo.reset()
    report = _train_and_compare(layer, x, forward)
    assert sum(g.fused for g in report.groups if g.graph == "backward") >= 4
    assert not report.warnings


def test_llama_with_sdpa_attention_leaves_it_eager():
    tf = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    torch.manual_seed(7)
    cfg = tf.LlamaConfig(hidden_size=64, intermediate_size=176, num_attention_heads=4, num_key_value_heads=2,
                         attn_implementation="sdpa")
    layer = LlamaDecoderLayer(cfg, layer_idx=0).eval()
    x, pos = torch.randn(1, 16, 64), torch.arange(16)[None]
    emb = LlamaRotaryEmbedding(cfg)(x, pos)

    def forward(m):
        out = m(x, attention_mask=None, position_embeddings=emb, position_ids=pos)
        return out[0] if isinstance(out, tuple) else out
    compiled = fusekit.torch.compile(layer, progress=False)
    with torch.no_grad():
        close(forward(compiled), forward(layer))
    report = compiled.fusekit_report
    assert sum(g.fused for g in report.groups) == 6 and not report.warnings  # no softmax group; 3 with a matmul
    assert any("scaled_dot_product" in k for k in report.eager["inference"])


@pytest.mark.slow
def test_llama_layer_at_hidden_512_seq_128():
    import time

    torch.manual_seed(5)
    layer, x, forward = _llama(torch.float32, hidden=512, seq=128)
    layer.eval()
    compiled = fusekit.torch.compile(layer, progress=False, predict=False)
    started = time.perf_counter()
    with torch.no_grad():
        y = forward(compiled, x)
    assert time.perf_counter() - started < 30  # the compile-time target
    with torch.no_grad():
        close(y, forward(layer, x))


@pytest.mark.parametrize("replay", [True, False], ids=["replay", "simulate-every-call"])
def test_later_calls_replay_their_first_simulation(monkeypatch, replay):
    """fusekit.gen.replay: a group's first call at a shape simulates, later ones compute its hardware model (no
    launch); replay=False simulates every call. Both give eager's answer and the same bits as each other."""
    import sys

    import fusekit.asc

    launches = []
    real = fusekit.asc.launch

    def counted(*args, **kwargs):
        launches.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(sys.modules["fusekit.gen.op"], "launch", counted)  # fusekit.gen.op is also a function
    monkeypatch.setattr(fusekit.asc, "launch", counted)  # fusekit.gen.cube imports it at call time
    model = RmsSwiglu().eval()
    x, r = torch.randn(8, 64), torch.randn(8, 64)
    compiled = fusekit.torch.compile(model, verify=False, progress=False, replay=replay)
    with torch.no_grad():
        first = compiled(x, r)
        started = len(launches)
        assert started, "the first call simulates"
        x2, r2 = torch.randn(8, 64), torch.randn(8, 64)
        later = compiled(x2, r2)
        close(first, model(x, r))
        close(later, model(x2, r2))
    assert (len(launches) == started) == replay


def test_predictions_take_a_group_with_a_bool_input():
    """A backward group reads a comparison's bool result (amax's gradient): the predictions pass it as 0 / 1, and
    the backward graph fuses instead of running eagerly."""
    def fn(x):
        return x / x.abs().amax(-1, keepdim=True)
    compiled = fusekit.torch.compile(fn, progress=False, predict=True)
    x = torch.randn(32, 64, requires_grad=True)
    compiled(x).sum().backward()
    report = compiled.fusekit_report
    assert not report.warnings
    assert any(g.fused and g.graph == "backward" for g in report.groups)
    x2 = x.detach().clone().requires_grad_(True)
    fn(x2).sum().backward()
    close(x.grad, x2.grad)


def test_the_guard_keeps_quiet_when_eager_overflows_too():
    """exp(20) is inf in float16 in eager PyTorch as well: no warning, no fallback counted."""
    def fn(x):
        return torch.exp(x) * 2 + 1
    compiled = fusekit.torch.compile(fn, progress=False, precision="native")
    compiled(torch.randn(16, 64, dtype=torch.float16))
    big = torch.full((16, 64), 20.0, dtype=torch.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = compiled(big)
    assert torch.isinf(got).all() and torch.isinf(fn(big)).all()
    assert all(g.fallbacks == 0 for g in compiled.fusekit_report.groups)
