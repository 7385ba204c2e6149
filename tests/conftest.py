"""Shared test set-up: headless Qt, few threads, and a factory for tiny random models."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything imports Qt

import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

# Every test process (each pytest-xdist worker too) keeps its QSettings (layout, theme, scale)
# in a folder of its own, read before Qt resolves its paths: tests never read or overwrite the
# user's saved settings, and parallel workers never race on one settings file. Subprocesses
# inherit it.
_SETTINGS_HOME = tempfile.mkdtemp(prefix="transformer-explorer-test-settings-")
os.environ["XDG_CONFIG_HOME"] = _SETTINGS_HOME
atexit.register(shutil.rmtree, _SETTINGS_HOME, ignore_errors=True)

import pytest  # noqa: E402
import torch  # noqa: E402

# CI machines have 2 cores shared with other jobs, and tiny models only lose from more threads
# (under load, intra-op threads spin and wait on each other).
torch.set_num_threads(1)


@pytest.fixture(scope="session", autouse=True)
def _freeze_imported_objects():
    """Move everything the heavy imports made (torch, Qt, pyqtgraph, the app's modules: ~230,000
    objects) out of the cyclic collector's sight, once a process: the clean-up below collects
    after every GUI test, and each collection walked all of them (0.1–0.5 s; 0.005 s frozen).
    Only objects made by the tests themselves (dead windows' cycles) are collected."""
    import gc
    import importlib.util
    if importlib.util.find_spec("PySide6") is not None:
        import explorer.main_window  # noqa: F401 - imported for its objects' sake
    gc.collect()
    gc.freeze()
    # As in the app (explorer.gui_collector.collect_on_gui_thread): no automatic collection, which would
    # run in whatever thread allocates — a worker's could destroy a dead window's Qt objects
    # while the test thread re-polishes them. Collected between tests, on this thread, below.
    gc.disable()
    yield
    gc.enable()
    gc.unfreeze()


@pytest.fixture
def make_model():
    """`make_model(seed=0, **config overrides)` → a small random Transformer in eval mode, dropout 0."""
    from model import Transformer, TransformerConfig

    def factory(seed: int = 0, **overrides) -> "Transformer":
        params = dict(src_vocab_size=13, tgt_vocab_size=11, d_model=32, n_heads=4, d_ff=64,
                      n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=64)
        params.update(overrides)
        torch.manual_seed(seed)
        return Transformer(TransformerConfig(**params)).eval()

    return factory


_LAST_TOPS: frozenset = frozenset()  # the top-level widgets after the last collection


@pytest.fixture(autouse=True)
def _delete_closed_windows():
    """Really delete the windows a test closed. pytest-qt closes them and calls deleteLater(), but
    with no event loop running that deletion never happens: hundreds of dead windows piled up,
    and every later app-wide `setStyleSheet` (a theme or scale change) re-polished all of them —
    the presentation and figure tests took 4× longer late in the suite than alone."""
    yield
    import gc
    import sys
    if gc.get_count()[0] > gc.get_threshold()[0]:  # the young objects, as automatic collection would
        gc.collect(1)
    if "PySide6.QtWidgets" not in sys.modules:
        return
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication, QMainWindow
    app = QApplication.instance()
    if app is None:
        return
    closed = [w for w in app.topLevelWidgets()
              if isinstance(w, QMainWindow) and w.parent() is None and not w.isVisible()]
    for widget in closed:
        widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    # A full collection costs ~0.5 s in a worker holding torch and Qt: only after a test that
    # made or dropped a top-level widget (a window, a panel under test). It ran after every one
    # of ~900 tests, model tests too: ~40% of the suite's time was teardown. Skipping it after
    # GUI tests as well let Qt objects in dead cycles be re-polished by the next theme change:
    # a segfault in setStyleSheet.
    global _LAST_TOPS
    if not closed and _top_level_widgets(app) == _LAST_TOPS:
        return
    gc.collect()  # pyqtgraph's plot items sit in reference cycles holding ~400 parentless menus a window
    # What survived a full collection is live (module fixtures' windows and models, caches): out of
    # the collector's sight, so the next collection walks only what later tests make.
    gc.freeze()
    _LAST_TOPS = _top_level_widgets(app)


def _top_level_widgets(app) -> frozenset:
    """The application's top-level widgets, by their C++ address: a widget made on the C++ side
    (a menu, a combo box's popup) gets a new Python wrapper, with a new id(), on every call."""
    from shiboken6 import getCppPointer
    return frozenset(getCppPointer(w)[0] for w in app.topLevelWidgets())


@pytest.fixture
def controls(qtbot):
    """The Training panel's controls on their own (a new run's settings)."""
    from explorer.panels.training.controls import TrainingControls
    widget = TrainingControls()
    qtbot.addWidget(widget)
    return widget
