"""docs/reference/instructions.md is what tools/instruction_reference.py renders from the registry today
(issue 24: an instruction reference generated from the registry), and it has an entry for every instruction."""

import importlib.util

from fusekit.asc.basic.spec import REGISTRY
from support import ROOT

_spec = importlib.util.spec_from_file_location("instruction_reference", ROOT / "tools" / "instruction_reference.py")
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def test_the_committed_page_is_up_to_date():
    assert reference.PAGE.read_text(encoding="utf-8") == reference.render(), \
        "docs/reference/instructions.md is stale: run python tools/instruction_reference.py"


def test_every_instruction_has_an_entry_with_its_dtypes_cost_and_source():
    page = reference.render()
    for name, spec in REGISTRY.items():
        entry = page.split(f"\n### `{name}`\n", 1)[1].split("\n### ", 1)[0]
        assert f"`{spec.cpp}`" in entry and "**dtypes on Ascend310P3**" in entry and "**cost**" in entry, name
        assert spec.source in entry, name


def test_check_mode_reports_a_stale_page(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(reference, "PAGE", tmp_path / "instructions.md")
    assert reference.main(["--check"]) == 1 and "is stale" in capsys.readouterr().err
    (tmp_path / "instructions.md").write_text(reference.render(), encoding="utf-8")
    assert reference.main(["--check"]) == 0
