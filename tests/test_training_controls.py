"""The training controls as a form of `RunSetup`: a new run's settings at first, each knob read
back into its field, and the tokenizer offered only for a file of pairs."""
from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("pytestqt")

from explorer.panels.training.controls import choose  # noqa: E402
from model.train.run_setup import TSV, RunSetup  # noqa: E402


def test_the_controls_start_at_a_new_runs_settings_and_read_every_knob_back(controls):
    assert controls.setup() == RunSetup()
    controls.steps_spin.setValue(120)
    controls.batch_spin.setValue(16)
    controls.device_box.setCurrentIndex(controls.device_box.findData("cpu"))
    assert controls.setup() == replace(RunSetup(), steps=120, batch_size=16, device="cpu")


def test_the_tokenizer_is_offered_only_for_a_file_of_pairs(controls, tmp_path):
    controls.show()
    assert not controls.tokenizer_box.isVisible()
    path = str(tmp_path / "pairs.tsv")
    controls.set_tsv(path)
    controls.tokenizer_box.setCurrentIndex(controls.tokenizer_box.findData("word"))
    setup = controls.setup()
    assert controls.tokenizer_box.isVisible() and (setup.task, setup.tsv_path, setup.tsv_tokenizer) == (TSV, path, "word")
    choose(controls.kind_box, "decoder_only")  # a next-token LM learns from a corpus: the file gives way
    assert controls.task_name() != TSV and not controls.tokenizer_box.isVisible()
    assert controls.setup().kind == "decoder_only"
