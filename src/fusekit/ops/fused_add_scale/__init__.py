"""FusedAddScale: ``y = (x1 + x2) * scale`` as one kernel (the seed article's operator)."""

from .host import (KERNEL, OP, PRECISIONS, FusedAddScaleRun, check_inputs, exact, fused_add_scale, model_of,
                   overflow_warning, reference, run, scale_warning)

__all__ = ["KERNEL", "OP", "PRECISIONS", "FusedAddScaleRun", "check_inputs", "exact", "fused_add_scale", "model_of",
           "overflow_warning", "reference", "run", "scale_warning"]
