"""Hyperparameter search for SVM+ (learning using privileged information): ``SVMPlusSearchCV``.

``SpanSearchCV``'s conventions for ``svm_plus.SVMPlusClassifier``: a ``BaseSearchCV`` whose ``fit(X, y,
X_privileged=...)`` trains ONE model per grid point on all the training data and scores it by SVM+'s own
leave-one-out estimate, which the classifier computes at fit (``loo="rule"``: SVM+'s LOO rule; ``"exact"``: its
exact LOO), or by K-fold CV, where each fold's SVM+ is trained on the fold's ordinary AND privileged features.

As in SpanSearchCV, the points of one pair of kernel widths (gamma, priv_gamma) share their two training kernels,
computed once, and walk along C in increasing order for each gamma_plus, each model starting from the previous
one's solution (``svm_plus.feasible_start``) and each CV fold from its point's model (``svm_plus.kfold_cv_error``):
the routes are exact, so the models are the cold fits' (tests/test_svm_plus_search.py). Where the template trains
on kernel rows computed on demand (RBF kernels, more than ``SMO_POLISH_MAX_L`` points) and the criterion is K-fold
CV, the walks and the folds start from the same neighbours on rows, and their solutions are the decomposition
solver's at the template's ``tol`` (not polished: a warm and a cold start may then differ within it); the LOO
criteria read the l x l kernels, so they are computed for them whatever the size. ``cv_results_`` is built by BaseSearchCV's
own formatter (one split: the criterion is one number over all l points); ``best_score_ = 1 - criterion``; ties
as in SpanSearchCV (``tie_rule``, ``TieRule``); ``best_estimator_`` is an ``SVMPlusClassifier`` refit on all the
data, which predicts from the ordinary features alone.
"""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_X_y

from wsvm_span.svm_plus import SVMPlusClassifier, kfold_cv_error
from wsvm_span.svm_plus.solver import SMO_POLISH_MAX_L

from . import _sklearn_compat as compat
from ._grid import SVM_PLUS_CRITERIA, svm_plus_param_grid
from ._memory import (AVAILABLE, SearchMemory, SearchMemoryError, largest_sample, memory_limit,
                      svm_plus_search_memory)
from ._progress import SearchProgress
from ._search import (SpanSearchCV, active_backend, announce_point, check_tie_rule, choose_best, classifier_search_tags,
                      finish_point, fold_ids, ships_tasks, shipping_parallel)
from ._sklearn_compat import BaseSearchCV, StrOptions

__all__ = ["SVMPlusSearchCV"]

#: the grid's keys: the SVM+ hyperparameters (svm-plus.md's C and gamma, and the two kernels' widths)
GRID_KEYS = ("C", "gamma_plus", "gamma", "priv_gamma")
#: the grid keys of the kernels' parameters: the points that share them share their training kernels
KERNEL_KEYS = ("gamma", "priv_gamma")
#: the criteria that the classifier estimates at fit, by its ``loo`` parameter (one fit per grid point)
LOO_OF_CRITERION = {"loo_rule": "rule", "loo_error": "exact"}
#: the routes that can hand a problem to the QP route (dense in the dual's 2l unknowns) at any size; "auto" does
#: only where it polishes (at most SMO_POLISH_MAX_L points), "smo" never
QP_AT_ANY_SIZE = frozenset({"qp", "active-set"})


def _memory_settings(search, template: SVMPlusClassifier, X, X_priv, candidates, heldout) -> dict:
    """``_memory.svm_plus_search_memory``'s arguments for this search."""
    l = X.shape[0]
    return dict(l=l, d=X.shape[1], d_priv=X_priv.shape[1], criterion=search.criterion,
                on_rows=search.criterion == "cv_error" and template._trains_on_rows(l),
                cache_mb=float(template.cache_size),
                qp_fallback=template.solver in QP_AT_ANY_SIZE or (template.solver == "auto" and l <= SMO_POLISH_MAX_L),
                computed_kernels=(template.kernel != "precomputed") + (template.priv_kernel != "precomputed"),
                n_pairs=len(_walks(candidates)), n_jobs=effective_n_jobs(search.n_jobs),
                heldout=0 if heldout is None else heldout[0].shape[0],
                # an iterable of splits: its folds' sizes are unknown here, so the worst case (every fold one point)
                cv_folds=(search.cv if isinstance(search.cv, numbers.Integral)
                          else getattr(search.cv, "n_splits", l)),
                refit=bool(search.refit))


