"""Stand-in for pyasc's ``asc.lib.runtime`` (pyasc ``python/asc/lib/runtime/interface.py``, ``support.py``).

Kernels call ``current_stream()`` to launch ``kernel[core_num, rt.current_stream()](...)``; fusekit's
launch ignores the stream (the simulator runs the launch at once). The device queries answer for
one simulated device of the platform ``set_platform`` chose: ``device_info`` gives its core counts from
fusekit's SoC data (:mod:`fusekit.soc`). Memory and kernel-registration calls of pyasc's runtime are not
stand-ins (fusekit launches take numpy arrays or CPU torch tensors directly) and raise AttributeError
naming that.
"""

from __future__ import annotations

from typing import Optional

from . import config, support
from .support import DeviceInfoType, DeviceModuleType  # noqa: F401 - pyasc exports them here too


class Stream:
    """The one stream of the simulated device (launches on it complete before returning)."""

    def __repr__(self) -> str:
        return "<fusekit simulated stream>"


_STREAM = Stream()


def current_stream() -> Stream:
    return _STREAM


def create_stream() -> Stream:
    return _STREAM


def destroy_stream(stream: Stream) -> None:
    return None


def synchronize(stream: "Stream | None" = None) -> None:
    """Launches are synchronous on the simulator: nothing is pending."""
    return None


def synchronize_device() -> None:
    return None


def set_device(device_id: int = 0) -> None:
    config.selected["device_id"] = int(device_id)


def current_device() -> int:
    return config.selected["device_id"]


def default_device() -> int:
    return 0


def device_count() -> int:
    return 1


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def is_model() -> bool:
    return config.selected["backend"] is config.Backend.Model


def current_platform() -> str:
    return config.selected["platform"].value


def get_soc_version() -> config.Platform:
    return config.selected["platform"]


def device_info(module_type: DeviceModuleType, info_type: DeviceInfoType, device_id: Optional[int] = None) -> int:
    """What CANN's ``rtGetDeviceInfo`` answers for the simulated device (pyasc ``interface.device_info``).

    Answered, from :mod:`fusekit.soc` for the platform ``set_platform`` chose (default Ascend910B1):
    ``(RT_MODULE_TYPE_VECTOR_CORE, INFO_TYPE_CORE_NUM)``: the AIV cores (``SoC.vector_cores``: 48 on
    910B1/B2, 40 on 910B3/B4); ``(RT_MODULE_TYPE_AICORE, INFO_TYPE_CORE_NUM)`` and ``INFO_TYPE_CUBE_NUM``:
    the AI (cube) cores, half of them (arch 2201: AIC:AIV = 1:2, docs/ascendc-model.md; 24 / 20).

    Raises:
        ValueError: ``module_type`` / ``info_type`` not one of pyasc's enums, a device other than 0, a
            platform fusekit has no SoC data for, or a query the simulated device cannot answer honestly.
    """
    module, info = support.DeviceModuleType(module_type), support.DeviceInfoType(info_type)
    if device_id not in (None, 0, config.selected["device_id"]):
        raise ValueError(f"device_info: the simulator has one device (0), not {device_id}")
    soc = _simulated_soc()
    aic = soc.vector_cores // 2  # AIC:AIV = 1:2 on arch 2201 (AD-G 架构规格/NPU架构版本2201.md)
    answers = {(DeviceModuleType.RT_MODULE_TYPE_VECTOR_CORE, DeviceInfoType.INFO_TYPE_CORE_NUM): soc.vector_cores,
               (DeviceModuleType.RT_MODULE_TYPE_AICORE, DeviceInfoType.INFO_TYPE_CORE_NUM): aic,
               (DeviceModuleType.RT_MODULE_TYPE_AICORE, DeviceInfoType.INFO_TYPE_CUBE_NUM): aic}
    if (module, info) not in answers:
        known = ", ".join(f"({m.name}, {i.name})" for m, i in answers)
        raise ValueError(f"device_info({module.name}, {info.name}): the simulated {soc.name} answers only {known}")
    return answers[(module, info)]


def _simulated_soc():
    """The fusekit SoC of the chosen platform (an A2 part: pyasc's platforms are all arch 2201)."""
    from fusekit.soc import SOCS

    name = config.selected["platform"].value
    if name not in SOCS or SOCS[name].arch != "2201":
        known = ", ".join(n for n, s in SOCS.items() if s.arch == "2201")
        raise ValueError(f"device_info: fusekit has no SoC data for platform {name} (it has {known}): "
                         "choose one with asc.runtime.config.set_platform(backend, soc_version)")
    return SOCS[name]


def __getattr__(name: str):
    raise AttributeError(f"asc.lib.runtime.{name}: pyasc's device runtime call is not simulated by fusekit "
                         "(launch kernels with numpy arrays or CPU torch tensors instead)")
