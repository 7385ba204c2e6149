"""No widget of ours keeps data under the name of a Qt virtual method.

Shiboken treats any attribute of a Python subclass that shares a C++ virtual's name as an
override: a `self.metric = "exact_match"` on a QWidget made every font change call the
string as QPaintDevice.metric() and crashed the whole app (a segfault while printing the
TypeError). This walks every widget of a full window and of each variant's panels.
"""
import pytest
from PySide6.QtCore import QObject, SignalInstance
from PySide6.QtWidgets import QGraphicsObject, QGraphicsWidget, QWidget

from model.io.checkpoints import random_bundle

# C++ virtuals Qt itself calls on widgets and graphics items (QPaintDevice, QObject, QWidget,
# QGraphicsItem); every *Event handler is one too.
VIRTUALS = {"metric", "devType", "paintEngine", "initPainter", "redirected", "sharedPainter", "event",
            "eventFilter", "sizeHint", "minimumSizeHint", "heightForWidth", "hasHeightForWidth", "setVisible",
            "focusNextPrevChild", "inputMethodQuery", "connectNotify", "disconnectNotify", "boundingRect",
            "paint", "shape", "type", "itemChange", "sceneEventFilter", "contains", "collidesWithItem",
            "isObscuredBy", "opaqueArea", "setGeometry", "updateGeometry", "sizeHintF", "setSceneRect"}


def _qt_names() -> set[str]:
    names = set()
    for cls in (QWidget, QObject, QGraphicsObject, QGraphicsWidget):
        names |= {n for n in dir(cls) if n in VIRTUALS or n.endswith("Event")}
    return names


def _shadowing(window) -> list[str]:
    qt = _qt_names()
    found = []
    for obj in [window, *window.findChildren(QObject)]:
        if type(obj).__module__.split(".")[0] not in ("explorer",):
            continue
        for name, value in vars(obj).items():
            # PySide caches bound signals in the instance dict; data under a method's name is the bug
            if name in qt and not isinstance(value, SignalInstance) and not callable(value):
                found.append(f"{type(obj).__name__}.{name}")
    return sorted(set(found))


@pytest.fixture(scope="module")
def built(qapp, tmp_path_factory):
    """One window with every panel built (the walk needs them all; building 17 panels is the
    cost), shared by the model kinds: each case loads its kind into it."""
    from explorer.launch import close_window
    from support import build_main_window
    window = build_main_window(tmp_path_factory.mktemp("attributes"))
    assert window.panels.built("lens") is None  # panels behind tabs are built when first shown …
    window.panels.build_all()  # … so build every one to walk it
    yield window
    close_window(qapp, window)


@pytest.mark.parametrize("kind", ["encoder_decoder", "encoder_only", "decoder_only"])
def test_no_instance_attribute_shadows_a_qt_method(built, kind):
    window = built
    layers = {"n_decoder_layers": 0} if kind == "encoder_only" else {"n_encoder_layers": 0} if kind == "decoder_only" else {}
    window.state.set_bundle(random_bundle("reverse" if kind == "encoder_decoder" else "facts", kind=kind,
                                          d_model=32, n_heads=4, d_ff=64, **layers))
    assert window.state.bundle.config.kind == kind
    assert _shadowing(window) == []
