"""FusedAddScale: ``y = (x1 + x2) * scale`` as one kernel (the seed article's operator)."""

from .host import KERNEL, OP, PRECISIONS, FusedAddScaleRun, check_inputs, fused_add_scale, model_of, reference, run

__all__ = ["KERNEL", "OP", "PRECISIONS", "FusedAddScaleRun", "check_inputs", "fused_add_scale", "model_of", "reference", "run"]
