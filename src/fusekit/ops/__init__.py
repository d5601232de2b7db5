"""Shipped operators, one folder each: ``op_info.json``, ``kernel.py`` (device), ``host.py``.

Each operator's kernels are registered here under its name with :mod:`fusekit.pyasc.emit`, so that
``emit("fused_add_scale")`` and ``fusekit emit OP`` find them while the pyasc layer below never imports an operator.
"""

from fusekit.pyasc.emit import register_operator

from .fused_add_scale import kernel as fused_add_scale_kernel
from .unfused_add_muls import kernel as unfused_add_muls_kernel

register_operator("fused_add_scale", [fused_add_scale_kernel.fused_add_scale])
register_operator("unfused_add_muls", [unfused_add_muls_kernel.add, unfused_add_muls_kernel.muls])
