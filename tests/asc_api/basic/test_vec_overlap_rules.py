"""The overlap rules of ``fusekit.asc.basic.overlap`` on the cases of AD-API 通用说明和约束.md, 通用地址重叠约束,
on flat byte addresses (every family reaches them through these functions)."""

from __future__ import annotations

import numpy as np
import pytest

from fusekit.asc.basic import overlap


class _Core:
    """Stands in for a Core: ``error`` builds the KernelError the rules raise."""

    def error(self, op, detail, kind="api", **where):
        from fusekit.asc import KernelError
        return KernelError(op, detail, kind=kind, **where)


CORE = _Core()


def _repeats(starts, width):
    """(byte addresses, repeat) of repeats r reading / writing ``width`` bytes from ``starts[r]``."""
    addr = np.concatenate([np.arange(s, s + width) for s in starts])
    return addr, np.repeat(np.arange(len(starts)), width)


def test_count_form_operands_overlap_completely_or_not_at_all():
    """Count form: the same range or disjoint ranges are fine; a shifted range is a partial overlap."""
    overlap.whole_or_none(CORE, "add", "x", (0, 256), "the destination y", (0, 256), "y")
    overlap.whole_or_none(CORE, "add", "x", (0, 256), "the destination y", (256, 512), "y")
    with pytest.raises(Exception, match="partially overlaps the destination y") as err:
        overlap.whole_or_none(CORE, "add", "x", (0, 256), "the destination y", (32, 288), "y")
    assert err.value.kind == "partial-overlap"


def test_within_one_repeat_the_operands_share_all_bytes_or_none():
    """单次迭代内: a repeat whose source is its destination is fine, half of it is not."""
    d = _repeats([0, 256], 256)
    overlap.within_repeat(CORE, "add", "y", *d, "src0", "x", *d, exact_ok=True)
    with pytest.raises(Exception, match="in repeat 0, src0 x partially overlaps"):
        overlap.within_repeat(CORE, "add", "y", *d, "src0", "x", *_repeats([128, 1024], 256), exact_ok=True)
    with pytest.raises(Exception, match="a bit mask never has its source's bytes"):
        overlap.within_repeat(CORE, "compare", "m", *d, "src0", "x", *d, exact_ok=False)


def test_a_later_repeat_may_overwrite_what_an_earlier_one_read_but_not_read_what_it_wrote():
    """多次迭代间: dst one repeat ahead of src is fine (each repeat reads before the next writes); dst one repeat
    behind src makes repeat 1 read what repeat 0 wrote."""
    src = _repeats([256, 512], 256)
    assert overlap.late_reads(*_repeats([0, 256], 256), *src).size == 0
    late = overlap.late_reads(*_repeats([256, 512], 256), *_repeats([0, 256], 256))
    assert late.size and int(_repeats([0, 256], 256)[1][late[0]]) == 1
    with pytest.raises(Exception, match=r"repeat 1 reads src0 x bytes \(UB byte 256\) that an earlier repeat wrote"):
        overlap.across_repeats(CORE, "add", "y", *_repeats([256, 512], 256), "src0", "x", *_repeats([0, 256], 256))


def test_disjoint_refuses_any_shared_byte():
    """Gather / Scatter / Brcb: the destination shares no byte with a source."""
    class T:
        name = "y"
    overlap.disjoint(CORE, "gather", T, [(0, 64)], {"x": [(64, 128)]}, "Gather.md")
    with pytest.raises(Exception, match="Gather.md forbids"):
        overlap.disjoint(CORE, "gather", T, [(0, 64)], {"x": [(63, 128)]}, "Gather.md")
