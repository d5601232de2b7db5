"""The mutation list (tools/mutations.json) stays aimed: a snippet that moved is a silent hole in the suite."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _mutate_tool():
    spec = importlib.util.spec_from_file_location("fusekit_mutate_tool", ROOT / "tools" / "mutate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_mutation_finds_its_snippet_exactly_once():
    """Each mutation's code snippet occurs once in the files its glob names (else mutate.py cannot apply it)."""
    tool = _mutate_tool()
    assert tool.aim(ROOT, json.loads(tool.SPEC.read_text())) == []


def test_a_moved_snippet_is_reported(tmp_path):
    """aim() names a mutation whose snippet is gone, so the check above can fail."""
    tool = _mutate_tool()
    (tmp_path / "m.py").write_text("x = 1\ny = x\n")
    spec = {"mutations": [{"id": "gone", "file": "m.py", "find": "x = 2"},
                          {"id": "twice", "file": "m.py", "find": "x"},
                          {"id": "ok", "file": "m.py", "find": "x = 1"}]}
    stale = tool.aim(tmp_path, spec)
    assert [s.split(":")[0] for s in stale] == ["gone", "twice"]


def test_every_mutation_names_a_group_with_tests():
    """A mutation's tests (its own or its group's) match at least one test file."""
    tool = _mutate_tool()
    spec = json.loads(tool.SPEC.read_text())
    for m in spec["mutations"]:
        assert tool.test_args(ROOT, spec, m, full=False), m["id"]