def _check_memory(settings: dict, max_memory) -> tuple[SearchMemory, str]:
    """The estimate and its limit's description, or a ``SearchMemoryError`` naming the estimate, its largest terms,
    the limit and what would need less."""
    estimate = svm_plus_search_memory(**settings)
    limit, source = memory_limit(max_memory)
    if limit is None or estimate.nbytes <= limit:
        return estimate, source
    changes = []
    if settings["n_jobs"] > 1 and settings["n_pairs"] > 1:
        changes.append(f"n_jobs=1 (each thread holds a pair's kernels): "
                       f"{svm_plus_search_memory(**{**settings, 'n_jobs': 1}).mb:,.0f} MB")
    if settings["criterion"] != "cv_error" and settings["l"] > SMO_POLISH_MAX_L:
        changes.append("criterion='cv_error' with RBF kernels and solver 'auto' or 'smo' (it trains on kernel rows "
                       "computed on demand: no l x l array)")
    sample = largest_sample(settings, limit, svm_plus_search_memory)
    if sample:
        changes.append(f"a sample of at most {sample:,} of the {settings['l']:,} points (the kernels and the "
                       f"routes' systems grow as l^2)")
    raise SearchMemoryError(
        f"SVMPlusSearchCV would need about {estimate.summary()}, more than the {source}: refused before computing "
        "any kernel. The estimate is an upper bound (docs/svm_plus.md). To need less: "
        + "; ".join(changes + [("or " if changes else "") + "set max_memory (MB; None: no check)"]))


def _cv_error_on_rows(model, X, y, X_priv, splits) -> float:
    """K-fold CV error (a fraction of l) of a fitted ``SVMPlusClassifier`` that trains on kernel rows computed on
    demand: each fold's model trained on the fold's rows of X and of X_privileged, starting from the full model's
    solution (``warm_start_points``: the fold's points among all), the errors of the held-out parts pooled (a point
    with f = 0 is predicted ``classes_[0]``, as ``predict`` does)."""
    wrong = 0
    for train, test in splits:
        fold = clone(model).set_params(loo=None)
        fold._fit(X[train], y[train], X_priv[train], warm_start=model.model_, warm_start_points=train)
        wrong += int(np.sum(fold.predict(X[test]) != y[test]))
    return wrong / y.size


@dataclass
class _Shared:
    """What the grid points of one (gamma, priv_gamma) share: the training kernels (None where the template
    trains on kernel rows computed on demand) and the CV folds."""

    kernels: tuple | None
    folds: np.ndarray | None
    splits: list | None


def _kernel_key(params: dict) -> tuple:
    return tuple(params.get(key, "template") for key in KERNEL_KEYS)


def _walks(candidates: list[dict]) -> dict[tuple, list[list[int]]]:
    """The candidates by the kernels they share, and within those by gamma_plus in increasing C: each point of a
    walk starts from the previous point's solution (``feasible_start``). They depend on the grid only, so neither
    do the results (not on n_jobs)."""
    walks: dict[tuple, dict] = {}
    for i, params in enumerate(candidates):
        walks.setdefault(_kernel_key(params), {}).setdefault(params.get("gamma_plus", "template"), []).append(i)
    return {key: [sorted(walk, key=lambda i: candidates[i].get("C", 0.0)) for walk in by_gamma_plus.values()]
            for key, by_gamma_plus in walks.items()}


