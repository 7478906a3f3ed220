"""Weight-grid rows of two engines compared model by model (issue 9: ``svm.engine: path`` against LIBSVM;
issue 21: ``svm.engine: smo``).

:func:`compare_rows` counts, per estimator, the models whose values are identical, agree within
:data:`AGREE_ATOL` or differ. :func:`compare_row_files` also explains every difference by recomputing that
model both ways (LIBSVM at the job's tolerance, and the other engine's model as its job computed it: the path
engine's exact model, or, for an engine that starts from neighbouring solutions, the job's chain of starts
replayed up to that model) and naming the points that decide it:

- an error count (test error, K-fold CV, exact LOO) differs when points change side: each such point is
  reported with |f| of the exact model (or fold / leave-one-out model) and |f_LIBSVM - f_exact| there;
  a point closer to the boundary than LIBSVM's accuracy on that model (the largest |f_LIBSVM - f_exact|
  over its training points, at least :data:`BOUNDARY_F`) may fall on either side ("boundary");
- a span estimate or bound (recomputed on both models first: it must be the rows' value) differs when
  LIBSVM's tolerance put points on the other side of a bound (different in-bound / bounded sets: "sets"),
  or, with equal sets, when in-bound SVs coincide in feature space (their duals are not unique:
  "duplicates"), or, for the span bound (continuous in alpha), by LIBSVM's tolerance-accurate alpha itself
  ("tolerance"), or, for the xi-alpha bound (a count), by points crossing its threshold 2 a_p R^2 + xi_p = 1
  ("threshold"); each with the largest alpha and f differences and cond(K_MM) (a large alpha difference
  with a tiny f difference is a nearly non-unique dual);
- anything else is "unexplained" and says so.
In the texts "exact" is the other engine's model (exact for the path engine; tolerance-accurate like
LIBSVM's, without its float32 kernel cache, for "smo").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from .results_schema import ESTIMATORS, read_rows

__all__ = ["AGREE_ATOL", "BOUNDARY_F", "COMPARED", "EngineComparison", "compare_row_files", "compare_rows"]

#: the estimators compared (the rows' columns)
COMPARED: tuple[str, ...] = ("test_error", *ESTIMATORS)
#: what identifies a model across the two row sets
KEYS = ["experiment", "dataset", "seed", "realization", "model_index"]
#: two values agree within this: the span bound (continuous in alpha) inherits LIBSVM's tolerance (tol 1e-7
#: on the dual: ~1e-7 relative), while the other estimates count points over l and differ by >= 1/l >= 1e-5
AGREE_ATOL = 1e-6
#: a point with |f| below this is always taken to be within LIBSVM's accuracy of the decision boundary (more
#: where the model's own measured accuracy is worse): at the study's tol (1e-7) its decision values differ
#: from the exact ones by up to ~1e-5 on well-conditioned problems (measured: bench_solution_path.py
#: sweep, weights up to 2^10)
BOUNDARY_F = 1e-4


@dataclass
class EngineComparison:
    """counts: per estimator, models identical / within AGREE_ATOL / different and the largest difference;
    differences: one row per (model, estimator) that differs, with the explanation (when computed)."""

    counts: pd.DataFrame
    differences: pd.DataFrame
    n_models: int
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        lines = [f"{self.n_models} models compared", self.counts.to_string(index=False)]
        if len(self.differences):
            cols = [c for c in (*KEYS, "estimator", "a", "b", "category", "explanation") if c in self.differences]
            with pd.option_context("display.max_colwidth", 200, "display.width", 250):
                lines.append(self.differences[cols].to_string(index=False))
        return "\n".join(lines + self.notes)

    def as_dict(self) -> dict[str, Any]:
        return {"n_models": self.n_models, "counts": self.counts.to_dict(orient="records"),
                "differences": self.differences.to_dict(orient="records"), "notes": self.notes}


def compare_rows(a: pd.DataFrame, b: pd.DataFrame) -> EngineComparison:
    """Model-by-model counts of two row sets of the same grid jobs (e.g. engine auto and engine path)."""
    merged = a.merge(b, on=KEYS, suffixes=("_a", "_b"), how="outer", indicator=True)
    missing = int((merged["_merge"] != "both").sum())
    if missing:
        raise ValueError(f"{missing} models are in only one of the two row sets; compare rows of the same jobs")
    counts, diffs = [], []
    for est in COMPARED:
        va, vb = merged[f"{est}_a"].to_numpy(dtype=float), merged[f"{est}_b"].to_numpy(dtype=float)
        both = np.isfinite(va) & np.isfinite(vb)
        same_nan = np.isnan(va) & np.isnan(vb)
        d = np.where(both, np.abs(va - vb), np.inf)
        identical = (both & (d == 0)) | same_nan
        close = both & (d > 0) & (d <= AGREE_ATOL)
        different = ~identical & ~close
        counts.append({"estimator": est, "identical": int(identical.sum()), "within_tol": int(close.sum()),
                       "different": int(different.sum()),
                       "max_abs_diff": float(d[both].max(initial=0.0)), "not_computed": int(same_nan.sum())})
        for i in np.flatnonzero(different):
            diffs.append({**{k: merged[k].iloc[i] for k in KEYS}, "estimator": est, "a": va[i], "b": vb[i]})
    return EngineComparison(pd.DataFrame(counts), pd.DataFrame(diffs, columns=[*KEYS, "estimator", "a", "b"]),
                            n_models=len(merged))


def compare_row_files(a_files: Iterable, b_files: Iterable, cfg: Mapping[str, Any], *,
                      data_mirror: str | None = None, data_dir: str | None = None,
                      engine: str = "path") -> EngineComparison:
    """:func:`compare_rows` of two sets of chunk files of the jobs of ``cfg`` (a validated config; the
    engine is what differs: LIBSVM in ``a_files``, ``engine`` in ``b_files``), every difference explained:
    each differing model is recomputed by LIBSVM at the job's tolerance and by ``engine`` as its job did."""
    from .experiments import plan_jobs

    a, b = read_rows(list(a_files)), read_rows(list(b_files))
    report = compare_rows(a, b)
    if report.differences.empty:
        return report
    jobs = plan_jobs(cfg)
    explained = []
    for model_key, group in report.differences.groupby(KEYS, sort=False):
        key = dict(zip(KEYS, model_key))
        job = next(j for j in jobs if (j.experiment, j.dataset, j.seed, j.realization) == model_key[:4]
                   and j.model_start <= key["model_index"] < j.model_stop)
        why = _Explainer(job, int(key["model_index"]), data_mirror, data_dir, engine)
        for _, d in group.iterrows():
            category, text = why.explain(d["estimator"], d["a"], d["b"])
            explained.append({**d.to_dict(), "category": category, "explanation": text})
    report.differences = pd.DataFrame(explained)
    summary = report.differences.groupby(["estimator", "category"]).size().rename("models").reset_index()
    report.notes.append("explanations:\n" + summary.to_string(index=False))
    return report


