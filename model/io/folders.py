"""Replacing a folder so that a crash, a kill or a full disk never loses the old one: write
and fsync the new files in a temp folder, swap it in with renames, fsync the parent (what
`model.io.checkpoints.save_checkpoint` builds on; `recover_interrupted_save` undoes a kill between
the two renames).

Replacing deletes the old folder, so every folder the app writes (a checkpoint, a run's
training state, its kept steps, snapshots, averages) passes `check_ours_or_empty` first: only
an absent or empty folder, or one holding nothing but the files the app itself wrote there, may
be replaced."""
from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def os_reason(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full (no space left on the device)"
    if exc.errno == errno.EFBIG:
        return "the file is larger than the size limit allows (disk quota or ulimit -f)"
    return exc.strerror or str(exc)


def write_synced(file: Path, data: bytes) -> None:
    """Write, flush and fsync, so a crash after the swap cannot leave a half-written file."""
    with open(file, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(file, 0o666 & ~umask())


def fsync_dir(folder: Path) -> None:
    """fsync a folder so the names in it (files written, renames) survive a power cut."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # some platforms cannot open a folder; the data itself was synced
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def leftovers(path: Path, kind: str) -> list[Path]:
    """The `.NAME.old-*` or `.NAME.saving-*` folders an interrupted save left beside `path`, newest first."""
    prefix = f".{path.name}.{kind}-"
    if not path.parent.is_dir():
        return []
    found = [p for p in path.parent.iterdir() if p.name.startswith(prefix) and p.is_dir()]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def swap_into_place(tmp: Path, path: Path) -> None:
    """Rename the finished temp folder onto `path`; an old checkpoint is moved aside first and
    deleted only after the new one is in place (recover_interrupted_save undoes a kill between)."""
    if not path.exists():
        os.replace(tmp, path)
        fsync_dir(path.parent)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
    os.rmdir(old)
    os.replace(path, old)
    try:
        os.replace(tmp, path)
    except OSError:
        os.replace(old, path)  # put the previous checkpoint back
        raise
    fsync_dir(path.parent)
    shutil.rmtree(old, ignore_errors=True)


def check_creatable(path: str | Path, error: type[Exception] = ValueError) -> None:
    """Refuse a folder that cannot be created because a regular file stands where it or one of
    its parents would be (found before any work, not when the first save fails)."""
    path = Path(path)
    for place in (path, *path.parents):
        try:
            if place.exists():
                if not place.is_dir():
                    where = "exists and is a file" if place == path else f"is inside {place}, which is a file"
                    raise error(f"{path}: {where}, not a folder")
                return
        except OSError as exc:
            raise error(f"{path}: cannot check the folder ({exc.strerror or exc})") from None


def check_ours_or_empty(path: str | Path, marker: str, is_ours: Callable[[Path], bool], known: tuple[str, ...],
                        what: str, error: type[Exception] = ValueError) -> None:
    """Refuse to replace `path` unless it is absent, empty, or a `what` the app wrote: its
    `marker` file passes `is_ours` and it holds none but the `known` files (a save deletes the
    old folder whole). The error names the folder and what would have been lost."""
    path = Path(path)
    check_creatable(path, error)
    if not path.exists():
        return
    try:
        entries = sorted(p.name for p in path.iterdir())
    except OSError as exc:
        raise error(f"{path}: cannot read the folder ({exc.strerror or exc})") from None
    if not entries:
        return
    if marker not in entries or not is_ours(path / marker):
        raise error(f"{path}: the folder is not empty and is not a {what} (no {marker} written by Transformer "
                    "Explorer); refusing to overwrite it (choose another folder)")
    foreign = [name for name in entries if name not in known]
    if foreign:
        raise error(f"{path}: the {what} folder also holds {', '.join(foreign[:5])}"
                    f"{' …' if len(foreign) > 5 else ''}, which saving would delete; refusing to overwrite "
                    "it (move those files out or choose another folder)")


def is_json_of_format(file: Path, fmt: str, max_bytes: int = 50_000_000) -> bool:
    """Whether `file` is a JSON object the app wrote: its "format" entry is `fmt`."""
    import json

    try:
        if file.stat().st_size > max_bytes:
            return False
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("format") == fmt