def _evaluate(template, params, X, y, X_priv, shared: _Shared, previous, *, criterion, heldout, return_train_score,
              error_score, verbose, progress) -> tuple[dict, object]:
    """Train one grid point on all the data (from ``previous``, the walk's last model, where the kernels are
    shared) and estimate its error by ``criterion``: (its results, its model or None). Never raises unless
    error_score == "raise" (a failed point scores ``error_score``, as in GridSearchCV)."""
    result = {"fit_error": None, "estimate": np.nan, "n_sv": np.nan, "test_error": np.nan}
    t0 = time.perf_counter()
    fit_time = score_time = 0.0
    model = None
    try:
        # the LOO criteria are computed inside fit (fit_time includes them); CV needs no LOO at fit
        model = clone(template).set_params(**params, loo=LOO_OF_CRITERION.get(criterion))
        model._fit(X, y, X_priv, kernels=shared.kernels, warm_start=previous)
        fit_time = time.perf_counter() - t0
        t1 = time.perf_counter()
        if criterion in LOO_OF_CRITERION:
            estimate = model.loo_error_
        elif shared.kernels is not None:
            # every fold starts from the full model (svm_plus.kfold_cv_error); f = 0 counts as an error there
            K, K_priv = shared.kernels
            estimate = kfold_cv_error(K, K_priv, model.model_.y, model.C, model.gamma_plus, shared.folds,
                                      solver=model.solver, model=model.model_)
        else:
            estimate = _cv_error_on_rows(model, X, y, X_priv, shared.splits)
        score_time = time.perf_counter() - t1
        result.update(estimate=estimate, n_sv=model.support_.size)
        test_score = 1.0 - estimate
        train_score = model.score(X, y) if return_train_score else np.nan
        if heldout is not None:
            result["test_error"] = float(np.mean(model.predict(heldout[0]) != heldout[1]))
    except Exception as exc:
        if error_score == "raise":
            raise
        fit_time = time.perf_counter() - t0
        result["fit_error"] = f"{type(exc).__name__}: {exc}"
        test_score = train_score = error_score
        model = None
    finish_point(result, params, fit_time=fit_time, score_time=score_time, test_score=test_score,
                 train_score=train_score, return_train_score=return_train_score, verbose=verbose,
                 name="SVMPlusSearchCV", progress=progress, criterion=criterion, value=result["estimate"])
    return result, (None if model is None else model.model_)


def _evaluate_kernel(template, candidates, walks, X, y, X_priv, *, splits, folds, **options) -> list[tuple[int, dict]]:
    """Every grid point of one (gamma, priv_gamma): their training kernels computed once (unless the template
    trains on rows computed on demand), each walk along C warm-started."""
    kernels = None
    # the LOO criteria read the l x l kernels whatever the template trains on
    if options["criterion"] in LOO_OF_CRITERION or not template._trains_on_rows(X.shape[0]):
        first = clone(template).set_params(**{k: v for k, v in candidates[walks[0][0]].items() if k in KERNEL_KEYS})
        first._resolve_gammas(X, X_priv)
        kernels = first._training_kernels(X, X_priv)
    shared = _Shared(kernels, folds, splits)
    out = []
    for walk in walks:
        previous = None
        for i in walk:
            result, previous = _evaluate(template, candidates[i], X, y, X_priv, shared, previous, **options)
            out.append((i, result))
    return out


