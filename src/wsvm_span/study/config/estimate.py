"""A cost model calibrated on measured runs: projected CPU time, wall time and peak memory of a config.

Calibration (:func:`calibrate`) reads finished results (chunk files: per-model timings in the rows,
per-job load/setup/tracking times in the provenance) and records, per component, the per-model
seconds of every measured data set and a power law ``a * l^b`` fitted over them (least squares in
log-log), plus the per-job and per-model overheads: MLflow's, from the jobs' own accounts, and the job
process's start (interpreter, imports), from Snakemake's benchmark file of each job where there is one.

The projection (:func:`estimate`) prices every planned job: a data set that was measured by its own
means; one whose family was measured at other training sizes (``ringnorm_d20_l16384`` from
``ringnorm_d20_l<l>``) by a parabola in log-log through the family's largest measured sizes; any other by the
power laws of all measured data sets, from its training size alone. The calibration shipped with the
package (``cost_calibration.json``) is written by ``wsvm-span calibrate-cost`` from real runs, and
names the machine they were measured on.
"""

from __future__ import annotations

import fnmatch
import json
import math
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from .cost import approx_sizes, memory_mb

__all__ = ["CALIBRATION_FILE", "Calibration", "Estimate", "benchmark_wall_s", "calibrate", "estimate", "family",
           "job_seconds", "job_training_seconds", "load_calibration", "process_start_seconds"]

#: the calibration shipped with the package
CALIBRATION_FILE = Path(__file__).with_name("cost_calibration.json")
#: per-model cost components (row columns, seconds); the span bound's time includes the span-rule's
PER_MODEL = ("t_train", "t_span_bound", "t_cv")
#: the exact-LOO component, paid only by the models that have it
PER_LOO_MODEL = "t_loo"
#: the components that are the SVM solver's own work: training each model and its CV folds. Their sum is the
#: floor of a projection: no saving on process starts, tracking or kernels takes a run below it
TRAINING = ("t_train", "t_cv")
#: the per-job and per-model tracking costs are told apart only from jobs whose sizes differ this much
CHUNK_SPREAD = 3.0
#: a family's law is fitted over its this many largest measured training sizes, as a parabola in log-log:
#: the cost's exponent grows with l (LIBSVM's iterations and SV count, CV's fold trainings), and a straight
#: line through the largest sizes underestimated the next doubling by 6-41% on Experiment 6's ringnorm
#: families (the parabola: -7% to +25%; benchmarks/cost_model_error.py, issue 8). It overshoots where the
#: grid's rows grow at different rates (about 2.5x at l = 16384 by the one job measured there; docs/study.md)
FAMILY_POINTS = 3
_SIZE_SUFFIX = re.compile(r"_l\d+$")


def family(dataset: str) -> str | None:
    """The family of a data set drawn at several training sizes (``ringnorm_d20`` of ``ringnorm_d20_l512``),
    or None for a data set with one size."""
    return _SIZE_SUFFIX.sub("", dataset) if _SIZE_SUFFIX.search(dataset) else None


