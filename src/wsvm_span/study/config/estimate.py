"""A cost model calibrated on measured runs: projected CPU time, wall time and peak memory of a config.

Calibration (:func:`calibrate`) reads finished results (chunk files: per-model timings in the rows,
per-job load/setup/tracking times in the provenance) and records, per component, the per-model
seconds of every measured data set and a power law ``a * l^b`` fitted over them (least squares in
log-log), plus the per-job and per-model overheads: MLflow's, from the jobs' own accounts, and the job
process's start (interpreter, imports), from Snakemake's benchmark file of each job where there is one.

The projection (:func:`estimate`) prices every planned job: a data set that was measured by its own
means; one whose family was measured at other training sizes (``ringnorm_d20_l16384`` from
``ringnorm_d20_l<l>``) by a parabola in log-log through the family's largest measured sizes; any other by the
power laws of all measured data sets, from its training size alone. A job kind that prices its own jobs
(``KindCapabilities.prices_own_jobs``: Experiment 8's per-method laws, Experiment 9's per-engine laws) uses its
laws and the calibration's overheads; its data sets are listed apart, with the engine its laws were measured with
(``priced_engine``). The calibration shipped with the
package (``cost_calibration.json``) is written by ``wsvm-span calibrate-cost`` from real runs, and
names the machine they were measured on.

Engines: the per-model seconds are those of the engine the calibrated runs used (``Calibration.engine``,
LIBSVM). Another engine is priced by :class:`EngineRatios`: per data set, its seconds over that engine's for
the solver's components (:data:`SOLVER`: training, CV, exact LOO), measured on sample rows with the two
engines alternating model by model in one process (``benchmarks/bench_smo.py ratios``). A ratio measured in
one run is robust where absolute seconds are not: on a shared machine the load inflates both engines alike.
A job is priced by its own engine (``svm.engine`` of the config) where the calibration has ratios for it and
its job kind, else as the calibration's engine (and :class:`Estimate` says so).

Measured ratios per (engine, job kind) (:class:`KindRatio`): whatever prices a job (the calibration's seconds,
an engine's ratios, its kind's own laws) prices it from other runs, other machines or other kinds; the committed
parts of ``reproduced/`` record what their jobs took. :func:`fit_kind_ratios` sets, per (engine, kind), the
ratio of their measured seconds to the projection's, and the projection of a job (but its process's start, which
the jobs' clocks do not see) is multiplied by its (engine, kind)'s ratio; :func:`committed_error` is the
projection's error on those parts per experiment (``wsvm-span calibrate-cost --parts`` prints it before and
after).
"""

from __future__ import annotations

import fnmatch
import json
import platform
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

# the calibration (below the job kinds, which price with it), re-exported: this module explains the cost model
from ..calibration import (CALIBRATION_FILE, CHUNK_SPREAD, DEFAULT_ENGINE, PER_LOO_MODEL, PER_MODEL,  # noqa: F401
                           SOLVER, TRAINING, Calibration, EngineRatios, KindRatio, _power_law, engine_ratios, family,
                           load_calibration)
from .. import catalog
from ..experiments import benchmark_path, kind_of, log_path
from ..cost import approx_sizes

