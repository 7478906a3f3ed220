"""The kernel row cache (``kernels.RBFRows.cached``) and ``SpanSearchCV(cache_size=...)`` on it (issue 45, items 1-2).

Ground truths: the whole kernel (``rbf_kernel``) for the rows; scikit-learn's SVC (LIBSVM) for the models trained on
the cache; the search on the whole kernel for every number of the search on the cache.

- rows equal the whole kernel's to ``ROW_CACHE_RTOL`` (another BLAS summation order of the inner products), the
  diagonal exactly 1; the cache holds at most its slots, evicts the least recently used row, never a row another
  thread is reading;
- SMO on the cache (cold and warm along C) equals SVC's dual coefficients and decision values to LIBSVM's float
  cache (``DECISION_ATOL``), with rows evicted and recomputed;
- a search on a cache far smaller than l x l gives the whole-kernel search's cv_results_ (every criterion the cache
  can compute, the held-out error, the training score) and its choice;
- its peak memory (a subprocess, VmHWM) stays far below the 16 l^2 bytes of the whole-kernel search and within its
  estimate;
- with many features a missed row is computed in a block with other rows of the solver's problem, the same values;
- the one-vs-one machines of more classes on the cache equal SVC's, and their search equals the whole-kernel
  search's (the span-rule to 1e-9: the same counts), the span-rule's blocks of bounded SVs included;
- K-fold CV and the exact LOO on the cache (two and three classes) equal SVC's folds and retrainings and the
  whole-kernel search's;
- what the cache cannot run is refused, naming the criterion or the setting, before any kernel is computed.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC

import wsvm_span as ws
from wsvm_span import multiclass as mc
from wsvm_span.kernels import (ROW_BATCH_MIN_FEATURES, ROW_BATCH_SLOT_FRACTION, RBFRows, cache_rows,
                               class_max_squared_distances, max_squared_distance, squared_distances)
from wsvm_span.model_selection import _multiclass as multiclass_search
from wsvm_span.model_selection._multiclass import OneVsOneKernels
from wsvm_span.multiclass import estimates as mc_estimates
from wsvm_span.multiclass import model as mc_model
from wsvm_span.multiclass import resampling as mc_resampling
from wsvm_span.span import geometry as span_geometry
from wsvm_span.model_selection import SearchMemoryError, SpanSearchCV
from wsvm_span.model_selection import _search as search_module
from wsvm_span.model_selection._memory import MB

#: a cached row against the whole kernel's: the inner products of a block (GEMM or GEMV on a few rows) are summed
#: in another order than the l x l GEMM's, a few ulps of ||x||^2 apart; exp turns that into a relative error of
#: gamma * (a few ulps of ||x_i||^2 + ||x_j||^2), below 1e-12 on these data (measured: 4e-15)
ROW_CACHE_RTOL = 1e-12
#: SVC against SMO on the cache, both at TIGHT_TOL: LIBSVM caches the kernel as float, which moves f by up to ~1e-4
#: at C = 128 (measured 8e-5); the dual coefficients by as much relative to C
DECISION_ATOL = 1e-3
TIGHT_TOL = 1e-7
#: the search's tolerance (SpanSearchCV's default template)
TOL = 1e-5


def _problem(n=300, d=6, seed=3):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=seed)
    return X, y


def _mb(rows: int, l: int) -> float:
    return rows * l * 8 / MB


# ------------------------------------------------------------------------------------------- the cache itself
def test_cached_rows_equal_the_whole_kernel_and_evict_the_least_recently_used():
    X, _ = _problem(120, 5, 0)
    X[7] = X[11]  # a duplicate: a zero distance off the diagonal
    for gamma in (1e-3, 0.3, 4.0):
        full = ws.rbf_kernel(X, gamma=gamma)
        K = RBFRows.cached(X, gamma, cache_mb=_mb(4, 120))
        assert K.n_slots == 4 and K.slots.shape == (4, 120) and not K.in_place
        block = K.block(np.arange(120))
        np.testing.assert_allclose(block, full, rtol=ROW_CACHE_RTOL, atol=0)
        assert np.array_equal(np.diag(block), np.ones(120))
        assert block[7, 11] == 1.0  # the duplicate, clipped at 0 as squared_distances clips it
        # the solver's reads: rows 0..3 fill the slots, 0 again is a hit, 4 evicts the least recently used (1)
        for r in (0, 1, 2, 3, 0):
            K.row_address(r)
        assert K.rows_computed - 120 == 4  # the block above was not cached: only the four reads computed rows
        K.row_address(4)
        assert K.slot_of[1] == -1 and (K.slot_of[[0, 2, 3, 4]] >= 0).all()
        for r in (0, 2, 3, 4):
            np.testing.assert_allclose(K.slots[K.slot_of[r]], full[r], rtol=ROW_CACHE_RTOL, atol=0)
        np.testing.assert_allclose(K.expansion(np.arange(5.0), [3, 9, 50, 7, 11], rows=[1, 7, 119]),
                                   np.arange(5.0) @ full[np.ix_([3, 9, 50, 7, 11], [1, 7, 119])],
                                   rtol=ROW_CACHE_RTOL)
    assert max_squared_distance(X) == pytest.approx(float(squared_distances(X).max()), rel=ROW_CACHE_RTOL)
    assert cache_rows(120, 1e-9) == 4 and cache_rows(120, 1.0) == 120
    with pytest.raises(ValueError, match="row cache does not hold"):
        K.complete()
    with pytest.raises(ValueError, match="cache_mb"):
        RBFRows.cached(X, 0.3, cache_mb=0)


def test_a_row_another_thread_reads_is_never_evicted():
    X, _ = _problem(60, 4, 1)
    K = RBFRows.cached(X, 0.5, cache_mb=_mb(4, 60))
    full = ws.rbf_kernel(X, gamma=0.5)
    address = K.row_address(0)  # this thread's pin
    other = threading.Thread(target=lambda: [K.row_address(r) for r in range(1, 30)])
    other.start()
    other.join()
    assert K.slot_of[0] >= 0
    row = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_double * 60).from_address(address))
    np.testing.assert_allclose(row, full[0], rtol=ROW_CACHE_RTOL, atol=0)


@pytest.mark.parametrize("gamma", [0.05, 0.5])
def test_smo_on_the_cache_equals_svc(gamma):
    X, y = _problem()
    y_pm = np.where(y == 1, 1.0, -1.0)
    l = y.size
    K = RBFRows.cached(X, gamma, cache_mb=_mb(20, l))
    previous = None
    for C in (128.0, 8.0, 0.5):  # down the C axis, each from the previous solution (the search's walk)
        start = None if previous is None else ws.engines.warm_start.rescaled_start(
            ws.engines.warm_start.Solved.from_model(previous), np.full(l, C), K)
        model = ws.fit_svm(K, y_pm, np.full(l, C), engine="smo", tol=TIGHT_TOL, check_input=False, alpha0=start)
        svc = SVC(C=C, gamma=gamma, tol=TIGHT_TOL).fit(X, y)
        assert np.abs(model.decision_train - svc.decision_function(X)).max() <= DECISION_ATOL
        alpha = np.zeros(l)
        alpha[svc.support_] = np.abs(svc.dual_coef_[0])
        assert np.abs(model.alpha - alpha).max() <= DECISION_ATOL * C
        previous = model
    assert K.rows_computed > l  # 20 slots for 300 rows: rows were evicted and computed again


def test_with_many_features_a_miss_computes_a_block_of_the_problems_rows():
    # from ROW_BATCH_MIN_FEATURES features a missed row comes with other absent rows of the solver's problem (one
    # GEMM); SMO on such a cache still equals SVC
    X, y = make_classification(n_samples=200, n_features=ROW_BATCH_MIN_FEATURES, n_informative=5, flip_y=0.1,
                               random_state=18)
    K = RBFRows.cached(X, 0.01, cache_mb=_mb(40, 200))
    assert K.batch == 40 // ROW_BATCH_SLOT_FRACTION
    problem = np.arange(100, 150)
    with K.reading(problem):
        K.row_address(120)
    held = np.flatnonzero(K.slot_of >= 0)
    assert 120 in held and held.size == K.batch and np.isin(held, problem).all()
    full = ws.rbf_kernel(X, gamma=0.01)
    np.testing.assert_allclose(K.block(held), full[held], rtol=ROW_CACHE_RTOL, atol=0)
    y_pm = np.where(y == 1, 1.0, -1.0)
    for C in (64.0, 1.0):
        model = ws.fit_svm(K, y_pm, np.full(200, C), engine="smo", tol=TIGHT_TOL, check_input=False)
        svc = SVC(C=C, gamma=0.01, tol=TIGHT_TOL).fit(X, y)
        assert np.abs(model.decision_train - svc.decision_function(X)).max() <= DECISION_ATOL
    assert RBFRows.cached(X[:, :ROW_BATCH_MIN_FEATURES - 1], 0.01, cache_mb=_mb(40, 200)).batch == 1


# ------------------------------------------------------------------------------------------------- the search
def _spy_caches(monkeypatch):
    made = []
    original = RBFRows.cached.__func__

    def cached(cls, *args, **kwargs):
        made.append(original(cls, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(RBFRows, "cached", classmethod(cached))
    return made


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_search_on_the_cache_equals_the_search_on_the_whole_kernel(monkeypatch, n_jobs):
    X, y = _problem(320, 8, 5)
    X_test, y_test = _problem(200, 8, 6)
    grid = {"C": [0.5, 4.0, 32.0, 256.0], "gamma": [0.02, 0.1, 0.5]}
    options = dict(param_grid=grid, extra_criteria=("xi_alpha_bound", "sv_count_bound"), refit=True,
                   return_train_score=True, error_score="raise", n_jobs=n_jobs)
    whole = SpanSearchCV(**options).fit(X, y, heldout=(X_test, y_test))
    made = _spy_caches(monkeypatch)
    rows = SpanSearchCV(cache_size=_mb(25, 320), **options).fit(X, y, heldout=(X_test, y_test))
    assert len(made) >= 1 and all(K.n_slots == 25 for K in made)
    assert sum(K.rows_computed for K in made) > 3 * 320  # rows evicted and recomputed on every gamma
    l = y.size
    for key in ("span_rule", "xi_alpha_bound", "sv_count_bound", "split0_train_score"):
        # counts of points: a margin within rounding of its threshold may flip one point (none did when measured)
        assert np.abs(rows.cv_results_[key] - whole.cv_results_[key]).max() <= 1.0 / l, key
    assert np.abs(rows.cv_results_["test_error"] - whole.cv_results_["test_error"]).max() <= 1.0 / y_test.size
    for key in ("n_sv", "n_inbound", "n_bounded"):
        assert np.abs(rows.cv_results_[key].astype(float) - whole.cv_results_[key].astype(float)).max() <= 1
    assert rows.best_params_ == whole.best_params_ and rows.best_index_ == whole.best_index_
    assert np.array_equal(rows.predict(X_test), whole.predict(X_test))


def _classes(n, seed, k=4):
    return make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0, n_classes=k,
                               n_clusters_per_class=1, flip_y=0.1, random_state=seed)


def test_one_vs_one_machines_on_the_cache_equal_svc():
    X, y = _classes(240, 12)
    l = y.size
    K = RBFRows.cached(X, 0.3, cache_mb=_mb(15, l))
    previous = None
    for C in (64.0, 2.0):  # down the C axis, each machine from the previous model's (the search's walk)
        model = mc.fit_one_vs_one(K, y, np.full(l, C), engine="smo", tol=TIGHT_TOL, warm_from=previous)
        svc = SVC(C=C, gamma=0.3, tol=TIGHT_TOL, decision_function_shape="ovo").fit(X, y)
        # SVC's ovo columns are LIBSVM's machines in the same order, positive for the first class of the pair
        assert np.abs(model.decision_train - svc.decision_function(X).T).max() <= DECISION_ATOL
        assert np.array_equal(model.support, np.sort(svc.support_))  # SVC lists them class by class
        previous = model
    assert K.rows_computed > l  # 15 slots for 240 rows: rows evicted and computed again


@pytest.mark.parametrize("native_max,n_jobs", [(64, 1), (0, 2)])
def test_one_vs_one_search_on_the_cache_equals_the_search_on_the_whole_kernel(monkeypatch, native_max, n_jobs):
    # the bounded SVs' spans in blocks of 7 (each with the in-bound block), through the compiled spans (every
    # machine's n* <= 64 here) or, native_max=0, through the factorization shared by the blocks; the whole-kernel
    # search takes the same route. n_jobs=2: the two gammas' kernels at once, each thread on its own cache
    monkeypatch.setattr(mc_estimates, "SPAN_BLOCK_ROWS", 7)
    monkeypatch.setattr(mc_estimates, "NATIVE_SPAN_MAX_INBOUND", native_max)
    monkeypatch.setattr(span_geometry, "NATIVE_SPAN_MAX_INBOUND", native_max)
    # the decision values from a few SVs' rows at a time, the held-out votes from a few held-out rows at a time
    monkeypatch.setattr(mc_model, "_BLOCK_ELEMENTS", 20 * 360)
    monkeypatch.setattr(multiclass_search, "_BLOCK_ELEMENTS", 2_000)
    X, y = _classes(360, 13)
    X_test, y_test = _classes(150, 14)
    grid = {"C": [0.5, 8.0, 128.0], "gamma": [0.05, 0.5]}
    options = dict(param_grid=grid, extra_criteria=("xi_alpha_bound", "sv_count_bound"), return_train_score=True,
                   error_score="raise")
    whole = SpanSearchCV(**options).fit(X, y, heldout=(X_test, y_test))
    made = _spy_caches(monkeypatch)
    rows = SpanSearchCV(cache_size=_mb(20, 360), n_jobs=n_jobs, **options).fit(X, y, heldout=(X_test, y_test))
    assert len(made) == 2 and sum(K.rows_computed for K in made) > 2 * 360  # rows evicted and recomputed
    for key in ("span_rule", "xi_alpha_bound", "sv_count_bound", "split0_train_score", "test_error"):
        np.testing.assert_allclose(rows.cv_results_[key], whole.cv_results_[key], rtol=0, atol=1e-9, err_msg=key)
    for key in ("n_sv", "n_inbound", "n_bounded"):
        assert np.array_equal(rows.cv_results_[key], whole.cv_results_[key]), key
    assert rows.best_params_ == whole.best_params_
    assert np.array_equal(rows.predict(X_test), whole.predict(X_test))


def test_a_machine_whose_span_rule_does_not_fit_is_refused_before_it_allocates():
    X, y = _classes(200, 15, k=3)
    class_index = np.unique(y, return_inverse=True)[1]
    K = RBFRows.cached(X, 0.5, cache_mb=_mb(10, 200))
    wanted = {"span_rule", "xi_alpha_bound", "sv_count_bound"}
    kernels = OneVsOneKernels(K, None, class_index=class_index, wanted=wanted, folds=None,
                              max_d2=class_max_squared_distances(X, class_index), point_budget=1000)
    np.testing.assert_allclose(kernels.radius2, mc.machine_radius2(ws.rbf_kernel(X, gamma=0.5), class_index),
                               rtol=ROW_CACHE_RTOL)
    model = kernels.fit_model(class_index, np.full(200, 4.0), TOL, "smo")
    with pytest.raises(SearchMemoryError, match="span-rule on a machine of"):
        kernels.estimates(model, wanted, None)
    kernels.point_budget = None
    assert kernels.estimates(model, wanted, None)["span_rule"] == mc.span_rule(model, ws.rbf_kernel(X, gamma=0.5))


def _svc_cv_error(X, y, params, folds=5) -> float:
    """GridSearchCV's folds (StratifiedKFold, SpanSearchCV's cv=5) trained by SVC at TIGHT_TOL: the fraction of the
    l points that their fold's model votes wrong."""
    from sklearn.model_selection import StratifiedKFold

    wrong = 0
    for train, held in StratifiedKFold(folds).split(X, y):
        svc = SVC(tol=TIGHT_TOL, **params).fit(X[train], y[train])
        wrong += int(np.sum(svc.predict(X[held]) != y[held]))
    return wrong / y.size


