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

import math
import numbers
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np

from fusekit import tiling
from fusekit.asc import LaunchResult, dtypes, launch, overflow
from fusekit.asc.basic import dtypes_for, supports
from fusekit.pyasc.npu import BACKENDS, device_launcher
from fusekit.pyasc.opdef import load_op_info
from fusekit.soc import SoC, get_soc
from fusekit.verify import CHUNK, model, overflow_threshold, round_once, two_product, two_sum, warn

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
    overflow: str | None = None  # the vector unit's float overflow mode (fusekit.asc.overflow); pass to reference()

    def __post_init__(self):
        if self.overflow is None:
            self.overflow = self.soc.overflow_default


def fused_add_scale(x1: np.ndarray, x2: np.ndarray, scale: float, *, soc: "str | SoC | None" = None,
                    core_num: int | None = None, buffer_num: int = 2, precision: str | None = None,
                    backend: str = "simulator", overflow: str | None = None) -> np.ndarray:
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
            (``fusekit.pyasc.npu``; untested without Ascend hardware).
        overflow: the vector unit's float overflow mode, ``"inf_nan"`` (IEEE) or ``"saturation"``
            (overflow -> largest finite value with its sign, NaN -> 0); default the SoC's: A2/A3
            default to inf_nan and can saturate, 310P saturates only (``fusekit.asc.overflow``).

    Returns:
        y, same shape and dtype as x1.

    Warns:
        PrecisionWarning: the scale overflows or underflows the dtype it is computed in (see
            :func:`scale_warning`), or elements of y overflowed (see :func:`overflow_warning`).

    Raises:
        TypeError: non-array inputs, unsupported or mismatched dtypes, non-real scale.
        ValueError: mismatched shapes, a finite scale beyond float32's range, unknown SoC, precision
            or backend, bad core_num/buffer_num, or a precision the SoC cannot do.
        KernelError: the kernel broke a hardware rule (a bug in the kernel, not in the input).
        BackendUnavailable: the NPU or CA model backend lacks pyasc or CANN (the message names what).
    """
    options = {} if overflow is None else {"overflow": overflow}
    result = run(x1, x2, scale, soc=soc, core_num=core_num, buffer_num=buffer_num, precision=precision,
                 backend=backend, **options)
    message = overflow_warning(x1, x2, scale, result.y, result.precision)
    if message:
        warn(message)
    return result.y


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
    message = scale_warning(scale, dtype, precision)
    if message:
        warn(message)
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
    return FusedAddScaleRun(y[:n].reshape(shape), precision, spec, plans, launches, time.perf_counter() - started,
                            overflow.choose(spec, launch_options.get("overflow")))


def _device(backend: str, spec: SoC, dtype: dtypes.DataType):
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if dtype is dtypes.bfloat16:
        raise ValueError("pyasc 1.1.1 has no bfloat16, so bfloat16 runs on the simulator only (backend='simulator')")
    return device_launcher(backend, spec.name)


def reference(x1: np.ndarray, x2: np.ndarray, scale: float, model_name: str, *, progress=None,
              overflow_mode: str = "inf_nan") -> np.ndarray:
    """``(x1 + x2) * scale`` under an arithmetic model of ``fusekit.verify`` (hardware, fp32, exact).

    ``overflow_mode`` is the SoC's (``FusedAddScaleRun.overflow``): under "saturation" the hardware
    and fp32 models saturate each instruction's result as the vector unit does (+-inf -> +-max,
    NaN -> 0; ``fusekit.asc.overflow``); the exact model stays the real-number result.

    Evaluated in chunks of ``verify.CHUNK`` elements to bound the memory of the wide temporaries;
    ``progress`` (if given) is called with the number of elements done after each chunk.
    """
    m = model(model_name)
    s = m.scalar(scale, x1.dtype)
    a, b = x1.reshape(-1), x2.reshape(-1)
    y = np.empty(a.size, x1.dtype)
    for lo in range(0, a.size, CHUNK):
        part = slice(lo, lo + CHUNK)
        with np.errstate(all="ignore"):
            if model_name == "exact" and math.isfinite(float(scale)):
                approx, known = _exact_float64(a[part], b[part], scale)
                y[part] = round_once(approx, x1.dtype, _exact_values(a[part], b[part], scale), known)
            elif overflow_mode == overflow.SATURATION:  # each instruction saturates: add, muls, the final cast
                held = m.compute or x1.dtype
                total = overflow.saturate(m.tensor(a[part]) + m.tensor(b[part]), held)
                y[part] = overflow.saturate(m.result(overflow.saturate(total * s, held), x1.dtype), x1.dtype)
            else:
                y[part] = m.result((m.tensor(a[part]) + m.tensor(b[part])) * s, x1.dtype)
        if progress is not None:
            progress(min(CHUNK, a.size - lo))
    return y.reshape(x1.shape)


def exact(x1: np.ndarray, x2: np.ndarray, scale: float, part: slice = slice(None)) -> np.ndarray:
    """The exact real-number result ``(x1 + x2) * scale`` before any rounding to the dtype, for
    ``part`` of the flattened elements, as float64.

    float64 holds the sum of two float32 (or narrower) values with the right sign and finiteness,
    and the product with a scale within float32's range never overflows float64 (|y| < 2^257),
    which is all :func:`fusekit.verify.compare` needs from it."""
    with np.errstate(all="ignore"):
        return ((x1.reshape(-1)[part].astype(np.float64) + x2.reshape(-1)[part].astype(np.float64))
                * np.float64(scale))


def _exact_float64(a: np.ndarray, b: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """``(a + b) * scale`` in float64, and where that is the exact value (both roundings exact;
    products near float64's underflow are not trusted)."""
    total, e1 = two_sum(a.astype(np.float64), b.astype(np.float64))
    product, e2 = two_product(total, np.full_like(total, float(scale)))
    return product, (e1 == 0) & (e2 == 0) & ((np.abs(product) > 2.0**-900) | (total == 0))


def _exact_values(a: np.ndarray, b: np.ndarray, scale: float):
    """The exact ``(a[i] + b[i]) * scale`` as Fractions, for :func:`fusekit.verify.round_once`."""
    s = Fraction(float(scale))
    return lambda index: [(Fraction(float(a[i])) + Fraction(float(b[i]))) * s for i in index]


def scale_warning(scale: float, dtype: "dtypes.DataType | str", precision: str) -> str | None:
    """Why ``scale`` will not act as the number given, or None.

    pyasc passes a Python float as float32; a kernel computing natively converts it to the tensor
    dtype (``hardware`` model in ``fusekit.verify``); an fp32 kernel keeps it in float32. The
    scale overflows when that conversion gives inf, and underflows (IEEE 754 sense: tiny and
    inexact) when the result is zero or subnormal and differs from the scale."""
    value = float(scale)
    name = dtypes.as_dtype(dtype).name
    if math.isnan(value):
        return "scale is NaN: every output will be NaN"
    if not math.isfinite(value):
        return f"scale is {value}: every output will be +-inf (NaN where x1 + x2 is 0)"
    target = dtypes.as_dtype(name).np if precision == "native" else np.dtype(np.float32)
    target_name = name if precision == "native" else "float32"
    with np.errstate(all="ignore"):
        held = float(np.array(np.float32(value)).astype(target)[()])
    if math.isinf(held):
        return (f"scale={scale!r} overflows {target_name} in {precision} precision (becomes {held}); its largest finite "
                f"value is {float(ml_dtypes.finfo(target).max):g}" + ("; precision='fp32' keeps the scale in float32"
                                                                        if precision == "native" else ""))
    if value != 0 and abs(held) < float(ml_dtypes.finfo(target).smallest_normal) and held != value:
        return (f"scale={scale!r} underflows {target_name} in {precision} precision (becomes {held:g})"
                + ("; precision='fp32' keeps the scale in float32" if precision == "native" else ""))
    return None


def overflow_warning(x1: np.ndarray, x2: np.ndarray, scale: float, y: np.ndarray, precision: str) -> str | None:
    """How many elements of ``y`` overflowed, or None: those with finite inputs and scale whose y is
    inf or NaN (the result or an intermediate overflowed), or whose exact result rounds beyond the
    dtype's range (a saturating SoC clamps it to the largest finite value instead)."""
    if not math.isfinite(float(scale)) or y.size == 0:
        return None
    limit = overflow_threshold(y.dtype)
    flat = y.reshape(-1)
    count = 0
    for lo in range(0, flat.size, CHUNK):
        part = slice(lo, lo + CHUNK)
        real = exact(x1, x2, scale, part)
        out = flat[part].astype(np.float64)
        count += int((np.isfinite(real) & (~np.isfinite(out) | (np.abs(real) >= limit))).sum())
    if not count:
        return None
    name = dtypes.from_numpy(y.dtype).name
    return (f"FusedAddScale: {count} of {flat.size} elements overflowed {name} in {precision} precision (the result "
            f"or an intermediate left {name}'s range, largest finite value {float(ml_dtypes.finfo(y.dtype).max):g})")


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
        value = float(scale)
    except OverflowError:  # an int beyond float64
        value = None
    with np.errstate(over="ignore"):
        if value is None or (math.isfinite(value) and math.isinf(np.float32(value))):
            raise ValueError(f"scale={scale!r} is outside float32's range (|scale| <= "
                             f"{float(np.finfo(np.float32).max):.8g}): the kernel takes scale as float32, as pyasc "
                             "passes a Python float") from None
    return dtype


def resolve_precision(precision: str | None, dtype: dtypes.DataType, soc: SoC) -> str:
    """Default and check the precision mode for ``dtype`` on ``soc``."""
    if dtype.name not in dtypes_for(soc.arch)["add"] | {"bfloat16"} or (dtype.name == "bfloat16" and soc.arch == "2002"):
        raise ValueError(f"{soc.name} (arch {soc.arch}) has no {dtype.name} support; use float16 or float32")
    if precision is None:
        return "native" if supports(soc, "add", dtype.name) else "fp32"
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS} or None, got {precision!r}")
    if precision == "native" and not supports(soc, "add", dtype.name):
        raise ValueError(f"precision='native' computes in {dtype.name}, but Add on {soc.name} does not support "
                         f"{dtype.name}; use precision='fp32' (cast to float32 in UB)")
    return precision
