"""fusekit's torch.compile backend on a LLaMA-style decoder layer (or a GPT-2 or BERT layer): compile time,
simulated forward time, and where the time goes.

    python benchmarks/torch_llama_layer.py                      # batch 1, seq 128, hidden 512, float32
    python benchmarks/torch_llama_layer.py --dtype bfloat16 --report /tmp/llama.txt
    python benchmarks/torch_llama_layer.py --model gpt2         # GPT2Block: addmm + bias + GeLU (tanh), LayerNorm
    python benchmarks/torch_llama_layer.py --model bert         # BertLayer: addmm + bias + GeLU (erf), LayerNorm
    python benchmarks/torch_llama_layer.py --model w8a8         # LLaMA's MLP, W8A8 linears (torch._int_mm)

The layer is ``transformers``' LlamaDecoderLayer from a LlamaConfig (random weights, no download):
hidden 512, 8 heads of 64, 4 KV heads, SwiGLU MLP of 1376, RMSNorm, rotary embedding, eager attention
(so that the softmax is an op the backend sees; with SDPA it is one fused ATen op left eager). ``--model gpt2`` /
``bert``: ``transformers``' GPT2Block / BertLayer of the same hidden size, 64-wide heads, an MLP of 4 x hidden,
dropout 0 (``--train`` compares the compiled step's gradients with eager's: random dropout masks would differ).

Measured (wall clock, this machine): the first call of the compiled layer (Dynamo + AOTAutograd
tracing + fusekit's partitioning, generation and compile-time check of every group, the NPU predictions
unless ``--no-predict``, and with ``--report`` the kernel files), then the median of ``--repeat`` forward passes of
the compiled layer (fused groups on fusekit's simulated NPU, the rest eager on the CPU; the backend's default replay
answers a group's later calls at one shape with its generated operator's hardware model, the same bits, and
``--no-replay`` simulates every forward) against the eager layer (medians: the machine is shared, single calls vary by 10x), and the profiler's split of
one compiled forward by operator. Printed: the report's
predicted NPU time of the fused groups, unfused against fused.
"""

from __future__ import annotations

import argparse
import statistics
import time


