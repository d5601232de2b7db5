"""TransDataTo5HD: 16 DataBlocks in, 16 DataBlocks out, transposed (pyasc basic/vec_transpose.py
``trans_data_to_5hd``; AD-API Memory矢量计算/数据排布转换/TransDataTo5HD.md, C-API asc_transto5hd.md).

Forms (pyasc's three overloads): ``trans_data_to_5hd(dst_list, src_list, params)`` with two lists of 16
LocalTensors (each one DataBlock start), or two lists of 16 UB byte addresses (``t.get_phy_addr()``),
or ``trans_data_to_5hd(dst, src, params)`` with two uint64 LocalTensors holding the 16 addresses
(the instruction loads them with ``vld_va_reg``, so their 128 B are read on PIPE_V).

One repeat (功能说明 / asc_transto5hd.md 单次repeat内转换规则), with ``S[j]`` the DataBlock at src
address ``j`` and ``D[k]`` the one at dst address ``k``:
- 16-bit: ``D[k][j] = S[j][k]`` (a 16 x 16 transpose);
- 32-bit: 8 rounds ``k``, each making 2 DataBlocks: ``D[2k][j] = S[j][k]``, ``D[2k+1][j] = S[8+j][k]``
  (j < 8). The pair layout is the one asc-devkit's own callers rely on (confusion_transpose_base_impl.h
  fills ``dstList[2m]`` / ``dstList[2m+1]`` with a row and the row + 8 elements);
- 8-bit: 16 rounds ``k``, each making half a DataBlock: ``D[k][16*hd + j] = S[j][16*hs + k]``
  (j < 16), hd / hs = ``dst_high_half`` / ``src_high_half``; the other half of ``D[k]`` is untouched.
Repeats: every address moves by ``rep_stride`` DataBlocks per repeat; **with repeat_times == 1 the
single repeat already starts at address + rep_stride** (表3 repeatTimes 注). Overlaps (约束说明 ->
通用地址重叠约束): in one repeat the bytes read and written are the same set (in-place lists, as
asc-devkit's softmax / pad use them) or disjoint; no repeat reads what an earlier one wrote. A repeat
reads all its sources before it writes.

Rules enforced: dtypes of the 数据类型 section (int8, uint8, int16, uint16, half, int32, uint32, float
on Atlas A2/A3 and the inference AI Core); ``dst_high_half`` / ``src_high_half`` only for 8-bit types
(表3; asc-devkit CheckTransDataTo5HDParams); repeat_times in [0, 255] (0 = NOP), strides uint16; every
address 32 B aligned (参数说明) and every block inside UB. Element type of the address forms: as
pyasc's code generator infers it (lib/Target/AscendC/Basic/DataConversion.cpp), from the LocalTensor
whose ``get_phy_addr`` produced the addresses.
"""

from __future__ import annotations

import numpy as np

from fusekit.machine import space_named

from ..runtime import current
from ..tensor import LocalTensor
from ..trace import Access, Pipe
from . import overlap
from .spec import Spec, export, register, same_on_all

_PAGE = "AD-API Memory矢量计算/数据排布转换/TransDataTo5HD.md"
_LIST = 16           # NCHW_CONV_ADDR_LIST_SIZE
_BLOCK = 32          # bytes of a DataBlock
SPEC = register(Spec("trans_data_to_5hd", "TransDataTo5HD", "vec_5hd",
                     same_on_all({"int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32"}),
                     arithmetic=False, source=_PAGE,
                     doc="16 DataBlocks transposed into 16 DataBlocks (NCHW -> NC1HWC0)"))


class TransDataTo5HDParams:
    """pyasc ``asc.TransDataTo5HDParams(dst_high_half=False, src_high_half=False, repeat_times=1,
    dst_rep_stride=0, src_rep_stride=0)`` (core/types.py; fields typed bool, bool, uint8, uint16, uint16;
    strides in DataBlocks of 32 B; TransDataTo5HD.md 表3)."""

    def __init__(self, dst_high_half: bool = False, src_high_half: bool = False, repeat_times: int = 1,
                 dst_rep_stride: int = 0, src_rep_stride: int = 0):
        self.dst_high_half, self.src_high_half = dst_high_half, src_high_half
        self.repeat_times, self.dst_rep_stride, self.src_rep_stride = repeat_times, dst_rep_stride, src_rep_stride

    def __repr__(self) -> str:
        return (f"asc.TransDataTo5HDParams(dst_high_half={self.dst_high_half}, src_high_half={self.src_high_half}, "
                f"repeat_times={self.repeat_times}, dst_rep_stride={self.dst_rep_stride}, "
                f"src_rep_stride={self.src_rep_stride})")


