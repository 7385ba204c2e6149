"""A lab as a worker's message stream (model.train.lab_stream), and the labs' Qt-free texts: a
fake lab drives the stream; the texts are checked against the numbers they are made from."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.interpret.leak_lab import RUN_LABELS, LeakConfig, step_text
from model.train import lab_stream
from model.train.induction import InductionConfig, InductionMeasure, phase_text
from model.train.lab_stream import LabSteering, StepRows, lab_messages


@dataclass
class Step:
    run: str
    step: int
    loss: float
    elapsed: float


class FakeLab:
    """Steps of two runs, one other event between them, and a record of `stop` calls."""

    stops: list[tuple] = []

    def __init__(self, config):
        self.config = config

    def stop(self, *args):
        FakeLab.stops.append(args)

    def events(self):
        for step in range(1, self.config + 1):
            for run in ("a", "b"):
                yield Step(run, step, 1.0 / step + (run == "b"), 0.01 * step)
            if step == 3:
                yield "measured at 3"


def test_stream_keeps_every_step_per_run_and_the_order_of_other_events(monkeypatch):
    monkeypatch.setattr(lab_stream, "EMIT_INTERVAL", 0.0)  # a batch per step: order is checked closely
    messages = list(lab_messages(FakeLab, Step, 1, 6, LabSteering()))
    assert messages[:2] == ["building", "training"]
    rows = {"a": [], "b": []}
    seen_event_after = None
    for message in messages[2:]:
        if isinstance(message, StepRows):
            for run, (steps, losses) in message.columns.items():
                rows[run] += list(zip(steps.tolist(), losses.tolist()))
        else:
            assert message == "measured at 3"
            seen_event_after = {run: len(r) for run, r in rows.items()}
    for run in ("a", "b"):  # every step, in order, with its own loss
        assert rows[run] == [(s, 1.0 / s + (run == "b")) for s in range(1, 7)]
    assert seen_event_after == {"a": 3, "b": 3}  # the rows before the event came before it


def test_a_stop_before_the_lab_exists_reaches_it_once_built():
    FakeLab.stops = []
    steering = LabSteering()
    steering.stop(True)
    stream = lab_messages(FakeLab, Step, 1, 2, steering)
    assert next(stream) == "building" and FakeLab.stops == []
    assert next(stream) == "training" and FakeLab.stops == [(True,)]
    steering.stop(False)  # and a later one goes straight to it
    assert FakeLab.stops == [(True,), (False,)]
    assert not steering.cancel_unbegun()  # `join` always waits for a lab's worker


def test_last_step_of_a_batch():
    rows = StepRows({"a": (np.array([4, 5]), np.zeros(2)), "b": (np.array([], dtype=np.int64), np.zeros(0))}, 1.0)
    assert rows.last_step == 5 and StepRows({}, 0.0).last_step == 0


def test_the_labs_name_their_own_models():
    shown, whole = LeakConfig(n_layers=2, n_heads=3, d_model=48).describe()
    assert shown == "Own model: 2 layers × 3 heads" and whole.startswith(shown) and "d_model 48" in whole
    assert LeakConfig(n_layers=1).describe()[0].startswith("Own model: 1 layer ×")
    shown, whole = InductionConfig(vocab=12, seq_len=16, min_len=3, max_len=6).describe()
    assert shown == "Own model: 2 layers × 4 heads, attention only"
    assert "vocabulary 11 tokens" in whole and "sequences of 16" in whole and "3–6-token" in whole


def test_leak_step_text_names_each_runs_last_loss():
    text = step_text(7, 40, {"masked": 2.345, "leaking": 0.5})
    assert text == f"Step 7 of 40. Loss on the last batch: {RUN_LABELS['masked']} 2.35 · {RUN_LABELS['leaking']} 0.50"


def _measure(step: int, icl: float, scores: np.ndarray) -> InductionMeasure:
    attention = np.arange(2 * 2 * 12 * 12, dtype=float).reshape(2, 2, 12, 12)
    return InductionMeasure(step, step / 10, 3.0, 3.3, 3.3 + icl, icl, scores, attention, list(range(1, 13)), 2, 4)


def test_best_map_is_the_best_heads_attention_over_the_two_copies():
    scores = np.array([[0.1, 0.2], [0.9, 0.3]])
    layer, head, matrix, tokens = _measure(50, -2.0, scores).best_map()
    assert (layer, head) == (1, 0)
    expected = [[(((1 * 2 + 0) * 12) + q) * 12 + k for k in range(2, 10)] for q in range(2, 10)]  # a hand loop
    assert np.array_equal(matrix, expected) and tokens == list("CDEFGHIJ")  # ids 3 … 10 as letters
    late = _measure(50, -2.0, scores)
    late.example = [60 + t for t in late.example]  # past the letters: the id itself
    assert late.best_map()[3] == [str(t) for t in range(63, 71)]


def test_phase_text_says_the_step_the_best_head_and_the_phase_change():
    scores = np.array([[0.1, 0.2], [0.9, 0.3]])
    last, phase = _measure(120, -2.5, scores), _measure(80, -1.8, scores)
    assert phase_text(None, None) == ""
    before = phase_text(None, last)
    assert "Step 120" in before and "L2H1 at 90%" in before and "-2.50 nats" in before
    assert before.endswith("No phase change yet.")
    assert phase_text(phase, last).endswith("Phase change at step 80 (8 s of training).")