def _flips(f_ref, f_exact, y) -> tuple[int, str]:
    """(points whose error status differs, a description with |f| and the LIBSVM error there)."""
    flip = np.flatnonzero((y * f_ref <= 0) != (y * f_exact <= 0))
    if flip.size == 0:
        return 0, "no point changes side"
    near = np.abs(f_exact[flip])
    gap = np.abs(f_ref[flip] - f_exact[flip])
    return int(flip.size), (f"{flip.size} point(s) change side: |f_exact| max {near.max():.2g}, |f_LIBSVM - "
                            f"f_exact| there max {gap.max():.2g}")


class _Explainer:
    """One differing model of a grid job recomputed both ways: LIBSVM at the job's tolerance (``ref``) and
    the other engine's model (``exact``) as its job computed it, with the job's kernels and CV folds."""

    def __init__(self, job, index: int, data_mirror, data_dir, engine: str = "path"):
        import wsvm_span as ws
        from wsvm_span.data import load_dataset
        from wsvm_span.engines import get_engine
        from wsvm_span.engines.warm_start import Solved, rescaled_start

        from .grid import grid_point
        from .experiments.weight_grid import model_weights

        split = load_dataset(job.dataset, seed=job.seed, realization=job.realization, data_dir=data_dir,
                             mirror=data_mirror)
        C = model_weights(job, split, grid_point(job.axes, index))
        cache = ws.KernelCache(split.X_train, 1.0 / int(split.d), X_test=split.X_test, qp_solver=job.qp_solver)
        self.K, self.K_test, self.y, self.y_test = cache.train, cache.test, split.y_train, split.y_test
        self.tol, self.engine = job.tol, get_engine(engine)
        self.ref = ws.fit_svm(self.K, self.y, C, tol=job.tol, check_input=False)
        if self.engine.capabilities.warm_start:
            # the job's chain (weight_grid._WarmChain) replayed from its first model: the same starts, the model
            model = None
            for i in range(job.model_start, index + 1):
                C_i = model_weights(job, split, grid_point(job.axes, i))
                start = None if model is None else rescaled_start(Solved.from_model(model), C_i, self.K)
                model = ws.fit_svm(self.K, self.y, C_i, engine=engine, tol=job.tol, check_input=False, alpha0=start)
            self.exact = model
        else:
            self.exact = ws.fit_svm(self.K, self.y, C, engine=engine, tol=job.tol, check_input=False)
        self.folds = ws.stratified_folds(self.y, k=job.cv_folds, seed=job.cv_seed)
        self.D, self.R2, self.qp_solver = cache.diameter, cache.radius2, job.qp_solver

    def explain(self, estimator: str, a: float, b: float) -> tuple[str, str]:
        """(category, text) of why ``estimator`` is ``a`` for LIBSVM and ``b`` for the path engine."""
        if estimator == "test_error":
            return self._count(self.ref.decision_function(self.K_test), self.exact.decision_function(self.K_test),
                               self.y_test)
        if estimator == "cv_error":
            return self._cv()
        if estimator == "loo_error":
            return self._loo()
        return self._span(estimator, a, b)

    def _count(self, f_ref, f_exact, y) -> tuple[str, str]:
        n, text = _flips(f_ref, f_exact, y)
        if n == 0:
            return "unexplained", text
        flip = (y * f_ref <= 0) != (y * f_exact <= 0)
        # LIBSVM's accuracy for this model, measured on the full model's training points (not on the points
        # that flipped): a point closer to the boundary than that may fall on either side
        accuracy = max(BOUNDARY_F, float(np.abs(self.ref.decision_train - self.exact.decision_train).max()))
        category = "boundary" if np.abs(f_exact[flip]).max() <= accuracy else "unexplained"
        return category, f"{text}; LIBSVM's accuracy on this model's training points {accuracy:.2g}"

    def _cv(self) -> tuple[str, str]:
        import wsvm_span as ws
        from wsvm_span.engines.warm_start import Solved, restricted_start
        from wsvm_span.solution_path import follow_path

        f_ref, f_exact = np.empty(self.y.size), np.empty(self.y.size)
        for fold in np.unique(self.folds):
            held = self.folds == fold
            keep = np.flatnonzero(~held)
            sub = ws.fit_svm(self.K[np.ix_(keep, keep)], self.y[keep], self.ref.C[keep], tol=self.tol,
                             check_input=False)
            f_ref[held] = sub.decision_function(self.K[np.ix_(np.flatnonzero(held), keep)])
            if self.engine.capabilities.solution_path:
                end = follow_path(self.exact, self.K, np.where(held, 0.0, self.exact.C), check_input=False).model
                f_exact[held] = end.decision_train[held]
            else:  # the fold model from the full one, as kfold_cv_error starts it (a fold whose job started it
                # from its previous model reaches the same optimum to the tolerance)
                start = restricted_start(Solved.from_model(self.exact), keep, self.K)
                other = ws.fit_svm(self.K[np.ix_(keep, keep)], self.y[keep], self.exact.C[keep],
                                   engine=self.engine.name, tol=self.tol, check_input=False, alpha0=start)
                f_exact[held] = other.decision_function(self.K[np.ix_(np.flatnonzero(held), keep)])
        return self._count(f_ref, f_exact, self.y)

    def _loo(self) -> tuple[str, str]:
        import wsvm_span as ws

        f_ref, f_exact = self.ref.decision_train.copy(), self.exact.decision_train.copy()
        ref = ws.leave_one_out(self.ref, self.K, check_input=False)
        f_ref[ref.support] = ref.decision_loo
        method = "path" if self.engine.capabilities.solution_path else "retrain"
        exact = ws.leave_one_out(self.exact, self.K, check_input=False, method=method)
        f_exact[exact.support] = exact.decision_loo
        return self._count(f_ref, f_exact, self.y)

    def _estimate(self, model, estimator: str) -> float:
        import wsvm_span as ws

        if estimator == "xi_alpha_bound":
            return ws.xi_alpha_bound(model, R2=self.R2)
        if estimator == "sv_count_bound":
            return ws.sv_count_bound(model)
        return getattr(ws.analyse_spans(model, self.K, D=self.D, qp_solver=self.qp_solver), estimator)

    def _span(self, estimator: str, a: float, b: float) -> tuple[str, str]:
        """A span estimate or bound: both models' values recomputed (they must be the rows'), then why the
        models differ."""
        from wsvm_span.span.geometry import coincident_groups

        got = (self._estimate(self.ref, estimator), self._estimate(self.exact, estimator))
        values = f"recomputed {got[0]:.7g} (LIBSVM) vs {got[1]:.7g} (exact)"
        if abs(got[0] - a) > AGREE_ATOL or abs(got[1] - b) > AGREE_ATOL:
            return "unexplained", f"{values}: not the rows' values"
        ref_in, ex_in = set(self.ref.inbound.tolist()), set(self.exact.inbound.tolist())
        ref_b, ex_b = set(self.ref.bounded.tolist()), set(self.exact.bounded.tolist())
        if ref_in != ex_in or ref_b != ex_b:
            moved = np.array(sorted((ref_in ^ ex_in) | (ref_b ^ ex_b)), dtype=int)
            # where both solutions are tolerance-accurate, a point in different sets sits on the margin in both
            # (the dual is not unique there, or the tolerance decides): |y f - 1| tells
            near = max(float(np.abs(m.margins[moved] - 1.0).max()) for m in (self.ref, self.exact))
            return "sets", (f"LIBSVM's tolerance puts {moved.size} point(s) on the other side of a bound (in-bound "
                            f"{len(ref_in)} vs {len(ex_in)}, bounded {len(ref_b)} vs {len(ex_b)}; |y f - 1| there "
                            f"max {near:.2g} in either model); {values}")
        M = self.exact.inbound
        twins = M.size - np.unique(coincident_groups(self.K[np.ix_(M, M)])).size
        if twins:
            return "duplicates", f"equal sets; {twins} in-bound SV(s) coincide with another: non-unique duals; {values}"
        gap = float(np.abs(self.ref.alpha - self.exact.alpha).max())
        dual = (f"max |alpha_LIBSVM - alpha_exact| {gap:.2g} while max |f_LIBSVM - f_exact| is "
                f"{np.abs(self.ref.decision_train - self.exact.decision_train).max():.2g}: cond(K_MM) "
                f"{np.linalg.cond(self.K[np.ix_(M, M)]) if M.size else 0.0:.2g}")
        if estimator == "span_bound":
            return "tolerance", (f"equal sets; continuous in alpha, and LIBSVM's alpha is tolerance-accurate ({dual}); "
                                 f"{values}")
        if estimator == "xi_alpha_bound":
            g = [2.0 * m.alpha * self.R2 + m.slacks - 1.0 for m in (self.ref, self.exact)]
            cross = np.flatnonzero((g[0] >= 0) != (g[1] >= 0))
            if cross.size:
                return "threshold", (f"equal sets; {cross.size} point(s) cross 2 a_p R^2 + xi_p = 1 (|2 a_p R^2 + "
                                     f"xi_p - 1| max {np.abs(g[1][cross]).max():.2g} exact, "
                                     f"{np.abs(g[0][cross]).max():.2g} LIBSVM; {dual}); {values}")
        return "unexplained", f"equal sets, no coincident in-bound SVs ({dual}); {values}"
