"""The forward-pass stepper: walk every recorded step in order and inspect the exact tensor it
produced (buttons, play, slider, a jump list by block, a find box; keys ← → Space Home End)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QSignalBlocker, QSize, Qt
from PySide6.QtGui import QKeySequence, QShortcut, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDoubleSpinBox,
    QFrame,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QWidget,
)

from explorer import style
from explorer.drawing.heatmap import Heatmap
from explorer.panels.base import Panel
from explorer.panels.layouts import column, row
from explorer.panels.texts import text_label
from explorer.panels.transport import Transport
from explorer.screen import ScreenClass
from model.nn.step_summary import (
    TOKEN_AXES,
    cell_readout,
    colour_scale,
    find_step,
    jump_rows,
    shape_and_stats,
    step_axis_titles,
    visible_text,
)
from model.nn.steps import readable_step_name, slice_for_view, view_kind

HOVER_HINT = "Hover a cell: its value."  # short: one line beside the map
INFO_MIN_WIDTH, INFO_MAX_WIDTH = 300, 560  # the texts' column beside the map
STEP_ROLE = Qt.UserRole + 1  # the jump list's item data: the step's index in the trace


SCALE_RULE = "weight: 0–1 on every map"
FEW_ROWS = 8  # token rows whose labels the view always has room for


class TensorView(Heatmap):
    """A step's 2-D slice: a colour scale chosen by meaning, −∞ scores and blocked entries hatched,
    the exact value under the mouse (`readout_at`, emitted as `hovered`)."""

    def __init__(self, parent=None):
        super().__init__(colour_bar=True, square=False, parent=parent)
        self.bar.axis.setWidth(None)  # the width its labels need: "−0.2" as whole as "0.2"
        self.is_bool = False
        self.row_axis = self.col_axis = ""
        self.colormap_name = style.SEQUENTIAL
        self.describe = self.readout_at

    def show_matrix(self, data: np.ndarray, row_axis: str, col_axis: str, row_labels: list[str] | None,
                    col_labels: list[str] | None, kind: str, titles: tuple[str, str]) -> None:
        """data (R, C): float (maybe −∞) or bool; kind: "probs" | "signed" | "mask" | "auto"; titles: the axes'."""
        data = np.asarray(data)
        self.is_bool = data.dtype == bool
        values = data.astype(np.float32)
        self.row_axis, self.col_axis = row_axis, col_axis
        scale, levels = colour_scale(data, kind)
        self.colormap_name = {"sequential": style.SEQUENTIAL, "diverging": style.DIVERGING}.get(scale, scale)
        self.set_colormap(style.mask_colormap() if scale == "mask" else style.colormap(self.colormap_name))
        self.set_levels(levels)
        self.bar.getAxis("right").setLabel(SCALE_RULE if kind == "probs" else "")
        self.square = row_axis in TOKEN_AXES and col_axis in TOKEN_AXES  # query × key: square cells
        self.set_axis_names(*titles)
        rows, cols = values.shape
        masked = values == 0 if self.is_bool else np.isneginf(values)  # blocked entries, −∞ scores
        self.set_data(values, [visible_text(t) for t in row_labels] if row_labels else [str(i) for i in range(rows)],
                      [visible_text(t) for t in col_labels] if col_labels else [str(i) for i in range(cols)],
                      allowed=~masked, row_names=True)
        # tall enough for a few token rows' labels (a longer input strides them, and says so)
        few = min(rows, FEW_ROWS) if row_labels else 0
        self.canvas.setMinimumHeight(int(few * self.rows_axis.min_cell_px() + 110) if few else 60)

    def readout_at(self, row: int, col: int) -> str:
        """A cell's hover line (the map calls it for cells inside it only)."""
        row_name = f"{self.row_axis} {row}" + ("" if self.rows_axis.numeric else f" “{self.row_labels[row]}”")
        col_name = f"{self.col_axis} {col}" + ("" if self.cols_axis.numeric else f" “{self.col_labels[col]}”")
        return cell_readout(self.values[row, col], self.is_bool, row_name, col_name)

    def cell_to_scene(self, row: int, col: int) -> QPointF:
        """Scene position of a cell's centre (tests move the mouse there)."""
        return self.plot.vb.mapViewToScene(QPointF(col + 0.5, row + 0.5))


