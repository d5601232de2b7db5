"""An instruction's memory effect as a record, and the one interpreter that carries it out.

Check, then record, then effect (``docs/design.md``): an instruction's rules are checked and its Trace record is
made before memory changes. Most instructions change memory in one regular way: each destination lane gets a
numpy function of the source lanes (and, for some, of its own old value) and the instruction's scalars, rounded
once to the destination dtype, with the overflow mode applied; the lanes it does not name keep their values
(AD-API SIMD计算说明/掩码.md: "mask为0时，目的操作数保持原值"). Such an instruction hands ``Core.record`` an
:class:`Effect`: the Spec, the destination and the sources with their lane indices, the scalars, the rounding
and the overflow mode, as data; :func:`apply` carries it out. An executor that holds effects back (the
sanitizer's race replay) or runs many at once therefore sees what each one will do before it does it.

An instruction whose effect is not of that shape passes a closure instead, and its site says why: addresses
that depend on data (gather, scatter), results packed into bits (compare), several steps with roundings in
between (reductions, sorts, the ``asc.adv`` decompositions), register or UB state read when it runs (select on
the CmpMask register, CastDequant's vdeq table), pad bytes (data_copy_pad into UB), the scalar unit's data cache,
and synchronisation. :func:`run` lands either kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np

from . import native, overflow

if TYPE_CHECKING:
    from .basic.rounding import RoundMode
    from .basic.spec import Spec


class Operand(NamedTuple):
    """One operand of an :class:`Effect`: a tensor and the elements of it the instruction touches.

    Attributes:
        tensor: a ``LocalTensor``, or a ``GlobalTensor`` (the GM side of a data move), read through its
            ``array(count)`` view when the effect lands: a vector instruction names the kernel's tensor, a data
            move a copy of it as issued (``fusekit.asc.datamove``), as their closures did.
        index: the count form: ``n``, the elements ``[0, n)`` from the tensor's first one; otherwise int64 element
            indices from the tensor's first element, one per lane in lane order (repeat-major, as
            :func:`fusekit.asc.basic.lanes.lanes` gives them). A destination index may repeat an element (a
            repeat stride of 0): the later lane's value stays, as numpy assigns in order.
    """

    tensor: object
    index: int | np.ndarray


# An Effect is made for most simulated instructions: its __init__ sets the slots directly (a frozen dataclass's
# generated __init__ goes through object.__setattr__, several times slower), as fusekit.asc.trace.Access does; fields,
# defaults, repr and immutability are the dataclass's own. eq=False: the lane indices are arrays.
@dataclass(frozen=True, slots=True, eq=False, init=False)
class Effect:
    """What a regular instruction does to memory (module docstring): ``dst`` lanes = ``compute(sources, scalars)``.

    Attributes:
        spec: the vector instruction (``fusekit.asc.basic.spec.Spec``); None for an effect with no Spec (a data
            move, an ``asc.adv`` function).
        dst: the destination and its lanes.
        srcs: role (``"src0"``, ``"src"`` ...) -> source and its lanes, in ``compute``'s argument order; every
            operand has as many lanes as ``dst`` (or the same ``n``).
        compute: ``compute(*source lanes, [dst lanes,] *scalars)`` -> the result lanes (numpy arrays, 1-D); the
            destination's current lanes come after the sources when ``reads_dst``.
        scalars: scalar operands after the lanes (already in the dtype the instruction takes them in).
        reads_dst: the destination's old values are an operand (MulAddDst, Axpy, a store under atomics).
        sequential: the number of lanes of each repeat, when a later repeat reads what an earlier one wrote (the
            repeats then run one at a time, in order); () when every lane runs at once.
        rounding: None: the result is stored as numpy assigns it to the destination dtype (one rounding to
            nearest even for a float result); a ``RoundMode``: converted with Cast's rounding first
            (``fusekit.asc.basic.rounding.convert``: integer destinations saturate).
        mode: the overflow mode applied to the rounded result (``fusekit.asc.overflow``; ``INF_NAN`` leaves it as
            it is: a bit copy, an integer result).
    """

    spec: Spec | None
    dst: Operand
    srcs: dict[str, Operand]
    compute: Callable
    scalars: tuple = ()
    reads_dst: bool = False
    sequential: tuple[int, ...] = ()
    rounding: RoundMode | None = None
    mode: str = overflow.INF_NAN

    def __init__(self, spec: Spec | None, dst: Operand, srcs: dict[str, Operand], compute: Callable, scalars: tuple = (),
                 reads_dst: bool = False, sequential: tuple[int, ...] = (), rounding: RoundMode | None = None,
                 mode: str = overflow.INF_NAN):
        _SPEC(self, spec)
        _DST(self, dst)
        _SRCS(self, srcs)
        _COMPUTE(self, compute)
        _SCALARS(self, scalars)
        _READS_DST(self, reads_dst)
        _SEQUENTIAL(self, sequential)
        _ROUNDING(self, rounding)
        _MODE(self, mode)


_SPEC, _DST, _SRCS, _COMPUTE, _SCALARS, _READS_DST, _SEQUENTIAL, _ROUNDING, _MODE = (
    Effect.__dict__[name].__set__ for name in ("spec", "dst", "srcs", "compute", "scalars", "reads_dst", "sequential",
                                               "rounding", "mode"))


def copy(x):
    """The ``compute`` of a move (DataCopy, Brcb): each destination lane takes its source lane's bits."""
    return x


