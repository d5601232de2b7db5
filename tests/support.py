"""What several test files share: the repository's paths, GM/UB helper kernels, kernel-line helpers, the CLI runner.

Helper kernels here are plain ``@asc.jit`` helpers (plain calls inside a kernel, tests/asc_api/test_launch.py), so a
kernel using them reports its own lines; the files keep the kernels a test reads as its subject.
"""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path

import numpy as np
import pytest

from fusekit import asc
from fusekit.cli import main

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


# -- helper kernels ------------------------------------------------------------------------------

@asc.jit
def gm_view(addr: asc.GlobalAddress, size: int | None = None):
    """GlobalTensor over ``size`` elements from ``addr`` (None: the whole buffer)."""
    t = asc.GlobalTensor()
    t.set_global_buffer(addr, size)
    return t


@asc.jit
def ub_buf(pipe: asc.TPipe, dtype, n: int):
    """A TBuf of ``n`` elements of ``dtype`` as a LocalTensor."""
    ub = asc.TBuf(asc.TPosition.VECCALC)  # messages and the trace call it "ub"
    pipe.init_buffer(buf=ub, num=n * dtype.sizeof())
    return ub.get(dtype)


# -- kernel lines and bits -----------------------------------------------------------------------

def line_of(kernel, marker: str) -> int:
    """Source line number of the single kernel line carrying ``# <marker>``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    hits = [first + i for i, text in enumerate(lines) if f"# <{marker}>" in text]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]


@contextlib.contextmanager
def raises_at(kernel, marker: str, match: str, *, core: int = 0):
    """Expect a KernelError matching ``match``, raised on ``core`` at the kernel line marked ``# <marker>``."""
    with pytest.raises(asc.KernelError, match=match) as info:
        yield info
    err, line, file = info.value, line_of(kernel, marker), kernel.fn.__code__.co_filename
    assert (err.core, err.file, err.line) == (core, file, line), str(err)
    assert f" on aiv({core}) at {file}:{line}: " in str(err)


def bits(a: np.ndarray) -> np.ndarray:
    """Raw bit patterns, so that comparisons are bit-exact (NaN, -0.0)."""
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(bits(actual), bits(expected))


def assert_poisoned(a: np.ndarray) -> None:
    """Never-written UB reads back as all-ones bytes, which is NaN in every float dtype."""
    assert a.size and np.all(np.ascontiguousarray(a).view(np.uint8) == 0xFF), a
    assert np.all(np.isnan(a.astype(np.float32)))


# -- the CLI runner ------------------------------------------------------------------------------

def cli(capsys, *argv) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``fusekit ARGV`` (argparse errors exit through SystemExit)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> bool:
    return err.count("\n") == 1 and "Traceback" not in err