@pytest.mark.parametrize("k", [2, 3])
def test_kfold_cv_on_the_cache_equals_svc_folds_and_the_whole_kernel(monkeypatch, k):
    # the folds train on the cache's rows restricted to their training points (two classes: warm-started from the
    # point's model and along the walk; more: each fold's machines on a row cache of its own), with evictions
    # the held-out votes in blocks of a few columns (the whole-kernel search's too: each column on its own)
    monkeypatch.setattr(mc_resampling, "_BLOCK_ELEMENTS", 2_000)
    X, y = _classes(240, 16, k=k)
    grid = {"C": [0.5, 16.0], "gamma": [0.1, 1.0]}
    options = dict(estimator=SVC(tol=TIGHT_TOL), param_grid=grid, criterion="cv_error",
                   extra_criteria=("span_rule",), refit=False, error_score="raise")
    whole = SpanSearchCV(**options).fit(X, y)
    made = _spy_caches(monkeypatch)
    rows = SpanSearchCV(cache_size=_mb(15, 240), **options).fit(X, y)
    assert len(made) >= 2 and made[0].n_slots == 15 and made[0].rows_computed > 240
    for key in ("cv_error", "span_rule"):
        np.testing.assert_allclose(rows.cv_results_[key], whole.cv_results_[key], rtol=0, atol=1e-9, err_msg=key)
    oracle = np.array([_svc_cv_error(X, y, params) for params in rows.cv_results_["params"]])
    # LIBSVM's float kernel moves f by up to DECISION_ATOL: a held-out point that near 0 may flip (none did here)
    np.testing.assert_allclose(rows.cv_results_["cv_error"], oracle, rtol=0, atol=1e-9)
    assert rows.best_params_ == whole.best_params_