def run(effect: "Effect | Callable[[], None] | None") -> None:
    """Land an instruction's effect: :func:`apply` an :class:`Effect`, call a closure (an irregular
    instruction's), or nothing for None. ``Core.record`` and the executors that hold effects back call this."""
    if effect is None:
        return
    if isinstance(effect, Effect):
        apply(effect)
    else:
        effect()


def apply(effect: Effect) -> None:
    """Carry out ``effect``: gather the source lanes (then the destination's, with ``reads_dst``), compute them with
    the scalars, round once to the destination dtype (``rounding``), apply the overflow ``mode``, and write the
    destination's lanes only (the other elements keep their values). With ``sequential``, repeat by repeat.
    The hardware raises no floating-point warnings, so numpy's are silenced (a move computes nothing: no need)."""
    if effect.compute is copy:
        _land(effect)
    else:
        with np.errstate(all="ignore"):
            _land(effect)


def _land(effect: Effect) -> None:
    index = effect.dst.index
    if not isinstance(index, np.ndarray):
        _count(effect, int(index))
    elif effect.sequential:  # a later repeat reads what an earlier one wrote: one repeat at a time, in order
        start = 0
        for lanes in effect.sequential:
            part = slice(start, start + lanes)
            _lanes(effect, index[part], [s.index[part] for s in effect.srcs.values()])
            start += lanes
    else:
        _lanes(effect, index, [s.index for s in effect.srcs.values()])


def _count(effect: Effect, n: int) -> None:
    """The count form: the first ``n`` elements of every operand (the hot path)."""
    dst = effect.dst.tensor
    inputs = [s.tensor.array(n) for s in effect.srcs.values()] + ([dst.array(n)] if effect.reads_dst else [])
    inputs += effect.scalars
    out = dst.array(n)
    if effect.rounding is None and effect.mode == overflow.INF_NAN and isinstance(effect.compute, np.ufunc):
        # straight into the destination: a ufunc's count form is the hot path (float16 + - * / sqrt in C)
        native.evaluate(effect.compute, *inputs, out=out)
    else:
        out[...] = overflow.apply(_rounded(effect, native.evaluate(effect.compute, *inputs), dst.dtype), out.dtype,
                                  effect.mode)


def _lanes(effect: Effect, d_index: np.ndarray, s_indices: list) -> None:
    """The lanes ``d_index`` of the destination from the lanes ``s_indices`` of the sources."""
    if d_index.size == 0:
        return
    # [..., i]: the lanes are the last axis; a lockstep group's cores come first (fusekit.asc.lockstep)
    inputs = [_gather(s.tensor.array(_extent(s.tensor, i)), i) for s, i in zip(effect.srcs.values(), s_indices)]
    dst = effect.dst.tensor
    whole = dst.array(_extent(dst, d_index))
    if effect.reads_dst:
        inputs.append(_gather(whole, d_index))
    result = _rounded(effect, native.evaluate(effect.compute, *inputs, *effect.scalars), dst.dtype)
    result = overflow.apply(result, whole.dtype, effect.mode)
    view = strided(whole, d_index, write=True)
    if view is None:
        whole[..., d_index] = result
    else:
        view[...] = np.reshape(result, view.shape)


