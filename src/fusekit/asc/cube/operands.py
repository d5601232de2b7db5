"""What every cube instruction does with its operands: check where a tensor lives, bound an access given as element
offsets (``fusekit.asc.cube.layout``), name the bytes it touches for the Trace, and read or write those elements
when the effect lands.

A tensor is taken as it is when the instruction is issued (``datamove.as_issued``): an executor that holds the
effect back (race replay) lands it where it was issued to.
"""

from __future__ import annotations

import numpy as np

from ..basic.lanes import merged_ranges
from ..datamove import as_issued
from ..lockstep.values import LaneInt
from ..tensor import GlobalTensor, LocalTensor, check_ub_aligned


def expect_space(core, op: str, what: str, tensor, spaces: tuple[str, ...], positions: str) -> None:
    """``tensor`` is a local tensor of this core in one of ``spaces`` (or GM, when "GM" is one), aligned to its
    space's boundary.

    Raises:
        KernelError: another kind of argument, another memory (the message names the positions that fit and, on
            an AIV core, the kernel type that runs on the AIC), or a misaligned address.
    """
    if isinstance(tensor, GlobalTensor) and "GM" in spaces:
        return
    space = getattr(tensor, "space", None)
    if not isinstance(tensor, (LocalTensor, GlobalTensor)) or space.name not in spaces:
        got = f"{space.name} ({tensor.name})" if space is not None else type(tensor).__name__
        hint = "" if core.kind.name == "AIC" else ("; the cube instructions run on the AIC: declare the kernel "
                                                   "@asc.jit(kernel_type=config.KernelType.AIC_ONLY)")
        raise core.error(op, f"{what} must be in {positions}, got {got}{hint}", tensor=getattr(tensor, "name", ""))
    check_ub_aligned(core, op, tensor)


def bounded(core, op: str, tensor, offsets: np.ndarray, hint: str = "") -> None:
    """Every element offset (from ``tensor``'s first element) lies inside ``tensor``.

    Raises:
        KernelError (out-of-bounds): naming the tensor, the elements reached and ``hint``.
    """
    if offsets.size:
        tensor.span(core, op, int(offsets.max()) + 1, hint=hint)


def accesses(tensor, offsets: np.ndarray) -> tuple:
    """The Trace accesses of ``tensor``'s elements at ``offsets``, adjacent bytes merged."""
    if not offsets.size:
        return ()
    size = tensor.dtype.sizeof()
    base = tensor.addr if isinstance(tensor, LocalTensor) else tensor.offset * size
    runs = _runs(offsets, size)
    if isinstance(base, LaneInt):  # a lockstep group's GM offsets: plain byte offsets per core, as the reference's
        lanes = base.v
        return tuple(tensor.access(LaneInt(tuple(v + a for v in lanes)), LaneInt(tuple(v + z for v in lanes)))
                     for a, z in runs)
    return tuple(tensor.access(base + a, base + z) for a, z in runs)


_MEMO: dict[tuple, tuple] = {}  # (what, id of a read-only offsets array, key) -> (the array, the value)


def _remembered(what: str, offsets: np.ndarray, key, compute):
    """``compute()`` for ``offsets``, remembered when the array is read-only (``fusekit.asc.cube.layout``'s cached
    arrays, which the same shapes ask for again); ``key``: the other arguments the value depends on."""
    slot = (what, id(offsets), key)
    hit = _MEMO.get(slot)
    if hit is not None and hit[0] is offsets:
        return hit[1]
    value = compute()
    if not offsets.flags.writeable:
        if len(_MEMO) > 2048:
            _MEMO.clear()
        _MEMO[slot] = (offsets, value)
    return value


def _runs(offsets: np.ndarray, size: int) -> tuple:
    """Byte ranges of the elements at ``offsets`` from byte 0, adjacent ones merged (remembered)."""
    # sorted first: a fractal layout's offsets are runs out of order, and merged_ranges sorts an unsorted index
    # through np.unique, several times slower than a sort
    return _remembered("runs", offsets, size, lambda: merged_ranges(np.sort(offsets, axis=None), size, 0))


def repeated(offsets: np.ndarray) -> bool:
    """Whether an element offset occurs twice (an instruction writing one element twice, in no guaranteed order)."""
    ordered = np.sort(offsets, axis=None)
    return bool(ordered.size > 1 and (ordered[1:] == ordered[:-1]).any())


_MAX_AXES = 12  # a layout needing more axes than this is read by fancy indexing


def strided(offsets: np.ndarray) -> "tuple | None":
    """``(first, shape, strides)`` in elements such that the strided view of ``shape`` / ``strides`` from element
    ``first`` holds, in C order, the elements at ``offsets`` (raveled), or None where no such view exists (a
    repeated offset, an irregular layout). The fractal layouts of ``fusekit.asc.cube.layout`` are all such views
    (rows of C0 elements, fractals a fixed stride apart): one strided copy moves them, several times faster than
    a gather by index. Found axis by axis from the innermost: the longest run of one step, then the run's first
    elements as the next axis; remembered for the read-only cached arrays."""
    return _remembered("strided", offsets, None, lambda: _decompose(offsets.ravel()))


def _decompose(flat: np.ndarray) -> "tuple | None":
    axes, heads = [], flat
    while heads.size > 1:
        step = int(heads[1] - heads[0])
        breaks = np.flatnonzero(np.diff(heads) != step)
        run = int(breaks[0]) + 1 if breaks.size else heads.size
        if step == 0 or heads.size % run or len(axes) == _MAX_AXES:
            return None
        block = heads.reshape(-1, run)
        if not ((block - block[:, :1]) == np.arange(run, dtype=block.dtype) * step).all():
            return None
        axes.append((run, step))
        heads = block[:, 0]
    if not flat.size:
        return None
    return int(flat[0]), tuple(r for r, _ in reversed(axes)), tuple(s for _, s in reversed(axes))


def _view(array: np.ndarray, form: tuple) -> np.ndarray:
    """The strided view ``form`` (:func:`strided`) of the last axis of ``array``, leading axes kept."""
    first, shape, steps = form
    size = array.strides[-1]
    base = array[..., first:]
    return np.lib.stride_tricks.as_strided(base, array.shape[:-1] + shape,
                                           array.strides[:-1] + tuple(s * size for s in steps), writeable=True)


class Elements:
    """Elements of one operand at given offsets, read or written when the effect lands. The offsets index the last
    axis: a lockstep group's tensors have a leading core axis (``fusekit.asc.lockstep.memory``), read as one more
    leading axis of the result. A layout that is a strided view (:func:`strided`) moves as one."""

    __slots__ = ("tensor", "offsets", "count", "form")

    def __init__(self, tensor, offsets: np.ndarray):
        self.tensor, self.offsets = as_issued(tensor), offsets
        self.count = int(offsets.max()) + 1 if offsets.size else 0
        self.form = strided(offsets) if offsets.size > 1 else None

    def read(self) -> np.ndarray:
        array = self.tensor.array(self.count)
        if self.form is None:
            return array[..., self.offsets]
        view = _view(array, self.form)
        return view.reshape(array.shape[:-1] + self.offsets.shape)

    def write(self, values: np.ndarray) -> None:
        array = self.tensor.array(self.count)
        shape = self.offsets.shape
        values = np.asarray(values)
        if self.form is None or values.shape[values.ndim - len(shape):] != shape:
            array[..., self.offsets] = values
            return
        view = _view(array, self.form)
        view[...] = values.reshape(values.shape[:values.ndim - len(shape)] + self.form[1])
