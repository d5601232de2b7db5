"""The torch.compile backend fuses mm / addmm / bmm / baddbmm / linear with the ops around them into one generated
operator (fusekit.torch.matmul rewrites the products, fusekit.gen.cube generates them).

Expected values are eager PyTorch's on the same module (an independent implementation); the criterion is
fusekit.verify's (the CANN samples' tolerance of the output dtype)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("fusekit.torch needs torch >= 2.4", allow_module_level=True)

import fusekit.torch  # noqa: E402
from fusekit.torch.ops import to_numpy  # noqa: E402
from fusekit.verify import compare, tolerance  # noqa: E402

F = torch.nn.functional


def close(actual, expected):
    a, e = to_numpy(actual.detach().contiguous()), to_numpy(expected.detach().contiguous())
    c = compare(a, e, reference="eager", loss=tolerance(a.dtype))
    assert c.passed, c.summary()


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def fused_products(report) -> list:
    """The fused groups holding a matrix product, as their op lists."""
    return [g.ops for g in report.groups if g.fused and any(o.startswith("fusekit_") for o in g.ops)]


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(32, 48)
        self.down = torch.nn.Linear(48, 32, bias=False)

    def forward(self, x, r):
        return self.down(F.gelu(self.up(x))) + r


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_linear_gelu_mlp_is_two_matmul_operators(dtype):
    torch.manual_seed(0)
    m = Mlp().eval().to(dtype)
    x, r = torch.randn(2, 8, 32, dtype=dtype), torch.randn(2, 8, 32, dtype=dtype)
    compiled = fusekit.torch.compile(m, progress=False, predict=True)
    with torch.no_grad():
        close(compiled(x, r), m(x, r))
    report = compiled.fusekit_report
    assert fused_products(report) == [["fusekit_addmm", "gelu"], ["fusekit_mm", "add.Tensor"]]
    up = next(g for g in report.groups if "gelu" in g.ops)
    # the (16, 32) fold of x and the transpose of the weight are peeled: x as (2, 8, 32), transpose_b
    assert "transpose_b=True" in up.expression and up.inputs[0].startswith("[2, 8, 32]")
    assert up.fused_us < up.unfused_us and up.unfused_kernels == 2
    # both products fused: the whole graph's time is the two kernels', and all its FLOPs are in them
    assert report.eager_matmul_us["inference"] == (0.0, 0)
    assert report.npu_us("inference") == pytest.approx(sum(g.fused_us for g in report.groups if g.fused))
    t = report.traffic["inference"]
    assert t.share()[0] == 1.0 and t.flops >= 2 * 16 * 48 * 32 * 2  # two 16 x 32 x 48 products
    assert "predicted NPU time, matmuls included" in report.text()


@pytest.mark.parametrize("bias_shape, beta, alpha", [((24,), 1.0, 1.0), ((16, 1), 0.5, 2.0), ((16, 24), 1.0, -1.0),
                                                     ((24,), 0.0, 1.0)])
def test_addmm_bias_broadcasts_and_scales_as_eager(bias_shape, beta, alpha):
    torch.manual_seed(1)
    a, b = torch.randn(16, 40), torch.randn(40, 24)
    bias = torch.randn(bias_shape)
    if beta == 0:
        bias[0] = float("nan")  # ATen ignores the bias when beta = 0, NaN included

    def fn(bias, a, b):
        return torch.relu(torch.addmm(bias, a, b, beta=beta, alpha=alpha)) * 2.0

    compiled = fusekit.torch.compile(fn, progress=False)
    close(compiled(bias, a, b), fn(bias, a, b))
    product = "fusekit_mm" if beta == 0 else "fusekit_addmm"  # beta = 0: alpha * mm, no bias read
    assert fused_products(compiled.fusekit_report) == [[product, "relu", "mul.Tensor"]]


def test_addmm_with_k_zero_stays_eager_with_the_reason():
    def fn(bias, a, b):
        return torch.addmm(bias, a, b, beta=0.5) + 1.0

    bias, a, b = torch.randn(8), torch.randn(4, 0), torch.randn(0, 8)
    compiled = fusekit.torch.compile(fn, progress=False)
    torch.testing.assert_close(compiled(bias, a, b), fn(bias, a, b), rtol=0, atol=0)
    eager = compiled.fusekit_report.eager["inference"]
    assert any("K = 0" in k for k in eager)


def test_bmm_and_baddbmm_with_epilogues():
    torch.manual_seed(2)

    def fn(x, y, z, c):
        s = torch.bmm(x, y).sigmoid() + z
        return s, torch.tanh(torch.baddbmm(c, x, y, beta=0.5, alpha=0.25))

    x, y, z, c = torch.randn(3, 16, 32), torch.randn(3, 32, 24), torch.randn(3, 16, 24), torch.randn(24)
    compiled = fusekit.torch.compile(fn, progress=False)
    for got, want in zip(compiled(x, y, z, c), fn(x, y, z, c)):
        close(got, want)
    assert sorted(map(tuple, fused_products(compiled.fusekit_report))) == [("fusekit_baddbmm", "tanh"),
                                                                          ("fusekit_bmm", "sigmoid", "add.Tensor")]


def test_float16_transposed_a_is_read_by_load_data():
    torch.manual_seed(3)

    def fn(x, w):
        return F.silu(x.t() @ w)

    x, w = torch.randn(32, 16, dtype=torch.float16), torch.randn(32, 48, dtype=torch.float16)
    compiled = fusekit.torch.compile(fn, progress=False)
    close(compiled(x, w), fn(x, w))
    [g] = [g for g in compiled.fusekit_report.groups if g.fused]
    assert "transpose_a=True" in g.expression


def test_attention_score_block_is_one_operator():
    torch.manual_seed(4)

    def fn(q, k, mask):
        return torch.softmax(q @ k.transpose(-1, -2) * 0.125 + mask, -1)

    q, k, mask = torch.randn(1, 2, 8, 16), torch.randn(1, 2, 8, 16), torch.randn(8, 8)
    compiled = fusekit.torch.compile(fn, progress=False)
    close(compiled(q, k, mask), fn(q, k, mask))
    assert fused_products(compiled.fusekit_report) == [["fusekit_bmm", "mul.Tensor", "add.Tensor", "_softmax"]]


def test_llama_layer_fuses_across_its_matmuls():
    from test_torch_backend import _llama

    torch.manual_seed(4)
    layer, x, forward = _llama(torch.float32)
    layer.eval()
    compiled = fusekit.torch.compile(layer, progress=False)
    with torch.no_grad():
        close(forward(compiled, x), forward(layer, x))
    report = compiled.fusekit_report
    products = fused_products(report)
    # the attention scores with their softmax, o_proj with the residual add and the next RMSNorm, gate with
    # SwiGLU, down with the residual: 4 of the 9 products; q / k / v / up and attn @ v have no epilogue
    assert len(products) == 4 and ["fusekit_bmm", "mul.Tensor", "add.Tensor", "_softmax"] in products
    assert any(p[:2] == ["fusekit_mm", "add.Tensor"] and "rsqrt" in p for p in products)
    assert report.eager["inference"]["fusekit_mm: a lone op, nothing to fuse"] == 4
    # FLOPs by hand (hidden 64, seq 16, 4 heads of 16, 2 kv heads, intermediate 172): fused products are
    # scores 2*4*16*16*16, o_proj 2*16*64*64, gate and down 2*16*64*172 each; eager q, k, v, up, attn @ v
    fused_mm = 2 * 4 * 16 ** 3 + 2 * 16 * 64 * 64 + 2 * (2 * 16 * 64 * 172)
    eager_mm = 2 * 16 * 64 * 64 + 2 * (2 * 16 * 32 * 64) + 2 * 16 * 64 * 172 + 2 * 4 * 16 ** 3
    t = report.traffic["inference"]
    assert fused_mm <= t.fused_flops < fused_mm + 2 ** 15  # plus the epilogues' one-per-element ops
    assert t.flops >= fused_mm + eager_mm and 0 < t.share()[1] < 1
    assert not report.warnings


class ConvBlock(torch.nn.Module):
    """conv + bias, a per-channel scale (a folded batch norm), a residual and a ReLU: the article's "bigger fusion"."""

    def __init__(self, cin=6, cout=16, **conv):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, 3, **conv)
        self.scale = torch.nn.Parameter(torch.rand(cout, 1, 1) + 0.5)

    def forward(self, x, r):
        return F.relu(self.conv(x) * self.scale + r)


