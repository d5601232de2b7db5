"""The unfused baseline of FusedAddScale: an Add kernel writing ``t = x1 + x2`` to GM, then a Muls
kernel reading it back for ``y = t * scale`` (two launches, one more full GM write and read).
These stand in for the framework's Add and Mul operators of the seed article (section 1.1).
"""

from .host import add_then_muls, run

__all__ = ["add_then_muls", "run"]
