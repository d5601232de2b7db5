"""pytest plugin: ``pytest -p fusekit.pyasc_plugin <pyasc checkout>/python/test/...``.

Binds ``asc`` to fusekit's simulator for the whole session (before pyasc's conftest files import
``asc.runtime.config``), collects pyasc's tutorials (``python/tutorials/*/*.py``, run as
``python FILE``) besides its ``test_*.py``, runs each kernel launch a second time under
``fusekit.sanitize`` (on copies of its arguments; ``--fusekit-no-sanitize`` turns that off), and
prints the conformance table (:mod:`fusekit.conformance`) at the end. Tests of files that use the
cube unit are skipped as "not simulated (cube unit)".
"""

from __future__ import annotations

import contextlib
import runpy
import sys
from pathlib import Path

import pytest

from fusekit import conformance

_state = {"stack": None, "rows": {}, "current": None, "sanitize": True, "order": []}


def pytest_addoption(parser):
    group = parser.getgroup("fusekit", "pyasc conformance on fusekit")
    group.addoption("--fusekit-no-sanitize", action="store_true", help="do not sanitize each kernel launch")


def _bind() -> None:
    if _state["stack"] is None:
        from fusekit import asc, bridge
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
    """A file of cube-unit kernels (matmul): reported, not imported (its module-level names are cube APIs)."""

    def runtest(self):
        pytest.skip("not simulated (cube unit)")


class CubeFile(pytest.File):
    def collect(self):
        yield CubeItem.from_parent(self, name="(cube unit)")


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".py" and "tutorials" in file_path.parts and not file_path.name.startswith("test_"):
        if conformance.needs_cube(file_path):
            return CubeFile.from_parent(parent, path=file_path)
        return TutorialFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    if conformance.needs_cube(module_path):
        return CubeFile.from_parent(parent, path=module_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    from fusekit.pyasc_shim import config as shim_config
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
        _state["rows"][key] = conformance.Row(str(item.path), item.name, "", sanitized=_state["sanitize"])
    return _state["rows"][key]


def rows() -> "list[conformance.Row]":
    """The rows of the last session, in the order the tests ran."""
    return list(_state["rows"].values())


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Seed numpy, random and torch from the test's node id, so that a test drawing unseeded random inputs
    (e.g. generalization/adv/test_quant.py) gives the same row on every run."""
    import random
    import zlib

    import numpy as np

    seed = zlib.crc32(f"{item.path.name}::{item.name}".encode())  # the same whichever folder the run starts from
    random.seed(seed)
    np.random.seed(seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def pytest_runtest_makereport(item, call):
    if call.when == "setup" and call.excinfo is not None and call.excinfo.errisinstance(pytest.skip.Exception):
        row = _row(item)
        row.result, row.reason = "skipped", str(call.excinfo.value)
        if "cube unit" in row.reason:
            row.result = "not simulated (cube unit)"
    if call.when != "call":
        return
    row = _row(item)
    if call.excinfo is not None and call.excinfo.errisinstance(pytest.skip.Exception):
        row.result, row.reason = "not simulated (cube unit)", "uses the cube unit (matmul)"
        return
    if call.excinfo is None:
        row.result = "passed"
    else:
        row.result, reason = conformance.explain(call.excinfo.value)
        row.reason = f"{reason} ({row.reason})" if row.reason else reason


def pytest_collectreport(report):
    if report.failed:
        path = report.fspath
        text = str(report.longrepr).strip().splitlines()
        last = next((t for t in reversed(text) if t.startswith("E ")), text[-1] if text else "")
        result = "not simulated (cube unit)" if conformance.needs_cube(path) or "cube unit" in last else "error"
        if "pyasc has asc." in last and result == "error":
            result = "unsupported"
        _state["rows"][report.nodeid] = conformance.Row(path, "(collection)", result, last.lstrip("E ").strip())


def pytest_terminal_summary(terminalreporter):
    rows = list(_state["rows"].values())
    if rows:
        terminalreporter.write_sep("=", "fusekit conformance: pyasc's tests on the simulator")
        terminalreporter.write_line(conformance.table(rows, _state.get("root")))
