"""Stand-in for pyasc's ``asc.lib.host`` (pyasc ``python/asc/lib/host/``: bindings of CANN's host
tiling library). In pyasc's tests and tutorials it is used for cube-unit matmul tiling only
(``MultiCoreMatmulTiling``, ``get_ascendc_platform``); fusekit does not simulate the cube unit, so
every name says so.
"""

from __future__ import annotations


class CubeUnitNotSimulated(NotImplementedError):
    """A pyasc API of the cube unit (matmul and its host tiling)."""


# Ascend C host tiling functions of the vector adv APIs: not in pyasc 1.1.1's asc.lib.host; fusekit has them in asc.adv
_ADV_HOST = ("get_softmax_max_tmp_size", "get_softmax_min_tmp_size", "softmax_tiling_func",
             "get_rms_norm_max_min_tmp_size", "get_rms_norm_tiling_info")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _ADV_HOST:
        raise AttributeError(f"asc.lib.host.{name}: pyasc 1.1.1's asc.lib.host has no softmax / rmsnorm tiling "
                             f"helpers; fusekit provides Ascend C's as asc.adv.{name} (fusekit.asc.adv.tiling)")
    raise CubeUnitNotSimulated(f"asc.lib.host.{name}: pyasc's host tiling library (matmul tiling) is for the cube "
                               "unit, which fusekit does not simulate yet (cube unit)")
