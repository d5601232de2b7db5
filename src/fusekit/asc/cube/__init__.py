"""The cube unit's basic API (the AIC of Atlas A2/A3), one module per concept, with pyasc's names:

- :mod:`.layout`: the fractal layouts (Nz, Zz, Zn, L0C) as element offsets;
- :mod:`.params`: MmadParams, LoadData2DParams, Nd2NzParams, FixpipeParamsV220, FixpipeConfig and the enums;
- :mod:`.operands`: operand checks and the element reads and writes of the effects;
- :mod:`.copy_in`: GM -> L1 with ND2NZ, L1 -> the bias table (``data_copy``'s handlers for those paths),
  ``init_const_value`` (Fill);
- :mod:`.load`: ``load_data`` (L1 -> L0A / L0B, 2D), ``load_data_with_transpose``;
- :mod:`.load3d`: ``load_data`` with LoadData3DParamsV2 / V2Pro (img2col) and its registers (``set_fmatrix``,
  ``set_load_data_padding_value``, ``set_load_data_repeat``, ``set_load_data_boundary``);
- :mod:`.mmad`: ``mmad``, ``set_hf32_mode``, ``set_hf32_trans_mode``;
- :mod:`.fixpipe`: ``fixpipe`` (L0C -> GM / L1 with casts, quantisation, ReLU).

A kernel runs on AIC cores when it says so, ``@asc.jit(kernel_type=config.KernelType.AIC_ONLY)`` or
``matmul_cube_only=True`` (``fusekit.asc.runtime.core_kind``); its tensors live in the AIC's spaces
(``fusekit.machine.spaces``) and its instructions run on the AIC's pipes (MTE2, MTE1, M, FIX). Facts with their
sources: ``docs/cube.md``. :data:`API` maps each exported name to its object.
"""

from fusekit.machine import BLOCKS, COUNT, ND2NZ, Mem, copy_handler

from .. import datamove
from .copy_in import data_copy_bias, data_copy_nd2nz, init_const_value
from .fixpipe import fixpipe
from .load import load_data, load_data_with_transpose
from .load3d import set_fmatrix, set_load_data_boundary, set_load_data_padding_value, set_load_data_repeat
from .mmad import mmad, set_hf32_mode, set_hf32_trans_mode
from .params import (CO2Layout, CubeFormat, FixpipeConfig, FixpipeParamsV220, FmatrixMode, LoadData2dTransposeParams,
                     LoadData2DParams, LoadData3DParamsV2, LoadData3DParamsV2Pro, LoadDataRepeatParam, MmadParams,
                     Nd2NzParams, QuantModes)

datamove.PARAM_FORMS[Nd2NzParams] = ND2NZ
copy_handler(Mem.GM, Mem.L1, ND2NZ)(data_copy_nd2nz)
copy_handler(Mem.L1, Mem.BT, COUNT)(lambda dst, src, count: data_copy_bias(dst, src, count=count))
copy_handler(Mem.L1, Mem.BT, BLOCKS)(lambda dst, src, params: data_copy_bias(dst, src, params=params))

API = {obj.__name__: obj for obj in (CO2Layout, CubeFormat, FixpipeConfig, FixpipeParamsV220, LoadData2dTransposeParams,
                                     LoadData2DParams, MmadParams, Nd2NzParams, QuantModes, fixpipe, init_const_value,
                                     load_data, load_data_with_transpose, mmad, set_hf32_mode, set_hf32_trans_mode,
                                     FmatrixMode, LoadData3DParamsV2, LoadData3DParamsV2Pro, LoadDataRepeatParam,
                                     set_fmatrix, set_load_data_boundary, set_load_data_padding_value,
                                     set_load_data_repeat)}

__all__ = ["API"]