export(TransDataTo5HDParams)


def _field(core, op: str, params, name: str, top: int) -> int:
    value = getattr(params, name)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
        raise core.error(op, f"TransDataTo5HDParams.{name} must be an integer in [0, {top}] ({_PAGE} 表3), got {value!r}")
    return int(value)


def _flag(core, op: str, params, name: str) -> bool:
    value = getattr(params, name)
    if not isinstance(value, (bool, np.bool_, int)) or value not in (0, 1):
        raise core.error(op, f"TransDataTo5HDParams.{name} must be a bool, got {value!r}")
    return bool(value)


def _dtype_of_addresses(core, op: str, addrs: list[int], what: str):
    """The element type pyasc's compiler gives an address list: that of the tensor get_phy_addr was called on."""
    seen = core.phy_addr_dtypes
    for a in addrs:
        if a in seen:
            return seen[a]
    raise core.error(op, f"cannot tell the element type of the {what} addresses: pyasc infers it from the LocalTensor "
                         "whose get_phy_addr() produced them (DataConversion.cpp); build the lists with "
                         "t[offset].get_phy_addr(), or pass lists of LocalTensors")


def _addresses(core, op: str, dst_or_list, src_or_list):
    """(dst addresses, src addresses, dtype, names of dst blocks, names of src blocks, extra reads)."""
    if isinstance(dst_or_list, LocalTensor) and isinstance(src_or_list, LocalTensor):
        reads = []
        lists = []
        for t, what in ((dst_or_list, "dst"), (src_or_list, "src")):
            if t.dtype.name != "uint64":
                raise core.error(op, f"the LocalTensor form takes uint64 tensors of 16 UB addresses; {what} {t.name} is "
                                     f"{t.dtype.name} (pyasc check_type_5hd)", tensor=t.name, kind="unsupported")
            if t.addr % _BLOCK:
                raise core.error(op, f"{what} address tensor {t.name} starts at UB byte {t.addr}, not 32 B aligned "
                                     f"({_PAGE} 参数说明)", tensor=t.name, kind="misaligned")
            lo, hi = t.span(core, op, _LIST, hint="the address tensor holds 16 uint64 addresses")
            reads.append(t.access(lo, hi))
            lists.append([int(a) for a in core.ub[lo:hi].view(np.uint64)])
        dtype = _dtype_of_addresses(core, op, lists[0] + lists[1], "dst / src")
        return lists[0], lists[1], dtype, None, None, tuple(reads)
    if not isinstance(dst_or_list, (list, tuple)) or not isinstance(src_or_list, (list, tuple)):
        raise core.error(op, "asc.trans_data_to_5hd takes (dst_list, src_list, params) with lists of 16 LocalTensors or "
                             "of 16 UB addresses, or (dst, src, params) with uint64 LocalTensors holding the addresses; "
                             f"got {type(dst_or_list).__name__}, {type(src_or_list).__name__}")
    if len(dst_or_list) != _LIST or len(src_or_list) != _LIST:
        raise core.error(op, f"dst_list and src_list must each hold NCHW_CONV_ADDR_LIST_SIZE = 16 entries, got "
                             f"{len(dst_or_list)} and {len(src_or_list)} ({_PAGE} 参数说明)")
    items = list(dst_or_list) + list(src_or_list)
    if all(isinstance(t, LocalTensor) for t in items):
        dtype = items[0].dtype
        for t in items:
            if t.dtype is not dtype:
                raise core.error(op, f"all tensors of dst_list and src_list must share one dtype: {items[0].name} is "
                                     f"{dtype.name}, {t.name} is {t.dtype.name}", tensor=t.name)
        return ([t.addr for t in dst_or_list], [t.addr for t in src_or_list], dtype, list(dst_or_list),
                list(src_or_list), ())
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in items):
        addrs = [int(a) for a in items]
        return addrs[:_LIST], addrs[_LIST:], _dtype_of_addresses(core, op, addrs, "dst_list / src_list"), None, None, ()
    raise core.error(op, "dst_list and src_list must both be lists of LocalTensors or both lists of addresses "
                         "(get_phy_addr()), not a mix")


