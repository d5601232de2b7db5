"""Stand-in for pyasc's ``asc.lib.host`` (pyasc ``python/asc/lib/host/``: bindings of CANN's host tiling library):
the Matmul tiling classes ``MultiCoreMatmulTiling`` / ``MatmulApiTiling``, their enums and
``get_ascendc_platform``, filling an ``asc.adv.TCubeTiling`` with fusekit's choice of tiling
(``fusekit.asc.adv.matmul_tiling``: the Matmul computes the same C with any valid tiling). BatchMatmulTiling and the
quantised / sparse settings say they are not simulated yet.
"""

from __future__ import annotations

import enum

from fusekit.asc.adv.matmul_tiling import choose


class CubeUnitNotSimulated(NotImplementedError, AttributeError):
    """A pyasc API of the cube unit fusekit does not simulate yet. An AttributeError too, so that ``hasattr`` on the
    module stays False for it (tools that probe every imported module, torch.compile's, go on)."""


class TPosition(enum.IntEnum):
    """``asc.lib.host.TPosition`` (the host enum, Enums.cpp)."""

    GM = 0
    A1 = 1
    A2 = 2
    B1 = 3
    B2 = 4
    C1 = 5
    C2 = 6
    CO1 = 7
    CO2 = 8
    VECIN = 9
    VECOUT = 10
    VECCALC = 11
    LCM = 12
    SPM = 13
    SHM = 14
    TSCM = 15
    MAX = 16


class CubeFormat(enum.IntEnum):
    """``asc.lib.host.CubeFormat``."""

    ND = 0
    NZ = 1
    ZN = 2
    ZZ = 3
    NN = 4
    ND_ALIGN = 5
    SCALAR = 6
    VECTOR = 7
    ROW_MAJOR = 8
    COLUMN_MAJOR = 9


class DataType(enum.IntEnum):
    """``asc.lib.host.DataType`` (ge::DataType): the members a matmul names."""

    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_BF16 = 27
    DT_BFLOAT16 = 27


class MatrixTraverse(enum.IntEnum):
    """``asc.lib.host.MatrixTraverse``: which of M and N the blocks run along first."""

    NOSET = 0
    FIRSTM = 1
    FIRSTN = 2


_SIZES = {DataType.DT_FLOAT: 4, DataType.DT_FLOAT16: 2, DataType.DT_BF16: 2, DataType.DT_INT8: 1,
          DataType.DT_INT32: 4, DataType.DT_UINT8: 1}


class PlatformAscendC:
    """The platform a tiling is for: the SoC of ``config.set_platform`` (fusekit.soc)."""

    def __init__(self, soc: str):
        self.soc = soc

    def get_core_num(self) -> int:
        from fusekit.soc import get_soc

        return get_soc(self.soc).cube_cores


def get_ascendc_platform() -> PlatformAscendC:
    """pyasc's ``get_ascendc_platform()``: the platform of the backend's SoC (``asc.runtime.config``)."""
    from .config import selected

    return PlatformAscendC(getattr(selected["platform"], "value", selected["platform"]))


