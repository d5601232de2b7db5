"""img2col: ``load_data`` with LoadData3DParamsV2 / V2Pro from L1 into L0A / L0B (AD-API LoadData_3D.md), checked
against an img2col written here from the page's definition (数据格式说明: a row per filter window, windows W first;
a column per (c1, kh, kw, c0)) and the destination layouts the page names (L0A Zz, L0B Zn; 关键特性说明); the
documented refusals; and conv2d as img2col + mmad + fixpipe against a float64 numpy convolution."""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from cube_kernels import AIC, Snapshots, ceil_to, conv2d, conv2d_reference

POISON = 0xFF  # a fresh arena's bytes (fusekit.machine.state.make_arenas): what an unwritten element holds


def img2col(x, pads, filt, stride, dilation, pad_value):
    """The img2col matrix of feature map x (C1, H, W, C0), element by element (LoadData_3D.md, 数据格式说明)."""
    c1n, hn, wn, c0 = x.shape
    left, right, top, bottom = pads
    fh, fw = filt
    ho_n = (hn + top + bottom - (fh - 1) * dilation[0] - 1) // stride[0] + 1
    wo_n = (wn + left + right - (fw - 1) * dilation[1] - 1) // stride[1] + 1
    out = np.empty((ho_n * wo_n, c1n * fh * fw * c0), x.dtype)
    for ho in range(ho_n):
        for wo in range(wo_n):
            for c1 in range(c1n):
                for i in range(fh):
                    for j in range(fw):
                        h = ho * stride[0] + i * dilation[0] - top
                        w = wo * stride[1] + j * dilation[1] - left
                        inside = 0 <= h < hn and 0 <= w < wn
                        col = ((c1 * fh + i) * fw + j) * c0
                        out[ho * wo_n + wo, col:col + c0] = x[c1, h, w] if inside else pad_value
    return out


