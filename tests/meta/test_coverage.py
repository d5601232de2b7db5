"""Coverage of pyasc 1.1.1's asc names (issue 9, "Show"): every name simulated or listed with a reason."""

from pathlib import Path

import pytest

from fusekit import asc
from fusekit.asc import coverage
from fusekit.asc.names import pyasc_names
from support import ROOT

DOC = ROOT / "docs" / "coverage.md"


def test_every_pyasc_name_is_simulated_or_listed_with_a_reason():
    assert coverage.unlisted() == [], ("pyasc names neither simulated nor listed in fusekit.asc.coverage "
                                       "(OUT_OF_SCOPE patterns or NOT_YET, with a reason)")


def test_the_table_covers_every_name_once():
    names = [row[0] for row in coverage.rows()]
    assert names == sorted(pyasc_names()["asc"]) and len(names) == len(set(names))


def test_docs_coverage_md_is_up_to_date():
    assert DOC.read_text(encoding="utf-8") == coverage.markdown(), \
        "docs/coverage.md is stale: run python -m fusekit.asc.coverage docs/coverage.md"


@pytest.mark.parametrize("name, why", [("mmad_with_sparse", "cube unit"), ("load_data_with_sparse", "cube unit"),
                                       ("set_fix_pipe_pre_quant_flag", "cube unit"), ("set_aipp_functions", "AIPP")])
def test_out_of_scope_call_names_pyasc_and_the_kernel_line(name, why):
    @asc.jit
    def k():
        getattr(asc, name)()  # <call>

    with pytest.raises(AttributeError) as info:
        k[1]()
    text = str(info.value)
    line = next(i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if "# <call>" in t)
    assert f"pyasc has asc.{name}; fusekit does not simulate it yet" in text
    assert why in text and f"{__file__}:{line}" in text


def test_outside_a_kernel_hasattr_still_works():
    assert not hasattr(asc, "mmad_with_sparse")