class MatmulApiTiling:
    """``asc.lib.host.MatmulApiTiling(platform)``: the tiling of one core's matmul (``set_dim`` is 1)."""

    def __init__(self, platform: "PlatformAscendC | None" = None):
        self.platform = platform or get_ascendc_platform()
        self.types: dict = {}
        self.shape = self.org = None
        self.dim, self.bias, self.traverse, self.fixed = 1, False, 0, (-1, -1, -1)
        self.result: dict = {}

    def set_a_type(self, pos, type, data_type, is_trans: bool = False) -> None:  # noqa: A002 - pyasc's name
        self.types["a"] = (pos, data_type, bool(is_trans))

    def set_b_type(self, pos, type, data_type, is_trans: bool = False) -> None:  # noqa: A002
        self.types["b"] = (pos, data_type, bool(is_trans))

    def set_c_type(self, pos, type, data_type, is_trans: bool = False) -> None:  # noqa: A002
        self.types["c"] = (pos, data_type, False)

    def set_bias_type(self, pos, type=None, data_type=None, is_trans: bool = False) -> None:  # noqa: A002
        self.types["bias"] = (pos, data_type, False)

    def set_shape(self, m: int, n: int, k: int) -> None:
        self.shape = (int(m), int(n), int(k))

    def set_org_shape(self, m: int, n: int, k: int, kb: "int | None" = None) -> None:
        """``SetOrgShape(M, N, K)`` or ``(M, N, Ka, Kb)``."""
        self.org = (int(m), int(n), int(k), int(k if kb is None else kb))

    def enable_bias(self, is_bias_in: bool = False) -> None:
        self.bias = bool(is_bias_in)

    def set_buffer_space(self, l1_size: int = -1, l0c_size: int = -1, ub_size: int = -1, bt_size: int = -1) -> None:
        """Accepted: fusekit's tiling takes the SoC's buffers (-1, the tutorials' value, means the same)."""

    def set_traverse(self, traverse: MatrixTraverse) -> None:
        self.traverse = 1 if MatrixTraverse(int(traverse)) is MatrixTraverse.FIRSTN else 0

    def set_fix_split(self, base_m_in: int = -1, base_n_in: int = -1, base_k_in: int = -1) -> None:
        self.fixed = (int(base_m_in), int(base_n_in), int(base_k_in))

    def set_dim(self, dim: int) -> None:
        self.dim = int(dim)

    def get_tiling(self, tiling) -> int:
        """Fill ``tiling`` (an ``asc.adv.TCubeTiling``); 0 on success, -1 (as CANN's GetTiling) when the shape or
        the types are missing or the fixed split does not fit."""
        if self.shape is None or not {"a", "b", "c"} <= set(self.types):
            return -1
        m, n, k = self.shape
        sizes = {key: _SIZES.get(DataType(int(self.types[key][1])), 4) for key in ("a", "b", "c")}
        c_in_ub = int(self.types["c"][0]) in (TPosition.VECCALC, TPosition.VECIN, TPosition.VECOUT)
        try:
            self.result = choose(m, n, k, self.dim, sizes, c_in_ub, self.fixed, self.platform.soc,
                                 self.org or (m, n, k, k), self.bias, self.traverse)
        except ValueError:
            return -1
        for name, value in self.result.items():
            setattr(tiling, name, value)
        return 0

    def get_base_m(self) -> int:
        return self.result.get("base_m", -1)

    def get_base_n(self) -> int:
        return self.result.get("base_n", -1)

    def get_base_k(self) -> int:
        return self.result.get("base_k", -1)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise CubeUnitNotSimulated(f"asc.lib.host.{type(self).__name__}.{name}: not simulated yet (cube unit: batch, "
                                   "quantised, sparse and layout settings of the matmul tiling)")


class MultiCoreMatmulTiling(MatmulApiTiling):
    """``asc.lib.host.MultiCoreMatmulTiling(platform)``: the tiling of a matmul split over ``set_dim`` cores."""

    def __init__(self, platform: "PlatformAscendC | None" = None):
        super().__init__(platform)
        self.dim = PlatformAscendC.get_core_num(self.platform)

    def get_core_num(self) -> int:
        return self.result.get("used_core_num", -1)

    def get_single_shape(self) -> tuple[int, int, int]:
        return tuple(self.result.get(key, -1) for key in ("single_core_m", "single_core_n", "single_core_k"))


# Ascend C host tiling functions of the vector adv APIs: not in pyasc 1.1.1's asc.lib.host; fusekit has them in asc.adv
_ADV_HOST = ("get_softmax_max_tmp_size", "get_softmax_min_tmp_size", "softmax_tiling_func",
             "get_rms_norm_max_min_tmp_size", "get_rms_norm_tiling_info")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _ADV_HOST:
        raise AttributeError(f"asc.lib.host.{name}: pyasc 1.1.1's asc.lib.host has no softmax / rmsnorm tiling "
                             f"helpers; fusekit provides Ascend C's as asc.adv.{name} (fusekit.asc.adv.tiling)")
    raise CubeUnitNotSimulated(f"asc.lib.host.{name}: not simulated yet (cube unit: fusekit's asc.lib.host has "
                               "MultiCoreMatmulTiling, MatmulApiTiling and their enums)")
