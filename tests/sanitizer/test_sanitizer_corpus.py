"""The sanitizer on the seeded-bug corpus (``tests/corpus``) and on the shipped FusedAddScale kernel.

Every corpus case is launched under ``sanitize``; a buggy kernel must produce exactly its expected
findings (tool, kind, kernel file:line of each instruction, cores, pipes, memory and byte range
where meaningful, count), a corrected kernel none. The report's text must show the source lines
and its JSON must carry the same fields. Race replay must turn a same-core race into different
outputs, and must not run for a correct kernel.
"""

from __future__ import annotations

import inspect
import json
import linecache
import os

import ml_dtypes
import numpy as np
import pytest

import fusekit
from corpus import Case, Expect, all_cases, line_of, where
from fusekit.ops.fused_add_scale import host
from fusekit.sanitizer import Report, analyze, sanitize

CASES = all_cases()
BY_NAME = {case.name: case for case in CASES}


def params(cases):
    return [pytest.param(c, id=c.name) for c in cases]


def launch(case: Case, *, replay: bool = False) -> tuple[Report, dict]:
    """Run ``case`` under the sanitizer; returns the report and the array arguments by name (after the run)."""
    args, kwargs = case.args(case.size)
    report = sanitize(case.kernel, outputs=set(case.outputs), replay=replay, soc=case.soc,
                      strict=case.strict)[case.cores](*args, **kwargs)
    bound = inspect.signature(case.kernel.fn).bind(*args, **kwargs).arguments
    return report, {k: v for k, v in bound.items() if isinstance(v, np.ndarray)}


def expected_key(case: Case, e: Expect) -> tuple:
    return e.tool, e.kind, tuple(where(case, m) for m in e.at)


def finding_key(f) -> tuple:
    return f.tool, f.kind, tuple(f.locations)


def pair(case: Case, report: Report) -> list[tuple[Expect, object]]:
    """(expected, reported) pairs; asserts the report holds exactly the expected findings."""
    got = sorted(map(finding_key, report.findings))
    want = sorted(expected_key(case, e) for e in case.expect)
    assert got == want, f"{case.name}: findings differ\n{report.to_text()}"
    by_key = {finding_key(f): f for f in report.findings}
    return [(e, by_key[expected_key(case, e)]) for e in case.expect]


def check_finding(e: Expect, f) -> None:
    # a finding whose Expect gives no count happens once (see Expect.count)
    assert f.count == (1 if e.count is None else e.count), (f.count, e.count)
    if e.cores is not None:
        assert f.cores == e.cores, (f.cores, e.cores)
    if e.pipes is not None:
        assert f.pipes == e.pipes
    if e.mem is not None:
        assert (f.mem, f.buffer) == (e.mem, e.buffer)
    if e.span is not None:
        assert (f.start, f.stop) == e.span and f.size == e.span[1] - e.span[0]
    if e.count is not None:
        assert f.count == e.count
    for text in e.says:
        assert text.lower() in f.message.lower(), f"{text!r} not in {f.message!r}"
    assert len(f.ops) == len(f.locations)


# ---------------------------------------------------------------------------------------------
# the corpus
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", params(CASES))
def test_corpus_case_reports_exactly_its_findings(case: Case):
    report, arrays = launch(case)
    for e, f in pair(case, report):
        check_finding(e, f)
    assert report.ok == (not case.expect)
    if report.error is not None:  # the finding of the error that stopped the kernel is one of them, at its line
        err = report.error
        (found,) = [f for f in report.findings if f.kind == err.kind and f.locations == (f"{err.file}:{err.line}",)]
        assert found.tool in ("memcheck", "synccheck", "api") and found.cores == (err.core,)
    if case.check is not None:
        case.check(arrays)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_report_text_and_json_carry_the_findings(case: Case):
    report, _ = launch(case)
    text = report.to_text()
    data = json.loads(report.to_json())
    assert data["kernel"] == case.kernel.fn.__name__ and data["block_dim"] == case.cores
    assert data["ok"] is report.ok and len(data["findings"]) == len(report.findings)
    if report.ok:
        assert text == f"{case.kernel.fn.__name__} on {case.cores} core(s): no findings"
        return
    assert f"{len(report.findings)} finding(s)" in text
    for e in case.expect:  # the offending kernel lines, as written
        for marker in e.at:
            source = linecache.getline(case.source_file, line_of(case.source_file, marker)).strip()
            assert f"# <{marker}>" in source and source in text
    for f, d in zip(report.findings, data["findings"]):
        assert f"[{f.kind}]" in text and f.message in text
        for c in f.cores:
            assert f"aiv({c})" in text
        for p in f.pipes:
            assert f"PIPE_{p}" in text
        if f.mem:
            assert f"bytes [{f.start}, {f.stop}) ({f.size} B)" in text
        for location in f.locations:
            path, _, line = location.rpartition(":")
            source = linecache.getline(path, int(line)).strip()
            assert source and source in text
            assert f"{os.path.basename(path)}:{line}" in text
        assert {k: d[k] for k in ("tool", "kind", "message", "mem", "buffer", "start", "stop", "size", "count",
                                  "tensor")} == {"tool": f.tool, "kind": f.kind, "message": f.message, "mem": f.mem,
                                                 "buffer": f.buffer, "start": f.start, "stop": f.stop,
                                                 "size": f.size, "count": f.count, "tensor": f.tensor}
        assert (d["cores"], d["pipes"], d["locations"], d["ops"]) == (list(f.cores), list(f.pipes),
                                                                     list(f.locations), list(f.ops))


