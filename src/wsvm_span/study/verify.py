"""Reruns that check themselves (``wsvm-span verify``): sampled jobs of a committed part of ``reproduced/``
rerun at the current code, every column that is not a measured time compared with the committed rows.

A part keeps its config (named in its ``provenance.json``) and its collected rows, whose metadata lists the
chunks in the order their rows were concatenated, each with its job slot, spec hash and number of models.
So one job's committed rows are a slice of the rows file, and the job itself is the part's config planned
again, at the same slot. The rerun writes nothing to the part, the study's results or an MLflow store.

What counts as equal: strings, integers and booleans exactly; floats within :data:`VERIFY_RTOL` (relative)
or :data:`VERIFY_ATOL` (absolute), NaN equal to NaN. The solvers behind the floats are iterative and the
parts ran on several machines (Intel and AMD: different BLAS kernels, different rounding), so bit equality
would flag round-off; a moved selection, error count or support vector shows as far more than that.
Measured columns (wall and CPU seconds, peak memory) are not compared.

A part that a change moved on purpose, and that is not rerun yet, is listed in ``reproduced/README.md``
under the heading :data:`STALE_HEADING` (``- `part`: reason``); verify reports it stale with the reason and
does not fail on it.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import math
import random
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

__all__ = ["VERIFY_ATOL", "VERIFY_RTOL", "STALE_HEADING", "ColumnDifference", "JobCheck", "PartCheck",
           "committed_jobs", "committed_wall_seconds", "compare_rows", "is_measured", "stale_parts", "stale_reason",
           "verify_part"]

log = logging.getLogger(__name__)

VERIFY_RTOL = 1e-6
VERIFY_ATOL = 1e-9
STALE_HEADING = "Stale parts"
# measured, not computed: they differ on every run (Experiment 7's speed-ups, speedup and speedup_smo_hot, are
# ratios of two times, Experiment 9's load_avg the machine's load)
_MEASURED = re.compile(r"^(t_|cpu_|wall_s|peak_mem|speedup(_smo_hot)?$|load_avg$)")
# a column of this many differing models or more is summarised by its first few model indices
_SHOWN_MODELS = 5


def is_measured(column: str) -> bool:
    """Whether a rows column is a measurement (time, memory) rather than a computed value."""
    return bool(_MEASURED.match(column))


@dataclass(frozen=True)
class ColumnDifference:
    column: str
    n_models: int
    max_abs_diff: float  # NaN for a non-numeric column
    models: tuple[int, ...]  # model_index of the first few differing models
    example: tuple[Any, Any]  # (committed, rerun) of the first

    def describe(self) -> str:
        size = "" if math.isnan(self.max_abs_diff) else f", max |diff| {self.max_abs_diff:.3g}"
        more = ", ..." if self.n_models > len(self.models) else ""
        return (f"{self.column}: {self.n_models} model(s){size}; models {', '.join(map(str, self.models))}{more}; "
                f"e.g. committed {self.example[0]!r}, rerun {self.example[1]!r}")


@dataclass
class JobCheck:
    slot: str
    n_models: int
    committed_s: float  # the committed job's wall time
    rerun_s: float = math.nan
    differences: list[ColumnDifference] = field(default_factory=list)
    problem: str | None = None  # the job could not be compared at all (its spec moved, its rows are missing)

    @property
    def ok(self) -> bool:
        return self.problem is None and not self.differences


@dataclass
class PartCheck:
    part: str
    jobs: list[JobCheck]
    n_committed_jobs: int
    stale_reason: str | None = None

    @property
    def ok(self) -> bool:
        return all(j.ok for j in self.jobs)

    def report(self) -> str:
        lines = [f"{self.part}: {len(self.jobs)} of {self.n_committed_jobs} jobs rerun"]
        for job in self.jobs:
            state = "same rows" if job.ok else "DIFFERENT"
            lines.append(f"  {job.slot} ({job.n_models} models, {job.rerun_s:.1f} s; committed "
                         f"{job.committed_s:.1f} s): {state}")
            if job.problem:
                lines.append(f"    {job.problem}")
            lines += [f"    {d.describe()}" for d in job.differences]
        if self.stale_reason is not None and not self.ok:
            lines.append(f"  stale (reproduced/README.md, {STALE_HEADING}): {self.stale_reason}; not a failure")
        return "\n".join(lines)


def stale_parts(readme: str | Path) -> dict[str, str]:
    """The parts marked stale in ``reproduced/README.md`` (part or shell pattern -> reason): the lines
    ``- `part`: reason`` under the heading :data:`STALE_HEADING`, up to the next heading (``stale_reason`` reads
    them)."""
    path = Path(readme)
    if not path.is_file():
        return {}
    out, inside = {}, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            inside = line.lstrip("#").strip() == STALE_HEADING
            continue
        m = re.match(r"^- `([^`]+)`: (.+)$", line.strip())
        if inside and m:
            out[m.group(1)] = m.group(2).strip()
    return out


def stale_reason(stale: Mapping[str, str], part: str) -> str | None:
    """The reason ``part`` is stale: its own line of ``stale_parts``, else the first line whose name is a shell
    pattern it matches (``paper-exp8-*``: a change that moves every part of an experiment), else None."""
    if part in stale:
        return stale[part]
    return next((reason for pattern, reason in stale.items() if fnmatch.fnmatchcase(part, pattern)), None)


def committed_jobs(rows_file: str | Path) -> list[tuple[dict, slice]]:
    """Each chunk's provenance record of a collected rows file with the slice of its rows."""
    from .results_schema import read_provenance

    chunks = (read_provenance(rows_file) or {}).get("chunks")
    if not chunks:
        raise ValueError(f"{rows_file}: no chunk provenance in its metadata (not a collected rows file)")
    out, start = [], 0
    for chunk in chunks:
        stop = start + int(chunk["n_models"])
        out.append((chunk, slice(start, stop)))
        start = stop
    return out


