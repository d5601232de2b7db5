"""Sort32, Sort and MrgSort (issue 9 item 5) against models written here from the AD-API pages
(排序组合（ISASI）/Sort32.md, MrgSort.md, GetMrgSortResult.md; 高阶API/排序操作/Sort.md):
8-byte (score, index) elements, score in the low bytes, uint32 index in the high 4 B; descending
score; equal scores keep input order (score[j] before score[i] when j < i).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusekit import asc

from vector_harness import run

NP = {"float16": np.float16, "float32": np.float32}


def _decode(out: np.ndarray, n: int):
    raw = out.view(np.uint8)[:n * 8].reshape(n, 8)
    size = out.itemsize
    return raw[:, :size].copy().view(out.dtype).ravel(), raw[:, 4:].copy().view(np.uint32).ravel()


def _model_sorted(scores, index):
    """Descending, ties in input order: a comparison sort written out with Python's stable sorted()."""
    pairs = sorted(zip(scores.tolist(), index.tolist(), range(len(scores))), key=lambda p: (-p[0], p[2]))
    return np.array([p[0] for p in pairs], scores.dtype), np.array([p[1] for p in pairs], np.uint32)


@pytest.mark.parametrize("dtype", sorted(NP))
@pytest.mark.parametrize("repeats", [0, 1, 4])
def test_sort32(dtype, repeats):
    rng = np.random.default_rng(repeats)
    n = 32 * max(repeats, 1)
    scores = rng.integers(-20, 20, n).astype(NP[dtype])  # many ties
    index = np.arange(n, dtype=np.uint32) + 1000
    dst = np.zeros(n * 8 // np.dtype(NP[dtype]).itemsize, NP[dtype])
    out, (ins,) = run(lambda d, s, i: asc.sort32(d, s, i, repeats), dst, scores, index)
    got_s, got_i = _decode(out, n)
    for r in range(repeats):
        want_s, want_i = _model_sorted(scores[32 * r:32 * r + 32], index[32 * r:32 * r + 32])
        np.testing.assert_array_equal(got_s[32 * r:32 * r + 32], want_s)
        np.testing.assert_array_equal(got_i[32 * r:32 * r + 32], want_i)
    if repeats == 0:
        assert not out.any()
    assert (ins.op, ins.cost, ins.repeats, ins.nbytes) == ("sort32", "Sort32", repeats, 32 * repeats * 8)


def test_sort32_rules():
    with pytest.raises(asc.KernelError, match="supported: none"):
        run(lambda d, s, i: asc.sort32(d, s, i, 1), np.zeros(64, np.float32), np.zeros(32, np.float32),
            np.zeros(32, np.uint32), soc="Ascend310P3")
    with pytest.raises(asc.KernelError, match="uint32"):
        run(lambda d, s, i: asc.sort32(d, s, i, 1), np.zeros(64, np.float32), np.zeros(32, np.float32),
            np.zeros(32, np.int32))
    with pytest.raises(asc.KernelError, match="8 B each"):
        run(lambda d, s, i: asc.sort32(d, s, i, 1), np.zeros(32, np.float32), np.zeros(32, np.float32),
            np.zeros(32, np.uint32))


@pytest.mark.parametrize("full", [False, True])
def test_sort_full_and_grouped(full):
    rng = np.random.default_rng(5)
    scores = rng.integers(-50, 50, 128).astype(np.float32)
    index = np.arange(128, dtype=np.uint32)
    tmp = np.zeros(256, np.float32)

    def body(d, s, i):
        asc.sort(d, s, i, d[256:], 4, is_full_sort=full)

    out, _ = run(body, np.zeros(512, np.float32), scores, index)
    got_s, got_i = _decode(out[:256], 128)
    groups = [slice(0, 128)] if full else [slice(32 * r, 32 * r + 32) for r in range(4)]
    for g in groups:
        want_s, want_i = _model_sorted(scores[g], index[g])
        np.testing.assert_array_equal(got_s[g], want_s)
        np.testing.assert_array_equal(got_i[g], want_i)
    del tmp


def _queues(rng, dtype, lengths):
    out = []
    for q, n in enumerate(lengths):
        s = np.ascontiguousarray(np.sort(rng.integers(-10, 10, n).astype(NP[dtype]))[::-1])
        out.append((s, np.arange(n, dtype=np.uint32) + 100 * q))
    return out


def _encode(dtype, queues):
    per = 8 // np.dtype(NP[dtype]).itemsize
    parts = []
    for s, i in queues:
        raw = np.zeros((s.size, 8), np.uint8)
        raw[:, :s.itemsize] = s.view(np.uint8).reshape(s.size, s.itemsize)
        raw[:, 4:] = i.view(np.uint8).reshape(i.size, 4)
        parts.append(raw.ravel().view(NP[dtype]))
    return np.concatenate(parts), per


def _merge_model(queues, suspension=False):
    """Repeatedly take the largest head; on equal heads the lower-numbered queue (earlier input) wins."""
    heads = [0] * len(queues)
    out_s, out_i, counts = [], [], [0] * len(queues)
    while True:
        live = [q for q in range(len(queues)) if heads[q] < queues[q][0].size]
        if not live or (suspension and len(live) < len(queues)):
            break
        q = max(live, key=lambda k: (float(queues[k][0][heads[k]]), -k))
        out_s.append(queues[q][0][heads[q]])
        out_i.append(queues[q][1][heads[q]])
        heads[q] += 1
        counts[q] += 1
    return np.array(out_s), np.array(out_i, np.uint32), counts


@pytest.mark.parametrize("dtype", sorted(NP))
@pytest.mark.parametrize("lengths,valid,suspension", [
    ([32, 32, 32, 32], 15, False), ([5, 17, 0, 9], 15, False), ([8, 3, 6], 7, False), ([4, 6], 3, False),
    ([10, 3, 7, 5], 15, True)])
def test_mrg_sort(dtype, lengths, valid, suspension):
    rng = np.random.default_rng(len(lengths) + sum(lengths))
    queues = _queues(rng, dtype, lengths)
    src, per = _encode(dtype, queues)
    offs = np.cumsum([0] + [n * per for n in lengths])
    # each queue must be 8 B aligned: they sit one after another in one tensor
    got = []

    def body(d, s, _):
        srcs = [s[int(o):] for o in offs[:len(lengths)]]
        info = asc.MrgSort4Info(lengths + [0] * (4 - len(lengths)), suspension, valid, 1)
        asc.mrg_sort(d, asc.MrgSortSrcList(asc.float32, *srcs), info)
        got.append(asc.get_mrg_sort_result())

    total = sum(lengths)
    out, _ = run(body, np.zeros(total * per + 16, NP[dtype]), src)
    want_s, want_i, counts = _merge_model(queues, suspension)
    got_s, got_i = _decode(out, want_s.size)
    np.testing.assert_array_equal(got_s, want_s)
    np.testing.assert_array_equal(got_i, want_i)
    assert [int(c) for c in got[0]][:len(lengths)] == counts


def test_mrg_sort_list_form_and_repeats():
    rng = np.random.default_rng(9)
    queues = _queues(rng, "float32", [16] * 8)
    src, per = _encode("float32", queues)
    sorted_num = [0, 0, 0, 0]

    def body(d, s, _):
        srcs = asc.MrgSortSrcList(asc.float32, s, s[32:], s[64:], s[96:])
        asc.mrg_sort(d, srcs, [16, 16, 16, 16], sorted_num, 15, 2)

    out, (ins,) = run(body, np.zeros(256, np.float32), src)
    for r in range(2):
        want_s, want_i, _ = _merge_model(queues[4 * r:4 * r + 4])
        got_s, got_i = _decode(out[128 * r:128 * r + 128], 64)
        np.testing.assert_array_equal(got_s, want_s)
        np.testing.assert_array_equal(got_i, want_i)
    assert [int(v) for v in sorted_num] == [16, 16, 16, 16]
    assert ins.repeats == 2


def test_mrg_sort_rules():
    src = np.zeros(64, np.float32)
    with pytest.raises(asc.KernelError, match="valid_bit"):
        run(lambda d, s, _: asc.mrg_sort(d, asc.MrgSortSrcList(s, s[16:]), asc.MrgSort4Info([8, 8, 0, 0], False, 5)),
            np.zeros(64, np.float32), src)
    unsorted = np.array([1, 0, 5, 0] + [0] * 28, np.float32)  # queue 1 scores 1 then 5: not descending
    with pytest.raises(asc.KernelError, match="not sorted"):
        run(lambda d, s, _: asc.mrg_sort(d, asc.MrgSortSrcList(s, s[16:]), asc.MrgSort4Info([2, 2, 0, 0], False, 3)),
            np.zeros(64, np.float32), unsorted)
    with pytest.raises(asc.KernelError, match="repeat_times > 1"):
        run(lambda d, s, _: asc.mrg_sort(d, asc.MrgSortSrcList(s, s[16:]), asc.MrgSort4Info([2, 2, 0, 0], False, 3, 2)),
            np.zeros(64, np.float32), src)


# ---------------------------------------------------------------- Region Proposals (310P): ProposalConcat.md,
# ProposalExtract.md, RpSort16.md, MrgSort4.md: [x1, y1, x2, y2, score, label, reserved, reserved]

P310 = dict(soc="Ascend310P3")


@pytest.mark.parametrize("dtype", sorted(NP))
@pytest.mark.parametrize("mode", [0, 4, 5])
def test_proposal_concat_and_extract(dtype, mode):
    vals = (np.arange(32) + 1).astype(NP[dtype])
    props = np.full(32 * 8, -1, NP[dtype])
    out, _ = run(lambda d, s, _: asc.proposal_concat(d, s, 2, mode), props, vals, **P310)
    want = props.copy().reshape(32, 8)
    want[:, mode] = vals
    np.testing.assert_array_equal(out, want.ravel())
    back, _ = run(lambda d, s, _: asc.proposal_extract(d, s, 2, mode), np.zeros(32, NP[dtype]), want.ravel(), **P310)
    np.testing.assert_array_equal(back, vals)


@pytest.mark.parametrize("dtype", sorted(NP))
def test_rp_sort16(dtype):
    rng = np.random.default_rng(11)
    props = rng.integers(-5, 5, (48, 8)).astype(NP[dtype])
    props[:, 5] = np.arange(48)  # label: identifies each proposal
    out, _ = run(lambda d, s, _: asc.rp_sort16(d, s, 3), np.zeros(48 * 8, NP[dtype]), props.ravel(), **P310)
    got = out.reshape(48, 8)
    for r in range(3):
        group = props[16 * r:16 * r + 16]
        order = sorted(range(16), key=lambda k: (-float(group[k, 4]), k))  # ties: input order
        np.testing.assert_array_equal(got[16 * r:16 * r + 16], group[order])


def test_mrg_sort4_and_refusals():
    rng = np.random.default_rng(12)
    lengths = [6, 4, 5, 3]
    queues = []
    for q, n in enumerate(lengths):
        p = rng.integers(0, 9, (n, 8)).astype(np.float32)
        p = p[np.argsort(-p[:, 4], kind="stable")]
        p[:, 5] = 100 * q + np.arange(n)
        queues.append(p)
    src = np.concatenate(queues).ravel()
    offs = np.cumsum([0] + [8 * n for n in lengths])

    def body(d, s, _):
        srcs = asc.MrgSortSrcList(*[s[int(o):] for o in offs[:4]])
        asc.mrg_sort4(d, srcs, asc.MrgSort4Info(lengths, False, 15, 1))

    out, _ = run(body, np.zeros(18 * 8, np.float32), src, **P310)
    heads, want = [0, 0, 0, 0], []
    while any(heads[q] < lengths[q] for q in range(4)):
        live = [q for q in range(4) if heads[q] < lengths[q]]
        q = max(live, key=lambda k: (float(queues[k][heads[k], 4]), -k))
        want.append(queues[q][heads[q]])
        heads[q] += 1
    np.testing.assert_array_equal(out.reshape(18, 8), np.array(want))
    with pytest.raises(asc.KernelError, match="supported: none"):
        run(lambda d, s, _: asc.rp_sort16(d, s, 1), np.zeros(128, np.float32), np.zeros(128, np.float32))
    with pytest.raises(asc.KernelError, match="mode_number"):
        run(lambda d, s, _: asc.proposal_concat(d, s, 1, 6), np.zeros(128, np.float32), np.zeros(16, np.float32),
            **P310)
