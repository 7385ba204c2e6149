"""Everything slow, off the GUI thread: loading a model and computing the Frame. Workers never
touch widgets; they hand back a `Frame` or `ModelBundle` (detached CPU tensors)."""
from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from explorer.latest_job import LatestJob
from model.inference.bundle import ModelBundle
from model.interpret.frame import compute_frame
from model.interpret.interventions import heads_that_fit
from model.io.checkpoints import bundled_checkpoints  # noqa: F401 - the explorer's name
from model.io.checkpoints import random_bundle as untrained_bundle
from model.io.open_model import installed_pretrained as pretrained_models  # noqa: F401 - the explorer's names
from model.io.open_model import is_pretrained_folder, pretrained_alias  # noqa: F401
from model.io.open_model import load_model as load_bundle
from model.io.run_request import DEFAULT_TASK, first_readable
from model.io.run_request import default_model as default_bundle

GUI_SWITCH_INTERVAL_S = 0.001  # how long a worker running Python keeps the interpreter lock from the GUI thread


def share_interpreter_with_gui() -> None:
    """Every Qt call the GUI thread makes lets go of the interpreter lock and takes it back; while a
    worker runs Python (a model's tokenizer being built), each taking-back waits for the worker's
    switch interval. At Python's 5 ms a paint of a hundred items waits half a second; at 1 ms, a fifth."""
    if sys.getswitchinterval() > GUI_SWITCH_INTERVAL_S:
        sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)


# -- where models come from (`load_bundle`: a bundled or installed name, a folder, a .gguf file) --
def ready_to_show(bundle: ModelBundle) -> ModelBundle:
    """On the loader's thread: what the GUI thread would otherwise do first when the model is
    shown (its chat template imported and compiled)."""
    from model.inference.chat import prepare_chat_template
    prepare_chat_template(bundle.chat_template)
    return bundle


random_bundle = partial(untrained_bundle, dropout=0.0)  # an untrained small model of a task, as a window shows it


def describe_device(bundle: ModelBundle) -> str:
    try:
        from model.nn.devices import describe
        return describe(bundle.device)
    except Exception:  # noqa: BLE001 - a description is cosmetic; never fail on it
        return str(bundle.device)