def _missing(v: Any) -> bool:
    # a rows file stores a float column's missing value as null, which reads back as NaN or None
    return v is None or (isinstance(v, float) and math.isnan(v))


def _equal(a: Any, b: Any) -> bool:
    if _missing(a) or _missing(b):
        return _missing(a) and _missing(b)
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=VERIFY_RTOL, abs_tol=VERIFY_ATOL)
    return a == b


def _param_text(v: Any) -> str:
    # hyperparameters pair rows across the rows file's types (-6.0 there, -6 in a job's row)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(float(v))
    return str(v)


def _paired(committed: Sequence[Mapping[str, Any]], rerun: Sequence[Mapping[str, Any]],
            model_key: Callable[[Mapping[str, Any]], Hashable] | None) -> tuple[list, list]:
    if model_key is None:
        return ([sorted(rows, key=lambda r: r.get("model_index", 0)) for rows in (committed, rerun)])
    by_key = {model_key(r): r for r in rerun}
    if len(by_key) != len(rerun):
        raise ValueError("two rerun rows have the same hyperparameters: rows cannot be paired")
    missing = [model_key(r) for r in committed if model_key(r) not in by_key]
    if missing:
        raise ValueError(f"{len(missing)} committed models have no rerun row with their hyperparameters, "
                         f"e.g. {missing[0]}")
    return list(committed), [by_key[model_key(r)] for r in committed]


def compare_rows(committed: Sequence[Mapping[str, Any]], rerun: Sequence[Mapping[str, Any]],
                 model_key: Callable[[Mapping[str, Any]], Hashable] | None = None) -> list[ColumnDifference]:
    """The computed columns in which ``rerun`` differs from ``committed``, one row per model on each side,
    paired by ``model_key`` (a model's hyperparameters: the order in which a job numbers its models may
    change with the code, the models may not) or else by ``model_index``. A column without any committed
    value (added to the schema after the part ran) is not compared; a committed value that the rerun's row
    lacks is a difference."""
    if len(committed) != len(rerun):
        raise ValueError(f"{len(committed)} committed rows against {len(rerun)} rerun rows")
    committed, rerun = _paired(committed, rerun, model_key)
    ignored = {"model_index"} if model_key is not None else set()
    columns = sorted({c for row in [*committed[:1], *rerun[:1]] for c in row if not is_measured(c)} - ignored)
    out = []
    for column in columns:
        if all(_missing(row.get(column)) for row in committed):
            continue  # a column the rows file predates (or never filled): no committed number to move
        bad = [(i, old.get(column), new.get(column)) for i, (old, new) in enumerate(zip(committed, rerun))
               if not _equal(old.get(column), new.get(column))]
        if not bad:
            continue
        diffs = [abs(float(a) - float(b)) for _, a, b in bad
                 if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)]
        finite = [d for d in diffs if not math.isnan(d)]
        models = tuple(int(committed[i].get("model_index", i)) for i, _, _ in bad[:_SHOWN_MODELS])
        out.append(ColumnDifference(column, len(bad), max(finite) if finite else math.nan, models,
                                    (bad[0][1], bad[0][2])))
    return out


def _config_of(part: Path) -> Path:
    prov = json.loads((part / "provenance.json").read_text(encoding="utf-8"))
    config = part / prov["config"]
    if not config.is_file():
        raise FileNotFoundError(f"{part}: its provenance names the config {prov['config']}, which is not in the part")
    return config