def _block_checks(core, op: str, addrs: np.ndarray, what: str, tensors) -> None:
    """Every DataBlock address 32 B aligned and the block inside UB (or inside its tensor, for the list form)."""
    bad = np.flatnonzero(addrs % _BLOCK)
    if bad.size:
        r, k = divmod(int(bad[0]), _LIST)
        raise core.error(op, f"{what}[{k}] (repeat {r}) is at UB byte {int(addrs.flat[bad[0]])}, not 32 B aligned "
                             f"({_PAGE} 参数说明: 起始地址需要32字节对齐)", kind="misaligned")
    top = addrs.max(initial=0) + _BLOCK
    if tensors is not None:
        ends = np.array([t.addr + t.length * t.dtype.sizeof() for t in tensors], dtype=np.int64)
        past = np.flatnonzero(addrs + _BLOCK > ends[None, :])
        if past.size:
            r, k = divmod(int(past[0]), _LIST)
            t = tensors[k]
            raise core.error(op, f"{what}[{k}] ({t.name}) at repeat {r} reads or writes the DataBlock at UB byte "
                                 f"{int(addrs.flat[past[0]])}, past the tensor's end (UB byte {int(ends[k])}); lower "
                                 "repeat_times or the rep stride, or allocate a larger buffer", kind="out-of-bounds",
                             tensor=t.name, mem="UB", buffer="UB", byte_range=(int(addrs.flat[past[0]]),
                                                                                int(addrs.flat[past[0]]) + _BLOCK))
    elif addrs.size and (addrs.min() < 0 or top > core.soc.ub_bytes):
        raise core.error(op, f"a {what} DataBlock ends at UB byte {int(top)}, past the {core.soc.ub_bytes} B of UB",
                         kind="out-of-bounds", mem="UB", buffer="UB", byte_range=(int(top) - _BLOCK, int(top)))


def _merged(starts: np.ndarray, width: int) -> list[tuple[int, int]]:
    """Sorted, merged byte ranges ``[s, s + width)``."""
    out: list[list[int]] = []
    for s in np.unique(starts):
        s = int(s)
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], s + width)
        else:
            out.append([s, s + width])
    return [(a, b) for a, b in out]


def _accesses(ranges, tensors) -> tuple[Access, ...]:
    """One UB Access per merged range, named after the list's tensor (or "UB" for raw addresses)."""
    name = "UB"
    if tensors is not None:
        names = {t.name.split("[")[0] for t in tensors}
        name = names.pop() if len(names) == 1 else ", ".join(sorted(names))
    ub = space_named("UB")  # the address lists hold UB byte addresses (module docstring: TransDataTo5HD.md)
    return tuple(Access(ub, ub.name, a, b, name) for a, b in ranges)