# -- the pipeline ----------------------------------------------------------------------------------
class Runner(QObject):
    """The explorer's one pipeline: session → `compute_frame` → `state.set_frame`, recomputed off
    the GUI thread through one `LatestJob` whenever the session changes; only the newest request's
    result is shown, and a frame asked for while a model loads waits for it. A failure leaves the
    previous frame on screen and says why (`failed`). `synchronous`: on the calling thread (figures, tests).
    """

    failed = Signal(str)

    def __init__(self, state, synchronous: bool = False, parent: QObject | None = None):
        super().__init__(parent)
        self.state = state
        self.job = LatestJob(self, synchronous)
        if not synchronous:
            share_interpreter_with_gui()
        self.job.expected_errors = (ValueError, OSError, KeyError)  # (InputError is one) anything else: a bug
        self.job.done.connect(self._on_done)
        self.job.failed.connect(self._on_failed)
        self.job.busy.connect(lambda on: state.set_busy(on, self._what if on else ""))
        self._deliver: Callable[[object], None] | None = None  # the newest request's result to this
        self._undo: Callable[[], None] | None = None  # and on its failure, this first
        self._what = ""  # shown while the newest request runs
        self._loading = False  # a model load is the newest request
        self._frame_waits = False  # a frame was asked for while a model loads
        self._held = 0  # > 0 while run() changes several fields: one request at the end, not one each
        ev = state.session.events
        ev.input.connect(self._on_session_changed)
        for signal in (ev.bundle, ev.decoding, ev.shown_model, ev.interventions, ev.chat):  # changes that keep the text
            signal.connect(self._on_model_or_settings_changed)

    # -- requests ---------------------------------------------------------------------------
    def run(self, source: str, target: str | None = None) -> None:
        """Show `source` (teacher-forced on `target` if given): one Frame, computed once."""
        if self.state.bundle is None and not self._loading:
            return self._fail_now("No model is loaded yet.")
        with self.holding():
            self.state.set_input(source, target)
        self.request()

    def request(self) -> None:
        """Recompute the Frame for the session as it is now."""
        session = self.state.session
        bundle = session.model
        if bundle is None:
            if self._loading:
                self._frame_waits = True  # (the loaded model runs the session's text)
                return
            return self._fail_now("No model is loaded yet.")
        heads = heads_that_fit(bundle.model, session.interventions)  # (a shown run may lack some)
        args = (bundle, session.source, session.target, session.decoding, session.model_label, self.state.frame, heads,
                session.uses_chat)
        self._submit(lambda: compute_frame(*args), self.state.set_frame,
                     f"Running {session.model_label} on {session.source!r}…", on_failed=self._keep_frame_input)

    def load(self, path_or_name: str | Path, then_run: str | None = None, then_target: str | None = None) -> None:
        """Load a checkpoint (folder or bundled name), make it the session's model, run an input."""
        self._submit(lambda: ready_to_show(load_bundle(path_or_name)),
                     lambda b: self._apply_bundle(b, then_run, then_target), f"Loading {path_or_name}…", load=True)

    def load_random(self, task_name: str = DEFAULT_TASK, then_run: str | None = None) -> None:
        self._submit(lambda: random_bundle(task_name), lambda b: self._apply_bundle(b, then_run),
                     f"Building an untrained {task_name} model…", load=True)

    def load_default(self, then_run: str | None = None, then_target: str | None = None) -> None:
        self._submit(default_bundle, lambda b: self._apply_bundle(b, then_run, then_target), "Loading the model…",
                     load=True)

    def set_bundle(self, bundle: ModelBundle, then_run: str | None = None) -> None:
        """Use an already built bundle (no work to do off-thread except the forward)."""
        self.job.stop()  # any job in flight belongs to the previous model
        self._loading = False
        self._apply_bundle(bundle, then_run)

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the running and queued jobs are done and their results delivered."""
        return self.job.wait(msecs)

    def shutdown(self, msecs: int = 10000) -> bool:
        """The window closes: drop the queued job, deliver the running one's result if it ends
        within `msecs` (nothing starts after it), else hand it to nobody. Later requests run as
        usual (a runner may serve another window). True when no job was left running."""
        done = self.job.close(msecs)
        if not done:
            self._loading = self._frame_waits = False  # (an abandoned load holds no frame back)
        return done

    # -- plumbing ---------------------------------------------------------------------------
    def _on_session_changed(self, *_) -> None:
        if not self._held and self.state.bundle is not None:
            self.request()

    def _on_model_or_settings_changed(self, *_) -> None:
        if self.state.session.source:  # nothing typed yet: nothing to show, nothing to refuse
            self._on_session_changed()

    def _apply_bundle(self, bundle: ModelBundle, then_run: str | None, then_target: str | None = None) -> None:
        """The new model, then an input it can read: the one asked for, the previous one, or an example."""
        with self.holding():
            self.state.set_bundle(bundle)
        for note in bundle.load_notes:  # NaN weights, a restored save: said, not only logged
            self.state.inform(note, "warning")
        text = then_run if then_run is not None else self.state.source_text
        readable = first_readable(bundle, (text, *bundle.examples), self.state.session.chat)
        if readable is not None:
            self.run(readable, then_target if readable == then_run else None)

    def _keep_frame_input(self) -> None:
        """A refused text: the session goes back to the text and settings of the frame still shown."""
        frame = self.state.frame
        if frame is not None:
            with self.holding():  # the frame on screen already shows them: nothing to compute
                self.state.session.revert_input(frame.typed, frame.target, frame.settings)

    @contextmanager
    def holding(self):
        """Change several session fields (a scene, a model and its text) with one compute at the
        end — the caller's own `run`/`request`/`load` — instead of one per field."""
        self._held += 1
        try:
            yield self
        finally:
            self._held -= 1

    def _submit(self, fn: Callable[[], object], on_done: Callable[[object], None], what: str,
                on_failed: Callable[[], None] | None = None, load: bool = False) -> None:
        """Run `fn` off the GUI thread; it supersedes every earlier request, but a frame asked for
        while a model loads waits for the load instead."""
        if not load and self._loading:
            self._frame_waits = True
            return
        self._frame_waits = False
        self._loading = load
        self._deliver, self._undo, self._what = on_done, on_failed, what
        self.job.submit(fn)

    def _on_done(self, result) -> None:
        self._loading = False
        self._deliver(result)

    def _on_failed(self, message: str) -> None:
        load_waited = self._loading and self._frame_waits
        self._loading = self._frame_waits = False
        if self._undo is not None:
            self._undo()
        self._fail_now(message)
        if load_waited:  # asked for while the failed load ran: the old model computes it
            self.request()

    def _fail_now(self, message: str) -> None:
        self.state.frame_failed(message)
        self.failed.emit(message)
