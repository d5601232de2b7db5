"""Replay: a generated operator simulated once per input signature, its later calls computed by its hardware model.

A generated kernel's instruction stream depends on its inputs' shapes, dtypes and options, never on their values
(the generator emits no branch or address on data; issue 20's performance study, design (ii), conditions 1-3), and
every generated operator has a whole-array model of the same instructions (``GeneratedOp.reference("hardware")``,
``"fp32"``) that the catalogue's differential tests pin bit for bit against the simulator. So once a signature has
been simulated, a later call with the same signature has the same Trace, and its outputs are the model's:

- the **first** call of a signature runs the simulator (every check, the Trace), then the model on the same inputs;
  the signature replays only if the two agree bit for bit (a disagreement, or a model that raises, is a generator
  bug: that signature is simulated on every call, so nothing wrong is ever returned);
- a **later** call evaluates the model over the whole arrays and returns the first call's Traces (shared, with
  ``Trace.executor == "replay"``); where a row sum of the model overflowed from finite inputs (the one value-dependent
  field of a Trace, ``Trace.overflows``) the call is simulated instead, so the warning names the kernel's line.

Calls with a launcher, or launch options other than ``strict``, ``overflow`` and ``auto_sync`` (an executor,
``sample_cores``, faults, ...), are always simulated. ``fusekit.torch.compile`` replays by default (its first call per
shape is the full simulation; ``replay=False`` simulates every call); ``GeneratedOp.run`` replays with
``replay=True``. Not for the sanitizer, which always runs the kernel.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import replace

import numpy as np

from fusekit.asc.runtime import LaunchResult

SIGNATURES = 32  # signatures an operator keeps (least recently used goes first)
_KEYED_OPTIONS = frozenset({"strict", "overflow", "auto_sync"})  # launch options that may vary the Trace
_NEVER = object()  # the model disagreed with the simulator on this signature: simulate every call
_LOCK = threading.Lock()


def run(op, arrays: tuple, options: dict, kwargs: dict):
    """``op.run(*arrays, **options, **kwargs)``, replayed where the module docstring allows; returns a GenRun.

    Args:
        op: a ``fusekit.gen.GeneratedOp``. arrays: its tensor inputs (numpy). options: ``run``'s keywords
            (soc, core_num, buffer_num, precision, tile_length, dtype, launcher). kwargs: attributes and launch
            options.

    Raises: as ``GeneratedOp.run``.
    """
    if options.get("launcher") is not None or set(kwargs) - {a.name for a in op.graph.attrs} - _KEYED_OPTIONS:
        return op.run(*arrays, **options, **kwargs)
    key = _signature(arrays, options, kwargs)
    with _LOCK:
        cache = op._replays
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
    if hit is _NEVER:
        return op.run(*arrays, **options, **kwargs)
    if hit is None:
        result = op.run(*arrays, **options, **kwargs)
        _remember(cache, key, result if _agrees(op, arrays, kwargs, result) else _NEVER)
        return result
    started = time.perf_counter()
    overflowed: list = []
    outputs = _model(op, arrays, kwargs, hit, overflowed)
    if overflowed:  # the simulator names the instruction and its line (GeneratedOp._warn_overflow)
        return op.run(*arrays, **options, **kwargs)
    named, _ = op._bind(arrays, dict(kwargs))
    done = replace(hit, outputs=outputs, wall_s=time.perf_counter() - started)
    return op._warn_overflow(named, done, kwargs)


def _signature(arrays: tuple, options: dict, kwargs: dict) -> tuple:
    """What decides the instruction stream: each input's dtype and shape (and a one-element input's value, which a
    kernel may take as a scalar argument), the options, the attributes and launch options."""
    inputs = tuple((a.dtype.str, a.shape, a.tobytes() if a.size == 1 else b"") if isinstance(a, np.ndarray)
                   else (type(a).__name__, repr(a)) for a in arrays)
    return (inputs, tuple(sorted((k, repr(v)) for k, v in options.items())),
            tuple(sorted((k, repr(v)) for k, v in kwargs.items())))


def _model(op, arrays: tuple, kwargs: dict, run, overflowed: list) -> dict:
    """The outputs of ``op``'s model for ``run``'s precision and overflow mode (``GeneratedOp.reference``)."""
    attrs = {k: v for k, v in kwargs.items() if k not in _KEYED_OPTIONS}
    model = "hardware" if run.precision == "native" else "fp32"
    return op.reference(model, *arrays, soc=run.soc, precision_dtype=run.dtype, overflow_mode=run.overflow,
                        overflowed=overflowed, **attrs)


def _agrees(op, arrays: tuple, kwargs: dict, result) -> bool:
    """The simulated ``result`` has nothing value-dependent in its Traces and its model gives its outputs' bits."""
    if any(r.trace.overflows for r in result.launches):
        return False
    overflowed: list = []
    try:
        model = _model(op, arrays, kwargs, result, overflowed)
    except Exception:  # noqa: BLE001 - a model that cannot evaluate this call disagrees: the call is simulated
        return False
    return not overflowed and model.keys() == result.outputs.keys() and \
        all(_same_bits(model[k], y) for k, y in result.outputs.items())


def _same_bits(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and \
        np.ascontiguousarray(x).view(np.uint8).tobytes() == np.ascontiguousarray(y).view(np.uint8).tobytes()


def _remember(cache: OrderedDict, key: tuple, result) -> None:
    """Keep the signature's launches (their Traces marked as replayed) or _NEVER; drop the least recent past
    SIGNATURES."""
    if result is not _NEVER:
        launches = [LaunchResult(r.trace.relabelled("replay"), 0.0) for r in result.launches]
        result = replace(result, outputs={}, launches=launches)
    with _LOCK:
        cache[key] = result
        while len(cache) > SIGNATURES:
            cache.popitem(last=False)
