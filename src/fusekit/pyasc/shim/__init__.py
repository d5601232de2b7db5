"""Stand-ins for pyasc's host-side modules, installed next to fusekit's ``asc`` when fusekit rebinds it.

Kernel files written for Huawei's pyasc import more than ``asc``: ``asc.runtime.config``
(``set_platform``, ``Backend``, ``Platform``), ``asc.runtime.jit`` (``MockTensor``), ``asc.lib.runtime``
(``current_stream()`` in every launch ``kernel[n, rt.current_stream()]``, ``device_info``) with
``asc.lib.runtime.support`` (its enums), ``asc.lib.host`` (host tiling) and
``asc.language.core.struct`` / ``.dtype`` (``Struct`` tiling arguments). pyasc's own modules need its
compiled extension and, for the runtime, CANN; these stand-ins behave as pyasc's do for what
kernels call and do nothing device-side (there is no device: the simulator is the backend).
Where pyasc's behaviour is documented in its source, the module names the file (github
hicann/pyasc ``python/asc/...``).
"""

from __future__ import annotations

import types


def modules() -> dict[str, types.ModuleType]:
    """``{"asc.runtime.config": module, ...}``: every stand-in module by the name kernels import it under."""
    from . import config, host, jit, lib_runtime, struct, support
    from . import dtype as dtype_module

    def package(name: str, **attrs) -> types.ModuleType:
        module = types.ModuleType(name)
        module.__path__ = []  # a package: ``import asc.lib.runtime`` looks inside it
        module.__dict__.update(attrs)
        return module

    core = package("asc.language.core", struct=struct, dtype=dtype_module)
    found = {
        "asc.runtime": package("asc.runtime", config=config, jit=jit),
        "asc.runtime.config": config,
        "asc.runtime.jit": jit,
        "asc.lib": package("asc.lib", runtime=lib_runtime, host=host),
        "asc.lib.runtime": lib_runtime,
        "asc.lib.runtime.support": support,
        "asc.lib.host": host,
        "asc.language": package("asc.language", core=core),
        "asc.language.core": core,
        "asc.language.core.struct": struct,
        "asc.language.core.dtype": dtype_module,
    }
    return found
