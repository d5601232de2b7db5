"""The timing model against the published Atlas A2 studies (issue 10), rebuilt in ``fusekit.timing.studies``.

Figures and sources live with the kernels (``fusekit.timing.studies``); ``fusekit validate-timing``
prints them all. The default run checks a quick sample; the sweeps are ``@pytest.mark.slow``.
Cases the model does not meet within 10 % are strict xfails carrying the current error, so an
improvement shows.
"""

import pytest

from fusekit import cli
from fusekit.ops import workloads
from fusekit.timing import STUDY_NAMES
from fusekit.timing import studies


def test_the_cli_study_names_are_the_studies():
    assert STUDY_NAMES == tuple(studies.STUDIES)


def test_every_instruction_runs_at_its_documented_elements_per_cycle():
    for case, predicted in studies.throughput_cases():
        assert predicted == case.published, case.name  # the table's figure, through Instr.cost


def test_bank_conflict_scenario_7_is_predicted_within_10_percent():
    # validated (not fitted): src0 re-reads one block per repeat, so half the repeats clash with src1
    published = studies.BANK_SCENARIOS[7][-1]
    assert studies.bank_conflict_cycles(7) == pytest.approx(published, rel=0.10)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", sorted(studies.BANK_SCENARIOS))
def test_every_bank_conflict_scenario_within_10_percent(scenario):
    published = studies.BANK_SCENARIOS[scenario][-1]
    assert studies.bank_conflict_cycles(scenario) == pytest.approx(published, rel=0.10)


# predicted / published - 1 of the current model where it misses 10 % (fusekit validate-timing --study data_copy)
COPY_ERRORS: dict[int, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=f"model error {COPY_ERRORS[s]} (issue 10)"))
    if s in COPY_ERRORS else s for s in sorted(studies.COPY_SCENARIOS)])
def test_data_copy_scenarios_within_10_percent(scenario):
    published = studies.COPY_SCENARIOS[scenario][5]
    assert studies.data_copy_us(scenario) == pytest.approx(published, rel=0.10)


def test_data_copy_l2_reuse_within_10_percent_quick_sample():
    """The default run's sample of the DataCopy study: scenario 6 (N split in four, each quarter read four
    times: 75 % L2 hits), predicted only (no parameter was fitted to it)."""
    assert studies.data_copy_us(6) == pytest.approx(studies.COPY_SCENARIOS[6][5], rel=0.10)


@pytest.mark.slow
def test_add_study_rows_within_10_percent():
    for case, predicted in studies.add_cases():
        if case.study == "add_high_performance":
            assert predicted == pytest.approx(case.published, rel=0.10), case.name


@pytest.mark.slow
def test_the_article_ratio_comes_out_of_the_model():
    # predicted, not fitted: 1.97x on the default 47 cores (+9.4 %), the documented head overhead dominating
    assert studies.article_ratio(workloads) == pytest.approx(studies.ARTICLE_RATIO, rel=0.10)


def test_validate_timing_prints_model_and_published_side_by_side(capsys):
    assert cli.main(["validate-timing", "--study", "throughput"]) == 0
    out = capsys.readouterr().out
    assert "Exp float16" in out and "published" in out and "validated: 12 case(s)" in out
