"""The RBF kernel computed row by row on demand (``kernels.RBFRows``) against the whole kernel.

- every row it computes equals ``rbf_kernel``'s bit for bit, and so does R^2 from the largest distance;
- the SMO solver on it equals the solver on the whole kernel bit for bit (cold, warm, on rows of it), reads
  only rows it computed (the buffer starts as NaN: a read of any other row would make NaN of the answer),
  and leaves rows uncomputed;
- ``SpanSearchCV`` (engine "smo", which uses it) gives every number of the search on the whole kernel, and
  LIBSVM's from zero, with the buffer poisoned by NaN.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.svm import SVC

import wsvm_span as ws
from conftest import make_problem
from wsvm_span.engines.smo import smo_solve
from wsvm_span.engines.warm_start import Solved, rescaled_start, restricted_start
from wsvm_span.kernels import RBFRows, squared_distances
from wsvm_span.model_selection import SpanSearchCV
from wsvm_span.model_selection import _search as search_module

TOL = 1e-5


class PoisonedRows(RBFRows):
    """Every entry NaN until its row is computed (the diagonal excepted, which is valid from the start)."""

    def __init__(self, D2, gamma, out=None, *, unset=None):
        super().__init__(D2, gamma, out, unset=np.nan)


def test_rows_equal_the_whole_kernel_bit_for_bit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(70, 6)) * rng.uniform(0.1, 3.0, size=6)
    X[5] = X[9]  # a duplicate: a zero distance off the diagonal
    D2 = squared_distances(X)
    for gamma in (1e-3, 0.07, 2.0):
        full = ws.rbf_kernel(X, gamma=gamma)
        K = RBFRows(D2, gamma, unset=np.nan)
        assert np.array_equal(np.diag(K.array), np.ones(70))
        rows = [3, 3, 40, 69, 0]
        got = K.rows(rows)
        assert np.array_equal(got[rows], full[rows])
        assert np.flatnonzero(K.computed).tolist() == [0, 3, 40, 69]
        others = np.setdiff1d(np.arange(70), rows)
        assert np.isnan(got[others][:, :5]).any()  # the rows not asked for were not computed
        K.fill_row(7)
        assert np.array_equal(K.array[7], full[7])
        assert np.array_equal(K.complete(), full)
        assert K.radius2(float(D2.max())) == ws.kernel_radius2(full)
    with pytest.raises(ValueError, match="gamma"):
        RBFRows(D2, 0.0)


@pytest.mark.parametrize("seed,l,weighting", [(0, 80, "class"), (1, 120, "instance"), (2, 100, "imbalanced")])
def test_smo_on_rows_on_demand_equals_smo_on_the_whole_kernel(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    D2 = squared_distances(p.X)
    full = ws.rbf_kernel(p.X, gamma=p.gamma)

    # cold on all of K
    for C in (p.C, p.C * 8.0):
        lazy = PoisonedRows(D2, p.gamma)
        cold = smo_solve(full, p.y, C, TOL)
        got = smo_solve(lazy, p.y, C, TOL)
        for x, z in zip(cold[:3], got[:3]):
            assert np.array_equal(x, z)
        assert cold[3] == got[3]
        touched = lazy.computed.astype(bool)
        assert touched[cold[0] > 0].all()  # every support vector's row was read
        assert not np.isnan(got[2]).any()
    assert not touched.all()  # and some rows never were
    # warm along C, with the start's gradient from the neighbour (rows read through kernel_expansion)
    model = ws.fit_svm(full, p.y, p.C * 8.0, engine="smo", tol=TOL, check_input=False)
    lazy = PoisonedRows(D2, p.gamma)
    start_full = rescaled_start(Solved.from_model(model), p.C, full)
    start_lazy = rescaled_start(Solved.from_model(model), p.C, lazy)
    assert np.array_equal(start_full.alpha, start_lazy.alpha)
    assert (start_full.grad is None) == (start_lazy.grad is None)
    if start_full.grad is not None:
        assert np.array_equal(start_full.grad, start_lazy.grad)
    warm = smo_solve(full, p.y, p.C, TOL, alpha0=start_full)
    got = smo_solve(lazy, p.y, p.C, TOL, alpha0=start_lazy)
    for x, z in zip(warm, got):
        assert np.array_equal(x, z) if isinstance(x, np.ndarray) else x == z
    # a CV fold: rows of the kernel, from the full model
    keep = np.arange(l)[np.arange(l) % 5 != 0]
    lazy = PoisonedRows(D2, p.gamma)
    start = restricted_start(Solved.from_model(model), keep)
    fold = smo_solve(full, p.y[keep], p.C[keep], TOL, alpha0=start, rows=keep)
    got = smo_solve(lazy, p.y[keep], p.C[keep], TOL, alpha0=start, rows=keep)
    for x, z in zip(fold, got):
        assert np.array_equal(x, z) if isinstance(x, np.ndarray) else x == z


def test_a_failing_row_fill_is_raised_not_used():
    p = make_problem(0, 60)

    class Failing(RBFRows):
        def fill_row(self, row):
            raise MemoryError(f"row {row}")

    with pytest.raises(MemoryError, match="row"):
        smo_solve(Failing(squared_distances(p.X), p.gamma), p.y, p.C, TOL)


def _fit(monkeypatch, rows_class, X, y, grid, **options):
    """SpanSearchCV with the on-demand kernel of ``rows_class``, or (None) on the whole kernel."""
    with monkeypatch.context() as m:
        if rows_class is None:
            class WholeKernel(search_module._Kernels):
                def __init__(self, X, X_held, specs, *, on_demand=False, **options):
                    super().__init__(X, X_held, specs, on_demand=False, **options)

            m.setattr(search_module, "_Kernels", WholeKernel)
        else:
            m.setattr(search_module, "RBFRows", rows_class)
        return SpanSearchCV(SVC(tol=TOL), grid, refit=False, error_score="raise", **options).fit(
            X, y, heldout=(X[:40], y[:40]))


@pytest.mark.parametrize("n,d,seed,extra", [(150, 4, 0, ()), (150, 4, 0, ("cv_error", "span_bound")),
                                             (260, 20, 1, ()), (200, 2, 2, ())])
def test_search_on_demand_equals_the_whole_kernel(monkeypatch, n, d, seed, extra):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=min(d, 3), n_redundant=0, flip_y=0.1,
                               random_state=seed)
    grid = {"C": list(2.0 ** np.arange(-1, 12, 2)), "gamma": list(2.0 ** np.arange(-7, 1, 2) / d),
            "class_weight": [None, "balanced"]}
    created = []

    class Counted(PoisonedRows):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            created.append(self)

    lazy = _fit(monkeypatch, Counted, X, y, grid, extra_criteria=extra)
    whole = _fit(monkeypatch, None, X, y, grid, extra_criteria=extra)
    assert len(created) == len(grid["gamma"])
    if not extra:  # the span-rule alone reads a part of the kernel at some gamma
        assert any(not K.computed.all() for K in created)
    keys = ["span_rule", "xi_alpha_bound", "sv_count_bound", "n_sv", "n_inbound", "n_bounded", "test_error",
            "mean_test_score", "rank_test_score", *extra]
    for key in keys:
        np.testing.assert_array_equal(lazy.cv_results_[key], whole.cv_results_[key], err_msg=key)
    assert lazy.best_index_ == whole.best_index_
    # and LIBSVM from zero, at a tolerance where the two trainers' models agree up to the points on the margin
    if seed == 0:
        tight = SpanSearchCV(SVC(tol=1e-7), grid, refit=False, error_score="raise", extra_criteria=extra)
        with monkeypatch.context() as m:
            m.setattr(search_module, "RBFRows", PoisonedRows)
            smo = clone(tight).fit(X, y)
        libsvm = clone(tight).set_params(engine="sklearn").fit(X, y)
        assert smo.best_index_ == libsvm.best_index_
        for key in ("n_sv", "n_bounded"):
            np.testing.assert_array_equal(smo.cv_results_[key], libsvm.cv_results_[key], err_msg=key)
        # two tol-accurate solutions may put a point of the margin on either side (docs/engines.md: the
        # estimates differ on a few of a grid's points between the engines, with or without this kernel:
        # here the span-rule on one of 56, a fold's CV error on one)
        for key in ("span_rule", *(c for c in extra if c != "span_bound")):  # the bound is not a count
            assert np.sum(smo.cv_results_[key] != libsvm.cv_results_[key]) <= 2, key


@pytest.mark.parametrize("n_jobs", [2, 4])
def test_threads_filling_one_kernel_give_the_serial_search(monkeypatch, n_jobs):
    """n_jobs=2: the walks of one gamma run in threads that fill rows of one shared kernel (the fill is locked:
    a row is never rewritten while another thread reads it); n_jobs=4: the four gammas at once, each its own."""
    X, y = make_classification(n_samples=300, n_features=6, flip_y=0.1, random_state=4)
    grid = {"C": list(2.0 ** np.arange(-1, 12, 2)), "gamma": list(2.0 ** np.arange(-7, 1, 2) / 6),
            "class_weight": [None, "balanced", {0: 3.0, 1: 1.0}]}
    serial = _fit(monkeypatch, PoisonedRows, X, y, grid)
    with monkeypatch.context() as m:
        m.setattr(search_module, "RBFRows", PoisonedRows)
        threaded = SpanSearchCV(SVC(tol=TOL), grid, refit=False, error_score="raise", n_jobs=n_jobs).fit(
            X, y, heldout=(X[:40], y[:40]))
    for key in ("span_rule", "xi_alpha_bound", "n_sv", "n_bounded", "test_error"):
        np.testing.assert_array_equal(threaded.cv_results_[key], serial.cv_results_[key], err_msg=key)
