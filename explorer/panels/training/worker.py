"""The training loop off the GUI thread: a `QObject` moved to a `QThread` (ephyviewer / napari).

The worker owns the `Trainer` and is the only one that touches its model. Between two
optimisation steps it also does everything else that reads the weights — the probe forward
students watch, held-out evaluation, checkpoint snapshots — so nothing ever races an update.
It talks to the GUI only through queued signals carrying plain copies: numpy metric columns
(at most every ~200 ms, never one signal per step), `ForwardResult`s of detached CPU tensors
(at most every ~300 ms) and CPU copies of the model (`Offer`). The GUI steers it through thread-safe
methods (`pause`, `resume`, `step_once`, `stop`, `save`, `offer`, `set_probe`).
"""
from __future__ import annotations

import copy
import threading
import time
import traceback
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QObject, QRunnable, QThread, QThreadPool, Signal, Slot

from model.bundle import ForwardResult, InputError, ModelBundle
from model.training import EvalEvent, TrainingError
from model.transformer import Transformer

from explorer.panels.training.setup import TrainingRequest, build_trainer, default_probe, describe_model, worker_threads

EMIT_INTERVAL = 0.2  # s between metric batches: the curves look live, the GUI thread stays idle
PROBE_INTERVAL = 0.3  # s between probe forwards (attention maps refresh ~3× a second)
PROBE_BUDGET = 0.03  # a probe may cost at most this share of wall time (big models probe less often)
EVAL_BUDGET = 0.01  # same for held-out evaluation
EVAL_MIN_INTERVAL = 3.0
EVAL_SIZE = 50
COLUMNS = ("step", "loss", "accuracy", "lr", "tokens_per_s", "wall")


@dataclass
class MetricRows:
    """Steps since the last batch as numpy columns (`wall`: seconds of running, pauses excluded)."""

    step: np.ndarray
    loss: np.ndarray
    accuracy: np.ndarray
    lr: np.ndarray
    tokens_per_s: np.ndarray
    wall: np.ndarray

    def __len__(self) -> int:
        return len(self.step)


@dataclass
class RunInfo:
    task: str
    model: str
    device: str
    steps: int
    warmup: int
    probe: str
    threads: int
    config: dict  # the model's TransformerConfig.to_dict()
    src_vocab: list
    tgt_vocab: list


@dataclass
class Snapshot:
    """The probe's recorded forward at one step of the run."""

    step: int
    result: ForwardResult
    probe: str


@dataclass
class Offer:
    """A CPU copy of the trained model (nobody trains it). The panel shows it in the other
    panels (`Session.show_model`) or makes it the session's model; the pipeline runs it."""

    bundle: ModelBundle
    step: int
    reason: str  # "show" (a live view) | "asked" (use it) | "finished" | "stopped" (the run's end)
    cost: float = 0.0  # s the worker spent copying it (paces the live views)


