"""The two ways a lockstep group stops early: its cores disagree (:class:`Divergence`), or it meets something the
lockstep executor does not run (:class:`Unsupported`).

Both derive from ``BaseException``, as the scheduler's own signals do (``fusekit.asc.runtime``): a kernel's
``except Exception`` (or a library ``except KernelError``) must not swallow them, because neither is an error of the
kernel.
"""

from __future__ import annotations


class Divergence(BaseException):
    """The cores of a group take different ways: a branch, a plain-int conversion or a GM layout that differs between
    them. ``keep[k]`` says whether the group's k-th core goes the way of its first core; the group is undone and rerun
    as the two groups ``keep`` and not ``keep`` (``fusekit.asc.lockstep.launcher``)."""

    def __init__(self, keep: tuple[bool, ...]):
        super().__init__("the cores of a lockstep group diverge")
        self.keep = keep


class Unsupported(BaseException):
    """The lockstep executor does not run this: the whole launch runs on the reference executor instead, from the
    original GM contents. ``reason`` says what it met (``Trace.fallback``)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
