"""The GUI thread stays responsive: slow work runs off it, and what must run on it (building a
panel, its views) is split into short turns of the event loop. Gaps are measured with a timer
on the GUI thread, as benchmarks/gui_stalls.py does, not as the wall time of the whole."""
from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import QThreadPool, QTimer

from explorer.runner import Runner
from explorer.state import SessionState
from support import make_main_window, small_bundle

LOAD_SECONDS = 1.2  # a load this long on the GUI thread would be one gap at least this long


class GapMeter:
    """A 10 ms timer on the GUI thread; `worst` is the longest time between two of its ticks."""

    def __init__(self):
        self.last = time.perf_counter()
        self.worst = 0.0
        self.timer = QTimer(interval=10)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now


def slow_load(_name):
    """A load that keeps its thread busy (Python bytecode, holding the GIL in turns) for LOAD_SECONDS."""
    end = time.perf_counter() + LOAD_SECONDS
    n = 0
    while time.perf_counter() < end:
        n += 1
    return small_bundle()


def test_loading_a_checkpoint_leaves_the_event_loop_running_while_it_loads(qtbot, monkeypatch):
    monkeypatch.setattr("explorer.runner.load_bundle", slow_load)
    state = SessionState()
    runner = Runner(state)
    busy = []
    state.busyChanged.connect(lambda on, what: busy.append((on, what)))
    meter = GapMeter()
    started = time.perf_counter()
    runner.load("anything", then_run="abc")
    assert state.bundle is None  # the call returned before the model was there
    qtbot.waitUntil(lambda: state.frame is not None and not state.busy, timeout=20000)
    took = time.perf_counter() - started
    meter.timer.stop()
    assert took >= LOAD_SECONDS
    assert meter.worst < LOAD_SECONDS / 2, f"the event loop stopped for {meter.worst:.2f} s of a {took:.2f} s load"
    assert busy[0][0] and "Loading anything" in busy[0][1] and busy[-1] == (False, "")  # progress shown, then cleared


def test_closing_drops_a_frame_queued_behind_a_load_and_hands_a_late_result_to_nobody(qtbot, monkeypatch):
    monkeypatch.setattr("explorer.runner.load_bundle", slow_load)
    frames = []
    monkeypatch.setattr("explorer.runner.compute_frame", lambda *a, **k: frames.append(a))
    state = SessionState()
    runner = Runner(state)
    runner.load("anything", then_run="abc")  # the load runs; its frame would follow it
    assert runner.shutdown(msecs=5000)  # the load ends inside the wait …
    assert state.bundle is not None
    assert QThreadPool.globalInstance().waitForDone(5000)
    qtbot.wait(50)
    assert frames == [] and state.frame is None and not state.busy  # … and the frame after it never started
    monkeypatch.undo()
    monkeypatch.setattr("explorer.runner.load_bundle", slow_load)

    runner.load("again")
    assert not runner.shutdown(msecs=50)  # still loading when the window goes
    before = state.bundle
    assert QThreadPool.globalInstance().waitForDone(20000)
    qtbot.wait(50)  # (anything the worker posted is delivered now)
    assert state.bundle is before  # its result went nowhere
    runner.job.synchronous = True  # (the same runner serves on: no frame waits for the abandoned load)
    runner.run("abc")
    assert state.frame is not None and state.frame.source == "abc"


def test_a_dock_shown_by_a_scene_gets_its_panel_in_a_later_turn_one_panel_a_turn(qtbot, tmp_path):
    window = make_main_window(qtbot, tmp_path, size=(1280, 720))
    assert window.panels.built("lens") is None and window.panels.built("heads") is None
    window.focus_panel("lens")
    window.focus_panel("heads")  # (tabbed with the lens: the lens's dock is hidden again)
    window.docks["lens"].setFloating(True)  # both visible now
    window.docks["lens"].show()
    assert window.panels.built("lens") is None and window.panels.built("heads") is None  # not in this turn
    seen: list[frozenset] = []
    ticks = QTimer(interval=0)
    ticks.timeout.connect(lambda: seen.append(frozenset(n for n in ("lens", "heads") if window.panels.built(n))))
    ticks.start()
    qtbot.waitUntil(lambda: window.panels.built("lens") is not None and window.panels.built("heads") is not None)
    qtbot.wait(30)
    ticks.stop()
    assert any(len(s) == 1 for s in seen), "both panels were built in one turn of the event loop"
    lens = window.panels.built("lens")
    assert lens.lens is window.state.frame.lens  # built late, it draws the current frame