def _gather(a: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``a[..., index]`` (lanes in order), through a strided view where the lanes are regular (:func:`strided`)."""
    view = strided(a, index)
    return a[..., index] if view is None else view.reshape(a.shape[:-1] + index.shape)


def _extent(tensor, index: np.ndarray) -> int:
    """Elements of ``tensor`` an effect's lanes ``index`` reach: its length, or where a lockstep group's cores have
    lengths of their own (GM views at per-core offsets) the lanes' reach, which is the same on every core."""
    length = tensor.length
    return length if isinstance(length, int) else int(index.max()) + 1


def _rounded(effect: Effect, result, dtype):
    """``result`` converted to ``dtype`` with the effect's Cast rounding, or as it is (the store rounds it)."""
    if effect.rounding is None:
        return result
    # imported here: fusekit.asc.basic's families import the runtime, which imports this module
    from .basic.rounding import convert
    return convert(np.asarray(result), dtype, effect.rounding)



_PATTERNS: dict = {}  # (index bytes, block elements) -> (start, shape, steps) or None: lanes recur every tile and launch


def _pattern(flat: np.ndarray, per: int):
    """(start, shape, steps) in elements when ``flat[i]`` is ``start + sum(k * step)`` over the position ``k`` of ``i``
    in ``shape``: runs of ``m`` consecutive elements ``stride`` apart, ``(runs, m), (stride, 1)``, or repeats of 8
    blocks of ``per`` elements, ``(R, 8, per), (S, B, 1)`` (a block stride B of 0: each repeat reads one block 8
    times), else None."""
    start = int(flat[0])
    step = np.flatnonzero(np.diff(flat) != 1)
    m = int(step[0]) + 1 if step.size else flat.size
    forms = []
    if flat.size % m == 0:
        forms.append(((flat.size // m, m), (int(flat[m] - start) if m < flat.size else m, 1)))
    lanes = 8 * per
    if flat.size % lanes == 0 and flat.size > lanes:
        repeats = flat.size // lanes
        forms.append(((repeats, 8, per), (int(flat[lanes] - start), int(flat[per] - start), 1)))
    for shape, steps in forms:
        if min(steps) < 0:
            continue
        grid = start + sum(np.arange(n).reshape((-1,) + (1,) * (len(shape) - 1 - k)) * st
                           for k, (n, st) in enumerate(zip(shape, steps)))
        if np.array_equal(flat.reshape(shape), grid):
            return start, shape, steps
    return None


def strided(a: np.ndarray, index: np.ndarray, write: bool = False) -> np.ndarray | None:
    """``a[..., index]`` as a view of ``a`` when ``index`` (1-D, or [repeats, lanes] read row by row) is regular
    (:func:`_pattern`: runs of consecutive elements at a fixed stride, or repeats of 8 blocks at fixed block and
    repeat strides -- a strided operand with a continuous mask, the common case), else None. The view has shape
    ``a.shape[:-1]`` + the pattern's shape; read it as ``view.reshape(a.shape[:-1] + index.shape)``. Only arrays
    with a leading axis of several rows (a lockstep group's cores) are tried: there numpy's fancy indexing is
    about 20x slower than the view. ``write``: only runs that do not overlap."""
    if a.ndim < 2 or a.shape[0] < 2 or index.size < 2:
        return None
    key = (index.tobytes(), a.itemsize)
    if key not in _PATTERNS:
        if len(_PATTERNS) > 4096:
            _PATTERNS.clear()
        _PATTERNS[key] = _pattern(index.reshape(-1).astype(np.int64, copy=False), 32 // a.itemsize)
    found = _PATTERNS[key]
    if found is None:
        return None
    start, shape, steps = found
    if write and (len(shape) != 2 or steps[0] < shape[1]):
        return None
    if start < 0 or start + sum((n - 1) * st for n, st in zip(shape, steps)) >= a.shape[-1]:
        return None
    runs, stride = shape[0], steps[0]
    if len(shape) == 2 and stride >= shape[1] and start + runs * stride <= a.shape[-1]:  # a plain view
        return a[..., start:start + runs * stride].reshape(a.shape[:-1] + (runs, stride))[..., :shape[1]]
    item = a.strides[-1]
    return np.lib.stride_tricks.as_strided(a[..., start:], a.shape[:-1] + shape,
                                           a.strides[:-1] + tuple(st * item for st in steps), writeable=write)
