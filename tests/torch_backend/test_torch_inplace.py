"""torch.ops.fusekit.fused_add_rms_norm: vLLM's fused residual add + RMSNorm, writing both results into its
arguments (fusekit.torch.inplace). Expected values: the formula in float64 torch (an independent model); rows and
elements the op does not view must keep their exact bits."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("fusekit.torch needs torch >= 2.4", allow_module_level=True)

import fusekit.torch  # noqa: E402
from fusekit.torch.ops import to_numpy  # noqa: E402
from fusekit.verify import compare, tolerance  # noqa: E402

OP = torch.ops.fusekit.fused_add_rms_norm


def expected(x, r, w, eps):
    s = x.double() + r.double()
    return (s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps) * w.double()).to(x.dtype), s.to(x.dtype)


def close(actual, want):
    a, e = to_numpy(actual.contiguous()), to_numpy(want.contiguous())
    c = compare(a, e, reference="float64", loss=tolerance(a.dtype))
    assert c.passed, c.summary()


@pytest.fixture(autouse=True)
def _fresh():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_schema_declares_both_writes():
    schema = OP.default._schema
    written = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    assert written == ["x", "residual"] and not schema.returns


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_writes_only_the_rows_its_views_cover(dtype):
    torch.manual_seed(0)
    bx, br, w = torch.randn(6, 64, dtype=dtype), torch.randn(6, 64, dtype=dtype), torch.randn(64, dtype=dtype)
    x0, r0 = bx.clone(), br.clone()
    assert OP(bx[1:4], br[1:4], w, 1e-6) is None
    y, s = expected(x0[1:4], r0[1:4], w, 1e-6)
    close(bx[1:4], y)
    close(br[1:4], s)
    for buf, old in ((bx, x0), (br, r0)):  # untouched rows: bit-identical
        assert torch.equal(buf[0], old[0]) and torch.equal(buf[4:], old[4:])


def test_strided_column_views():
    torch.manual_seed(1)
    bx, br, w = torch.randn(4, 128), torch.randn(4, 128), torch.randn(64)
    x0, r0 = bx.clone(), br.clone()
    OP(bx[:, ::2], br[:, 64:], w, 1e-5)
    y, s = expected(x0[:, ::2], r0[:, 64:], w, 1e-5)
    close(bx[:, ::2], y)
    close(br[:, 64:], s)
    assert torch.equal(bx[:, 1::2], x0[:, 1::2]) and torch.equal(br[:, :64], r0[:, :64])


def test_opcheck_is_clean():
    torch.manual_seed(2)
    args = (torch.randn(4, 64), torch.randn(4, 64), torch.randn(64), 1e-6)
    result = torch.library.opcheck(OP.default, args)
    assert set(result.values()) == {"SUCCESS"}, result


def test_under_torch_compile_with_views_of_a_larger_buffer():
    torch.manual_seed(3)
    bx, br, w = torch.randn(6, 64), torch.randn(6, 64), torch.randn(64)
    x0, r0 = bx.clone(), br.clone()

    def layer(bx, br, w):
        OP(bx[1:4], br[1:4], w, 1e-6)
        return bx * 2.0

    compiled = fusekit.torch.compile(layer, progress=False)
    out = compiled(bx, br, w)
    y, s = expected(x0[1:4], r0[1:4], w, 1e-6)
    close(bx[1:4], y)
    close(br[1:4], s)
    close(out, bx * 2.0)
    assert torch.equal(bx[0], x0[0]) and torch.equal(br[4:], r0[4:])


def test_mismatched_shapes_are_refused():
    with pytest.raises(ValueError, match="differ in shape"):
        OP(torch.randn(4, 64), torch.randn(3, 64), torch.randn(64))
    with pytest.raises(ValueError, match="one per column"):
        OP(torch.randn(4, 64), torch.randn(4, 64), torch.randn(32))
