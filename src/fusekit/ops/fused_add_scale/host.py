"""FusedAddScale host side: prototype, input checks, tiling, launch and references.

``y = (x1 + x2) * scale`` for x1, x2 of equal shape and dtype (float16, bfloat16, float32).
Precision modes:

- ``native``: compute in the tensor dtype (float16, float32); its model is ``hardware``;
- ``fp32``: cast to float32 in UB, compute, cast back once; its model is ``fp32``. bfloat16
  needs it: arch 2201 has no bfloat16 Add/Muls (AD-API Add.md).

On a SoC without DataCopyPad (Ascend310P3) the host pads x1, x2 and y in GM to a whole number
of 32 B blocks, so the kernel only ever moves whole blocks; the pad elements are dropped from y.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fusekit import tiling
from fusekit.asc import LaunchResult, dtypes, launch
from fusekit.npu import BACKENDS, device_launcher
from fusekit.opdef import load_op_info
from fusekit.soc import SoC, get_soc
from fusekit.verify import CHUNK, model

from .kernel import fused_add_scale as KERNEL

OP = load_op_info(Path(__file__).with_name("op_info.json"))
OP.require(inputs=("x1", "x2"), outputs=("y",), attrs={"scale": "float"})
OP.check_kernel_name(KERNEL.__name__)

PRECISIONS = ("native", "fp32")
NUM_QUEUES = 3  # x1, x2 (VECIN) and y (VECOUT)


@dataclass
class FusedAddScaleRun:
    """Everything one call did: output, plans, traces and wall time (seconds)."""

    y: np.ndarray
    precision: str
    soc: SoC
    tilings: list[tiling.TilingData]
    launches: list[LaunchResult]
    wall_s: float


def fused_add_scale(x1: np.ndarray, x2: np.ndarray, scale: float, *, soc: "str | SoC | None" = None,
                    core_num: int | None = None, buffer_num: int = 2, precision: str | None = None,
                    backend: str = "simulator") -> np.ndarray:
    """``(x1 + x2) * scale`` computed by the FusedAddScale kernel on the simulated NPU (or a real one).

    Args:
        x1, x2: numpy arrays of equal shape (any rank; non-contiguous arrays are copied) and equal
            dtype: float16, bfloat16 (``ml_dtypes.bfloat16``) or float32.
        scale: real number; the kernel receives it as float32, like pyasc passes floats.
        soc: SoC name, default Ascend910B1 (see ``fusekit.soc.SOCS``).
        core_num: most AIV cores to use (default: all of the SoC's).
        buffer_num: BUFFER_NUM, buffers per queue: 1 (no overlap) or 2 (double buffering), up to 8.
        precision: ``"native"`` or ``"fp32"``; None picks native for float16/float32, fp32 for bfloat16.
        backend: ``"simulator"`` (fusekit), or ``"npu"`` / ``"camodel"`` through pyasc and CANN
            (``fusekit.npu``; untested without Ascend hardware).

    Returns:
        y, same shape and dtype as x1.

    Raises:
        TypeError: non-array inputs, unsupported or mismatched dtypes, non-real scale.
        ValueError: mismatched shapes, unknown SoC, precision or backend, bad core_num/buffer_num, or a
            precision the SoC cannot do.
        KernelError: the kernel broke a hardware rule (a bug in the kernel, not in the input).
        BackendUnavailable: the NPU or CA model backend lacks pyasc or CANN (the message names what).
    """
    return run(x1, x2, scale, soc=soc, core_num=core_num, buffer_num=buffer_num, precision=precision,
               backend=backend).y


def run(x1: np.ndarray, x2: np.ndarray, scale: float, *, soc=None, core_num: int | None = None, buffer_num: int = 2,
        precision: str | None = None, tile_length: int | None = None, backend: str = "simulator",
        **launch_options) -> FusedAddScaleRun:
    """Like :func:`fused_add_scale`, also returning the tiling, the Traces and the wall time.

    ``tile_length`` forces the tile size (elements, multiple of 512 B). ``launch_options`` go to
    ``fusekit.asc.launch`` (``strict``, ``executor``, ``sample_cores``, ``progress``;
    ``fusekit.timing.NO_VALUES`` and ``sample_cores`` skip work when only the timing matters, and
    ``y`` is then meaningless). On a device backend there are no Traces.
    """
    spec = get_soc(soc)
    dtype = check_inputs(x1, x2, scale)
    precision = resolve_precision(precision, dtype, spec)
    launcher = launch if backend == "simulator" else _device(backend, spec, dtype)
    cast_fp32 = precision == "fp32" and dtype is not dtypes.float32
    shape, n = x1.shape, x1.size
    native = x1.dtype.newbyteorder("=")
    a = np.ascontiguousarray(x1, dtype=native).reshape(-1)
    b = np.ascontiguousarray(x2, dtype=native).reshape(-1)
    align = 32 // dtype.sizeof()
    padded = n if spec.data_copy_pad else -(-n // align) * align
    if padded != n:
        a, b = (np.concatenate([v, np.zeros(padded - n, v.dtype)]) for v in (a, b))
    y = np.empty(padded, dtype=native)

    started = time.perf_counter()
    plans, launches = [], []
    for first, count in tiling.split_launches(padded, dtype):
        plan = tiling.compute_tiling(count, dtype, num_queues=NUM_QUEUES, buffer_num=buffer_num, soc=spec,
                                     core_num=core_num, scratch_bytes_per_element=8 if cast_fp32 else 0,
                                     tile_length=tile_length)
        plans.append(plan)
        window = slice(first, first + count)
        launches.append(launcher(KERNEL, plan.block_dim, (a[window], b[window], y[window]),
                                 dict(plan.kernel_args(), scale=float(scale), TILE_LENGTH=plan.tile_length,
                                      BUFFER_NUM=buffer_num, CAST_FP32=cast_fp32), soc=spec, **launch_options))
    if n == 0:
        plans.append(tiling.compute_tiling(0, dtype, buffer_num=buffer_num, soc=spec, core_num=core_num))
    launches = [result for result in launches if result is not None]
    return FusedAddScaleRun(y[:n].reshape(shape), precision, spec, plans, launches, time.perf_counter() - started)


def _device(backend: str, spec: SoC, dtype: dtypes.DataType):
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if dtype is dtypes.bfloat16:
        raise ValueError("pyasc 1.1.1 has no bfloat16, so bfloat16 runs on the simulator only (backend='simulator')")
    return device_launcher(backend, spec.name)


def reference(x1: np.ndarray, x2: np.ndarray, scale: float, model_name: str) -> np.ndarray:
    """``(x1 + x2) * scale`` under an arithmetic model of ``fusekit.verify`` (hardware, fp32, exact).

    Evaluated in chunks of ``verify.CHUNK`` elements to bound the memory of the wide temporaries.
    """
    m = model(model_name)
    s = m.scalar(scale, x1.dtype)
    a, b = x1.reshape(-1), x2.reshape(-1)
    y = np.empty(a.size, x1.dtype)
    for lo in range(0, a.size, CHUNK):
        part = slice(lo, lo + CHUNK)
        with np.errstate(all="ignore"):
            y[part] = m.result((m.tensor(a[part]) + m.tensor(b[part])) * s, x1.dtype)
    return y.reshape(x1.shape)


def model_of(precision: str) -> str:
    """The reference model a precision mode reproduces bit for bit."""
    return {"native": "hardware", "fp32": "fp32"}[precision]


def check_inputs(x1, x2, scale) -> dtypes.DataType:
    """Validate FusedAddScale inputs against the prototype; returns their dtype (see fused_add_scale)."""
    for name, x in (("x1", x1), ("x2", x2)):
        if not isinstance(x, np.ndarray):
            raise TypeError(f"{name} must be a numpy.ndarray, got {type(x).__name__}; wrap it with numpy.asarray(...)")
        if isinstance(x, np.ma.MaskedArray):
            raise TypeError(f"{name} is a masked array; the kernel would ignore its mask: pass {name}.filled(value)")
    if x1.shape != x2.shape:
        raise ValueError(f"x1 has shape {x1.shape} but x2 has shape {x2.shape}; FusedAddScale needs equal shapes "
                         "(it does not broadcast)")
    if x1.dtype.newbyteorder("=") != x2.dtype.newbyteorder("="):
        raise TypeError(f"x1 is {x1.dtype} but x2 is {x2.dtype}; convert both to one of {', '.join(OP.dtypes)}")
    try:
        dtype = dtypes.from_numpy(x1.dtype)
    except TypeError:
        dtype = None
    if dtype is None or dtype.name not in OP.dtypes:
        raise TypeError(f"FusedAddScale takes {', '.join(OP.dtypes)} (op_info.json), got {x1.dtype}; convert with "
                        ".astype(...) (bfloat16 is ml_dtypes.bfloat16)")
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number, got {scale!r}")
    try:
        float(scale)
    except OverflowError:
        raise ValueError(f"scale={scale} is too large for a float; the kernel takes it as float32") from None
    return dtype


def resolve_precision(precision: str | None, dtype: dtypes.DataType, soc: SoC) -> str:
    """Default and check the precision mode for ``dtype`` on ``soc``."""
    if dtype.name not in soc.vector_dtypes["add"] | {"bfloat16"} or (dtype.name == "bfloat16" and soc.arch == "2002"):
        raise ValueError(f"{soc.name} (arch {soc.arch}) has no {dtype.name} support; use float16 or float32")
    if precision is None:
        return "native" if soc.supports("add", dtype.name) else "fp32"
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS} or None, got {precision!r}")
    if precision == "native" and not soc.supports("add", dtype.name):
        raise ValueError(f"precision='native' computes in {dtype.name}, but Add on {soc.name} does not support "
                         f"{dtype.name}; use precision='fp32' (cast to float32 in UB)")
    return precision
