"""float16 arithmetic in C where it is exact, with numpy computing the same bits where C is not used.

C (the extension ``_native``, built from ``_native.c`` at install) takes float16 + - * / (two arrays, or
an array and one float16 scalar), sqrt, the pairwise adds of a float16 reduction tree (:func:`tree_sum`)
and the float16 <-> float32 conversions. Each value is computed in float32 and rounded once to half, to
nearest even. That is the correctly rounded half result, because float32 has 24 >= 2 * 11 + 2 significand
bits (Figueroa, "When is double rounding innocuous?", SIGNUM 1995). It is also what numpy's float16
ufuncs compute. NaN operands follow numpy's rule (the header of ``_native.c``). exp and ln are not here:
float32 rounded to half is not correctly rounded for them, and they have one model of their own
(:mod:`.basic.transcendental`).

numpy computes instead when:

- the extension was not built (no C compiler at install);
- the environment variable ``FUSEKIT_NO_NATIVE`` is set to anything but ``""`` or ``"0"``;
- the extension disagrees with this machine's numpy on the special values probed at import.

:data:`STATUS` says which of these applies. The bits are the same on either path; only the speed differs.
numpy's float16 loops are scalar, ~3.4 ns per element; the extension's AVX2 + F16C loops take ~0.2 ns.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from . import dtypes, overflow

try:
    from . import _native as _ext
except ImportError:  # not built: the install had no C compiler (setup.py builds it as optional)
    _ext = None

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_BINARY = {np.add: 0, np.subtract: 1, np.multiply: 2, np.divide: 3}  # the op codes of _native.binary
# rows shorter than this go to numpy as a whole: a C call per row costs about 1.3 µs, numpy's float16 loop about
# 3 ns per element more than C's (issue 20's performance study), so C wins per row from about 450 elements
_ROW_CALL = 512


def evaluate(fn, *args, out=None):
    """``fn(*args)``, or ``fn(*args, out=out)`` when ``out`` is given, computed in C where it applies.

    C applies when ``fn`` is ``np.add``, ``np.subtract``, ``np.multiply`` or ``np.divide`` with two
    operands, or ``np.sqrt`` with one. The first operand is a C-contiguous, aligned float16 ndarray with at
    least one axis. A second operand is such an ndarray of the same shape, or one ``np.float16`` scalar.
    ``out`` is a writable one of that shape too: one of the operands, or memory that overlaps none of them.
    Any other call, a non-ufunc ``fn`` included, is the call itself. Either way the result has the same bits
    (module docstring).

    Returns:
        The result array (``out`` when given), as ``fn`` returns it.
    """
    if _ext is not None and type(fn) is np.ufunc and (fn in _BINARY or fn is np.sqrt) and args and _is_f16(args[0]):
        target = np.empty(args[0].shape, _F16) if out is None else out
        if _native(fn, args, target):
            return target
    elif _ext is not None and out is not None and type(fn) is np.ufunc and (fn in _BINARY or fn is np.sqrt) and \
            _rows_f16(args[0]) and _rows_f16(out) and out.shape == args[0].shape:
        _by_rows(fn, args, out)
        return out
    if out is None:
        return fn(*args)
    return fn(*args, out=out)


def _rows_f16(x) -> bool:
    """A float16 ``(cores, n)`` array whose rows are each contiguous: a lockstep group's lanes, rows of its stacked
    UB (``fusekit.asc.lockstep.memory``)."""
    return type(x) is np.ndarray and x.dtype == _F16 and x.ndim == 2 and x.strides[-1] == 2 and x.flags.aligned


def _by_rows(fn, args: tuple, out) -> None:
    """``fn(*args, out=out)`` one row at a time, each in C where it applies (else numpy: the same bits). A second
    operand is an array of ``out``'s shape, one float16 scalar, or a ``(cores, 1)`` column (a scalar per core)."""
    a, rest = args[0], args[1:]
    b = rest[0] if len(rest) == 1 else None
    if a.shape[1] < _ROW_CALL or len(rest) > 1 or (b is not None and not (type(b) is np.float16 or (
            type(b) is np.ndarray and b.ndim == 2 and b.shape in (a.shape, (a.shape[0], 1))))):
        fn(*args, out=out)  # short rows, or an operand of another shape: numpy, as a whole
        return
    for k in range(a.shape[0]):
        row = (a[k],) if b is None else (a[k], b if type(b) is np.float16 else b[k, 0] if b.shape[1] == 1 else b[k])
        if not _native(fn, row, out[k]):
            fn(*row, out=out[k])