def test_a_tab_page_is_built_when_first_shown_and_draws_what_the_panel_shows_then(qtbot):
    from explorer.panels.positional.panel import PositionalPanel
    state = SessionState()
    panel = PositionalPanel(state)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_d_model(16)
    panel.len_spin.setValue(12)
    qtbot.wait(50)
    assert set(panel.pages.built_pages()) == {"waves"}  # the tab shown; a view nobody opened costs nothing
    panel.tabs.setCurrentIndex(1)  # "Position × dimension"
    assert set(panel.pages.built_pages()) == {"waves", "heatmap"}
    pos = np.arange(12)[:, None]
    angle = pos / 10000 ** (np.arange(0, 16, 2)[None, :] / 16)
    formula = np.zeros((12, 16))
    formula[:, 0::2], formula[:, 1::2] = np.sin(angle), np.cos(angle)
    np.testing.assert_allclose(panel.heatmap.heatmap.values, formula, atol=2e-6)



COLLECTOR_RUN = """
import gc, sys, weakref
from PySide6.QtCore import QCoreApplication
from pyqtgraph.util.garbage_collector import GarbageCollector
from explorer.gui_collector import collect_on_gui_thread

class Node:
    pass

app = QCoreApplication([])
walked = []  # the size of the old generation at each full pass: what that pass walks
real_collect = gc.collect
def collect(generation=2):
    if generation == 2:
        walked.append(len(gc.get_objects(generation=2)))
    return real_collect(generation)
gc.collect = collect

if sys.argv[1] == "pyqtgraph":  # (as the app started it: what start-up made frozen first)
    real_collect()
    gc.freeze()
    collector = GarbageCollector(interval=1.0)
else:
    collector = collect_on_gui_thread()
collector.timer.stop()
walked.clear()  # (start-up's own collection, before anything is frozen)
heap = []
for _ in range(400):  # the heap grows between passes (a session: panels, models, curves)
    heap.append([[i] for i in range(800)])
    collector.check()
ring = [Node() for _ in range(5_000)]
for a, b in zip(ring, ring[1:] + ring[:1]):
    a.next = b
freed = []
weakref.finalize(ring[0], lambda: freed.append(1))
del ring, a, b  # garbage now, in a cycle: only a collection frees it
for _ in range(400):
    heap.append([[i] for i in range(800)])
    collector.check()
print(len(freed), *walked)
"""


def collector_run(which: str) -> tuple[list[int], int]:
    """(the objects each full pass walked, whether the dead cycle was freed)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    out = subprocess.run([sys.executable, "-c", COLLECTOR_RUN, which], capture_output=True, text=True,
                         env=env, timeout=60, check=True).stdout  # (its own process: it freezes objects)
    freed, *walked = map(int, out.split())
    return walked, freed


def test_the_gui_collector_walks_only_what_came_since_its_last_full_pass_and_frees_dead_cycles():
    """Each full pass of the collector walks the old generation; as the heap grew (a session's
    panels, models, curves), pyqtgraph's collector walked all of it again and again (0.2–1 s on
    the GUI thread with a model and the panels loaded). The app's freezes what survives a full
    pass, so the next walks only what came since, but for one pass in UNFREEZE_EVERY that walks
    everything (what dead cycles froze is freed then); a dead cycle is still freed."""
    from explorer.gui_collector import MIN_GROWTH, UNFREEZE_EVERY

    old_walked, old_freed = collector_run("pyqtgraph")
    new_walked, new_freed = collector_run("app")
    assert max(old_walked) > 5 * MIN_GROWTH and len(old_walked) >= 2 and old_freed == 1  # the old is stressed
    long_passes = [n for n in new_walked if n >= 2 * MIN_GROWTH]
    assert len(new_walked) >= UNFREEZE_EVERY and new_freed == 1
    assert len(long_passes) == len(new_walked) // UNFREEZE_EVERY, new_walked  # only the unfreezing passes
