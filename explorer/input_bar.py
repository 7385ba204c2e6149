"""The input bar: which model, what it reads, (optionally) what it should output; the tokens it
will read, echoed while typing; its output; the model the panels show when not the session's."""
from __future__ import annotations

import html

from PySide6.QtCore import QSignalBlocker
from PySide6.QtGui import QFontMetricsF, QTextDocumentFragment
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QWidget,
)

from explorer import style, theme
from explorer.model_chooser import ModelChooser
from explorer.panels.knobs import Knob, make_knobs
from explorer.panels.layouts import row
from explorer.rich_eliding_label import RichElidingLabel
from explorer.runner import describe_device
from explorer.screen import ScreenClass
from model.interpret.input_texts import describe_unknown, field_texts, mask_tooltip, printable, token_echo
from model.interpret.output_line import output_forms

FIRST_HINT = "Type a sentence and press Enter — or press PageDown for the paper tour"

ECHO_ROOM = 30  # characters: a count ("10 tokens: ") and a few tokens, what the room needs to read
MAX_CHARS = 1 << 24  # QLineEdit's default (32767) silently cuts a long paste, so the length message would be wrong


class InputBar(QWidget):
    """Model chooser, source and target fields, Run; a token echo, the output line, a hint."""

    def __init__(self, state, runner, parent=None):
        super().__init__(parent)
        self.state, self.runner = state, runner
        self.screen_class = None  # the rows' arrangement (`apply_screen_class`)
        self.model_combo = ModelChooser(state, runner)
        self.own_model = QLabel(objectName="own_model")  # presenting a lab: the model it trains, in place of the fields
        label, hint, target_label, target_hint, target_tip = field_texts(None)
        self.source = self._field(hint, style.TITLE_POINT_SIZE, 160)
        self.source.textChanged.connect(self._echo)
        self.target = self._field(target_hint, style.BASE_POINT_SIZE + 1, 90)
        self.target.setToolTip(target_tip)
        self.chat_box = QCheckBox("Chat")  # shown for a model with a chat template only (`_on_bundle`)
        self.chat_box.setToolTip("On: what you type is the user's message, laid out by the model's chat template; "
                                 "the output is the assistant's answer. Off: a plain prompt to continue.")
        self.chat_box.setChecked(state.session.chat)
        self.chat_box.toggled.connect(state.session.set_chat)  # (the runner recomputes the frame)
        self.examples = QComboBox(toolTip="Example inputs for this model: pick one to run it", minimumContentsLength=8,
                                  sizeAdjustPolicy=QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.examples.activated.connect(self._example_chosen)
        make_knobs(self, (Knob("source_label", "label", label), Knob("target_label", "label", target_label),
                          Knob("run_button", "button", "Run ⏎", on="run"),
                          Knob("device_label", "label", "–", "The device the model runs on"),
                          Knob("back_button", "button", "Back", on="_show_own")))
        style.set_sheet(self.device_label, "color: {muted};")
        self.hint = QLabel(FIRST_HINT)  # the first screen says what to do; gone after the first run
        style.set_sheet(self.hint, "background: {info_bg}; color: {info_text}; padding: 2px 8px; border-radius: 4px;")
        self.hint.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        self.shown_label = RichElidingLabel("Showing: m…")  # what computed the frames, when not the session's own
        self.shown_label.setToolTip("The panels show this model in place of the session's own (the one chosen "
                                    "under Model); its output is the one beside")
        self.echo = RichElidingLabel()  # its least: the count and what is unknown (`_echo`)
        self.echo.setFont(style.font(style.BASE_POINT_SIZE, mono=True))
        self.status = RichElidingLabel("Output: m…")
        for line in (self.echo, self.status, self.shown_label):
            line.setMinimumHeight(26)
        for line in (self.echo, self.status):  # their room set by the row alone, never by their text
            line.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.row_gap = QWidget(self)  # presenting: pushes the tail to the line's end
        self.row_gap.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        for widget in (self.chat_box, self.shown_label, self.back_button, self.own_model, self.row_gap):
            widget.setVisible(False)

        grid = QGridLayout(self)
        grid.setContentsMargins(6, 2, 6, 2)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        grid.addWidget(QLabel("Model:"), 0, 0)
        grid.addWidget(self.model_combo, 0, 1)
        grid.addWidget(self.own_model, 0, 1, 1, 6)
        grid.addLayout(row(self.chat_box, self.source_label), 0, 2)  # the field's label, the chat toggle beside
        grid.addWidget(self.source, 0, 3)
        grid.addWidget(self.target_label, 0, 4)
        grid.addWidget(self.target, 0, 5)
        grid.addWidget(self.run_button, 0, 6)
        self._rows = (QHBoxLayout(), QHBoxLayout(), QHBoxLayout())  # the lines under the fields (`arrange`)
        for number, line in enumerate(self._rows, start=1):
            line.setSpacing(8)
            grid.addLayout(line, number, 0, 1, 8)
        self._tail: QWidget | None = None
        self._arranged = None  # (narrow, presenting, the echo on its own line) the rows were last arranged for
        grid.addWidget(self.hint, 4, 0, 1, 8)  # its own line, on the first screen only
        grid.setColumnStretch(3, 3)
        grid.setColumnStretch(5, 2)  # the source gets more of the room: it is what the audience reads

        state.bundleChanged.connect(self._on_bundle)
        state.inputChanged.connect(self._on_input)
        state.chatChanged.connect(self._on_chat)
        state.resultChanged.connect(self._on_result)
        state.frameChanged.connect(self._warn_unknown)
        for signal in (state.frameChanged, state.frameFailed, state.bundleChanged, state.shownModelChanged):
            signal.connect(self._show_model_label)
        state.busyChanged.connect(self._on_busy)
        theme.notifier().changed.connect(self._on_theme)
        runner.failed.connect(self.show_error)
        self.apply_screen_class(ScreenClass.PROJECTOR)

    def _field(self, hint: str, points: float, least: int) -> QLineEdit:
        field = QLineEdit(placeholderText=hint)
        field.setFont(style.font(points, mono=True))
        field.setMinimumWidth(least)
        field.setMaxLength(MAX_CHARS)
        field.returnPressed.connect(self.run)
        return field

    def apply_screen_class(self, cls: ScreenClass) -> None:
        self.screen_class = cls
        self.arrange()

    def add_tail(self, widget: QWidget) -> None:
        """`widget` at the end of the first line under the fields (the presenter's panel chooser and Leave)."""
        self._tail = widget
        self._arranged = None
        self.arrange()

    def _echo_gets_a_line(self) -> bool:
        """Presenting: whether the line with the examples and the tail leaves the echo too little
        room for its count and a few tokens (`ECHO_ROOM` characters); then it gets a line."""
        if self._tail is None:
            return False
        beside = self.examples.sizeHint().width() + self._tail.sizeHint().width() + 3 * self._rows[0].spacing()
        room = QFontMetricsF(self.echo.font()).horizontalAdvance("m" * ECHO_ROOM)
        return self.width() - beside < room

    def arrange(self) -> None:
        """One line: the examples, the echo, "Showing:" and Back, the output. Presenting (the tail
        shown) the output, "Showing:" and Back get a line, and the echo too where the tail's line
        leaves it too little room; narrow, the echo and the device get a line."""
        narrow = self.screen_class is ScreenClass.NARROW
        presenting = self._presenting()
        own_echo = presenting and not narrow and self._echo_gets_a_line()
        if (narrow, presenting, own_echo) == self._arranged:
            return
        self._arranged = narrow, presenting, own_echo
        shown = [self.shown_label, self.back_button]
        if narrow:
            lines = [[self.examples, *shown, self.status, self._tail], [self.echo, self.device_label], []]
        elif own_echo:
            lines = [[self.examples, *shown, self.row_gap, self._tail], [self.echo], [self.status]]
        elif presenting:
            lines = [[self.examples, self.echo, self._tail], [*shown, self.status], []]
        else:
            lines = [[self.examples, self.echo, *shown, self.status, self._tail], [], []]
        self.row_gap.setVisible(own_echo)
        grid = self.layout()
        grid.removeWidget(self.device_label)
        if not narrow:
            grid.addWidget(self.device_label, 0, 7)
        for line, widgets in zip(self._rows, lines):
            for widget in filter(None, widgets):
                for other in self._rows:
                    other.removeWidget(widget)
                line.addWidget(widget, int(widget in (self.echo, self.status)))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.arrange()  # (presenting: the echo's line depends on the room)

    def show_own_model(self, described: tuple[str, str] | None) -> None:
        """(short, whole) names the model the panel on screen trains itself, in place of the model
        chooser and the fields for the session's model; None: those back."""
        own = described is not None
        if own:
            self.own_model.setText(f"this panel's own — {described[0].removeprefix('Own model: ')}, trained live")
            self.own_model.setToolTip(described[1])
        self.own_model.setVisible(own)
        for widget in (self.model_combo, self.source_label, self.source, self.run_button, self.examples,
                       self.echo, self.status, self.chat_box, self.target_label, self.target):
            widget.setVisible(not own)
        if self.state.bundle is not None:
            self._show_field_texts(self.state.bundle)  # (the target and chat box as the model has them)
        self._show_model_label()

    def _show_own(self) -> None:
        self.state.session.show_model(None)

    def run(self) -> None:
        """Validate and run what is typed; a refusal leaves the current view as it is."""
        self.status.setText("")
        self.hint.hide()
        target = "" if self.target.isHidden() else self.target.text()  # hidden: an encoder-only model
        self.runner.run(self.source.text(), target or None)

    def _warn_unknown(self, frame) -> None:
        """Said in the status bar; presenting, not where the output line's ⚠ note says it already
        (the message would float over the panels with the same words)."""
        if frame.forward.source is None or not (symbols := describe_unknown(frame.forward.source)):
            return
        if not (self._presenting() and frame.notes):
            self.state.inform(f"The model does not know {symbols}; it reads them as <unk>.", "warning")

    def _presenting(self) -> bool:
        return self._tail is not None and not self._tail.isHidden()

    def show_error(self, message: str) -> None:
        self.status.setText(f'<span style="color:{style.ERROR.name()}; font-weight:bold;">'
                            f'⚠ {html.escape(message)}</span>')
        self.status.setToolTip(message)

    def _on_bundle(self, bundle) -> None:
        self.model_combo.list_models()
        self.device_label.setText(f"on {describe_device(bundle)}")
        examples = ", ".join(bundle.examples[:3])
        self.source.setToolTip(f"At most {bundle.max_input_len} tokens." + (f" Try: {examples}" if examples else ""))
        self._show_field_texts(bundle)
        self._fill_examples(bundle)
        self._echo(self.source.text())

    def _on_chat(self, on: bool) -> None:
        with QSignalBlocker(self.chat_box):
            self.chat_box.setChecked(on)
        if self.state.bundle is not None:
            self._show_field_texts(self.state.bundle)
            self._echo(self.source.text())

    def _show_field_texts(self, bundle) -> None:
        """The fields' names for this kind of model; the chat toggle only with a chat template."""
        free = self.own_model.isHidden()
        self.chat_box.setVisible(free and bundle.chat_template is not None)
        label, hint, target_label, target_hint, target_tip = field_texts(bundle, self.state.session.uses_chat)
        self.source_label.setText(label)
        self.source.setPlaceholderText(hint)
        has_target = target_label is not None
        grid = self.layout()
        grid.removeWidget(self.source)  # without a target field the source takes its room
        grid.addWidget(self.source, 0, 3, 1, 1 if has_target else 3)
        self.target_label.setVisible(free and has_target)
        self.target.setVisible(free and has_target)
        if has_target:
            self.target_label.setText(target_label)
            self.target.setPlaceholderText(target_hint)
            self.target.setToolTip(target_tip)
            if (self.target.text() or None) != self.state.session.target:  # the session's, shown again
                self.target.setText(self.state.session.target or "")
        elif bundle is self.state.session.bundle:
            self.target.clear()  # an encoder-only model is never teacher-forced

    def _fill_examples(self, bundle) -> None:
        with QSignalBlocker(self.examples):
            self.examples.clear()
            self.examples.addItem("Examples…", None)
            for text in bundle.examples:
                self.examples.addItem(" ".join(printable(word) for word in text.split(" ")), text)
            self.examples.setEnabled(bool(bundle.examples))
            self.examples.setCurrentIndex(0)

    def _example_chosen(self, row: int) -> None:
        text = self.examples.itemData(row)
        self.examples.setCurrentIndex(0)
        if text:
            self.source.setText(text)
            self.target.clear()
            self.run()

    def _on_input(self, source: str, target) -> None:
        """Text set from elsewhere shows from its start; the user's own typing keeps its cursor."""
        for field, text in ((self.source, source), (self.target, target or "")):
            if field.text() != text:
                field.setText(text)
                if not field.hasFocus():
                    field.setCursorPosition(0)

    def _show_model_label(self, *_args) -> None:
        """Name the model the frames come from when it is not the session's own."""
        session, frame = self.state.session, self.state.frame
        own = session.bundle
        if frame is not None:
            other, label = frame.bundle is not own, frame.model_label
        else:
            other, label = session.shown_model is not None, session.model_label
        other = other and self.own_model.isHidden()
        self.shown_label.setVisible(other)
        self.shown_label.setText(f'Showing: <b style="color:{style.ACCENT.name()};">{html.escape(label)}</b>'
                                 if other else "")
        back = session.shown_model is not None and own is not None and self.own_model.isHidden()
        self.back_button.setVisible(back)
        if back:
            self.back_button.setText(f"Back to {own.name}")
            self.back_button.setToolTip(f"Show the session's own model, {own.name}, in every panel again")

    def _on_result(self, result) -> None:
        """The output line; its tooltip holds it whole, each [MASK]'s candidates and the notes."""
        frame = self.state.frame
        ours = frame is not None and frame.forward is result
        notes = list(frame.notes) if ours else []
        said = dict(edited=len(frame.interventions), decoded=frame.decoded, notes=notes, message=frame.message) if ours else {}
        text, *shorter = output_forms(result, self.state.bundle, theme.current(), style.MONO_FAMILY, **said)
        self.status.setText(text, shorter=shorter)
        line = QTextDocumentFragment.fromHtml(text).toPlainText()
        self.status.setToolTip("\n".join(filter(None, [line, mask_tooltip(result), *(n for n in notes if n not in line)])))

    def _on_theme(self, *_) -> None:
        if self.state.result is not None:
            self._on_result(self.state.result)
        self._echo(self.source.text())

    def _on_busy(self, busy: bool, what: str) -> None:
        self.run_button.setEnabled(not busy)
        if busy and what:
            self.status.setText(html.escape(what))

    def _echo(self, text: str) -> None:
        """Live: the tokens the model will read, as many as fit, then "… +N more" (`token_echo`)."""
        bundle = self.state.bundle
        if bundle is None or not text:
            self.echo.setText("")
            return
        echo = token_echo(bundle, text, theme.current(), self.state.session.uses_chat)
        self.echo.least = echo.least
        self.echo.setText(echo.html, echo.stops, echo.more)
        self.echo.setMinimumWidth(self.echo.minimumSizeHint().width())  # (its policy ignores the hint)
        self.echo.setToolTip(echo.tooltip)
