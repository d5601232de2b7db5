"""Seeded-bug corpus for ``fusekit.sanitize``: small pyasc kernels with one known defect each.

Every module of this package holds buggy kernels, the corrected kernel next to each, and a
module-level ``CASES`` list of :class:`Case`: how to launch a kernel (core count, argument builder
for a size, ``outputs=`` names, launch options) and exactly which findings the sanitizer must
produce (:class:`Expect`; none for a corrected kernel). ``tests/test_sanitizer_corpus.py`` runs
them all.

Instructions are located by marker comments: a kernel source line ending in ``# <name>`` is the
line ``Expect.at`` calls ``name`` (markers are unique within their module).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from fusekit.asc import KernelFunction


@dataclass(frozen=True)
class Expect:
    """One finding a case must produce.

    Attributes:
        tool, kind: as in ``fusekit.sanitizer.Finding``.
        at: markers of the instruction(s) the finding names, in the finding's order (first, second).
        cores: every core involved, if meaningful (for a finding merged over several cores, all
            of them; see ``test_merged_findings_list_every_core``).
        pipes: the ``pipes`` field (pipe names, ``"MTE2"``, ``"V"`` ...), if any.
        mem, buffer: ``"GM"``/``"UB"`` and the buffer name, where meaningful.
        span: byte range ``(start, stop)``, where meaningful.
        count: exact merged count; None means 1 (a KernelError that stops the launch, an end-of-run
            check of one buffer, or an instruction that one core runs once).
        says: substrings (case-insensitive) the finding's message must contain.
    """

    tool: str
    kind: str
    at: tuple[str, ...] = ()
    cores: tuple[int, ...] | None = None
    pipes: tuple[str, ...] | None = None
    mem: str | None = None
    buffer: str | None = None
    span: tuple[int, int] | None = None
    count: int | None = None
    says: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    """One launch of a corpus kernel under the sanitizer.

    Attributes:
        name: test id.
        kernel: the ``@asc.jit`` kernel.
        cores: block_dim of the launch.
        size: the problem size handed to ``args``.
        args: builds the launch arguments for a size: returns ``(args, kwargs)``.
        outputs: GM arguments that are pure outputs (``sanitize(outputs=...)``).
        expect: the findings, exactly (empty: the kernel is correct at this size).
        strict, soc: launch options.
        replay: also run with ``replay=True``: a racy case's replay must change the outputs (a
            race the NPU can really show), a clean case must report no replay.
        check: optional check of the in-order outputs, ``check(arrays_by_name)``.
        defect: which defect of the kernel this case shows (documentation).
    """

    name: str
    kernel: KernelFunction
    cores: int
    size: int
    args: Callable[[int], tuple[tuple, dict]]
    outputs: tuple[str, ...] = ("y",)
    expect: tuple[Expect, ...] = ()
    strict: bool = True
    soc: str | None = None
    replay: bool = False
    check: Callable[[dict], None] | None = None
    defect: str = ""
    module: str = field(default="", compare=False)

    @property
    def source_file(self) -> str:
        return self.kernel.fn.__code__.co_filename


def line_of(path: str, marker: str) -> int:
    """Line number of the single line of ``path`` carrying ``# <marker>``."""
    with open(path, encoding="utf-8") as f:
        hits = [i for i, text in enumerate(f, start=1) if re.search(rf"#.*<{re.escape(marker)}>", text)]
    assert len(hits) == 1, f"marker <{marker}> found {len(hits)} times in {path}"
    return hits[0]


def where(case: Case, marker: str) -> str:
    """``file:line`` the sanitizer reports for the instruction at ``marker`` of ``case``'s module."""
    return f"{case.source_file}:{line_of(case.source_file, marker)}"


def all_cases() -> list[Case]:
    """The CASES of every module of this package."""
    cases = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for case in module.CASES:
            cases.append(Case(**{**case.__dict__, "module": info.name}))
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    return cases


def rand(n: int, dtype, seed: int = 0) -> np.ndarray:
    """n standard-normal values of ``dtype``."""
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)

