"""pytest plugin: ``pytest -p fusekit.pyasc_plugin <pyasc checkout>/python/test/...`` (that documented name
is this module, :mod:`fusekit.pyasc_plugin`).

Binds ``asc`` to fusekit's simulator for the whole session (before pyasc's conftest files import
``asc.runtime.config``), collects pyasc's tutorials (``python/tutorials/*/*.py``, run as
``python FILE``) besides its ``test_*.py``, runs each kernel launch a second time under
``fusekit.sanitize`` (on copies of its arguments; ``--fusekit-no-sanitize`` turns that off), and
prints the conformance table (:mod:`fusekit.pyasc.conformance`) at the end: a row for every collected test
(a setup or teardown error included) and for every file that fails to import. A test whose code names
a cube-unit API is skipped as "not simulated (cube unit)" (per test: its file's other tests run). The
session's exit status is :func:`fusekit.pyasc.conformance.exit_status`, as ``fusekit conformance``'s, and
pytest's own report tells the table's story: a row that is no fusekit failure
(:data:`fusekit.pyasc.conformance.NOT_FUSEKIT_FAILURES`: a sample defect, an unsupported or out-of-scope
call, the cube unit), at collection too, is reported to pytest as a skip with the row's reason.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import runpy
import sys
from pathlib import Path

import pytest

from fusekit.pyasc import conformance

_state = {"stack": None, "rows": {}, "current": None, "sanitize": True, "order": []}


def pytest_addoption(parser):
    group = parser.getgroup("fusekit", "pyasc conformance on fusekit")
    group.addoption("--fusekit-no-sanitize", action="store_true", help="do not sanitize each kernel launch")


def _bind() -> None:
    if _state["stack"] is None:
        from fusekit import asc
        from fusekit.pyasc import bridge
        stack = contextlib.ExitStack()
        stack.enter_context(bridge.rebound(asc))
        _state["stack"] = stack
        _patch_launch()


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    _bind()  # pyasc's conftest.py imports asc.runtime.config
    # pyasc's suite repeats basenames (test_vadd.py in several folders), and one file's missing API
    # must not stop the others
    args[:] = ["--import-mode=importlib", "--continue-on-collection-errors", *args]


def pytest_configure(config):
    _bind()
    _state["rows"] = {}  # a fresh table per session (fusekit conformance may run several in one process)
    _state["sanitize"] = not config.getoption("--fusekit-no-sanitize", False)
    _state["root"] = Path(str(config.rootpath))
    if not hasattr(config.option, "tbstyle"):  # no terminal reporter (fusekit conformance): no traceback to format
        config.option.tbstyle = "no"


def pytest_unconfigure(config):
    if _state["stack"] is not None:
        _state["stack"].close()
        _state["stack"] = None


def _patch_launch() -> None:
    """Every launch ``kernel[n, stream](*args)`` also runs under the sanitizer, on copies of its arguments."""
    from fusekit.asc.runtime import KernelFunction
    from fusekit.sanitizer import sanitize

    original = KernelFunction.__getitem__
    if getattr(original, "_fusekit_conformance", False):
        return

    def getitem(self, key):
        launch = original(self, key)

        def launcher(*args, **kwargs):
            row = _state["current"]
            if _state["sanitize"] and row is not None:
                try:
                    report = sanitize(self)[key](*_copies(args), **_copies(kwargs))
                    row.sanitizer += [f"{self.fn.__name__}: {f.tool} {f.kind}" + (f" at {f.locations[0]}" if
                                      getattr(f, "locations", None) else "") for f in report.findings]
                except Exception as exc:  # noqa: BLE001 - the plain launch below reports it
                    row.sanitizer.append(f"{self.fn.__name__}: sanitizer could not run ({type(exc).__name__}: {exc})")
            return launch(*args, **kwargs)

        return launcher

    getitem._fusekit_conformance = True
    KernelFunction.__getitem__ = getitem


def _copies(values):
    if isinstance(values, dict):
        return {k: _copy(v) for k, v in values.items()}
    return [_copy(v) for v in values]


def _copy(value):
    if hasattr(value, "clone") and type(value).__module__.split(".")[0] == "torch":
        return value.clone()
    if hasattr(value, "copy") and hasattr(value, "dtype"):
        return value.copy()
    return value


class TutorialItem(pytest.Item):
    """A pyasc tutorial, run as ``python FILE`` with its default arguments (the Model backend)."""

    def runtest(self):
        argv = sys.argv
        sys.argv = [str(self.path)]
        folder = str(self.path.parent)
        sys.path.insert(0, folder)
        try:
            runpy.run_path(str(self.path), run_name="__main__")
        finally:
            sys.argv = argv
            sys.path.remove(folder)

    def reportinfo(self):
        return self.path, 0, f"tutorial {self.path.name}"


class TutorialFile(pytest.File):
    def collect(self):
        yield TutorialItem.from_parent(self, name="__main__")


class CubeItem(pytest.Item):
    """A tutorial of cube-unit kernels (matmul): reported, not run (the file is the one test)."""

    def runtest(self):
        pytest.skip(f"uses {conformance.needs_cube(self.path)} (cube unit)")


class CubeFile(pytest.File):
    def collect(self):
        yield CubeItem.from_parent(self, name="(cube unit)")


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".py" and "tutorials" in file_path.parts and not file_path.name.startswith("test_"):
        if conformance.needs_cube(file_path):
            return CubeFile.from_parent(parent, path=file_path)
        return TutorialFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    from fusekit.pyasc.shim import config as shim_config
    funcargs = getattr(item, "funcargs", {})
    if funcargs.get("backend") in (shim_config.Backend.NPU, "NPU"):
        funcargs["backend"] = shim_config.Backend.Model  # no NPU: the CA-model path, on the CPU
        _row(item).reason = "NPU case run as Model"
    _state["current"] = _row(item)
    try:
        yield
    finally:
        _state["current"] = None


def _row(item) -> conformance.Row:
    key = item.nodeid
    if key not in _state["rows"]:
        _state["rows"][key] = conformance.Row(str(item.path), item.name, "not run", sanitized=_state["sanitize"])
    return _state["rows"][key]


def rows() -> "list[conformance.Row]":
    """The rows of the last session: every collected test (in collection order; ``not run`` until it
    reports) and every file that failed to collect."""
    return list(_state["rows"].values())


def root() -> "Path | None":
    """The rootdir of the last session (the table's file names are relative to it)."""
    return _state.get("root")


def pytest_collection_finish(session):
    for item in session.items:  # a row for every collected (and selected) test, even one never reached
        _row(item)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Seed numpy, random and torch from the test's node id, so that a test drawing unseeded random inputs
    (e.g. generalization/adv/test_quant.py) gives the same row on every run; skip a test whose own code
    (its function, the functions of its file it calls, its fixtures) names a cube-unit API."""
    import random
    import zlib

    import numpy as np

    cube = conformance.cube_use(_functions(item))
    if cube:
        pytest.skip(f"uses {cube} (cube unit)")
    seed = zlib.crc32(f"{item.path.name}::{item.name}".encode())  # the same whichever folder the run starts from
    random.seed(seed)
    np.random.seed(seed)
    # torch too when the test imports it only later (in its body or a helper): an unseeded torch starts from a
    # per-process random seed (torch.initial_seed()), so such a test's inputs, and its row, changed every run
    if "torch" in sys.modules or importlib.util.find_spec("torch") is not None:
        importlib.import_module("torch").manual_seed(seed)


def _functions(item) -> list:
    """The test function of ``item`` and the fixtures its suite defines (not pytest's own; none for a tutorial)."""
    if not isinstance(item, pytest.Function):
        return []
    info = getattr(item, "_fixtureinfo", None)
    fixtures = [defs[-1].func for defs in (info.name2fixturedefs.values() if info else ()) if defs]
    return [item.function, *(f for f in fixtures if not f.__module__.startswith(("_pytest", "pytest")))]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The row of ``item`` from each phase's report: a setup or teardown error is the row's result too
    (a fixture fusekit cannot provide, a teardown check that fails), an xfail is ``xfailed``."""
    report = (yield).get_result()
    row = _row(item)
    if report.passed and call.when == "call":
        row.result = "passed"
    elif getattr(report, "wasxfail", None) is not None and report.skipped:
        row.result, row.reason = "xfailed", f"expected to fail: {report.wasxfail}".rstrip(": ")
    elif report.skipped and call.when != "teardown":
        reason = str(call.excinfo.value) if call.excinfo else ""
        row.result, row.reason = ("not simulated (cube unit)" if "cube unit" in reason else "skipped"), reason
    elif report.failed and call.excinfo is not None:
        result, reason = conformance.explain(call.excinfo.value)
        if call.when != "call":
            reason = f"in {call.when}: {reason}"
        if call.when == "teardown" and row.result not in ("passed", "not run"):
            return  # the call's own failure stays the row's reason
        adapted = row.reason if row.reason == "NPU case run as Model" else ""
        row.result, row.reason = result, f"{reason} ({adapted})" if adapted else reason
        if result in conformance.NOT_FUSEKIT_FAILURES:
            _as_skip(report, item, f"{row.result}: {row.reason}")


def _as_skip(report, item, reason: str) -> None:
    """Make pytest's report of a row that is no fusekit failure (a sample defect, an unsupported or
    out-of-scope call, the cube unit) a skip with the row's reason, so that pytest's summary line,
    ``-rs`` and junit say what the table says (and print no traceback for it)."""
    line = item.location[1]  # 0-based, None when unknown; a skip's longrepr is (path, 1-based line, reason)
    report.outcome = "skipped"
    report.longrepr = (str(item.path), (line or 0) + 1, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """A file that fails to import: one row, classified from the import's own exception; when that is
    no fusekit failure (a missing pyasc name, the cube unit), pytest's collect report becomes a skip
    with the row's reason, as a test's does."""
    report = (yield).get_result()
    call = report.__dict__.get("call")
    if not report.failed or call is None or call.excinfo is None or not hasattr(collector, "path"):
        return
    exc = call.excinfo.value
    exc = exc.__cause__ or exc if isinstance(exc, pytest.Collector.CollectError) else exc
    result, reason = conformance.explain(exc)
    _state["rows"][report.nodeid] = conformance.Row(str(collector.path), "(collection)", result, reason)
    if result in conformance.NOT_FUSEKIT_FAILURES:
        report.outcome = "skipped"
        report.longrepr = (str(collector.path), 1, f"{result}: {reason}")


def pytest_collectreport(report):
    if report.nodeid in _state["rows"] or not (report.failed or report.skipped):
        return
    text = str(report.longrepr).strip().splitlines()
    last = next((t for t in reversed(text) if t.startswith("E ")), text[-1] if text else "")
    if report.skipped:  # a module-level skip (importorskip): (path, line, reason)
        last = report.longrepr[-1] if isinstance(report.longrepr, tuple) else last
    result = "skipped" if report.skipped else "not simulated (cube unit)" if "cube unit" in last else "error"
    _state["rows"][report.nodeid] = conformance.Row(str(report.fspath), "(collection)", result,
                                                    last.lstrip("E ").strip())


def pytest_sessionfinish(session, exitstatus):
    """The exit status of :func:`fusekit.pyasc.conformance.exit_status`, the same as ``fusekit conformance``'s
    (pytest's own for a usage error, an interrupt or an internal error)."""
    if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = conformance.exit_status(rows())


def pytest_terminal_summary(terminalreporter):
    rows = list(_state["rows"].values())
    if rows:
        terminalreporter.write_sep("=", "fusekit conformance: pyasc's tests on the simulator")
        terminalreporter.write_line(conformance.table(rows, _state.get("root")))
