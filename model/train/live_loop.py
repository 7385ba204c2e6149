"""A live training run's loop, Qt-free: it builds the `Trainer` and is the only code that touches
its model. Between two optimisation steps it also does everything else that reads the weights —
the probe forward students watch, held-out evaluation, checkpoints, copies — so nothing ever
races an update. It yields plain data (model.train.live_messages): numpy metric columns at most
every EMIT_INTERVAL (never one message per step), `ForwardResult`s of detached CPU tensors at
most every PROBE_INTERVAL, evaluations, CPU copies of the model (`Offer`).

A GUI runs `TrainingLoop(request, steering).run()` on a worker thread (the explorer's training
panel: explorer.panels.training.worker) and steers it through `model.train.steering.Steering`:
pause, resume and stop are the Trainer's own thread-safe flags; what must happen between two
steps (save, offer a copy, one single step, a new probe text) goes through a queue the loop
serves. A paused run still serves that queue, and a stopped one still saves its weights.
"""
from __future__ import annotations

import copy
import time
import traceback
from collections.abc import Callable

from model.inference.bundle import InputError, ModelBundle
from model.nn.transformer import Transformer
from model.train.live_messages import (
    Failed,
    MetricRows,
    Offer,
    Phase,
    ProbeFailed,
    RunInfo,
    Saved,
    SaveFailed,
    Snapshot,
)
from model.train.optimizer import planned_rates
from model.train.request import TrainingRequest, build_trainer, default_probe, describe_model
from model.train.steering import Steering
from model.train.target import CONFIRM_SIZE, confirm
from model.train.trainer import EvalEvent, Trainer, TrainingError

EMIT_INTERVAL = 0.2  # s between metric batches: the curves look live, the GUI thread stays idle
PROBE_INTERVAL = 0.3  # s between probe forwards (attention maps refresh ~3× a second)
PROBE_BUDGET = 0.03  # a probe may cost at most this share of wall time (big models probe less often)
EVAL_BUDGET = 0.01  # same for held-out evaluation
EVAL_MIN_INTERVAL = 3.0
TARGET_EVAL_BUDGET = 0.08  # a run timed to a target (lecture preset) evaluates more often, still ≤ 8 %
TARGET_CONFIRM_SIZE = CONFIRM_SIZE  # a quick check that reaches the target is repeated on this many pairs
EVAL_SIZE = 50
PAUSED_POLL = 0.1  # s a paused run waits for a request before it looks at its flags again


