"""Writing output files atomically: readers never see half a file, a failed write leaves the old one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable


def write_atomic(path: "str | Path", write: Callable[[BinaryIO], None]) -> None:
    """Call ``write(f)`` on a temporary file beside ``path``, then rename it over ``path``.

    A symlink is followed; the file gets the mode of the file it replaces, or the mode a plain
    create would give.

    Raises:
        OSError: the directory is missing or not writable, the disk is full, ...
    """
    target = Path(os.path.realpath(path))
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())  # the data is on disk before the name points at it
        os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_UMASK)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once, at import, before threads write files
    os.umask(mask)
    return mask


_UMASK = _read_umask()
