"""The cost calibration of the study's jobs: per-data-set seconds per model and power laws ``a * l^b`` per
component, the overheads, other engines' ratios to the calibrated engine per job kind, and the measured ratio
of each (engine, job kind)'s committed jobs to their projection (what ``config.estimate`` explains and prices
with, and what a kind's ``calibrated_seconds`` reads).

It lives below the job kinds (a kind prices its jobs from a :class:`Calibration`); measuring one from
finished results (``calibrate``) and pricing a config's jobs (``estimate``) are in
``wsvm_span.study.config.estimate``, above them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from .cost import approx_sizes

__all__ = ["CALIBRATION_FILE", "Calibration", "DEFAULT_ENGINE", "EngineRatios", "FAMILY_POINTS", "KindRatio",
           "OWN_ENGINES", "PER_LOO_MODEL", "PER_MODEL", "SOLVER", "TRAINING", "engine_ratios", "family",
           "load_calibration"]

#: the calibration shipped with the package
# (package data beside the config schema: ``wsvm-span calibrate-cost`` writes it there)
CALIBRATION_FILE = Path(__file__).parent / "config" / "cost_calibration.json"
#: per-model cost components (row columns, seconds); the span bound's time includes the span-rule's
PER_MODEL = ("t_train", "t_span_bound", "t_cv")
#: the exact-LOO component, paid only by the models that have it
PER_LOO_MODEL = "t_loo"
#: the components that are the SVM solver's own work: training each model and its CV folds. Their sum is the
#: floor of a projection: no saving on process starts, tracking or kernels takes a run below it
TRAINING = ("t_train", "t_cv")
#: the components that are the solver's work in every model: training, CV folds, exact-LOO retrainings. An
#: engine's ratios apply to these; the span bound, tracking, set-up and process start do not depend on it
SOLVER = ("t_train", "t_cv", "t_loo")
#: the engine the calibrated runs used where a calibration file does not say (files written before engines
#: were priced: all of them were LIBSVM runs)
DEFAULT_ENGINE = "sklearn"
#: the engine of a job whose kind trains with engines of its own, not the config's ``svm.engine`` (Experiment 9
#: compares several, each priced by its own law): what its kind's measured ratio is keyed by
OWN_ENGINES = "own"
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


def _family_points(datasets: Mapping[str, Mapping[str, float]], dataset: str, component: str
                   ) -> list[tuple[float, float]]:
    """(l, value) of the measured data sets of ``dataset``'s family (itself left out), by size."""
    fam = family(dataset)
    if fam is None:
        return []
    pts = [(float(e["l"]), float(e[component])) for name, e in datasets.items()
           if family(name) == fam and name != dataset and math.isfinite(e.get(component, math.nan))
           and e[component] > 0]
    return sorted(pts)


def _priced(datasets, laws, dataset: str, component: str, family_law) -> float:
    """A data set's value of ``component``: its own where measured; else from its family's measured sizes
    (``family_law(ls, ts, l)`` through the FAMILY_POINTS largest, or one sibling scaled by the all-data-set
    law's exponent); else the all-data-set law ``a * l^b``."""
    measured = datasets.get(dataset, {}).get(component)
    if measured is not None and math.isfinite(measured):
        return float(measured)
    l = approx_sizes(dataset)[0]
    siblings = _family_points(datasets, dataset, component)
    if len(siblings) >= 2:
        return family_law(*map(np.array, zip(*siblings[-FAMILY_POINTS:])), l)
    if siblings:
        (l_sib, t_sib), b = siblings[0], laws[component][1]
        return t_sib * (l / l_sib) ** b
    a, b = laws[component]
    return a * l ** b


def _basis(datasets, dataset: str, component: str = "t_train") -> str:
    if dataset in datasets:
        return "measured"
    return "family" if _family_points(datasets, dataset, component) else "size"


