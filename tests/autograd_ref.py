"""An independent model of the generator's expression graphs for gradients: each graph re-implemented with torch
functions (the ones a PyTorch user would write: F.silu, F.gelu, torch.clamp, torch.amax, ...) and differentiated by
torch's own autograd in float64 (tests/gen/test_gen_autodiff.py, tests/torch_backend/test_torch_ops.py).

Import it after ``pytest.importorskip("torch")``.
"""

from __future__ import annotations

import numpy as np
import torch

from fusekit.gen.graph import Node

F = torch.nn.functional

TORCH_DTYPES = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}
ROUND = {"rint": torch.round, "floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc,
         "round": lambda x: torch.sign(x) * torch.floor(x.abs() + 0.5)}
UNARY = {"neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
         "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "relu": torch.relu, "sigmoid": torch.sigmoid,
         "silu": F.silu, "tanh": torch.tanh, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
         "gelu_erf": F.gelu}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}
COMPARE = {"lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge, "eq": torch.eq, "ne": torch.ne}
REDUCE = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}


def eager(graph, tensors: dict, attrs: dict) -> list:
    """The graph's outputs computed with torch ops (differentiable by torch's autograd), each broadcast
    to the inputs' broadcast shape as the generated kernel writes it."""
    memo = {}

    def ev(n: Node):
        if id(n) in memo:
            return memo[id(n)]
        a = [ev(x) for x in n.args]
        if n.op == "input":
            out = tensors[n.name]
        elif n.op == "attr":
            out = float(attrs[n.name])
        elif n.op == "const":
            out = float(n.value)
        elif n.op in UNARY:
            out = UNARY[n.op](a[0])
        elif n.op in BINARY:
            out = BINARY[n.op](*a) if isinstance(a[0], torch.Tensor) or isinstance(a[1], torch.Tensor) else None
            if out is None:
                raise AssertionError("scalar-only arithmetic")
            if not isinstance(a[0], torch.Tensor):  # 2 - x, 2 / x
                out = {"add": lambda: a[1] + a[0], "mul": lambda: a[1] * a[0], "sub": lambda: a[0] - a[1],
                       "div": lambda: a[0] / a[1]}[n.op]()
        elif n.op in ("maximum", "minimum"):
            if isinstance(a[0], float) or isinstance(a[1], float):  # a bound: torch.clamp
                t, s = (a[1], a[0]) if isinstance(a[0], float) else (a[0], a[1])
                out = torch.clamp(t, min=s) if n.op == "maximum" else torch.clamp(t, max=s)
            else:
                out = (torch.maximum if n.op == "maximum" else torch.minimum)(*a)
        elif n.op == "leaky_relu":
            out = F.leaky_relu(a[0], a[1])
        elif n.op in COMPARE:
            out = COMPARE[n.op](*(x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=torch.float64)
                                  for x in a))
        elif n.op == "where":
            out = torch.where(a[0], *(x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=torch.float64)
                                      for x in a[1:]))
        elif n.op in REDUCE:
            out = REDUCE[n.op](a[0], dim=-1, keepdim=True)
        elif n.op == "cast":
            target = n.params["dtype"]
            if target in TORCH_DTYPES:
                out = a[0].to(TORCH_DTYPES[target]).to(a[0].dtype)
            else:  # integer: rounded and saturated, no gradient (as .to(torch.int8) has none)
                info = np.iinfo(target)
                out = torch.clamp(ROUND[n.params["rounding"]](a[0].detach()), info.min, info.max)
        else:
            raise AssertionError(f"no torch model for {n.op}")
        memo[id(n)] = out
        return out

    shape = torch.broadcast_shapes(*(t.shape for t in tensors.values()))
    return [torch.broadcast_to(ev(o), shape) for o in graph.outputs]


def torch_grads(graph, arrays: dict, attrs: dict, grads: list) -> dict:
    """{input name: gradient} from torch's autograd of :func:`eager` in float64."""
    leaves = {k: torch.tensor(np.asarray(v, np.float64), requires_grad=np.asarray(v).dtype.kind == "f")
              for k, v in arrays.items()}
    outs = eager(graph, leaves, attrs)
    pairs = [(o, torch.tensor(g, dtype=torch.float64)) for o, g in zip(outs, grads) if o.requires_grad]
    torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    return {k: (t.grad.numpy() if t.grad is not None else np.zeros(t.shape)) for k, t in leaves.items()
            if t.requires_grad}
