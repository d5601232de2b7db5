"""Compare / select gaps of issue 9 (item 4): the split forms' overlap rules and select's UB scratch.

- 通用地址重叠约束 (AD-API 通用说明和约束.md): within a repeat, source and destination bytes are the same
  set or disjoint (a bit-mask destination is never the same set as its source); across repeats, no
  repeat reads what an earlier repeat wrote, while a later repeat may overwrite what an earlier one read.
- Select.md 约束说明 (模式1和模式2 预留8KB) and asc-devkit dav_c220 kernel_operator_vec_cmpsel_impl.h
  (VselIntrinsicsImplPre / VselImpl): modes 1 and 2 Duplicate 32 elements (the scalar as T, or the
  selMask address as uint32) to UB TMP_UB_OFFSET (kernel_utils_constants.h: 184 KiB on A2/A3, 248 KiB
  on 310P) and set_cmpmask from there, so the CmpMask register then holds that value.
Expected values are computed here with numpy from those rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from vector_harness import run

BRP = asc.BinaryRepeatParams
LT = asc.CMPMODE.LT


def _bits(flags: np.ndarray) -> np.ndarray:
    """Compare.md: element i -> bit i % 8 of byte i // 8 (little-endian bit order)."""
    return np.packbits(flags.astype(np.uint8), bitorder="little")


