"""Atomic file writes: the one way this project puts a file in place.

A temporary file in the target's folder is written, flushed to disk and then renamed over
the target (``os.replace`` is atomic on POSIX), so a reader never sees a half-written file
and a process that dies mid-write leaves the target as it was, with no temporary behind.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator


def default_file_mode() -> int:
    """Permission bits ``open()`` gives a new file (0o666 minus the umask).

    ``tempfile.mkstemp`` creates files 0o600; files moved into place get these bits instead,
    so a shared data or results directory stays readable as the umask intends.
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # portable fallback: read the umask by setting it
    os.umask(mask)
    return 0o666 & ~mask


def set_default_mode(path: str | os.PathLike[str]) -> None:
    """chmod ``path`` to :func:`default_file_mode` (best effort)."""
    with contextlib.suppress(OSError):
        os.chmod(path, default_file_mode())


def temporary_path(target: str | os.PathLike[str]) -> Path:
    """A new, empty temporary file beside ``target`` (same folder, so the final rename is atomic)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    os.close(fd)
    return Path(tmp)


def move_into_place(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Flush a finished temporary file to disk, give it the default mode and rename it over ``target``."""
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    set_default_mode(tmp)
    os.replace(tmp, target)


@contextlib.contextmanager
def atomic_write(target: str | os.PathLike[str], mode: str = "wb", **open_kwargs) -> Iterator[IO]:
    """Open a temporary file beside ``target``; on a clean exit, fsync it and rename it over
    ``target``; on any exception, remove it and re-raise.

    >>> with atomic_write("out.json", "w", encoding="utf-8") as fh:  # doctest: +SKIP
    ...     fh.write("{}")
    """
    tmp = temporary_path(target)
    try:
        with open(tmp, mode, **open_kwargs) as fh:
            yield fh
        move_into_place(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
