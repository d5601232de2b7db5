"""Stand-in for pyasc's ``asc.lib.host`` (pyasc ``python/asc/lib/host/``: bindings of CANN's host
tiling library). In pyasc's tests and tutorials it is used for cube-unit matmul tiling only
(``MultiCoreMatmulTiling``, ``get_ascendc_platform``); fusekit does not simulate the cube unit, so
every name says so.
"""

from __future__ import annotations


class CubeUnitNotSimulated(NotImplementedError):
    """A pyasc API of the cube unit (matmul and its host tiling)."""


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise CubeUnitNotSimulated(f"asc.lib.host.{name}: pyasc's host tiling library (matmul tiling) is for the cube "
                               "unit, which fusekit does not simulate yet (cube unit)")
