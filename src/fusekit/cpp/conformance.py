"""Conformance of Ascend C's own C++ examples: each ``.asc`` program run as its README runs it, judged by its scripts.

asc-devkit's examples (``examples/01_simd_cpp_api/...``) run as ``mkdir build && cd build``, ``python3
../scripts/gen_data.py``, ``./demo``, ``python3 ../scripts/verify_result.py output/output.bin
output/golden.bin``. :func:`run_example` does the same in a scratch copy of the example's folder (the checkout
is left as it was), with ``fusekit run`` in place of ``./demo`` and the sanitizer on every launch. A source that
branches on ``SCENARIO_NUM`` is run once per scenario (``-D SCENARIO_NUM=N``; the scripts get their own
scenario option, ``-scenarioNum=N`` or however their argparse spells it).

Each row's verdict: ``passed`` (the example's own verify script passed, the sanitizer found nothing), ``ran``
(it ran clean but has no verify script to judge its output),
``failed`` (verify failed, or the sanitizer found something no page states as a rule: fusekit or the sample is
wrong), ``defect`` (a documented rule the sample breaks: the run stopped on a KernelError, or the sanitizer's first
finding cites its page, e.g. GetCmpMask into a 32 B tensor, "dst的空间大小不能少于128字节"), ``not
simulated`` (the compile stopped on an API fusekit does not simulate, named) or ``not run`` (the example's
scripts could not run here).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .compiler import CompileError
from .program import ProgramError, compile_program, run_program

VERDICTS = ("passed", "ran", "failed", "defect", "not simulated", "not run")
_SCENARIO = re.compile(r"\bSCENARIO_NUM\s*==\s*(\d+)")
_README_SCENARIO = re.compile(r"(?:SCENARIO_NUM|scenarioNum)\s*=\s*(\d+)")
_SCENARIO_OPTION = re.compile(r"add_argument\(\s*[\"'](-{1,2}scenario\w*)[\"']", re.I)
_NOT_SIMULATED = re.compile(r"note: (AscendC::\S+) is not simulated")
_MISSING_HEADER = re.compile(r"fatal error: ([\w/.]+): No such file")
# what an API that stops the compile belongs to, for the reason column (cube-research.md). The cube's basic API is
# simulated (Mmad, LoadData 2D, DataCopy ND2NZ, Fixpipe: include/fusekit/cube.h); what stops a cube sample now is
# one of the calls around it (LoadData 3D / transpose / V2, sparse Mmad, the Matmul high-level API ...)
_AREAS = (
    (re.compile(r"Mmad|LoadData|Fixpipe|FixPipe|Matmul|kernel_tiling|Nd2Nz|Nz2Nd|Dn2Nz|Load2D|Load3D|LoadImageToLocal|"
                r"matmul_intf|SetFmatrix|int4b_t"), "a cube API fusekit does not simulate yet"),
    (re.compile(r"MicroAPI|Reg\b|__simd_vf__|__VEC_SCOPE__|RegTensor|dav-3510"), "the Ascend 950 register API"),
    (re.compile(r"undefined reference"), "a multi-file build (a function defined in another source it links)"),
    (re.compile(r"aclnn|aclop|aclmdl|aclrtc|aclrtLaunchKernel|aclrtBinary|torch"),
     "a runtime path other than <<<...>>> (aclnn, aclop, aclrtc, models)"),
)


@dataclass(frozen=True)
class Example:
    """One program of an examples folder: its source, folder, and the scenario it is run with (None: none)."""

    source: Path
    scenario: int | None = None

    @property
    def folder(self) -> Path:
        return self.source.parent

    def name(self, root: Path) -> str:
        label = str(self.source.relative_to(root)) if self.source.is_relative_to(root) else str(self.source)
        return label + (f" -D SCENARIO_NUM={self.scenario}" if self.scenario is not None else "")


@dataclass(frozen=True)
class Row:
    """One example's verdict (one of :data:`VERDICTS`) and its reason (one line)."""

    example: Example
    verdict: str
    reason: str = ""


def find_examples(root: Path) -> list[Example]:
    """The ``.asc`` programs under ``root`` (a file or folder), one per scenario they branch on."""
    sources = [root] if root.is_file() else sorted(root.rglob("*.asc"))
    found = []
    for source in sources:
        text = source.read_text(encoding="utf-8", errors="replace")
        scenarios = {int(n) for n in _SCENARIO.findall(text)}
        if not scenarios and "SCENARIO_NUM" in text:  # used as a value: the README lists the scenarios
            scenarios = {int(n) for n in _README_SCENARIO.findall(_readme(source.parent))} or {1}
        found += [Example(source, n) for n in sorted(scenarios)] or [Example(source)]
    return found


