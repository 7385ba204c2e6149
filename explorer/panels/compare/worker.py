"""The compare panel's work off the GUI thread: `model.io.compare_cache.ModelCache` (Qt-free)."""
from model.io.compare_cache import ModelCache  # noqa: F401