@pytest.mark.parametrize("dtype, precision", [(torch.float32, "fp32"), (torch.float16, "native")])
@pytest.mark.parametrize("conv", [dict(padding=1), dict(stride=2, padding=(0, 1), dilation=(1, 2))],
                         ids=["same", "strided-dilated"])
def test_convolution_with_its_epilogue_is_one_operator(dtype, precision, conv):
    """ATen's NCHW convolution and its epilogue run as one generated conv2d (NHWC inside, laid out back)."""
    model = ConvBlock(**conv).to(dtype).eval()
    x = torch.randn(2, 6, 9, 11, dtype=dtype)
    with torch.no_grad():
        r = torch.randn(model.conv(x).shape, dtype=dtype)
        want = model(x, r)
        compiled = fusekit.torch.compile(model, progress=False, predict=True, precision=precision)
        got = compiled(x, r)
    assert got.shape == want.shape and got.is_contiguous()
    close(got, want)
    report = compiled.fusekit_report
    assert fused_products(report) == [["fusekit_convolution", "mul.Tensor", "add.Tensor", "relu"]]
    traffic = next(iter(report.traffic.values()))
    assert traffic.share()[0] == 1.0  # every FLOP of the graph in the fused kernel


def test_a_convolution_epilogue_broadcast_along_w_is_laid_out_channels_last():
    """An NCHW operand that broadcasts along W only is materialised in NHWC, not taken as a channel row."""
    conv = torch.nn.Conv2d(4, 8, 3, padding=1).eval()
    w_row = torch.randn(12)  # NCHW's last axis: one value per column of the image

    def fn(x):
        return torch.sigmoid(conv(x) + w_row)
    x = torch.randn(1, 4, 12, 12)
    with torch.no_grad():
        compiled = fusekit.torch.compile(fn, progress=False)
        got = compiled(x)
        close(got, fn(x))
    assert fused_products(compiled.fusekit_report) == [["fusekit_convolution", "add.Tensor", "sigmoid"]]


