"""HalvingSpanSearchCV (successive halving scored by the span-rule) against independent routes.

Ground truths: every stage's span-rule recomputed by the library on that stage's rows (the kernel by
``ws.rbf_kernel``, each model by LIBSVM from zero: ``engine="sklearn"`` in both, so the models are the same
without any warm start, and the span-rule, a count of points, is equal); the survivors recomputed from the stage's
values by the rule as the docs state it (a second implementation, on the C x gamma grid); the stage sizes and the
class counts of the stratified subsamples from their definitions; the final choice against plain ``SpanSearchCV``
over the whole grid at full size.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.datasets import make_classification
from sklearn.svm import SVC

import wsvm_span as ws
from wsvm_span import multiclass as mc
from wsvm_span.model_selection import HalvingSpanSearchCV, SpanSearchCV
from wsvm_span.model_selection._halving import MIN_ROWS_PER_CLASS, stage_sizes, survivors
from wsvm_span.model_selection._search import DEFAULT_TOL

GRID = {"C": [0.5, 2.0, 8.0, 32.0], "gamma": [0.05, 0.2, 0.8]}
#: rows of the problems: 3 stages at factor 3 (50, 150, 450)
L = 450


def problem(n_classes: int, seed: int = 0):
    X, y = make_classification(n_samples=L, n_features=5, n_informative=4, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, flip_y=0.05, random_state=seed)
    return X, y


@pytest.fixture(scope="module", params=[2, 3], ids=["binary", "3-class"])
def fitted(request):
    X, y = problem(request.param)
    search = HalvingSpanSearchCV(param_grid=GRID, random_state=0, engine="sklearn").fit(X, y)
    return X, y, search


def independent_span_rule(X, y, C: float, gamma: float) -> float:
    """The span-rule of SVC's model at (C, gamma) on (X, y), by the library alone (LIBSVM from zero)."""
    K = ws.rbf_kernel(X, gamma=gamma)
    classes, index = np.unique(y, return_inverse=True)
    C_i = np.full(y.shape[0], C)
    if classes.size == 2:
        model = ws.fit_svm(K, np.where(index == 1, 1.0, -1.0), C_i, engine="sklearn", tol=DEFAULT_TOL)
        return ws.span_rule(model, K)
    return mc.span_rule(mc.fit_one_vs_one(K, index, C_i, engine="sklearn", tol=DEFAULT_TOL), K)


def rows_of_stage(results, stage: int) -> np.ndarray:
    return np.flatnonzero(results["iter"] == stage)


