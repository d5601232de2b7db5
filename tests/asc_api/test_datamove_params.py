"""data_copy's DataCopyParams forms, set_pad_value, init_const_value.

Model (AD-API DataCopy（GM与UB高维切分数据搬运）.md 表3): block b moves ``block_len`` 32 B DataBlocks
from ``b * (block_len + src_gap)`` blocks after the source start to ``b * (block_len + dst_gap)``
blocks after the destination start; the page's example 2 (half, blockCount 2, blockLen 3, srcGap 1,
dstGap 2) is one of the cases.
"""

from __future__ import annotations

import numpy as np
import pytest

import fusekit
from fusekit import asc


def blocks_model(src: np.ndarray, dst: np.ndarray, count: int, length: int, s_gap: int, d_gap: int) -> np.ndarray:
    per = 32 // src.itemsize
    out = dst.copy()
    for b in range(count):
        s0, d0 = b * (length + s_gap) * per, b * (length + d_gap) * per
        out[d0:d0 + length * per] = src[s0:s0 + length * per]
    return out


@asc.jit
def roundtrip(x: asc.GlobalAddress, y: asc.GlobalAddress, N: asc.ConstExpr[int], IN: asc.ConstExpr,
              OUT: asc.ConstExpr, ENH: asc.ConstExpr):
    """x -> UB with IN (DataCopyParams, or None for a plain count copy), UB -> UB copy, UB -> y with OUT."""
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    yg.set_global_buffer(y, N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2 * N * x.dtype.sizeof())
    a = buf.get(x.dtype)
    b = a[N:]
    if IN is None:
        asc.data_copy(a, xg, N)
    elif ENH is None:
        asc.data_copy(a, xg, IN)
    else:
        asc.data_copy(a, xg, intri_params=IN, enhanced_params=ENH)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(b, a, asc.DataCopyParams(1, N * x.dtype.sizeof() // 32, 0, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if OUT is None:
        asc.data_copy(yg, b, N)
    else:
        asc.data_copy(yg, b, repeat_params=OUT)


def _gm_to_ub(x, params, enhanced=None, soc=None):
    """Load x with params into UB prefilled by a count copy of x[::-1] (so untouched bytes are known)."""
    n = x.size
    y = np.zeros(n, x.dtype)

    @asc.jit
    def k(xr: asc.GlobalAddress, xx: asc.GlobalAddress, yy: asc.GlobalAddress):
        rg, xg, yg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        rg.set_global_buffer(xr, n)
        xg.set_global_buffer(xx, n)
        yg.set_global_buffer(yy, n)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=n * xx.dtype.sizeof())
        a = buf.get(xx.dtype)
        asc.data_copy(a, rg, n)
        asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
        if enhanced is None:
            asc.data_copy(a, xg, params)
        else:
            asc.data_copy(a, xg, params, enhanced)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(yg, a, n)

    k[1](x[::-1].copy(), x, y, **({"soc": soc} if soc else {}))
    return y


@pytest.mark.parametrize("count, length, s_gap, d_gap", [
    (2, 3, 1, 2),   # the page's example 2
    (1, 8, 0, 0),   # example 1: one contiguous block
    (4, 1, 3, 0),   # gather every 4th DataBlock
    (3, 2, 0, 1),   # scatter with holes in UB
])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.int64])
def test_gm_to_ub_blocks_and_gaps(count, length, s_gap, d_gap, dtype):
    per = 32 // np.dtype(dtype).itemsize
    n = max(count * (length + s_gap), count * (length + d_gap)) * per
    x = np.arange(1, n + 1).astype(dtype)
    y = _gm_to_ub(x, asc.DataCopyParams(count, length, s_gap, d_gap))
    assert np.array_equal(y, blocks_model(x, x[::-1].copy(), count, length, s_gap, d_gap))


def test_zero_blocks_or_zero_length_is_a_nop():
    x = np.arange(64, dtype=np.float32)
    for params in (asc.DataCopyParams(0, 8, 0, 0), asc.DataCopyParams(4, 0, 0, 0)):
        assert np.array_equal(_gm_to_ub(x, params), x[::-1])


def test_ub_to_gm_with_gaps_leaves_gm_holes():
    @asc.jit
    def k(x: asc.GlobalAddress, y: asc.GlobalAddress):
        xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
        xg.set_global_buffer(x, 64)
        yg.set_global_buffer(y, 128)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=256)
        a = buf.get(asc.float32)
        asc.data_copy(a, xg, 64)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(yg, a, asc.DataCopyParams(block_count=4, block_len=2, src_stride=0, dst_stride=2))

    x = np.arange(64, dtype=np.float32)
    y = np.full(128, -1, np.float32)
    k[1](x, y)
    assert np.array_equal(y, blocks_model(x, np.full(128, -1, np.float32), 4, 2, 0, 2))


