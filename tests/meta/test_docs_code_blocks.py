"""Every code block of README.md and docs/ runs as written (issue 24, "Documentation").

The ```python, ```bash / ```sh and ```console blocks of a page run in their order, in one child process per
page, in a fresh copy of the repository's files (tracked and untracked, not ignored), so that what a page
writes (build/, trace.json, ...) never lands in the working tree: Python blocks share one namespace, shell
blocks run with ``bash -e -o pipefail`` in the copy's root, with this interpreter's ``bin`` first on PATH (so
``fusekit`` and ``python`` are this environment's). A ```console block runs its ``$ `` lines; the other lines
are the output it shows. Blocks in other languages (```text, ```cpp, ...) are shown, not run.

Markers, each an HTML comment (invisible on the site and on GitHub):

- ``<!-- no-run: REASON -->`` on the line before a block: the block is not run, for a reason that makes
  running it impossible here (it needs an NPU, the CANN toolkit, or a fresh machine that CI's own job
  provides); the reason is required.
- ``<!-- docs-test: slow -->`` anywhere in a page: the page's blocks run only under ``-m slow``.

Run one page by hand: ``python tests/meta/test_docs_code_blocks.py docs/guide/sanitizer.md``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN_LANGS = {"python": "python", "py": "python", "bash": "shell", "sh": "shell", "shell": "shell",
             "console": "console"}
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,})(?P<lang>[\w+-]*)[^\n]*$")
_NO_RUN = re.compile(r"^\s*<!--\s*no-run:\s*(?P<why>.*?)\s*-->\s*$")
_SLOW = "<!-- docs-test: slow -->"
PAGE_TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page: its language class (python / shell / console / other), its text,
    the line of its opening fence, and the no-run reason (None: it runs)."""

    kind: str
    code: str
    line: int
    no_run: str | None


def blocks(markdown: str) -> list[Block]:
    """The fenced code blocks of ``markdown``, in order (ValueError for a fence that is never closed, or a
    no-run marker without a reason)."""
    lines, out, i = markdown.split("\n"), [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, fence, indent = i, m.group("fence"), len(m.group("indent"))
        body, i = [], i + 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"line {start + 1}: a code block opened with {fence} is never closed")
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = _NO_RUN.match(prev)
        if marker and not marker.group("why"):
            raise ValueError(f"line {start}: a no-run marker needs its reason: <!-- no-run: why -->")
        kind = RUN_LANGS.get(m.group("lang").lower(), "other")
        out.append(Block(kind, "\n".join(body) + "\n", start + 1, marker.group("why") if marker else None))
        i += 1
    return out


def console_commands(code: str) -> str:
    """The commands of a console block: its ``$ `` lines (a trailing ``\\`` continues onto the next line)."""
    out, cont = [], False
    for line in code.splitlines():
        if cont or line.startswith("$ "):
            out.append(line if cont else line[2:])
            cont = line.endswith("\\")
    return "\n".join(out) + "\n"


def script(page: str, page_blocks: list[Block]) -> str:
    """The Python program that runs a page's runnable blocks in order (it runs in the repository copy)."""
    steps = []
    for b in page_blocks:
        if b.no_run is not None or b.kind == "other":
            continue
        where = f"{page}:{b.line}"
        if b.kind == "python":
            steps.append(f"_python({b.code!r}, {where!r})")
        else:
            code = console_commands(b.code) if b.kind == "console" else b.code
            steps.append(f"_shell({code!r}, {where!r})")
    return _DRIVER + "\n".join(steps) + "\n"


_DRIVER = '''\
import subprocess, sys
_ns = {"__name__": "__main__"}
def _python(code, where):
    print(f"--- {where} (python)", flush=True)
    exec(compile(code, where, "exec"), _ns)
def _shell(code, where):
    print(f"--- {where} (bash)", flush=True)
    sys.stdout.flush()
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code])
    if r.returncode:
        raise SystemExit(f"{where}: the shell block exited {r.returncode}")
'''


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _repo_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                         capture_output=True, check=True).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def copy_of_repository(dest: Path) -> Path:
    """A copy of the repository's files (not its ignored build outputs or virtual environments) in ``dest``."""
    for rel in _repo_files():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    return dest


