"""Replacing a folder so that a crash, a kill or a full disk never loses the old one: write
and fsync the new files in a temp folder, swap it in with renames, fsync the parent (what
`model.io.checkpoints.save_checkpoint` builds on; `recover_interrupted_save` undoes a kill between
the two renames)."""
from __future__ import annotations

import errno
import os
import shutil
import tempfile
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
