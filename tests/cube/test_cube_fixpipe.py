"""Fixpipe's conversions (fusekit.asc.cube.fixpipe; AD-API Fixpipe（L0C到GM数据搬运）.md, 随路量化.md, 随路ReLU.md):
values put into L0C exactly (C = A x I for float, C = bias for int32), then out through each mode; the expected
outputs are worked by hand from the documents' steps."""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.cube.fixpipe import Scale

from cube_kernels import AIC, run_matmul

Q = asc.QuantModes


def _float_l0c(values: np.ndarray, out, **kw) -> np.ndarray:
    """``values`` (16 x 16 float32) through L0C (C = values x I, exact) and Fixpipe into ``out``."""
    c, _ = run_matmul(values.astype(np.float32), np.eye(16, dtype=np.float32), out, base_k=16, **kw)
    return c


def _int_l0c(row: np.ndarray, out, **kw) -> np.ndarray:
    """C = 0 + bias (16 rows of ``row``, int32) through Fixpipe into ``out``; returns row 0."""
    c, _ = run_matmul(np.zeros((16, 32), np.int8), np.zeros((32, 16), np.int8), out, base_k=32,
                      bias=row.astype(np.int32), **kw)
    assert (c == c[0]).all()
    return c[0]


def deq(m1: float, *, offset: int = 0, signed: bool = True, shift: int = 0, mcb: bool = False) -> int:
    """A QUANT_PRE value packed as 随路量化.md 表1 lays it out: M1 bits 0-31, N 32-35, MCB 36, offset 37-45 (9-bit
    two's complement), sign 46."""
    bits = int(np.float32(m1).view(np.uint32))
    return bits | shift << 32 | int(mcb) << 36 | (offset & 0x1FF) << 37 | int(signed) << 46


def test_f322f16_rounds_to_nearest_even():
    """CAST_RINT: 1 + 2^-11 is a tie between 1 and 1 + 2^-10 (even: 1); 1 + 3 * 2^-11 a tie between 1 + 2^-10 and
    1 + 2^-9 (even: 1 + 2^-9); 65520 rounds past the largest half to inf in INF_NAN mode."""
    v = np.zeros((16, 16), np.float32)
    v[0, :4] = [1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 65520.0]
    out = _float_l0c(v, np.float16, quant=Q.F322F16)
    np.testing.assert_array_equal(out[0, :4], np.array([1, 1 + 2**-9, -1, np.inf], np.float16))
    saturated, _ = run_matmul(v, np.eye(16, dtype=np.float32), np.float16, base_k=16, quant=Q.F322F16,
                              overflow="saturation")
    assert saturated[0, 3] == np.float16(65504)


def test_f322bf16_rounds_to_nearest_even():
    import ml_dtypes

    v = np.zeros((16, 16), np.float32)
    v[0, :2] = [1 + 2**-8, 1 + 3 * 2**-8]  # ties at bfloat16's 7 mantissa bits
    out = _float_l0c(v, ml_dtypes.bfloat16, quant=Q.F322BF16)
    np.testing.assert_array_equal(out[0, :2].astype(np.float32), np.array([1, 1 + 2**-6], np.float32))


def test_no_quant_with_relu():
    v = np.linspace(-4, 4, 256, dtype=np.float32).reshape(16, 16)
    np.testing.assert_array_equal(_float_l0c(v, np.float32, relu=True), np.maximum(v, 0))


