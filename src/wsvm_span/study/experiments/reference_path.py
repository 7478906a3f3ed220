"""The reference-path job (Experiment 7, solution-path.md "Reference experiment"): the exact solution path
against re-solving at its breakpoints, on the four-Gaussian toy.

A job is one size n: its rows are the data sets (n, seed) with seeds ``seeds[0] .. seeds[0] + replicates - 1``
(the config's first seed), each measured by ``wsvm_span.solution_path.reference.measure_reference_path``
(the function the benchmark ``bench_solution_path.py exp7`` calls too): the cost-weighted path (group D1
from ``d1_start`` to 10, D2 at 10), its events and |M|, its time, the time of the config's engine re-solving
(cold) at every breakpoint or at a seeded sample of ``resolve`` breakpoints scaled to all (``n_resolved`` <
``n_events`` says so), the time of SMO re-solving at every breakpoint hot-started from the previous one at
tolerance ``hot_tol`` (the original study's baseline), the speed-up against each, the largest |f_path - f| of
each re-solver at its breakpoints and of the engine at the end, and whether the path fell back to the engine.
Times are CPU seconds under one thread.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, ClassVar, Mapping

from ..cost import BASE_MEMORY_MB, MEMORY_HEADROOM, STARTUP_SECONDS, TIME_PADDING
from .base import JobIdentity, KindCapabilities, evaluate_models

__all__ = ["DATASET", "JOB", "KIND", "ROWS", "ReferenceJob", "ReferenceProblem", "calibrated_seconds",
           "config_problems", "evaluate", "job_memory_mb", "plan", "prepare", "provenance", "resources",
           "row_params", "run_params"]

log = logging.getLogger(__name__)

#: the kind's name and its row schema (``results_schema.ROW_SCHEMAS``): one row per data set (n, seed)
KIND = "reference_path"
ROWS = "reference_path"
#: priced by :func:`calibrated_seconds` (LIBSVM at the re-solved breakpoints); the path's start trains with
#: the config's svm.engine
CAPABILITIES = KindCapabilities(prices_own_jobs=True)
ROW_IDENTIFIERS: frozenset[str] = frozenset()
#: the second part of the job's paths (the data are drawn, not loaded: no data registry entry)
DATASET = "four_gaussians"
#: the size of the warm-up problem (one-time initialisations are not charged to the first row)
WARM_UP_N = 40
#: l x l float64 arrays alive at once: the kernel, LIBSVM's copy and the tracked decision values of the
#: untimed second run (about one l-vector per event, events ~ l)
KERNEL_COPIES = 3
#: LIBSVM re-solves per data set besides the breakpoints: the start model and the independent end
EXTRA_SOLVES = 2


@dataclass(frozen=True)
class ReferenceJob(JobIdentity):
    """The data sets ``seeds`` of size ``n``.

    resolve : breakpoints re-solved cold by the engine per data set (None: every breakpoint)
    d1_start : the starting weight of group D1 (the path ends at 10)
    engine, tol : the engine's (config ``svm``; the start model and the cold re-solves)
    hot_tol : SMO's tolerance for the hot-started re-solves at every breakpoint
    """

    kind: ClassVar[str] = KIND

    n: int
    seeds: tuple[int, ...]
    resolve: int | None
    d1_start: float
    engine: str
    tol: float
    hot_tol: float

    @property
    def variant(self) -> str:
        return f"n{self.n}"

    @property
    def model_start(self) -> int:
        return 0

    @property
    def model_stop(self) -> int:
        return len(self.seeds)

    @property
    def loo_models(self) -> tuple[int, ...]:
        return ()  # no exact LOO: what the generic cost and status code ask every kind

    @staticmethod
    def normalise(raw: dict) -> dict:
        raw["seeds"] = tuple(int(s) for s in raw["seeds"])
        return raw


# -------------------------------------------------------------------------------------------- planning
def plan(cfg: Mapping[str, Any], experiment: str) -> list[ReferenceJob]:
    """One job per size, in config order (nothing is computed)."""
    spec = cfg["experiments"][experiment]
    first = int(cfg["seeds"][0])
    seeds = tuple(range(first, first + int(spec["replicates"])))
    engine = cfg["svm"]["engine"]
    return [ReferenceJob(experiment=experiment, dataset=DATASET, seed=first, realization=1, chunk=0, n=int(n),
                         seeds=seeds, resolve=spec["resolve"], d1_start=float(spec["d1_start"]),
                         engine=engine, tol=float(cfg["svm"]["tol"]), hot_tol=float(spec["hot_tol"]))
            for n in spec["sizes"]]


def config_problems(cfg: Mapping[str, Any], experiment: str):
    """The checks of the experiment's block that its schema cannot express."""
    from wsvm_span.engines import get_engine

    spec = cfg["experiments"][experiment]
    sizes = spec["sizes"]
    if len(set(sizes)) != len(sizes):
        yield f"experiments.{experiment}.sizes: has duplicates"
    bad = [n for n in sizes if n % 4]
    if bad:
        yield f"experiments.{experiment}.sizes: {bad} are not multiples of 4 (n/4 points per Gaussian)"
    if not 0 < spec["d1_start"] < 10:
        yield (f"experiments.{experiment}.d1_start: must lie in (0, 10) (the path ends at 10 and never starts "
               f"from a zero weight), got {spec['d1_start']}")
    engine = cfg["svm"]["engine"]  # a valid name: the schema's enum
    if get_engine(engine).capabilities.solution_path:
        yield (f"svm.engine: {experiment} compares the path with LIBSVM re-solving; engine {engine!r} is itself "
               "the path's exact re-solve, use a LIBSVM engine (e.g. auto) for this experiment's config")


