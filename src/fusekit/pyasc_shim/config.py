"""Stand-in for pyasc's ``asc.runtime.config`` (pyasc ``python/asc/runtime/config.py``).

``set_platform(backend, soc_version=None, device_id=None, check=True)`` checks its arguments as pyasc
does (``Backend(backend)``, ``Platform(soc_version)``: a ValueError for a name pyasc does not know)
and remembers them; on fusekit both backends run on the simulator, so nothing else happens.
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
    """
    backend = Backend(backend)
    selected["backend"] = backend
    selected["platform"] = Platform(soc_version) if soc_version is not None else Platform.Ascend910B1
    selected["device_id"] = 0 if device_id is None else int(device_id)