@export
def trans_data_to_5hd(dst_list=None, src_list=None, params=None, *, dst=None, src=None) -> None:
    """TransDataTo5HD on PIPE_V: ``repeat_times`` repeats, each 16 source DataBlocks transposed into
    16 destination DataBlocks (NCHW -> NC1HWC0; layouts in the module docstring).

    Args:
        dst_list, src_list: lists of 16 LocalTensors or of 16 UB byte addresses (``get_phy_addr()``);
        dst, src: or uint64 LocalTensors holding the 16 addresses each (pyasc's names for that form;
            positionally they take the first two places).
        params: ``asc.TransDataTo5HDParams`` (strides in 32 B DataBlocks).

    Raises:
        KernelError: a wrong form or list length, dtype (per SoC) or mixed dtypes, high_half on a
            16/32-bit type, a field out of range, an address not 32 B aligned, a block outside its
            tensor or the UB, an address list whose element type is unknown.
    """
    op = "trans_data_to_5hd"
    core = current(op)
    dst_or_list = dst_list if dst is None else dst
    src_or_list = src_list if src is None else src
    if dst_or_list is None or src_or_list is None:
        raise core.error(op, "trans_data_to_5hd needs dst_list and src_list (or dst and src)")
    if not isinstance(params, TransDataTo5HDParams):
        raise core.error(op, f"params must be an asc.TransDataTo5HDParams, got {type(params).__name__}")
    repeat = _field(core, op, params, "repeat_times", 255)
    d_stride, s_stride = _field(core, op, params, "dst_rep_stride", 65535), _field(core, op, params, "src_rep_stride", 65535)
    d_high, s_high = _flag(core, op, params, "dst_high_half"), _flag(core, op, params, "src_high_half")
    dst_addrs, src_addrs, dtype, dst_t, src_t, list_reads = _addresses(core, op, dst_or_list, src_or_list)
    if not SPEC.accepts(core.soc.arch, dtype.name):
        ok = ", ".join(sorted(SPEC.dtypes.get(core.soc.arch, ())))
        raise core.error(op, f"TransDataTo5HD does not take {dtype.name} on {core.soc.name} (supported: {ok}; {_PAGE} "
                             "数据类型)", kind="unsupported")
    size = dtype.sizeof()
    if size != 1 and (d_high or s_high):
        raise core.error(op, f"dst_high_half / src_high_half apply to int8 / uint8 only; {dtype.name} needs both False "
                             f"({_PAGE} 表3)")
    # repeat r starts rep_stride * (r, or 1 when there is a single repeat) blocks further (表3 repeatTimes 注)
    steps = np.arange(repeat, dtype=np.int64) + (1 if repeat == 1 else 0)
    d = np.asarray(dst_addrs, dtype=np.int64)[None, :] + steps[:, None] * d_stride * _BLOCK  # [repeat, 16]
    s = np.asarray(src_addrs, dtype=np.int64)[None, :] + steps[:, None] * s_stride * _BLOCK
    _block_checks(core, op, d, "dst_list", dst_t)
    _block_checks(core, op, s, "src_list", src_t)
    half = _BLOCK // 2
    s_read = s + (s_high * half if size == 1 else 0)   # an 8-bit repeat reads / writes one half of each block
    d_write = d + (d_high * half if size == 1 else 0)
    width = half if size == 1 else _BLOCK
    reads = list_reads + _accesses(_merged(s_read.ravel(), width), src_t)
    writes = _accesses(_merged(d_write.ravel(), width), dst_t)
    src_idx = s_read[:, :, None] + np.arange(width)  # [repeat, 16 blocks, bytes]
    dst_idx = d_write[:, :, None] + np.arange(width)
    rep = np.broadcast_to(np.arange(repeat)[:, None, None], src_idx.shape)
    overlap.repeats(core, op, "dst_list", dst_idx, rep, "src_list", "src_list", src_idx, rep, exact_ok=True)

    # a closure, not an Effect: it moves bytes between blocks named by address lists, transposing each repeat's blocks
    def effect():
        ub = core.ub
        for r in range(repeat):  # one repeat at a time: a later repeat may overwrite what an earlier one read
            blocks = ub[src_idx[r]]                                  # [16 src blocks, width bytes]
            if size == 1:
                out = blocks.T                                       # D[k][j] = S[j][hs*16 + k]
            elif size == 2:
                out = blocks.view(np.uint16).T.copy().view(np.uint8)  # D[k][j] = S[j][k]
            else:
                v = blocks.view(np.uint32)                           # [16, 8]
                out = np.stack([v[:8].T, v[8:].T], axis=1).reshape(16, 8).copy().view(np.uint8)
            ub[dst_idx[r]] = out

    core.record(op, Pipe.V, reads=reads if repeat else list_reads, writes=writes if repeat else (),
                count=repeat * _LIST * width // size, nbytes=repeat * _LIST * width, dtype=dtype.name,
                effect=effect if repeat else None, repeats=repeat, cost=SPEC.cpp)

