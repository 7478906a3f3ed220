"""Provenance: code version (git), machine, library versions, data checksums."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import socket
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Mapping

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


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@lru_cache(maxsize=1)
def machine_info() -> dict[str, str]:
    """Where the job ran (for Table 6's caption)."""
    return {
        "hostname": socket.gethostname(),
        "cpu": _cpu_model(),
        "cpu_count": str(os.cpu_count()),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """The core library's versions (numpy, scipy, sklearn, libsvm, clarabel, mosek) plus the workflow's."""
    versions: dict[str, str] = {}
    try:
        import wsvm_span as ws

        versions.update({k: str(v) for k, v in ws.library_versions().items()})
    except (ImportError, AttributeError):
        for dist, key in [("numpy", "numpy"), ("scipy", "scipy"), ("scikit-learn", "sklearn"),
                          ("libsvm-official", "libsvm"), ("clarabel", "clarabel"), ("mosek", "mosek")]:
            try:
                versions[key] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                versions[key] = "absent"
    for dist in ("wsvm-span", "pandas", "pyarrow", "mlflow", "snakemake"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return versions


def data_sha256(checksums: Mapping[str, str] | None) -> str:
    """One sha256 for a data set: the file's own when there is one file, else the sha256 of the
    canonical JSON of {relpath: sha256}; "none" for generated (synthetic) data."""
    if not checksums:
        return "none"
    if len(checksums) == 1:
        return next(iter(checksums.values()))
    blob = json.dumps(dict(sorted(checksums.items())), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