class TrainingLoop:
    """One run's state on the worker thread; its generator methods yield what the GUI is sent."""

    def __init__(self, request: TrainingRequest, steering: Steering,
                 writer: Callable[[ModelBundle, str], object] | None = None):
        self.request, self.steering = request, steering
        self.writer = writer  # writes a checkpoint folder (model.io.checkpoints.save_checkpoint: a layer above)
        self.trainer: Trainer | None = None
        self.probe_text = request.probe
        self.rows: list[tuple] = []
        self.wall = 0.0  # s of running, pauses excluded
        self.last_emit = self.last_probe = time.monotonic()
        self.probe_cost = self.eval_cost = self.last_eval_wall = 0.0
        self.probes_done = 0
        self.reached: EvalEvent | None = None  # the confirmed check that reached the request's target

    def run(self):
        yield Phase("building")
        try:
            self.trainer = trainer = build_trainer(self.request)
        except (TrainingError, ValueError, OSError) as exc:  # bad task file, no CUDA, vocabulary mismatch …
            self.steering.last_error = str(exc)
            yield Failed(str(exc))
            return "failed"
        self.steering.attach(trainer)
        cfg = trainer.config
        if not self.probe_text.strip():
            self.probe_text = default_probe(trainer.task, trainer.model.config.kind)
        self.task_dict = trainer.task.to_dict()
        yield RunInfo(trainer.task.name, describe_model(trainer), str(trainer.device), cfg.steps, cfg.warmup,
                      self.probe_text, torch_threads(), trainer.model.config.to_dict(),
                      list(trainer.src_tokenizer.vocab), list(trainer.tgt_tokenizer.vocab),
                      planned_rates(trainer.scheduler, cfg.steps, keep=(cfg.warmup, cfg.lr_decay_steps)))
        self.last_emit = self.last_probe = time.monotonic()
        yield from self.probe(force=True)  # the untrained model's attention: where the story starts
        told = None  # the phase the GUI was last told
        while True:
            yield from self.serve(PAUSED_POLL if told == "paused" and trainer.paused else 0)
            if trainer.stopped:
                break
            if trainer.step_count >= cfg.steps or self.reached is not None:
                yield from self.flush()
                return (yield from self.finish("finished"))
            if trainer.paused:
                if told != "paused":
                    yield from self.flush()
                    yield from self.probe(force=True)
                    yield Phase("paused")
                    told = "paused"
                continue
            if told != "running":
                yield Phase("running")
                told = "running"
            yield from self.train_step()
        yield from self.flush()
        return (yield from self.finish("stopped"))

    def serve(self, timeout: float):
        """The GUI's requests, between two steps."""
        t = self.trainer
        for kind, arg in self.steering.take(timeout):
            if kind == "save":
                yield from self.save(arg)
            elif kind == "offer":
                yield from self.offer(arg)
            elif kind == "probe":
                self.probe_text = arg
                yield from self.probe(force=True)
            elif kind == "step" and t.paused and not t.stopped and t.step_count < t.config.steps:
                yield from self.train_step(single=True)

    def train_step(self, single: bool = False):
        start = time.monotonic()
        try:
            event = self.trainer.step()
        except Exception as exc:  # noqa: BLE001 - NaN loss, OOM, a bug: say so and pause, keep the weights
            if isinstance(exc, TrainingError):  # its message already names the step and what to do
                error = f"Training paused: {exc}"
            else:
                traceback.print_exc()
                error = f"Training paused at step {self.trainer.step_count + 1}: {type(exc).__name__}: {exc}"
            self.steering.last_error = error
            self.trainer.pause()
            yield from self.flush()
            yield Failed(error)
            return
        self.wall += time.monotonic() - start
        self.steering.steps_done = event.step
        self.rows.append((event.step, event.loss, event.token_accuracy, event.lr, event.tokens_per_s, self.wall))
        if single:
            yield from self.flush()
            yield from self.probe(force=True)
            return
        if time.monotonic() - self.last_emit >= EMIT_INTERVAL:
            yield from self.flush()
        yield from self.probe()
        yield from self.evaluate()

    def flush(self):
        self.last_emit = time.monotonic()
        if self.rows:
            rows, self.rows = self.rows, []
            yield MetricRows.from_tuples(rows)

    # -- probe, evaluation, copies (all between steps) ------------------------------------------
    def view(self) -> ModelBundle:
        """A bundle around the *training* model (no copy): for forwards on this thread only."""
        t = self.trainer
        return ModelBundle(t.model, t.src_tokenizer, t.tgt_tokenizer, self.task_dict, {}, name=t.task.name)

    def probe(self, force: bool = False):
        now = time.monotonic()
        if not (force or self.steering.snapshots):
            return
        if not force and now - self.last_probe < max(PROBE_INTERVAL, self.probe_cost / PROBE_BUDGET):
            return
        text, result, error = self.probe_text, None, None
        try:
            result = self.view().run(text)
        except InputError as exc:
            error = str(exc)
        finally:
            self.trainer.model.train()
            self.last_probe = time.monotonic()
            cost = self.last_probe - now
            self.wall += cost
            # The pace follows what a probe costs now: the first one also pays the device's
            # warm-up (CUDA context, kernel selection: seconds), which would space the next
            # ones past the end of a short run.
            self.probe_cost = cost if self.probes_done else 0.0
            self.probes_done += 1
        if result is not None:
            yield Snapshot(self.trainer.step_count, result, text)
        elif force:
            yield ProbeFailed(error)

    def evaluate(self, force: bool = False):
        interval = self.request.eval_interval  # a lecture run shows its time to target: evaluate often
        gap = (max(interval, self.eval_cost / TARGET_EVAL_BUDGET) if interval
               else max(EVAL_MIN_INTERVAL, self.eval_cost / EVAL_BUDGET))
        if not (force or self.wall - self.last_eval_wall >= gap):
            return
        start = time.monotonic()
        size = self.trainer.config.eval_size if interval else min(EVAL_SIZE, self.trainer.config.eval_size)
        event: EvalEvent = self.trainer.evaluate(size)
        self.eval_cost = time.monotonic() - start  # the quick check's cost paces the next one
        target = self.request.target if interval else None
        event = confirm(self.trainer, event, target, TARGET_CONFIRM_SIZE)
        if target is not None and event.score >= target:
            self.reached = event  # a preset run ends once its target is confirmed
        self.trainer.model.train()
        self.wall += time.monotonic() - start
        self.last_eval_wall = self.wall
        yield from self.flush()  # the curves' steps reach the eval's step first
        yield event

    def cpu_bundle(self) -> ModelBundle:
        """A consistent CPU copy of the weights taken between steps (safe to hand to the GUI)."""
        t = self.trainer
        if t.device.type == "cpu":
            model = copy.deepcopy(t.model)
        else:
            model = Transformer(t.model.config)
            model.load_state_dict(t.snapshot())
        model.eval()
        name = f"{t.task.name} (trained {t.step_count} steps)"
        return ModelBundle(model, t.src_tokenizer, t.tgt_tokenizer, t.task.to_dict(), t.metrics(), name=name)

    def save(self, folder: str):
        if self.writer is None:
            self.steering.last_error = "this run was given no checkpoint writer"
            yield SaveFailed(self.steering.last_error)
            return
        try:
            self.writer(self.cpu_bundle(), folder)
        except (ValueError, OSError) as exc:  # model.io's CheckpointError is a ValueError
            self.steering.last_error = str(exc)
            yield SaveFailed(str(exc))
            return
        self.steering.last_saved = folder
        yield Saved(folder)

    def offer(self, reason: str):
        start = time.monotonic()
        bundle = self.cpu_bundle()
        cost = time.monotonic() - start
        self.wall += cost
        yield Offer(bundle, self.trainer.step_count, reason, cost)

    def finish(self, outcome: str):
        yield Phase("finishing")
        save_to, offer = self.steering.stop_save_to, self.steering.stop_offer
        if self.trainer.step_count > 0:
            if outcome == "finished" and self.reached is None:  # (a reached target was just evaluated)
                yield from self.evaluate(force=True)
            if offer:  # (not when the window is closing: nobody would see it)
                yield from self.probe(force=True)  # the timeline ends at the last step
            if save_to:
                yield from self.save(save_to)
            if offer:
                yield from self.offer(outcome)
        return outcome


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


__all__ = ["TrainingLoop", "torch_threads", "EMIT_INTERVAL", "PROBE_INTERVAL", "PROBE_BUDGET", "EVAL_BUDGET",
           "EVAL_MIN_INTERVAL", "TARGET_EVAL_BUDGET", "TARGET_CONFIRM_SIZE", "EVAL_SIZE", "PAUSED_POLL"]