class TrainingWorker(QObject):
    """Runs one training request; create, `moveToThread`, connect `thread.started` to `run`."""

    info = Signal(object)  # RunInfo, once the model is built
    rows = Signal(object)  # MetricRows
    evaluated = Signal(object)  # EvalEvent
    snapshot = Signal(object)  # Snapshot
    probe_failed = Signal(str)
    offered = Signal(object)  # Offer
    saved = Signal(str)  # folder
    save_failed = Signal(str)
    failed = Signal(str)  # training error; the run pauses, nothing is lost
    phase = Signal(str)  # "building" | "running" | "paused" | "finishing"
    finished = Signal(str)  # "finished" (all steps) | "stopped" | "failed" (could not start)

    def __init__(self, request: TrainingRequest):
        super().__init__()
        self.request = request
        self.trainer = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._commands: list[tuple] = []
        self._paused = request.start_paused
        self._single_steps = 0
        self._stop = False
        self._stop_save_to: str | None = None
        self._stop_offer = True
        self._probe = request.probe
        self._probe_dirty = False
        self._snapshots = request.snapshots
        self._rows: list[tuple] = []
        # Read by the GUI thread only after the thread has ended (shutdown):
        self.last_saved: str | None = None
        self.last_error: str | None = None
        self.steps_done = 0

    # -- thread-safe controls (any thread) ---------------------------------------------------
    def pause(self) -> None:
        with self._lock:
            self._paused = True
        self._wake.set()

    def resume(self) -> None:
        with self._lock:
            self._paused, self._single_steps = False, 0
        self._wake.set()

    def step_once(self) -> None:
        """While paused: exactly one more optimisation step (then stay paused)."""
        with self._lock:
            self._paused = True
            self._single_steps += 1
        self._wake.set()

    def stop(self, save_to: str | None = None, offer: bool = True) -> None:
        """End after the current step; optionally save a checkpoint and/or offer the model."""
        with self._lock:
            self._stop, self._stop_save_to, self._stop_offer = True, save_to, offer
        self._wake.set()

    def save(self, folder: str) -> None:
        self._command("save", folder, "")

    def offer(self, reason: str = "asked") -> None:
        """Send a CPU copy of the model as it is now (between two steps)."""
        self._command("offer", None, reason)

    def set_probe(self, text: str) -> None:
        with self._lock:
            self._probe, self._probe_dirty = text, True
        self._wake.set()

    def set_snapshots(self, on: bool) -> None:
        with self._lock:
            self._snapshots = bool(on)

    def _command(self, *cmd) -> None:
        with self._lock:
            self._commands.append(cmd)
        self._wake.set()

    # -- the loop (worker thread) ---------------------------------------------------------------
    @Slot()
    def run(self) -> None:
        import torch

        torch.set_num_threads(self.request.threads or worker_threads())  # the GUI thread keeps a core
        outcome = "failed"
        try:
            outcome = self._run()
        except Exception as exc:  # noqa: BLE001 - a bug must reach the user, not kill the thread silently
            traceback.print_exc()
            self.last_error = f"{type(exc).__name__}: {exc}"
            self.failed.emit(self.last_error)
        finally:
            self.finished.emit(outcome)
            QThread.currentThread().quit()  # direct call: works before the thread's event loop starts

    def _run(self) -> str:
        self.phase.emit("building")
        try:
            self.trainer = trainer = build_trainer(self.request)
        except (TrainingError, ValueError, OSError) as exc:  # bad task file, no CUDA, vocabulary mismatch …
            self.last_error = str(exc)
            self.failed.emit(self.last_error)
            return "failed"
        cfg = trainer.config
        with self._lock:
            if not self._probe.strip():
                self._probe = default_probe(trainer.task, trainer.model.config.kind)
        self._task_dict = trainer.task.to_dict()
        self.info.emit(RunInfo(trainer.task.name, describe_model(trainer), str(trainer.device), cfg.steps,
                               cfg.warmup, self._probe, torch_threads(), trainer.model.config.to_dict(),
                               list(trainer.src_tokenizer.vocab), list(trainer.tgt_tokenizer.vocab)))
        self._wall = 0.0
        self._last_emit = self._last_probe = time.monotonic()
        self._probe_cost, self._eval_cost, self._last_eval_wall = 0.0, 0.0, 0.0
        was_paused = None
        self._maybe_probe(force=True)  # the untrained model's attention: where the story starts
        while True:
            self._run_commands()
            with self._lock:
                stop, paused, single = self._stop, self._paused, self._single_steps
            if stop:
                break
            if trainer.step_count >= cfg.steps:
                self._flush()
                return self._finish("finished")
            if paused and not single:
                if was_paused is not True:
                    self._flush()
                    self._maybe_probe(force=True)
                    self.phase.emit("paused")
                    was_paused = True
                elif self._probe_dirty:
                    self._maybe_probe(force=True)
                self._wake.wait(0.1)
                self._wake.clear()
                continue
            if was_paused is not False and not single:
                self.phase.emit("running")
                was_paused = False
            self._one_step(single)
        self._flush()
        return self._finish("stopped")

    def _one_step(self, single: int) -> None:
        start = time.monotonic()
        try:
            event = self.trainer.step()
        except Exception as exc:  # noqa: BLE001 - NaN loss, OOM, a bug: say so and pause, keep the weights
            if not isinstance(exc, TrainingError):
                traceback.print_exc()
            if isinstance(exc, TrainingError):  # its message already names the step and what to do
                self.last_error = f"Training paused: {exc}"
            else:
                self.last_error = f"Training paused at step {self.trainer.step_count + 1}: {type(exc).__name__}: {exc}"
            with self._lock:
                self._paused, self._single_steps = True, 0
            self._flush()
            self.failed.emit(self.last_error)
            return
        self._wall += time.monotonic() - start
        self.steps_done = event.step
        self._rows.append((event.step, event.loss, event.token_accuracy, event.lr, event.tokens_per_s, self._wall))
        if single:
            with self._lock:
                self._single_steps = max(0, self._single_steps - 1)
            self._flush()
            self._maybe_probe(force=True)
            return
        now = time.monotonic()
        if now - self._last_emit >= EMIT_INTERVAL:
            self._flush()
        self._maybe_probe()
        self._maybe_evaluate()

    def _flush(self) -> None:
        self._last_emit = time.monotonic()
        if not self._rows:
            return
        cols = list(zip(*self._rows))
        self._rows = []
        self.rows.emit(MetricRows(np.asarray(cols[0], dtype=np.int64),
                                  *(np.asarray(c, dtype=np.float64) for c in cols[1:])))

    # -- probe, evaluation, copies (all between steps) ------------------------------------------
    def view(self) -> ModelBundle:
        """A bundle around the *training* model (no copy): for forwards on this thread only."""
        t = self.trainer
        return ModelBundle(t.model, t.src_tokenizer, t.tgt_tokenizer, self._task_dict, {}, name=t.task.name)

    def _maybe_probe(self, force: bool = False) -> None:
        with self._lock:
            text, on, dirty = self._probe, self._snapshots, self._probe_dirty
            self._probe_dirty = False
        now = time.monotonic()
        if not (on or force or dirty):
            return
        if not (force or dirty) and now - self._last_probe < max(PROBE_INTERVAL, self._probe_cost / PROBE_BUDGET):
            return
        try:
            result = self.view().run(text)
        except InputError as exc:
            if dirty or force:
                self.probe_failed.emit(str(exc))
            result = None
        finally:
            self.trainer.model.train()
            self._last_probe = time.monotonic()
            self._probe_cost = self._last_probe - now
            self._wall += self._probe_cost
        if result is not None:
            self.snapshot.emit(Snapshot(self.trainer.step_count, result, text))

    def _maybe_evaluate(self, force: bool = False) -> None:
        due = self._wall - self._last_eval_wall >= max(EVAL_MIN_INTERVAL, self._eval_cost / EVAL_BUDGET)
        if not (force or due):
            return
        start = time.monotonic()
        event: EvalEvent = self.trainer.evaluate(min(EVAL_SIZE, self.trainer.config.eval_size))
        self.trainer.model.train()
        self._eval_cost = time.monotonic() - start
        self._wall += self._eval_cost
        self._last_eval_wall = self._wall
        self._flush()  # the curves' steps reach the eval's step first
        self.evaluated.emit(event)

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

    def _run_commands(self) -> None:
        with self._lock:
            commands, self._commands = self._commands, []
        for name, arg, reason in commands:
            if name == "save":
                self._save(arg)
            elif name == "offer":
                self._offer(reason)

    def _save(self, folder: str) -> None:
        from model.checkpoint import CheckpointError, save_checkpoint

        try:
            bundle = self.cpu_bundle()
            save_checkpoint(bundle, folder)
        except (CheckpointError, OSError) as exc:
            self.last_error = str(exc)
            self.save_failed.emit(str(exc))
            return
        self.last_saved = str(folder)
        self.saved.emit(str(folder))

    def _offer(self, reason: str) -> None:
        start = time.monotonic()
        bundle = self.cpu_bundle()
        cost = time.monotonic() - start
        self._wall += cost
        self.offered.emit(Offer(bundle, self.trainer.step_count, reason, cost))

    def _finish(self, outcome: str) -> str:
        self.phase.emit("finishing")
        with self._lock:
            save_to, offer = self._stop_save_to, self._stop_offer
        if self.trainer.step_count > 0:
            if outcome == "finished":
                self._maybe_evaluate(force=True)
            if offer:  # (not when the window is closing: nobody would see it)
                self._maybe_probe(force=True)  # the timeline ends at the last step
            if save_to:
                self._save(save_to)
            if offer:
                self._offer(outcome)
        return outcome


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


