"""A PyTorch model through ``torch.compile(backend="fusekit")``: its pointwise and row-reduction groups become
generated fused operators that run on the simulated NPU; everything else stays eager on the CPU.

Run it:  python examples/torch_compile.py [REPORT]    (needs torch: pip install 'ascend-fusekit[torch]'; the
                                                      fusion report also goes to REPORT, default fusion.txt)

The model is a LLaMA-style MLP block: RMSNorm, a SwiGLU gate and a residual add, with two matmuls between them
(the matmuls stay eager). The script compares the compiled model's output with eager PyTorch's and prints the
report: each fused group with its source lines, its generated expression, the check against eager and the
predicted NPU time fused against unfused.
"""

from __future__ import annotations

import sys

import torch

import fusekit.torch  # noqa: F401  (registers the "fusekit" backend)


class MlpBlock(torch.nn.Module):
    def __init__(self, hidden: int = 256, inner: int = 512):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.gate = torch.nn.Linear(hidden, inner, bias=False)
        self.up = torch.nn.Linear(hidden, inner, bias=False)
        self.down = torch.nn.Linear(inner, hidden, bias=False)

    def forward(self, x):
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight      # RMSNorm
        return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))    # SwiGLU MLP + residual


def main(argv: list[str]) -> int:
    torch.manual_seed(0)
    model = MlpBlock().eval()
    x = torch.randn(2, 64, 256)
    compiled = fusekit.torch.compile(model, report=argv[0] if argv else "fusion.txt", precision="fp32")
    with torch.no_grad():
        got, want = compiled(x), model(x)
    print(compiled.fusekit_report.text())
    close = torch.allclose(got, want, rtol=1e-4, atol=1e-4)
    print(f"compiled vs eager: max abs difference {(got - want).abs().max().item():.3g} "
          f"({'close' if close else 'NOT close'})")
    return 0 if close else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
