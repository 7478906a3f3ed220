"""Collecting chunk files into one rows file per experiment, and the MLflow summary run."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Iterable, Sequence

import pyarrow as pa

from ..utils.atomic import atomic_write

from .results_schema import read_provenance, read_rows_table, row_kind, with_metadata, write_rows_atomic

__all__ = ["collect_chunks", "rows_provenance", "tracking_overhead", "write_json_atomic", "log_summary"]

log = logging.getLogger(__name__)


def collect_chunks(chunks: Sequence[str | Path], output: str | Path) -> pa.Table:
    """Concatenate chunk files (validated, in the given order) into ``output``; the provenance of
    every chunk is kept, as a list, in the output's metadata. An input may itself be a collected rows
    file (a study extended by a later part: the kept rows of the finished part and the new part's
    chunks); its chunks' provenance records are carried over one by one, so the output lists every
    chunk once, and a chunk slot that two inputs both hold is an error (its rows would count twice)."""
    tables, prov, kinds = [], [], set()
    for path in chunks:
        t = read_rows_table(path)
        kinds.add(row_kind(t))
        tables.append(t.replace_schema_metadata(None))
        p = read_provenance(path) or {}
        if "chunks" in p:
            prov.extend(p["chunks"])
        else:
            p["file"] = str(path)
            prov.append(p)
    if not tables:
        raise ValueError("no chunk files to collect")
    if len(kinds) > 1:
        raise ValueError(f"chunk files of different row kinds ({sorted(kinds)}) cannot be collected together")
    slots = [p["slot"] for p in prov if p.get("slot")]
    twice = sorted({s for s in slots if slots.count(s) > 1})
    if twice:
        raise ValueError(f"{len(twice)} chunk slots are in more than one input, e.g. {twice[:3]}: "
                         "collect each chunk once")
    table = with_metadata(pa.concat_tables(tables), {"chunks": prov}, kinds.pop())
    write_rows_atomic(table, output)
    return table


def rows_provenance(paths: Iterable[str | Path]) -> list[dict]:
    """The per-chunk provenance records of one or more collected rows files."""
    out = []
    for p in paths:
        meta = read_provenance(p) or {}
        out.extend(meta.get("chunks", [meta] if meta else []))
    return out


def tracking_overhead(provenance: Iterable[dict]) -> dict:
    """Share of the grid jobs' wall time spent in MLflow calls (summed over jobs)."""
    wall = tracking = compute = 0.0
    jobs = 0
    for p in provenance:
        if "wall_s" in p:
            jobs += 1
            wall += float(p["wall_s"])
            tracking += float(p.get("tracking_s") or 0.0)
            compute += float(p.get("compute_s") or 0.0)
    return {"jobs": jobs, "wall_s": wall, "tracking_s": tracking, "compute_s": compute,
            "tracking_share": tracking / wall if wall > 0 else float("nan")}


def write_json_atomic(obj, path: str | Path) -> None:
    """Write ``obj`` as indented, key-sorted JSON to ``path`` atomically (a temporary file, then a rename).
    """
    with atomic_write(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2, sort_keys=True, default=str)
        fh.write("\n")


def log_summary(settings, rows: Sequence[str | Path], artifacts: Sequence[str | Path]) -> dict:
    """Log (or replace) the study's summary run: tables and figures as artifacts, the grid's size and
    tracking overhead as metrics (``settings``: the run-time settings, ``RuntimeSettings``). Idempotent:
    earlier summary runs of the study are deleted first."""
    from . import provenance
    from .catalog import mlflow_description
    from .results_schema import read_rows
    from .tracking import KIND, Tracker, experiment_name

    tracking_uri, prefix, config_hash = settings.tracking_uri, settings.experiment_prefix, settings.config_hash
    tracker = Tracker(tracking_uri, settings.artifact_root, sqlite_wal=settings.sqlite_wal)
    eid = tracker.experiment_id(experiment_name(prefix, "summary"), mlflow_description("summary"))
    frames = [read_rows(p) for p in rows]  # one file at a time: experiments of different row kinds
    experiments = sorted({str(e) for df in frames for e in df["experiment"].unique()})
    twins = sum(tracker.merge_dataset_twins(tracker.experiment_id(experiment_name(prefix, e))) for e in experiments)
    removed = tracker.delete_runs(tracker.search(eid, f"tags.`{KIND}` = 'summary'"))
    prov = rows_provenance(rows)
    overhead = tracking_overhead(prov)
    metrics = {"n_jobs": overhead["jobs"], "n_models": sum(len(df) for df in frames),
               "grid_wall_s": overhead["wall_s"], "grid_tracking_s": overhead["tracking_s"],
               "tracking_share": overhead["tracking_share"], "merged_dataset_twins": twins}
    params = {"config_hash": config_hash}
    for df in frames:
        for exp, sub in df.groupby("experiment"):
            metrics[f"n_models.{exp}"] = len(sub)
            params[f"datasets.{exp}"] = ",".join(dict.fromkeys(sub["dataset"]))[:500]
    run_id = tracker.create_run(eid, run_name=f"{prefix}/summary",
                                tags={KIND: "summary", "config_hash": config_hash,
                                      "code_version": provenance.code_version()},
                                params=params, metrics=metrics)
    for f in artifacts:
        f = Path(f)
        sub = "tables" if f.parent.name == "tables" else "figures" if f.parent.name == "figures" else None
        tracker.log_artifacts(run_id, [f], sub)
    tracker.terminate(run_id, "FINISHED")
    log.info("summary run %s (%d artifacts; replaced %d earlier summary runs)", run_id, len(artifacts), removed)
    return {"run_id": run_id, "experiment": experiment_name(prefix, "summary"), "tracking_uri": tracking_uri,
            "config_hash": config_hash, **{k: v for k, v in metrics.items()}, "logged_at": time.time()}
