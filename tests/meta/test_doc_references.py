"""Every reference to a document resolves inside the repository (issue 19, item 6).

Docstrings, comments and tests cite this repository's documents as ``docs/<name>.md``, optionally with
the section they mean in quotes in the same sentence: ``docs/<name>.md``, "Section" (several quoted
sections may follow, separated by ``,`` or ``;``), or "Section" in ``docs/<name>.md``. The checker
walks src/, tests/, tools/ and benchmarks/ and fails when the file is not in docs/ or the section is not
one of its Markdown headings, and on any reference to a document outside the repository (an absolute
path such as a temporary directory's notes). The documents' own paths (backticked ``src/...``,
``tests/...`` ...) must exist too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("src", "tests", "tools", "benchmarks", "examples")
TEXT_SUFFIXES = {".py", ".sh", ".json", ".toml", ".cfg", ".ini", ".txt", ".md", ".yaml", ".yml"}
SKIPPED_DIRS = {"__pycache__", ".pytest_cache", ".hypothesis"}

_QUOTED = r'"([^\W_][^"]{0,150}?)"'  # a section name: starts with a letter or digit, one line or a few
# docs/<name>.md or a page of the site's guide/ and reference/ folders, not part of a longer path (asc-devkit's
# docs/zh/api/... pages are not this repository's)
_DOC = re.compile(r"(?<![\w./-])docs/((?:guide/|reference/)?[\w.-]+\.md)\b")
_FIRST_SECTION = re.compile(r"`{0,2}\s*[,;:]?\s*" + _QUOTED)
_MORE_SECTION = re.compile(r"\s*[,;]\s*" + _QUOTED)
_SECTION_BEFORE = re.compile(_QUOTED + r"\s+in\s+`{0,2}docs/([\w.-]+\.md)\b")
# an absolute path to a document: /tmp/..., /work/..., /home/... (not a URL, not a relative path)
_ABSOLUTE = re.compile(r"(?<![\w.:/-])(/(?:[\w.+-]+/)+[\w.+-]+\.(?:md|rst|adoc|html|pdf))\b")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_REPO_PATH = re.compile(r"`((?:src|tests|tools|benchmarks)/[^`\s<>]+|docs/(?:guide/|reference/)?[\w.-]+\.md)`")  # not asc-devkit's docs/zh/


def _normal(text: str) -> str:
    """A section name with line breaks (and a comment's ``#``) folded into single spaces."""
    return " ".join(re.sub(r"\n\s*#?", " ", text).split())


def headings(markdown: str) -> set[str]:
    """The Markdown headings of a document, without emphasis or code marks."""
    return {_normal(h.replace("`", "").replace("**", "")) for h in _HEADING.findall(markdown)}


def references(text: str) -> list[tuple[int, str, str | None]]:
    """(line, document name, section or None) for every repository-document reference in ``text``."""
    found = []
    for m in _DOC.finditer(text):
        line, sections = _line(text, m.start()), []
        first = _FIRST_SECTION.match(text, m.end())
        if first:
            sections.append(first.group(1))
            pos = first.end()
            while more := _MORE_SECTION.match(text, pos):
                sections.append(more.group(1))
                pos = more.end()
        found += [(line, m.group(1), _normal(s)) for s in sections] if sections else [(line, m.group(1), None)]
    for m in _SECTION_BEFORE.finditer(text):
        found.append((_line(text, m.start()), m.group(2), _normal(m.group(1))))
    return found


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def problems(text: str, where: str, docs: Path) -> list[str]:
    """What is wrong with the document references of ``text`` (from file ``where``), given the docs folder."""
    out, cache = [], {}
    for line, name, section in references(text):
        path = docs / name
        if name not in cache:
            cache[name] = headings(path.read_text(encoding="utf-8")) if path.is_file() else None
        if cache[name] is None:
            out.append(f"{where}:{line}: docs/{name} is not in the repository")
        elif section is not None and section not in cache[name]:
            out.append(f"{where}:{line}: docs/{name} has no section {section!r}")
    for m in _ABSOLUTE.finditer(text):
        out.append(f"{where}:{_line(text, m.start())}: {m.group(1)} is outside the repository: "
                   "cite a document under docs/")
    return out


def _scanned_files():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if (path.is_file() and path.suffix in TEXT_SUFFIXES and not any(p in SKIPPED_DIRS for p in parts)
                    and not any(p.endswith(".egg-info") for p in parts)):
                yield path


def test_every_document_reference_resolves_inside_the_repository():
    found = []
    for path in _scanned_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        found += problems(text, str(path.relative_to(ROOT)), ROOT / "docs")
    assert found == [], "\n".join(found)


def test_the_documents_cite_only_sections_and_paths_that_exist():
    """README.md and every page of the site (docs/, its guide/ and reference/ folders included)."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text, where = doc.read_text(encoding="utf-8"), str(doc.relative_to(ROOT))
        found += problems(text, where, ROOT / "docs")
        for path in _REPO_PATH.findall(text):
            path = path.rstrip(".,;:)")
            if not (list(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()):
                found.append(f"{where}: {path} does not exist")
    assert found == [], "\n".join(found)


# ---- the checker itself, on made-up references ------------------------------------------------

DOC = "/".join(["docs", "guide.md"])  # built, so that this file holds no reference the scan would check


@pytest.fixture
def docs(tmp_path):
    (tmp_path / "guide.md").write_text("# Guide\n\n## Adding a family\n\ntext\n\n### `Spec` fields\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("text", [
    f'see ``{DOC}``, "Adding a family".',
    f'({DOC}, "Adding a\n    family"; "Spec fields")',
    f'"Adding a family" in ``{DOC}``',
    f"the whole file: {DOC}.",
    f'{DOC}: 310P3 has 8 AI cores',
    "asc-devkit docs/zh/api/SIMD-API/Add.md",  # another repository's docs/ tree is not checked
    "AD examples .../add_high_performance/README.md and https://example.com/a/b.md",
])
def test_checker_accepts_references_that_resolve(docs, text):
    assert problems(text, "x.py", docs) == []


@pytest.mark.parametrize("text, why", [
    ('see ``' + "/".join(["docs", "missing.md"]) + '``.', "missing.md is not in the repository"),
    ('see ``' + "/".join(["docs", "guide", "missing.md"]) + '``.', "guide/missing.md is not in the repository"),
    (f'({DOC}, "Adding an op")', "has no section 'Adding an op'"),
    (f'({DOC}, "Adding a family"; "Removing a family")', "has no section 'Removing a family'"),
    (f'"Hardware" in ``{DOC}``', "has no section 'Hardware'"),
    ("How to add a family: ``" + "/".join(["", "tmp", "team", "notes.md"]) + "``.", "is outside the repository"),
    ("(" + "/".join(["", "work", "shared", "docs", "style.md"]) + " rec. 5)", "is outside the repository"),
])
def test_checker_rejects_missing_documents_sections_and_outside_paths(docs, text, why):
    found = problems(text, "x.py", docs)
    assert len(found) == 1 and why in found[0], found


def test_checker_reports_the_line_of_each_reference(docs):
    text = "a\nb\n" + f'({DOC}, "Nope")'
    assert problems(text, "k.py", docs) == [f"k.py:3: {DOC} has no section 'Nope'"]