@dataclass
class EngineRatios:
    """An engine's per-model seconds over the calibration's engine's, per SOLVER component: per measured data
    set (a ratio of totals over its sample rows) and a power law ``a * l^b`` over all of them, from the
    measurement files of ``benchmarks/bench_smo.py ratios`` (kept in ``measurements``, with their command,
    machine and load, so that :func:`engine_ratios` rebuilds the ratios from them)."""

    engine: str  # the engine priced
    baseline: str  # the engine it was measured against: the calibration's engine
    kind: str  # the job kind it was measured on (its chain of warm starts is that kind's)
    datasets: dict[str, dict[str, float]]  # dataset -> {"l": l, component: ratio}
    laws: dict[str, tuple[float, float]]  # component -> (a, b) of ratio = a * l^b
    measurements: list[dict[str, Any]] = field(default_factory=list)  # the measurement files' contents

    @property
    def key(self) -> tuple[str, str]:
        return self.engine, self.kind

    def ratio(self, dataset: str, component: str) -> float:
        """The ratio of a data set: measured; else along its family's measured sizes, a power law through the
        largest (a ratio varies slowly with l, and a parabola through three measured ratios would turn their
        noise into a trend); else the all-data-set law."""
        return _priced(self.datasets, self.laws, dataset, component,
                       lambda ls, ts, l: (lambda a, b: a * l ** b)(*_power_law(ls, ts)))

    def basis(self, dataset: str) -> str:
        """How a data set's ratios are found: "measured", "family" or "size"."""
        return _basis(self.datasets, dataset)

    def as_dict(self) -> dict:
        return {"engine": self.engine, "baseline": self.baseline, "kind": self.kind, "datasets": self.datasets,
                "laws": {k: list(v) for k, v in self.laws.items()}, "measurements": self.measurements}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "EngineRatios":
        return cls(engine=d["engine"], baseline=d["baseline"], kind=d["kind"], datasets=dict(d["datasets"]),
                   laws={k: tuple(v) for k, v in d["laws"].items()}, measurements=list(d.get("measurements", [])))


def engine_ratios(payloads: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], EngineRatios]:
    """Per (engine, job kind), its ratios from measurement files' contents (``bench_smo.py ratios``: the engine,
    its baseline, the job kind, and per sample row the CPU seconds of each SOLVER component by each engine).

    A data set's ratio of a component is the engine's total over its sample rows divided by the baseline's:
    the baseline's total of a row is its mean per model times the row's models where it was timed on every
    k-th model only (``libsvm_every``; its models start from zero, so a systematic sample prices the row),
    and exact LOO is compared over the models that had it (both engines ran all of them).
    """
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for p in payloads:
        grouped.setdefault((str(p["engine"]), str(p["kind"])), []).append(p)
    out = {}
    for (engine, kind), files in grouped.items():
        baselines = {str(p["baseline"]) for p in files}
        if len(baselines) > 1:
            raise ValueError(f"ratios of {engine!r} on {kind} jobs measured against several baselines "
                             f"{sorted(baselines)}: calibrate each pair on its own")
        (baseline,) = baselines
        totals: dict[str, dict[str, Any]] = {}
        for p in files:
            for m in p["measurements"]:
                entry = totals.setdefault(m["dataset"], {"l": float(m["l"]), **{c: [0.0, 0.0] for c in SOLVER}})
                models = m["model_stop"] - m["model_start"]
                for c in SOLVER:
                    base, own = float(m["cpu"][baseline][c]), float(m["cpu"][engine][c])
                    if c != PER_LOO_MODEL:
                        base = base / m["models"][baseline] * models
                        own = own / m["models"][engine] * models
                    entry[c][0] += own
                    entry[c][1] += base
        datasets = {ds: {"l": e["l"], **{c: e[c][0] / e[c][1] if e[c][1] > 0 else math.nan for c in SOLVER}}
                    for ds, e in sorted(totals.items())}
        ls = np.array([d["l"] for d in datasets.values()])
        laws = {c: _power_law(ls, np.array([d[c] for d in datasets.values()])) for c in SOLVER}
        out[engine, kind] = EngineRatios(engine=engine, baseline=baseline, kind=kind, datasets=datasets, laws=laws,
                                         measurements=[dict(p) for p in files])
    return out


