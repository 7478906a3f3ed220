"""Provenance: code version (git), machine, library versions, data checksums."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from ..utils.environment import library_versions, machine_info

__all__ = ["code_version", "machine_info", "library_versions", "data_sha256"]


@lru_cache(maxsize=1)
def code_version(path: str | os.PathLike | None = None) -> str:
    """Git sha of the tree holding this package, with "-dirty" when tracked files have changes;
    "unknown" outside git (or in a repository without commits)."""
    where = Path(path) if path else Path(__file__).resolve().parent
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10, env=env
        )
        if sha.returncode != 0:
            return "unknown"
        status = subprocess.run(
            ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"],
            cwd=where, capture_output=True, text=True, timeout=30, env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    version = sha.stdout.strip()
    if status.returncode != 0 or status.stdout.strip():
        version += "-dirty"
    return version


def data_sha256(checksums: Mapping[str, str] | None) -> str:
    """One sha256 for a data set: the file's own when there is one file, else the sha256 of the
    canonical JSON of {relpath: sha256}; "none" for generated (synthetic) data."""
    if not checksums:
        return "none"
    if len(checksums) == 1:
        return next(iter(checksums.values()))
    blob = json.dumps(dict(sorted(checksums.items())), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