__all__ = ["CALIBRATION_FILE", "Calibration", "EngineRatios", "Estimate", "KindRatio", "benchmark_wall_s", "calibrate",
           "committed_error", "engine_ratios", "estimate", "family", "fit_kind_ratios", "job_cost", "job_seconds",
           "job_training_seconds", "load_calibration", "process_start_seconds"]


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
    ``wall_s`` (the interpreter's start, the imports, argument parsing), for the jobs that have one and whose
    last attempt computed its rows (one that put back an earlier attempt's rows, ``study.attempts``, was
    timed by the benchmark for that alone)."""
    from ..attempts import JobFiles, kept_from

    workdir = Path(rows_file).resolve().parents[2]  # <workdir>/results/<experiment>/rows.parquet
    out = []
    for p in provenance:
        bench, wall, log = benchmark_path(p.get("file", "")), p.get("wall_s"), log_path(p.get("file", ""))
        if log and kept_from(JobFiles(workdir / log)) is not None:
            continue
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
    engine = str(df["engine"].mode().iloc[0]) if "engine" in df and df["engine"].notna().any() else DEFAULT_ENGINE
    return Calibration(
        datasets=datasets, laws=laws, setup_law=_power_law(np.array(setup_l), np.array(setup_t)),
        job_overhead_s=max(0.0, float(per_job)), model_overhead_s=max(0.0, float(per_model)),
        process_start_s=float(np.median(starts)) if starts else 0.0,
        source={"rows": rows_files, "excluded": exclude, "jobs": len(prov), "models": int(len(df)),
                "machines": [json.loads(m) for m in machines] or [machine_info()],
                "python": platform.python_version()},
        engine=engine,
    )


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
    # priced by their job kind's own laws (a kind that prices its own jobs), not by the calibration's data sets
    own_law_datasets: list[str] = field(default_factory=list)
    # of per_experiment_cpu_s: the TRAINING components, for the experiments whose jobs are priced per model
    per_experiment_training_cpu_s: dict[str, float] = field(default_factory=dict)
    # per experiment, the engine its jobs are trained by ("engine") and the engine whose seconds price them
    # ("priced_as"), "by" the calibration's own seconds or by that engine's ratios to them
    engines: dict[str, dict[str, str]] = field(default_factory=dict)
    # the data sets priced by an engine's ratios: "measured", "family", "size" (as for the seconds)
    ratio_basis: dict[str, list[str]] = field(default_factory=dict)
    # cpu_s by part of the jobs' cost (PARTS): where the time goes, and so which lever is next
    per_part_cpu_s: dict[str, float] = field(default_factory=dict)
    # the measured ratios the jobs were priced with ("engine/kind" -> ratio; KindRatio)
    kind_ratios: dict[str, float] = field(default_factory=dict)

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
                "extrapolated_datasets": self.extrapolated_datasets, "own_law_datasets": self.own_law_datasets,
                "engines": self.engines,
                "ratio_basis": self.ratio_basis, "kind_ratios": self.kind_ratios,
                "per_part_cpu_hours": {k: v / 3600 for k, v in self.per_part_cpu_s.items()}}


def _components(job) -> tuple[str, ...]:
    """The per-model components a job pays: K-fold CV only where it runs one (a ``cv_folds`` field)."""
    return PER_MODEL if getattr(job, "cv_folds", None) else tuple(c for c in PER_MODEL if c != "t_cv")


#: the parts of a job's projected seconds (:func:`job_cost`): the per-model components, exact LOO, MLflow's
#: cost per child run and per job, the job's set-up (data, kernels, D, folds), its process's start, and
#: ``own_pricing`` for a kind that prices its jobs itself (no split of its time)
PARTS = (*PER_MODEL, PER_LOO_MODEL, "tracking", "setup", "process_start", "own_pricing")


def job_cost(job, cal: Calibration, engine: str | None = None) -> dict[str, float]:
    """Projected one-core seconds of one job by part (:data:`PARTS`): per model (``n_models``, ``loo_models``)
    from the calibration, or, for a kind that declares ``prices_own_jobs``, its ``calibrated_seconds(job,
    cal)``; trained by its own engine, or by ``engine`` where given (:meth:`Calibration.pricing`); every part
    but the process's start times the measured ratio of the job's engine and kind (:meth:`Calibration.kind_ratio`)."""
    kind = kind_of(job)
    if kind.CAPABILITIES.prices_own_jobs:
        cost = {"own_pricing": float(kind.calibrated_seconds(job, cal))}
    else:
        l, _ = approx_sizes(job.dataset)
        a, b = cal.setup_law
        priced_as = cal.pricing(job, engine)
        cost = {c: job.n_models * cal.per_model(job.dataset, c, priced_as, job.kind) for c in _components(job)}
        cost[PER_LOO_MODEL] = len(job.loo_models) * cal.per_model(job.dataset, PER_LOO_MODEL, priced_as, job.kind)
        cost.update(tracking=job.n_models * cal.model_overhead_s + cal.job_overhead_s, setup=a * l ** b)
    ratio = cal.kind_ratio(job, engine)
    return {**{part: seconds * ratio for part, seconds in cost.items()}, "process_start": cal.process_start_s}


def job_seconds(job, cal: Calibration, engine: str | None = None) -> float:
    """Projected one-core seconds of one job, its process's start included: the sum of :func:`job_cost`."""
    return float(sum(job_cost(job, cal, engine).values()))


def job_training_seconds(job, cal: Calibration, engine: str | None = None) -> float:
    """Of :func:`job_seconds`, the TRAINING components (the models' and their CV folds' training); 0 for a
    job whose kind prices its jobs itself (no per-model split of its time)."""
    cost = job_cost(job, cal, engine)
    return float(sum(cost.get(c, 0.0) for c in TRAINING))


def job_memory_mb(job) -> float:
    """Peak memory of one job (MB): its kind's ``job_memory_mb(job)`` (the grid job's kernels of the data
    set's sizes for most kinds; its own for a kind whose data are not in the data registry, or one that never
    forms the l x l kernel of its large l, as Experiment 9)."""
    return float(kind_of(job).job_memory_mb(job))


def estimate(jobs: Iterable, cal: Calibration, cores: int = 2, engine: str | None = None) -> Estimate:
    """Project the CPU-hours, wall time on ``cores`` cores, longest job and peak memory of ``jobs`` from the
    cost calibration ``cal`` (what `check-config --estimate` prints); every job trained by its own engine (the
    config's ``svm.engine``, or its experiment's for the job's data set), or by ``engine`` where given.
    """
    from wsvm_span.engines import get_engine

    jobs = list(jobs)
    per_exp: dict[str, float] = {}
    training: dict[str, float] = {}
    engines: dict[tuple[str, str], dict[str, str]] = {}  # (experiment, engine that trains its jobs) -> pricing
    by_ratios: set[tuple[str, str, str]] = set()
    kind_ratios: dict[str, float] = {}
    parts = dict.fromkeys(PARTS, 0.0)
    times, mems = [], []
    own_laws: set[str] = set()
    for job in jobs:
        cost = job_cost(job, cal, engine)
        for part, seconds in cost.items():
            parts[part] += seconds
        t = float(sum(cost.values()))
        per_exp[job.experiment] = per_exp.get(job.experiment, 0.0) + t
        if "own_pricing" not in cost:
            training[job.experiment] = training.get(job.experiment, 0.0) + sum(cost.get(c, 0.0) for c in TRAINING)
        times.append(t)
        mems.append(job_memory_mb(job))
        if cal.kind_ratio(job, engine) != 1.0:
            kind_ratios[f"{cal.trained_by(job, engine)}/{job.kind}"] = cal.kind_ratio(job, engine)
        caps = kind_of(job).CAPABILITIES
        if caps.prices_own_jobs:
            own_laws.add(job.dataset)
            if caps.trains_with_config_engine:
                trained_by = get_engine(engine or job.engine).name
                engines.setdefault((job.experiment, trained_by), {"engine": trained_by,
                                                                  "priced_as": caps.priced_engine or "",
                                                                  "by": "own laws"})
        elif caps.trains_with_config_engine:
            trained_by = get_engine(engine or job.engine).name
            priced_as = cal.pricing(job, engine)
            engines.setdefault((job.experiment, trained_by), {"engine": trained_by, "priced_as": priced_as,
                                                              "by": "calibration" if priced_as == cal.engine
                                                              else "ratios"})
            if priced_as != cal.engine:
                by_ratios.add((priced_as, job.kind, job.dataset))
    # an experiment whose data sets several engines train (experiments.<exp>.engine) is named once per engine
    per_exp_engines = Counter(exp for exp, _ in engines)
    engines_named = {exp if per_exp_engines[exp] == 1 else f"{exp} ({trained_by})": how
                     for (exp, trained_by), how in engines.items()}
    # a data set only an own-pricing kind runs is not priced by the calibration's data sets
    by_calibration = {j.dataset for j in jobs if not kind_of(j).CAPABILITIES.prices_own_jobs}
    basis: dict[str, list[str]] = {"measured": [], "family": [], "size": []}
    for name in sorted(by_calibration):
        basis[cal.basis(name)].append(name)
    ratio_basis: dict[str, list[str]] = {"measured": [], "family": [], "size": []}
    for priced_as, kind, name in sorted(by_ratios):
        ratio_basis[cal.engines[priced_as, kind].basis(name)].append(name)
    return Estimate(cpu_s=float(sum(times)), per_experiment_cpu_s=per_exp, longest_job_s=max(times, default=0.0),
                    per_experiment_training_cpu_s=training,
                    peak_job_memory_mb=max(mems, default=0.0),
                    peak_memory_mb=float(sum(sorted(mems, reverse=True)[:max(1, cores)])), cores=cores,
                    jobs=len(jobs), measured_datasets=basis["measured"], family_datasets=basis["family"],
                    extrapolated_datasets=basis["size"], own_law_datasets=sorted(own_laws - by_calibration),
                    engines=engines_named,
                    ratio_basis=ratio_basis if by_ratios else {}, per_part_cpu_s=parts,
                    kind_ratios=dict(sorted(kind_ratios.items())))


def _own_seconds(job, cal: Calibration) -> float:
    """Projected seconds of a job by its own clock, as the committed parts measured it: :func:`job_cost` but the
    process's start."""
    return float(sum(v for part, v in job_cost(job, cal).items() if part != "process_start"))


def fit_kind_ratios(cal: Calibration, measured: Iterable[tuple[Any, float, str]]) -> list[KindRatio]:
    """Per (engine, job kind) of the measured jobs ((job, its wall seconds, the committed part it is of):
    ``verify.committed_wall_seconds``), the ratio of their measured seconds to their projection by ``cal``
    without measured ratios (:class:`KindRatio`)."""
    base = cal.with_kind_ratios([])
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for job, wall_s, part in measured:
        g = groups.setdefault((base.trained_by(job), job.kind), {"jobs": 0, "measured_s": 0.0, "projected_s": 0.0,
                                                                  "parts": set()})
        g["jobs"] += 1
        g["measured_s"] += wall_s
        g["projected_s"] += _own_seconds(job, base)
        g["parts"].add(part)
    return [KindRatio(engine=engine, kind=kind, ratio=g["measured_s"] / g["projected_s"], jobs=g["jobs"],
                      measured_s=g["measured_s"], projected_s=g["projected_s"], parts=sorted(g["parts"]))
            for (engine, kind), g in sorted(groups.items())]


def committed_error(cal: Calibration, measured: Iterable[tuple[Any, float, str]]) -> dict[str, dict[str, float]]:
    """Per experiment of the measured jobs (as :func:`fit_kind_ratios` takes them): their number, measured and
    projected seconds (the jobs' own clocks) and the projection's error, projected / measured - 1."""
    out: dict[str, dict[str, float]] = {}
    for job, wall_s, _ in measured:
        e = out.setdefault(job.experiment, {"jobs": 0, "measured_s": 0.0, "projected_s": 0.0})
        e["jobs"] += 1
        e["measured_s"] += wall_s
        e["projected_s"] += _own_seconds(job, cal)
    for e in out.values():
        e["error"] = e["projected_s"] / e["measured_s"] - 1
    order = list(catalog.EXPERIMENTS)
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0])))
