"""A run is a sandbox: it never replaces the session's model unless "Use this model" is clicked.
With "Show in other panels" a CPU copy of the model being trained is *shown* in every panel
(`Session.show_model`, about once a second, named "training run"); "Back to …", unticking, or the
run's end bring the session's own model back."""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer

from explorer.session import ShownModel
from model.train.live_messages import Offer
from model.train.pacing import Pacer
from model.train.shown_text import given_back, stand_in

PUBLISH_INTERVAL = 1.0  # s: the other panels follow a run at most once a second …
PUBLISH_SHARE = 1 / 20  # … and a copy for them costs at most this share of the GUI's and the worker's time
RUN_LABEL = "training run"  # what the header calls a training run's model shown in the panels


class Sandbox(QObject):
    """Publishes the panel's run to the other panels, paced by cost, and takes it back."""

    def __init__(self, panel):
        super().__init__(panel)
        self.panel, self.state = panel, panel.state
        self.shown: Offer | None = None  # the run's copy the other panels show now
        self.text_before: tuple | None = None  # (source, target, probe): the text a shown run replaced
        self.pacer = Pacer(PUBLISH_INTERVAL, PUBLISH_SHARE)  # its cost: the last copy's frame (GUI)
        self.offer_pending = False  # a copy for the other panels is on its way from the worker
        self.timer = QTimer(self, singleShot=True, timeout=self.flush_publish)
        self.state.shownModelChanged.connect(self.on_shown_model)

    @property
    def wanted(self) -> bool:
        return self.panel.controls.show_others.isChecked()

    def reset(self) -> None:
        """A new run: the first copy goes out at once."""
        self.offer_pending = False
        self.pacer.reset()

    def close(self) -> None:
        """The run ended: the panels show the session's own model again."""
        self.timer.stop()
        self.offer_pending = False
        self.unshow()

    def publish_later(self) -> None:
        """Ask for a fresh copy when time and cost allow (copy on the worker, frame on the GUI)."""
        p = self.panel
        if p.run is None or not self.wanted or not p.timeline.live or self.offer_pending or p.phase == "finishing":
            return
        wait = self.pacer.wait(max(self.pacer.cost, self.shown.cost if self.shown is not None else 0.0))
        if wait <= 0:
            self.flush_publish()
        elif not self.timer.isActive():
            self.timer.start(int(wait * 1000))

    def flush_publish(self) -> None:
        run = self.panel.run
        if run is not None and self.wanted and not self.offer_pending:
            self.offer_pending = True
            self.pacer.started()
            run.steering.offer("show")

    def on_offered(self, offer: Offer) -> None:
        self.offer_pending = False
        if self.wanted and self.panel.timeline.live and self.panel.phase != "finishing":
            start = time.perf_counter()
            self.shown = offer
            with self.state.session.batch():  # the run's model and a text it can read: one step
                self.readable_text(offer.bundle)
                self.state.session.show_model(ShownModel(offer.bundle, RUN_LABEL))
            self.pacer.cost = time.perf_counter() - start  # (a synchronous pipeline: the whole frame)
            self.show_back()

    def unshow(self) -> None:
        """The session's own model in every panel again (if a run's copy is what they show)."""
        shown, self.shown = self.shown, None
        current = self.state.session.shown_model
        if shown is not None and current is not None and current.bundle is shown.bundle:
            with self.state.session.batch():
                self.state.session.show_model(None)
                self.give_text_back()
        self.show_back()

    def use(self, offer: Offer) -> None:
        """The trained copy becomes the session's model."""
        old = self.state.session.bundle
        self.shown = None
        with self.state.session.batch():
            self.readable_text(offer.bundle)
            self.text_before = None  # the new model's text stays
            self.state.set_bundle(offer.bundle)
        was = f" in place of “{old.name}”" if old is not None and old is not offer.bundle else ""
        self.panel.say(f"The model at step {offer.step:,} (“{offer.bundle.name}”) is now the session's model{was}.")
        self.show_back()

    def readable_text(self, bundle) -> None:
        """Where `bundle` cannot read the session's text, show it on the probe (`stand_in`)."""
        session, p = self.state.session, self.panel
        probe = stand_in(bundle, session.source, p.probe.probe_edit.text().strip() or (p.info.probe if p.info else ""))
        if probe is not None:
            if self.text_before is None:
                self.text_before = (session.source, session.target, probe)
            self.state.set_input(probe)
            p.say(f"This run's model cannot read “{self.text_before[0]}”: "
                  f"the panels show it on the probe “{probe}”.", "warning")

    def give_text_back(self) -> None:
        """The session's own model is back: the text the run replaced (`given_back`)."""
        before, self.text_before = self.text_before, None
        own, source = self.state.session.bundle, self.state.session.source
        back = given_back(own, source, before)
        if back is not None:
            self.state.set_input(back[0], back[1])
            if back[2]:
                self.panel.say(f"“{own.name}” cannot read “{source}”: its panels show “{back[0]}”.", "warning")

    def on_shown_model(self, shown) -> None:
        """Another hand (the header's Back, a model loaded) put the run's copy away: it stays
        away until "Show in other panels" is ticked again."""
        if self.shown is not None and (shown is None or shown.bundle is not self.shown.bundle):
            self.shown = None
            self.give_text_back()
            if self.panel.run is not None and self.wanted:
                self.panel.controls.show_others.setChecked(False)
                own = self.state.session.bundle
                self.panel.say(f"The other panels show “{own.name if own else 'the session'}” again; tick "
                               f"“Show in other panels” to watch the run there.")
        self.show_back()

    def show_back(self) -> None:
        own = self.state.session.bundle
        self.panel.controls.set_back(own.name if own is not None else "", self.state.session.shown_model is not None)

    def on_show_others(self, on: bool) -> None:
        if on:
            self.pacer.reset()
            self.publish_later()
        else:
            self.timer.stop()
            self.unshow()