def build(hidden: int, seq: int, dtype):
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    torch.manual_seed(0)
    heads = max(hidden // 64, 2)
    cfg = LlamaConfig(hidden_size=hidden, intermediate_size=hidden * 43 // 16, num_attention_heads=heads,
                      num_key_value_heads=max(heads // 2, 1), attn_implementation="eager")
    layer = LlamaDecoderLayer(cfg, layer_idx=0).to(dtype).eval()
    x = torch.randn(1, seq, hidden, dtype=dtype)
    pos = torch.arange(seq)[None]
    cos, sin = LlamaRotaryEmbedding(cfg)(x, pos)
    mask = torch.full((seq, seq), float("-inf")).triu(1)[None, None].to(dtype)

    def forward(module, inp):
        out = module(inp, attention_mask=mask, position_embeddings=(cos.to(dtype), sin.to(dtype)), position_ids=pos)
        return out[0] if isinstance(out, tuple) else out
    return layer, x, forward


def build_gpt2(hidden: int, seq: int, dtype):
    import torch
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    torch.manual_seed(0)
    cfg = GPT2Config(n_embd=hidden, n_head=max(hidden // 64, 2), n_inner=4 * hidden, attn_implementation="eager",
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2Block(cfg, layer_idx=0).to(dtype).eval(), torch.randn(1, seq, hidden, dtype=dtype), _first


def build_bert(hidden: int, seq: int, dtype):
    import torch
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertLayer

    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=hidden, num_attention_heads=max(hidden // 64, 2), intermediate_size=4 * hidden,
                     attn_implementation="eager", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertLayer(cfg).to(dtype).eval(), torch.randn(1, seq, hidden, dtype=dtype), _first


def build_w8a8(hidden: int, seq: int, dtype):
    """LLaMA's SwiGLU MLP with W8A8 quantised linears: int8 weights with per-channel scales, the activations
    quantised per token, the products ``torch._int_mm`` (int8 x int8 -> int32), dequantised by both scales."""
    import torch

    class W8A8Linear(torch.nn.Module):
        def __init__(self, k: int, n: int):
            super().__init__()
            w = torch.randn(n, k) / k ** 0.5
            self.register_buffer("w_scale", w.abs().amax(1) / 127)
            self.register_buffer("w_q", torch.round(w / self.w_scale[:, None]).to(torch.int8))

        def forward(self, x):
            rows = x.reshape(-1, x.shape[-1])
            x_scale = rows.abs().amax(-1, keepdim=True) / 127
            x_q = torch.round(rows / x_scale).clamp(-128, 127).to(torch.int8)
            y = torch._int_mm(x_q, self.w_q.t()).to(x.dtype) * (x_scale * self.w_scale).to(x.dtype)
            return y.reshape(x.shape[:-1] + (-1,))

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            inner = hidden * 43 // 16
            self.gate, self.up, self.down = W8A8Linear(hidden, inner), W8A8Linear(hidden, inner), \
                W8A8Linear(inner, hidden)

        def forward(self, x):
            return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x)) + x

    torch.manual_seed(0)
    return Mlp().to(dtype).eval(), torch.randn(1, seq, hidden, dtype=dtype), _first


def _first(module, inp):
    out = module(inp)
    return out[0] if isinstance(out, tuple) else out


MODELS = {"llama": (build, "LLaMA-style decoder layer"), "gpt2": (build_gpt2, "GPT-2 block"),
          "bert": (build_bert, "BERT layer"), "w8a8": (build_w8a8, "W8A8 quantised SwiGLU MLP")}


def train(layer, x, forward, args) -> None:
    """Time the first training step of the compiled layer and compare its gradients with eager's."""
    import torch

    import fusekit.torch

    layer.train()
    compiled = fusekit.torch.compile(layer, predict=not args.no_predict, progress=False)

    def step(model):
        layer.zero_grad()
        inp = x.clone().requires_grad_(True)
        forward(model, inp).float().sum().backward()
        return [inp.grad] + [p.grad.clone() for p in layer.parameters()]
    started = time.perf_counter()
    got = step(compiled)
    first = time.perf_counter() - started
    want = step(layer)
    # relative to the largest gradient of all: a tensor whose gradient is zero in exact arithmetic (BERT's, ahead of
    # the final LayerNorm of a summed loss) holds rounding noise in both, and noise over noise says nothing
    scale = max(max(b.float().abs().max().item() for b in want), 1e-30)
    err = max((a.float() - b.float()).abs().max().item() for a, b in zip(got, want)) / scale
    report = compiled.fusekit_report
    groups = {g: sum(r.fused for r in report.groups if r.graph == g) for g in report.compile_s}
    saving = ("predicted saving per step " + ", ".join(f"{g} {report.saving_us(g):.1f} us" for g in report.compile_s)
              if not args.no_predict else "no predictions (--no-predict)")
    print(f"training: first step (compile forward + backward, run) {first:.2f} s, fusekit backend "
          f"{sum(report.compile_s.values()):.2f} s; fused groups {groups}; {saving}; largest gradient error "
          f"relative to the largest gradient {err:.2g}")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: at least 1")
    return value


def main(argv=None) -> int:
    import torch

    import fusekit.torch

    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--model", default="llama", choices=sorted(MODELS))
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    ap.add_argument("--repeat", type=_positive, default=5, help="timed forward passes (the median is printed)")
    ap.add_argument("--report", default=None, help="write the fusion report here (with the kernel files)")
    ap.add_argument("--no-predict", action="store_true", help="skip the NPU predictions")
    ap.add_argument("--no-replay", action="store_true",
                    help="simulate every forward (default: a group's first call at a shape is simulated, later ones "
                         "are computed by its hardware model, bit for bit the same)")
    ap.add_argument("--train", action="store_true",
                    help="also time the first training step (forward + backward graphs) of a fresh compile")
    args = ap.parse_args(argv)
    dtype = getattr(torch, args.dtype)
    make, title = MODELS[args.model]
    layer, x, forward = make(args.hidden, args.seq, dtype)
    if args.train:
        train(layer, x, forward, args)
        torch._dynamo.reset()
        layer.eval()
    compiled = fusekit.torch.compile(layer, report=args.report, predict=not args.no_predict, progress=False,
                                     replay=not args.no_replay)

    with torch.no_grad():
        started = time.perf_counter()
        y = forward(compiled, x)
        compile_s = time.perf_counter() - started
        ref = forward(layer, x)
        eager, fused = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            forward(layer, x)
            eager.append(time.perf_counter() - t)
            t = time.perf_counter()
            forward(compiled, x)
            fused.append(time.perf_counter() - t)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            forward(compiled, x)
    report = compiled.fusekit_report
    backend_s = sum(report.compile_s.values())
    print(f"{title}, batch 1, seq {args.seq}, hidden {args.hidden}, {args.dtype}")
    print(f"compile (first call): {compile_s:.2f} s, of which fusekit backend {backend_s:.2f} s "
          f"(partition, generate, compile-time check{', predict' if not args.no_predict else ''}); "
          f"Dynamo + AOTAutograd + first run the rest")
    print(f"max |compiled - eager| = {(y.float() - ref.float()).abs().max().item():.3g}")
    how = "simulated every call" if args.no_replay else "simulated at the first call, then replayed"
    print(f"forward: compiled (fused groups on the NPU model, {how}) {statistics.median(fused) * 1e3:.1f} ms, "
          f"eager PyTorch {statistics.median(eager) * 1e3:.2f} ms (median of {args.repeat})")
    graph = next(iter(report.compile_s))
    fused_groups = [g for g in report.groups if g.graph == graph and g.fused]
    print(f"fused groups: {len(fused_groups)}; left eager: "
          f"{sum(report.eager.get(graph, {}).values())} ATen ops")
    for g in fused_groups:
        pred = (f"{g.unfused_us:8.2f} us -> {g.fused_us:7.2f} us" if g.fused_us is not None else "no prediction")
        print(f"  {g.name:<36} {len(g.ops):2d} ops  {pred}")
    unfused_us, fused_us = report.totals(graph)
    if fused_us:
        print(f"predicted NPU time of the fused groups: {unfused_us:.1f} us unfused -> {fused_us:.1f} us fused "
              f"(saving {unfused_us - fused_us:.1f} us per forward)")
    print("where one compiled forward's wall time goes (torch.profiler, self CPU time):")
    rows = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:8]
    total = sum(e.self_cpu_time_total for e in prof.key_averages())
    for e in rows:
        print(f"  {e.key:<44} {e.self_cpu_time_total / 1e3:8.1f} ms  {e.self_cpu_time_total / total:5.1%}  x{e.count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
