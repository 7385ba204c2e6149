"""`ElidedLabel` (explorer.drawing.elided_label): a map title is whole on one line, or whole on
two where it may break, and cut with "…" only where neither fits — decided with Qt's own
test of a whole line (`elidedText`), which cuts a text exactly as wide as its advance."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QFontMetrics  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from explorer import style  # noqa: E402
from explorer.drawing.elided_label import ElidedLabel  # noqa: E402

TITLE = "Self-attention L1 H1"


def shown_at(qtbot, width: int, point_size: float = 18.0) -> tuple[ElidedLabel, str]:
    label = ElidedLabel(TITLE)
    label.break_at = " "
    label.setFont(style.font(point_size))
    qtbot.addWidget(label)
    label.resize(width, 80)
    label.show()  # (a hidden widget's resize event waits for its show)
    return label, label.text()


@pytest.mark.parametrize("slack", [-2, -1, 0, 1, 2, 40])
def test_a_title_about_its_own_width_is_whole_or_broken_never_cut(qtbot, slack):
    """At its advance ± a few px (the 1024-px beamer's 239-px column held a 239-px title), the
    title is whole, on one line or as "Self-attention⏎L1 H1", never "Self-attention L1 …"."""
    metrics = QFontMetrics(style.font(18.0))
    label, text = shown_at(qtbot, metrics.horizontalAdvance(TITLE) + slack)
    assert "…" not in text and text.replace("\n", " ") == TITLE, text
    lines = text.count("\n") + 1
    assert label.lines_at(label.width()) == lines  # what a layout is told is what is drawn
    least, _ = shown_at(qtbot, int(np.ceil(label.least_width())))  # what a layout is promised: whole there
    assert "…" not in least.text() and least.text().replace("\n", " ") == TITLE, least.text()


def test_too_narrow_even_broken_it_is_cut_with_the_whole_title_in_its_tooltip(qtbot):
    metrics = QFontMetrics(style.font(18.0))
    label, text = shown_at(qtbot, metrics.horizontalAdvance("Self-attention") - 10)
    assert text.endswith("…") and "\n" not in text and label.toolTip() == TITLE


def test_a_new_font_is_fitted_again_at_the_same_width(qtbot):
    """Entering presentation scales the font while the column keeps its width."""
    metrics = QFontMetrics(style.font(12.0))
    label, text = shown_at(qtbot, metrics.horizontalAdvance(TITLE) + 4, point_size=12.0)
    assert text == TITLE
    label.setFont(style.font(18.0))
    assert label.text() == "Self-attention\nL1 H1"


def test_a_shorter_form_is_shown_whole_before_anything_is_cut(qtbot):
    """`set_texts`: the longest form that is whole at the label's width ("Own model: 1 layer ×
    4 heads" rather than "Own model: 1 layer × 4 heads, d_m…"); "…" only when none is; the whole
    text always in the tooltip."""
    forms = ("Own model: 1 layer × 4 heads, d_model 64, facts corpus", "Own model: 1 layer × 4 heads", "Own model")
    metrics = QFontMetrics(style.font(18.0))
    label = ElidedLabel()
    label.setFont(style.font(18.0))
    qtbot.addWidget(label)
    label.set_texts(*forms)
    label.show()
    for width, shown in ((metrics.horizontalAdvance(forms[0]) + 4, forms[0]),
                         (metrics.horizontalAdvance(forms[1]) + 4, forms[1]),
                         (metrics.horizontalAdvance(forms[1]) - 4, forms[2])):
        label.resize(width, 40)
        QApplication.processEvents()
        assert label.text() == shown, (width, label.text())
        assert label.toolTip() == forms[0]
    label.resize(metrics.horizontalAdvance("Own"), 40)
    QApplication.processEvents()
    assert label.text().endswith("…")  # not even the shortest fits: it is cut
