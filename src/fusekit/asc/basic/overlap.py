"""The address-overlap rules of the vector instructions, in one place for every family.

AD-API 通用说明和约束.md, 通用地址重叠约束:

- count form: a source overlaps the destination completely (same start and length) or not at all
  (:func:`whole_or_none`);
- split forms, within one repeat (单次迭代内): a source's bytes and the destination's are the same set
  or disjoint (:func:`within_repeat`);
- split forms, across repeats (多次迭代间): no repeat reads a byte an earlier repeat wrote; a later
  repeat may overwrite what an earlier one read (:func:`late_reads` finds such reads,
  :func:`across_repeats` refuses them). Families with a documented exception (``Spec.in_place_src1``
  in :mod:`.execute`) or their own wording (:mod:`.vec_reduce`) call :func:`late_reads` and decide.

Instructions whose pages forbid any shared byte (Gather, Scatter, Brcb) use :func:`disjoint`.

The split-form rules work on flat UB byte addresses, each paired with the repeat that writes or reads
it (:func:`lane_bytes`), so a bit mask, a 5HD address list or a reduction's outputs fit as well as a
lane grid. Repeats are below 256 (``repeat_times`` is a uint8), which the byte keys rely on.
"""

from __future__ import annotations

import numpy as np

_RULE = "通用说明和约束.md, 通用地址重叠约束"


