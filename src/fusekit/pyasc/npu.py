"""The hardware path: launch the shipped kernels through pyasc on an NPU or on CANN's CA model.

``backend="npu"`` runs on an Ascend NPU, ``backend="camodel"`` on CANN's cycle-accurate CPU model
(pyasc's ``Backend.Model``); both compile the kernel with CANN's ``bisheng``. The same host code
(tiling, padding, launches) as the simulator is used; only the launch differs: pyasc's
``kernel[block_dim](*args)`` on the kernel traced from the same source (``fusekit.pyasc.bridge``).

This path is untested here: no Ascend hardware or CANN toolkit was available. Without them it
stops before doing anything and names what is missing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from fusekit.pyasc.bridge import PYASC_INSTALL, pyasc_kernel, require_pyasc

BACKENDS = ("simulator", "npu", "camodel")
PYASC_SOCS = ("Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4")  # asc.runtime.config.Platform


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here; the message names every missing piece."""


def missing(backend: str, soc: str) -> list[str]:
    """What the ``npu`` or ``camodel`` backend lacks on this machine (empty: nothing)."""
    problems = []
    try:
        require_pyasc()
    except RuntimeError:
        problems.append(f"Huawei's pyasc ({PYASC_INSTALL})")
    home = os.environ.get("ASCEND_HOME_PATH", "")
    if not home or not Path(home).is_dir():
        problems.append("a CANN toolkit: ASCEND_HOME_PATH is not set to an existing directory (source "
                        "<ascend-toolkit>/set_env.sh)")
    for tool, variable in (("bisheng", "PYASC_COMPILER"), ("ld.lld", "PYASC_LINKER")):
        if shutil.which(os.environ.get(variable, tool)) is None:
            problems.append(f"the {tool} executable of CANN (on PATH, or named by {variable})")
    if soc not in PYASC_SOCS:
        problems.append(f"a SoC pyasc can target ({', '.join(PYASC_SOCS)}), not {soc}")
    if backend == "camodel":
        lib = Path(home or "$ASCEND_HOME_PATH", "tools", "simulator", soc, "lib")
        if not lib.is_dir() or str(lib) not in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
            problems.append(f"the CA model library: {lib} must exist and be on LD_LIBRARY_PATH")
    return problems


def device_launcher(backend: str, soc: str):
    """A ``launch``-compatible function running kernels with pyasc on ``backend``.

    Raises:
        ValueError: unknown backend.
        BackendUnavailable: something the backend needs is missing (all of it is named).
    """
    if backend not in BACKENDS[1:]:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    problems = missing(backend, soc)
    if problems:
        raise BackendUnavailable(f"backend {backend!r} cannot run here; it needs " + "; ".join(problems))
    from asc.runtime import config  # pyasc is there: missing() checked

    config.set_platform(config.Backend.NPU if backend == "npu" else config.Backend.Model, config.Platform(soc))

    def launch_on_device(kernel, core_num: int, args: tuple, kwargs: dict, **_options):
        try:
            pyasc_kernel(kernel)[core_num](*args, **kwargs)  # pyasc compiles, launches, copies the arrays back
        except (RuntimeError, OSError) as exc:
            raise BackendUnavailable(f"pyasc could not run {kernel.fn.__name__} on {backend}: "
                                     f"{str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}") \
                from None
        return None

    return launch_on_device
