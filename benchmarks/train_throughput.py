"""Training throughput of our Transformer against `torch.nn.Transformer` of the same sizes.

Both get the same embeddings × √d_model, sinusoidal positions, output layer, label-smoothed
loss, Adam with the paper's schedule, the same pre-generated batches, on the same machine;
timed blocks alternate (ours, theirs, ours, …) so drifts in machine load hit both alike.

    .venv/bin/python benchmarks/train_throughput.py [--device cpu|cuda] [--threads 1] [--repeats 5] [--clock cpu]

Tokens are source + target tokens without padding, as the paper counts batch sizes. The last
line is `train_throughput_ratio: X` (ours ÷ torch.nn.Transformer). On CUDA it also prints the
model FLOPs utilisation (MFU) of each.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model import Transformer, TransformerConfig  # noqa: E402
from model.data.tasks import get_task  # noqa: E402
from model.data.user_data import make_batch  # noqa: E402
from model.nn.devices import resolve_device  # noqa: E402
from model.nn.positional import get_positional_encoding  # noqa: E402
from model.train.trainer import make_optimizer  # noqa: E402

PEAK_TFLOPS_BF16 = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "L4": 121.0, "A10": 125.0, "4090": 165.0}


class TorchReference(nn.Module):
    """torch.nn.Transformer wrapped with the same inputs and output layer as ours."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        self.src_embed = nn.Embedding(cfg.src_vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.register_buffer("pe", get_positional_encoding(cfg.d_model, cfg.max_len), persistent=False)
        self.drop = nn.Dropout(cfg.dropout)
        self.core = nn.Transformer(cfg.d_model, cfg.n_heads, cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.d_ff,
                                   cfg.dropout, batch_first=True, norm_first=cfg.norm_first)
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        self.scale = math.sqrt(cfg.d_model)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        pad = self.cfg.pad_id
        s = self.drop(self.src_embed(src) * self.scale + self.pe[: src.size(1)])
        t = self.drop(self.tgt_embed(tgt) * self.scale + self.pe[: tgt.size(1)])
        causal = torch.ones(tgt.size(1), tgt.size(1), dtype=torch.bool, device=tgt.device).triu(1)  # True = blocked
        out = self.core(s, t, tgt_mask=causal, src_key_padding_mask=src == pad, tgt_key_padding_mask=tgt == pad,
                        memory_key_padding_mask=src == pad, tgt_is_causal=True)
        return self.generator(out)


def make_batches(n: int, batch_size: int, seed: int):
    task = get_task("reverse", min_len=16, max_len=32)  # ~24 tokens per side on average
    src_tok, tgt_tok = task.build_tokenizers()
    pairs = task.pairs(n * batch_size, seed=seed)
    batches = [make_batch(pairs[i * batch_size:(i + 1) * batch_size], src_tok, tgt_tok) for i in range(n)]
    return batches, len(src_tok), len(tgt_tok)


CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def train_steps(model, opt, sched, loss_fn, batches, device, amp: bool, clock=time.perf_counter) -> float:
    """Seconds for one optimisation step per batch."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = clock()
    for b in batches:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            logits = model(b.src, b.tgt_in)
        loss = loss_fn(logits.float().reshape(-1, logits.size(-1)), b.tgt_out.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return clock() - start


def flops_per_step(model: nn.Module, n_src: int, n_tgt: int, cfg: TransformerConfig, s_len: int, t_len: int) -> float:
    """6 · params · tokens for the matmuls (forward + backward) plus the attention products."""
    enc_params = sum(p.numel() for n, p in model.named_parameters() if "encoder" in n and p.dim() > 1)
    dec_params = sum(p.numel() for n, p in model.named_parameters() if ("decoder" in n or "generator" in n)
                     and p.dim() > 1)
    attn = 2 * 2 * cfg.d_model * (cfg.n_encoder_layers * n_src * s_len + cfg.n_decoder_layers * n_tgt * (t_len + s_len))
    return 6 * (enc_params * n_src + dec_params * n_tgt) + 3 * attn


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--steps", type=int, default=10, help="steps per timed block")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                   help="cpu: this thread's CPU seconds (with --threads 1, on the CPU: immune to other processes)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    amp = device.type == "cuda"

    batches, v_src, v_tgt = make_batches(args.steps, args.batch_size, seed=0)
    batches = [b.to(device) for b in batches]
    tokens = sum(int((b.src != 0).sum() + (b.tgt_out != 0).sum()) for b in batches)
    cfg = TransformerConfig(src_vocab_size=v_src, tgt_vocab_size=v_tgt, d_model=args.d_model, n_heads=args.heads,
                            d_ff=args.d_ff, n_encoder_layers=args.layers, n_decoder_layers=args.layers,
                            dropout=args.dropout, max_len=64)
    torch.manual_seed(0)
    models = {"ours": Transformer(cfg).to(device), "torch.nn.Transformer": TorchReference(cfg).to(device)}
    runs = {}
    for name, m in models.items():
        m.train()
        opt, sched = make_optimizer(m, cfg.d_model, warmup=4000)
        runs[name] = (m, opt, sched, nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=0))
        print(f"{name}: {sum(p.numel() for p in m.parameters()):,} parameters")
    print(f"device {device}, threads {torch.get_num_threads()}, {args.clock} clock, batch {args.batch_size}, "
          f"{tokens / args.steps:.0f} tokens/step, d_model {cfg.d_model}, heads {cfg.n_heads}, "
          f"layers {cfg.n_encoder_layers}+{cfg.n_decoder_layers}, d_ff {cfg.d_ff}, dropout {cfg.dropout}")
    for run in runs.values():  # warm-up (allocator, kernels)
        train_steps(*run, batches[:3], device, amp)
    times = {name: [] for name in runs}
    for r in range(args.repeats):
        order = list(runs) if r % 2 == 0 else list(runs)[::-1]
        for name in order:
            times[name].append(train_steps(*runs[name], batches, device, amp, CLOCKS[args.clock]))
    rates = {}
    for name, ts in times.items():
        rates[name] = tokens / statistics.median(ts)
        spread = (tokens / max(ts), tokens / min(ts))
        print(f"{name}: {rates[name]:,.0f} tokens/s (median of {len(ts)}; range {spread[0]:,.0f}–{spread[1]:,.0f})")
    if device.type == "cuda":
        gpu = torch.cuda.get_device_name(device)
        peak = next((v for k, v in PEAK_TFLOPS_BF16.items() if k in gpu), None)
        s_len = statistics.mean(b.src.size(1) for b in batches)
        t_len = statistics.mean(b.tgt_in.size(1) for b in batches)
        n_src = sum(int((b.src != 0).sum()) for b in batches) / len(batches)
        n_tgt = sum(int((b.tgt_out != 0).sum()) for b in batches) / len(batches)
        for name, (m, *_rest) in runs.items():
            f = flops_per_step(m, n_src, n_tgt, cfg, s_len, t_len) * args.steps / statistics.median(times[name])
            mfu = f"{f / (peak * 1e12):.2%}" if peak else "n/a (unknown GPU peak)"
            print(f"{name}: {f / 1e12:.2f} TFLOP/s achieved, MFU {mfu} of {gpu} bf16 peak")
            if name == "ours" and peak:
                print(f"gpu: {gpu}\nmfu: {f / (peak * 1e12):.4f}")
    ratio = rates["ours"] / rates["torch.nn.Transformer"]
    print(f"train_throughput_ratio: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