def expected_destination(block, layout, c0, length):
    """The destination elements (flat, ``length`` long; None where nothing is written) of the m x k block: L0A Zz
    (16 x C0 fractals, row-major), L0A transposed (Zz of the transpose, m aligned to 16), L0B Zn (K = m, N = k)."""
    m_ext, k_ext = block.shape
    out = [None] * length
    for m in range(m_ext):
        for k in range(k_ext):
            if layout == "zz":
                at = ((m // 16) * -(-k_ext // c0) + k // c0) * 16 * c0 + (m % 16) * c0 + k % c0
            elif layout == "zz_t":
                at = ((k // 16) * (ceil_to(m_ext, 16) // c0) + m // c0) * 16 * c0 + (k % 16) * c0 + m % c0
            else:
                at = ((m // c0) * -(-k_ext // 16) + k // 16) * 16 * c0 + (k % 16) * c0 + m % c0
            out[at] = block[m, k]
    return out


def run_load(x, params, position, length, before=None, **keywords):
    """Copy feature map x (C1, H, W, C0) to L1, run ``before`` then load_data(dst at ``position``, l1, params);
    returns the destination arena's first ``length`` elements after the load."""
    dtype = asc.DataType(x.dtype.name) if x.dtype != np.float16 else asc.float16

    @asc.jit(kernel_type=AIC)
    def kernel(g: asc.GlobalAddress):
        gm = asc.GlobalTensor()
        gm.set_global_buffer(g)
        l1 = asc.LocalTensor(dtype, asc.TPosition.A1, 0, x.size)
        dst = asc.LocalTensor(dtype, position, 0, length)
        asc.data_copy(l1, gm, x.size)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        if before is not None:
            before()
        asc.load_data(dst, l1, params, **keywords)

    snaps = Snapshots("load_data")
    asc.launch(kernel, 1, (x.reshape(-1),), executor=snaps)
    space = "L0A" if position is asc.TPosition.A2 else "L0B"
    return snaps.after[-1][1][space][:length * x.itemsize].view(x.dtype) if snaps.after else None


def _check(dst, expected):
    for at, value in enumerate(expected):
        if value is None:
            assert (dst[at:at + 1].view(np.uint8) == POISON).all(), f"element {at} written"
        else:
            assert dst[at] == value, f"element {at}: {dst[at]} != {value}"


def _map(dtype, c1, h, w, seed=0):
    c0 = 32 // np.dtype(dtype).itemsize
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal((c1, h, w, c0)).astype(dtype)
    return rng.integers(-100, 100, (c1, h, w, c0)).astype(dtype)


CASES = [  # dtype, C1, H, W, pads, filter, stride, dilation, pad value, m_start, m_ext, k_start, k_ext
    (np.float16, 2, 5, 6, (1, 1, 1, 1), (3, 3), (1, 1), (1, 1), 0.0, 0, 30, 0, 288),
    (np.float16, 1, 7, 7, (0, 2, 1, 0), (3, 2), (2, 1), (1, 2), -1.5, 16, 5, 32, 48),
    (np.float16, 2, 6, 5, (2, 0, 0, 2), (2, 2), (1, 2), (2, 1), 3.0, 0, 18, 64, 64),
    (np.float32, 3, 4, 5, (1, 0, 1, 0), (2, 3), (1, 1), (1, 1), 0.0, 3, 13, 8, 136),
    (np.int8, 2, 5, 5, (1, 1, 1, 1), (3, 3), (2, 2), (1, 1), 7, 0, 9, 32, 96),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{np.dtype(c[0]).name}-{c[5]}-s{c[6]}-d{c[7]}")
def test_img2col_into_l0a_matches_the_definition(case):
    dtype, c1, h, w, pads, filt, stride, dil, pad, m0, m_ext, k0, k_ext = case
    x = _map(dtype, c1, h, w)
    c0 = x.shape[-1]
    params = asc.LoadData3DParamsV2(list(pads), h, w, c1 * c0, k_ext, m_ext, k0, m0, stride[1], stride[0], filt[1],
                                    filt[0], dil[1], dil[0], False, pad)
    length = ceil_to(m_ext, 16) * ceil_to(k_ext, c0)
    dst = run_load(x, params, asc.TPosition.A2, length)
    block = img2col(x, pads, filt, stride, dil, pad)[m0:m0 + m_ext, k0:k0 + k_ext]
    _check(dst, expected_destination(block, "zz", c0, length))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_img2col_transposed_into_l0a_and_into_l0b(dtype):
    """en_transpose into L0A (b16 / b32) and the always-transposed L0B, on a strided, padded 3 x 3 window."""
    x = _map(dtype, 2, 6, 6, seed=1)
    c0 = x.shape[-1]
    pads, filt, stride, dil = (1, 0, 0, 1), (3, 3), (2, 1), (1, 1)
    a = img2col(x, pads, filt, stride, dil, 0.5)
    m_ext, k_ext = a.shape[0], 5 * c0
    for position, layout in ((asc.TPosition.A2, "zz_t"), (asc.TPosition.B2, "zn")):
        params = asc.LoadData3DParamsV2(list(pads), 6, 6, 2 * c0, k_ext, m_ext, 2 * c0, 0, stride[1], stride[0], 3, 3,
                                        1, 1, True, 0.5)
        length = ceil_to(m_ext, 16) * ceil_to(k_ext, 16)
        dst = run_load(x, params, position, length)
        _check(dst, expected_destination(a[:, 2 * c0:2 * c0 + k_ext], layout, c0, length))


def test_a_matrix_in_nz_loads_as_a_one_by_one_feature_map():
    """关键特性说明: an Nz matrix (l1_h 1, l1_w its rows, channel_size its columns, 1 x 1 filter) lands in L0A as Zz,
    as asc-devkit's mmad_load3dv2 sample loads A."""
    a = np.arange(32 * 48, dtype=np.float16).reshape(32, 48)
    nz = a.reshape(32, 3, 16).transpose(1, 0, 2)[:, None]      # (C1 = 3, H = 1, W = 32, C0)
    dst = run_load(np.ascontiguousarray(nz), asc.LoadData3DParamsV2([0, 0, 0, 0], 1, 32, 48, 48, 32),
                   asc.TPosition.A2, 32 * 48)
    _check(dst, expected_destination(a, "zz", 16, 32 * 48))


def test_v2pro_and_the_registers_give_the_same_load():
    """LoadData3DParamsV2Pro packs the fields (表5) and takes the feature map and pad value from set_fmatrix and
    set_load_data_padding_value; a V2 load with is_set_fmatrix / is_set_padding False reads them too."""
    x = _map(np.float16, 1, 5, 5, seed=2)
    pads = [1, 1, 1, 1]
    expected = expected_destination(img2col(x, pads, (3, 3), (2, 2), (1, 1), 2.0), "zz", 16, 16 * 144)

    def registers():
        asc.set_fmatrix(5, 5, pads, asc.FmatrixMode.FMATRIX_LEFT)
        asc.set_load_data_padding_value(2.0)

    ext = (0 << 48) | (0 << 32) | (9 << 16) | 144
    flt = (1 << 40) | (1 << 32) | (3 << 24) | (3 << 16) | (2 << 8) | 2
    pro = asc.LoadData3DParamsV2Pro(16, False, False, False, False, False, ext, flt)
    _check(run_load(x, pro, asc.TPosition.A2, 16 * 144, before=registers), expected)
    v2 = asc.LoadData3DParamsV2([0, 0, 0, 0], 9, 9, 16, 144, 9, 0, 0, 2, 2, 3, 3, 1, 1, False, 0)  # ignored fm / pad
    _check(run_load(x, v2, asc.TPosition.A2, 16 * 144, before=registers, is_set_fmatrix=False, is_set_padding=False),
           expected)


def test_nops_write_nothing():
    x = _map(np.float16, 1, 4, 4)
    for params, before in ((asc.LoadData3DParamsV2([0] * 4, 0, 4, 16, 16, 16), None),
                           (asc.LoadData3DParamsV2([0] * 4, 4, 4, 16, 16, 16, filter_w=0), None),
                           (asc.LoadData3DParamsV2([0] * 4, 4, 4, 16, 16, 16),
                            lambda: asc.set_load_data_repeat(asc.LoadDataRepeatParam(0, 0, 0)))):
        dst = run_load(x, params, asc.TPosition.A2, 256, before=before)
        assert (dst.view(np.uint8) == POISON).all()


def _v2(**fields):
    base = dict(pad_list=[0, 0, 0, 0], l1_h=4, l1_w=4, channel_size=16, k_extension=16, m_extension=16)
    return asc.LoadData3DParamsV2(**{**base, **fields})


@pytest.mark.parametrize("dtype, position, params, before, message", [
    (np.float16, "A2", _v2(l1_h=40000), None, r"l1_h=40000 outside \[0, 32767\] \(LoadData_3D.md 表4\)"),
    (np.float16, "A2", _v2(pad_list=[0, 300, 0, 0]), None, r"pad_list=.* each in \[0, 255\]"),
    (np.float16, "A2", _v2(stride_w=64), None, r"stride_w=64 outside \[0, 63\]"),
    (np.float16, "A2", _v2(k_start_pt=8, channel_size=32, k_extension=16), None, r"k_start_pt=8 is not a multiple of C0 = 16"),
    (np.float16, "A2", _v2(channel_size=18), None, r"channel_size=18 is not a value the page allows .* N\*16\+4"),
    (np.float16, "A2", _v2(channel_size=4, k_extension=4), None, r"do not fill the last C0 = 16 block .* not simulated"),
    (np.int8, "B2", _v2(channel_size=32, k_extension=32), None, r"img2col into L0B copies one dtype of .*bfloat16"),
    (np.int8, "A2", _v2(channel_size=32, k_extension=32, en_transpose=True), None, r"b8 dtype: A2/A3 transpose b16 / b32"),
    (np.float16, "A2", _v2(f_matrix_ctrl=True), None, r"f_matrix_ctrl=True .* support false only"),
    (np.float16, "A2", _v2(en_small_k=True), None, r"small k is no longer supported"),
    (np.float16, "A2", _v2(l1_h=8, m_extension=20), None, r"m_extension=20 is not a multiple of 16 and stops before"),
    (np.float16, "A2", _v2(k_extension=32), None, r"columns \[0, 32\) past the img2col matrix's 16"),
    (np.float16, "A2", _v2(filter_h=5), None, r"filter does not fit the padded 4 x 4 map"),
    (np.float16, "A2", asc.LoadData3DParamsV2Pro(16, ext_config=(16 << 16) | 16), None,
     r"FMATRIX register .* never set: call set_fmatrix"),
    (np.float16, "A2", _v2(), lambda: asc.set_fmatrix(4, 4, [0] * 4, asc.FmatrixMode.FMATRIX_RIGHT),
     r"FMATRIX_RIGHT: A2/A3 support FMATRIX_LEFT only"),
    (np.float16, "A2", _v2(), lambda: asc.set_load_data_boundary(100), r"1 to 1023 is undefined behaviour"),
    (np.float16, "A2", _v2(l1_h=16, m_extension=64), lambda: asc.set_load_data_boundary(1024), r"reads reach L1 byte .* wrap is not simulated"),
    (np.float16, "A2", _v2(), lambda: asc.set_load_data_repeat(asc.LoadDataRepeatParam(2, 1, 0)),
     r"repeat_time=2: img2col repeats .* not simulated"),
    (np.float16, "A2", _v2(), lambda: asc.set_load_data_repeat(asc.LoadDataRepeatParam(1, 0, 2)),
     r"repeat_mode=2 outside \[0, 1\]"),
])
def test_documented_refusals(dtype, position, params, before, message):
    x = _map(dtype, 1, 16 if dtype is np.float16 else 4, 4)
    with pytest.raises(asc.KernelError, match=message) as caught:
        run_load(x, params, getattr(asc.TPosition, position), 1024, before=before)
    assert "test_cube_load3d.py" in str(caught.value)


def test_src_outside_l1_is_refused():
    @asc.jit(kernel_type=AIC)
    def kernel():
        a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
        b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
        asc.load_data(a2, b2, _v2())

    with pytest.raises(asc.KernelError, match=r"src must be in L1"):
        kernel[1]()


@pytest.mark.parametrize("dtype, cin, hw, cout, kernel, stride, padding, dilation", [
    (np.float16, 20, (7, 6), 24, (3, 3), (1, 1), (1, 1), (1, 1)),
    (np.float16, 16, (9, 9), 16, (3, 2), (2, 2), (0, 1), (2, 1)),
    (np.float32, 5, (6, 5), 7, (2, 2), (1, 2), (1, 0), (1, 1)),
])
def test_conv2d_through_img2col_mmad_fixpipe(dtype, cin, hw, cout, kernel, stride, padding, dilation):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((cin, *hw)).astype(dtype)
    weight = rng.standard_normal((cout, cin, *kernel)).astype(dtype)
    y = conv2d(x, weight, stride, padding, dilation)
    expected = conv2d_reference(x, weight, stride, padding, dilation)
    k = cin * kernel[0] * kernel[1]
    # fp32 accumulation: each of the k additions rounds once (docs/cube.md, Numerics)
    np.testing.assert_allclose(y, expected, rtol=0, atol=k * 2.0 ** -23 * np.abs(expected).max() * 4 + 1e-6)
