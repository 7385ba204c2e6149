"""How long does the attention panel take to show a new forward pass — every map, repainted?

The requirement (issue 5): with a 6-layer × 8-head model, updating all 144 maps of the three
kinds must fit in one 60 Hz frame (≤ 16 ms), so the grid can follow training live. This
drives the real panel offscreen at 1280×720 with the grid showing all three kinds, feeds it a
different recorded forward pass each frame (extraction from the trace included), forces a
full repaint, and reports the median and 95th percentile.

    .venv/bin/python benchmarks/attention_frame.py [--frames 200] [--tokens 20] [--paint grab|repaint]
    .venv/bin/python benchmarks/attention_frame.py --minilm [--tokens 512]   # the real all-MiniLM-L6-v2

The last line is `attention_frame_ms: X` (the median, in milliseconds); with --minilm it is
`minilm_512_frame_ms: X` — the all-heads view of the real all-MiniLM-L6-v2 (6 layers × 12
heads of 512 × 512 maps) drawing a new forward pass (BertViz breaks near 512 tokens, issue #82).
Each MiniLM forward carries the block sums the app's compute step makes off the GUI thread
(`model.interpret.map_sums`; their time is printed on its own line); `--no-sums` draws without them, as
the GUI thread had to before: run both for a before → after in one sitting.
"""
from __future__ import annotations

import argparse
import os
import statistics
import string
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import torch  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def make_results(n_results: int, tokens: int):
    """`n_results` different recorded forwards of a 6 × 8 model on a `tokens`-long input."""
    from model.io.checkpoints import random_bundle

    torch.manual_seed(0)
    bundle = random_bundle("reverse", n_encoder_layers=6, n_decoder_layers=6, n_heads=8, d_model=64, d_ff=128,
                           dropout=0.0, max_len=max(64, tokens + 2))
    text = "".join(string.ascii_lowercase[i % 26] for i in range(tokens))
    results = []
    for _ in range(n_results):
        with torch.no_grad():  # a training step's worth of change, so every frame differs
            for p in bundle.model.parameters():
                p.add_(torch.randn_like(p) * 0.05)
        results.append(bundle.run(text, target=text[::-1]))
    return bundle, results


def minilm_results(tokens: int, sums: bool = True):
    """A few recorded forwards of the real all-MiniLM-L6-v2 on `tokens`-token inputs, with their
    maps summed over blocks as the app's compute step does off the GUI thread (`sums`), and the
    milliseconds that summing took."""
    from model.interpret.frame import with_map_sums
    from model.io.pretrained import load_pretrained

    bundle = load_pretrained("all-MiniLM-L6-v2")
    words = ["the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "while", "attention", "reads",
             "every", "token"]
    results = []
    for shift in range(4):  # different texts: every frame differs
        text = " ".join(words[(i + shift) % len(words)] for i in range(tokens * 2))
        ids = bundle.src_tokenizer.encode(text).ids[:tokens - 1]
        text = bundle.src_tokenizer.decode(ids[1:]) if hasattr(bundle.src_tokenizer, "decode") else text
        while len(bundle.src_tokenizer.encode(text).ids) > bundle.max_input_len:
            text = text.rsplit(" ", 1)[0]
        results.append(bundle.run(text))
    took = []
    if sums:
        for i, result in enumerate(results):
            start = time.perf_counter()
            results[i] = with_map_sums(result)
            took.append((time.perf_counter() - start) * 1000)
    return bundle, results, took


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--paint", choices=("grab", "repaint"), default="grab",
                        help="grab: render the widget into a pixmap; repaint: synchronous repaint + processEvents")
    parser.add_argument("--one-kind", action="store_true", help="grid of the selected kind only (48 maps)")
    parser.add_argument("--minilm", action="store_true", help="the real all-MiniLM-L6-v2 on --tokens (default 512) tokens")
    parser.add_argument("--no-sums", action="store_true",
                        help="--minilm without the block sums the compute step makes (the GUI thread averages every weight)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (1: the conservative figure; the app leaves torch its default)")
    args = parser.parse_args(argv)
    if args.minilm and args.tokens == 20:
        args.tokens = 512
    torch.set_num_threads(args.threads)

    app = QApplication.instance() or QApplication([])
    from explorer.panels.attention.panel import AttentionPanel
    from explorer.state import SessionState

    if args.minilm:
        bundle, results, summing = minilm_results(args.tokens, sums=not args.no_sums)
    else:
        (bundle, results), summing = make_results(8, args.tokens), []
    state = SessionState()
    panel = AttentionPanel(state)
    panel.resize(1280, 720)
    panel.show()
    state.set_bundle(bundle)
    state.set_result(results[0])
    panel.set_view("grid")
    panel.all_kinds.setChecked(not args.one_kind)
    app.processEvents()
    n_maps = sum(d.shape[0] * d.shape[1] for k, d in panel.data.weights.items() if k in panel.grid.shown)

    def frame(i: int) -> None:
        panel.show_result(results[i % len(results)])
        if args.paint == "grab":
            panel.grab()
        else:
            panel.repaint()
            app.processEvents()

    for i in range(10):  # warm-up: first paints build caches
        frame(i)
    times, cpu = [], []
    for i in range(args.frames):
        start, start_cpu = time.perf_counter(), time.thread_time()
        frame(i)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
    times.sort()
    median = statistics.median(times)
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    set_data = []
    for i in range(50):
        start = time.perf_counter()
        panel.show_result(results[i % len(results)])
        set_data.append((time.perf_counter() - start) * 1000)
    print(f"maps shown: {n_maps} ({', '.join(panel.grid.shown)}), {args.tokens} source tokens, "
          f"{args.frames} frames, paint={args.paint}, 1280x720 offscreen")
    print(f"set-data only (trace → mosaics → images): median {statistics.median(set_data):.2f} ms")
    print(f"frame (set-data + repaint): median {median:.2f} ms, p95 {p95:.2f} ms")
    # the GUI thread's own CPU time: on a shared machine, wall time also counts the time others
    # took the core; this does not (with --threads 1 the frame's work is all on this thread)
    print(f"frame CPU time (GUI thread): median {statistics.median(cpu):.2f} ms")
    if args.minilm:
        tokens = len(results[0].src_pieces)
        print(f"minilm tokens: {tokens}")
        if summing:  # off the GUI thread, with the forward pass (not part of the frame)
            print(f"block sums in the compute step (worker thread, once a forward): median {statistics.median(summing):.2f} ms")
        else:
            print("block sums: none (--no-sums): the GUI thread averages every weight")
        print(f"minilm_{args.tokens}_frame_ms: {median:.2f}")
    else:
        print(f"attention_frame_ms: {median:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
