"""Where the training panel keeps a run's files, and the run set-up its widgets read.

The run set-up itself (TrainingRequest, build_trainer, the model sizes and kinds on offer)
is Qt-free and lives beside the trainer in model.train.request; it is re-exported here for
the panel's widgets. What stays is what needs Qt: the platform's data folder.
"""
from __future__ import annotations

import os
from pathlib import Path

from model.train.request import (
    BUILTIN_TASKS,
    KIND_TASKS,
    LANGUAGE_MODELS,
    LECTURE,
    MODEL_KINDS,
    MODEL_PRESETS,
    PRESET_LABELS,
    TrainingRequest,
    build_trainer,
    check_kind_task,
    default_probe,
    describe_model,
    lecture_request,
    load_task,
    new_bundle,
    warm_up_in_background,
    worker_threads,
)

DATA_ENV = "TRANSFORMER_EXPLORER_DATA"  # overrides where the last run is kept (tests, kiosks)


def data_dir() -> Path:
    """Where the app keeps its own files: $TRANSFORMER_EXPLORER_DATA, else the platform's data
    folder (QStandardPaths; e.g. ~/.local/share/transformer-explorer on Linux). Named
    explicitly, so it does not depend on whether the application name was set."""
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override)
    from PySide6.QtCore import QStandardPaths

    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return Path(base) / "transformer-explorer" if base else Path.home() / ".transformer-explorer"


def last_run_dir() -> Path:
    """The checkpoint folder written when the window closes during a run."""
    return data_dir() / "last-run"


__all__ = ["DATA_ENV", "data_dir", "last_run_dir", "BUILTIN_TASKS", "KIND_TASKS", "LANGUAGE_MODELS", "LECTURE",
           "MODEL_KINDS", "MODEL_PRESETS", "PRESET_LABELS", "TrainingRequest", "build_trainer", "check_kind_task",
           "default_probe", "describe_model", "lecture_request", "load_task", "new_bundle", "warm_up_in_background",
           "worker_threads"]
