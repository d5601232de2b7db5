"""Overflow modes of the vector unit: IEEE INF/NaN, or saturation.

- **inf_nan** (IEEE 754): an overflowing float result is +-inf, an invalid one NaN.
- **saturation**: an overflowing float result becomes the largest finite value of its dtype with
  its sign, and NaN becomes 0.

Which modes a SoC has and which it starts in are ``SoC.overflow_modes`` / ``SoC.overflow_default``
(with their sources in :mod:`fusekit.soc`); a launch may pick another supported mode
(``launch(..., overflow="saturation")`` / ``kernel[n](..., overflow=...)``). Every vector
instruction applies the mode once, to its rounded result (:mod:`fusekit.asc.basic.execute`);
integer results are not affected.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

INF_NAN = "inf_nan"
SATURATION = "saturation"
MODES = (INF_NAN, SATURATION)
_FLOATS = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)}


def mode_of(core) -> str:
    """The overflow mode ``core`` runs in (the launch's choice, else its SoC's default)."""
    return core.overflow or core.soc.overflow_default


def saturate(x: np.ndarray, dtype) -> np.ndarray:
    """``x`` rounded to ``dtype``, then +-inf -> +-largest finite value and NaN -> 0 (float dtypes)."""
    dtype = np.dtype(dtype)
    out = np.asarray(x).astype(dtype)
    if dtype not in _FLOATS:
        return out
    big = ml_dtypes.finfo(dtype).max
    out = np.where(np.isnan(out), dtype.type(0), out)
    return np.where(np.isinf(out), np.where(out > 0, big, -big).astype(dtype), out).astype(dtype, copy=False)


def apply(x, dtype, mode: str):
    """The result ``x`` as the destination receives it under ``mode`` (unchanged in inf_nan mode)."""
    return saturate(x, dtype) if mode == SATURATION else x


def choose(soc, requested: str | None) -> str:
    """The mode a launch on ``soc`` runs in: ``requested`` if the SoC supports it, else its default.

    Raises:
        ValueError: an unknown mode, or one the SoC does not support (310P: saturation only).
    """
    if requested is None:
        return soc.overflow_default
    if requested not in MODES:
        raise ValueError(f"overflow must be one of {', '.join(MODES)}, got {requested!r}")
    if requested not in soc.overflow_modes:
        raise ValueError(f"{soc.name} supports overflow={', '.join(soc.overflow_modes)} only, not {requested!r} "
                         f"({soc.sources.get('overflow_modes', '')})")
    return requested