def test_stage_sizes_and_stratified_nested_rows(fitted):
    X, y, search = fitted
    assert search.n_resources_ == [L // 9, L // 3, L] == [int(r.size) for r in search.stage_rows_]
    assert search.n_iterations_ == 3 and search.min_resources_ == L // 9 and search.max_resources_ == L
    np.testing.assert_array_equal(search.stage_rows_[-1], np.arange(L))
    classes, counts = np.unique(y, return_counts=True)
    for smaller, larger in zip(search.stage_rows_, search.stage_rows_[1:]):
        assert np.isin(smaller, larger).all(), "each stage's rows hold the previous stage's"
    for rows in search.stage_rows_:
        # stratified: each class within one row of its share
        share = counts * rows.size / L
        got = np.array([np.sum(y[rows] == c) for c in classes])
        assert np.all(np.abs(got - share) <= 1.0), (got, share)


def test_each_stage_span_rule_equals_the_library_on_that_stage_rows(fitted):
    X, y, search = fitted
    results = search.cv_results_
    for stage, rows in enumerate(search.stage_rows_):
        for i in rows_of_stage(results, stage):
            p = results["params"][i]
            expected = independent_span_rule(X[rows], y[rows], p["C"], p["gamma"])
            assert results["span_rule"][i] == pytest.approx(expected, abs=1e-12), (stage, p)
            assert results["mean_test_score"][i] == pytest.approx(1.0 - expected, abs=1e-12)
            assert results["n_resources"][i] == rows.size


def rule_by_hand(params: list[dict], errors, factor: float) -> list[dict]:
    """The docs' rule on a C x gamma grid: the ceil(n / (2 factor)) lowest errors (ties: candidate order), each
    with the next larger C of its gamma among the stage's candidates."""
    k = math.ceil(len(params) / (2 * factor))
    order = sorted(range(len(params)), key=lambda i: (errors[i], i))[:k]
    kept = [params[i] for i in order]
    for p in list(kept):
        larger = [q for q in params if q["gamma"] == p["gamma"] and q["C"] > p["C"]]
        if larger:
            kept.append(min(larger, key=lambda q: q["C"]))
    return sorted({(q["C"], q["gamma"]) for q in kept})


def test_survivors_follow_the_stated_rule(fitted):
    _, _, search = fitted
    results = search.cv_results_
    for stage in range(search.n_iterations_ - 1):
        here, there = rows_of_stage(results, stage), rows_of_stage(results, stage + 1)
        expected = rule_by_hand([results["params"][i] for i in here], results["span_rule"][here], search.factor)
        got = sorted((results["params"][i]["C"], results["params"][i]["gamma"]) for i in there)
        assert got == expected
    assert search.n_candidates_ == [np.sum(results["iter"] == s) for s in range(search.n_iterations_)]
    assert search.n_candidates_[0] == 12 and search.n_remaining_candidates_ == search.n_candidates_[-1] < 12


def test_final_choice_is_the_full_size_span_rule_over_the_survivors(fitted):
    X, y, search = fitted
    full = SpanSearchCV(param_grid=GRID, engine="sklearn", refit=False).fit(X, y).cv_results_
    results = search.cv_results_
    last = rows_of_stage(results, search.n_iterations_ - 1)
    values = {}
    for i in last:
        p = results["params"][i]
        j = full["params"].index(p)
        assert results["span_rule"][i] == full["span_rule"][j]
        values[i] = results["span_rule"][i]
    best = min(values.values())
    assert search.best_index_ == min(i for i, v in values.items() if v == best)
    assert search.best_params_ == results["params"][search.best_index_]
    assert search.best_score_ == pytest.approx(1.0 - best)
    # the refit model is SVC at the chosen point on all the rows
    assert search.best_estimator_.C == search.best_params_["C"]
    assert search.best_estimator_.gamma == search.best_params_["gamma"]
    assert search.best_estimator_.shape_fit_[0] == L
    np.testing.assert_array_equal(search.predict(X[:20]), search.best_estimator_.predict(X[:20]))


def test_heldout_error_on_the_last_stage_only():
    X, y = problem(2)
    Xt, yt = problem(2, seed=1)
    search = HalvingSpanSearchCV(param_grid=GRID, random_state=0, refit=False).fit(X, y, heldout=(Xt, yt))
    results = search.cv_results_
    last = results["iter"] == search.n_iterations_ - 1
    assert np.isnan(results["test_error"][~last]).all()
    for i in np.flatnonzero(last):
        p = results["params"][i]
        # the model by SVC itself: its held-out error within one test point of the search's SMO model's
        svc = SVC(C=p["C"], gamma=p["gamma"], tol=DEFAULT_TOL).fit(X, y)
        assert abs(results["test_error"][i] - np.mean(svc.predict(Xt) != yt)) <= 1.0 / len(yt) + 1e-12
    assert not hasattr(search, "best_estimator_")


def test_random_state_makes_it_deterministic():
    X, y = problem(2)
    a = HalvingSpanSearchCV(param_grid=GRID, random_state=3, refit=False).fit(X, y)
    b = HalvingSpanSearchCV(param_grid=GRID, random_state=3, refit=False).fit(X, y)
    c = HalvingSpanSearchCV(param_grid=GRID, random_state=4, refit=False).fit(X, y)
    for ra, rb in zip(a.stage_rows_, b.stage_rows_):
        np.testing.assert_array_equal(ra, rb)
    np.testing.assert_array_equal(a.cv_results_["span_rule"], b.cv_results_["span_rule"])
    assert a.cv_results_["params"] == b.cv_results_["params"]
    assert not np.array_equal(a.stage_rows_[0], c.stage_rows_[0])


def test_survivors_by_hand():
    grid = [{"C": c, "gamma": g} for c in (1.0, 4.0, 16.0) for g in (0.1, 1.0)]
    # errors: (1, .1) .30, (1, 1) .10, (4, .1) .20, (4, 1) NaN, (16, .1) .10, (16, 1) .50
    errors = [0.30, 0.10, 0.20, np.nan, 0.10, 0.50]
    # factor 3: ceil(6 / 6) = 1 best, (1, 1) (the first of the tie); its next larger C (4, 1) comes along although
    # it failed here: it is the C the larger sample may prefer
    assert survivors(grid, errors, 3) == [1, 3]
    # factor 1.5: ceil(6 / 3) = 2 best: (1, 1) and (16, .1), which has no larger C
    assert survivors(grid, errors, 1.5) == [1, 3, 4]
    # no C axis: the best only
    assert survivors([{"gamma": 0.1}, {"gamma": 1.0}], [0.2, 0.1], 1.5) == [1]
    with pytest.raises(ValueError, match="every candidate of this stage failed"):
        survivors(grid, [np.nan] * 6, 3)


@pytest.mark.parametrize("l, factor, first, expected", [
    (1300, 3, 144, [144, 433, 1300]),
    (450, 3, 50, [50, 150, 450]),
    (1000, 2, 125, [125, 250, 500, 1000]),
    (1000, 3, 400, [1000]),  # l / 3 < 400: one stage
    (100, 3, 100, [100]),
])
def test_stage_sizes(l, factor, first, expected):
    assert stage_sizes(l, factor, first) == expected


def test_auto_min_resources_keeps_every_class_in_the_first_stage():
    # a class of 30 rows in 450: l / 9 = 50 rows would give it ~3; auto asks for 5 of them (75 rows), so the stages
    # are 450 / 3 and 450
    X, y = problem(2)
    y = y.copy()
    minority = np.flatnonzero(y == 1)[30:]
    y[minority] = 0
    search = HalvingSpanSearchCV(param_grid={"C": [1.0, 4.0], "gamma": [0.2]}, random_state=0, refit=False).fit(X, y)
    assert math.ceil(MIN_ROWS_PER_CLASS * L / 30) == 75
    assert search.n_resources_ == [150, 450]
    assert np.sum(y[search.stage_rows_[0]] == 1) >= MIN_ROWS_PER_CLASS


def test_bad_parameters_are_refused_with_the_way_out():
    X, y = problem(2)
    with pytest.raises(ValueError, match="'factor' parameter"):
        HalvingSpanSearchCV(param_grid=GRID, factor=1).fit(X, y)
    with pytest.raises(ValueError, match=r"min_resources >= \d+"):
        HalvingSpanSearchCV(param_grid=GRID, min_resources=5).fit(X, y)
    with pytest.raises(ValueError, match="more than the 450 training rows"):
        HalvingSpanSearchCV(param_grid=GRID, min_resources=451).fit(X, y)
    with pytest.raises(ValueError, match="'min_resources' parameter"):
        HalvingSpanSearchCV(param_grid=GRID, min_resources="exhaust").fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        HalvingSpanSearchCV(param_grid=GRID).fit(X, np.zeros(L))


def test_clone_and_get_params():
    search = HalvingSpanSearchCV(param_grid=GRID, factor=2, min_resources=60, random_state=1, engine="sklearn")
    copy = clone(search)
    assert copy.get_params() == search.get_params()
    assert is_classifier(copy)
    assert copy.set_params(factor=4).factor == 4 and search.factor == 2
    X, y = problem(2)
    fitted = copy.set_params(factor=2).fit(X, y)
    assert fitted.n_resources_ == [112, 225, 450]
