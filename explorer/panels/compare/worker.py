"""The compare panel's one job at a time, off the GUI thread: load checkpoint B, run both models.

A comparison is two Frames and two teacher-forced passes: too slow for the GUI thread on a
big model. `ComparisonJobs` runs one job at a time with superqt's `create_worker` (the
pattern `explorer.runner` uses), keeps only the newest request queued, and delivers only the
newest request's result, so dragging the snapshot slider never shows a stale comparison.
"""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from PySide6.QtCore import QObject

from explorer.latest_job import LatestJob
from model.inference.bundle import InputError
from model.interpret.comparison import ComparisonError, compare
from model.io.checkpoints import UNTRAINED, untrained_like
from model.io.snapshots import latest_snapshot

EXPECTED = (ComparisonError, InputError, ValueError, OSError, KeyError)
CACHED_MODELS = 6  # snapshots of a small run: reloading one the slider passes again costs nothing


class ModelCache:
    """Checkpoint B by reference, loaded once (a run's snapshots are small; the last few stay).
    Only the worker thread calls `get`; one job runs at a time, so it needs no lock."""

    def __init__(self, capacity: int = CACHED_MODELS):
        self.capacity = capacity
        self._bundles: OrderedDict[str, object] = OrderedDict()

    @staticmethod
    def resolve(reference: str) -> str:
        """A folder of step folders means its newest snapshot."""
        newest = latest_snapshot(reference) if Path(reference).expanduser().is_dir() else None
        return str(newest) if newest is not None else reference

    def get(self, reference: str, model_a=None):
        """B for `reference`; "untrained" is A's architecture freshly initialised (one per A)."""
        from explorer.runner import load_bundle

        untrained = reference == UNTRAINED
        if untrained and model_a is None:
            raise ComparisonError("“untrained” compares a model with itself before training: no model A")
        key = f"{UNTRAINED}:{model_a.name}:{model_a.path}:{model_a.config!r}" if untrained else self.resolve(reference)
        if key in self._bundles:
            self._bundles.move_to_end(key)
            return self._bundles[key]
        bundle = untrained_like(model_a) if untrained else load_bundle(key)
        self._bundles[key] = bundle
        while len(self._bundles) > self.capacity:
            self._bundles.popitem(last=False)
        return bundle


def run_comparison(cache: ModelCache, model_a, label_a: str, reference: str, source: str, target,
                   settings, frame_a=None):
    """Load B (cached) and compare it with A on the session's input; runs on the worker thread."""
    bundle_b = cache.get(reference, model_a)
    return compare(model_a, bundle_b, source, target, settings, label_a, describe_reference(reference),
                   frame_a=frame_a)


def describe_reference(reference: str, bundle=None) -> str:
    """How the panel names B: a snapshot's run and step, a folder's name, a bundled name."""
    if reference == UNTRAINED:
        return "untrained copy"
    path = Path(ModelCache.resolve(reference))
    if path.name.startswith("step-") and path.name[5:].isdigit():
        return f"{path.parent.name}, step {int(path.name[5:]):,}"
    return path.name if path.exists() else reference


class ComparisonJobs(LatestJob):
    """`LatestJob` with checkpoint B's cache, and `cancel`. Signals: done(Comparison), failed, busy."""

    expected_errors = EXPECTED

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.cache = ModelCache()

    def cancel(self) -> None:
        """Forget what is queued and drop the result of what runs (nothing to compare any more)."""
        self._latest += 1
        self._queued = None
