"""Scenes (format: `model.io.scenes`), saved states a lecture steps through like slides; applying one
sets every field that decides a picture to the scene's value or its default."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QObject, QTimer, Signal

from explorer.panel_dock import LAYOUT_VERSION, LEFT_PANELS
from model.io import scenes as scene_format


def capture(window, name: str, caption: str = "") -> scene_format.Scene:
    """The window's current state as a scene (the panel in front, or the pair presented)."""
    state = window.state
    bundle = state.session.bundle  # the session's own model (a training run shown is not saved)
    checkpoint = scene_format.checkpoint_name(bundle.path) if bundle is not None else None
    task = (bundle.task or {}).get("name") if checkpoint is None and bundle is not None else None
    layout = bytes(window.saveState(LAYOUT_VERSION).toBase64()).decode("ascii")
    step = state.current_step.name if state.current_step is not None else None
    presentation = window.lecture.presentation
    pair = list(presentation.shown) if presentation.active and len(presentation.shown) == 2 else None
    return scene_format.Scene(name=name, caption=caption, checkpoint=checkpoint, task=task, layout=layout,
                              panel=window.current_panel, panels=pair,
                              **state.session.to_scene_dict() | {"step": step})


class SceneDeck(QObject):
    """Applies scenes to a main window and steps through a tour like slides."""

    sceneShown = Signal(int, object)  # index, Scene (the lecture tools show its caption)
    closed = Signal()  # the tour was exited

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.tour: scene_format.Tour | None = None
        self.index = -1
        self._pending: scene_format.Scene | None = None
        self._started = None  # the panel whose live run a scene started, paused when the tour moves on
        from explorer.presentation import restyle_plots
        self._restyle = QTimer(self, singleShot=True, interval=150)  # a child: dies with the window
        self._restyle.timeout.connect(restyle_plots)
        window.state.resultChanged.connect(self._on_result)
        window.runner.failed.connect(self._on_failed)

    # -- tours -------------------------------------------------------------------------------------
    def open(self, path: str | Path, show_first: bool = True) -> bool:
        """Load a tour (or one scene) file; a bad file → a message, the current tour kept."""
        try:
            tour = scene_format.load_tour(path, tuple(self.window.panels))  # its panels: a misspelt one is refused
        except scene_format.SceneError as exc:
            self.window.state.inform(f"Could not open the scene file: {exc}", "error")
            return False
        self.tour, self.index = tour, -1
        if any(s.start and s.panel == "training" for s in tour.scenes):
            from model.train.request import warm_up_in_background
            warm_up_in_background()  # its run starts in a second, not after 2.5 s of imports
        if show_first:
            self.go(0)
        return True

    def close(self) -> None:
        """Exit the tour; the panels keep what they show (a run the scene started goes on)."""
        self._started = None
        self.tour, self.index, self._pending = None, -1, None
        self.closed.emit()

    def go(self, index: int) -> bool:
        if self.tour is None or not self.tour.scenes:
            self.window.state.inform("No tour is open: File → Open tour…", "warning")
            return False
        index = max(0, min(int(index), len(self.tour.scenes) - 1))
        self.index = index
        self.apply(self.tour.scenes[index])
        return True

    def next(self) -> bool:
        if self.tour is not None and self.index >= len(self.tour.scenes) - 1:
            self.window.state.inform("That was the last scene of the tour.", "info")
            return False
        return self.go(self.index + 1)

    def previous(self) -> bool:
        if self.tour is not None and self.index <= 0:
            self.window.state.inform("This is the first scene of the tour.", "info")
            return False
        return self.go(self.index - 1)

    # -- one scene ---------------------------------------------------------------------------------
    def apply(self, scene: scene_format.Scene) -> None:
        """Model, input, layout, dock, then (when the forward has run) the step and the head."""
        window, state, runner = self.window, self.window.state, self.window.runner
        self._pause_started()
        if scene.layout:
            raw = QByteArray.fromBase64(QByteArray(scene.layout.encode("ascii")))
            if not window.restoreState(raw, LAYOUT_VERSION):
                state.inform(f"Scene {scene.name!r}: its saved layout does not fit this version; "
                             "keeping the current layout.", "warning")
        wanted = scene.shown_panels
        missing = [n for n in wanted if n not in window.docks]
        if missing:
            state.inform(f"Scene {scene.name!r}: no panel named {', '.join(map(repr, missing))}.", "warning")
        wanted = [n for n in wanted if n in window.docks]
        if len(wanted) == 1 and wanted[0] not in LEFT_PANELS and not scene.solo and not scene.layout:
            window.docks["architecture"].raise_()  # the map of the model beside the detail
        others = False if scene.solo and wanted else (None if scene.layout else True)
        window.show_panels(wanted, others)  # a solo scene's alone; else its layout's docks, or every dock
        with runner.holding():  # one compute for the whole scene, after its model and text are set
            state.session.show_model(None)  # a training run shown is not part of any scene
            training = window.panels.built("training")
            if training is not None:
                training.keep_to_itself()
            # every view field: the scene's value or the default, never what was clicked before
            state.session.reset_view_state(scene.views, scene.decoding, scene.causal_mask, scene.compare,
                                           scene.interventions, scene.chat)
        self._pending = scene
        self.sceneShown.emit(self.index, scene)
        text = scene.input if scene.input is not None else state.source_text
        checkpoint, why, level = scene_format.scene_checkpoint(scene)
        if why:
            state.inform(why, level)
        own = state.session.bundle
        if checkpoint and not scene_format.same_model(own, checkpoint):
            runner.load(checkpoint, then_run=text, then_target=scene.target)
        elif checkpoint is None and scene.task and (own is None or (own.task or {}).get("name") != scene.task):
            runner.load_random(scene.task, then_run=text)
        elif text:
            runner.run(text, scene.target)
        elif state.frame is not None:
            runner.request()  # the scene's decoding settings on the current text
        else:
            self._select(scene)

    def _on_result(self, _result) -> None:
        scene, self._pending = self._pending, None
        if scene is not None:
            self._select(scene)

    def _on_failed(self, message: str) -> None:
        if self._pending is not None:
            scene, self._pending = self._pending, None
            self.window.state.inform(f"Scene {scene.name!r}: {message}", "error")

    def _select(self, scene: scene_format.Scene) -> None:
        """The scene's head (else layer 1, head 1 of the first kind) and step (else the head's
        weights, else the first step)."""
        state = self.window.state
        if state.bundle is not None:
            try:
                scene_format.check_scene_fits(scene, state.bundle.model)
            except scene_format.SceneError as exc:  # the session keeps only the heads the model has: say so
                state.inform(str(exc), "error")
        kinds = state.available_kinds()
        a = scene.attention if scene.attention and scene.attention["kind"] in kinds else None
        if kinds:
            kind = a["kind"] if a else kinds[0]
            layer, head = (a or {}).get("layer", 0), (a or {}).get("head", 0)
            state.select_attention(kind, layer, head)  # (the nearest head the model has)
            if (state.layer, state.head) != (layer, head):
                state.inform(f"Scene {scene.name!r}: this model has no {kind} layer {layer + 1} head {head + 1}; "
                             f"showing layer {state.layer + 1} head {state.head + 1}.", "warning")
        if state.result is not None:
            if scene.step and not state.select_step_named(scene.step):
                state.inform(f"Scene {scene.name!r}: this model has no step {scene.step!r}.", "warning")
            elif not scene.step and not a:
                state.select_step(0)
        self.sceneShown.emit(self.index, scene)
        if scene.start:  # a scene that teaches by a run shows one moving at once
            self._started = self.window.panels[scene.panel]
            self._started.start_for_scene()
        self._restyle.start()  # plot titles in the theme's colours once the panels are laid out again

    def _pause_started(self) -> None:
        """Leaving a scene: its training run pauses (it would slow every later scene); a lab runs to its end."""
        panel, self._started = self._started, None
        if panel is not None and hasattr(panel, "pause"):
            panel.pause()
