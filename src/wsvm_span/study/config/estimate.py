"""A cost model calibrated on measured runs: projected CPU time, wall time and peak memory of a config.

Calibration (:func:`calibrate`) reads finished results (chunk files: per-model timings in the rows,
per-job load/setup/tracking times in the provenance) and records, per component, the per-model
seconds of every measured data set and a power law ``a * l^b`` fitted over them (least squares in
log-log), plus the per-job and per-model overheads. The projection (:func:`estimate`) prices every
planned job: a data set that was measured uses its own means, any other the power laws of its
training size. The calibration shipped with the package (``cost_calibration.json``) is written by
``wsvm-span calibrate-cost`` from a real run, and names the machine it was measured on.
"""

from __future__ import annotations

import json
import math
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from .cost import approx_sizes, memory_mb

__all__ = ["CALIBRATION_FILE", "Calibration", "Estimate", "calibrate", "estimate", "load_calibration"]

#: the calibration shipped with the package
CALIBRATION_FILE = Path(__file__).with_name("cost_calibration.json")
#: per-model cost components (row columns, seconds); the span bound's time includes the span-rule's
PER_MODEL = ("t_train", "t_span_bound", "t_cv")
#: the exact-LOO component, paid only by the models that have it
PER_LOO_MODEL = "t_loo"
#: the per-job and per-model tracking costs are told apart only from jobs whose sizes differ this much
CHUNK_SPREAD = 3.0