def same_core_race(report: Report) -> bool:
    """A race between two pipes of one core (merged findings list every core it happened on)."""
    return any(f.tool == "racecheck" and "sync_all" not in f.message for f in report.findings)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES if c.replay])
def test_race_replay_changes_racy_outputs_and_skips_correct_kernels(case: Case):
    report, arrays = launch(case, replay=True)
    if not same_core_race(report):
        assert report.replay is None
        assert "race replay" not in report.to_text()
        return
    assert report.replay and set(report.replay) <= set(arrays), report.replay
    assert any("differ" in text for text in report.replay.values()), report.replay
    assert "race replay (a legal order on the NPU):" in report.to_text()
    assert json.loads(report.to_json())["replay"] == report.replay
    # replay runs on copies: the caller's arrays hold the in-order results
    in_order, _ = launch(case)
    assert in_order.replay is None


def test_race_replay_shows_nan_from_poisoned_ub():
    for name in ("tbuf/no-mte2-v", "tbuf/no-v-mte3", "tail-sync/no-full-tiles", "flags/set-never-waited"):
        report, arrays = launch(BY_NAME[name], replay=True)
        assert not np.isnan(arrays["y"]).any(), "the in-order run computes real numbers"
        assert "in the racy order nan" in report.replay["y"], (name, report.replay)


def test_corpus_pairs_every_buggy_kernel_with_a_corrected_one():
    modules = {c.module for c in CASES}
    for module in modules:
        cases = [c for c in CASES if c.module == module]
        assert any(c.expect for c in cases) and any(not c.expect for c in cases), module
    for case in CASES:
        for e in case.expect:
            for marker in e.at:
                assert line_of(case.source_file, marker)
        assert case.expect or not case.defect, case.name


def test_article_variants_cover_every_defect_of_section_4_4():
    kinds = {(e.tool, e.kind) for c in CASES if c.module == "article" for e in c.expect}
    assert {("api", "api"), ("initcheck", "uninitialized read"), ("memcheck", "ub-overflow"),
            ("memcheck", "unaligned-length"), ("initcheck", "output never written")} <= kinds


# ---------------------------------------------------------------------------------------------
# the shipped kernel is clean
# ---------------------------------------------------------------------------------------------

SIZES = [0, 1, 15, 16, 17, 255, 256, 257, 1000, 2**16 + 3, 2**20 + 5]
MODES = [(np.float16, "native"), (np.float16, "fp32"), (np.float32, "native"), (ml_dtypes.bfloat16, "fp32")]


@pytest.mark.parametrize("dtype, precision", MODES, ids=lambda v: getattr(v, "__name__", v))
def test_fused_add_scale_has_no_findings(dtype, precision):
    launches = 0
    for n in SIZES:
        rng = np.random.default_rng(n)
        x1, x2 = (rng.standard_normal(n).astype(dtype) for _ in range(2))
        for cores in (1, 2, 7, 48):
            for buffer_num in (1, 2):
                result = host.run(x1, x2, 1.5, core_num=cores, buffer_num=buffer_num, precision=precision)
                for launched in result.launches:
                    findings = analyze(launched.trace, outputs={"y"})
                    assert not findings, (n, cores, buffer_num, [f.to_dict() for f in findings])
                    launches += 1
    assert launches == (len(SIZES) - 1) * 4 * 2


# ---------------------------------------------------------------------------------------------
# what the sanitizer gets wrong today (each a reproducer)
# ---------------------------------------------------------------------------------------------

def test_fusekit_exports_sanitize():
    assert fusekit.sanitize is sanitize


def test_merged_findings_list_every_core():
    wrong = []
    for case in CASES:
        if not case.expect:
            continue
        report, _ = launch(case)
        for e, f in pair(case, report):
            if e.cores is not None and f.cores != e.cores:
                wrong.append((case.name, e.kind, f.cores, e.cores))
    assert not wrong, wrong


def test_uninitialized_read_range_is_the_unwritten_bytes():
    case = BY_NAME["article/unaligned-tail-npu"]  # Add reads x1_local[96:104] and x2_local[96:104], never written
    report, _ = launch(case)
    reads = [f for f in report.findings if f.kind == "uninitialized read"]
    assert sum(f.size for f in reads) == 2 * 8 * 2
    assert {f.tensor for f in reads} == {"in_queue_x1[0]", "in_queue_x2[0]"}


def test_memcheck_error_finding_has_memory_and_byte_range():
    report, _ = launch(BY_NAME["copy-tail/strict"])  # data_copy of x elements [64, 100)
    (finding,) = report.findings
    assert (finding.mem, finding.buffer, finding.start, finding.stop) == ("GM", "x", 64 * 4, 100 * 4)


def test_replay_runs_the_cores_in_another_order_for_a_race_between_cores():
    report, _ = launch(BY_NAME["flags/gm-race-between-cores"], replay=True)
    text = " ".join(report.replay.values())
    assert "elements differ" in text and "in the racy order" in text


def test_sanitize_rejects_unknown_output_names():
    case = BY_NAME["copy-tail/npu-round-down"]  # y[96:100] is never written
    args, kwargs = case.args(case.size)
    with pytest.raises(ValueError, match="Y"):
        sanitize(case.kernel, outputs={"Y"}, strict=False)[case.cores](*args, **kwargs)