def run_page(path: Path, workdir: Path) -> subprocess.CompletedProcess:
    """Run the runnable blocks of page ``path`` in order in a repository copy under ``workdir``."""
    rel = str(path.relative_to(ROOT))
    repo = copy_of_repository(workdir / "repo")
    (workdir / "page.py").write_text(script(rel, blocks(path.read_text(encoding="utf-8"))), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "FUSEKIT_", "COV_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", MPLBACKEND="Agg",
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, str(workdir / "page.py")], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=PAGE_TIMEOUT_S)


def _runnable(path: Path) -> bool:
    return any(b.no_run is None and b.kind != "other" for b in blocks(path.read_text(encoding="utf-8")))


def _params():
    out = []
    for path in pages():
        if _runnable(path):
            slow = _SLOW in path.read_text(encoding="utf-8")
            out.append(pytest.param(path, id=str(path.relative_to(ROOT)),
                                    marks=[pytest.mark.slow] if slow else []))
    return out


@pytest.mark.parametrize("page", _params())
def test_every_code_block_of_the_page_runs_as_written(page, tmp_path):
    r = run_page(page, tmp_path)
    assert r.returncode == 0, f"{page.relative_to(ROOT)}: a block failed\n{r.stdout[-6000:]}\n{r.stderr[-6000:]}"


def test_no_run_markers_say_why_and_the_readme_keeps_its_two_quick_start_lines():
    for path in pages():
        for b in blocks(path.read_text(encoding="utf-8")):
            assert b.no_run is None or len(b.no_run) > 10, f"{path}:{b.line}: say why the block cannot run"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    quick = [b for b in blocks(readme) if b.no_run is not None and "CI" in b.no_run]
    assert len(quick) == 1 and len(quick[0].code.strip().splitlines()) == 2, "README: the two quick-start lines"
    test_line = quick[0].code.strip().splitlines()[1]
    assert test_line in ci, ".ci/run runs the README's test command verbatim"


# ---- the extraction itself, on made-up pages ------------------------------------------------------

def test_blocks_come_in_order_with_their_language_line_and_marker():
    page = ("# T\n\n```python\nx = 1\n```\n\n<!-- no-run: needs an Ascend NPU -->\n```bash\nnpu-smi\n```\n"
            "```text\nfusekit run OP [--size N]\n```\n  ```sh\n  echo hi\n  ```\n")
    got = blocks(page)
    assert [(b.kind, b.code, b.line, b.no_run) for b in got] == [
        ("python", "x = 1\n", 3, None), ("shell", "npu-smi\n", 8, "needs an Ascend NPU"),
        ("other", "fusekit run OP [--size N]\n", 11, None), ("shell", "echo hi\n", 14, None)]


def test_an_unclosed_block_and_a_marker_without_reason_are_refused():
    with pytest.raises(ValueError, match="never closed"):
        blocks("```python\nx = 1\n")
    with pytest.raises(ValueError, match="needs its reason"):
        blocks("<!-- no-run: -->\n```bash\nls\n```\n")


def test_console_blocks_run_their_dollar_lines_only():
    assert console_commands("$ fusekit run a \\\n    --size 3\nPASS\n$ echo x\nx\n") == \
        "fusekit run a \\\n    --size 3\necho x\n"


def test_a_failing_block_names_its_page_and_line(tmp_path):
    text = "```python\nshared = 2\n```\n\n```python\nassert shared == 2\n```\n\n```bash\nexit 3\n```\n"
    code = script("p.md", blocks(text))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode != 0 and "p.md:9: the shell block exited 3" in r.stderr
    assert "--- p.md:5 (python)" in r.stdout  # the second Python block saw the first one's name


if __name__ == "__main__":  # python tests/meta/test_docs_code_blocks.py PAGE.md ...
    for arg in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            result = run_page(Path(arg).resolve(), Path(tmp))
            print(result.stdout[-8000:], result.stderr[-8000:], f"{arg}: exit {result.returncode}", sep="\n")