def _svc_loo_error(X, y, params) -> float:
    """The exact leave-one-out error by SVC at TIGHT_TOL: l trainings, each without one point."""
    wrong = 0
    for p in range(y.size):
        rest = np.delete(np.arange(y.size), p)
        wrong += int(SVC(tol=TIGHT_TOL, **params).fit(X[rest], y[rest]).predict(X[p:p + 1])[0] != y[p])
    return wrong / y.size


@pytest.mark.parametrize("k", [2, 3])
def test_exact_loo_on_the_cache_equals_svc_and_the_whole_kernel(monkeypatch, k):
    # each retraining on the cache's rows without the point (two classes: from the margin system or the model
    # without it; more: each machine's on a row cache of its points), with evictions
    X, y = _classes(90, 17, k=k)
    grid = {"C": [1.0, 32.0], "gamma": [0.3]}
    options = dict(estimator=SVC(tol=TIGHT_TOL), param_grid=grid, criterion="loo_error",
                   extra_criteria=("span_rule",), refit=False, error_score="raise")
    whole = SpanSearchCV(**options).fit(X, y)
    made = _spy_caches(monkeypatch)
    rows = SpanSearchCV(cache_size=_mb(10, 90), **options).fit(X, y)
    assert made and made[0].n_slots == 10 and made[0].rows_computed > 90
    for key in ("loo_error", "span_rule"):
        np.testing.assert_allclose(rows.cv_results_[key], whole.cv_results_[key], rtol=0, atol=1e-9, err_msg=key)
    oracle = np.array([_svc_loo_error(X, y, params) for params in rows.cv_results_["params"]])
    np.testing.assert_allclose(rows.cv_results_["loo_error"], oracle, rtol=0, atol=1e-9)


