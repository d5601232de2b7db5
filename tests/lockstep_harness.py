"""Run one launch (or a host function that launches) on both executors and compare what they give.

The reference executor (``FUSEKIT_EXECUTOR=reference``: one core after another in block order) is the model; the
lockstep executor (the default) must give the same output bytes, the same Trace (every field of every ``Instr`` of
every core, compared with ``==``), the same overflows and end states, and the same KernelError.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import fields

import numpy as np

from fusekit.asc import KernelError
from fusekit.asc.lockstep.launcher import ENV
from fusekit.asc.trace import Instr


@contextlib.contextmanager
def executor(name: str | None):
    """``FUSEKIT_EXECUTOR=name`` inside the block (None: unset, the default choice)."""
    before = os.environ.get(ENV)
    if name is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def run_both(make_inputs, launch):
    """``launch(*make_inputs())`` on the reference executor, then on the default one, fresh inputs for each.

    Returns:
        ((reference result or KernelError, its inputs after the run), (default result or KernelError, its inputs)).
    """
    out = []
    for name in ("reference", None):
        inputs = make_inputs()
        with executor(name):
            try:
                result = launch(*inputs)
            except (KernelError, ValueError, TypeError) as exc:  # a launch both executors refuse alike
                result = exc
        out.append((result, inputs))
    return out


def _instr_diff(a: Instr, b: Instr) -> str:
    return ", ".join(f"{f.name}: {getattr(a, f.name)!r} != {getattr(b, f.name)!r}" for f in fields(Instr)
                     if getattr(a, f.name) != getattr(b, f.name))


def assert_same_trace(ref, got) -> None:
    """Every Instr of every core equal (each field with ==), and the overflows and end states."""
    assert len(ref.cores) == len(got.cores), (len(ref.cores), len(got.cores))
    for core, (a, b) in enumerate(zip(ref.cores, got.cores)):
        assert len(a) == len(b), f"aiv({core}): {len(a)} instructions on the reference, {len(b)} in lockstep"
        for x, y in zip(a, b):
            assert x == y, f"aiv({core}) instruction {x.seq} ({x.op}) differs: {_instr_diff(x, y)}"
    assert ref.overflows == got.overflows
    assert [repr(s) for s in ref.end_state] == [repr(s) for s in got.end_state]
    assert (ref.kernel, ref.soc, ref.block_dim, ref.ub_bytes, ref.gm, ref.stand_ins, ref.auto_sync) == \
        (got.kernel, got.soc, got.block_dim, got.ub_bytes, got.gm, got.stand_ins, got.auto_sync)


def assert_same_bytes(ref_arrays, got_arrays) -> None:
    """The arguments after both runs hold the same bytes (outputs, and inputs left as they were)."""
    for a, b in zip(ref_arrays, got_arrays):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes()


def assert_same_error(ref: KernelError, got: KernelError) -> None:
    """The same KernelError: message, core, op, file:line, tensor, element and byte range, kind, partial Trace."""
    assert str(ref) == str(got)
    for name in ("kind", "core", "op", "file", "line", "tensor", "start", "stop", "mem", "buffer", "byte_range",
                 "pipes"):
        assert getattr(ref, name) == getattr(got, name), name
    if ref.trace is not None:
        assert_same_trace(ref.trace, got.trace)


def _outputs(result) -> list:
    """A host run's output arrays (GenRun.outputs, FusedAddScaleRun.y); none for a LaunchResult."""
    outputs = getattr(result, "outputs", None)
    if isinstance(outputs, dict):
        return [outputs[k] for k in sorted(outputs)]
    y = getattr(result, "y", None)
    return [y] if isinstance(y, np.ndarray) else []


def compare(make_inputs, launch, *, lockstep: bool | None = True):
    """Run ``launch`` both ways and assert the same outputs, Trace(s) and errors; ``lockstep``: the default run must
    have taken the lockstep executor (True), the reference (False), or either (None). ``launch`` returns a
    LaunchResult, or something with ``.launches`` (a list of them).

    Returns:
        The default run's result.
    """
    (ref, ref_in), (got, got_in) = run_both(make_inputs, launch)
    if isinstance(ref, KernelError):
        assert isinstance(got, KernelError), f"the lockstep run did not raise {ref}"
        assert_same_error(ref, got)
        return got
    if isinstance(ref, Exception):
        assert type(got) is type(ref) and str(got) == str(ref), (ref, got)
        return got
    assert not isinstance(got, KernelError), f"the lockstep run raised {got}"
    assert_same_bytes(ref_in, got_in)
    assert_same_bytes(_outputs(ref), _outputs(got))
    ref_launches = getattr(ref, "launches", [ref])
    got_launches = getattr(got, "launches", [got])
    assert len(ref_launches) == len(got_launches)
    for a, b in zip(ref_launches, got_launches):
        assert a.trace.executor == "reference"
        if lockstep is not None:
            want = "lockstep" if lockstep else "reference"
            assert b.trace.executor == want, f"{b.trace.kernel} ran on {b.trace.executor}: {b.trace.fallback}"
        assert_same_trace(a.trace, b.trace)
    return got