def _native(fn, args: tuple, out) -> bool:
    """``fn(*args)`` into ``out`` in C; False, with nothing written, where C does not apply."""
    a = args[0]
    if not (_is_f16(out) and out.shape == a.shape and out.flags.writeable):
        return False
    if len(args) == 1:
        return fn is np.sqrt and _ext.sqrt(out, a)
    op = _BINARY.get(fn)
    if len(args) != 2 or op is None:
        return False
    b = args[1]
    if type(b) is np.float16:
        return _ext.binary(op, out, a, int(b.view(np.uint16)))
    return _is_f16(b) and b.shape == a.shape and _ext.binary(op, out, a, b)


def _is_f16(x) -> bool:
    """A C-contiguous, aligned float16 ndarray with at least one axis (the C loops read uint16_t)."""
    return type(x) is np.ndarray and x.dtype == _F16 and x.ndim > 0 and x.flags.c_contiguous and x.flags.aligned


def tree_sum(y: np.ndarray, saturate: bool) -> np.ndarray | None:
    """The pairwise tree sum along the last axis of float16 ``y``, or None where C does not apply.

    Every level is ``y[..., 0::2] + y[..., 1::2]`` rounded to half. Under ``saturate`` each level is then
    clamped to +-65504, and a NaN becomes 0 (:func:`fusekit.asc.overflow.saturate`). This is
    :func:`.basic.reduction.tree_sum` after its padding. C applies to a float16 ndarray whose last axis is a
    power of two >= 2, with at least one row (a strided or unaligned one is copied first).

    Returns:
        ``[...]`` sums (a 0-d array for 1-D ``y``), or None: the caller computes the tree in numpy.
    """
    if _ext is None or type(y) is not np.ndarray or y.dtype != _F16 or y.ndim == 0:
        return None
    width = y.shape[-1]
    if width < 2 or width & (width - 1) or y.size == 0:
        return None
    if not (y.flags.c_contiguous and y.flags.aligned):
        y = y.copy()
    out = np.empty(y.shape[:-1], _F16)
    _ext.tree_sum(out, y, saturate)
    return out


def mmad(acc: np.ndarray, a: np.ndarray, b: np.ndarray, wide: bool) -> bool:
    """``acc += a @ b`` in place, as :func:`fusekit.asc.cube.mmad.product` orders it (one rounding to float32 per
    addition, k ascending; ``wide``: each step in float64), in C (the column halves of a product of 2^21 steps or
    more on two threads, without the GIL: columns are independent); False, with nothing done, where C does not
    apply.

    ``acc``: float32 (lanes, m, n), C-contiguous; ``a`` (lanes or 1, m, k), ``b`` (lanes or 1, k, n): float32 (copied
    to C order when they are not).
    """
    if _ext is None or type(acc) is not np.ndarray or acc.dtype != np.float32 or acc.ndim != 3 or \
            not acc.flags.c_contiguous or a.ndim != 3 or b.ndim != 3:
        return False
    lanes, m, n = acc.shape
    k = a.shape[-1]
    if a.shape[1:] != (m, k) or b.shape[1:] != (k, n) or a.shape[0] not in (1, lanes) or b.shape[0] not in (1, lanes):
        return False
    a, b = (np.ascontiguousarray(x, np.float32) for x in (a, b))
    _ext.mmad(acc, a, b, lanes, a.shape[0], b.shape[0], m, k, n, wide)
    return True


def nearest(x, dtype) -> np.ndarray:
    """:func:`fusekit.asc.dtypes.nearest` (``x`` rounded once to nearest even into numpy ``dtype``).

    C converts a C-contiguous aligned float16 ndarray to float32, and a float32 one to float16. Every other
    conversion is ``dtypes.nearest`` itself. Both give numpy's ``astype`` bits, NaN payloads included.
    """
    dtype = np.dtype(dtype)
    if _ext is not None and type(x) is np.ndarray and x.flags.c_contiguous and x.flags.aligned:
        if x.dtype == _F16 and dtype == _F32:
            out = np.empty(x.shape, _F32)
            if _ext.to_float32(out, x):
                return out
        elif x.dtype == _F32 and dtype == _F16:
            out = np.empty(x.shape, _F16)
            if _ext.to_float16(out, x):
                return out
    return dtypes.nearest(x, dtype)


