"""The training metrics table: one row per step any series recorded, blanks where a metric was
not measured, the smoothed loss beside the loss; nothing recorded or no folder: a message."""
from __future__ import annotations

import csv
from types import SimpleNamespace

import pytest

from model.io.metrics_csv import CSV_COLUMNS, MetricsCsvError, write_training_csv


def curves(exact=True):
    loss = SimpleNamespace(x=[0, 10, 20], y=[3.0, 2.0, 1.5], smoothed=[3.0, 2.5, 2.0])
    accuracy = SimpleNamespace(x=[10, 20], y=[0.1, 0.4])
    extra = dict(exact_steps=[20, 30], exact_values=[0.25, 0.5]) if exact else {}
    return SimpleNamespace(series={"loss": loss, "accuracy": accuracy}, **extra)


def test_every_recorded_step_is_a_row_with_blanks_where_nothing_was_measured(tmp_path):
    path = tmp_path / "m.csv"
    assert write_training_csv(curves(), path) == 4
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r["step"] for r in rows] == ["0", "10", "20", "30"]
    assert rows[0]["accuracy"] == "" and float(rows[1]["accuracy"]) == 0.1
    assert float(rows[2]["loss_smoothed"]) == 2.0 and float(rows[2]["exact_match"]) == 0.25
    assert rows[3]["loss"] == "" and float(rows[3]["exact_match"]) == 0.5


def test_no_metrics_or_no_folder_is_a_message(tmp_path):
    empty = SimpleNamespace(series={})
    with pytest.raises(MetricsCsvError, match="no training metrics"):
        write_training_csv(empty, tmp_path / "m.csv")
    with pytest.raises(MetricsCsvError, match="does not exist"):
        write_training_csv(curves(exact=False), tmp_path / "missing" / "m.csv")
