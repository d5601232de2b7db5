"""One kernel source, two executors: fusekit's simulator and Huawei's pyasc.

A kernel module names its API ``asc``: ``from fusekit import asc`` (fusekit's kernels) or
``import asc`` (pyasc's). :func:`rebound` executes a fresh copy of such a module, and of the kernel
modules it imports, with ``asc`` bound to the other implementation, the way Triton's interpreter
runs Triton kernels by rebinding the language module. So:

- :func:`pyasc_kernel` gives a shipped kernel as a real pyasc ``JITFunction`` (for :mod:`fusekit.pyasc.emit`
  and the NPU path), and
- :func:`simulate` gives a kernel written for real pyasc as a fusekit kernel, without editing its file.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import sys
import threading
import types
import typing
from pathlib import Path

from fusekit import asc as fusekit_asc

_lock = threading.RLock()
PYASC_INSTALL = "pip install 'ascend-fusekit[pyasc]'  (pyasc 1.1.1 needs numpy<2 and CPython 3.9-3.12)"
# fusekit modules whose kernels import each other; rebound together
KERNEL_MODULES = ("fusekit.ops.elementwise",)


class PyascMissing(RuntimeError):
    """pyasc is not installed; the message gives the install command."""


def require_pyasc() -> types.ModuleType:
    """The real pyasc ``asc`` module.

    Raises:
        PyascMissing: pyasc (PyPI ``pyasc``) cannot be imported.
    """
    try:
        import asc
    except ImportError as exc:
        raise PyascMissing(f"this needs Huawei's pyasc, which is not installed ({exc}); install it with: "
                           f"{PYASC_INSTALL}") from None
    if asc is fusekit_asc:
        raise PyascMissing("'asc' is fusekit's simulator here, not pyasc; install pyasc with: " + PYASC_INSTALL)
    return asc


@contextlib.contextmanager
def rebound(asc_module: types.ModuleType):
    """While inside, ``from fusekit import asc`` and ``import asc`` both give ``asc_module``.

    For fusekit's simulator, pyasc's host-side modules that kernel files import next to ``asc``
    (``asc.runtime.config``, ``asc.lib.runtime``, ``asc.lib.host``, ``asc.language``) are the
    stand-ins of :mod:`fusekit.pyasc.shim`. Every ``asc`` entry of ``sys.modules`` is restored afterwards.
    """
    _lock.acquire()  # the binding is process-wide: one rebinding at a time
    # `from fusekit import asc` reads the package's attribute: rebind it on the package object, which is
    # already imported (this module is inside it), rather than import the facade from below it
    fusekit_package = sys.modules["fusekit"]
    saved_attr = fusekit_package.asc
    saved = {name: module for name, module in sys.modules.items() if name == "asc" or name.startswith("asc.")}
    if asc_module is fusekit_asc:
        asc_module, stand_ins = _simulator_package()
        for name in saved:  # no submodule of an imported real pyasc may leak into a simulated run
            del sys.modules[name]
        sys.modules.update(stand_ins)
    fusekit_package.asc = asc_module
    sys.modules["asc"] = asc_module
    try:
        yield
    finally:
        fusekit_package.asc = saved_attr
        for name in [n for n in sys.modules if n == "asc" or n.startswith("asc.")]:
            del sys.modules[name]
        sys.modules.update(saved)
        _lock.release()


def _simulator_package() -> tuple[types.ModuleType, dict[str, types.ModuleType]]:
    """An ``asc`` package made of fusekit.asc's API plus the stand-ins for pyasc's host modules
    (:mod:`fusekit.pyasc.shim`: ``asc.runtime.config``, ``asc.lib.runtime``, ``asc.lib.host``,
    ``asc.language.core.struct`` / ``.dtype``)."""
    from . import shim

    stand_ins = shim.modules()
    package = types.ModuleType("asc")
    package.__dict__.update({name: getattr(fusekit_asc, name) for name in fusekit_asc.__all__},
                            __getattr__=fusekit_asc.__getattr__, __path__=[],
                            runtime=stand_ins["asc.runtime"], lib=stand_ins["asc.lib"],
                            language=stand_ins["asc.language"])
    return package, stand_ins


def load_rebound(path: "str | Path", asc_module: types.ModuleType, also: tuple[str, ...] = KERNEL_MODULES):
    """A fresh copy of the module in ``path`` (and of the fusekit kernel modules ``also`` it may
    import) executed with ``asc`` bound to ``asc_module``. sys.modules is left as it was: modules
    the file imported from its own folder (its helpers) are dropped again, bound as they are to ``asc_module``."""
    path = Path(path)
    sources = {name: Path(importlib.import_module(name).__file__) for name in also}
    with rebound(asc_module):
        before = dict(sys.modules)
        fresh = {name: _exec_copy(source, name) for name, source in sources.items()}
        sys.modules.update(fresh)
        try:
            return _exec_copy(path, f"_fusekit_rebound_{path.stem}")
        finally:
            folder = str(path.resolve().parent)
            for name, module in list(sys.modules.items()):
                if name not in before and str(getattr(module, "__file__", "") or "").startswith(folder):
                    del sys.modules[name]  # the file's neighbours, imported with this binding
            for name in fresh:
                sys.modules[name] = before[name]  # imported above, before the binding
            sys.modules.pop(f"_fusekit_rebound_{path.stem}", None)


def _exec_copy(path: Path, name: str) -> types.ModuleType:
    """Execute ``path`` as a new module called ``name`` (registered while it runs: dataclasses and
    pickling look modules up there)."""
    module = types.ModuleType(name)
    module.__file__ = str(path)
    source = path.read_text(encoding="utf-8")
    sys.modules[name] = module
    exec(compile(source, str(path), "exec", dont_inherit=True), module.__dict__)
    return module


def pyasc_kernel(kernel: fusekit_asc.KernelFunction):
    """The pyasc ``JITFunction`` of a fusekit kernel, traced from the same source file.

    Raises:
        PyascMissing: pyasc is not installed.
    """
    asc = require_pyasc()
    module = load_rebound(inspect.getsourcefile(kernel.fn), asc)
    for jit in vars(module).values():
        fn = getattr(jit, "fn", None)
        if inspect.isfunction(fn) and any(isinstance(a, str) for a in fn.__annotations__.values()):
            # `from __future__ import annotations` leaves them as text, and pyasc's jit needs the objects (it
            # tests issubclass on each); the module is pyasc's own copy, so no function of the user's changes
            fn.__annotations__ = typing.get_type_hints(fn)
    return getattr(module, kernel.fn.__name__)


def simulate(kernel, name: str | None = None) -> fusekit_asc.KernelFunction:
    """Run a kernel written for real pyasc on fusekit's simulator: ``simulate(kernel)[core_num](*args)``.

    Args:
        kernel: a pyasc ``JITFunction`` (anything with the decorated function as ``.fn``), or the
            path of the kernel's Python file (then ``name`` picks the kernel), which works without
            pyasc installed: the file's ``import asc`` gets fusekit's simulator.
        name: the kernel's name, when ``kernel`` is a path.

    Returns:
        The same kernel as a fusekit ``KernelFunction`` (helpers included, rebound with it).

    Raises:
        ValueError: the file has no kernel ``name``.
        TypeError: ``kernel`` is neither a path nor a jit kernel.
    """
    if isinstance(kernel, (str, Path)):
        path, name = Path(kernel), name
        if name is None:
            raise ValueError("simulate(path, name): give the kernel's name with the path")
    elif hasattr(kernel, "fn") and callable(kernel.fn):
        path, name = Path(inspect.getsourcefile(kernel.fn)), kernel.fn.__name__
    else:
        raise TypeError(f"expected a pyasc @asc.jit kernel or a file path, got {type(kernel).__name__}")
    module = load_rebound(path, fusekit_asc)
    found = getattr(module, name, None)
    if not isinstance(found, fusekit_asc.KernelFunction):
        kernels = sorted(k for k, v in vars(module).items() if isinstance(v, fusekit_asc.KernelFunction))
        close = difflib.get_close_matches(name, kernels, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"{path} has no @asc.jit kernel named {name!r}{hint} (its kernels: {', '.join(kernels) or 'none'})")
    return found
