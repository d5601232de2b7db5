"""Writing output files atomically: readers never see half a file, a failed write leaves the old one."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable


def write_atomic(path: "str | Path", write: Callable[[BinaryIO], None]) -> None:
    """Call ``write(f)`` on a temporary file beside ``path``, then rename it over ``path``.

    A symlink is followed; the file gets the mode of the file it replaces, or the mode a plain
    create would give. Only a regular file is ever replaced: a rename over a device or FIFO (e.g.
    /dev/full) would swap the device node for a plain file.

    Raises:
        OSError: ``path`` exists and is not a regular file; the directory is missing or not writable,
            the disk is full, ...
    """
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file():
        raise OSError(errno.EINVAL, "not a regular file (a directory, device, FIFO or socket); give a file path",
                      str(path))
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


def write_problem(path: "str | Path", *, directory: bool = False) -> str | None:
    """Why ``path`` cannot be written, or None; checked before a long run, so it fails at once.

    ``directory``: ``path`` is a directory to create (with its missing parents) or to write into;
    else it is a file written atomically (a temporary file in its directory, then a rename), which
    needs its directory to exist and be writable, not the file itself.
    """
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))  # followed, as write_atomic does
    if directory:
        if path.exists() and not path.is_dir():
            return f"{path} is a file, not a directory"
        start = path
    else:
        if path.is_dir():
            return f"{path} is a directory; give a file name in it"
        if path.exists() and not path.is_file():
            return f"{path} is not a regular file (a device, FIFO or socket); give a file path"
        start = path.parent
    existing = start
    while not existing.exists():  # the nearest ancestor that exists decides
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a directory"
    if existing != start and not directory:
        return f"directory {start} does not exist"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"directory {existing} is not writable (permission denied)"
    return _create_problem(existing)


def _create_problem(directory: Path) -> str | None:
    """Try what the write will do, a temporary file in ``directory``: permission bits do not tell
    everything (root, read-only or virtual file systems such as /proc)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".fusekit-probe.")
    except OSError as exc:
        return f"cannot create files in directory {directory}: {exc.strerror or exc}"
    os.close(fd)
    os.unlink(tmp)
    return None
