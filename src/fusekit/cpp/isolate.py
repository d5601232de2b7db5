"""Run user C++ (host code, a tiling function) in a child process, so that a crash in it is reported, not fatal.

A segfault in a host program or a tiling function would end the Python process that loaded it; here the
call runs in a forked child (spawned where there is no fork) and its result or exception comes back through a
pipe. A child that dies instead raises :class:`Crashed`, naming the signal.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from typing import Any, Callable


class Crashed(RuntimeError):
    """The child running user code died (a signal, or exit() before it returned); one line."""


def describe_exit(code: int | None, what: str) -> str:
    """One sentence for a child that ended with ``code`` without returning (``what`` ran in it)."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"{what} crashed ({name}) in its own code; fusekit's process is unharmed"
    return f"{what} stopped with exit status {code} before it returned (exit() or abort())"


def isolated(function: Callable[..., Any], *args, what: str = "the C++ code") -> Any:
    """``function(*args)`` in a child process: its result, or the exception it raised, raised here.

    Raises:
        Crashed: the child died before it answered.
    """
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_run, args=(send, function, args), daemon=True)
    child.start()
    send.close()
    try:
        ok, value = receive.recv()
    except EOFError:
        child.join()
        raise Crashed(describe_exit(child.exitcode, what)) from None
    finally:
        receive.close()
    child.join()
    if not ok:
        raise value
    return value


def _run(send, function, args) -> None:
    try:
        answer = (True, function(*args))
    except BaseException as exc:  # noqa: BLE001 - every exception goes back to the parent
        answer = (False, exc)
    send.send(answer)
    send.close()
