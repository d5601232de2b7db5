"""``asc.ShapeInfo``, ``asc.array``, ``asc.DataFormat``, ``asc.get_shape_size``: a tensor's shape, as pyasc has it.

pyasc 1.1.1 (``python/asc/language/core/types.py`` ShapeInfo, ``core/array.py`` array, ``core/enums.py``
DataFormat) builds Ascend C's ``ShapeInfo`` (asc-devkit ``include/basic_api/kernel_tensor.h``): ``shapeDim``
dimensions ``shape[]``, ``originalShapeDim`` dimensions ``originalShape[]`` and a ``dataFormat``. Built from
a shape only, the original shape is a copy of it (the two-argument constructors). ``LocalTensor.set_shape_info``
attaches one to a tensor; high-level APIs that take no explicit shape (``asc.adv.softmax`` as pyasc emits it,
without a ``SoftMaxShapeInfo``) read the tensor's.

Host-side these are plain Python values: ``array(dtype, values)`` is a tuple of ints (or floats) of ``dtype``.
"""

from __future__ import annotations

import enum

from . import dtypes

MAX_SHAPE_DIM = 8  # K_MAX_SHAPE_DIM, asc-devkit include/basic_api/kernel_tensor.h (ShapeInfo asserts dim <= it)


class DataFormat(enum.IntEnum):
    """pyasc ``asc.DataFormat`` (``core/enums.py``; Ascend C ``DataFormat``): the layout a ShapeInfo describes."""

    ND = 0
    NZ = 1
    NCHW = 2
    NC1HWC0 = 3
    NHWC = 4


class Array(tuple):
    """``asc.array(dtype, ...)``: a fixed-length array of ``dtype`` values (a tuple here; ``.dtype`` kept)."""

    dtype: dtypes.DataType

    def __new__(cls, values, dtype):
        obj = super().__new__(cls, values)
        obj.dtype = dtype
        return obj


def array(dtype, length=None, fill_value=None, *, values=None) -> Array:
    """``asc.array(dtype, length, fill_value=None)`` or ``asc.array(dtype, values)`` (pyasc ``core/array.py``;
    as in pyasc, the second positional argument is either form, and ``values=`` names the second).

    Raises:
        ValueError: a non-numeric dtype, a length <= 0, or values together with ``fill_value`` (pyasc's checks).
    """
    if (length is None) == (values is None):
        raise ValueError("asc.array takes a length or values (one of them)")
    length_or_values = length if values is None else values
    dtype = dtypes.as_dtype(dtype)
    cast = float if dtype.name.startswith(("float", "bfloat")) else int
    if isinstance(length_or_values, bool) or not hasattr(length_or_values, "__len__") and \
            not hasattr(length_or_values, "__index__"):
        raise ValueError(f"asc.array takes a length or a sequence of values, got {length_or_values!r}")
    if hasattr(length_or_values, "__index__"):
        length = int(length_or_values)
        if length <= 0:
            raise ValueError(f"asc.array: length must be a positive integer, got {length}")
        return Array([cast(fill_value if fill_value is not None else 0)] * length, dtype)
    if fill_value is not None:
        raise ValueError("asc.array: fill_value cannot be given together with initial values")
    return Array([cast(v) for v in length_or_values], dtype)


class ShapeInfo:
    """``asc.ShapeInfo(shape=None, original_shape=None, data_format=DataFormat.ND)``.

    ``shape`` / ``original_shape``: ``asc.array`` (or any sequence) of positive dimensions, at most 8
    (K_MAX_SHAPE_DIM). Without ``original_shape`` the original shape is ``shape`` (kernel_tensor.h).
    ``ShapeInfo()`` is the empty one (no dimensions), what a tensor has before ``set_shape_info``.

    Raises:
        ValueError: more than 8 dimensions, or a dimension that is not a non-negative integer.
    """

    def __init__(self, shape=None, original_shape=None, data_format=None) -> None:
        self.dims = self._dims(shape, "shape")
        self.original_dims = self._dims(original_shape, "original_shape") if original_shape is not None \
            else self.dims
        self.data_format = DataFormat(DataFormat.ND if data_format is None else data_format)

    @staticmethod
    def _dims(values, what: str) -> tuple[int, ...]:
        if values is None:
            return ()
        dims = tuple(values)
        if len(dims) > MAX_SHAPE_DIM:
            raise ValueError(f"ShapeInfo {what} has {len(dims)} dimensions; Ascend C's ShapeInfo holds at most "
                             f"{MAX_SHAPE_DIM} (K_MAX_SHAPE_DIM, kernel_tensor.h)")
        if any(isinstance(d, bool) or not hasattr(d, "__index__") or int(d) < 0 for d in dims):
            raise ValueError(f"ShapeInfo {what} needs non-negative integer dimensions, got {values!r}")
        return tuple(int(d) for d in dims)

    def shape(self, dim: int) -> int:
        """Dimension ``dim`` of the shape (``ShapeInfo.shape[dim]``)."""
        return self.dims[int(dim)]

    def original_shape(self, dim: int) -> int:
        """Dimension ``dim`` of the original shape."""
        return self.original_dims[int(dim)]

    def __repr__(self) -> str:
        return f"ShapeInfo(shape={list(self.dims)}, original_shape={list(self.original_dims)}, " \
               f"data_format={self.data_format.name})"


def get_shape_size(shape_info: ShapeInfo) -> int:
    """``asc.get_shape_size(shape_info)``: the product of the shape's dimensions (Ascend C GetShapeSize)."""
    size = 1
    for d in shape_info.dims:
        size *= d
    return size


__all__ = ["Array", "DataFormat", "ShapeInfo", "array", "get_shape_size"]
