"""Run a whole Ascend C host program (an ``.asc`` file): its ``main`` natively, its kernel launches on the simulator.

``fusekit run add.asc`` compiles the file (kernels, ``main``, fusekit's ``acl/acl.h`` for the runtime calls and
the example's own ``data_utils.h``) and runs ``main`` in the current directory, as asc-devkit's examples run
``./demo`` from ``build/`` after ``python3 ../scripts/gen_data.py``; the example's own ``verify_result.py`` then
checks what it wrote. Each ``kernel<<<numBlocks, nullptr, stream>>>(args)`` runs the kernel on the simulator
with the device memory its pointers name (:mod:`fusekit.cpp.acl`), plainly, with the sanitizer, or recording
its Trace for the timing model.

``main`` runs in a child process: host code that crashes (a segfault) ends the child only, and the parent
reports it with the launches that ran before. The compile happens in the parent (a compile error is raised
here), the child loads the cached library.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from fusekit.asc.runtime import KernelError, launch
from fusekit.asc.trace import Trace

from . import acl, bridge
from .isolate import describe_exit
from .kernel import Library
from .memory import Pointer

MODES = ("run", "sanitize", "profile")


class ProgramError(ValueError):
    """The program cannot be run as asked (no ``main``, an unknown mode); one line."""


@dataclass
class LaunchRecord:
    """One ``kernel<<<blocks>>>(...)`` the program ran.

    Attributes:
        kernel, blocks, site: the kernel's name, its block count and the launch's ``file:line``.
        seconds: wall time of the simulated launch (s).
        instructions: instructions recorded on all cores.
        trace: the launch's Trace (mode ``profile``), else None.
        report: the sanitizer's Report (mode ``sanitize``), else None.
    """

    kernel: str
    blocks: int
    site: str
    seconds: float
    instructions: int
    trace: Trace | None = None
    report: object | None = None

    def line(self) -> str:
        file, _, line = self.site.rpartition(":")
        where = min(file, os.path.relpath(file), key=len)
        return (f"{self.kernel}<<<{self.blocks}>>> at {where}:{line}: {self.instructions} instructions simulated in "
                f"{self.seconds:.2f} s")


@dataclass
class ProgramResult:
    """What running a program gave.

    Attributes:
        status: ``main``'s return value, or None when it did not return (an error, a crash).
        launches: the kernel launches, in order.
        error: why the program stopped early (a KernelError's text, a crash), or None.
        output: what the program printed, when run ``quiet``.
        acl_failures: ACL calls that returned an error code (each said why on stderr).
    """

    status: int | None
    launches: list[LaunchRecord] = field(default_factory=list)
    error: str | None = None
    output: str = ""
    acl_failures: int = 0

    @property
    def ok(self) -> bool:
        """``main`` returned 0, no ACL call failed and every sanitizer report (if any) is clean."""
        return (self.status == 0 and self.error is None and not self.acl_failures
                and all(r.report is None or r.report.ok for r in self.launches))


@dataclass(frozen=True)
class _Job:
    path: str
    defines: dict
    soc: str | None
    mode: str
    argv: tuple


def compile_program(path: "str | Path", defines: dict[str, str] | None = None, soc: str | None = None) -> Library:
    """Compile the host program ``path`` (an ``.asc`` / ``.cpp`` file with ``main`` and its ``__global__`` kernels).

    Args:
        defines: ``-D`` definitions (``{"SCENARIO_NUM": "1"}``).
        soc: the SoC to simulate, by name or architecture (``dav-2201``); default Ascend910B1.

    Raises:
        CompileError: the source does not compile, or there is no compiler.
        ProgramError: the file has no ``main``.
        ValueError: an unknown SoC.
    """
    library = Library(path, defines, soc=soc)
    if not library.has_main:
        raise ProgramError(f"{path} has no main(): a kernel file runs from Python "
                           f"(fusekit.cpp.load({str(path)!r}).KERNEL[block_dim](...)), not as a program")
    return library


def run_program(program: "Library | str | Path", *, defines: dict[str, str] | None = None, soc: str | None = None,
                mode: str = "run", argv: tuple[str, ...] = (), cwd: "str | Path | None" = None,
                timeout: float | None = None, quiet: bool = False) -> ProgramResult:
    """Run a host program (see the module docstring), compiling it first if it is a path.

    Args:
        program: the program :func:`compile_program` compiled, or its path (compiled with ``defines`` and ``soc``).
        mode: ``run``, ``sanitize`` (every launch under :func:`fusekit.sanitize`) or ``profile`` (every launch's
            Trace kept, for :func:`fusekit.timing.predict`).
        argv: the program's command-line arguments (``argv[1:]``).
        cwd: the directory it runs in (default the current one).
        timeout: seconds the program may run (None: no limit); past it, it is stopped and ``error`` says so.
        quiet: keep the program's output (``ProgramResult.output``) instead of printing it.

    Raises:
        CompileError, ProgramError, ValueError: as :func:`compile_program`; ProgramError also for a ``mode`` not
            in :data:`MODES`.
    """
    if mode not in MODES:
        raise ProgramError(f"mode {mode!r}: choose from {', '.join(MODES)}")
    library = program if isinstance(program, Library) else compile_program(program, defines, soc)
    job = _Job(str(library.path.resolve()), dict(library.defines), library.soc.name, mode, tuple(argv))
    with tempfile.TemporaryDirectory(prefix="fusekit-program-") as scratch:
        job_file, result_file = Path(scratch, "job.pickle"), Path(scratch, "result.pickle")
        job_file.write_bytes(pickle.dumps(job))
        sys.stdout.flush()
        command = [sys.executable, "-m", "fusekit.cpp.program", str(job_file), str(result_file)]
        try:
            done = subprocess.run(command, cwd=cwd, timeout=timeout, capture_output=quiet, text=True)
            returncode, output = done.returncode, (done.stdout or "") + (done.stderr or "")
            stopped = None if result_file.is_file() else describe_exit(returncode, "the host program")
        except subprocess.TimeoutExpired as exc:
            output, stopped = str(exc.output or ""), f"the program ran past the {timeout:.0f} s limit and was stopped"
        if stopped is None:
            result = pickle.loads(result_file.read_bytes())
        else:
            result = ProgramResult(None, error=stopped)
            launches = Path(scratch, "launches.pickle")
            if launches.is_file():
                result.launches = pickle.loads(launches.read_bytes())
    result.output = output
    return result


class HostRun:
    """The host side of one program run in the child process: its device memory and its launches."""

    def __init__(self, library: Library, mode: str, soc: str, scratch: Path):
        self.library, self.mode, self.soc, self.scratch = library, mode, soc, scratch
        self.device = acl.Device(bridge.call_site)
        self.launches: list[LaunchRecord] = []
        self._libc = ctypes.CDLL(None)

    def acl(self, call: str, values: list) -> int:
        return acl.answer(self.device, call, values)

    def launch(self, name: str, blocks: int, args: list) -> None:
        site = bridge.call_site()
        self._libc.fflush(None)  # the host's printf output so far comes before the kernel's
        function, entry, types, *args = args
        kernel = self.library.instance(name, function, entry, types)
        values = [self._argument(name, param, value, kernel.types.get(param, "")) for param, value in
                  zip(kernel.decl.params, args)]
        started = time.perf_counter()
        report, trace = None, None
        try:
            if self.mode == "sanitize":
                from fusekit.sanitizer import sanitize

                report = sanitize(kernel, soc=self.soc)[blocks](*values)
                trace = report.trace
            else:
                trace = launch(kernel, blocks, tuple(values), soc=self.soc).trace
        except (TypeError, ValueError) as exc:
            raise bridge.launch_error(f"{name}<<<{blocks}>>>", str(exc)) from None
        record = LaunchRecord(name, blocks, site, time.perf_counter() - started,
                              sum(len(core) for core in trace.cores), trace if self.mode == "profile" else None,
                              report)
        self.launches.append(record)
        (self.scratch / "launches.pickle").write_bytes(pickle.dumps(self.launches))  # kept if main crashes later
        print(record.line(), flush=True)
        if report is not None and not report.ok:
            print(report.to_text(), flush=True)

    def _argument(self, kernel: str, param: str, value, code: str = ""):
        if not isinstance(value, Pointer):
            return value
        if value.dtype == "struct" and code.startswith("struct"):  # a struct by value: the host's bytes (launch.h)
            return ctypes.string_at(value.address, int(code[len("struct"):]))
        if value.address == 0:
            return None
        memory = self.device.view(value)
        if memory is None and self.device.was_freed(value.address):
            raise bridge.launch_error(f"{kernel}<<<...>>>", f"argument {param} ({value.address:#x}) is device memory "
                                      "that aclrtFree already gave back (a use after free)")
        if memory is None:
            raise bridge.launch_error(f"{kernel}<<<...>>>", f"argument {param} ({value.address:#x}) is not device "
                                      "memory from aclrtMalloc: a kernel reads GM only; copy host data to device "
                                      "memory with aclrtMemcpy(..., ACL_MEMCPY_HOST_TO_DEVICE) and pass that")
        return memory


def _child(job_file: str, result_file: str) -> int:
    job: _Job = pickle.loads(Path(job_file).read_bytes())
    library = Library(job.path, job.defines, soc=job.soc)  # the parent compiled it: a cache hit
    host = HostRun(library, job.mode, job.soc, Path(result_file).parent)
    bridge.host = host
    argv = [job.path, *job.argv]
    c_argv = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
    library.dll.fusekit_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    status, error = library.dll.fusekit_main(len(argv), c_argv), None
    ctypes.CDLL(None).fflush(None)
    try:
        bridge.reraise()
    except KernelError as exc:
        status, error = None, str(exc)
    except Exception as exc:  # noqa: BLE001 - a fault of the host program's use of the simulator: reported, not raised
        status, error = None, f"{type(exc).__name__}: {exc}"
    result = ProgramResult(status if error is None else None, host.launches, error,
                           acl_failures=host.device.failures)
    partial = Path(result_file).with_suffix(".partial")
    partial.write_bytes(pickle.dumps(result))
    os.replace(partial, result_file)
    return 0


if __name__ == "__main__":  # the child: run by its module name, so that what it pickles names this module
    from fusekit.cpp import program

    sys.exit(program._child(*sys.argv[1:3]))