def test_qf322b8_pre_scales_rounds_offsets_and_saturates():
    """y = x * M1; q = clip(rint(y), -256, 255) + offset; then int8 (golden gen_data_f322s8.py's steps). With
    M1 = 0.5, offset 3: worked by hand."""
    v = np.zeros((16, 16), np.float32)
    x = [-300, -3, -2.5, -1.5, 0.5, 1.5, 2.5, 255, 600]
    v[0, :9] = x
    # y = -150, -1.5, -1.25, -0.75, 0.25, 0.75, 1.25, 127.5, 300 -> rint -150, -2, -1, -1, 0, 1, 1, 128, 300
    # -> clip to [-256, 255] -> + 3 -> -147, 1, 2, 2, 3, 4, 4, 131, 258 -> int8
    out = _float_l0c(v, np.int8, quant=Q.QF322B8_PRE, deq=deq(0.5, offset=3))
    np.testing.assert_array_equal(out[0, :9], [-128, 1, 2, 2, 3, 4, 4, 127, 127])
    relu = _float_l0c(v, np.int8, quant=Q.QF322B8_PRE, deq=deq(0.5, offset=3), relu=True)
    np.testing.assert_array_equal(relu[0, :9], [3, 3, 3, 3, 3, 4, 4, 127, 127])  # M2 = 0 for x < 0
    unsigned = _float_l0c(v, np.uint8, quant=Q.QF322B8_PRE, deq=deq(0.5, offset=-2, signed=False))
    np.testing.assert_array_equal(unsigned[0, :9], [0, 0, 0, 0, 0, 0, 0, 126, 253])


def test_the_low_13_mantissa_bits_of_the_scale_are_ignored():
    """(1,8,10): M1 keeps bits 13-31 (Fixpipe page: "将量化参数的23bits尾数位的低13bits数据位清零")."""
    v = np.zeros((16, 16), np.float32)
    v[0, 0] = 100
    exact = _float_l0c(v, np.int8, quant=Q.QF322B8_PRE, deq=deq(1.0))
    noisy = _float_l0c(v, np.int8, quant=Q.QF322B8_PRE, deq=deq(1.0) | 0x1FFF)  # 1 + 8191 * 2^-23 ~ 1.001
    assert exact[0, 0] == noisy[0, 0] == 100
    assert float(Scale(deq(1.0) | 0x1FFF).m1) == 1.0


def test_req8_shifts_with_mcb_then_scales():
    """REQ8 with MCB: x >> N saturated to int16, then as QF322B8_PRE: 1000 >> 2 = 250; 200000 >> 2 = 50000 ->
    32767 -> 255 after the [-256, 255] clip; -40 >> 2 = -10 -> uint8 0."""
    row = np.zeros(16, np.int64)
    row[:3] = [1000, 200000, -40]
    out = _int_l0c(row, np.uint8, quant=Q.REQ8, deq=deq(1.0, signed=False, shift=2, mcb=True))
    np.testing.assert_array_equal(out[:3], [250, 255, 0])
    plain = _int_l0c(row, np.int8, quant=Q.REQ8, deq=deq(0.01))  # no MCB: 10, 2000 -> 127, -0.4 -> 0
    np.testing.assert_array_equal(plain[:3], [10, 127, 0])


def test_deqf16_saturates_instead_of_inf():
    """DEQF16: "量化结果不支持INF_NAN模式": 70000 x 1 stays 65504."""
    row = np.zeros(16, np.int64)
    row[:3] = [70000, -3, 7]
    out = _int_l0c(row, np.float16, quant=Q.DEQF16, deq=deq(1.0))
    np.testing.assert_array_equal(out[:3], np.array([65504, -3, 7], np.float16))
    scaled = _int_l0c(row, np.float16, quant=Q.DEQF16, deq=deq(0.25))
    np.testing.assert_array_equal(scaled[1:3], np.array([-0.75, 1.75], np.float16))


