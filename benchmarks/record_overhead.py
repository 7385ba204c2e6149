"""How much slower is a forward pass inside `record(model)` than a plain one?

The GUI records one sentence at a time (batch 1, ~24 tokens) on every change, so that case
is the one that matters; batch 32 shows how the overhead scales when copies dominate.

    .venv/bin/python benchmarks/record_overhead.py [--repeats 30] [--threads 1]

The last line is `record_overhead: X`, recorded time ÷ plain time for the batch-1 case.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from model import Transformer, TransformerConfig, record


def median_ms(fns: dict, repeats: int, warmup: int = 3) -> dict[str, float]:
    """Median wall time of each `fn()` in milliseconds.

    The functions take turns within every repeat, so a noisy neighbour on a shared machine
    slows them alike instead of skewing the ratio.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


def measure(model: Transformer, batch: int, length: int, repeats: int) -> tuple[float, float, int]:
    """(plain ms, recorded ms, number of recorded steps) for one (batch, length)."""
    cfg = model.config
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(1, cfg.src_vocab_size, (batch, length), generator=gen)  # (B, T), no padding
    tgt = torch.randint(1, cfg.tgt_vocab_size, (batch, length), generator=gen)  # (B, T)

    def plain():
        with torch.no_grad():
            model(src, tgt)

    def recorded():
        with torch.no_grad(), record(model) as trace:
            model(src, tgt)
        return trace

    n_steps = len(recorded())
    ms = median_ms({"plain": plain, "recorded": recorded}, repeats)
    return ms["plain"], ms["recorded"], n_steps


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed runs per case (median reported)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = TransformerConfig(src_vocab_size=1000, tgt_vocab_size=1000, d_model=128, n_heads=4, d_ff=512,
                            n_encoder_layers=3, n_decoder_layers=3, dropout=0.1)
    model = Transformer(cfg).eval()
    print(f"config: d_model={cfg.d_model} h={cfg.n_heads} d_ff={cfg.d_ff} N={cfg.n_encoder_layers}+"
          f"{cfg.n_decoder_layers} vocab={cfg.tgt_vocab_size}; torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread(s), median of {args.repeats}")
    ratio_gui = None
    for batch, length in ((1, 24), (32, 24)):
        plain, recorded, n_steps = measure(model, batch, length, args.repeats)
        ratio = recorded / plain
        print(f"batch {batch:2d} x {length} tokens: plain {plain:7.2f} ms  recorded {recorded:7.2f} ms "
              f"({n_steps} steps)  ratio {ratio:.2f}")
        if ratio_gui is None:
            ratio_gui = ratio
    print(f"record_overhead: {ratio_gui:.2f}")
    return ratio_gui


if __name__ == "__main__":
    main()
