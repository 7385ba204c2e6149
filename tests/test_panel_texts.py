"""Panel text made one way: a label made at a font role's size wears that role, so the presentation
sheet sizes it as the role (× the scale), not as plain text; a flow's widgets wear the role asked for."""
import pytest
from PySide6.QtWidgets import QLabel, QPushButton

from explorer import style
from explorer.panels.layouts import flow
from explorer.panels.texts import text_label


def test_labels_at_a_roles_size_keep_that_size_under_the_presentation_sheet(qapp):
    before = qapp.styleSheet()
    small, label = text_label("3 of 9", style.SMALL_POINT_SIZE), text_label("Layer", style.BASE_POINT_SIZE + 1)
    heading, plain = text_label("Title", bold=True), text_label("text")
    odd = text_label("big", style.TITLE_POINT_SIZE + 3)  # no role of this size: a font of its own
    flowed = [QPushButton("Run"), QLabel("pairs")]
    holder = flow(*flowed, role="label")  # (holds them)
    assert [w.property(style.ROLE_PROPERTY) for w in (small, label, heading, plain, odd)] == \
        ["small", "label", "heading", None, None]
    try:
        qapp.setStyleSheet(style.font_sheet(2.0))
        for widget in (small, label, heading, plain, *flowed):
            widget.ensurePolished()
        assert small.font().pointSizeF() == pytest.approx(style.SMALL_POINT_SIZE * 2.0)
        assert label.font().pointSizeF() == pytest.approx((style.BASE_POINT_SIZE + 1) * 2.0)
        assert heading.font().bold() and plain.font().pointSizeF() == pytest.approx(style.BASE_POINT_SIZE * 2.0)
        for widget in flowed:
            assert widget.font().pointSizeF() == pytest.approx((style.BASE_POINT_SIZE + 1) * 2.0)
    finally:
        qapp.setStyleSheet(before)
        holder.deleteLater()
