"""What :meth:`fusekit.gen.op.GeneratedOp.check` returns: the run and, per output, its two comparisons, with
one verdict and a repr of one line (the run's arrays and Traces stay attributes, never printed).

The verdict per output (the README's, and ``fusekit run``'s): bit-exact to the operator's own model
(``hardware``, or ``fp32``), and within tolerance of ``exact``, except that in native float16/bfloat16 a float
output's distance to ``exact`` is information (every step rounds to the dtype) unless some output is invalid
(NaN or inf where the exact result is finite, ...: ``Comparison.invalid``), which fails however few.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass


@dataclass(eq=False, repr=False)
class CheckResult(Mapping):
    """A checked run of a generated operator.

    Attributes:
        op: the operator's name.
        run: the run (``fusekit.gen.op.GenRun``: outputs, tilings, Traces, precision, dtype, SoC).
        comparisons: output name -> (Comparison with the own model, bit for bit; Comparison with ``exact``),
            ``fusekit.verify.Comparison``.

    It is also the read-only mapping ``check`` returned before (``result["run"]``, ``result["y"]`` -> the pair,
    ``result.items()``), so code written against that keeps working.
    """

    op: str
    run: object
    comparisons: dict

    @property
    def native(self) -> bool:
        """Native precision in a 16-bit float: every step rounds to the dtype."""
        return self.run.precision == "native" and self.run.dtype != "float32"

    def informational(self, name: str) -> bool:
        """Whether output ``name``'s distance to ``exact`` is information, not part of the verdict (a float output
        in :attr:`native` precision; an integer output's allowance already covers native rounding)."""
        return self.native and self.comparisons[name][1].steps is None

    def output_passed(self, name: str) -> bool:
        """The verdict of output ``name`` (module doc)."""
        own, exact = self.comparisons[name]
        return own.passed and (exact.passed or (self.informational(name) and not exact.invalid))

    @property
    def passed(self) -> bool:
        """Every output's verdict."""
        return all(self.output_passed(name) for name in self.comparisons)

    def __repr__(self) -> str:
        parts = []
        for name, (own, exact) in self.comparisons.items():
            beyond = f"{exact.mismatches}/{exact.n} beyond" + (" (informational)" if self.informational(name) else "")
            invalid = f", {exact.invalid} invalid" if exact.invalid else ""
            model = f"bit-exact to {own.reference}" if own.bit_identical else \
                f"{own.mismatches} differ from {own.reference}"
            parts.append(f"{name}: {'PASS' if self.output_passed(name) else 'FAIL'}, {model}, vs exact max abs err "
                         f"{exact.max_abs_err:.3g} (loss {exact.loss:g}; {beyond}{invalid})")
        shape = list(self.run.y.shape) if self.run.outputs else []
        return (f"CheckResult({self.op} {self.run.dtype} {shape} {self.run.precision} on {self.run.soc.name}: "
                f"{'PASS' if self.passed else 'FAIL'}; {'; '.join(parts)})")

    # the mapping check returned before: "run" and each output's (own, exact) pair
    def __getitem__(self, key: str):
        if key == "run":
            return self.run
        return self.comparisons[key]

    def __iter__(self) -> Iterator[str]:
        yield "run"
        yield from self.comparisons

    def __len__(self) -> int:
        return 1 + len(self.comparisons)
