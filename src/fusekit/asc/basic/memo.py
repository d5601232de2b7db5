"""Analyses an instruction repeats: lane walks, overlap verdicts and reduction plans are pure functions of the
instruction's key (its :meth:`~.iteration.Iteration.key` and its operands' addresses, lengths and dtypes), and a
kernel's loop issues the same instruction again and again, so each is worked out once."""

from __future__ import annotations

from typing import Callable, Hashable, TypeVar

T = TypeVar("T")


class Memo:
    """A bounded map from keys to results; emptied when it holds ``size`` entries (kernels reuse few keys).

    A ``compute`` that raises (a KernelError: a rule the instruction breaks) stores nothing, so the next call with
    the key raises again. Arrays in a result are shared: make them read-only before returning them.
    """

    def __init__(self, size: int = 4096):
        self._found: dict = {}
        self._size = size

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        found = self._found.get(key)
        if found is None:
            if len(self._found) >= self._size:
                self._found.clear()
            found = self._found[key] = compute()
        return found