def intersects(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether the half-open byte ranges ``a`` and ``b`` share a byte."""
    return a[0] < b[1] and b[0] < a[1]


def whole_or_none(core, op: str, src_label: str, src_span: tuple[int, int], dst_label: str,
                  dst_span: tuple[int, int], tensor: str) -> None:
    """Count form: ``src_span`` and ``dst_span`` (UB byte ranges) are equal or disjoint.

    Raises:
        KernelError: kind ``partial-overlap``, naming the operands as ``src_label`` / ``dst_label``.
    """
    if intersects(src_span, dst_span) and src_span != dst_span:
        (s0, s1), (d0, d1) = src_span, dst_span
        raise core.error(op, f"{src_label} (UB [{s0}, {s1})) partially overlaps {dst_label} (UB [{d0}, {d1})): "
                             f"operands may overlap only completely ({_RULE})", tensor=tensor, kind="partial-overlap")


def lane_bytes(tensor, grid: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(UB byte addresses, repeat of each) of the active lanes of ``grid`` [repeats, lanes] of ``tensor``."""
    size = tensor.dtype.sizeof()
    rows = np.broadcast_to(np.arange(grid.shape[0])[:, None], grid.shape)[active]
    addr = tensor.addr + grid[active][:, None] * size + np.arange(size)
    return addr.ravel(), np.repeat(rows, size)


def _flat(*arrays) -> list[np.ndarray]:
    return [np.asarray(a, np.int64).ravel() for a in arrays]


def within_repeat(core, op: str, dst_name: str, d_addr, d_rep, role: str, src_name: str, s_addr, s_rep,
                  exact_ok: bool) -> None:
    """单次迭代内: in each repeat the source's bytes and the destination's are the same set or disjoint
    (``exact_ok`` False: never shared at all, e.g. a bit mask and the elements it describes).

    Raises:
        KernelError: kind ``partial-overlap`` for the first repeat that breaks the rule.
    """
    d_addr, d_rep, s_addr, s_rep = _flat(d_addr, d_rep, s_addr, s_rep)
    if not d_addr.size or not s_addr.size or d_addr.max() < s_addr.min() or s_addr.max() < d_addr.min():
        return
    d_keys, s_keys = np.unique(d_addr * 256 + d_rep), np.unique(s_addr * 256 + s_rep)
    common = np.intersect1d(d_keys, s_keys, assume_unique=True)
    if not common.size:
        return
    shared = np.unique(common % 256)  # repeats in which the two share bytes
    bad = shared
    if exact_ok:  # allowed only where the repeat's byte sets are equal
        c = np.bincount(common % 256, minlength=256)[shared]
        full = (c == np.bincount(d_keys % 256, minlength=256)[shared]) & \
            (c == np.bincount(s_keys % 256, minlength=256)[shared])
        bad = shared[~full]
    if bad.size:
        how = "partially overlaps" if exact_ok else "overlaps"
        raise core.error(op, f"in repeat {int(bad[0])}, {role} {src_name} {how} the destination {dst_name}: within one "
                             f"repeat the operands must overlap 100% or not at all ({_RULE}: 单次迭代内)"
                             + ("" if exact_ok else "; a bit mask never has its source's bytes"),
                         tensor=dst_name, kind="partial-overlap")


def late_reads(d_addr, d_rep, s_addr, s_rep) -> np.ndarray:
    """多次迭代间: indices into ``s_addr`` of the reads of a byte that an earlier repeat wrote."""
    d_addr, d_rep, s_addr, s_rep = _flat(d_addr, d_rep, s_addr, s_rep)
    if not d_addr.size or not s_addr.size:
        return np.zeros(0, np.int64)
    order = np.argsort(d_addr, kind="stable")
    addresses, starts = np.unique(d_addr[order], return_index=True)
    first_write = np.minimum.reduceat(d_rep[order], starts)
    pos = np.minimum(np.searchsorted(addresses, s_addr), addresses.size - 1)
    hit = np.flatnonzero(addresses[pos] == s_addr)
    return hit[first_write[pos[hit]] < s_rep[hit]]


def late_read_error(core, op: str, dst_name: str, role: str, src_name: str, at: "tuple[int, int] | None" = None):
    """The KernelError of a repeat reading what an earlier repeat wrote; ``at``: (repeat, UB byte), if known."""
    who = "a repeat" if at is None else f"repeat {at[0]}"
    where = "" if at is None else f" (UB byte {at[1]})"
    return core.error(op, f"{who} reads {role} {src_name} bytes{where} that an earlier repeat wrote to the destination "
                          f"{dst_name}: the NPU may overwrite a source before it is read ({_RULE}: 多次迭代间); change "
                          "the strides or use separate buffers", tensor=dst_name, kind="partial-overlap")


def across_repeats(core, op: str, dst_name: str, d_addr, d_rep, role: str, src_name: str, s_addr, s_rep) -> None:
    """多次迭代间, without exception: no repeat reads a byte an earlier repeat wrote.

    Raises:
        KernelError: kind ``partial-overlap``, naming the first such read's repeat and byte.
    """
    s_addr, s_rep = _flat(s_addr, s_rep)
    late = late_reads(d_addr, d_rep, s_addr, s_rep)
    if late.size:
        raise late_read_error(core, op, dst_name, role, src_name, (int(s_rep[late[0]]), int(s_addr[late[0]])))


def repeats(core, op: str, dst_name: str, d_addr, d_rep, role: str, src_name: str, s_addr, s_rep,
            exact_ok: bool) -> None:
    """Both split-form rules: :func:`within_repeat`, then :func:`across_repeats` (no exception)."""
    d_addr, d_rep, s_addr, s_rep = _flat(d_addr, d_rep, s_addr, s_rep)
    if not d_addr.size or not s_addr.size or d_addr.max() < s_addr.min() or s_addr.max() < d_addr.min():
        return
    within_repeat(core, op, dst_name, d_addr, d_rep, role, src_name, s_addr, s_rep, exact_ok)
    across_repeats(core, op, dst_name, d_addr, d_rep, role, src_name, s_addr, s_rep)


def disjoint(core, op: str, dst, writes, reads_by_name: dict, page: str) -> None:
    """The destination shares no byte with what the instruction reads (``page``: 不支持源操作数与目的操作数使用同一块内存地址).

    ``writes``: the destination's UB byte ranges; ``reads_by_name``: source name -> its byte ranges.

    Raises:
        KernelError: kind ``partial-overlap`` for the first shared range.
    """
    for name, ranges in reads_by_name.items():
        for w0, w1 in writes:
            for r0, r1 in ranges:
                if intersects((w0, w1), (r0, r1)):
                    raise core.error(op, f"the destination {dst.name} (UB [{w0}, {w1})) overlaps {name} (UB [{r0}, {r1})): "
                                         f"{page} forbids a destination that shares memory with a source; use separate "
                                         "buffers", tensor=dst.name, kind="partial-overlap")
