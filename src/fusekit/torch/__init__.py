"""fusekit.torch: fusekit operators as PyTorch operators (``pip install 'fusekit[torch]'``, CPU wheels).

Importing this package registers every shipped operator with ``torch.library`` under the namespace
``fusekit``: ``torch.ops.fusekit.fused_add_scale`` (the hand-written FusedAddScale kernel) and one
operator per generated catalogue op (``torch.ops.fusekit.swiglu``, ...; the generated FusedAddScale
is ``torch.ops.fusekit.fused_add_scale_generated``). :func:`as_torch_op` registers a user's
:class:`fusekit.gen.GeneratedOp` (see :mod:`fusekit.torch.ops`). It also registers the ``torch.compile``
backend ``"fusekit"``; :func:`compile` is :func:`fusekit.torch.backend.compile` (both import the backend
at first use).
"""

import torch

if not hasattr(torch.library, "custom_op"):
    raise ImportError(f"fusekit.torch needs torch >= 2.4 (torch.library.custom_op), found {torch.__version__}: "
                      "pip install 'fusekit[torch]'")

from fusekit.torch.ops import as_torch_op, register_shipped  # noqa: E402

register_shipped()

# the torch.compile backend: registers backend="fusekit" with Dynamo (see fusekit.torch.backend)
from fusekit.torch.backend import compile  # noqa: E402,A004 - fusekit.torch.compile, as torch.compile

__all__ = ["as_torch_op", "compile", "register_shipped"]