def test_convolutions_the_generator_does_not_take_stay_eager_with_the_reason():
    """A grouped convolution stays an ATen op; a reduction after a convolution leaves the product eager (the NHWC
    kernel's rows are pixels), and the rest still fuses."""
    grouped = torch.nn.Conv2d(4, 8, 3, groups=2).eval()
    plain = torch.nn.Conv2d(4, 8, 3).eval()

    def fn(x):
        return torch.softmax(plain(x) * 2.0, dim=-1) + torch.relu(grouped(x) + 1.0)
    x = torch.randn(1, 4, 10, 10)
    with torch.no_grad():
        compiled = fusekit.torch.compile(fn, progress=False)
        close(compiled(x), fn(x))
    report = compiled.fusekit_report
    eager = report.eager[next(iter(report.eager))]
    grouped_reasons = [k for k in eager if "convolution" in k]
    assert len(grouped_reasons) == 1 and "groups=2" in grouped_reasons[0] and eager[grouped_reasons[0]] == 1
    reasons = " ".join(g.reason or "" for g in report.groups)
    assert "a reduction after a convolution" in reasons


class W8A8Linear(torch.nn.Module):
    """A quantised linear: int8 weights with per-channel scales, activations quantised per token, torch._int_mm."""

    def __init__(self, k=64, n=48):
        super().__init__()
        w = torch.randn(n, k)
        self.register_buffer("w_scale", w.abs().amax(1) / 127)
        self.register_buffer("w_q", torch.round(w / self.w_scale[:, None]).to(torch.int8))
        self.bias = torch.nn.Parameter(torch.randn(n))

    def forward(self, x):
        x_scale = x.abs().amax(-1, keepdim=True) / 127
        x_q = torch.round(x / x_scale).clamp(-128, 127).to(torch.int8)
        return torch.relu(torch._int_mm(x_q, self.w_q.t()).to(x.dtype) * (x_scale * self.w_scale) + self.bias)


def test_a_w8a8_linear_dequantises_in_the_products_kernel():
    """int8 x int8 -> int32 (exact) and its dequantisation by both scales, the bias and the ReLU: one operator whose
    answer is eager's (the int32 product is exact in both; the float epilogue rounds as eager's does)."""
    model = W8A8Linear().eval()
    x = torch.randn(32, 64)
    with torch.no_grad():
        compiled = fusekit.torch.compile(model, progress=False, predict=True)
        got = compiled(x)
        close(got, model(x))
    report = compiled.fusekit_report
    assert fused_products(report) == [["fusekit__int_mm", "_to_copy", "mul.Tensor", "mul.Tensor", "add.Tensor",
                                       "relu"]]
    assert next(g for g in report.groups if "fusekit__int_mm" in g.ops).fused_us is not None


def test_a_row_value_after_a_matmul_is_an_output_of_its_operator():
    """``(x @ w).sum(-1, keepdim=True)``: the mix kernel's epilogue writes the row value broadcast over its row and
    the call keeps the first column (row_outputs), as in a vector group."""
    w = torch.randn(64, 48)

    def fn(x):
        y = x @ w
        return y.sum(-1, keepdim=True) + 1, torch.relu(y)
    x = torch.randn(32, 64)
    with torch.no_grad():
        compiled = fusekit.torch.compile(fn, progress=False)
        got = compiled(x)
        for g, e in zip(got, fn(x)):
            assert g.shape == e.shape
            close(g, e)
    assert fused_products(compiled.fusekit_report) == [["fusekit_mm", "sum.dim_IntList", "add.Tensor", "relu"]]
