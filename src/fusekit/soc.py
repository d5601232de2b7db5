"""SoC specifications of the Ascend NPUs fusekit simulates.

Every number carries its source. Tags as in ``docs/ascendc-model.md``:

- **AD**: CANN asc-devkit docs and implementation (``AD-G`` guide, ``AD-API`` API reference);
  ``kernel_utils_constants.h`` defines ``TOTAL_UB_SIZE`` and ``TOTAL_VEC_LOCAL_SIZE`` per
  ``__CCE_AICORE__`` (220 = arch 2201 = Atlas A2; <= 200 = arch 2002 = Atlas 300I/310P).
- **ATC**: CANN ``atc --aicore_num`` documentation, quoting ``platform_config/<soc>.ini``
  (``vector_core_cnt=48`` for A2 parts with 24 cube cores).
- **3p**: third-party figure, not confirmed by a Huawei document; treat as an estimate.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class SoC:
    """One Ascend SoC as the simulator and tiling see it.

    Attributes:
        name: CANN soc_version, e.g. ``"Ascend910B1"``.
        arch: NPU architecture version (``"2201"`` Atlas A2, ``"2002"`` Atlas 300I / 310P).
        vector_cores: AIV cores a vector kernel's ``block_dim`` spreads over (on 2002 the AI
            core does both cube and vector work).
        ub_bytes: Unified Buffer per core in bytes (``TOTAL_UB_SIZE``); ``TPipe.init_buffer``
            fails past it.
        ub_tiling_bytes: UB a tiling may plan for (``TOTAL_VEC_LOCAL_SIZE``): the rest is kept
            for API temporaries (``TMP_UB``).
        data_copy_pad: whether ``DataCopyPad`` exists.
        overflow_modes: the float overflow modes the vector unit supports (``fusekit.asc.overflow``:
            ``"inf_nan"`` IEEE 754, ``"saturation"``).
        overflow_default: the mode a kernel runs in unless the launch picks another.
        cube_cores: AIC (cube) cores an AIC-only kernel's ``block_dim`` spreads over; on arch 2002 the AI
            cores, which hold the cube unit and the vector unit together.
        separated: the cube and vector units are separate cores (AIC, AIV: arch 2201) rather than one coupled
            core (arch 2002, where C1 and CO2 are the UB and there is no bias table or Fixpipe).
        l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes, bt_bytes: the AIC's buffers (``fusekit.machine.spaces``): L1
            (A1 / B1 / C1), L0A (A2), L0B (B2), L0C (CO1) and the bias table (C2), in bytes.
        sources: attribute name -> where the number comes from.

    Which dtypes each vector instruction accepts is its spec's fact, not the SoC's: ``fusekit.asc.basic.supports(soc,
    op, dtype)`` and ``dtypes_for(soc.arch)`` read the specs.
    The clock and the GM bandwidth are timing figures: ``fusekit.timing.load(soc)`` holds them, with their
    sources (``src/fusekit/timing/socs/<SoC>.json``), in one place.
    """

    name: str
    arch: str
    vector_cores: int
    ub_bytes: int
    ub_tiling_bytes: int
    data_copy_pad: bool
    overflow_modes: tuple[str, ...]
    overflow_default: str
    cube_cores: int
    separated: bool
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    bt_bytes: int
    sources: Mapping[str, str] = field(repr=False)


def _a2(name: str, vector_cores: int, cores_source: str) -> SoC:
    return SoC(
        name=name,
        arch="2201",
        vector_cores=vector_cores,
        cube_cores=vector_cores // 2,
        separated=True,
        l1_bytes=512 * 1024 - 128,
        l0a_bytes=64 * 1024,
        l0b_bytes=64 * 1024,
        l0c_bytes=128 * 1024,
        bt_bytes=1024,
        ub_bytes=192 * 1024,
        ub_tiling_bytes=184 * 1024,
        data_copy_pad=True,
        overflow_modes=("inf_nan", "saturation"),
        overflow_default="inf_nan",
        sources=MappingProxyType({
            "arch": "AD-G 架构规格/NPU架构版本2201.md (Atlas A2 = arch 2201)",
            "vector_cores": cores_source,
            "ub_bytes": "AD kernel_utils_constants.h, __CCE_AICORE__ == 220: TOTAL_UB_SIZE = 192 KiB",
            "ub_tiling_bytes": "AD kernel_utils_constants.h, __CCE_AICORE__ == 220: TOTAL_VEC_LOCAL_SIZE = 184 KiB",
            "data_copy_pad": "AD-API DataCopyPad（GMToUB非对齐数据搬运）.md: supported on Atlas A2/A3",
            "overflow_modes": _OVERFLOW_A2,
            "cube_cores": cores_source + "; one AI Core = 1 AIC + 2 AIV (AD-G 基本架构.md)",
            "separated": "AD-G 架构规格/NPU架构版本2201.md (AIC and AIV are separate cores, exchanging data through GM)",
            "l1_bytes": "AD kernel_utils_constants.h, __CCE_AICORE__ == 220: TOTAL_L1_SIZE = 512 KiB - 128 B "
                        "(KFC_L1_RESERVER_SIZE; the source of ub_bytes too). NPU架构版本2201.md says 512 KiB - 256 B "
                        "usable (ASC_L1_SIZE): fusekit takes the constant the device library allocates against",
            "l0a_bytes": "AD-G 架构规格/NPU架构版本2201.md; kernel_utils_constants.h TOTAL_L0A_SIZE = 64 KiB",
            "l0b_bytes": "AD-G 架构规格/NPU架构版本2201.md; kernel_utils_constants.h TOTAL_L0B_SIZE = 64 KiB",
            "l0c_bytes": "AD-G 架构规格/NPU架构版本2201.md: L0C 128 KiB",
            "bt_bytes": "AD-G 架构规格/NPU架构版本2201.md: BiasTable 1 KiB; matmul c2_buffer.h BIAS_TABLE_SIZE 1024",
        }),
    )


# Float overflow modes (fusekit.asc.overflow). hiascend INF_NAN_MODE_ENABLE
# (https://hiascend.com/document/detail/zh/Pytorch/600/apiref/Envvariables/Envir_004.html): saturation
# mode sets Inf to the dtype's max and NaN to 0; Atlas A2/A3 default to INF_NAN and can be set to
# saturation; Atlas training / inference (310P) / 200I-500 A2 support saturation only. TF adapter
# set_device_sat_mode (https://www.hiascend.com/document/detail/zh/TensorFlowCommercial/latest/migration/
# tfmigr1/tfmigr1_tfadapi_0094.html): A2/A3 support both, default INF/NaN.
_OVERFLOW_A2 = ("hiascend INF_NAN_MODE_ENABLE (Pytorch 600 Envir_004) and TF adapter set_device_sat_mode: "
                "A2/A3 default INF_NAN, saturation supported")
_OVERFLOW_310P = "hiascend INF_NAN_MODE_ENABLE (Pytorch 600 Envir_004): Atlas inference products support saturation only"
_A2_48 = "ATC --aicore_num doc quoting platform_config .ini: cube_core_cnt=24, vector_core_cnt=48 (910B1/910B2, 3p per SKU)"
_A2_40 = "3p, quoting CANN platform_config .ini: 20 AIC / 40 AIV on 910B3/910B4"

SOCS: Mapping[str, SoC] = MappingProxyType({
    "Ascend910B1": _a2("Ascend910B1", 48, _A2_48),
    "Ascend910B2": _a2("Ascend910B2", 48, _A2_48),
    "Ascend910B3": _a2("Ascend910B3", 40, _A2_40),
    "Ascend910B4": _a2("Ascend910B4", 40, _A2_40),
    "Ascend310P3": SoC(
        name="Ascend310P3",
        arch="2002",
        vector_cores=8,
        cube_cores=8,
        separated=False,
        l1_bytes=1024 * 1024,
        l0a_bytes=64 * 1024,
        l0b_bytes=64 * 1024,
        l0c_bytes=256 * 1024,
        bt_bytes=0,
        ub_bytes=256 * 1024,
        ub_tiling_bytes=248 * 1024,
        data_copy_pad=False,
        overflow_modes=("saturation",),
        overflow_default="saturation",
        sources=MappingProxyType({
            "arch": "AD-G 架构规格 (Atlas inference series = arch 2002)",
            "vector_cores": "docs/ascendc-model.md: 310P3 has 8 AI cores, cube and vector share a core",
            "ub_bytes": "AD kernel_utils_constants.h, __CCE_AICORE__ <= 200: TOTAL_UB_SIZE = 256 KiB",
            "ub_tiling_bytes": "AD kernel_utils_constants.h, __CCE_AICORE__ <= 200: TOTAL_VEC_LOCAL_SIZE = 248 KiB",
            "data_copy_pad": "AD-API DataCopyPad.md: not supported on Atlas inference series (310P)",
            "overflow_modes": _OVERFLOW_310P,
            "cube_cores": "docs/ascendc-model.md: 310P3 has 8 AI cores, cube and vector share a core",
            "separated": "AD-G 架构规格/NPU架构版本2002.md (Cube and Vector share one core and its Scalar unit)",
            "l1_bytes": "AD kernel_utils_constants.h, __CCE_AICORE__ <= 200: TOTAL_L1_SIZE = 1 MiB",
            "l0a_bytes": "AD-G 架构规格/NPU架构版本2002.md: L0A 64 KiB",
            "l0b_bytes": "AD-G 架构规格/NPU架构版本2002.md: L0B 64 KiB",
            "l0c_bytes": "AD-G 架构规格/NPU架构版本2002.md: L0C 256 KiB",
            "bt_bytes": "AD impl kernel_event.h GetPhyType: on arch 2002 C2 is L0C, there is no bias table",
        }),
    ),
})

DEFAULT_SOC = "Ascend910B1"


def get_soc(soc: "str | SoC | None" = None) -> SoC:
    """Look up a SoC by name (``None`` gives :data:`DEFAULT_SOC`), or by its NPU architecture as the Ascend C
    examples' CMake option ``CMAKE_ASC_ARCHITECTURES`` names it (``dav-2201``: the first SoC of arch 2201).

    Raises:
        ValueError: unknown name; the message lists the known SoCs and the closest match.
    """
    if isinstance(soc, SoC):
        return soc
    name = DEFAULT_SOC if soc is None else soc
    if isinstance(name, str) and name.startswith("dav-"):
        return _by_arch(name)
    try:
        return SOCS[name]
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(name), list(SOCS), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown SoC {name!r}: known SoCs are {', '.join(SOCS)}.{hint}") from None


def _by_arch(name: str) -> SoC:
    arch = name.removeprefix("dav-")
    for spec in SOCS.values():
        if spec.arch == arch:
            return spec
    known = ", ".join(sorted({f"dav-{s.arch}" for s in SOCS.values()}))
    raise ValueError(f"NPU architecture {name!r} is not simulated (fusekit simulates {known}; dav-3510 is "
                     "Ascend 950, whose register-based API fusekit does not model)")
