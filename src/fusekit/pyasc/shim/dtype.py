"""Stand-in for pyasc's ``asc.language.core.dtype``: ``KnownTypes`` names fusekit's dtypes
(pyasc ``python/asc/language/core/dtype.py``: ``KnownTypes.int32`` is the DataType ``int32``)."""

from __future__ import annotations

from fusekit.asc import dtypes as _d
from fusekit.asc.dtypes import DataType  # noqa: F401 - pyasc exports it here too


class KnownTypes:
    int8, int16, int32, int64 = _d.int8, _d.int16, _d.int32, _d.int64
    uint8, uint16, uint32, uint64 = _d.uint8, _d.uint16, _d.uint32, _d.uint64
    float16, half, float32, float_, bfloat16 = _d.float16, _d.half, _d.float32, _d.float_, _d.bfloat16