class SVMPlusSearchCV(BaseSearchCV):
    """Grid search over ``SVMPlusClassifier`` (C, gamma_plus and both kernels' widths) scored by SVM+'s LOO rule,
    its exact LOO error or K-fold CV.

    Parameters
    ----------
    estimator : SVMPlusClassifier or None
        Template of every model and of ``best_estimator_`` (its kernels, solver and the parameters the grid does not
        set; its ``loo`` is set by ``criterion``). None means ``SVMPlusClassifier()``.
    param_grid : dict or list of dicts, default ``svm_plus_param_grid()``
        Keys ``C``, ``gamma_plus``, ``gamma``, ``priv_gamma`` (``SVMPlusClassifier``'s meaning). The default is
        grid.py's 11 x 10 C x gamma grid times gamma_plus in {0.25, 1, 4} and priv_gamma in {0.125, 1, 8}.
    criterion : {"loo_rule", "loo_error", "cv_error"}, default="loo_rule"
        The estimate minimised: SVM+'s LOO rule (``svm_plus.loo_rule``, from the one model), its exact LOO error
        (``svm_plus.leave_one_out``: retrained without each point that can change the model), or the K-fold CV
        error with the folds of ``cv`` (the privileged features split with the points).
    tie_rule : {"worst", "best", "median"} or None, default=None
        None: GridSearchCV's convention (the first best candidate in grid order). Otherwise the study's rule over
        held-out errors (``TieRule``): needs ``fit(..., heldout=(X_test, y_test))``.
    cv : int or splitter, default=5
        Folds of criterion "cv_error" (as in GridSearchCV: an int is stratified K-fold; they must partition the
        data). Computed once, so every grid point sees the same folds.
    n_jobs, pre_dispatch : int or None, and int or str
        joblib threads over the pairs of kernel widths (gamma, priv_gamma); each holds its two l x l kernels.
        Under a joblib backend of processes or machines (``joblib.parallel_config(backend="dask")``, "loky"), tasks
        there, each getting X and X_privileged and computing its own kernels (docs/distributed.md). The results do
        not depend on n_jobs or the backend.
    refit : bool or callable, default=True
        Refit ``best_estimator_`` on all the data; a callable picks ``best_index_`` from ``cv_results_``.
    verbose : int, default=0
        >= 1: a summary line, then one line per grid point as it finishes: the points done, the point, its estimate
        and times, the time so far and the time left at the rate so far.
    error_score : "raise" or float, default=np.nan
        Score of a point whose fit or estimate fails.
    return_train_score : bool, default=False
        Add the training accuracy of each model (``split0_train_score``...).
    max_memory : "available", float or None, default="available"
        The most memory (MB) the search may take: "available" is the memory available to the process when ``fit``
        starts; None: no check. ``fit`` estimates the search's peak from the sizes and settings alone
        (``memory_estimate``: the kernels, or the row caches of a K-fold CV that trains on rows, and the routes'
        systems: an upper bound) and raises ``SearchMemoryError`` before computing any kernel where it exceeds this,
        naming what would need less.

    Attributes
    ----------
    cv_results_, best_index_, best_params_, best_score_, best_estimator_, refit_time_, n_splits_, scorer_,
    multimetric_ : as in GridSearchCV (``best_score_ = 1 - criterion``). ``cv_results_`` also holds the criterion
    under its name (``loo_rule``, ``loo_error`` or ``cv_error``), ``n_sv`` and, with held-out data,
    ``test_error``. Its ``mean_fit_time`` is the fit on all the data (the LOO estimates are computed inside it),
    ``mean_score_time`` the K-fold CV.

    Raises
    ------
    ValueError
        From ``fit``: no or mismatched ``X_privileged``, non-finite values, other than two classes, an unknown grid
        key, ``tie_rule`` without ``heldout``, criterion "cv_error" with a precomputed privileged kernel.
    SearchMemoryError
        From ``fit``, before any kernel is computed: the memory estimate exceeds ``max_memory``.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.model_selection import SVMPlusSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, 0)
    >>> X_priv = X[:, :1] + 0.1 * rng.normal(size=(60, 1))   # known when training only
    >>> search = SVMPlusSearchCV(param_grid={"C": [0.25, 4.0], "gamma_plus": [0.25, 4.0]})
    >>> search = search.fit(X, y, X_privileged=X_priv)
    >>> sorted(search.best_params_), bool(0.5 < search.best_score_ <= 1.0)  # 1 - SVM+'s LOO rule
    (['C', 'gamma_plus'], True)
    >>> search.predict(X[:3]).tolist() == search.best_estimator_.predict(X[:3]).tolist()
    True
    """

    #: SpanSearchCV's, less its SVM-only options, with SVM+'s criteria
    _parameter_constraints: dict = {
        **{k: v for k, v in SpanSearchCV._parameter_constraints.items()
           if k not in ("extra_criteria", "engine", "cache_size")},
        "criterion": [StrOptions(set(SVM_PLUS_CRITERIA))],
    }

    def __init__(self, estimator=None, param_grid=None, *, criterion="loo_rule", tie_rule=None, cv=5, n_jobs=None,
                 refit=True, verbose=0, pre_dispatch="2*n_jobs", error_score=np.nan, return_train_score=False,
                 max_memory=AVAILABLE):
        super().__init__(estimator=estimator, n_jobs=n_jobs, refit=refit, cv=cv, verbose=verbose,
                         pre_dispatch=pre_dispatch, error_score=error_score,
                         return_train_score=return_train_score)
        self.param_grid = param_grid
        self.criterion = criterion
        self.tie_rule = tie_rule
        self.max_memory = max_memory

    def __sklearn_tags__(self):
        return classifier_search_tags(self, self.estimator if isinstance(self.estimator, SVMPlusClassifier)
                                      else SVMPlusClassifier())

    def get_metadata_routing(self):
        # fit consumes X_privileged and heldout itself: nothing is routed onwards.
        return self._get_metadata_request()

    def _template(self) -> SVMPlusClassifier:
        if self.estimator is None:
            return SVMPlusClassifier()
        if not isinstance(self.estimator, SVMPlusClassifier):
            raise ValueError(f"SVMPlusSearchCV searches SVMPlusClassifier models, got {type(self.estimator).__name__}")
        return clone(self.estimator)

    @compat.fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, X_privileged=None, *, heldout=None):
        """Search the grid.

        Parameters
        ----------
        X : array-like of shape (l, d), or (l, l) with the template's ``kernel="precomputed"``
            Training points (ordinary features).
        y : array-like of shape (l,)
            Labels of exactly two classes.
        X_privileged : array-like of shape (l, d~), or (l, l) with ``priv_kernel="precomputed"``
            Privileged features of the same points (required).
        heldout : (X_test, y_test) or None, default=None
            Adds the held-out error of every grid point (``test_error``), which ``tie_rule`` ranks ties by.

        Returns
        -------
        SVMPlusSearchCV
            This search, fitted.

        Raises
        ------
        ValueError
            If an input, the grid or a parameter is invalid (see the class).
        """
        template, X, y, X_priv, heldout, candidates = self._plan(X, y, X_privileged, heldout)
        memory, limit = _check_memory(_memory_settings(self, template, X, X_priv, candidates, heldout),
                                      self.max_memory)
        splits = folds = None
        if self.criterion == "cv_error":
            splits = list(check_cv(self.cv, y, classifier=True).split(X, y))
            folds = fold_ids(splits, X.shape[0])
        n = len(candidates)
        if self.verbose > 0:
            print(f"Fitting 1 model for each of {n} candidates ({self.criterion}), totalling {n} fits; memory about "
                  f"{memory.summary()} ({limit})", flush=True)
        progress = SearchProgress(n)
        backend = active_backend()
        # one task per pair of kernels (n_jobs of them in memory at once), its walks along C in order; each computes
        # its kernels from X and X_privileged, so any backend runs them. One in other processes or machines (dask,
        # loky) gets tasks that print nothing (a worker's stdout is its own) and cannot tick this process's
        # progress: their lines are printed here, as their results arrive
        shipped = ships_tasks(backend)
        if shipped:
            parallel = shipping_parallel(backend, self.n_jobs, self.pre_dispatch)
        else:
            parallel = Parallel(n_jobs=self.n_jobs, prefer="threads", pre_dispatch=self.pre_dispatch)
        by_kernel = parallel(delayed(_evaluate_kernel)(
            template, candidates, walks, X, y, X_priv, splits=splits, folds=folds, criterion=self.criterion,
            heldout=heldout, return_train_score=self.return_train_score, error_score=self.error_score,
            verbose=0 if shipped else self.verbose, progress=None if shipped else progress)
            for walks in _walks(candidates).values())
        results = {}
        for group in by_kernel:
            for i, result in group:
                if shipped and self.verbose > 0:
                    announce_point(candidates[i], name="SVMPlusSearchCV", progress=progress,
                                   criterion=self.criterion, value=result["estimate"], fit_time=result["fit_time"],
                                   score_time=result["score_time"])
                results[i] = result
        out = [results[i] for i in range(n)]
        compat.warn_or_raise_about_fit_failures(out, self.error_score)

        more = {self.criterion: [o["estimate"] for o in out], "n_sv": [o["n_sv"] for o in out]}
        if heldout is not None:
            more["test_error"] = [o["test_error"] for o in out]
        results = compat.format_results(self, candidates, out, more)
        choose_best(self, results)
        if self.refit:
            self.best_estimator_ = clone(template).set_params(**self.best_params_)
            t0 = time.perf_counter()
            self.best_estimator_.fit(X, y, X_privileged=X_priv)
            self.refit_time_ = time.perf_counter() - t0
        self.scorer_ = check_scoring(template)
        self.multimetric_ = False
        self.n_splits_ = 1
        self.cv_results_ = results
        return self

    def memory_estimate(self, X, y, X_privileged=None, *, heldout=None) -> SearchMemory:
        """The memory ``fit`` with these arguments would take at its peak, estimated without training or computing
        any kernel (an upper bound: ``_memory.svm_plus_search_memory``).

        Parameters
        ----------
        X, y, X_privileged, heldout : as for ``fit``

        Returns
        -------
        SearchMemory
            Its terms (``summary()``: the total and the largest terms in MB); ``nbytes`` is what ``fit`` compares
            with ``max_memory``.

        Raises
        ------
        ValueError
            For the inputs and parameters ``fit`` refuses.
        """
        self._validate_params()
        template, X, y, X_priv, heldout, candidates = self._plan(X, y, X_privileged, heldout)
        return svm_plus_search_memory(**_memory_settings(self, template, X, X_priv, candidates, heldout))

    def _plan(self, X, y, X_privileged, heldout):
        """(template, X, y, X_privileged, heldout, candidates), validated: everything decided before anything large
        is allocated."""
        template = self._template()
        X, y, X_priv, heldout = self._validate_problem(X, y, X_privileged, heldout)
        check_tie_rule(self, heldout)
        if self.criterion == "cv_error" and template.priv_kernel == "precomputed":
            raise ValueError("criterion='cv_error' splits X_privileged by rows, which a precomputed (l, l) "
                             "privileged kernel cannot be: give the privileged features, or a LOO criterion")
        candidates = list(ParameterGrid(svm_plus_param_grid() if self.param_grid is None else self.param_grid))
        if not candidates:
            raise ValueError("param_grid is empty: no candidate to evaluate")
        unknown = {key for params in candidates for key in params} - set(GRID_KEYS)
        if unknown:
            raise ValueError(f"unknown param_grid key(s) {sorted(unknown)}; allowed: {list(GRID_KEYS)}")
        return template, X, y, X_priv, heldout, candidates

    def _validate_problem(self, X, y, X_privileged, heldout):
        """(X, y, X_privileged, heldout) checked before any training: a bad input is one clear error, not a grid
        of failed points."""
        X, y = check_X_y(X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        if X_privileged is None:
            raise ValueError("SVMPlusSearchCV.fit needs X_privileged, the privileged features of the training "
                             "points (for a search without them use SpanSearchCV)")
        X_priv = check_array(X_privileged, ensure_2d=False, dtype=np.float64, input_name="X_privileged")
        X_priv = X_priv[:, None] if X_priv.ndim == 1 else X_priv
        if X_priv.shape[0] != X.shape[0]:
            raise ValueError(f"X_privileged must have one row per training point ({X.shape[0]}), got shape "
                             f"{X_priv.shape}")
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(f"SVM+ is binary: y must hold exactly two classes, got {classes.size} "
                             f"({classes[:5].tolist()})")
        if heldout is not None:
            X_held, y_held = heldout
            X_held = check_array(X_held, dtype=np.float64, input_name="heldout X")
            y_held = np.asarray(y_held)
            if y_held.shape != (X_held.shape[0],) or not np.isin(y_held, classes).all():
                raise ValueError(f"heldout y must have one label of {classes.tolist()} per heldout row")
            heldout = (X_held, y_held)
        return X, y, X_priv, heldout
