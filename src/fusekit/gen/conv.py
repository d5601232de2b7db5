"""A conv2d on the cube as an img2col product (fusekit.gen.cube lowers it): the geometry, the host packing of the
feature maps (NC1HWC0, the layout LoadData 3Dv2 reads from L1) and of the weights (the (K, Cout) B), and the
img2col matrices the references multiply (docs/cube.md "LoadData 3Dv2 (img2col)"; AD-API LoadData_3D.md 表4:
row m = ho x Wo + wo, column k = ((c1 x kh + i) x kw + j) x C0 + c0)."""

from __future__ import annotations

import numpy as np


def conv_geometry(s, x_shape: tuple, w_shape: tuple, itemsize: int) -> dict:
    """The img2col geometry of ``s``'s conv2d on x (N, Cin, H, W) and w (Cout, Cin, kh, kw) of ``itemsize``-byte
    elements: C0 = 32 B of channels, C1 blocks of them, Ho / Wo (torch's formula, as LoadData_3D.md's), K =
    C1 x kh x kw x C0, FMAP = C1 x H x W x C0 elements per image and GEOM, the kernel's (CH, IH, IW, FH, FW, SH,
    SW, DH, DW, PL, PR, PT, PB, FMAP).

    Raises:
        ValueError: operands that are not 4-D, channels that differ, or an output of no pixels."""
    (sh, sw), (ph, pw), (dh, dw) = s.conv
    if len(x_shape) != 4 or len(w_shape) != 4 or x_shape[1] != w_shape[1]:
        raise ValueError(f"conv2d({s.a}{list(x_shape)}, {s.b}{list(w_shape)}): x is (N, Cin, H, W), w (Cout, Cin, kh, "
                         "kw), with one Cin")
    n, cin, h, w = x_shape
    cout, _, kh, kw = w_shape
    c0 = 32 // itemsize
    c1 = -(-cin // c0)
    ho, wo = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if ho < 1 or wo < 1:
        raise ValueError(f"conv2d({s.a}{list(x_shape)}, {s.b}{list(w_shape)}): the dilated filter is larger than the "
                         "padded map (no output pixel)")
    fmap = c1 * h * w * c0
    return dict(n=n, cin=cin, h=h, w=w, cout=cout, kh=kh, kw=kw, c0=c0, c1=c1, ho=ho, wo=wo, k=c1 * kh * kw * c0,
                fmap=fmap, geom=(c1 * c0, h, w, kh, kw, sh, sw, dh, dw, pw, pw, ph, ph, fmap))


def pack_fmap(x: np.ndarray, g: dict) -> np.ndarray:
    """x (N, Cin, H, W) as N maps in NC1HWC0 (channels zero-padded to C1 x C0), flat: the layout LoadData 3Dv2
    reads from L1 (docs/cube.md)."""
    full = np.zeros((g["n"], g["c1"] * g["c0"], g["h"], g["w"]), x.dtype)
    full[:, :g["cin"]] = x
    return np.ascontiguousarray(full.reshape(g["n"], g["c1"], g["c0"], g["h"], g["w"]).transpose(0, 1, 3, 4, 2)).ravel()


def pack_weights(w: np.ndarray, g: dict) -> np.ndarray:
    """w (Cout, Cin, kh, kw) as the (K, Cout) B of the img2col product: row ((c1 x kh + i) x kw + j) x C0 + c0 holds
    channel c1 x C0 + c0 at (i, j) (LoadData_3D.md's column order; zero for padded channels)."""
    full = np.zeros((g["cout"], g["c1"] * g["c0"], g["kh"], g["kw"]), w.dtype)
    full[:, :g["cin"]] = w
    b = full.reshape(g["cout"], g["c1"], g["c0"], g["kh"], g["kw"]).transpose(1, 3, 4, 2, 0)
    return np.ascontiguousarray(b).reshape(g["k"], g["cout"])


def img2col(x: np.ndarray, g: dict, stride, padding, dilation) -> np.ndarray:
    """The (N, Ho x Wo, K) img2col matrices of x (N, Cin, H, W), gathered in numpy (zeros where the window is
    padding): the A of the conv's product, for the references."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.zeros((g["n"], g["c1"] * g["c0"], g["h"] + 2 * ph, g["w"] + 2 * pw), x.dtype)
    xp[:, :g["cin"], ph:ph + g["h"], pw:pw + g["w"]] = x
    a = np.zeros((g["n"], g["ho"], g["wo"], g["c1"], g["kh"], g["kw"], g["c0"]), x.dtype)
    for i in range(g["kh"]):
        for j in range(g["kw"]):
            patch = xp[:, :, i * dh:i * dh + sh * (g["ho"] - 1) + 1:sh, j * dw:j * dw + sw * (g["wo"] - 1) + 1:sw]
            a[:, :, :, :, i, j, :] = patch.reshape(g["n"], g["c1"], g["c0"], g["ho"], g["wo"]).transpose(0, 3, 4, 1, 2)
    return a.reshape(g["n"], g["ho"] * g["wo"], g["k"])
