"""Independent models the generated cube operators are checked against, written from docs/cube.md and the Fixpipe
pages (not from fusekit's code): the product as an fma sequence, Fixpipe's M1 at 10 mantissa bits."""

import numpy as np


def rand(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.int8:
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.standard_normal(shape).astype(dtype)


def fma_sequence(a, b, init=None):
    """C = init + A @ B as docs/cube.md chooses: per element, starting from ``init`` (0, or the bias row), the k
    products added in ascending k, each sum rounded to float32 (half / bfloat16 products are exact in float32)."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    if init is not None:
        acc += np.asarray(init, np.float32)
    for kk in range(a.shape[1]):
        acc = (acc.astype(np.float64) + a32[:, kk:kk + 1].astype(np.float64) * b32[kk:kk + 1, :]).astype(np.float32)
    return acc


def m1(scale):
    """A float32 scale as Fixpipe's M1 holds it: 1 sign, 8 exponent and 10 mantissa bits (随路量化.md 表1, "(1,8,10)"),
    rounded to nearest even (the generator's packing; the hardware ignores the low 13 bits)."""
    mant, exp = np.frexp(np.asarray(scale, np.float64))  # mant in [0.5, 1): 11 significant bits = 10 explicit
    return np.ldexp(np.rint(mant * 2.0**11) / 2.0**11, exp).astype(np.float32)


def passes(report):
    """The run of a GeneratedOp.check report whose outputs are bit-exact to their own model and pass its verdict
    (asserted): within tolerance of the exact model in fp32 mode; in native float16 the distance is information,
    invalid outputs fail (fusekit.cli.generated's verdict)."""
    for name, (own, exact) in ((k, v) for k, v in report.items() if k != "run"):
        assert own.bit_identical, f"{name}: {own.summary()}"
        assert report["run"].precision == "native" or exact.passed, f"{name}: {exact.summary()}"
    assert report.passed, repr(report)
    return report["run"]
