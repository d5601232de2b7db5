"""Stand-in for pyasc's ``asc.language.core.struct``: :mod:`fusekit.asc.struct` under pyasc's module name
(the adv APIs' tiling structs are built on the same types, so they live in ``fusekit.asc``)."""

from fusekit.asc.struct import BaseField, Field, Struct, StructField, missing

__all__ = ["BaseField", "Field", "Struct", "StructField", "missing"]