def run_example(example: Example, *, sanitize: bool = True, soc: str | None = None, timeout: float = 600) -> Row:
    """Run one example as its README does (see the module docstring); never raises: a fault of fusekit's own is
    a ``failed`` row naming it."""
    try:
        return _run_example(example, sanitize, soc, timeout)
    except Exception as exc:  # noqa: BLE001 - one example's trouble must not stop the table
        return Row(example, "failed", f"fusekit: {type(exc).__name__}: {_first_line(str(exc))}")


def _run_example(example: Example, sanitize: bool, soc: str | None, timeout: float) -> Row:
    with tempfile.TemporaryDirectory(prefix="fusekit-example-") as scratch:
        row = _run_in(example, sanitize, soc, timeout, Path(scratch))
        copy = str(Path(scratch, example.folder.name))  # reasons name the example's files, not the scratch copy
        return Row(row.example, row.verdict, row.reason.replace(copy, str(example.folder)))


def _run_in(example: Example, sanitize: bool, soc: str | None, timeout: float, scratch: Path) -> Row:
    readme = _readme(example.folder)
    if "dav-2201" not in readme and "dav-3510" in readme:
        return Row(example, "not simulated", "an Ascend 950 (dav-3510) example: fusekit simulates dav-2201 and dav-2002")
    if example.scenario is not None and _only_on_950(readme, example.scenario):
        return Row(example, "not simulated", f"scenario {example.scenario} runs on Ascend 950PR/950DT (dav-3510) only, "
                                             "as its README says; fusekit simulates dav-2201 and dav-2002")
    defines = {"SCENARIO_NUM": str(example.scenario)} if example.scenario is not None else {}
    defines.update(_cmake_defines(example.folder))
    folder = scratch / example.folder.name
    shutil.copytree(example.folder, folder)
    build = folder / "build"
    for sub in ("input", "output"):
        (build / sub).mkdir(parents=True, exist_ok=True)
    if (folder / "scripts" / "gen_data.py").is_file():
        done = _python(["../scripts/gen_data.py", *_scenario_flag(folder / "scripts" / "gen_data.py", example)],
                       build, timeout)
        if done.returncode != 0:
            return Row(example, "not run", f"scripts/gen_data.py failed: {_last_line(done)}")
    try:
        library = compile_program(folder / example.source.name, defines, soc)
    except ProgramError:
        return Row(example, "not simulated", "a multi-file build (its CMake compiles and links several sources); "
                                             "fusekit runs one source with what it includes")
    except CompileError as exc:
        return _not_compiled(example, str(exc))
    result = run_program(library, mode="sanitize" if sanitize else "run", cwd=build, timeout=timeout,
                         quiet=True)
    if result.error is not None:
        return Row(example, "defect", _first_line(result.error))
    if result.status != 0:
        return Row(example, "failed", f"main returned {result.status}")
    findings = [f for launch in result.launches if launch.report is not None for f in launch.report.findings]
    if findings:
        first = findings[0]
        where = f" at {Path(first.locations[0]).name}" if first.locations else ""
        verdict = "defect" if ".md" in first.message else "failed"  # a page's rule, or fusekit's own reasoning
        return Row(example, verdict, f"sanitizer, {len(findings)} finding(s): {first.kind}{where}: "
                                      f"{_first_line(first.message)}")
    if not (folder / "scripts" / "verify_result.py").is_file():
        return Row(example, "ran", f"{len(result.launches)} launch(es), sanitizer clean; no verify script")
    done = _python(["../scripts/verify_result.py", *_verify_files(readme, example),  # files first: some read argv[1]
                    *_scenario_flag(folder / "scripts" / "verify_result.py", example)], build, timeout)
    if done.returncode != 0:
        return Row(example, "failed", f"verify_result.py: {_last_line(done)}")
    return Row(example, "passed", f"{len(result.launches)} launch(es), verified by its own script")


_SCENARIO_HEADING = re.compile(r"^\*\*(?:场景|Scenario\s*)(\d+)\s*[:：]?(.*)$", re.M)
_ONLY_950 = re.compile(r"仅(?:在|支持)?\s*Ascend 950|only (?:on|supported on|for) Ascend 950", re.I)
_ONLY_3510 = re.compile(r"场景([\d和、,，\s]+)仅支持\s*dav-3510")


