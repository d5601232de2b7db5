"""Mutation check: apply each single-line mutation of ``tools/mutations.json`` to a COPY of the
repository and report which ones the tests fail to catch.

    python tools/mutate.py                  # every mutation, each against its group's tests
    python tools/mutate.py --full           # each against the whole suite (slow)
    python tools/mutate.py --only hb-s-pipe-out-of-order timing-misaligned-gm
    python tools/mutate.py --list
    python tools/mutate.py --aimed          # only check that every snippet is found exactly once (no tests)
    python tools/mutate.py --sample 3       # three mutations picked from the commit (CI runs this)

The working tree is never touched: the repository (less .git and virtual environments) is copied
to a temporary directory, each mutant is written there, and pytest runs in the copy with
``PYTHONPATH=<copy>/src``, so the copy's ``fusekit`` is imported, not the editable install (checked
before the run: a canary in the copy's ``fusekit/__init__.py`` must make ``import fusekit`` fail).

A mutation is located by its snippet, which must occur exactly once in the files its ``file``
glob matches, so it survives edits that move lines; otherwise it is reported as "snippet not
found" (or "snippet ambiguous"), never skipped silently. Tests that already fail on the unmutated
copy are deselected (and listed), so a broken test cannot pass for a killed mutant.

Exit status: 0 if every mutation found was killed, 1 if any survived or was not found.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = Path(__file__).resolve().parent / "mutations.json"
# everything the tests read (src, tests, benchmarks, README.md, pyproject.toml ...), not git or virtualenvs
IGNORE = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "*.pyc", ".hypothesis", ".pytest_cache", ".benchmarks",
                                "*.egg-info", "build", "dist")


def make_copy(into: Path) -> Path:
    shutil.copytree(ROOT, into, ignore=IGNORE)
    return into


def env_for(copy: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    return env


def check_copy_is_imported(copy: Path) -> str:
    """Prove that pytest in ``copy`` imports the copy's fusekit: where it comes from, and a canary."""
    probe = [sys.executable, "-c", "import fusekit, sys; sys.stdout.write(fusekit.__file__)"]
    where = subprocess.run(probe, cwd=copy, env=env_for(copy), capture_output=True, text=True, check=True).stdout
    if not Path(where).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"the copy is not what gets imported: fusekit comes from {where}")
    init = copy / "src" / "fusekit" / "__init__.py"
    original = init.read_text()
    init.write_text(original + "\nraise RuntimeError('mutation canary')\n")
    try:
        canary = subprocess.run(probe, cwd=copy, env=env_for(copy), capture_output=True, text=True)
    finally:
        init.write_text(original)
    if "mutation canary" not in canary.stderr:
        raise SystemExit("the canary mutation of the copy did not reach the tests: the copy is not what gets tested")
    return where


def locate(copy: Path, mutation: dict) -> tuple[Path | None, str]:
    """The one file of the copy holding the snippet, or None and why not."""
    files = sorted({Path(p) for p in glob.glob(str(copy / mutation["file"]), recursive=True)})
    hits = [(f, f.read_text().count(mutation["find"])) for f in files if f.suffix == ".py"]
    total = sum(n for _, n in hits)
    if total == 0:
        return None, "snippet not found"
    if total > 1:
        return None, f"snippet ambiguous ({total} places)"
    return next(f for f, n in hits if n), ""


def aim(root: Path, spec: dict) -> list[str]:
    """Each mutation whose snippet is not found exactly once under ``root``, as "id: why not"."""
    return [f"{m['id']}: {problem} in {m['file']}" for m in spec["mutations"] for target, problem in [locate(root, m)]
            if target is None]