def test_trace_records_one_access_per_block_and_merges_contiguous_ones():
    x = np.arange(128, dtype=np.float16)
    res = asc.launch(roundtrip, 1, (x, np.zeros(128, np.float16), 128, asc.DataCopyParams(2, 2, 0, 0),
                                    asc.DataCopyParams(2, 4, 0, 0), None))
    loads = [i for i in res.trace if i.op == "data_copy" and i.pipe is asc.Pipe.MTE2]
    assert [(w.stop - w.start) for w in loads[0].writes] == [128]  # two 64 B blocks with no gap: one range


def test_enhanced_params_defaults_copy_and_cube_settings_are_refused():
    x = np.arange(64, dtype=np.float32)
    y = _gm_to_ub(x, asc.DataCopyParams(1, 8, 0, 0), asc.DataCopyEnhancedParams())
    assert np.array_equal(y, x)
    with pytest.raises(asc.KernelError, match=r"DataCopyEnhancedParams\(block_mode=.*BLOCK_MODE_MATRIX.*cube-side"):
        _gm_to_ub(x, asc.DataCopyParams(1, 8, 0, 0), asc.DataCopyEnhancedParams(block_mode=asc.BlockMode.BLOCK_MODE_MATRIX))


@pytest.mark.parametrize("params, field", [
    (asc.DataCopyParams(4096, 1, 0, 0), "block_count=4096"), (asc.DataCopyParams(1, 65536, 0, 0), "block_len=65536"),
    (asc.DataCopyParams(1, 1, -1, 0), "src_stride=-1"),
])
def test_params_out_of_range(params, field):
    with pytest.raises(asc.KernelError, match=rf"DataCopyParams\.{field} outside"):
        _gm_to_ub(np.zeros(64, np.float32), params)


def test_blocks_past_the_tensor_name_the_unit():
    with pytest.raises(asc.KernelError, match=r"32 B DataBlocks"):
        _gm_to_ub(np.zeros(64, np.float32), asc.DataCopyParams(2, 4, 4, 0))


def test_a_form_fusekit_does_not_simulate_is_named():
    @asc.jit
    def k(x: asc.GlobalAddress):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x, 16)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=64)
        asc.data_copy(buf.get(asc.float32), xg, 16, 0, 1)  # fits no form (the slice form is simulated now)

    with pytest.raises(asc.KernelError, match=r"slice_list1.*Nd2NzParams.*fusekit does not simulate them yet"):
        k[1](np.zeros(16, np.float32))


# ---------------------------------------------------------------------------------------------
# set_pad_value: the pad value of DataCopyPad GM -> UB with is_pad=False (SetPadValue(ISASI).md example:
# blockLen 20 halves, rightPadding 12, SetPadValue(1))
# ---------------------------------------------------------------------------------------------

@asc.jit
def pad_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, VALUE: asc.ConstExpr):
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, 20)
    yg.set_global_buffer(y, 32)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=64)
    t = buf.get(asc.float16)
    if VALUE is not None:
        asc.set_pad_value(VALUE)
    asc.data_copy_pad(t, xg, asc.DataCopyExtParams(1, 20 * 2, 0, 0, 0),
                      asc.DataCopyPadExtParams(asc.float16, False, 0, 12, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, t, 32)


def test_set_pad_value_fills_the_pad_of_is_pad_false():
    x = np.arange(20, dtype=np.float16)
    y = np.zeros(32, np.float16)
    pad_kernel[1](x, y, 1)
    assert np.array_equal(y, np.concatenate([x, np.ones(12, np.float16)]))


def test_without_set_pad_value_is_pad_false_leaves_garbage_the_sanitizer_sees():
    report = fusekit.sanitize(pad_kernel)[1](np.arange(20, dtype=np.float16), np.zeros(32, np.float16), None)
    assert any(f.kind == "undefined pad read" for f in report.findings), report.to_text()


def test_set_pad_value_does_not_exist_on_310p():
    @asc.jit
    def k(x: asc.GlobalAddress):
        asc.set_pad_value(1)

    with pytest.raises(asc.KernelError, match=r"SetPadValue does not exist on Ascend310P3"):
        k[1](np.zeros(16, np.float16), soc="Ascend310P3")


def test_init_const_value_is_cube_side_and_says_so():
    """Fill.md: L1 / L0A / L0B only; a UB tensor of an AIV kernel gets the positions and the kernel type."""
    @asc.jit
    def k(x: asc.GlobalAddress):
        ub = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 0, 256)
        asc.init_const_value(ub, asc.InitConstValueParams(1, 2, 0, 2.2))

    with pytest.raises(asc.KernelError, match=r"dst must be in L1 / L0A / L0B \(TPosition.A1 / B1 / A2 / B2\), got UB.*"
                                              r"kernel_type=config.KernelType.AIC_ONLY"):
        k[1](np.zeros(16, np.float16))