@dataclass
class KindRatio:
    """The measured seconds of the committed jobs of one job kind that one engine trained, over the cost model's
    projection of the same jobs without this ratio: the totals' ratio (so that the projection of such jobs adds
    up to what they took), the jobs' own clocks (their wall seconds, on the machines and loads they ran at; a
    process's start is in neither). Fitted by ``wsvm-span calibrate-cost --parts`` on the committed parts of
    ``reproduced/`` (``config.estimate.fit_kind_ratios``)."""

    engine: str  # the engine that trained the jobs (OWN_ENGINES for a kind with engines of its own)
    kind: str  # their job kind
    ratio: float  # measured_s / projected_s
    jobs: int
    measured_s: float
    projected_s: float
    parts: list[str] = field(default_factory=list)  # the committed parts they are of

    @property
    def key(self) -> tuple[str, str]:
        return self.engine, self.kind

    def as_dict(self) -> dict:
        return {"engine": self.engine, "kind": self.kind, "ratio": self.ratio, "jobs": self.jobs,
                "measured_s": self.measured_s, "projected_s": self.projected_s, "parts": self.parts}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "KindRatio":
        return cls(engine=d["engine"], kind=d["kind"], ratio=float(d["ratio"]), jobs=int(d["jobs"]),
                   measured_s=float(d["measured_s"]), projected_s=float(d["projected_s"]), parts=list(d["parts"]))


def _by_key(entries: Iterable) -> dict:
    """Ratios by their (engine, kind) key, in that order (a calibration file lists them so)."""
    return {e.key: e for e in sorted(entries, key=lambda e: e.key)}