class TrainingRun:
    """One worker in its own QThread: start, steer, and join it."""

    def __init__(self, request: TrainingRequest):
        self.thread = QThread()
        self.thread.setObjectName("training")
        self.worker = TrainingWorker(request)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)

    def start(self) -> None:
        self.thread.start()

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def join(self, timeout_ms: int = 60000) -> bool:
        """Block until the thread has ended (call `worker.stop()` first)."""
        self.thread.quit()
        return self.thread.wait(timeout_ms)


class _SaveSignals(QObject):
    saved = Signal(str)
    failed = Signal(str)


class _SaveJob(QRunnable):
    def __init__(self, bundle: ModelBundle, folder: str, signals: _SaveSignals):
        super().__init__()
        self.bundle, self.folder, self.signals = bundle, folder, signals

    def run(self) -> None:
        from model.checkpoint import CheckpointError, save_checkpoint

        try:
            save_checkpoint(self.bundle, self.folder)
        except (CheckpointError, OSError) as exc:
            self.signals.failed.emit(str(exc))
        else:
            self.signals.saved.emit(self.folder)


def save_in_background(bundle: ModelBundle, folder: str, parent: QObject) -> _SaveSignals:
    """Save a model nobody trains (a finished run's copy) on a pool thread; connect the returned
    signals (they live on the caller's thread, so results arrive queued)."""
    signals = _SaveSignals(parent)
    QThreadPool.globalInstance().start(_SaveJob(bundle, folder, signals))
    return signals


__all__ = ["TrainingWorker", "TrainingRun", "save_in_background", "MetricRows", "RunInfo", "Snapshot", "Offer",
           "COLUMNS"]
