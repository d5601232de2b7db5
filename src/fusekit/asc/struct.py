"""Tiling structs: pyasc's ``asc.language.core.struct`` (pyasc ``python/asc/language/core/struct.py``).

A ``Struct`` subclass declares ``Field(dtype, default)`` and ``StructField(OtherStruct)`` class
attributes; on the host ``MyStruct(a=1)`` sets fields by keyword (a name the struct lacks is an error,
as in pyasc; an unset field takes its default, and one with no default is an error), and fields can
be assigned afterwards. pyasc packs the struct into a ctypes structure for the device; here the
kernel receives the object itself and reads its fields as typed scalars of the field's dtype.

It lives in ``fusekit.asc`` because the adv APIs' tiling structs (``asc.adv.tiling``) are built on it;
``fusekit.pyasc.shim.struct`` serves it to kernel files under pyasc's module name.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from .dtypes import DataType
from .runtime import running_core
from .scalar import number

missing = object()


class BaseField:
    def __init__(self, default: Any = missing, name: "str | None" = None) -> None:
        self.default, self.name = default, name


class Field(BaseField):
    """A scalar field of ``dtype`` (pyasc ``Field(dtype, default=..., name=None, enum=None)``)."""

    def __init__(self, dtype: DataType, default: Any = missing, name: "str | None" = None,
                 enum: "str | None" = None) -> None:
        super().__init__(default, name)
        self.dtype, self.enum_name = dtype, enum

    def check(self, owner: str, field: str, value):
        if isinstance(value, Struct):
            raise TypeError(f"{owner}.{field} is a {self.dtype.name} field, got a {type(value).__name__}")
        return value


class StructField(BaseField):
    """A nested struct (pyasc ``StructField(struct_cls, default=None)``; default: ``struct_cls()``)."""

    def __init__(self, struct_cls: type, default: Any = None, name: "str | None" = None) -> None:
        super().__init__(default, name)
        self.struct_cls = struct_cls

    def check(self, owner: str, field: str, value):
        if not isinstance(value, self.struct_cls):
            raise TypeError(f"{owner}.{field} takes a {self.struct_cls.__name__}, got {type(value).__name__}")
        return value


class Struct:
    """Base of tiling structs passed to kernels (see the module docstring)."""

    struct_fields: ClassVar[dict[str, BaseField]] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        fields = {}
        for base in reversed(cls.__mro__[1:]):
            fields.update(getattr(base, "struct_fields", {}))
        fields.update({k: v for k, v in vars(cls).items() if isinstance(v, BaseField)})
        cls.struct_fields = fields
        for name in fields:
            if name in vars(cls):
                delattr(cls, name)  # instances hold the values

    def __init__(self, **fields) -> None:
        cls = type(self).__name__
        for name in fields:
            if name not in self.struct_fields:
                raise RuntimeError(f"{cls} does not have a field '{name}' (its fields: {', '.join(self.struct_fields)})")
        for name, spec in self.struct_fields.items():
            if name in fields:
                value = fields[name]
            elif isinstance(spec, StructField):
                value = spec.struct_cls() if spec.default is None else copy.deepcopy(spec.default)
            elif spec.default is missing:
                raise RuntimeError(f"{cls}: field '{name}' has no default, give it a value")
            else:
                value = spec.default
            setattr(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        spec = self.struct_fields.get(name)
        if spec is None:
            raise AttributeError(f"{type(self).__name__} has no field '{name}' (its fields: "
                                 f"{', '.join(self.struct_fields)})")
        object.__setattr__(self, name, spec.check(type(self).__name__, name, value))

    def __getattribute__(self, name: str):
        value = object.__getattribute__(self, name)
        spec = type(self).struct_fields.get(name) if not name.startswith("__") else None
        if isinstance(spec, Field) and not isinstance(value, Struct):
            return number(value, spec.dtype) if running_core() is not None else value
        return value

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={object.__getattribute__(self, k)!r}" for k in self.struct_fields)
        return f"{type(self).__name__}({body})"
