"""The input bar: which model, what it reads, (optionally) what it should output.

Enter runs the model. While typing, the bar echoes the tokens the model will see, with
symbols it does not know in red and underlined, and the token count against the model's
limit. A refused input (empty, too long, nothing known) is explained in the status line and
the previous trace stays on screen.

The model chooser always names the session's own model. While the panels show another one in
its place (a live training run's copy, `Session.show_model`), the bar says so beside the
Output — "Showing: training run, step 472" — from the Frame itself (the model its output
came from), with a "Back to <the session's model>" button.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QTextDocument, QTextDocumentFragment
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOptionButton,
    QWidget,
)

from explorer import style, theme
from explorer.eliding_combo import ElidingComboBox
from explorer.input_text import (  # noqa: F401 - field_texts, output_html: tests read them here
    MAX_ECHO,
    describe_unknown,
    echo_fit,
    field_texts,
    mask_tooltip,
    model_description,
    output_html,
    printable,
    token_echo_html,
)
from explorer.runner import bundled_checkpoints, describe_device, pretrained_models

FIRST_HINT = "Type a sentence and press Enter — or press PageDown for the paper tour"

OPEN_ITEM = "Open checkpoint folder…"
PRETRAINED_SUFFIX = " (pretrained)"
OUTPUT_LEAST = "Output: <b>" + "m" * 5 + "</b>"  # the output's start, claimed on a crowded row
OUTPUT_STRETCH = 1  # the output and the token echo share the second row (the output up to its width)
SHOWN_STRETCH = 100  # "Showing: <run>" is served first (up to its text's width)
ROW_SPACING = 6
LOAD_ROLE = Qt.UserRole + 1  # what `Runner.load` is given for a row, when not its folder
QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum"
MAX_CHARS = 1 << 24  # QLineEdit's default (32767) silently cut a long paste: the length message lied


def _button_option(button: QPushButton, text: str) -> QStyleOptionButton:
    option = QStyleOptionButton()
    option.initFrom(button)
    option.text = text
    return option


def _plain(rich: str) -> str:
    """What a line of our rich text reads as (its tags dropped, its entities read)."""
    return html.unescape(re.sub("<[^>]+>", "", rich))


def rich_text_width(text: str, font) -> float:
    """The width a QLabel needs for rich `text` on one line (QTextDocument's ideal width)."""
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setHtml(text)
    return doc.idealWidth()


class InputBar(QWidget):
    """Model chooser, source and target fields, Run; a token echo line and a status line."""

    def __init__(self, state, runner, parent=None):
        super().__init__(parent)
        self.state, self.runner = state, runner
        self._listed = None  # the session's model the chooser was last filled for
        self.model_combo = ElidingComboBox()
        self.model_combo.setMinimumWidth(150)
        self.model_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.model_combo.setMinimumContentsLength(12)  # closed: short (a projector's source field needs the room)
        self.model_combo.setToolTip("The model to explore: a bundled checkpoint, an installed pretrained model, "
                                    "or open a folder (ours, or a Hugging Face folder with config.json)")
        self.model_combo.activated.connect(self._model_chosen)
        label, hint, target_label, target_hint, target_tip = field_texts(None)
        self.source = QLineEdit(placeholderText=hint)
        self.source.setFont(style.font(style.TITLE_POINT_SIZE, mono=True))
        self.source.setMinimumWidth(160)
        self.source.setMaxLength(MAX_CHARS)
        self.source.returnPressed.connect(self.run)
        self.source.textChanged.connect(self._echo)
        self.target = QLineEdit(placeholderText=target_hint)
        self._target_hint = target_hint
        self.target.setFont(style.font(style.BASE_POINT_SIZE + 1, mono=True))
        self.target.setToolTip(target_tip)
        self.source_label = QLabel(label)
        self.target_label = QLabel(target_label)
        self.examples = QComboBox()
        self.examples.setToolTip("Example inputs for this model: pick one to run it")
        self.examples.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.examples.setMinimumContentsLength(8)
        self.examples.activated.connect(self._example_chosen)
        self.target.returnPressed.connect(self.run)
        self.target.setMinimumWidth(90)
        # the optional target gives way first on a narrow screen: the source is what the room reads
        self.target.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.target.setMaxLength(MAX_CHARS)
        self.run_button = QPushButton("Run ⏎")
        self.run_button.clicked.connect(self.run)
        self.shown_label = QLabel()  # what computed the frames, when not the session's own model
        self.shown_label.setTextFormat(Qt.RichText)
        self.shown_label.setToolTip("The panels show this model in place of the session's own (the one chosen "
                                    "under Model); its output is the one beside")
        self.shown_label.setVisible(False)
        # it shares the row (with the output), never widens it: "Showing: training run, step 76"
        # beside the presenter's panel chooser held a 1024-px window at 1202 px
        self.shown_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.back_button = QPushButton("Back")
        self.back_button.setToolTip("Show the session's own model in every panel again")
        self.back_button.clicked.connect(lambda: self.state.session.show_model(None))
        self.back_button.setVisible(False)
        self._back_text = "Back"  # "Back to <the session's model>": shortened to "Back" on a crowded row
        self._shown_html = self._shown_short = ""  # "Showing: <name>", and the name alone for a crowded row
        self._echo_least = 0  # the echo's count and unknown note: the echo is shown only where it has this
        self._status_cap = QWIDGETSIZE_MAX  # the output's width
        self._pair_room = QWIDGETSIZE_MAX  # what the second row leaves the output and the echo together
        # The second row is refitted once, after the event that asked (a resize, a new model label,
        # a longer echo note): never inside a resize or a style sheet's re-polish, where hiding a
        # widget changes the tree Qt is walking. The timer dies with the bar.
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(0)
        self._refit.timeout.connect(self._fit_second_row)
        self.device_label = QLabel("–")
        style.set_sheet(self.device_label, "color: {muted};")
        self.hint = QLabel(FIRST_HINT)  # the first screen says what to do; gone after the first run
        style.set_sheet(self.hint, "background: {info_bg}; color: {info_text}; padding: 2px 8px; border-radius: 4px;")
        self.hint.setFont(style.font(style.BASE_POINT_SIZE, bold=True))
        self.echo = QLabel()
        self.echo.setFont(style.font(style.BASE_POINT_SIZE, mono=True))
        self.echo.setTextFormat(Qt.RichText)
        self.status = QLabel()
        self.status.setTextFormat(Qt.RichText)
        self.status.setWordWrap(False)
        for label in (self.echo, self.status):  # long lines are cut, never widen the window
            label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
            label.setMinimumHeight(26)
        # The echo's width also changes without the bar's: "Showing: run, step N" and its Back
        # button come and go beside it during a run (the echo stayed "… +9 more" after one).
        self.echo.installEventFilter(self)
        self.target.installEventFilter(self)  # its hint is shown whole or not at all (`_fit_target_hint`)
        self.status.installEventFilter(self)
        self._fitted = None  # the result whose output the status line shows

        grid = QGridLayout(self)
        grid.setContentsMargins(6, 2, 6, 2)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        grid.addWidget(QLabel("Model:"), 0, 0)
        grid.addWidget(self.model_combo, 0, 1)
        grid.addWidget(self.source_label, 0, 2)
        grid.addWidget(self.source, 0, 3)
        grid.addWidget(self.target_label, 0, 4)
        grid.addWidget(self.target, 0, 5)
        grid.addWidget(self.run_button, 0, 6)
        grid.addWidget(self.device_label, 0, 7)
        second = QHBoxLayout()
        second.setSpacing(ROW_SPACING)  # (unset, it reads −1: the grid's two spacings differ)
        second.addWidget(self.examples)
        second.addWidget(self.echo, 1)
        second.addSpacing(12)  # the echo never touches "Output:"
        # Room is given by stretch and maximum widths, never claimed by minimum widths (they held
        # the window wider than the screen): the shown model's name first, up to its text's width,
        # then the output up to its width, the echo the rest (`_fit_second_row`, `_share_pair`).
        second.addWidget(self.shown_label, SHOWN_STRETCH)
        second.addWidget(self.back_button)
        second.addWidget(self.status, OUTPUT_STRETCH)
        self._second = second
        grid.addLayout(second, 1, 0, 1, 8)
        grid.addWidget(self.hint, 2, 0, 1, 8)  # its own line, on the first screen only
        grid.setColumnStretch(3, 3)
        grid.setColumnStretch(5, 1)  # the source gets the room: it is what the audience reads

        state.bundleChanged.connect(self._on_bundle)
        state.inputChanged.connect(self._on_input)
        state.resultChanged.connect(self._on_result)
        state.frameChanged.connect(self._warn_unknown)
        state.frameChanged.connect(self._show_model_label)
        state.frameFailed.connect(self._show_model_label)
        state.bundleChanged.connect(self._show_model_label)
        state.shownModelChanged.connect(self._show_model_label)
        state.busyChanged.connect(self._on_busy)
        # a new presentation scale gives the row's texts other widths (after the fonts are set)
        state.scaleChanged.connect(lambda *_: self._refit.start())
        theme.notifier().changed.connect(self._on_theme)
        runner.failed.connect(self.show_error)
        runner.failed.connect(self._restore_selection)  # a failed load keeps (and shows) the previous model
        self._fill_models()

    # -- actions ------------------------------------------------------------------------------
    def refit_later(self) -> None:
        """Share the second row out again once the events now queued are handled (its tail, the
        presenter's strip, showed or hid some of its buttons)."""
        self._refit.start()

    def add_tail(self, widget: QWidget) -> None:
        """`widget` at the end of the second row (the lecture's panel chooser while presenting:
        its own toolbar row took 45–55 px of a 720-px beamer)."""
        self._second.addSpacing(8)
        self._second.addWidget(widget)
        self._tail = widget
        widget.installEventFilter(self)  # shown or hidden: the row is refitted

    def _fit_second_row(self) -> None:
        """When the second row cannot hold everything (a training run's "Showing: …" and its Back
        button beside the presenter's panel chooser on a 1024-px beamer cut "Showing" and "Output"
        mid-word, and held the window 180 px wider than the screen), it gives way in steps until it
        fits: the token echo goes, then the example chooser, then "Back to reverse" says "Back",
        then "Showing: training run" says "training run". What is left gets its room by stretch
        and maximum widths, never minimum widths (they held the window wider than the screen, and
        a window that cannot shrink never refits); all of it comes back when there is room."""
        row = self._second
        margins = self.layout().contentsMargins()
        room = self.width() - margins.left() - margins.right()
        gap = row.spacing()
        status_least = min(self._status_cap, rich_text_width(OUTPUT_LEAST, self.status.font()))
        tail = getattr(self, "_tail", None)
        optional = [(self.examples, self.examples.sizeHint().width()), (self.echo, self._echo_least)]
        shortenings = [(self.back_button, self._back_text, "Back"),
                       (self.shown_label, self._shown_html, self._shown_short)]

        def need(optional_kept: int, shortened: int) -> float:
            total = 12 + 8  # the spacings before "Output:" and before the tail
            for i, (widget, full, short) in enumerate(shortenings):
                if not widget.isHidden():
                    total += self._text_width(widget, short if i < shortened else full) + gap
            if not self.status.isHidden():  # the output whole (up to half the row) before the echo or the
                # examples stay; only once they are gone may it be shortened
                whole = min(self._status_cap, room / 2)
                total += (max(status_least, whole) if shortened == 0 and optional_kept else status_least) + gap
            if tail is not None and not tail.isHidden():
                total += tail.sizeHint().width() + gap  # (what the layout gives it while the row has room)
            return total + sum(width + gap for _w, width in optional[:optional_kept])

        steps = [(kept, 0) for kept in range(len(optional), -1, -1)] + [(0, n) for n in (1, 2)]
        kept, shortened = next((step for step in steps if need(*step) <= room), steps[-1])
        for i, (widget, _width) in enumerate(optional):  # the first `kept` stay, in priority order
            if widget.isHidden() == (i < kept):
                widget.setVisible(i < kept)
        for i, (widget, full, short) in enumerate(shortenings):
            text = short if i < shortened else full
            if widget.text() != text:
                widget.setText(text)
        self.shown_label.setMaximumWidth(int(self._text_width(self.shown_label, self.shown_label.text())))
        # what the others leave to the output and the echo together
        others = need(0, shortened) - (status_least + gap if not self.status.isHidden() else 0)
        others += (self.examples.sizeHint().width() + gap if not self.examples.isHidden() else 0)
        others += gap if not self.echo.isHidden() else 0
        self._pair_room = int(room - others)
        self._share_pair()

    def _share_pair(self) -> None:
        """The output and the token echo share what the row leaves them: the output first, up to
        its width; the echo the rest, never less than its count. By maximum widths (both stretch
        alike): a minimum would hold the window, and an even share cut a short output ("Output:
        remrofs…") beside an echo with room to spare."""
        echo_least = self._echo_least if not self.echo.isHidden() else 0
        status = max(0, min(self._status_cap, self._pair_room - echo_least))
        if self.status.maximumWidth() != status:
            self.status.setMaximumWidth(status)
        echo = max(echo_least, self._pair_room - status) if not self.echo.isHidden() else QWIDGETSIZE_MAX
        if self.echo.maximumWidth() != echo:
            self.echo.setMaximumWidth(min(echo, QWIDGETSIZE_MAX))

    @staticmethod
    def _text_width(widget, text: str) -> float:
        """Pixels `widget` needs for `text`: a button's size hint for it, a rich label's ideal width."""
        if isinstance(widget, QPushButton):
            return widget.style().sizeFromContents(
                QStyle.ContentsType.CT_PushButton, _button_option(widget, text),
                widget.fontMetrics().size(Qt.TextFlag.TextShowMnemonic, text), widget).width()
        return rich_text_width(text, widget.font()) + 8

    def run(self) -> None:
        """Validate and run what is typed; a refusal leaves the current view as it is."""
        self._fitted = None
        self.status.setText("")
        self.hint.hide()
        text = self.source.text()
        target = "" if self.target.isHidden() else self.target.text()  # hidden: an encoder-only model
        self.runner.run(text, target or None)

    def _warn_unknown(self, frame) -> None:
        """Symbols the model read as <unk>, from the frame's own tokenization (not a second one)."""
        if frame.forward.source is not None and (symbols := describe_unknown(frame.forward.source)):
            self.state.inform(f"The model does not know {symbols}; it reads them as <unk>.", "warning")

    def show_error(self, message: str) -> None:
        self._fitted = None
        self._cap_status(None)
        self.status.setText(f'<span style="color:{style.ERROR.name()}; font-weight:bold;">'
                            f'⚠ {html.escape(message)}</span>')
        self.status.setToolTip(message)

    # -- model chooser ------------------------------------------------------------------------
    def _fill_models(self) -> None:
        self.model_combo.blockSignals(True)
        self.model_combo.clear()
        for name, path in sorted(bundled_checkpoints().items()):
            self.model_combo.addItem(model_description(name, path), str(path))
            self.model_combo.setItemData(self.model_combo.count() - 1, name, Qt.ToolTipRole)
        pretrained = sorted(pretrained_models().items())
        if pretrained:
            self.model_combo.insertSeparator(self.model_combo.count())
        for name, path in pretrained:  # real models (BERT / Marian) loaded into our Transformer
            self.model_combo.addItem(name + PRETRAINED_SUFFIX, str(path))
            self.model_combo.setItemData(self.model_combo.count() - 1, name, LOAD_ROLE)
            self.model_combo.setItemData(self.model_combo.count() - 1, f"Pretrained, from {path}", Qt.ToolTipRole)
        self.model_combo.insertSeparator(self.model_combo.count())
        self.model_combo.addItem(OPEN_ITEM, None)
        metrics = self.model_combo.fontMetrics()
        widest = max(metrics.horizontalAdvance(self.model_combo.itemText(i)) for i in range(self.model_combo.count()))
        self.model_combo.view().setMinimumWidth(widest + 40)
        self.model_combo.blockSignals(False)

    def _model_chosen(self, row: int) -> None:
        if self.model_combo.itemText(row) == OPEN_ITEM:
            folder = QFileDialog.getExistingDirectory(self, "Open a checkpoint folder (ours, or a Hugging Face model)")
            if folder:
                self.runner.load(folder)  # the runner tells a Hugging Face folder from ours
            else:
                self._select_current_model()
            return
        path = self.model_combo.itemData(row)
        own = self.state.session.bundle
        if path and own is not None and str(own.path or "") == path:
            if self.state.session.shown_model is not None:
                self.state.session.show_model(None)  # choosing the session's model again: show it
            return
        key = self.model_combo.itemData(row, LOAD_ROLE) or path
        if key:
            self.runner.load(key)

    def _restore_selection(self, *_args) -> None:
        """Show the model actually in use (after a load that failed, the previous one)."""
        if self.state.session.bundle is not None:
            self._fill_models()
            self._select_current_model()

    def _select_current_model(self) -> None:
        bundle = self.state.session.bundle  # the session's own, never a training run's copy shown
        if bundle is None:
            return
        self.model_combo.blockSignals(True)
        for row in range(self.model_combo.count()):
            data = self.model_combo.itemData(row)
            if data and bundle.path and Path(data).resolve() == Path(bundle.path).resolve():
                self.model_combo.setCurrentIndex(row)
                break
        else:  # an opened folder or an untrained model: list it at the top
            self.model_combo.insertItem(0, bundle.name, str(bundle.path) if bundle.path else None)
            self.model_combo.setCurrentIndex(0)
        self.model_combo.blockSignals(False)

    # -- observing -----------------------------------------------------------------------------
    def _on_bundle(self, bundle) -> None:
        if self.state.session.bundle is not self._listed:  # (not for each copy a training run shows)
            self._listed = self.state.session.bundle
            self._fill_models()
            self._select_current_model()
        self.device_label.setText(f"on {describe_device(bundle)}")
        self.device_label.setToolTip("The device the model runs on")
        examples = ", ".join(bundle.examples[:3])
        self.source.setToolTip(f"At most {bundle.max_input_len} tokens." + (f" Try: {examples}" if examples else ""))
        self._show_field_texts(bundle)
        self._fill_examples(bundle)
        self._echo(self.source.text())

    def _show_field_texts(self, bundle) -> None:
        """Say what the fields mean for this kind of model: Source / Prompt / Text with [MASK]."""
        label, hint, target_label, target_hint, target_tip = field_texts(bundle)
        self.source_label.setText(label)
        self.source.setPlaceholderText(hint)
        has_target = target_label is not None
        grid = self.layout()
        grid.removeWidget(self.source)  # without a target field the source takes its room
        grid.addWidget(self.source, 0, 3, 1, 1 if has_target else 3)
        self.target_label.setVisible(has_target)
        self.target.setVisible(has_target)
        if has_target:
            self.target_label.setText(target_label)
            self._target_hint = target_hint
            self._fit_target_hint()
            self.target.setToolTip(target_tip)
            if (self.target.text() or None) != self.state.session.target:  # the session's, shown again
                self.target.setText(self.state.session.target or "")
        elif bundle is self.state.session.bundle:
            self.target.clear()  # an encoder-only model is never teacher-forced

    def _fill_examples(self, bundle) -> None:
        self.examples.blockSignals(True)
        self.examples.clear()
        self.examples.addItem("Examples…", None)
        for text in bundle.examples:
            self.examples.addItem(" ".join(printable(word) for word in text.split(" ")), text)
        self.examples.setEnabled(bool(bundle.examples))
        self.examples.setCurrentIndex(0)
        self.examples.blockSignals(False)

    def _example_chosen(self, row: int) -> None:
        text = self.examples.itemData(row)
        self.examples.setCurrentIndex(0)
        if text:
            self.source.setText(text)
            self.target.clear()
            self.run()

    def _on_input(self, source: str, target) -> None:
        """Text set from elsewhere (an example, a scene, --input) shows from its start when the
        field is too narrow for all of it ("vember 2026" hid the day on a 1024-px projector);
        the user's own typing keeps its cursor."""
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
        self.shown_label.setVisible(other)
        name = f'<b style="color:{style.ACCENT.name()};">{html.escape(label)}</b>' if other else ""
        self._shown_html, self._shown_short = (f"Showing: {name}", name) if other else ("", "")
        self.shown_label.setText(self._shown_html)  # (no wider than its text: `_fit_second_row`)
        back = session.shown_model is not None and own is not None
        self.back_button.setVisible(back)
        if back:
            self._back_text = f"Back to {own.name}"
            self.back_button.setToolTip(f"Show the session's own model, {own.name}, in every panel again")
        self._refit.start()

    def _on_result(self, result) -> None:
        """The output, as much of it as the line holds: a long one ends in "…" and the tooltip
        holds it whole (an untrained model's babble ran off the window's edge)."""
        bundle = self.state.bundle
        self._fitted = result  # first: the cap below resizes the line, whose resize refits this result
        frame = self.state.frame
        ours = frame is not None and frame.forward is result
        edited = len(frame.interventions) if ours else 0
        extra = dict(decoded=frame.decoded, notes=frame.notes) if ours else {}
        text = output_html(result, bundle, edited=edited, **extra)
        need = rich_text_width(text, self.status.font())
        # no wider than the whole output: the token echo beside it gets the rest (a 1024-px
        # projector's echo named one token while "Output: remrofsnart" sat in half the row)
        self._cap_status(need)
        room = self.status.contentsRect().width()
        whole = need <= room
        if not whole:  # the longest start of the output that fits
            pieces = result.source.pieces if result.mask_predictions else []  # (a masked LM's line is its sentence)
            longest = len(frame.decoded[0]) if ours else 0
            lo, hi = 0, max(len(result.output_text), longest, sum(len(p) + 1 for p in pieces))
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if rich_text_width(output_html(result, bundle, mid, edited, **extra), self.status.font()) <= room:
                    lo = mid
                else:
                    hi = mid - 1
            text = output_html(result, bundle, lo, edited, **extra)
        self.status.setText(text)
        tip = mask_tooltip(result)
        if tip and not whole:  # the whole filled sentence too, where the line cut it
            tip = QTextDocumentFragment.fromHtml(output_html(result, bundle, edited=edited)).toPlainText() + "\n" + tip
        notes = "\n".join(extra.get("notes", []))
        self.status.setToolTip("\n".join(filter(None, [tip or ("" if whole else result.output_text), notes])))
        self._fitted = result  # (refitted on a resize while the line shows it)

    def _cap_status(self, need: float | None) -> None:
        """The status line at most `need` px wide plus its margins (None: as wide as the row gives)."""
        margins = self.status.contentsMargins()
        self._status_cap = QWIDGETSIZE_MAX if need is None else int(need) + 4 + margins.left() + margins.right()
        self._share_pair()

    def _on_theme(self, *_) -> None:
        """The output line's and the token echo's coloured spans in the new palette."""
        if self.state.result is not None:
            self._on_result(self.state.result)
        self._echo(self.source.text())

    def _on_busy(self, busy: bool, what: str) -> None:
        self.run_button.setEnabled(not busy)
        if busy and what:
            self._fitted = None
            self._cap_status(None)
            self.status.setText(html.escape(what))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._refit.start()
        self._echo(self.source.text())  # as many tokens as the new width holds

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched is getattr(self, "_tail", None) and event.type() in (QEvent.Type.Show, QEvent.Type.Hide):
            self._refit.start()
        elif watched is self.echo and event.type() == QEvent.Type.Resize:
            self._echo(self.source.text())  # as many tokens as the echo's new width holds
        elif watched is self.target and event.type() == QEvent.Type.Resize:
            self._fit_target_hint()
        elif watched is self.status and event.type() == QEvent.Type.Resize and self._fitted is not None:
            self._on_result(self._fitted)  # as much of the output as the new width holds
        return super().eventFilter(watched, event)

    def _fit_target_hint(self) -> None:
        """The target field's hint ("optional") whole or not at all: a 1024-px beamer's narrow
        field showed "opti…" (its tooltip says what the field is for either way)."""
        margins = self.target.textMargins()
        room = self.target.width() - margins.left() - margins.right() - 12  # the frame and Qt's own text margin
        fits = self.target.fontMetrics().horizontalAdvance(self._target_hint) <= room
        hint = self._target_hint if fits else ""
        if self.target.placeholderText() != hint:
            self.target.setPlaceholderText(hint)

    def _echo(self, text: str) -> None:
        """Live: the tokens the model will read; unknown symbols and over-long input flagged."""
        bundle = self.state.bundle
        if bundle is None or not text:
            self.echo.setText("")
            return
        limit = bundle.max_input_len
        encoded = bundle.src_tokenizer.encode(text)
        n = len(encoded.ids)
        # the model's limit where it is near ("60/64 tokens"); further off the room names tokens
        # instead (the tooltip always says it)
        count = f"{n}/{limit} tokens" if 4 * n >= 3 * limit else f"{n} token{'s' if n != 1 else ''}"
        limit_note = (f"{n} of the {limit} tokens this model reads at most" if n <= limit
                      else f"{n} tokens; this model reads at most {limit}")
        if n > limit:
            count = f'<span style="color:{style.ERROR.name()}; font-weight:bold;">{n} tokens: over the limit of {limit}</span>'
        symbols = describe_unknown(encoded)
        red = f'<span style="color:{style.ERROR.name()};">'
        # the unknown symbols by name, else how many: what fits beside "Output:" (a token never
        # takes the place of the warning)
        notes = ([f', {red}unknown: {html.escape(symbols)} → &lt;unk&gt;</span>',
                  f', {red}{len(symbols.split())} unknown</span>'] if symbols else [""])
        advance, width = self.echo.fontMetrics().horizontalAdvance, self.echo.width()
        # never less than the count and how many are unknown: on a crowded row ("11/64 tok" was
        # cut mid-word at 1024 px) the output gives way before the warning does
        least = int(advance(_plain(f"{count}{notes[min(1, len(notes) - 1)]}"))) + 10
        if least != self._echo_least:
            self._echo_least = least
            self._refit.start()
        for note in notes:
            plain_prefix = _plain(f"{count}{note}: ")
            if advance(f"{plain_prefix} … +{n} more") + 8 <= width:
                break
        self.echo.setToolTip(limit_note + (f"\nunknown symbols, read as <unk>: {symbols}" if symbols else ""))
        fits = echo_fit(encoded.pieces[:MAX_ECHO], plain_prefix, width, advance)
        if fits == 0:  # no token fits: the count and what is unknown, as much as fits (the tooltip lists them)
            note = next((note for note in notes if advance(_plain(f"{count}{note}")) + 8 <= width), notes[-1])
            self.echo.setText(f"{count}{note}")
            tokens = " ".join(printable(p) for p in encoded.pieces[:MAX_ECHO])
            self.echo.setToolTip(f"{limit_note}:\n{tokens}" + (f"\nunknown symbols, read as <unk>: {symbols}" if symbols else ""))
            return
        shown, _n = token_echo_html(bundle, text, limit=min(fits, MAX_ECHO))
        self.echo.setText(f"{count}{note}: {shown}")