@dataclass
class Calibration:
    """Per-data-set means and power laws per component, and the overheads."""

    datasets: dict[str, dict[str, float]]  # dataset -> {"l": l, component: mean seconds per model}
    laws: dict[str, tuple[float, float]]  # component -> (a, b) of a * l^b
    setup_law: tuple[float, float]  # per-job load + setup (kernels, D, folds) seconds: a * l^b
    job_overhead_s: float  # per-job tracking (MLflow import, store access) seconds
    model_overhead_s: float  # per-model tracking seconds (one child run)
    source: dict[str, Any] = field(default_factory=dict)  # where and on what machine it was measured
    process_start_s: float = 0.0  # per-job seconds before the job's own clock starts (interpreter, imports)

    def as_dict(self) -> dict:
        return {"datasets": self.datasets, "laws": {k: list(v) for k, v in self.laws.items()},
                "setup_law": list(self.setup_law), "job_overhead_s": self.job_overhead_s,
                "model_overhead_s": self.model_overhead_s, "process_start_s": self.process_start_s,
                "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Calibration":
        return cls(datasets=dict(d["datasets"]), laws={k: tuple(v) for k, v in d["laws"].items()},
                   setup_law=tuple(d["setup_law"]), job_overhead_s=float(d["job_overhead_s"]),
                   model_overhead_s=float(d["model_overhead_s"]), source=dict(d.get("source", {})),
                   process_start_s=float(d.get("process_start_s", 0.0)))

    def per_model(self, dataset: str, component: str) -> float:
        measured = self.datasets.get(dataset, {}).get(component)
        if measured is not None and math.isfinite(measured):
            return float(measured)
        l = approx_sizes(dataset)[0]
        siblings = self.family_points(dataset, component)
        if len(siblings) >= 2:
            return _family_law(*map(np.array, zip(*siblings[-FAMILY_POINTS:])), l)
        if siblings:  # one sibling: its value, scaled by the all-data-set law's exponent
            (l_sib, t_sib), b = siblings[0], self.laws[component][1]
            return t_sib * (l / l_sib) ** b
        a, b = self.laws[component]
        return a * l ** b

    def family_points(self, dataset: str, component: str) -> list[tuple[float, float]]:
        """(l, seconds per model) of the measured data sets of ``dataset``'s family, by size."""
        fam = family(dataset)
        if fam is None:
            return []
        pts = [(float(e["l"]), float(e[component])) for name, e in self.datasets.items()
               if family(name) == fam and name != dataset and math.isfinite(e.get(component, math.nan))
               and e[component] > 0]
        return sorted(pts)

    def basis(self, dataset: str) -> str:
        """How a data set is priced: "measured", "family" (its family at other sizes) or "size" (the
        all-data-set laws)."""
        if dataset in self.datasets:
            return "measured"
        return "family" if self.family_points(dataset, "t_train") else "size"


def _family_law(ls: np.ndarray, ts: np.ndarray, l: float) -> float:
    """t at l from a family's (ls, ts): a parabola in log-log through three or more sizes when it curves
    upwards (a rising exponent), else a straight line (a power law)."""
    x, y = np.log(ls), np.log(ts)
    if ls.size >= 3:
        curve = np.polyfit(x, y, 2)
        if curve[0] > 0:
            return float(np.exp(np.polyval(curve, np.log(l))))
    a, b = _power_law(ls, ts)
    return a * l ** b


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


def _slot_dataset(provenance: Mapping[str, Any]) -> str | None:
    slot = str(provenance.get("slot", ""))
    return slot.split("/")[1] if slot.count("/") >= 2 else None


def benchmark_wall_s(tsv: Path) -> float | None:
    """Wall seconds of a job by Snakemake's benchmark file (column ``s``; its last line: the last attempt),
    or None where there is no readable file."""
    try:
        header, *lines = tsv.read_text(encoding="utf-8").splitlines()
        return float(lines[-1].split("\t")[header.split("\t").index("s")])
    except (OSError, ValueError, IndexError):
        return None


def process_start_seconds(rows_file: str | Path, provenance: Iterable[Mapping[str, Any]]) -> list[float]:
    """Per job of a rows file: the process's wall seconds by Snakemake's benchmark file minus the job's own
    ``wall_s`` (the interpreter's start, the imports, argument parsing), for the jobs that have one."""
    from ..experiments import benchmark_path

    workdir = Path(rows_file).resolve().parents[2]  # <workdir>/results/<experiment>/rows.parquet
    out = []
    for p in provenance:
        bench, wall = benchmark_path(p.get("file", "")), p.get("wall_s")
        total = benchmark_wall_s(workdir / bench) if bench and wall is not None else None
        if total is not None:
            out.append(max(0.0, total - float(wall)))
    return out


def calibrate(rows_files: Iterable[str | Path], exclude: Iterable[str] = ()) -> Calibration:
    """A calibration from finished results (``results/<experiment>/rows.parquet`` files), without the data
    sets that match a pattern of ``exclude`` (shell-style, e.g. ``ringnorm_*_l4096``: a hold-out check)."""
    from wsvm_span.utils.environment import machine_info

    from ..collect import rows_provenance
    from ..results_schema import read_rows

    rows_files, exclude = [str(p) for p in rows_files], list(exclude)

    def kept(dataset) -> bool:
        return not any(fnmatch.fnmatchcase(str(dataset), pat) for pat in exclude)

    df = read_rows(rows_files)
    df = df[df["dataset"].map(kept)]
    if df.empty:
        raise ValueError(f"no rows to calibrate the cost model on in {rows_files}"
                         + (f" without the data sets matching {exclude}" if exclude else ""))
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
    prov_by_file = {f: [p for p in rows_provenance([f]) if kept(_slot_dataset(p))] for f in rows_files}
    prov = [p for ps in prov_by_file.values() for p in ps]
    sizes = {str(ds): float(sub["l"].iloc[0]) for ds, sub in df.groupby("dataset")}
    setup_l, setup_t, job_track, model_track = [], [], [], []
    for p in prov:
        ds = _slot_dataset(p)
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
    starts = [s for f, ps in prov_by_file.items() for s in process_start_seconds(f, ps)]
    machines = sorted({json.dumps(p.get("machine", {}), sort_keys=True) for p in prov})
    return Calibration(
        datasets=datasets, laws=laws, setup_law=_power_law(np.array(setup_l), np.array(setup_t)),
        job_overhead_s=max(0.0, float(per_job)), model_overhead_s=max(0.0, float(per_model)),
        process_start_s=float(np.median(starts)) if starts else 0.0,
        source={"rows": rows_files, "excluded": exclude, "jobs": len(prov), "models": int(len(df)),
                "machines": [json.loads(m) for m in machines] or [machine_info()],
                "python": platform.python_version()},
    )


def load_calibration(path: str | Path | None = None) -> Calibration:
    """The cost calibration at ``path`` (default: the one shipped with the package,
    ``cost_calibration.json``); FileNotFoundError when there is none.
    """
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
    family_datasets: list[str]  # priced from their family measured at other training sizes
    extrapolated_datasets: list[str]  # priced from the training size alone
    # of per_experiment_cpu_s: the TRAINING components, for the experiments whose jobs are priced per model
    per_experiment_training_cpu_s: dict[str, float] = field(default_factory=dict)

    @property
    def training_cpu_s(self) -> float:
        return sum(self.per_experiment_training_cpu_s.values())

    @property
    def wall_s(self) -> float:
        """Projected wall time on ``cores`` cores: the CPU time shared by the cores, and never below the
        longest single job (a job runs on one core)."""
        return max(self.cpu_s / max(1, self.cores), self.longest_job_s)

    def as_dict(self) -> dict:
        return {"cpu_hours": self.cpu_s / 3600, "wall_hours": self.wall_s / 3600, "cores": self.cores,
                "training_cpu_hours": self.training_cpu_s / 3600,
                "per_experiment_training_cpu_hours": {k: v / 3600 for k, v in
                                                      self.per_experiment_training_cpu_s.items()},
                "per_experiment_cpu_hours": {k: v / 3600 for k, v in self.per_experiment_cpu_s.items()},
                "longest_job_hours": self.longest_job_s / 3600, "peak_job_memory_mb": self.peak_job_memory_mb,
                "peak_memory_mb": self.peak_memory_mb, "jobs": self.jobs,
                "measured_datasets": self.measured_datasets, "family_datasets": self.family_datasets,
                "extrapolated_datasets": self.extrapolated_datasets}


def _components(job) -> tuple[str, ...]:
    """The per-model components a job pays: K-fold CV only where it runs one (a ``cv_folds`` field)."""
    return PER_MODEL if getattr(job, "cv_folds", None) else tuple(c for c in PER_MODEL if c != "t_cv")


def job_seconds(job, cal: Calibration) -> float:
    """Projected one-core seconds of one job (any kind with ``n_models`` and ``loo_models``; a job kind with
    its own ``calibrated_seconds(job, cal)`` prices its jobs itself), its process's start included."""
    from ..experiments import kind_of

    own = getattr(kind_of(job), "calibrated_seconds", None)
    if own is not None:
        return float(own(job, cal)) + cal.process_start_s
    l, _ = approx_sizes(job.dataset)
    a, b = cal.setup_law
    per_model = sum(cal.per_model(job.dataset, c) for c in _components(job)) + cal.model_overhead_s
    return (job.n_models * per_model + len(job.loo_models) * cal.per_model(job.dataset, PER_LOO_MODEL)
            + a * l ** b + cal.job_overhead_s + cal.process_start_s)


def job_training_seconds(job, cal: Calibration) -> float:
    """Of :func:`job_seconds`, the TRAINING components (the models' and their CV folds' training); 0 for a
    job whose kind prices its jobs itself (no per-model split of its time)."""
    from ..experiments import kind_of

    if getattr(kind_of(job), "calibrated_seconds", None) is not None:
        return 0.0
    return job.n_models * sum(cal.per_model(job.dataset, c) for c in _components(job) if c in TRAINING)


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
    """Project the CPU-hours, wall time on ``cores`` cores, longest job and peak memory of ``jobs`` from the
    cost calibration ``cal`` (what `check-config --estimate` prints).
    """
    jobs = list(jobs)
    per_exp: dict[str, float] = {}
    training: dict[str, float] = {}
    times, mems = [], []
    for job in jobs:
        t = job_seconds(job, cal)
        per_exp[job.experiment] = per_exp.get(job.experiment, 0.0) + t
        if (t_fit := job_training_seconds(job, cal)) > 0:
            training[job.experiment] = training.get(job.experiment, 0.0) + t_fit
        times.append(t)
        mems.append(job_memory_mb(job))
    basis: dict[str, list[str]] = {"measured": [], "family": [], "size": []}
    for name in sorted({j.dataset for j in jobs}):
        basis[cal.basis(name)].append(name)
    return Estimate(cpu_s=float(sum(times)), per_experiment_cpu_s=per_exp, longest_job_s=max(times, default=0.0),
                    per_experiment_training_cpu_s=training,
                    peak_job_memory_mb=max(mems, default=0.0),
                    peak_memory_mb=float(sum(sorted(mems, reverse=True)[:max(1, cores)])), cores=cores,
                    jobs=len(jobs), measured_datasets=basis["measured"], family_datasets=basis["family"],
                    extrapolated_datasets=basis["size"])