def test_two_threads_share_one_cache(monkeypatch):
    # one kernel, two walks along C (one per class weighting): n_jobs=2 runs them at once on the same cache
    X, y = _problem(300, 6, 10)
    grid = {"C": [0.5, 8.0, 128.0], "gamma": [0.3], "class_weight": [None, {0: 3.0, 1: 1.0}]}
    whole = SpanSearchCV(param_grid=grid, refit=False, error_score="raise").fit(X, y)
    made = _spy_caches(monkeypatch)
    rows = SpanSearchCV(param_grid=grid, refit=False, error_score="raise", n_jobs=2,
                        cache_size=_mb(12, 300)).fit(X, y)
    assert len(made) == 1 and made[0].rows_computed > 300 and len(made[0]._pins) >= 1
    for key in ("span_rule", "xi_alpha_bound", "sv_count_bound"):
        assert np.abs(rows.cv_results_[key] - whole.cv_results_[key]).max() <= 1.0 / y.size, key
    assert rows.best_params_ == whole.best_params_


def test_tasks_in_other_processes_build_their_own_row_cache(monkeypatch):
    # joblib's loky backend ships each kernel's walks to a process (as dask does): the task computes its row cache
    # from X there; the ground truth is the same search in this process
    from joblib import parallel_config

    X, y = _problem(250, 5, 11)
    grid = {"C": [1.0, 16.0], "gamma": [0.05, 0.5], "class_weight": [None, "balanced"]}
    options = dict(param_grid=grid, refit=False, error_score="raise", cache_size=_mb(10, 250))
    here = SpanSearchCV(**options).fit(X, y)
    with parallel_config(backend="loky"):
        spread = SpanSearchCV(n_jobs=2, **options).fit(X, y)
    for key in ("span_rule", "xi_alpha_bound", "sv_count_bound", "n_sv"):
        assert np.array_equal(here.cv_results_[key], spread.cv_results_[key]), key
    # the shipped route in this process (threads standing in for the workers): every task builds a cache of that size
    monkeypatch.setattr(search_module, "ships_tasks", lambda backend: True)
    made = _spy_caches(monkeypatch)
    shipped = SpanSearchCV(n_jobs=2, **options).fit(X, y)
    assert len(made) >= 2 and all(K.n_slots == 10 for K in made)
    assert np.array_equal(here.cv_results_["span_rule"], shipped.cv_results_["span_rule"])


