"""Figures of scenes (`--scene … --screenshot`): a scene file is opened and drawn, a bad one is
refused in a sentence, and the figure waits for the work of the scene's own panel."""
from __future__ import annotations

import json


def test_screenshot_cli_opens_a_scene_and_refuses_a_bad_one(tmp_path, qapp, capsys):
    from PySide6.QtGui import QImage

    from explorer.app import run_app
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps({"version": 1, "name": "Masking", "task": "reverse", "input": "abc",
                                 "panel": "attention", "step": "decoder.layers.0.self_attn.masked_scores"}))
    out = tmp_path / "s.png"
    assert run_app(["--scene", str(scene), "--size", "1024x640", "--screenshot", str(out)]) == 0
    assert QImage(str(out)).size().toTuple() == (1024, 640)
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "name": "x", "stpe": 3}')
    assert run_app(["--scene", str(bad), "--screenshot", str(tmp_path / "b.png")]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "'stpe'" in err and "Traceback" not in err


def test_a_scene_figure_waits_for_the_scenes_own_panel(tmp_path, qapp, capsys, monkeypatch):
    """A scene showing a panel with work of its own (compare) is drawn once that work is done."""
    import explorer.export
    from explorer.app import run_app
    at_export = []
    real = explorer.export.export_panel

    def spy(window, *args, **kwargs):
        compare = window.panels.built("compare")
        at_export.append(compare is not None and not compare.job.running and compare.comparison is not None)
        return real(window, *args, **kwargs)

    monkeypatch.setattr(explorer.export, "export_panel", spy)
    scene = tmp_path / "compare.json"
    scene.write_text(json.dumps({"version": 2, "scenes": [{"name": "B", "task": "reverse", "input": "abc",
                                                           "panel": "compare", "compare": "untrained",
                                                           "views": {"compare": "outputs"}}]}))
    assert run_app(["--scene", str(scene), "--size", "1024x640", "--screenshot", str(tmp_path / "c.png")]) == 0
    assert at_export == [True] and "panel compare" in capsys.readouterr().out
