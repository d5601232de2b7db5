"""The timing model against the published Atlas A2 studies (issue 10), rebuilt in ``fusekit.timing.studies``.

Figures and sources live with the kernels (``fusekit.timing.studies``); ``fusekit validate-timing``
prints them all. The default run checks a quick sample; the sweeps are ``@pytest.mark.slow``.
The DataCopy study is not yet within 10 % (no MTE request pipelining, L2 or same-address model):
its cases are strict xfails carrying the current error, so an improvement shows.
"""

import pytest

from fusekit import cli
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


# predicted / published - 1 of the current model (fusekit validate-timing --study data_copy)
# scenarios 1 and 2 pass (their MTE2 times are calibration targets of the request and burst costs)
COPY_ERRORS = {3: "+12.1 %", 4: "+25.2 %", 5: "+16.5 % (no L2 model)", 6: "+164 % (no L2 model)",
               7: "-53.4 % (no same-address model)", 8: "-23.6 %"}


@pytest.mark.slow
@pytest.mark.parametrize("scenario", [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=f"model error {COPY_ERRORS[s]} (issue 10 open)"))
    if s in COPY_ERRORS else s for s in sorted(studies.COPY_SCENARIOS)])
def test_data_copy_scenarios_within_10_percent(scenario):
    published = studies.COPY_SCENARIOS[scenario][5]
    assert studies.data_copy_us(scenario) == pytest.approx(published, rel=0.10)


@pytest.mark.xfail(strict=True, reason=f"model error {COPY_ERRORS[3]} (issue 10 open)")
def test_data_copy_large_tiles_within_10_percent_quick_sample():
    """The default run's sample of the DataCopy study: scenario 3 (48 copies of 64 bursts of 2 KiB per core)."""
    assert studies.data_copy_us(3) == pytest.approx(studies.COPY_SCENARIOS[3][5], rel=0.10)


def test_validate_timing_prints_model_and_published_side_by_side(capsys):
    assert cli.main(["validate-timing", "--study", "throughput"]) == 0
    out = capsys.readouterr().out
    assert "Exp float16" in out and "published" in out and "validated: 12 case(s)" in out