def _only_on_950(readme: str, scenario: int) -> bool:
    """Whether the README says scenario ``scenario`` runs on Ascend 950 only: its heading line (``**场景3：... ----此
    场景仅在 Ascend 950PR/Ascend 950DT产品支持**``) or an option table's note (``场景2和场景3仅支持 dav-3510``)."""
    for number, rest in _SCENARIO_HEADING.findall(readme):
        if int(number) == scenario and _ONLY_950.search(rest):
            return True
    return any(str(scenario) in re.findall(r"\d+", listed) for listed in _ONLY_3510.findall(readme))


def _readme(folder: Path) -> str:
    for name in ("README.md", "README_en.md"):
        if (folder / name).is_file():
            return (folder / name).read_text(encoding="utf-8", errors="replace")
    return ""


_ARCH_DEFINE = re.compile(r"add_definitions\(-D(\w+)=\$\{ARCH_NUM\}\)")
_CMAKE_ARCH = re.compile(r"CMAKE_ASC_ARCHITECTURES\s+\"dav-(\d+)")


def _cmake_defines(folder: Path) -> dict[str, str]:
    """The macros the example's CMakeLists.txt defines from its architecture (fixpipe_l0c2l1's
    ``add_definitions(-DASC_ARCHITECTURES=${ARCH_NUM})``, ARCH_NUM the number of CMAKE_ASC_ARCHITECTURES's default,
    dav-2201), which its host code branches on; SCENARIO_NUM is the row's own."""
    cmake = folder / "CMakeLists.txt"
    text = cmake.read_text(encoding="utf-8", errors="replace") if cmake.is_file() else ""
    arch = _CMAKE_ARCH.search(text)
    return {name: arch.group(1) for name in _ARCH_DEFINE.findall(text)} if arch else {}


def _scenario_flag(script: Path, example: Example) -> list[str]:
    """The scenario option of ``script`` (``-scenarioNum=N``, ``-scenario_num=N``: as its argparse spells it),
    for an example run with a scenario."""
    if example.scenario is None or not script.is_file():
        return []
    m = _SCENARIO_OPTION.search(script.read_text(encoding="utf-8", errors="replace"))
    return [f"{m.group(1)}={example.scenario}"] if m else []


def _verify_files(readme: str, example: Example) -> list[str]:
    """The arguments the README's verify command gives (default output/output.bin output/golden.bin), with
    ``$SCENARIO_NUM`` as the scenario; its options are the script's own (:func:`_scenario_flag`)."""
    for line in readme.splitlines():
        if "verify_result.py" in line and "python" in line:
            words = line.split("#")[0].split()
            after = words[next(k for k, w in enumerate(words) if w.endswith("verify_result.py")) + 1:]
            scenario = str(example.scenario) if example.scenario is not None else "1"
            files = [re.sub(r"\$\{?SCENARIO_NUM\}?", scenario, w) for w in after if not w.startswith("-")]
            if files:
                return files
    return ["output/output.bin", "output/golden.bin"]


def _not_compiled(example: Example, message: str) -> Row:
    names = _NOT_SIMULATED.findall(message) + _MISSING_HEADER.findall(message)
    for pattern, area in _AREAS:
        hit = next((n for n in names if pattern.search(n)), None) or (pattern.search(message) and pattern.pattern)
        if hit:
            return Row(example, "not simulated", f"{area}: {', '.join(names[:3]) or 'see the compile error'}")
    if names:
        return Row(example, "not simulated", ", ".join(names[:4]))
    return Row(example, "failed", f"compile error: {_first_line(message)}")


def _python(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 1, "", f"timed out after {timeout:.0f} s")


def _last_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in (done.stdout + "\n" + done.stderr).splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else f"exit status {done.returncode}"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:240] if text.strip() else ""


def table(rows: list[Row], root: Path) -> str:
    """The rows as a text table, with a count per verdict."""
    width = max((len(r.example.name(root)) for r in rows), default=10)
    lines = [f"{'example':<{width}}  {'result':<13}  reason"]
    lines += [f"{r.example.name(root):<{width}}  {r.verdict:<13}  {r.reason}" for r in rows]
    counts = {v: sum(r.verdict == v for r in rows) for v in VERDICTS}
    lines.append(", ".join(f"{n} {v}" for v, n in counts.items() if n) + f" of {len(rows)}")
    return "\n".join(lines)
