"""A rich one-line label shows its text whole where it fits, else the first shorter form that
fits, else the shortest form cut with its marker."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from PySide6.QtGui import QTextDocumentFragment  # noqa: E402

from explorer.rich_eliding_label import RichElidingLabel, _document  # noqa: E402


def plain(html_text: str) -> str:
    return QTextDocumentFragment.fromHtml(html_text).toPlainText()


def test_the_first_form_that_fits_is_shown_whole_and_the_last_is_cut(qtbot):
    label = RichElidingLabel()
    qtbot.addWidget(label)
    label.show()
    forms = ["Output: one two three <b>four</b>", "Output: two three <b>four</b>", "Output: … <b>four</b>"]
    label.setText(forms[0], shorter=forms[1:])
    room = {form: _document(form, label.font()).idealWidth() for form in forms}
    margins = label.width() - label.contentsRect().width()
    for width, shown in ((room[forms[0]], forms[0]), (room[forms[1]], forms[1]), (room[forms[2]], forms[2])):
        label.resize(int(width) + 2 + margins, label.height())
        assert plain(label.shown_text()) == plain(shown)
    label.resize(int(room[forms[2]] / 2) + margins, label.height())
    assert plain(label.shown_text()).endswith("…") and plain(label.shown_text()).startswith("Out")
    assert label.text() == forms[0]