def test_cache_is_chosen_where_the_whole_kernel_does_not_fit(monkeypatch, capsys):
    X, y = _problem(2500, 5, 7)
    search = SpanSearchCV(param_grid={"C": [1.0], "gamma": [0.2]}, refit=False, verbose=1)
    whole_mb = search.memory_estimate(X, y).mb
    small = SpanSearchCV(SVC(tol=TOL, cache_size=4), param_grid={"C": [1.0], "gamma": [0.2]}, refit=False,
                         verbose=1)
    row_estimate = small.set_params(max_memory=whole_mb - 1).memory_estimate(X, y)
    assert any(term.name == "row cache" for term in row_estimate.search) and row_estimate.mb < whole_mb
    made = _spy_caches(monkeypatch)
    small.fit(X, y)
    assert len(made) == 1 and made[0].cache_mb == 4  # the template's cache_size
    assert "row cache(s) of 4 MB" in capsys.readouterr().out
    full = search.set_params(max_memory=None).fit(X, y)
    assert abs(small.cv_results_["span_rule"][0] - full.cv_results_["span_rule"][0]) <= 1.0 / y.size


def test_the_row_cache_estimate_grows_as_l_not_l_squared():
    from wsvm_span.model_selection._memory import search_memory

    small, large = (search_memory(l, 20, cache_mb=200, n_kernels=4) for l in (30_000, 60_000))
    assert all("l x l" not in t.name and t.name not in ("squared distances", "training kernel") for t in large.search)
    assert large.mb < 1_000  # the whole kernel's search at 60,000 points: ~275 GB (docs/selecting.md)
    # doubling l adds the terms of l (X, the models, the cache's rows being longer but fewer): far below 4x
    assert large.nbytes < 1.5 * small.nbytes
    row_cache = {t.name: t.nbytes for t in large.search}["row cache"]
    assert row_cache == cache_rows(60_000, 200) * 60_000 * 8 <= 200 * MB
    # MNIST's 60,000 digits: 45 one-vs-one machines, their decision values 45 x l per model, still O(l d + cache)
    digits = search_memory(60_000, 784, class_sizes=[6_000] * 10, cache_mb=200, n_kernels=4)
    binary = search_memory(60_000, 784, cache_mb=200, n_kernels=4)
    models = [{t.name: t.nbytes for t in estimate.search}["models"] for estimate in (digits, binary)]
    assert models[0] == 45 * models[1]
    assert digits.mb < 2_000