@asc.jit(kernel_type=AIC)
def vector_quant(x: asc.GlobalAddress, scales: asc.GlobalAddress, y: asc.GlobalAddress):
    """C = x (16 x 16 float) x I, out through VQF322B8_PRE with one scale per column from L1."""
    xg, sg, yg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x)
    sg.set_global_buffer(scales)
    yg.set_global_buffer(y)
    eye = asc.LocalTensor(asc.float32, asc.TPosition.B1, 4096, 256)
    a1 = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, 256)
    ws = asc.LocalTensor(asc.uint64, asc.TPosition.C1, 8192, 16)
    a2, b2 = asc.LocalTensor(asc.float32, asc.TPosition.A2, 0, 256), asc.LocalTensor(asc.float32, asc.TPosition.B2, 0, 256)
    c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    asc.data_copy(a1, xg, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    asc.data_copy(eye, xg[256:], asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    asc.data_copy(ws, sg, 16)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for m1 in range(1):
        asc.load_data(a2, a1, asc.LoadData2DParams(0, 2, 1, 0, 0, False, 0))
    asc.load_data(b2, eye, asc.LoadData2DParams(0, 2, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad(c, a2, b2, asc.MmadParams(16, 16, 16, 0, False, True))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(yg, c, ws, asc.FixpipeParamsV220(16, 16, 16, 16, asc.QuantModes.VQF322B8_PRE))


def test_vector_quant_takes_one_scale_per_column_from_l1():
    x = np.concatenate([np.full(256, 10, np.float32), np.eye(16, dtype=np.float32).ravel()])
    scales = np.array([deq(0.5 * (j + 1)) for j in range(16)], np.uint64)
    y = np.zeros((16, 16), np.int8)
    vector_quant[1](x, scales, y)
    np.testing.assert_array_equal(y[0], np.minimum(np.rint(10 * 0.5 * np.arange(1, 17)), 127))


def test_nz_output_keeps_the_fractals():
    """CO2Layout.NZ: column blocks of 16, dst_stride 32 B units apart (half: 16 rows of 32 B = dst_stride 16)."""

    @asc.jit(kernel_type=AIC)
    def nz_out(x: asc.GlobalAddress, y: asc.GlobalAddress):
        xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
        xg.set_global_buffer(x)
        yg.set_global_buffer(y)
        a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 16 * 32)
        b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 4096, 32 * 32)
        a2, b2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 512), asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 1024)
        c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 512)
        asc.data_copy(a1, xg, asc.Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0))
        asc.data_copy(b1, xg[512:], asc.Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.load_data(a2, a1, asc.LoadData2DParams(0, 2, 1, 0, 0, False, 0))
        asc.load_data(b2, b1, asc.LoadData2DParams(0, 4, 1, 0, 0, False, 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.mmad(c, a2, b2, asc.MmadParams(16, 32, 32, 0, False, True))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.fixpipe(yg, c, asc.FixpipeParamsV220(32, 16, 16, 16, asc.QuantModes.F322F16), asc.FixpipeConfig.cfg_nz())

    a = (np.arange(16 * 32) % 7).astype(np.float16).reshape(16, 32)
    x = np.concatenate([a.ravel(), np.eye(32, dtype=np.float16).ravel()])  # B^T = I
    y = np.zeros(512, np.float16)
    nz_out[1](x, y)
    for i, j in [(0, 0), (3, 5), (15, 15), (0, 16), (7, 20), (15, 31)]:
        assert y[(j // 16) * 256 + i * 16 + j % 16] == a[i, j]


@pytest.mark.parametrize("out, kw, message", [
    (np.float32, dict(quant=Q.F322F16), r"quant_pre=QuantModes.F322F16 converts float32 -> float16, not float32 -> "
                                        r"float32"),
    (np.int8, dict(quant=Q.QF322B8_PRE, deq=deq(1.0, signed=False)), r"bit 46 \(sign\) says uint8 but dst is int8"),
    (np.int8, dict(quant=Q.QF322B8_PRE, deq=int(np.float32(np.inf).view(np.uint32)) | 1 << 46),
     r"a quantisation scale M1 is inf, NaN or denormal"),
])
def test_refusals_name_the_rule(out, kw, message):
    with pytest.raises(asc.KernelError, match=message):
        _float_l0c(np.ones((16, 16), np.float32), out, **kw)