def commit_seed() -> int:
    """A seed that changes with every commit (so CI's sample rotates) and is 0 outside a git checkout."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return int(head.stdout.strip()[:8] or "0", 16) if head.returncode == 0 else 0


def test_args(copy: Path, spec: dict, mutation: dict, full: bool) -> list[str]:
    if full:
        return ["tests"]
    patterns = mutation.get("tests") or spec["groups"][mutation["group"]]
    # in the group's order (most specific first: with -x the run stops at the first failure)
    found = [os.path.relpath(p, copy) for pattern in patterns for p in sorted(glob.glob(str(copy / pattern), recursive=True))]
    return list(dict.fromkeys(found))


def pytest(copy: Path, args: list[str], deselect: set[str], timeout: float, xml: Path, stop_first: bool):
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", f"--junitxml={xml}",
           "--continue-on-collection-errors",
           *(["-x"] if stop_first else []), *[f"--deselect={d}" for d in sorted(deselect)], *args]
    started = time.time()
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env_for(copy), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, [], time.time() - started
    return proc.returncode, failures(xml), time.time() - started


def failures(xml: Path) -> list[str]:
    """Node ids (``tests/test_x.py::Class::test[param]``) of failed or erroring tests in a junit xml report."""
    if not xml.exists():
        return []
    copy = xml.parent
    out = []
    for case in ET.parse(xml).getroot().iter("testcase"):
        if case.find("failure") is None and case.find("error") is None:
            continue
        if not case.get("classname"):        # a collection error: pytest names the module in "name"
            out.append(case.get("name", "").replace(".", "/") + ".py::")
            continue
        parts = case.get("classname", "").split(".")
        for k in range(len(parts), 0, -1):   # the longest prefix that is a file; the rest are classes
            if (copy / ("/".join(parts[:k]) + ".py")).exists():
                out.append("::".join(["/".join(parts[:k]) + ".py", *parts[k:], case.get("name")]))
                break
        else:
            out.append(f"{case.get('classname')}::{case.get('name')}")
    return out


def run_mutation(copy: Path, spec: dict, mutation: dict, args: argparse.Namespace, deselect: set[str],
                 unusable: set[str]) -> dict:
    result = {"id": mutation["id"], "group": mutation["group"], "why": mutation["why"]}
    target, problem = locate(copy, mutation)
    if target is None:
        return {**result, "status": problem}
    original = target.read_text()
    target.write_text(original.replace(mutation["find"], mutation["replace"], 1))
    try:
        tests = [t for t in test_args(copy, spec, mutation, args.full) if t not in unusable]
        if not tests:
            return {**result, "status": "not run: its tests fail to import at baseline"}
        code, failed, seconds = pytest(copy, tests, deselect, args.timeout, copy / f"{mutation['id']}.xml",
                                       stop_first=True)
    finally:
        target.write_text(original)
    result.update(file=os.path.relpath(target, copy), tests=tests, seconds=round(seconds, 1))
    if code is None:
        return {**result, "status": "killed (timeout)"}
    if code == 0:
        return {**result, "status": "SURVIVED"}
    if failed:
        return {**result, "status": "killed", "by": failed[0]}
    return {**result, "status": f"error (pytest exit {code}; no test failed: collection or usage error)"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="run these mutations only")
    parser.add_argument("--full", action="store_true", help="run the whole suite for each mutation")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once, each in its own copy")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per pytest run")
    parser.add_argument("--max-broken", type=int, default=20,
                        help="give up if more tests than this fail before any mutation (default 20)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--aimed", action="store_true",
                        help="only check that every mutation's snippet occurs exactly once; exit 1 if not")
    parser.add_argument("--sample", type=int, metavar="N", help="run N mutations picked at random (see --seed)")
    parser.add_argument("--seed", type=int, help="seed of --sample (default: from the current commit)")
    args = parser.parse_args(argv)

    spec = json.loads(SPEC.read_text())
    stale = aim(ROOT, spec)
    for line in stale:
        print(f"NOT AIMED {line}")
    if args.aimed:
        print(f"{len(spec['mutations']) - len(stale)}/{len(spec['mutations'])} mutations aimed")
        return 1 if stale else 0
    mutations = spec["mutations"]
    if args.only:
        unknown = set(args.only) - {m["id"] for m in mutations}
        if unknown:
            parser.error(f"unknown mutation id(s): {', '.join(sorted(unknown))}")
        mutations = [m for m in mutations if m["id"] in args.only]
    if args.sample:
        seed = commit_seed() if args.seed is None else args.seed
        mutations = random.Random(seed).sample(mutations, min(args.sample, len(mutations)))
        print(f"sample of {len(mutations)} (seed {seed}): {' '.join(m['id'] for m in mutations)}", flush=True)
    if args.list:
        for m in mutations:
            print(f"{m['id']:38s} {m['group']:10s} {m['why']}")
        return 0

    with tempfile.TemporaryDirectory(prefix="fusekit-mutate-") as tmp:
        copies = [make_copy(Path(tmp) / f"copy{j}") for j in range(max(1, args.jobs))]
        print(f"fusekit imported from {check_copy_is_imported(copies[0])} (canary checked)", flush=True)
        # baseline: the tests each mutation would run, on the unmutated copy
        all_tests = sorted({t for m in mutations for t in test_args(copies[0], spec, m, args.full)})
        started = time.time()
        chunks = [(copy, all_tests[j::len(copies)]) for j, copy in enumerate(copies) if all_tests[j::len(copies)]]
        with ThreadPoolExecutor(len(chunks) or 1) as pool:
            runs = list(pool.map(lambda c: pytest(c[0], c[1], set(), args.timeout * 2, c[0] / "baseline.xml",
                                                  stop_first=False), chunks))
        broken = [b for _, failed, _ in runs for b in failed]
        seconds = time.time() - started
        if len(broken) > args.max_broken:
            raise SystemExit(f"baseline: {len(broken)} tests fail on the unmutated copy (more than --max-broken "
                             f"{args.max_broken}): the tree was probably caught mid-edit; run again")
        print(f"baseline: {len(all_tests)} test file(s) in {seconds:.0f} s; "
              f"{len(broken)} test(s) already failing, deselected" + "".join(f"\n  {b}" for b in broken), flush=True)
        deselect = {b for b in broken if not b.endswith("::")}
        # a file that fails to import at baseline cannot judge a mutant: leave it out
        unusable = {b[:-2] for b in broken if b.endswith("::")}

        results = []
        def work(item):
            index, mutation = item
            r = run_mutation(copies[index % len(copies)], spec, mutation, args, deselect, unusable)
            print(f"{r['id']:38s} {r['status']}" + (f"  [{r['by']}]" if "by" in r else "")
                  + (f"  ({r['seconds']} s)" if "seconds" in r else ""), flush=True)
            return r

        # each worker owns one copy: mutation i goes to copy i % jobs, run in order within a copy
        lanes = [[(i, m) for i, m in enumerate(mutations) if i % len(copies) == j] for j in range(len(copies))]
        with ThreadPoolExecutor(len(copies)) as pool:
            for lane in pool.map(lambda lane: [work(item) for item in lane], lanes):
                results.extend(lane)
        results.sort(key=lambda r: [m["id"] for m in mutations].index(r["id"]))

    killed = [r for r in results if r["status"].startswith("killed")]
    survived = [r for r in results if r["status"] == "SURVIVED"]
    other = [r for r in results if r not in killed and r not in survived]
    print(f"\nscore: {len(killed)}/{len(results)} killed; {len(survived)} survived; {len(other)} not run")
    for r in survived:
        print(f"  SURVIVED {r['id']} ({r['group']}): {r['why']}")
    for r in other:
        print(f"  {r['status'].upper()} {r['id']} ({r['group']})")
    if args.json:
        args.json.write_text(json.dumps({"baseline_failures": sorted(deselect), "results": results}, indent=1))
    return 0 if not survived and not other else 1


if __name__ == "__main__":
    sys.exit(main())
