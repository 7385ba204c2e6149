"""A run's saved snapshots: checkpoints kept at steps of one training run, to compare them.

`transformer-explorer train --snapshots DIR` keeps every periodic save as its own folder,
`DIR/step-000100/`, `DIR/step-000200/` … (each written atomically by `save_checkpoint`), next
to the one `--out` checkpoint that each save replaces. `run_snapshots(path)` lists them for
the compare panel's slider, whether it is given the run's folder or one of its step folders.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from model.io.checkpoints import CONFIG, UNTRAINED, save_checkpoint

STEP_FOLDER = re.compile(r"^step-(\d+)$")


@dataclass(frozen=True)
class RunSnapshot:
    """One saved snapshot of a run: its optimiser step and its checkpoint folder."""

    step: int
    path: Path

    @property
    def label(self) -> str:
        return f"step {self.step:,}"


def snapshot_folder(folder: str | Path, step: int) -> Path:
    """Where the snapshot of `step` goes: DIR/step-000100 (zero-padded, so names sort by step)."""
    return Path(folder) / f"step-{int(step):06d}"


def save_snapshot(bundle, folder: str | Path, step: int, metrics: dict | None = None) -> Path:
    """Save `bundle` as the run's snapshot of `step` (atomically, as every checkpoint)."""
    return save_checkpoint(bundle, snapshot_folder(folder, step), metrics)


def _steps_in(folder: Path) -> list[RunSnapshot]:
    found = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = STEP_FOLDER.match(entry.name)
        if match and entry.is_dir() and (entry / CONFIG).is_file():
            found.append(RunSnapshot(int(match.group(1)), entry))
    return sorted(found, key=lambda s: s.step)


def run_snapshots(path: str | Path | None) -> list[RunSnapshot]:
    """The snapshots of the run `path` belongs to, by step: `path` is a folder of step folders,
    or one step folder (its siblings are the run). Anything else: [] (a lone checkpoint)."""
    if not path:
        return []
    path = Path(path).expanduser()
    if path.is_file():
        path = path.parent
    if not path.is_dir():
        return []
    if STEP_FOLDER.match(path.name) and (path / CONFIG).is_file():
        return _steps_in(path.parent)
    return _steps_in(path)


def latest_snapshot(path: str | Path) -> Path | None:
    """A folder of step folders → its newest snapshot (what "compare with this run" opens)."""
    snaps = run_snapshots(path) if not (Path(path) / CONFIG).is_file() else []
    return snaps[-1].path if snaps else None


def resolve_reference(reference: str) -> str:
    """A checkpoint to compare with: a folder of step folders means its newest snapshot."""
    newest = latest_snapshot(reference) if Path(reference).expanduser().is_dir() else None
    return str(newest) if newest is not None else reference


def describe_reference(reference: str) -> str:
    """A compared checkpoint in words: a snapshot's run and step, a folder's name, a bundled name."""
    if reference == UNTRAINED:
        return "untrained copy"
    path = Path(resolve_reference(reference))
    if path.name.startswith("step-") and path.name[5:].isdigit():
        return f"{path.parent.name}, step {int(path.name[5:]):,}"
    return path.name if path.exists() else reference


__all__ = ["RunSnapshot", "describe_reference", "latest_snapshot", "resolve_reference", "run_snapshots",
           "save_snapshot", "snapshot_folder"]