def test_compare_later_repeat_may_overwrite_an_earlier_source():
    """2 half repeats; dst repeat 0 at s0 bytes [0, 16) (read by nobody), repeat 1 at byte 256 = the start
    of repeat 0's src0 (already read): legal, and every repeat sees the original values."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(512).astype(np.float16)
    b = rng.standard_normal(256).astype(np.float16)

    def body2(d, s0, s1):
        asc.compare(s0.reinterpret_cast(asc.uint8), s0[128:], s1, LT, 128, 2, BRP(1, 1, 1, 128, 8, 8))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.copy(d, s0, 128, 4, asc.CopyRepeatParams(1, 1, 8, 8))

    out, _ = run(body2, np.zeros(512, np.float16), a, b)
    raw = out.view(np.uint8)
    np.testing.assert_array_equal(raw[0:16], _bits(a[128:256] < b[:128]))
    np.testing.assert_array_equal(raw[256:272], _bits(a[256:384] < b[128:256]))


@pytest.mark.parametrize("dst_byte,rep,match", [
    (256, 8, "in repeat 0, src0 .* overlaps the destination"),           # repeat 0 writes into its own source
    (512, 200, "repeat 1 reads src0 .* that an earlier repeat wrote"),   # repeat 0 writes what repeat 1 reads
])
def test_compare_overlap_refused(dst_byte, rep, match):
    a = np.zeros(1024, np.float16)

    def body(d, s0, s1):
        asc.compare(s0[dst_byte // 2:].reinterpret_cast(asc.uint8), s0[128:], s1, LT, 128, 2, BRP(1, 1, 1, rep, 8, 8))

    with pytest.raises(asc.KernelError, match=match):
        run(body, np.zeros(16, np.float16), a, np.zeros(256, np.float16))


def test_compare_scalar_count_form_in_place_refused():
    with pytest.raises(asc.KernelError, match="overlaps the destination"):
        run(lambda d, s0, s1: asc.compare_scalar(s0.reinterpret_cast(asc.uint8), s0, 0.0, LT, 128),
            np.zeros(16, np.float16), np.zeros(128, np.float16))


def _sel_inputs():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(384).astype(np.float16)
    b = rng.standard_normal(256).astype(np.float16)
    flags = rng.integers(0, 2, 256).astype(bool)
    return a, b, flags


def test_select_split_later_repeat_over_earlier_source():
    """dst = s0[0:], src0 = s0[128:], 2 repeats: repeat 1 writes s0[128:256], which repeat 0 read: legal."""
    a, b, flags = _sel_inputs()
    sel = _bits(flags)

    def body(d, s0, s1):
        asc.select(s0, s1[256:].reinterpret_cast(asc.uint8), s0[128:], s1, asc.SelMode.VSEL_TENSOR_TENSOR_MODE,
                   128, 2, BRP())
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.copy(d, s0, 128, 2, asc.CopyRepeatParams(1, 1, 8, 8))

    s1 = np.concatenate([b, sel.view(np.float16)])
    out, _ = run(body, np.zeros(256, np.float16), a, s1)
    want = np.where(flags, a[128:384], b)  # mode 2: repeat r uses bits [128r, 128r + 128)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dst_off,src_off,match", [
    (128, 0, "repeat 1 reads src0 .* that an earlier repeat wrote"),   # dst runs one repeat ahead of src0
    (64, 0, "in repeat 0, src0 .* partially overlaps"),                # half a repeat apart
])
def test_select_split_overlap_refused(dst_off, src_off, match):
    a, b, flags = _sel_inputs()
    s1 = np.concatenate([b, _bits(flags).view(np.float16)])

    def body(d, s0, s1_):
        asc.select(s0[dst_off:], s1_[256:].reinterpret_cast(asc.uint8), s0[src_off:], s1_,
                   asc.SelMode.VSEL_TENSOR_TENSOR_MODE, 128, 2, BRP())

    with pytest.raises(asc.KernelError, match=match):
        run(body, np.zeros(16, np.float16), np.concatenate([a, np.zeros(128, np.float16)]), s1)


def test_select_split_in_place_allowed():
    a, b, flags = _sel_inputs()
    s1 = np.concatenate([b, _bits(flags).view(np.float16)])

    def body(d, s0, s1_):
        asc.select(s0, s1_[256:].reinterpret_cast(asc.uint8), s0, s1_, asc.SelMode.VSEL_TENSOR_TENSOR_MODE,
                   128, 2, BRP())
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.copy(d, s0, 128, 2, asc.CopyRepeatParams(1, 1, 8, 8))

    out, _ = run(body, np.zeros(256, np.float16), a, s1)
    np.testing.assert_array_equal(out, np.where(flags, a[:256], b))


def test_select_sel_mask_written_before_it_is_read_refused():
    """Mode 1, float (64 bits = 8 selMask bytes per repeat), selMask at block 1: repeats 0-3 consume block 1,
    repeat 4 block 2, which repeat 0 wrote (dst block stride 2 writes even blocks only)."""
    def body(d, s0, s1):
        asc.select(s0, s0[8:].reinterpret_cast(asc.uint8), s0[1024:], 1.0, asc.SelMode.VSEL_TENSOR_SCALAR_MODE,
                   64, 5, BRP(2, 1, 1, 16, 8, 8))

    with pytest.raises(asc.KernelError, match="repeat 4 reads sel_mask"):
        run(body, np.zeros(16, np.float32), np.zeros(1344, np.float32))


# ---------------------------------------------------------------- the UB scratch of modes 1 and 2

@pytest.mark.parametrize("soc,base", [("Ascend910B1", 184 * 1024), ("Ascend310P3", 248 * 1024)])
@pytest.mark.parametrize("mode", ["scalar", "tensor"])
def test_select_modes_1_2_stage_through_tmp_ub(soc, base, mode):
    a, b, flags = _sel_inputs()
    sel = _bits(flags)
    s1 = np.concatenate([b, sel.view(np.float16)])
    addr = {}

    def body(d, s0, s1_):
        sm = s1_[256:].reinterpret_cast(asc.uint8)
        addr["sel"] = int(sm.get_phy_addr())
        if mode == "scalar":
            asc.select(d, sm, s0, -3.0, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, 256)
        else:
            asc.select(d, sm, s0, s1_, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, 256)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        if soc != "Ascend310P3":  # GetCmpMask is not on the inference AI Core (its dtype table is empty)
            asc.get_cmp_mask(d.reinterpret_cast(asc.uint8))

    out, ins = run(body, np.zeros(256, np.float16), a, s1, soc=soc)
    (dup,) = [i for i in ins if i.cost == "Duplicate"]
    n = 64 if mode == "scalar" else 128  # 32 x half, or 32 x uint32
    assert [(w.start, w.stop) for w in dup.writes] == [(base, base + n)]
    if soc == "Ascend310P3":
        return
    reg = out.view(np.uint8)[:16]
    want = np.full(8, -3.0, np.float16).view(np.uint8) if mode == "scalar" else \
        np.full(4, addr["sel"], np.uint32).view(np.uint8)
    np.testing.assert_array_equal(reg, want)
    # the select itself is unchanged
    want_sel = np.where(flags, a[:256], -3.0 if mode == "scalar" else b).astype(np.float16)
    np.testing.assert_array_equal(out[8:], want_sel[8:])  # the first 16 B now hold the register


def test_select_mode0_uses_no_scratch():
    a, b, flags = _sel_inputs()
    s1 = np.concatenate([b, _bits(flags).view(np.float16)])
    _, ins = run(lambda d, s0, s1_: asc.select(d, s1_[256:].reinterpret_cast(asc.uint8), s0, s1_,
                                               asc.SelMode.VSEL_CMPMASK_SPR, 256), np.zeros(256, np.float16), a, s1)
    assert not [i for i in ins if i.cost == "Duplicate"]


def test_select_scratch_must_stay_free():
    """A TPipe holding UB past TMP_UB_OFFSET (184 KiB on A2) breaks Select.md's 8 KB reservation."""
    big = np.zeros(93 * 1024, np.float16)  # 186 KiB in one TBuf
    with pytest.raises(asc.KernelError, match="leave the last 8192 B of UB free"):
        run(lambda d, s0, s1: asc.select(d, s1.reinterpret_cast(asc.uint8), s0, 1.0,
                                         asc.SelMode.VSEL_TENSOR_SCALAR_MODE, 128),
            np.zeros(128, np.float16), big, np.zeros(16, np.float16))


def test_select_scratch_is_clean_under_the_sanitizer():
    """Two mode-1 selects: each stages its scalar (Duplicate) and loads the register from it (set_cmpmask),
    all on PIPE_V in order: no race, no uninitialised read, no lost write."""
    import fusekit
    import vector_harness

    a, b, flags = _sel_inputs()
    s1 = np.concatenate([b, _bits(flags).view(np.float16)])

    def body(d, s0, s1_):
        sm = s1_[256:].reinterpret_cast(asc.uint8)
        asc.select(d, sm, s0, -3.0, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, 256)
        asc.select(d, sm, s0, 5.0, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, 256)

    arrays = [vector_harness.padded(v) for v in (a, s1, np.zeros(256, np.float16))]
    report = fusekit.sanitize(vector_harness._kernel)[1](*arrays, body, tuple(v.size for v in arrays))
    assert report.ok, report.to_text()
