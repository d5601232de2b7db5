"""``fusekit.asc.adv``: pyasc's ``asc.adv`` (the Ascend C high-level APIs), vector side.

Simulated: the high-level Matmul (:mod:`.matmul`: Matmul, MatmulType, register_matmul, TCubeTiling, as the
cube's basic instructions), the elementwise math functions of :mod:`fusekit.asc.adv.math` and :mod:`fusekit.asc.adv.axpy` (pyasc
``python/asc/language/adv/math.py``), quant / QuantConfig (:mod:`.quant`), concat / extract (:mod:`.sort`); their
temporary-buffer sizes: :mod:`.tmpsize`. Every other name of pyasc's ``asc.adv`` raises an
AttributeError saying pyasc has it and fusekit does not simulate it yet; the matmul names say
"not simulated yet (cube unit)".
"""

from .axpy import axpy
from .matmul import LayoutMode, Matmul, MatmulConfig, MatmulType, TCubeTiling, register_matmul  # the cube
from .math import max_min_tmp_size  # a fusekit helper: Ascend C's Get<Op>MaxMinTmpSize (adv/tmpsize.py)
from .norm import rmsnorm
from .softmax import softmax
from .tiling import RmsNormTiling, SoftmaxTiling
# fusekit host helpers (Ascend C's host tiling functions; pyasc 1.1.1's asc.lib.host has none for these)
from .tiling import (get_rms_norm_max_min_tmp_size, get_rms_norm_tiling_info, get_softmax_max_tmp_size,
                     get_softmax_min_tmp_size, softmax_tiling_func)
from .math import (acos, acosh, asin, asinh, atan, atanh, ceil, cos, cosh, erf, erfc, exp, floor, frac, log,
                   power, round, sign, sin, sinh, tan, tanh, trunc)
from .math import digamma, lgamma, xor  # the rest of pyasc adv/math.py
from .quant import QuantConfig, quant  # pyasc adv/quantization.py, adv/types.py
from .sort import concat, extract  # pyasc adv/sort.py

# pyasc 1.1.1 asc.adv names (python/asc/language/adv/__init__.py) that fusekit does not simulate
_CUBE = frozenset({"get_matmul_api_tiling", "get_basic_config", "get_ib_share_norm_config",
                   "get_mdl_config", "get_mm_config", "get_normal_config", "get_special_basic_config",
                   "get_special_mdl_config", "MatmulApiStaticTiling",
                   "MatmulBatchParams", "MatmulFuncParams", "MatmulQuantParams", "MatmulShapeParams"})
_NOT_YET = frozenset({"lgamma", "digamma", "xor", "softmax", "rmsnorm", "quant", "RmsNormTiling",
                      "SoftmaxTiling"})

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "axpy", "ceil", "cos", "cosh", "erf", "erfc", "exp",
           "floor", "frac", "log", "power", "round", "sign", "sin", "sinh", "tan", "tanh", "trunc"]

__all__ += ["RmsNormTiling", "SoftmaxTiling", "rmsnorm", "softmax"]  # softmax / rmsnorm (adv/softmax.py, norm.py)
__all__ += ["QuantConfig", "concat", "digamma", "extract", "lgamma", "quant", "xor"]  # quant.py, sort.py, math.py
__all__ += ["LayoutMode", "Matmul", "MatmulConfig", "MatmulType", "TCubeTiling", "register_matmul"]  # matmul.py


def __getattr__(name: str):
    """A pyasc asc.adv name fusekit lacks: say so (AttributeError, so hasattr() keeps working)."""
    if name in _CUBE:
        raise AttributeError(f"pyasc has asc.adv.{name}; fusekit does not simulate it: "
                             "not simulated yet (cube unit)")
    if name in _NOT_YET:
        raise AttributeError(f"pyasc has asc.adv.{name}; fusekit does not simulate it yet")
    raise AttributeError(f"asc.adv has no {name!r} (pyasc 1.1.1's asc.adv has none either); simulated: "
                         f"{', '.join(__all__)}")