def _specials() -> np.ndarray:
    """Halves where a C path could differ from numpy: zeros, subnormals, the extremes, inf, NaNs of either
    sign with quiet and signalling payloads, and a few ordinary values."""
    bits = [0x0000, 0x0001, 0x03ff, 0x0400, 0x3555, 0x3bff, 0x3c00, 0x3c01, 0x3e00, 0x4000, 0x5640, 0x7bff,
            0x7c00, 0x7c01, 0x7d55, 0x7dff, 0x7e00, 0x7e01, 0x7fff]
    return np.array(bits + [b | 0x8000 for b in bits], np.uint16).view(np.float16)


def _float32_specials() -> np.ndarray:
    """float32 values around half's rounding boundaries and NaNs whose payloads half cannot keep."""
    bits = [0x00000000, 0x00000001, 0x33000000, 0x33000001, 0x337fffff, 0x38800000, 0x387fe000, 0x387ff000,
            0x3f801000, 0x3f803000, 0x477fe000, 0x477fefff, 0x477ff000, 0x7f7fffff, 0x7f800000, 0x7f800001,
            0x7f801fff, 0x7f802000, 0x7fc00000, 0x7fffffff]
    return np.array(bits + [b | 0x80000000 for b in bits], np.uint32).view(np.float32)


def _probe() -> str:
    """'' when the extension gives numpy's bits on the special values, else the first operation that differs."""
    h = _specials()
    a, b = np.repeat(h, h.size), np.tile(h, h.size)
    f32 = _float32_specials()
    cases = [(fn.__name__, (a, b), fn) for fn in _BINARY]
    cases += [(f"{fn.__name__} by a scalar", (h, np.float16(s)), fn) for fn in _BINARY for s in h[[6, 13, 16, 36]]]
    cases.append(("sqrt", (h,), np.sqrt))
    with np.errstate(all="ignore"):
        for name, args, fn in cases:
            out = np.empty(args[0].shape, _F16)
            if not _native(fn, args, out) or not _same(out, fn(*args)):
                return name
        for width in (2, 8, 16, 64):
            rows = np.resize(h, (h.size * 4 // width, width))
            for saturate in (False, True):
                if not _same(tree_sum(rows, saturate), _tree_sum_numpy(rows, saturate)):
                    return f"tree_sum (width {width}{', saturated' if saturate else ''})"
        if not _same(nearest(h, _F32), h.astype(_F32)):
            return "float16 -> float32"
        if not _same(nearest(f32, _F16), f32.astype(_F16)):
            return "float32 -> float16"
    return ""


def _tree_sum_numpy(y: np.ndarray, saturate: bool) -> np.ndarray:
    """:func:`.basic.reduction.tree_sum`'s numpy levels (that module imports this one)."""
    while y.shape[-1] > 1:
        y = y[..., 0::2] + y[..., 1::2]
        if saturate:
            y = overflow.saturate(y, _F16)
    return y[..., 0]


def _same(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def _status() -> str:
    if _ext is None:
        return "numpy: the C extension fusekit.asc._native was not built (no C compiler at install)"
    if os.environ.get("FUSEKIT_NO_NATIVE", "0") not in ("", "0"):
        return "numpy: FUSEKIT_NO_NATIVE is set"
    return f"C ({_ext.isa()} loops)"


STATUS = _status()
if STATUS.startswith("numpy"):
    _ext = None
else:
    _differs = _probe()
    if _differs:  # numpy on this machine takes another NaN rule than _native.c's (numpy or CPU changed)
        STATUS, _ext = f"numpy: the C extension differs from numpy in {_differs} on this machine", None


@contextlib.contextmanager
def numpy_only():
    """Compute with numpy inside the ``with`` block (the same bits, numpy's speed): for benchmarks that
    measure against "the numpy evaluation of the same arithmetic" (``benchmarks/speed_targets.py``)."""
    global _ext
    saved, _ext = _ext, None
    try:
        yield
    finally:
        _ext = saved


def enabled() -> bool:
    """True when the C loops are in use (:data:`STATUS`)."""
    return _ext is not None
