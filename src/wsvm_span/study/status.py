"""``wsvm-span status``: how far a study is, from its config and its results folder alone.

Finished jobs are the chunk files whose provenance carries the job's spec hash (a chunk of another
config counts as not done: Snakemake would rerun it); running (or interrupted) jobs are those whose
log has progress lines but no chunk file. Time left is the models still to compute times the measured
time per model of the same data set (finished jobs), or the calibrated cost model's projection
(``check-config --estimate``) where nothing of that data set has been measured yet.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .config import estimated_seconds, load_config
from .config.estimate import job_seconds, load_calibration
from .experiments import plan_jobs
from .progress import format_seconds, parse_progress
from .results_schema import read_provenance

__all__ = ["ExperimentStatus", "StudyStatus", "study_status"]


@dataclass
class ExperimentStatus:
    experiment: str
    jobs: int = 0
    jobs_done: int = 0
    jobs_running: int = 0
    models: int = 0
    models_done: int = 0
    seconds_spent: float = 0.0  # summed wall time of the finished jobs
    seconds_left: float = 0.0  # estimated one-core seconds still to compute
    measured: bool = True  # False when part of seconds_left is the cost model's projection


@dataclass
class StudyStatus:
    config: str
    results: str
    cores: int
    experiments: list[ExperimentStatus] = field(default_factory=list)

    def total(self, name: str):
        return sum(getattr(e, name) for e in self.experiments)

    @property
    def wall_left(self) -> float:
        return self.total("seconds_left") / max(1, self.cores)

    def as_dict(self) -> dict:
        return {"config": self.config, "results": self.results, "cores": self.cores,
                "experiments": [asdict(e) for e in self.experiments],
                "total": {k: self.total(k) for k in ("jobs", "jobs_done", "jobs_running", "models", "models_done",
                                                     "seconds_spent", "seconds_left")},
                "wall_seconds_left": self.wall_left}

    def text(self) -> str:
        lines = [f"study {self.config} (results in {self.results})"]
        for e in self.experiments:
            rough = "" if e.measured else " (partly projected by the cost model)"
            lines.append(f"  {e.experiment}: jobs {e.jobs_done}/{e.jobs} done, {e.jobs_running} running; "
                         f"models {e.models_done}/{e.models}; spent {format_seconds(e.seconds_spent)}; "
                         f"left ~{format_seconds(e.seconds_left)} of one core{rough}")
        done, total = self.total("models_done"), self.total("models")
        lines.append(f"  total: {self.total('jobs_done')}/{self.total('jobs')} jobs, {done}/{total} models "
                     f"({100.0 * done / max(1, total):.0f}%), spent {format_seconds(self.total('seconds_spent'))}, "
                     f"left ~{format_seconds(self.wall_left)} on {self.cores} cores")
        return "\n".join(lines)


def _under(results: Path, path: str) -> Path:
    """A planner path ("results/...") inside the given results folder."""
    return results / Path(path).relative_to("results")


def study_status(config: str | os.PathLike, results: str | os.PathLike = "results", cores: int | None = None,
                 schema: str | os.PathLike | None = None) -> StudyStatus:
    """How far a study is: jobs and models done per experiment, time spent, and time left on ``cores`` cores
    (default: all), from its results folder (what `wsvm-span status` prints).
    """
    cfg = load_config(config, schema=schema)
    results = Path(results)
    status = StudyStatus(str(config), str(results), cores or os.cpu_count() or 1)
    per_exp: dict[str, ExperimentStatus] = {}
    rate: dict[tuple[str, str], list[float]] = {}  # (experiment, dataset) -> [seconds, models] measured
    pending: list[tuple[object, int]] = []  # (job, models still to compute)
    for job in plan_jobs(cfg):
        e = per_exp.setdefault(job.experiment, ExperimentStatus(job.experiment))
        e.jobs += 1
        e.models += job.n_models
        measured = rate.setdefault((job.experiment, job.dataset), [0.0, 0.0])
        chunk = _under(results, job.path)
        record = read_provenance(chunk) if chunk.is_file() else None
        if record and record.get("spec_hash") == job.spec_hash:
            e.jobs_done += 1
            e.models_done += job.n_models
            e.seconds_spent += float(record.get("wall_s", 0.0))
            measured[0] += float(record.get("compute_s", record.get("wall_s", 0.0)))
            measured[1] += job.n_models
            continue
        log_file = _under(results, job.log_path)
        progress = parse_progress(log_file.read_text(errors="replace")) if log_file.is_file() else None
        done = 0
        if progress and progress[1] == job.n_models:
            done = progress[0]
            e.jobs_running += 1
            e.models_done += done
        pending.append((job, job.n_models - done))
    try:
        calibration = load_calibration()
    except FileNotFoundError:
        calibration = None
    for job, left in pending:
        e = per_exp[job.experiment]
        seconds, models = rate[(job.experiment, job.dataset)]
        if models:
            e.seconds_left += left * seconds / models
        else:
            planned = job_seconds(job, calibration) if calibration else estimated_seconds(job)
            e.seconds_left += planned * left / max(1, job.n_models)
            e.measured = False
    status.experiments = list(per_exp.values())
    return status
