"""A training run's metrics as a CSV table for slides and spreadsheets (File → Export training metrics)."""
from __future__ import annotations

import csv
from pathlib import Path

CSV_COLUMNS = ("step", "loss", "loss_smoothed", "accuracy", "lr", "tokens_per_s", "exact_match")


class MetricsCsvError(ValueError):
    """Metrics that could not be written; the message says why."""


def training_rows(curves) -> list[dict]:
    """One row per recorded step of `curves` (named series with x, y; the loss's `smoothed`;
    optional `exact_steps` / `exact_values`), the columns of CSV_COLUMNS it has."""
    rows: dict[int, dict] = {}
    for name, s in curves.series.items():
        for x, y in zip(s.x, s.y):
            rows.setdefault(int(x), {"step": int(x)})[name] = float(y)
    loss = curves.series.get("loss")
    if loss is not None:
        for x, y in zip(loss.x, loss.smoothed):
            rows[int(x)]["loss_smoothed"] = float(y)
    for x, y in zip(getattr(curves, "exact_steps", []), getattr(curves, "exact_values", [])):
        rows.setdefault(int(x), {"step": int(x)})["exact_match"] = float(y)
    return [rows[k] for k in sorted(rows)]


def write_training_csv(curves, path: str | Path) -> int:
    """The metrics as CSV (empty where not measured); returns the number of rows."""
    path = Path(path)
    if not path.parent.is_dir():
        raise MetricsCsvError(f"the folder {path.parent} does not exist")
    rows = training_rows(curves)
    if not rows:
        raise MetricsCsvError("no training metrics yet: start a training run first")
    try:
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, restval="")
            writer.writeheader()
            writer.writerows(rows)
    except OSError as exc:
        raise MetricsCsvError(f"could not write {path}: {exc.strerror or exc}") from None
    return len(rows)