@dataclass
class Calibration:
    """Per-data-set means and power laws per component, and the overheads, of one engine's runs; other
    engines by their ratios to it."""

    datasets: dict[str, dict[str, float]]  # dataset -> {"l": l, component: mean seconds per model}
    laws: dict[str, tuple[float, float]]  # component -> (a, b) of a * l^b
    setup_law: tuple[float, float]  # per-job load + setup (kernels, D, folds) seconds: a * l^b
    job_overhead_s: float  # per-job tracking (MLflow import, store access) seconds
    model_overhead_s: float  # per-model tracking seconds (one child run)
    source: dict[str, Any] = field(default_factory=dict)  # where and on what machine it was measured
    process_start_s: float = 0.0  # per-job seconds before the job's own clock starts (interpreter, imports)
    engine: str = DEFAULT_ENGINE  # the engine of the calibrated runs
    # other engines' ratios to it, per (engine, job kind) they were measured on
    engines: dict[tuple[str, str], EngineRatios] = field(default_factory=dict)
    # per (engine, job kind): the committed jobs' measured seconds over their projection
    kind_ratios: dict[tuple[str, str], KindRatio] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"datasets": self.datasets, "laws": {k: list(v) for k, v in self.laws.items()},
                "setup_law": list(self.setup_law), "job_overhead_s": self.job_overhead_s,
                "model_overhead_s": self.model_overhead_s, "process_start_s": self.process_start_s,
                "source": self.source, "engine": self.engine,
                "engines": [v.as_dict() for v in self.engines.values()],
                "kind_ratios": [v.as_dict() for v in self.kind_ratios.values()]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Calibration":
        return cls(datasets=dict(d["datasets"]), laws={k: tuple(v) for k, v in d["laws"].items()},
                   setup_law=tuple(d["setup_law"]), job_overhead_s=float(d["job_overhead_s"]),
                   model_overhead_s=float(d["model_overhead_s"]), source=dict(d.get("source", {})),
                   process_start_s=float(d.get("process_start_s", 0.0)),
                   engine=str(d.get("engine", DEFAULT_ENGINE)),
                   # a file written before the ratios were keyed by job kind maps the engine to its ratios
                   engines=_by_key(EngineRatios.from_dict(v) for v in _entries(d.get("engines", []))),
                   kind_ratios=_by_key(KindRatio.from_dict(v) for v in d.get("kind_ratios", [])))

    def with_ratios(self, ratios: Mapping[tuple[str, str], EngineRatios]) -> "Calibration":
        """This calibration with the given engines' ratios (replacing theirs for the same job kind); each must
        have been measured against this calibration's engine."""
        for (name, kind), r in ratios.items():
            if r.baseline != self.engine:
                raise ValueError(f"the ratios of {name!r} on {kind} jobs were measured against {r.baseline!r}, but "
                                 f"this calibration's seconds are {self.engine!r}'s")
        return replace(self, engines=_by_key({**self.engines, **ratios}.values()))

    def with_kind_ratios(self, ratios: Iterable[KindRatio]) -> "Calibration":
        """This calibration with these measured ratios of (engine, job kind) in place of all it had."""
        return replace(self, kind_ratios=_by_key(ratios))

    def trained_by(self, job, engine: str | None = None) -> str:
        """The engine that trains ``job``: ``engine`` where given, else the job's own (the config's
        ``svm.engine``), by its registry name (``auto`` is ``sklearn``); :data:`OWN_ENGINES` for a job of a kind
        whose jobs have no such engine (its engines are its own)."""
        from wsvm_span.engines import get_engine

        if getattr(job, "engine", None) is None:
            return OWN_ENGINES
        return get_engine(engine or job.engine).name

    def pricing(self, job, engine: str | None = None) -> str:
        """The engine whose seconds price ``job`` trained by ``engine`` (default: the job's own ``engine``,
        the config's ``svm.engine``): that engine where this calibration is its or has its ratios for the
        job's kind; else this calibration's engine."""
        name = self.trained_by(job, engine)
        return name if (name, getattr(job, "kind", None)) in self.engines else self.engine

    def kind_ratio(self, job, engine: str | None = None) -> float:
        """The measured ratio of the jobs of ``job``'s kind trained by its engine (``engine`` where given) to
        their projection, 1 where the calibration has none (:class:`KindRatio`)."""
        measured = self.kind_ratios.get((self.trained_by(job, engine), getattr(job, "kind", None)))
        return 1.0 if measured is None else measured.ratio

    def per_model(self, dataset: str, component: str, engine: str | None = None, kind: str | None = None) -> float:
        """Seconds per model of a component on a data set, by this calibration's engine or, for an ``engine``
        with ratios for job ``kind``, times that engine's ratio (SOLVER components only)."""
        seconds = _priced(self.datasets, self.laws, dataset, component, _family_law)
        if engine is not None and engine != self.engine and component in SOLVER:
            seconds *= self.engines[engine, kind].ratio(dataset, component)
        return seconds

    def family_points(self, dataset: str, component: str) -> list[tuple[float, float]]:
        """(l, seconds per model) of the measured data sets of ``dataset``'s family, by size."""
        return _family_points(self.datasets, dataset, component)

    def basis(self, dataset: str) -> str:
        """How a data set is priced: "measured", "family" (its family at other training sizes) or "size" (the
        all-data-set laws)."""
        return _basis(self.datasets, dataset)


def _entries(engines: Mapping[str, Any] | list) -> list:
    """A calibration file's engine ratios: a list, or (a file written before they were keyed by job kind) a
    mapping of engine names to them."""
    return list(engines.values()) if isinstance(engines, Mapping) else list(engines)


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


def load_calibration(path: str | Path | None = None) -> Calibration:
    """The cost calibration at ``path`` (default: the one shipped with the package,
    ``cost_calibration.json``); FileNotFoundError when there is none.
    """
    path = Path(path) if path else CALIBRATION_FILE
    if not path.is_file():
        raise FileNotFoundError(f"no cost calibration at {path}; write one with `wsvm-span calibrate-cost`")
    return Calibration.from_dict(json.loads(path.read_text(encoding="utf-8")))
