"""fusekit.torch: fusekit operators as PyTorch operators (``pip install 'ascend-fusekit[torch]'``, CPU wheels).

Importing this package registers every shipped operator with ``torch.library`` under the namespace
``fusekit``: ``torch.ops.fusekit.fused_add_scale`` (the hand-written FusedAddScale kernel) and one
operator per generated catalogue op (``torch.ops.fusekit.swiglu``, ...; the generated FusedAddScale
is ``torch.ops.fusekit.fused_add_scale_generated``), and the in-place ``torch.ops.fusekit.fused_add_rms_norm``
(:mod:`fusekit.torch.inplace`). :func:`as_torch_op` registers a user's
:class:`fusekit.gen.GeneratedOp` (see :mod:`fusekit.torch.ops`). It also registers the ``torch.compile``
backend ``"fusekit"``; :func:`compile` is :func:`fusekit.torch.backend.compile` (both import the backend
at first use).
"""

try:
    import torch
except ImportError as exc:  # a clear line, not torch's bare "No module named 'torch'"
    raise ImportError("fusekit.torch needs PyTorch, which is not installed: pip install 'ascend-fusekit[torch]'",
                      name=exc.name) from exc

if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"fusekit.torch needs torch >= 2.4 (torch.library.custom_op), found {torch.__version__}: "
                      "pip install 'ascend-fusekit[torch]'")

from fusekit.torch.ops import as_torch_op, register_shipped  # noqa: E402

register_shipped()

from fusekit.torch import inplace as _inplace  # noqa: E402 - the in-place forms (fused_add_rms_norm)

_inplace.register()

# the torch.compile backend: registers backend="fusekit" with Dynamo (see fusekit.torch.backend)
from fusekit.torch.backend import compile  # noqa: E402,A004 - fusekit.torch.compile, as torch.compile

__all__ = ["as_torch_op", "compile", "register_shipped"]