def _rows_files(part: Path) -> list[Path]:
    files = sorted((part / "rows").glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"{part}: no rows/*.parquet (a part verify can rerun keeps its rows)")
    return files


def _planned_jobs(part: Path) -> dict[str, Any]:
    """The jobs of the part's config, planned again at the current code, by slot."""
    from . import config as sc
    from .experiments import plan_jobs

    return {job.slot: job for job in plan_jobs(sc.load_config(_config_of(part)))}


def _planned_job(planned: Mapping[str, Any], chunk: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The planned job of a committed chunk, or None and why there is none."""
    job = planned.get(chunk["slot"])
    if job is None:
        return None, f"the part's config no longer plans a job at {chunk['slot']}"
    if job.spec_hash != chunk["spec_hash"]:
        return None, (f"the job's spec moved: the config plans spec {job.spec_hash[:16]}, the committed rows "
                      f"are of {chunk['spec_hash'][:16]} (the planner or the config's defaults changed)")
    return job, None


def committed_wall_seconds(part: str | Path) -> list[tuple[Any, float]]:
    """Every committed job of ``part`` that its config still plans as it ran: (the job, its wall seconds as the
    job's own clock measured them, process start not included). What the cost model's error and its measured
    ratios are taken from (``config.estimate.committed_error``, ``fit_kind_ratios``); a job the config no longer
    plans so is left out, with a warning."""
    part = Path(part)
    planned = _planned_jobs(part)
    out = []
    for rows_file in _rows_files(part):
        for chunk, _ in committed_jobs(rows_file):
            job, problem = _planned_job(planned, chunk)
            if problem is None:
                out.append((job, float(chunk["wall_s"])))
            else:
                log.warning("%s: left out: %s", part.name, problem)
    return out


def verify_part(part: str | Path, sample: int | None = 3, seed: int = 0, max_job_seconds: float | None = None,
                slots: Iterable[str] = (), workdir: str | Path | None = None,
                stale: Mapping[str, str] | None = None) -> PartCheck:
    """Rerun ``sample`` jobs of the committed ``part`` (drawn with ``seed`` among those whose committed wall
    time is at most ``max_job_seconds``; all of them for ``sample=None``; the jobs at ``slots`` if given) and
    compare their rows with the committed ones. ``workdir``: where the config's relative data paths resolve
    (default: the working directory, the repository root)."""
    import pyarrow.parquet as pq

    from . import config as sc
    from .experiments import kind_of
    from .runner import run_chunk

    part = Path(part)
    settings = replace(sc.runtime_settings(sc.load_config(_config_of(part)), workdir), tracking_enabled=False)
    planned = _planned_jobs(part)
    committed = [(rows_file, chunk, rows) for rows_file in _rows_files(part)
                 for chunk, rows in committed_jobs(rows_file)]
    wanted = set(slots)
    if wanted:
        pool = [c for c in committed if c[1]["slot"] in wanted]
        missing = wanted - {c[1]["slot"] for c in pool}
        if missing:
            raise ValueError(f"{part.name}: no committed job at {sorted(missing)}")
    else:
        pool = [c for c in committed
                if max_job_seconds is None or float(c[1].get("wall_s", math.inf)) <= max_job_seconds]
        if sample is not None:
            pool = random.Random(seed).sample(pool, min(sample, len(pool)))
    checks, tables = [], {}
    for rows_file, chunk, rows in pool:
        slot = chunk["slot"]
        check = JobCheck(slot, int(chunk["n_models"]), float(chunk.get("wall_s", math.nan)))
        checks.append(check)
        job, check.problem = _planned_job(planned, chunk)
        if job is None:
            continue
        if rows_file not in tables:
            tables[rows_file] = pq.read_table(rows_file)
        old = tables[rows_file].slice(rows.start, rows.stop - rows.start).to_pylist()
        t0 = time.perf_counter()
        result = run_chunk(job, None, settings)
        check.rerun_s = time.perf_counter() - t0
        kind = kind_of(job)

        def hyperparameters(row, job=job, kind=kind) -> tuple:
            params = kind.row_params(job, row)
            return tuple(sorted((k, _param_text(v)) for k, v in params.items() if k != "model_index"))

        try:
            check.differences = compare_rows(old, result.rows, hyperparameters)
        except ValueError as exc:
            check.problem = str(exc)
        log.info("%s: %s", slot, "same rows" if check.ok else "DIFFERENT")
    return PartCheck(part.name, checks, len(committed), stale_reason=stale_reason(stale or {}, part.name))