class StepperPanel(Panel):
    panel_name = "step"
    title = "Forward pass"

    def __init__(self, state, parent=None):
        super().__init__(state, parent)
        self._shown_head = -1
        self._build_controls()
        self.view = TensorView(self)
        self.view.hovered.connect(self._on_hover)
        self._build_layout()
        self.setFocusPolicy(Qt.StrongFocus)  # a click on the panel takes focus from the input field
        state.stepChanged.connect(self._on_step)
        state.attentionSelected.connect(self._on_attention)
        self.follow(bundle=self._on_bundle, result=self._on_result)

    def _build_controls(self) -> None:
        self.transport = Transport(500)
        self.transport.moved.connect(self.state.select_step)
        for name, key, key_name in (("first", Qt.Key_Home, "Home"), ("back", Qt.Key_Left, "←"), ("play", Qt.Key_Space, "Space"),
                                    ("next", Qt.Key_Right, "→"), ("last", Qt.Key_End, "End")):
            button = getattr(self.transport, name)
            button.setToolTip(f"{button.toolTip()} ({key_name})")
            QShortcut(QKeySequence(key), self, context=Qt.WindowShortcut).activated.connect(button.click)
        self.speed = QDoubleSpinBox(minimum=0.25, maximum=20.0, value=2.0, singleStep=0.5, suffix=" /s", toolTip="Play speed",
                                    valueChanged=lambda per_second: self.transport.timer.setInterval(int(1000 / per_second)))
        self.transport.layout().insertWidget(5, self.speed)
        self.jump = QComboBox(maxVisibleItems=25, sizeAdjustPolicy=QComboBox.AdjustToMinimumContentsLengthWithIcon,
                              minimumContentsLength=12, toolTip="Jump to a step, grouped by block",
                              activated=self._jumped)
        self.jump.setModel(QStandardItemModel(self.jump))
        self.find = QLineEdit(placeholderText="find step…", returnPressed=self._find,
                              toolTip="Type part of a step name (e.g. 'cross_attn.weights') and press Enter")
        self.head = QSpinBox(prefix="Head ", minimum=1, toolTip="Which attention head a (batch, head, …) tensor shows",
                             valueChanged=lambda head: self.state.select_head(head - 1))  # counted from 1
        self.fit_button = QToolButton(text="Fit", toolTip="Show the whole tensor again (wheel zooms, drag pans)",
                                      minimumSize=QSize(40, 34), clicked=lambda: self.view.reset_view())

    def _build_layout(self) -> None:
        self.name_label = text_label("", style.TITLE_POINT_SIZE, bold=True)  # the step read aloud ("Encoder layer 1 · …")
        self.path_label = text_label("", style.SMALL_POINT_SIZE, mono=True, sheet="color: {muted};")  # the recorder's name
        self.path_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.formula_label = text_label("", style.TITLE_POINT_SIZE + 1, sheet="color: {accent_text};")
        self.description_label = text_label("", None)
        self.shape_label = text_label("", style.BASE_POINT_SIZE, mono=True)
        self.stats_label = text_label("", style.BASE_POINT_SIZE, mono=True)
        self.readout = text_label(HOVER_HINT, style.BASE_POINT_SIZE, mono=True,
                                  sheet="background: {readout_bg}; color: {readout_text}; padding: 4px; border-radius: 4px;")
        self.readout.setMinimumHeight(30)
        self.readout.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)
        self.intro, self.details = QWidget(self), QWidget(self)
        column(self.name_label, self.formula_label, self.description_label, parent=self.intro, margins=0)
        column(self.readout, self.shape_label, self.stats_label, self.path_label, parent=self.details, margins=0)
        self.texts_area = QScrollArea(widgetResizable=True, frameShape=QFrame.NoFrame, minimumWidth=INFO_MIN_WIDTH,
                                      maximumWidth=INFO_MAX_WIDTH, horizontalScrollBarPolicy=Qt.ScrollBarAlwaysOff)
        self.texts_area.setWidget(QWidget())
        self.texts = column(None, parent=self.texts_area.widget(), margins=0)
        self.stack = column(self.view, margins=0)  # the map, and stacked the title above it and the details below
        column(self.transport,
               row(QLabel("Jump to:"), (self.jump, 3), (self.find, 1), self.head, self.fit_button),
               (row((self.stack, 1), self.texts_area), 1), parent=self, margins=6).setSpacing(4)
        self._arrange(beside=False)

    def _arrange(self, beside: bool) -> None:
        """Beside: the title and the details in the scrolling column right of the map; else above and below it."""
        for i, part in enumerate((self.intro, self.details)):
            self.texts.removeWidget(part)
            self.stack.removeWidget(part)
            if beside:
                self.texts.insertWidget(i, part)  # over the column's stretch
            else:
                self.stack.insertWidget(2 * i, part)  # the title over the map, the details under it
        self.texts_area.setVisible(beside)

    def apply_screen_class(self, cls: ScreenClass) -> None:
        """WIDE, and a projector while presenting: the texts beside the map; else above and below it.
        Presenting folds the code path away, NARROW the shape too (the title's tooltip names the step)."""
        presentation = getattr(getattr(self.window(), "lecture", None), "presentation", None)
        presenting = presentation is not None and presentation.active
        beside = cls is ScreenClass.WIDE or (cls is ScreenClass.PROJECTOR and presenting)
        self._arrange(beside)
        self.path_label.setVisible(cls is not ScreenClass.NARROW and not presenting)  # (the title's tooltip)
        self.shape_label.setVisible(cls is not ScreenClass.NARROW)

    def _jumped(self, row: int) -> None:
        index = self.jump.itemData(row, STEP_ROLE)
        if index is not None:
            self.state.select_step(int(index))

    def _find(self) -> None:
        text = self.find.text().strip()
        if text and self.state.trace is not None:
            index = find_step(self.state.trace.names(), text, self.state.step)
            if index is None:
                self.state.inform(f"No step name contains {text!r}.", "warning")
            else:
                self.state.select_step(index)

    def _on_bundle(self, *_) -> None:
        with QSignalBlocker(self.head):
            self.head.setMaximum(self.state.bundle.config.n_heads)
            self.head.setValue(self.state.head + 1)

    def _on_result(self, *_) -> None:
        trace = self.state.trace
        self.transport.stop()
        model = self.jump.model()  # (`jump_rows`): block headers bold and unselectable; STEP_ROLE: the index
        model.clear()
        for text, tip, index in jump_rows(trace):
            item = QStandardItem(text)
            item.setToolTip(tip)
            if index is None:
                item.setFlags(Qt.NoItemFlags)
                item.setFont(style.role_font("heading"))
            item.setData(index, STEP_ROLE)
            model.appendRow(item)
        if self.find.completer() is not None:
            self.find.completer().deleteLater()
        self.find.setCompleter(QCompleter(trace.names(), self.find, filterMode=Qt.MatchContains,
                                          caseSensitivity=Qt.CaseInsensitive))
        self._on_step(self.state.step)

    def _on_attention(self, kind: str, layer: int, head: int) -> None:
        with QSignalBlocker(self.head):
            self.head.setValue(head + 1)
        if self._shown_head != head:
            self._show_step()

    def _on_step(self, index: int) -> None:
        if self.state.trace is None:
            return
        self.transport.show_position(index, self.state.n_steps())
        row = self.jump.findData(index, STEP_ROLE)
        if row >= 0:
            self.jump.setCurrentIndex(row)
        self._show_step()

    def _show_step(self) -> None:
        step = self.state.current_step
        if step is None:
            return
        self.head.setVisible("head" in step.axes)
        self._shown_head = self.state.head
        matrix, row_axis, col_axis = slice_for_view(step.tensor.numpy(), step.axes, self.state.head)
        self.view.show_matrix(matrix, row_axis, col_axis, self._labels(row_axis), self._labels(col_axis),
                              view_kind(step.name, step.tensor),
                              step_axis_titles(step.name, row_axis, col_axis, self.state.axis_title))
        self.name_label.setText(readable_step_name(step.name))
        self.name_label.setToolTip(step.name)
        self.path_label.setText("step " + step.name.replace(".", ".\u200b"))  # may break after a dot
        self.formula_label.setText(step.formula)
        self.description_label.setText(step.description)
        shape, shown, stats = shape_and_stats(step, self.state.head)
        self.shape_label.setText(shape)
        self.shape_label.setToolTip(shown)
        self.stats_label.setText(stats)
        self.readout.setText(HOVER_HINT)

    def _labels(self, axis: str) -> list[str] | None:
        if axis in ("src", "tgt"):
            return self.state.axis_labels(axis)
        if axis == "vocab" and self.state.bundle is not None:
            bundle = self.state.bundle
            tok = bundle.tgt_tokenizer if bundle.model_kind.has_decoder else bundle.src_tokenizer
            return list(tok.vocab)
        return None

    def _on_hover(self, text: str) -> None:
        self.readout.setText(text or self.readout.text())
