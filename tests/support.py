"""Helpers shared by the GUI tests (pytest puts tests/ on sys.path, so `from support import …`)."""
from __future__ import annotations

from contextlib import contextmanager

import torch
from PySide6.QtCore import QEvent, QObject, QSettings
from PySide6.QtWidgets import QApplication, QWidget

from explorer.main_window import MainWindow
from explorer.runner import Runner
from explorer.state import SessionState
from model.io.checkpoints import random_bundle


def small_bundle(**overrides):
    """A seeded, untrained reverse-task model with 2+3 layers: small, but every kind of step."""
    torch.manual_seed(0)
    params = dict(n_encoder_layers=2, n_decoder_layers=3, n_heads=4, d_model=32, d_ff=64, dropout=0.0)
    params.update(overrides)
    return random_bundle("reverse", **params)


def tiny_llama(bias: bool = False, kv_heads: int = 2):
    """A small Llama-style decoder (RoPE, grouped-query attention, RMSNorm, SwiGLU, tied
    embeddings), seeded, in eval mode: the modern options without a GGUF file."""
    from model.nn.config import TransformerConfig
    from model.nn.transformer import Transformer
    torch.manual_seed(0)
    config = TransformerConfig(50, 50, kind="decoder_only", d_model=32, n_heads=4, n_kv_heads=kv_heads, d_ff=48,
                               n_decoder_layers=2, max_len=64, dropout=0.0, positional="rope", norm="rms",
                               activation="swiglu", bias=bias, share_embeddings=True, norm_first=True,
                               scale_embeddings=False)
    return Transformer(config).eval()


def make_main_window(qtbot, tmp_path, size=(1280, 800), settings: QSettings | None = None,
                     name: str = "s.ini", show: bool = True) -> MainWindow:
    """The real main window with a synchronous runner, its settings in `tmp_path` (or the given
    ones, then restored from), the untrained reverse model loaded and "attention" run."""
    return build_main_window(tmp_path, size, settings, name, show, register=qtbot.addWidget)


def build_main_window(folder, size=(1280, 800), settings: QSettings | None = None, name: str = "s.ini",
                      show: bool = True, register=None) -> MainWindow:
    """`make_main_window` without a test's qtbot: for a module-scoped window that several tests
    share (close it with explorer.launch.close_window)."""
    state = SessionState()
    runner = Runner(state, synchronous=True)
    w = MainWindow(state, runner, settings=settings or QSettings(str(folder / name), QSettings.IniFormat),
                   restore=settings is not None, persist=False)
    if register is not None:
        register(w)
    if show:
        w.resize(*size)
        w.show()
    runner.set_bundle(random_bundle("reverse"), then_run="attention")
    return w


def messages_of(window) -> list[tuple[str, str]]:
    """Every (level, text) the window's state reports from now on."""
    seen: list[tuple[str, str]] = []
    window.state.message.connect(lambda level, text: seen.append((level, text)))
    return seen


def plain_text(rich: str) -> str:
    """What a rich-text label reads as, without its markup."""
    from PySide6.QtGui import QTextDocument
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


class _WindowsShown(QObject):
    """Names the widgets shown while they are windows of their own (such a widget takes the focus)."""

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Show and isinstance(obj, QWidget) and obj.isWindow():
            self.seen.append(type(obj).__name__)
        return False


@contextmanager
def windows_shown():
    """The list of widgets shown as windows of their own while the block runs."""
    watcher = _WindowsShown()
    QApplication.instance().installEventFilter(watcher)
    try:
        yield watcher.seen
    finally:
        QApplication.instance().removeEventFilter(watcher)