def job_memory_mb(job: ReferenceJob) -> float:
    """Peak memory of a job (MB): a few n x n arrays with headroom, plus the interpreter."""
    return KERNEL_COPIES * job.n * job.n * 8 / 2**20 * MEMORY_HEADROOM + BASE_MEMORY_MB


def calibrated_seconds(job: ReferenceJob, cal) -> float:
    """A rough one-core run time from the cost calibration's training law at l = n: per data set, LIBSVM
    at the re-solved breakpoints (about n events, measured: 0.8-0.9 n) plus the start and end trainings;
    the path itself is one to two orders of magnitude cheaper and is not counted."""
    a, b = cal.laws["t_train"]
    solves = (job.n if job.resolve is None else min(job.resolve, job.n)) + EXTRA_SOLVES
    return len(job.seeds) * solves * a * job.n**b + cal.job_overhead_s


def resources(cfg: Mapping[str, Any], job: ReferenceJob) -> dict[str, int]:
    """Scheduler hints: ``job_memory_mb``; the run time from the calibrated estimate, padded."""
    from ..calibration import load_calibration

    secs = calibrated_seconds(job, load_calibration()) * TIME_PADDING + STARTUP_SECONDS
    return {
        "mem_mb": max(int(cfg["resources"]["mem_mb_min"]), int(math.ceil(job_memory_mb(job) / 100.0) * 100)),
        "runtime": max(int(cfg["resources"]["runtime_min"]), int(math.ceil(secs / 60))),
    }


# --------------------------------------------------------------------------------------------- running
@dataclass
class ReferenceProblem:
    """What a job's rows share: nothing but the warm-up's time (the data are drawn per row)."""

    setup_s: float = 0.0
    d: int = 2  # the Gaussians' dimension
    checksums: dict = field(default_factory=dict)  # drawn data: no files


def _measure(job: ReferenceJob, n: int, seed: int, resolve: int | None):
    from wsvm_span.solution_path.reference import measure_reference_path

    return measure_reference_path(n, seed, d1_start=job.d1_start, resolve=resolve, tol=job.tol,
                                  engine=job.engine, hot_tol=job.hot_tol)


def prepare(job: ReferenceJob, settings) -> ReferenceProblem:
    """A warm-up measurement on a small data set, so that one-time initialisations are not charged to the
    first row's timings."""
    from wsvm_span.utils.environment import single_threaded

    t0 = time.perf_counter()
    with single_threaded():
        _measure(job, WARM_UP_N, job.seeds[0], 2)
    problem = ReferenceProblem(setup_s=time.perf_counter() - t0)
    log.info("%s: n=%d data sets %s resolve=%s engine=%s hot_tol=%g", job.slot, job.n, list(job.seeds),
             "all" if job.resolve is None else job.resolve, job.engine, job.hot_tol)
    return problem


def evaluate(job: ReferenceJob, problem: ReferenceProblem,
             on_row: Callable[[dict], None] | None = None) -> list[dict]:
    """Measure every data set of the job (one BLAS thread); ``on_row(row)`` after each."""
    from wsvm_span.solution_path.reference import D1_END, D2_WEIGHT, REFERENCE_GAMMA

    def row_of(idx: int) -> dict:
        seed = job.seeds[idx]
        run = _measure(job, job.n, seed, job.resolve)
        if run.fallback is not None:
            log.warning("%s: data set %d's path fell back to LIBSVM: %s", job.slot, seed, run.fallback)
        row = asdict(run)
        row.update(experiment=job.experiment, dataset=job.dataset, realization=job.realization, d1_start=job.d1_start,
                   d1_end=D1_END, d2_weight=D2_WEIGHT, gamma=REFERENCE_GAMMA, fallback=int(run.fallback is not None),
                   l=job.n, d=problem.d, model_index=idx, chunk=job.chunk)
        return row

    return evaluate_models(job, log, row_of, on_row)


def run_params(job: ReferenceJob, problem: ReferenceProblem) -> dict[str, Any]:
    """The MLflow parent run's params of a job."""
    from wsvm_span.solution_path.reference import D1_END, D2_WEIGHT, REFERENCE_GAMMA

    return {
        "experiment": job.experiment, "dataset": job.dataset, "variant": job.variant, "n": job.n,
        "n_models": job.n_models, "seeds": ",".join(map(str, job.seeds)),
        "resolve": "all" if job.resolve is None else job.resolve, "d1_start": job.d1_start, "d1_end": D1_END,
        "d2_weight": D2_WEIGHT, "kernel": "exp(-(gamma / p) ||x - x'||^2), gamma = 1, p = 2",
        "gamma": REFERENCE_GAMMA, "tol": job.tol, "engine_requested": job.engine, "hot_tol": job.hot_tol,
    }


def row_params(job: ReferenceJob, row: Mapping[str, Any]) -> dict[str, Any]:
    """A data set's MLflow params: its seed and index in the job."""
    return {"seed": row["seed"], "model_index": row["model_index"]}


def provenance(job: ReferenceJob, problem: ReferenceProblem) -> dict[str, Any]:
    """What the chunk file's provenance adds for this kind."""
    return {"setup_s": problem.setup_s, "resolve": job.resolve}


#: the job class of this kind
JOB = ReferenceJob