# --------------------------------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("options,match", [
    (dict(criterion="span_bound"), "criterion 'span_bound' needs the whole kernel: its D"),
    (dict(param_grid={"C": [1.0], "kernel": ["linear", "rbf"]}), r"kernels are \['linear', 'rbf'\]"),
    (dict(engine="sklearn"), "engine='sklearn' trains on a whole kernel"),
    (dict(estimator=SVC(kernel="precomputed"), param_grid={"C": [1.0]}), "computes RBF rows from the features"),
])
def test_what_the_cache_cannot_run_is_refused_before_any_kernel(monkeypatch, options, match):
    X, y = _problem(80, 4, 2)
    if "estimator" in options:
        X = ws.rbf_kernel(X, gamma=0.1)

    def no_kernels(*args, **kwargs):
        raise AssertionError("a kernel was computed before the refusal")

    monkeypatch.setattr(search_module, "_Kernels", no_kernels)
    options = {"param_grid": {"C": [1.0], "gamma": [0.1]}, **options}
    with pytest.raises(ValueError, match=match):
        SpanSearchCV(cache_size=1, **options).fit(X, y)


def test_a_whole_kernel_refusal_says_why_the_cache_cannot_run_it():
    X, y = _problem(2000, 4, 4)
    with pytest.raises(SearchMemoryError, match="Nor can it run on a row cache .*criterion 'span_bound'"):
        SpanSearchCV(param_grid={"C": [1.0], "gamma": [0.1]}, criterion="span_bound", max_memory=50).fit(X, y)


