"""Checkpoint B of a comparison, loaded once and compared with A (the compare panel runs this off the
GUI thread): B by reference, or "untrained", A's own architecture freshly initialised."""
from __future__ import annotations

from collections import OrderedDict

from model.interpret.comparison import ComparisonError, compare
from model.io.checkpoints import UNTRAINED, untrained_like
from model.io.open_model import load_model
from model.io.snapshots import describe_reference, resolve_reference

CACHED_MODELS = 6  # snapshots of a small run: reloading one the slider passes again costs nothing


class ModelCache:
    """Checkpoint B by reference, loaded once; the last few stay (a run's snapshots are small)."""

    def __init__(self, capacity: int = CACHED_MODELS):
        self.capacity = capacity
        self._bundles: OrderedDict[str, object] = OrderedDict()

    resolve = staticmethod(resolve_reference)

    def get(self, reference: str, model_a=None):
        """B for `reference`; "untrained" is A's architecture freshly initialised (one per A)."""
        untrained = reference == UNTRAINED
        if untrained and model_a is None:
            raise ComparisonError("“untrained” compares a model with itself before training: no model A")
        key = f"{UNTRAINED}:{model_a.name}:{model_a.path}:{model_a.config!r}" if untrained else self.resolve(reference)
        if key in self._bundles:
            self._bundles.move_to_end(key)
            return self._bundles[key]
        bundle = untrained_like(model_a) if untrained else load_model(key)
        self._bundles[key] = bundle
        while len(self._bundles) > self.capacity:
            self._bundles.popitem(last=False)
        return bundle

    def compare(self, model_a, label_a: str, reference: str, source: str, target, settings, frame_a=None):
        """Load B (cached) and compare it with A on the session's input."""
        return compare(model_a, self.get(reference, model_a), source, target, settings, label_a,
                       describe_reference(reference), frame_a=frame_a)
