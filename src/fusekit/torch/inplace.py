"""Operators that write into their arguments: ``torch.ops.fusekit.fused_add_rms_norm`` (vLLM's fused_add_rms_norm).

    torch.ops.fusekit.fused_add_rms_norm(x, residual, weight, 1e-6)   # returns None
    # now residual = x + residual (the old residual), x = RMSNorm(residual) * weight

Both writes come from one run of the generated ``add_rms_norm`` kernel (``fusekit.gen.catalogue``: ``s = x + r``,
``y = s * rsqrt(mean(s * s) + eps) * gamma``), copied into the caller's tensors with ``Tensor.copy_``, so ``x`` and
``residual`` may be views of a larger buffer (rows of a batch, strided columns): only the elements they view change.
The schema marks both as mutated (``Tensor(a!)``, ``mutates_args``), so functionalization (torch.compile, AOTAutograd)
knows of the writes; the fake kernel returns nothing and reads no data.
"""

from __future__ import annotations

import torch

from .ops import NAMESPACE, spec_of, to_numpy

NAME = "fused_add_rms_norm"


def _run(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, epsilon: float = 1e-6, *,
         precision: "str | None" = None, soc: "str | None" = None) -> None:
    spec = spec_of("add_rms_norm")
    tensors = [x, residual, weight]
    if x.shape != residual.shape:
        raise ValueError(f"{NAMESPACE}::{NAME}: x{list(x.shape)} and residual{list(residual.shape)} differ in shape; "
                         "both are written in place, so they must have one shape")
    if tuple(weight.shape) != tuple(x.shape[-1:]):
        raise ValueError(f"{NAMESPACE}::{NAME}: weight{list(weight.shape)} must be ({x.shape[-1]},), one per column")
    spec.check(tensors)  # devices and dtypes
    y, s = spec.run([to_numpy(t) for t in tensors], {"eps": float(epsilon)}, precision, soc)
    from .ops import from_numpy

    residual.copy_(from_numpy(s.copy()).reshape(residual.shape))  # the sum first: y was computed from it
    x.copy_(from_numpy(y.copy()).reshape(x.shape))


def register() -> None:
    """Register ``fusekit::fused_add_rms_norm`` (idempotent)."""
    if hasattr(getattr(torch.ops, NAMESPACE), NAME):
        return
    schema = ("(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float epsilon=1e-06, *, str? precision=None, "
              "str? soc=None) -> ()")
    op = torch.library.custom_op(f"{NAMESPACE}::{NAME}", _run, mutates_args=("x", "residual"), schema=schema)

    @op.register_fake
    def _(x, residual, weight, epsilon=1e-6, *, precision=None, soc=None):
        if x.shape != residual.shape:
            raise ValueError(f"{NAMESPACE}::{NAME}: x and residual differ in shape")
        return None
