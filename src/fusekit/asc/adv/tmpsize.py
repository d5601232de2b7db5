"""Temporary-buffer sizes of the ``asc.adv`` vector APIs: Ascend C's host helpers ``Get<Name>MaxMinTmpSize``.

pyasc 1.1.1 has no binding of these helpers (its ``asc.lib.host`` wraps the matmul tiling only), so kernels
written for pyasc compute the size themselves (e.g. ``get_min_max_tmp_size`` in pyasc's
``python/test/generalization/adv/test_quant.py``). fusekit offers them as :func:`max_min_tmp_size` and enforces
the minimum on ``temp_buffer`` (the pages: "为保证功能正确，预留/申请的临时空间大小不能小于最小临时空间大小").

Figures: asc-devkit ``impl/adv_api/tiling/math/<name>_tiling*.cpp`` and ``impl/adv_api/tiling/quantization/
ascend_quant_tiling_impl.cpp`` (Atlas A2/A3 = arch 2201, Atlas inference AI Core = arch 2002; the 3510 branches
are out of scope). In the table, a rule ``(half, float, float_reuse)`` is a count of live temporaries; with
``n`` elements of ``ts`` bytes:

- ``std``: min = f x 256 B, max = f x max(n x ts, 256 B) (acos, asin, atan, cosh, erf, tanh ...);
- ``elements`` (acosh): max = max(f x n, 256) x ts;
- ``linear`` (sin, sign, xor): max = max(f x n x ts, min) (no 256 B floor per temporary);
- exp: f float32 buffers of max(n x 4, 256) B (half 4; float 3, 2 with isReuseSource);
- power (tensor ** tensor): float f x 256 + 256 / f x max(n x 4, 256) + 256; half f x 128 + 256 /
  f x max(n x 2, 128) + 256; int32 f x 256 / f x max(n x 4, 256); f from POW_TILING_PARAM_V220 / _V200;
- round and axpy depend on the arch / dtype as their files say; log needs none (0, 0).
isReuseSource only changes the float figures (the pages: "该参数仅在输入的数据类型为float时生效").
"""

from __future__ import annotations

_REPEAT = 256


def _std(f: int, n: int, ts: int) -> tuple[int, int]:
    return f * max(n * ts, _REPEAT), f * _REPEAT


# op -> (shape, half factor, float factor, float factor with isReuseSource)
_RULES = {
    "acos": ("std", 6, 2, 2), "asin": ("std", 6, 2, 2), "asinh": ("std", 3, 3, 3), "atan": ("std", 12, 5, 5),
    "atanh": ("std", 4, 1, 1), "ceil": ("std", 2, 1, 1), "cos": ("std", 8, 3, 2), "cosh": ("std", 6, 2, 2),
    "digamma": ("std", 16, 7, 6), "erf": ("std", 8, 3, 3), "erfc": ("std", 16, 7, 7), "floor": ("std", 2, 0, 0),
    "frac": ("std", 4, 0, 0), "lgamma": ("std", 26, 8, 7), "sinh": ("std", 4, 1, 1), "tan": ("std", 10, 4, 4),
    "tanh": ("std", 4, 1, 1), "trunc": ("std", 2, 1, 1), "acosh": ("elements", 2, 1, 1),
    "sin": ("linear", 8, 3, 2), "sign": ("linear", 3, 3, 3),
}
# Power: (half, int32, float) live temporaries, tensor ** tensor (power_tiling_impl.cpp)
_POWER = {"2201": (14, 6, 4), "2002": (16, 7, 5)}
FUNCTIONS = tuple(sorted({*_RULES, "exp", "log", "round", "power", "xor", "axpy", "quant"}))


def max_min_tmp_size(op: str, count: int, type_size: int, is_reuse_source: bool = False, arch: str = "2201",
                     is_int: bool = False) -> tuple[int, int]:
    """(max, min) bytes of sharedTmpBuffer for ``asc.adv.<op>`` on ``count`` elements of ``type_size`` bytes.

    As Ascend C's host helper Get<Op>MaxMinTmpSize computes it (module docstring; ``arch`` "2201" = Atlas A2/A3,
    "2002" = Atlas inference AI Core; ``is_int`` selects power's int32 figures). A fusekit helper: pyasc 1.1.1 has
    no binding of it. ``op`` is the pyasc name (``"quant"`` = GetAscendQuantMaxMinTmpSize).

    Raises:
        ValueError: an op not in :data:`FUNCTIONS`, count <= 0 (the helpers assert "Input Shape size must be greater
            than 0"), a type_size the op does not take, or for quant a source not 32 B aligned.
    """
    if op not in FUNCTIONS:
        raise ValueError(f"max_min_tmp_size knows {', '.join(FUNCTIONS)}; not {op!r}")
    if count <= 0:
        raise ValueError(f"count must be > 0 (Get*MaxMinTmpSize: Input Shape size must be greater than 0), got {count}")
    sizes = (2,) if op == "xor" else (4,) if is_int else (2, 4)
    if type_size not in sizes:
        raise ValueError(f"type_size of {op} must be one of {sizes} bytes, got {type_size}")
    n, ts, half = count, type_size, type_size == 2
    if op in _RULES:
        shape, fh, ff, fr = _RULES[op]
        f = fh if half else fr if is_reuse_source else ff
        if shape == "elements":
            return max(f * n, _REPEAT) * ts, f * _REPEAT
        if shape == "linear":
            return max(f * n * ts, f * _REPEAT), f * _REPEAT
        return _std(f, n, ts)
    if op == "exp":  # exp_tiling_impl.cpp: float32 temporaries whatever the input
        k = 4 if half else 2 if is_reuse_source else 3
        return k * max(n * 4, _REPEAT), k * _REPEAT
    if op == "log":
        return 0, 0
    if op == "round":  # round_tiling_impl.cpp
        f = (1 if half else 0) if arch == "2201" else (2 if half else 1)
        return _std(f, n, ts)
    if op == "xor":  # xor_tiling.cpp
        return max(n * ts, _REPEAT), _REPEAT
    if op == "axpy":  # axpy_tiling_impl.cpp: a float source needs none
        return (0, 0) if not half else _std(4, n, ts)
    if op == "quant":  # ascend_quant_tiling_impl.cpp
        if n * ts % 32:
            raise ValueError(f"quant: {n} x {ts} B is not 32 B aligned (GetAscendQuantMaxMinTmpSize asserts it)")
        return -(-max(n * 2, 2 * _REPEAT) // 32) * 32, 2 * _REPEAT
    fh, fi, ff = _POWER.get(arch, _POWER["2201"])
    if is_int:
        return fi * max(n * 4, _REPEAT), fi * _REPEAT
    if half:
        return fh * max(n * 2, _REPEAT // 2) + _REPEAT, fh * _REPEAT // 2 + _REPEAT
    return ff * max(n * 4, _REPEAT) + _REPEAT, ff * _REPEAT + _REPEAT