@dataclass
class Calibration:
    """Per-data-set means and power laws per component, and the overheads."""

    datasets: dict[str, dict[str, float]]  # dataset -> {"l": l, component: mean seconds per model}
    laws: dict[str, tuple[float, float]]  # component -> (a, b) of a * l^b
    setup_law: tuple[float, float]  # per-job load + setup (kernels, D, folds) seconds: a * l^b
    job_overhead_s: float  # per-job tracking (MLflow import, store access) seconds
    model_overhead_s: float  # per-model tracking seconds (one child run)
    source: dict[str, Any] = field(default_factory=dict)  # where and on what machine it was measured

    def as_dict(self) -> dict:
        return {"datasets": self.datasets, "laws": {k: list(v) for k, v in self.laws.items()},
                "setup_law": list(self.setup_law), "job_overhead_s": self.job_overhead_s,
                "model_overhead_s": self.model_overhead_s, "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Calibration":
        return cls(datasets=dict(d["datasets"]), laws={k: tuple(v) for k, v in d["laws"].items()},
                   setup_law=tuple(d["setup_law"]), job_overhead_s=float(d["job_overhead_s"]),
                   model_overhead_s=float(d["model_overhead_s"]), source=dict(d.get("source", {})))

    def per_model(self, dataset: str, component: str) -> float:
        measured = self.datasets.get(dataset, {}).get(component)
        if measured is not None and math.isfinite(measured):
            return float(measured)
        a, b = self.laws[component]
        return a * approx_sizes(dataset)[0] ** b


def _power_law(l: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """a, b of t = a l^b by least squares in log-log (b = 2, through the mean, with one size only)."""
    ok = np.isfinite(t) & (t > 0)
    l, t = l[ok], t[ok]
    if l.size == 0:
        return 0.0, 0.0
    if np.unique(l).size < 2:
        return float(np.exp(np.mean(np.log(t) - 2 * np.log(l)))), 2.0
    b, log_a = np.polyfit(np.log(l), np.log(t), 1)
    return float(np.exp(log_a)), float(b)


def calibrate(rows_files: Iterable[str | Path]) -> Calibration:
    """A calibration from finished results (``results/<experiment>/rows.parquet`` files)."""
    from wsvm_span.utils.environment import machine_info

    from ..collect import rows_provenance
    from ..results_schema import read_rows

    rows_files = [str(p) for p in rows_files]
    df = read_rows(rows_files)
    if df.empty:
        raise ValueError("no rows to calibrate the cost model on")
    datasets: dict[str, dict[str, float]] = {}
    for ds, sub in df.groupby("dataset", sort=False):
        entry = {"l": float(sub["l"].iloc[0])}
        for c in (*PER_MODEL, PER_LOO_MODEL):
            v = sub[c].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            entry[c] = float(v.mean()) if v.size else float("nan")
        datasets[str(ds)] = entry
    ls = np.array([d["l"] for d in datasets.values()])
    laws = {c: _power_law(ls, np.array([d[c] for d in datasets.values()])) for c in (*PER_MODEL, PER_LOO_MODEL)}
    prov = rows_provenance(rows_files)
    sizes = {str(ds): float(sub["l"].iloc[0]) for ds, sub in df.groupby("dataset")}
    setup_l, setup_t, job_track, model_track = [], [], [], []
    for p in prov:
        slot = str(p.get("slot", ""))
        ds = slot.split("/")[1] if slot.count("/") >= 2 else None
        if ds in sizes and "setup_s" in p:
            setup_l.append(sizes[ds])
            setup_t.append(float(p.get("load_s", 0.0)) + float(p["setup_s"]))
        if p.get("tracking_s") and p.get("n_models"):
            job_track.append(float(p["tracking_s"]))
            model_track.append(float(p["n_models"]))
    # tracking: a fixed cost per job plus a cost per child run, by least squares over the jobs when their
    # sizes differ enough to tell the two apart; else all of it per child run (the median share)
    sizes = np.asarray(model_track, dtype=float)
    if len(job_track) >= 3 and sizes.max() >= CHUNK_SPREAD * sizes.min():
        per_model, per_job = np.polyfit(sizes, job_track, 1)
    else:
        per_model = float(np.median(np.asarray(job_track) / sizes)) if job_track else 0.0
        per_job = 0.0
    machines = sorted({json.dumps(p.get("machine", {}), sort_keys=True) for p in prov})
    return Calibration(
        datasets=datasets, laws=laws, setup_law=_power_law(np.array(setup_l), np.array(setup_t)),
        job_overhead_s=max(0.0, float(per_job)), model_overhead_s=max(0.0, float(per_model)),
        source={"rows": rows_files, "jobs": len(prov), "models": int(len(df)),
                "machines": [json.loads(m) for m in machines] or [machine_info()],
                "python": platform.python_version()},
    )


def load_calibration(path: str | Path | None = None) -> Calibration:
    path = Path(path) if path else CALIBRATION_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no cost calibration at {path}; write one with `wsvm-span calibrate-cost`")
    return Calibration.from_dict(json.loads(path.read_text(encoding="utf-8")))


@dataclass
class Estimate:
    cpu_s: float
    per_experiment_cpu_s: dict[str, float]
    longest_job_s: float
    peak_job_memory_mb: float
    peak_memory_mb: float  # the ``cores`` largest jobs at once
    cores: int
    jobs: int
    measured_datasets: list[str]
    extrapolated_datasets: list[str]

    @property
    def wall_s(self) -> float:
        """Projected wall time on ``cores`` cores: the CPU time shared by the cores, and never below the
        longest single job (a job runs on one core)."""
        return max(self.cpu_s / max(1, self.cores), self.longest_job_s)

    def as_dict(self) -> dict:
        return {"cpu_hours": self.cpu_s / 3600, "wall_hours": self.wall_s / 3600, "cores": self.cores,
                "per_experiment_cpu_hours": {k: v / 3600 for k, v in self.per_experiment_cpu_s.items()},
                "longest_job_hours": self.longest_job_s / 3600, "peak_job_memory_mb": self.peak_job_memory_mb,
                "peak_memory_mb": self.peak_memory_mb, "jobs": self.jobs,
                "measured_datasets": self.measured_datasets, "extrapolated_datasets": self.extrapolated_datasets}


def _components(job) -> tuple[str, ...]:
    """The per-model components a job pays: K-fold CV only where it runs one (a ``cv_folds`` field)."""
    return PER_MODEL if getattr(job, "cv_folds", None) else tuple(c for c in PER_MODEL if c != "t_cv")


def job_seconds(job, cal: Calibration) -> float:
    """Projected one-core seconds of one job (any kind with ``n_models`` and ``loo_models``; a job kind with
    its own ``calibrated_seconds(job, cal)`` prices its jobs itself)."""
    from ..experiments import kind_of

    own = getattr(kind_of(job), "calibrated_seconds", None)
    if own is not None:
        return float(own(job, cal))
    l, _ = approx_sizes(job.dataset)
    a, b = cal.setup_law
    per_model = sum(cal.per_model(job.dataset, c) for c in _components(job)) + cal.model_overhead_s
    return (job.n_models * per_model + len(job.loo_models) * cal.per_model(job.dataset, PER_LOO_MODEL)
            + a * l ** b + cal.job_overhead_s)


def job_memory_mb(job) -> float:
    """Peak memory of one job (MB): its kind's own ``job_memory_mb(job)`` where it has one (a kind whose data
    are not in the data registry, or one that never forms the l x l kernel of its large l, as Experiment 9),
    else the grid job's kernels from the data set's sizes."""
    from ..experiments import kind_of

    own = getattr(kind_of(job), "job_memory_mb", None)
    if own is not None:
        return float(own(job))
    l, m = approx_sizes(job.dataset)
    return memory_mb(l, m, getattr(job, "cv_folds", None))


def estimate(jobs: Iterable, cal: Calibration, cores: int = 2) -> Estimate:
    jobs = list(jobs)
    per_exp: dict[str, float] = {}
    times, mems = [], []
    for job in jobs:
        t = job_seconds(job, cal)
        per_exp[job.experiment] = per_exp.get(job.experiment, 0.0) + t
        times.append(t)
        mems.append(job_memory_mb(job))
    names = sorted({j.dataset for j in jobs})
    measured = [d for d in names if d in cal.datasets]
    return Estimate(cpu_s=float(sum(times)), per_experiment_cpu_s=per_exp, longest_job_s=max(times, default=0.0),
                    peak_job_memory_mb=max(mems, default=0.0),
                    peak_memory_mb=float(sum(sorted(mems, reverse=True)[:max(1, cores)])), cores=cores,
                    jobs=len(jobs), measured_datasets=measured,
                    extrapolated_datasets=[d for d in names if d not in cal.datasets])
