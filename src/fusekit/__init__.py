"""fusekit: build fused Ascend C operators in Python and run them on a CPU simulator of the NPU."""

from fusekit import asc
from fusekit.asc import KernelError
from fusekit.bridge import simulate
from fusekit.ops.fused_add_scale import fused_add_scale
from fusekit.sanitizer import sanitize
from fusekit.timing import profile

__all__ = ["asc", "KernelError", "fused_add_scale", "profile", "sanitize", "simulate"]
