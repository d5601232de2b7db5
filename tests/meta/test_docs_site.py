"""The documentation site builds in strict mode (issue 24: a broken link or reference fails the build), and
every page under docs/ is in its navigation."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_build_strict_passes(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install '.[docs]'")
    pytest.importorskip("material", reason="the docs extra is not installed: pip install '.[docs]'")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "reference" / "instructions" / "index.html").is_file()


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [str(p.relative_to(ROOT / "docs")) for p in sorted((ROOT / "docs").rglob("*.md"))]
    assert [p for p in pages if f": {p}\n" not in nav] == []
