"""Stand-in for pyasc's ``asc.runtime.config`` (pyasc ``python/asc/runtime/config.py``).

``set_platform(backend, soc_version=None, device_id=None, check=True)`` checks its arguments as pyasc
does (``Backend(backend)``, ``Platform(soc_version)``: a ValueError for a name pyasc does not know)
and remembers them; on fusekit both backends run on the simulator, so nothing else happens. pyasc's
``check=True`` (the default) raises RuntimeError when the runtime library of the chosen SoC is not
installed ("Runtime library is not available!"); here the runtime is the simulator, and a platform it has
no SoC data for (:mod:`fusekit.soc`; A3's Ascend910_93xx, Ascend910B2C, Ascend910B4-1) is refused the same
way, so that ``asc.lib.runtime.device_info`` never answers for a chip fusekit does not describe. With
``check=False`` it is recorded, as pyasc does, and ``device_info`` refuses it then.
"""

from __future__ import annotations

from enum import Enum
from typing import Optional


class Backend(Enum):
    """pyasc's runtime backends: CANN's CA model or a real NPU (both simulated here)."""

    Model = "Model"
    NPU = "NPU"


class Platform(Enum):
    """SoC names pyasc accepts (pyasc ``config.py``)."""

    Ascend910B1 = "Ascend910B1"
    Ascend910B2 = "Ascend910B2"
    Ascend910B2C = "Ascend910B2C"
    Ascend910B3 = "Ascend910B3"
    Ascend910B4 = "Ascend910B4"
    Ascend910B4_1 = "Ascend910B4-1"
    Ascend910_9362 = "Ascend910_9362"
    Ascend910_9372 = "Ascend910_9372"
    Ascend910_9381 = "Ascend910_9381"
    Ascend910_9382 = "Ascend910_9382"
    Ascend910_9391 = "Ascend910_9391"
    Ascend910_9392 = "Ascend910_9392"


class KernelType(Enum):
    """Kernel types of ``@asc.jit(kernel_type=...)`` (pyasc ``config.py``)."""

    AIV_ONLY = 0
    AIC_ONLY = 1
    MIX_AIV_HARD_SYNC = 2
    MIX_AIC_HARD_SYNC = 3
    MIX_AIV_1_0 = 4
    MIX_AIC_1_0 = 5
    MIX_AIC_1_1 = 6
    MIX_AIC_1_2 = 7


# what the last set_platform chose (pyasc defaults the Model backend to Ascend910B1)
selected = {"backend": Backend.Model, "platform": Platform.Ascend910B1, "device_id": 0}


def set_platform(backend: "Backend | str" = Backend.Model, soc_version: "Optional[Platform | str]" = None,
                 device_id: Optional[int] = None, check: bool = True) -> None:
    """Choose pyasc's backend and SoC. Here both backends are the simulator; the choice is recorded.

    Raises:
        ValueError: ``backend`` or ``soc_version`` is not one of pyasc's names.
        RuntimeError: ``check`` and fusekit has no SoC data for ``soc_version`` (pyasc: the runtime library
            of that SoC is not available); nothing is changed then.
    """
    from fusekit.soc import SOCS

    backend = Backend(backend)
    platform = Platform(soc_version) if soc_version is not None else Platform.Ascend910B1
    if check and platform.value not in SOCS:
        known = ", ".join(p.value for p in Platform if p.value in SOCS)
        raise RuntimeError(f"set_platform: the simulator has no SoC data for {platform.value} (pyasc would say its "
                           f"runtime library is not available); fusekit simulates {known}. Choose one of those, or "
                           "pass check=False to record the name anyway (device_info then refuses it)")
    selected["backend"] = backend
    selected["platform"] = platform
    selected["device_id"] = 0 if device_id is None else int(device_id)
