"""Compatibility module: the vector instructions now live in :mod:`fusekit.asc.basic`, one module per
family. ``from fusekit.asc.vector import add, RoundMode, convert`` keeps working."""

from .basic import API as _API
from .basic.rounding import RoundMode, convert  # noqa: F401
from .basic.vec_vconv import CASTS  # noqa: F401

globals().update(_API)
__all__ = sorted(_API) + ["CASTS", "convert"]
