"""How long the sampling playground takes to redraw after one control change, on a 49k row.

Each change of temperature / top-k / top-p re-filters the model's one next-token row with
`filter_logits` and redraws the bars; the model does not run. This times that, including the
paint, for SmolLM2-135M's real row (49,152 tokens) when it loads, else for a seeded random row
of the same size, over a sweep of settings:

    .venv/bin/python benchmarks/sampling_redraw.py [--changes 60] [--random]

Prints `vocab:`, `redraw_ms:` (median wall-clock), `redraw_ms_max:` and `redraw_cpu_ms:` (median
CPU time of this process: what the change costs, whatever else the machine is running) lines.
The playground aims at ≤ 50 ms a change.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

VOCAB = 49152


def setting(i: int) -> tuple[float, int, float]:
    """The i-th (temperature, top_k, top_p) of a sweep touching every control."""
    return 0.3 + (i % 10) * 0.25, (0, 5, 40, 500)[i % 4], (1.0, 0.9, 0.5, 0.95, 0.7)[i % 5]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=60)
    parser.add_argument("--random", action="store_true", help="a random row even if SmolLM2 loads")
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)  # one row's filtering: more threads only wait on each other
    from PySide6.QtWidgets import QApplication

    from explorer.panels.sampling.panel import SamplingPanel
    from explorer.state import SessionState
    from model.inference.next_token import NextToken, next_token_logits

    app = QApplication.instance() or QApplication([])
    state = SessionState()
    row, source = None, "random"
    if not args.random:
        try:
            from model import load_pretrained
            bundle = load_pretrained("smollm2")
            state.set_bundle(bundle)
            row, source = next_token_logits(bundle, "The capital of France is"), "smollm2"
        except Exception as exc:  # noqa: BLE001 - any reason it cannot load: time the random row
            print(f"# SmolLM2 not loaded ({type(exc).__name__}: {exc}); a random row instead", file=sys.stderr)
    if row is None:
        gen = torch.Generator().manual_seed(0)
        row = NextToken(torch.randn(VOCAB, generator=gen) * 3, 1, "", "a random row")
    panel = SamplingPanel(state)
    panel.resize(1280, 640)
    panel.show()
    app.processEvents()
    panel.next_token = row
    times, cpu = [], []
    for i in range(-3, args.changes):  # three changes to warm up, not counted
        temperature, top_k, top_p = setting(i)
        start, start_cpu = time.perf_counter(), time.process_time()
        controls = panel.controls
        for quiet in (controls.top_k, controls.top_p):
            quiet.blockSignals(True)
        controls.top_k.setValue(top_k)
        controls.top_p.setValue(top_p)
        for quiet in (controls.top_k, controls.top_p):
            quiet.blockSignals(False)
        controls.temperature.setValue(temperature)  # one change: one redraw
        panel.bars.repaint()
        app.processEvents()
        if i >= 0:
            times.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
    print(f"source: {source}")
    print(f"vocab: {row.logits.numel()}")
    print(f"redraw_ms: {statistics.median(times):.1f}")
    print(f"redraw_ms_max: {max(times):.1f}")
    print(f"redraw_cpu_ms: {statistics.median(cpu):.1f}")


if __name__ == "__main__":
    main()