def test_a_point_whose_span_rule_does_not_fit_is_refused_before_it_allocates():
    X, y = _problem(200, 4, 8)
    y_pm = np.where(y == 1, 1.0, -1.0)
    K = RBFRows.cached(X, 0.5, cache_mb=_mb(10, 200))
    kernels = search_module._SharedKernel(K, None, wanted={"span_rule", "xi_alpha_bound", "sv_count_bound"},
                                          folds=None, max_d2=max_squared_distance(X), point_budget=1000)
    model = kernels.fit_model(y_pm, np.full(200, 4.0), TOL, "smo")
    assert model.inbound.size > 0
    with pytest.raises(SearchMemoryError, match=f"span-rule on {model.inbound.size} in-bound SVs"):
        kernels.estimates(model, {"span_rule", "xi_alpha_bound", "sv_count_bound"}, None)
    kernels.point_budget = None
    assert kernels.estimates(model, {"span_rule"}, None)["span_rule"] == ws.span_rule(
        model, ws.rbf_kernel(X, gamma=0.5))


# ------------------------------------------------------------------------------------------------ peak memory
_PEAK = textwrap.dedent("""
    import json, sys
    from sklearn.datasets import make_classification
    from threadpoolctl import threadpool_limits
    from wsvm_span.engines.measure import peak_rss_reset, peak_rss_since
    from wsvm_span.model_selection import SpanSearchCV
    from wsvm_span.model_selection._memory import row_point_bytes

    l, cache, k = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    X, y = make_classification(n_samples=l, n_features=10, n_informative=5, n_classes=k, flip_y=0.05, random_state=0)
    search = SpanSearchCV(param_grid={"C": [8.0, 1.0], "gamma": [0.05]}, cache_size=cache, refit=False)
    estimate = search.memory_estimate(X, y).nbytes
    base = peak_rss_reset()
    with threadpool_limits(1):
        search.fit(X, y)
    # the estimate counts a point's span-rule blocks at n* = 0; each point checks its own against the limit (more
    # classes: its largest machine's, at most the points that are an in-bound SV of any machine, cv_results_'s count)
    points = max(row_point_bytes(int(i), int(b)) for i, b in zip(search.cv_results_["n_inbound"],
                                                                  search.cv_results_["n_bounded"]))
    print(json.dumps({"grown": peak_rss_since(base) * 2**20, "estimate": estimate,
                      "with_points": estimate - row_point_bytes(0) + max(points, row_point_bytes(0)),
                      "span_rule": search.cv_results_["span_rule"].tolist()}))
""")


def _peak(l: int, cache_mb: float, n_classes: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _PEAK, str(l), str(cache_mb), str(n_classes)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("l,cache_mb,n_classes", [(6000, 10, 2), (8000, 10, 10),
                                                  pytest.param(60_000, 50, 2, marks=pytest.mark.slow)])
def test_peak_memory_stays_far_below_the_whole_kernel(l, cache_mb, n_classes):
    got = _peak(l, cache_mb, n_classes)
    grown = got["grown"]  # VmHWM during fit less the resident size before it (engines.measure)
    assert grown > 0
    # the whole-kernel search holds the squared distances and the kernel: 16 l^2 bytes
    assert grown < 16 * l * l / 4
    # the memory model the search enforces: its estimate, with each point's span-rule at the point's own n*
    assert grown <= got["with_points"]
    assert all(0.0 <= v < 0.5 for v in got["span_rule"])


# ------------------------------------------------------------------------------------------ wsvm-span select
def test_select_takes_a_row_cache(tmp_path, capsys):
    from wsvm_span.cli import main

    X, y = _problem(150, 4, 9)
    path = tmp_path / "train.txt"
    path.write_text("".join(f"{int(label) * 2 - 1:+d} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row))
                            + "\n" for row, label in zip(X, y)))
    grid = ["-log2c", "0,3,3", "-log2g", "-3,-1,2", "-png", "null", "-out", "null"]
    rates = []
    for extra in ([], ["--cache-size", "0.05"]):
        assert main(["select", str(path), *grid, *extra]) == 0
        out, err = capsys.readouterr()
        assert ("row cache" in err.split("\n")[0]) == bool(extra)
        rates.append(out.strip().splitlines()[-1])  # "c g rate" of the selection
    assert rates[0] == rates[1]
