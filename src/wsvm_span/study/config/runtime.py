"""Run-time settings: where data come from and where runs are logged. They never change results, so
they are not part of a job's spec (editing them does not rerun finished jobs)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .loading import config_hash

__all__ = ["RuntimeSettings", "runtime_settings"]


@dataclass(frozen=True)
class RuntimeSettings:
    """Settings that do not change results (where data come from, where runs are logged).

    The Snakefile resolves them from the config (:func:`runtime_settings`) and hands them to every
    ``wsvm-span`` command as :meth:`cli_args`; the CLI rebuilds them from those arguments.
    """

    tracking_enabled: bool = False
    tracking_uri: str | None = None
    experiment_prefix: str = "wsvm-span"
    artifact_root: str | None = None
    child_runs: bool = True
    sqlite_wal: bool = True
    data_dir: str | None = None
    data_mirror: str | None = None
    config_hash: str = "unknown"
    memory_mb: int | None = None  # the job's memory limit (its scheduler's mem_mb); None: no limit

    def cli_args(self, data: bool = True) -> list[str]:
        """The ``wsvm-span`` arguments that carry these settings (``data``: with the data locations)."""
        args = ["--config-hash", self.config_hash, "--experiment-prefix", self.experiment_prefix]
        if data:
            args += ["--data-dir", self.data_dir] + (["--data-mirror", self.data_mirror] if self.data_mirror else [])
        if not self.tracking_enabled:
            args += ["--no-tracking"]
        else:
            args += ["--tracking-uri", self.tracking_uri]
            if self.artifact_root:
                args += ["--artifact-root", self.artifact_root]
            if not self.child_runs:
                args += ["--no-child-runs"]
            if not self.sqlite_wal:
                args += ["--no-sqlite-wal"]
        return args


def _is_url(s: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", s))


def runtime_settings(cfg: Mapping[str, Any], workdir: str | os.PathLike | None = None) -> RuntimeSettings:
    """Resolve tracking URI, artifact root and data locations against the working directory.

    Tracking URI: config tracking.uri, else $MLFLOW_TRACKING_URI, else sqlite:///<workdir>/results/mlflow.db.
    Data mirror: a local folder that does not exist means "no mirror" (download from the publishers)."""
    workdir = Path(workdir or os.getcwd()).resolve()
    tr = cfg["tracking"]
    uri = tr["uri"] or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{workdir / 'results' / 'mlflow.db'}"
    if uri.startswith("sqlite:///") and not uri.startswith("sqlite:////"):
        rel = uri[len("sqlite:///"):]
        uri = f"sqlite:///{(workdir / rel).resolve()}"
    local_store = uri.startswith("sqlite:") or uri.startswith("file:") or not _is_url(uri)
    artifact_root = None
    if local_store:
        artifact_root = str((workdir / (tr["artifact_root"] or "results/mlartifacts")).resolve())
    mirror = cfg["data"]["mirror"]
    if mirror and not _is_url(mirror):
        p = (workdir / mirror).resolve()
        mirror = str(p) if p.is_dir() else None
    return RuntimeSettings(
        tracking_enabled=bool(tr["enabled"]),
        tracking_uri=uri,
        experiment_prefix=cfg["study"],
        artifact_root=artifact_root,
        child_runs=bool(tr["child_runs"]),
        sqlite_wal=bool(tr["sqlite_wal"]),
        data_dir=str((workdir / cfg["data"]["dir"]).resolve()),
        data_mirror=mirror,
        config_hash=config_hash(cfg),
    )
