"""trans_data_to_5hd (issue 9 item 5) against a model written here from TransDataTo5HD.md and
asc_transto5hd.md (单次repeat内转换规则): per repeat, 16 source DataBlocks S[0..15] and 16 destination
DataBlocks D[0..15]; 16-bit: D[k][j] = S[j][k]; 32-bit: D[2k][j] = S[j][k], D[2k+1][j] = S[8+j][k];
8-bit: D[k][16*hd + j] = S[j][16*hs + k]. Repeat r moves every address by r * rep_stride blocks,
except that a single repeat already starts one rep_stride further (表3 repeatTimes 注).
Also get_sort_len / get_sort_offset (kernel_operator_proposal_intf_impl.h with T = float, as pyasc emits).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from vector_harness import run

NP = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "float16": np.float16,
      "int32": np.int32, "uint32": np.uint32, "float32": np.float32}


def model(ub: np.ndarray, dst_blocks, src_blocks, size, repeat, d_stride, s_stride, hd=0, hs=0) -> np.ndarray:
    """Apply the documented conversion on a byte array ``ub``; block lists in 32 B units. Element loops
    on purpose: an independent, literal reading of the page."""
    ub = ub.copy()
    for r in range(repeat):
        step = 1 if repeat == 1 else r
        src = [(b + step * s_stride) * 32 for b in src_blocks]
        dst = [(b + step * d_stride) * 32 for b in dst_blocks]
        S = [ub[a:a + 32].copy() for a in src]
        for k in range(16 if size != 4 else 8):
            for j in range(16 if size != 4 else 8):
                if size == 1:
                    ub[dst[k] + 16 * hd + j] = S[j][16 * hs + k]
                elif size == 2:
                    ub[dst[k] + 2 * j:dst[k] + 2 * j + 2] = S[j][2 * k:2 * k + 2]
                else:
                    ub[dst[2 * k] + 4 * j:dst[2 * k] + 4 * j + 4] = S[j][4 * k:4 * k + 4]
                    ub[dst[2 * k + 1] + 4 * j:dst[2 * k + 1] + 4 * j + 4] = S[8 + j][4 * k:4 * k + 4]
    return ub


def _data(dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        return rng.standard_normal(n).astype(NP[dtype])
    info = np.iinfo(NP[dtype])
    return rng.integers(info.min, info.max, n, endpoint=True).astype(NP[dtype])


@pytest.mark.parametrize("dtype", sorted(NP))
@pytest.mark.parametrize("repeat,d_stride,s_stride", [(1, 0, 0), (1, 2, 1), (3, 16, 1), (0, 16, 1), (2, 0, 0)])
def test_tensor_list_form(dtype, repeat, d_stride, s_stride):
    size = np.dtype(NP[dtype]).itemsize
    per = 32 // size
    # src blocks scattered (block 3k), dst blocks in reverse order, room for the repeats
    src_blocks = [3 * k for k in range(16)]
    dst_blocks = [2 * (15 - k) for k in range(16)]
    span = max(repeat, 2)
    src = _data(dtype, (48 + span * s_stride + 2) * per)
    dst = _data(dtype, (32 + span * d_stride + 2) * per, seed=1)
    params = asc.TransDataTo5HDParams(False, False, repeat, d_stride, s_stride)
    out, (i,) = run(lambda d, s, _: asc.trans_data_to_5hd([d[b * per] for b in dst_blocks],
                                                         [s[b * per] for b in src_blocks], params), dst, src)
    ub_src, ub_dst = src.view(np.uint8), dst.view(np.uint8)
    # the model on one array: dst bytes then src bytes (disjoint)
    both = np.concatenate([ub_dst, ub_src])
    off = ub_dst.size // 32
    want = model(both, dst_blocks, [b + off for b in src_blocks], size, repeat, d_stride, s_stride)
    np.testing.assert_array_equal(out.view(np.uint8), want[:ub_dst.size])
    assert (i.op, i.cost, i.repeats) == ("trans_data_to_5hd", "TransDataTo5HD", repeat)
    assert bool(i.writes) == bool(repeat)


@pytest.mark.parametrize("hd,hs", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_8bit_halves(dtype, hd, hs):
    src = _data(dtype, 16 * 32 * 2)
    dst = _data(dtype, 16 * 32 * 2, seed=3)
    params = asc.TransDataTo5HDParams(bool(hd), bool(hs), 2, 16, 16)
    out, (i,) = run(lambda d, s, _: asc.trans_data_to_5hd([d[32 * k] for k in range(16)],
                                                         [s[32 * k] for k in range(16)], params), dst, src)
    both = np.concatenate([dst.view(np.uint8), src.view(np.uint8)])
    want = model(both, list(range(16)), [32 + k for k in range(16)], 1, 2, 16, 16, hd, hs)
    np.testing.assert_array_equal(out.view(np.uint8), want[:dst.size])
    # an 8-bit repeat writes half of each block: the Trace records 16 B ranges, not whole blocks
    assert sum(a.nbytes for a in i.writes) == 2 * 16 * 16


def test_nchw_to_nc1hwc0_in_place_and_ordering():
    """The page's NCHW -> NC1HWC0 recipe (c = 16, h * w = 64 half): src list = HW planes, dst list =
    consecutive blocks, repeat h*w/16 with src stride 1 and dst stride 16."""
    c, hw = 16, 64
    x = np.arange(c * hw).astype(np.float16)
    params = asc.TransDataTo5HDParams(False, False, hw // 16, 16, 1)
    out, _ = run(lambda d, s, _: asc.trans_data_to_5hd([d[16 * k] for k in range(16)],
                                                      [s[hw * k] for k in range(16)], params),
                 np.zeros(c * hw, np.float16), x)
    np.testing.assert_array_equal(out.reshape(hw, c), x.reshape(c, hw).T)
    # in place (dst list == src list), as asc-devkit's softmax broadcast uses it: the 16 x 16 transpose
    y = np.arange(256).astype(np.int16)
    out, _ = run(lambda d, s, _: (asc.trans_data_to_5hd([d[16 * k] for k in range(16)], [d[16 * k] for k in range(16)],
                                                        asc.TransDataTo5HDParams(False, False, 1, 0, 0))),
                 y, y[:16])
    np.testing.assert_array_equal(out.reshape(16, 16), y.reshape(16, 16).T)


@pytest.mark.parametrize("form", ["addr_list", "addr_tensor"])
def test_address_forms(form):
    x = np.arange(256).astype(np.float32)

    def body(d, s, a):
        params = asc.TransDataTo5HDParams(False, False, 1, 0, 0)
        dsts = [d[8 * k].get_phy_addr() for k in range(16)]
        srcs = [s[8 * k].get_phy_addr() for k in range(16)]
        if form == "addr_list":
            asc.trans_data_to_5hd(dsts, srcs, params)
            return
        for k in range(16):
            a.set_value(k, dsts[k])
            a.set_value(16 + k, srcs[k])
        asc.trans_data_to_5hd(a, a[16], params)

    out, instrs = run(body, np.zeros(256, np.float32), x, np.zeros(32, np.uint64))
    S = x[:128].reshape(16, 8)
    want = x.copy() * 0
    for k in range(8):
        want[16 * k:16 * k + 8] = S[:8, k]
        want[16 * k + 8:16 * k + 16] = S[8:, k]
    np.testing.assert_array_equal(out[:128], want[:128])
    (t,) = [i for i in instrs if i.op == "trans_data_to_5hd"]
    if form == "addr_tensor":  # vld_va_reg: the two 128 B address lists are read by the instruction
        assert sum(a.nbytes for a in t.reads) == 2 * 128 + 16 * 32


def _err(body, match, dtype=np.float16, n=512):
    with pytest.raises(asc.KernelError, match=match):
        run(body, np.zeros(n, dtype), np.zeros(n, dtype), np.zeros(32, np.uint64))


def test_rules():
    p = asc.TransDataTo5HDParams
    lst = lambda t, per=16: [t[per * k] for k in range(16)]  # noqa: E731
    _err(lambda d, s, _: asc.trans_data_to_5hd(lst(d), lst(s), p(True, False, 1, 0, 0)), "int8 / uint8 only")
    _err(lambda d, s, _: asc.trans_data_to_5hd(lst(d), lst(s), p(False, False, 256, 0, 0)), r"repeat_times .*\[0, 255\]")
    _err(lambda d, s, _: asc.trans_data_to_5hd(lst(d)[:15], lst(s), p()), "16 entries")
    _err(lambda d, s, _: asc.trans_data_to_5hd(lst(d, 8), lst(s), p(False, False, 1, 0, 0)), "not 32 B aligned")
    # repeat 2 with a dst stride of 16 blocks: the last block of repeat 1 lies past dst's 512 elements
    _err(lambda d, s, _: asc.trans_data_to_5hd(lst(d), lst(s), p(False, False, 3, 16, 0)), "past the tensor's end")
    _err(lambda d, s, a: asc.trans_data_to_5hd([1024 + 32 * k for k in range(16)], [32 * k for k in range(16)], p()),
         "element type")
    _err(lambda d, s, a: asc.trans_data_to_5hd(d, s, p()), "uint64")
    with pytest.raises(asc.KernelError, match="does not take int64"):
        run(lambda d, s, _: asc.trans_data_to_5hd(lst(d, 4), lst(s, 4), p()), np.zeros(64, np.int64),
            np.zeros(64, np.int64))


def test_coverage_names():
    assert {"trans_data_to_5hd", "TransDataTo5HDParams", "get_sort_len", "get_sort_offset"} <= set(dir(asc))


@pytest.mark.parametrize("soc,per", [("Ascend910B1", 2), ("Ascend310P3", 8)])
def test_sort_len_offset(soc, per):
    got = {}

    def body(d, s, _):
        got["len"] = asc.get_sort_len(100)
        got["off"] = asc.get_sort_offset(10)
        got["wrap"] = asc.get_sort_len(0xFFFFFFFF)

    run(body, np.zeros(16, np.float32), np.zeros(16, np.float32), soc=soc)
    assert got["len"] == 100 * per and got["off"] == 10 * per          # floatSortedDataSize / regionProposalDataSize
    assert got["wrap"] == (0xFFFFFFFF * per) % 2 ** 32                 # uint32 arithmetic
    with pytest.raises(asc.KernelError, match="uint32"):
        run(lambda d, s, _: asc.get_sort_len(-1), np.zeros(16, np.float32), np.zeros(16, np.float32))


def test_overlap_rules():
    p = asc.TransDataTo5HDParams
    # half the src blocks are dst blocks of the same repeat: a partial overlap (通用地址重叠约束: 单次迭代内)
    _err(lambda d, s, _: asc.trans_data_to_5hd([s[16 * k] for k in range(16)], [s[16 * (k + 8)] for k in range(16)],
                                               p(False, False, 1, 0, 0)), "partially overlaps")
    # repeat 0 writes the blocks repeat 1 reads (多次迭代间)
    _err(lambda d, s, _: asc.trans_data_to_5hd([s[256 + 16 * k] for k in range(16)], [s[16 * k] for k in range(16)],
                                               p(False, False, 2, 16, 16)), "repeat 1 reads")
    # 8-bit in place with different halves: the bytes read and written are disjoint, so it is allowed
    x = np.arange(512).astype(np.uint8)
    out, _ = run(lambda d, s, _: asc.trans_data_to_5hd([d[32 * k] for k in range(16)], [d[32 * k] for k in range(16)],
                                                      p(True, False, 1, 0, 0)), x, x[:32])
    want = model(x.copy(), list(range(16)), list(range(16)), 1, 1, 0, 0, hd=1, hs=0)
    np.testing.assert_array_equal(out, want)
