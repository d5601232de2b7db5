"""``fusekit conformance PATH...``: pyasc's own tests and tutorials on the simulator, in a pytest session
with the plugin :mod:`fusekit.pyasc.plugin`, and the table of :mod:`fusekit.pyasc.conformance`; or, for paths
holding ``.asc`` programs (asc-devkit's C++ examples), :mod:`fusekit.cpp.conformance`'s runner and table."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fusekit.pyasc.conformance import CHECKOUT_ENV, SUITE, exit_status, find_checkout, table


def run(paths: list[str], sanitize: bool = True, extra: "list[str] | None" = None, verbose: bool = False) -> int:
    """``fusekit conformance PATH...``: run pyasc's tests under ``paths`` (default: the suite of the
    checkout in ``$FUSEKIT_PYASC_CHECKOUT``) in a pytest session with :mod:`fusekit.pyasc.plugin`; the
    table is printed at the end (pytest's tracebacks only with ``verbose``).

    Returns:
        :func:`exit_status` of the rows (0: no fusekit failure; 1: some row is ``failed``, ``error``
        or ``not run``), 2 for a path that does not exist, no checkout, paths holding no test or
        arguments pytest refuses.
    """
    if paths and any(_holds_programs(Path(p)) for p in paths):
        return run_programs(paths, sanitize)
    # pytest is a test dependency, not fusekit's: imported when the command runs, as the plugin that needs it
    import pytest

    from fusekit.pyasc import plugin

    if not paths:
        try:
            root = find_checkout()
        except ValueError as exc:
            print(f"fusekit conformance: {exc}", file=sys.stderr)
            return 2
        if root is None:
            print(f"fusekit conformance: no pyasc checkout: give test files or folders of it, or set {CHECKOUT_ENV} "
                  "(git clone https://github.com/hicann/pyasc)", file=sys.stderr)
            return 2
        paths = [str(root / p) for p in SUITE if (root / p).exists()]
    files = [Path(str(p).split("::")[0]) for p in paths]  # PATH::test selects one test, as in pytest
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        print(f"fusekit conformance: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    folders = [str(f.resolve() if f.is_dir() else f.resolve().parent) for f in files]
    # one output: without --verbose pytest's terminal reporter (dots, warnings, summary line) is off and
    # the table below is all that is printed; with it, pytest reports and the plugin prints the table
    quiet = [] if verbose else ["-p", "no:terminal"]
    # the session's options are the command's own: the ``addopts`` of whatever pytest configuration is
    # found for the paths (``-q`` in a pyproject.toml: an option of the terminal reporter switched off
    # above, so pytest would refuse it) and $PYTEST_ADDOPTS are not added; the configuration's other
    # settings (markers, filterwarnings) apply as in pytest
    args = ["-p", "fusekit.pyasc.plugin", "-p", "no:cacheprovider", *quiet, "-o", "addopts=", "--rootdir",
            os.path.commonpath(folders), *paths, *(extra or [])]
    if not sanitize:
        args.append("--fusekit-no-sanitize")
    saved = os.environ.pop("PYTEST_ADDOPTS", None)
    try:
        status = pytest.main(args)
    finally:
        if saved is not None:
            os.environ["PYTEST_ADDOPTS"] = saved
    rows = plugin.rows() if status != pytest.ExitCode.USAGE_ERROR else None
    if rows is None:
        return 2  # pytest said why on stderr
    if not rows:
        print(f"fusekit conformance: no tests found in {', '.join(paths)}", file=sys.stderr)
        return 2
    if not verbose:
        print(table(rows, plugin.root()))
        print("(pytest's tracebacks: fusekit conformance --verbose PATH...)")
    return exit_status(rows)


def _holds_programs(path: Path) -> bool:
    return path.suffix == ".asc" or (path.is_dir() and next(path.rglob("*.asc"), None) is not None)


def run_programs(paths: list[str], sanitize: bool = True) -> int:
    """``fusekit conformance DIR...`` over Ascend C examples: each ``.asc`` run as its README runs it, one row
    printed as it finishes, the table at the end. Returns 1 if a row is ``failed``, 2 for a missing path, else 0."""
    from fusekit.cpp.conformance import find_examples, run_example, table

    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        print(f"fusekit conformance: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    rows = []
    for path in map(Path, paths):
        root = path if path.is_dir() else path.parent
        for example in find_examples(path):
            row = run_example(example, sanitize=sanitize)
            print(f"{row.example.name(root)}: {row.verdict}", file=sys.stderr, flush=True)
            rows.append((root, row))
    roots = {root for root, _ in rows}
    common = Path(os.path.commonpath([str(r) for r in roots])) if roots else Path(".")
    print(table([row for _, row in rows], common))
    return 1 if any(row.verdict == "failed" for _, row in rows) else 0
