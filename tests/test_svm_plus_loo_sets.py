"""SVM+'s exact leave-one-out (``svm_plus.leave_one_out``) where its refits are taken from the full model's sets
(``loo.refits_on_the_model_sets``: one inverse, each refit KKT-checked on the problem without its point) and where
they are retrained (``loo.refit_without``): every LOO decision value against SVM+ retrained cold by the QP route
(Clarabel, polished) without that point, an independent solver, on random and degenerate problems."""
from __future__ import annotations

import numpy as np
import pytest

import wsvm_span as ws
from wsvm_span import _native
from wsvm_span._native import ACTIVE_SET_STATUS
from wsvm_span.svm_plus import fit_svm_plus, leave_one_out
from wsvm_span.svm_plus import loo as svm_plus_loo
from wsvm_span.svm_plus.solver import (BLOCK_BACKUP, KKT_TOL, MAX_ACTIVE_SET_ITER, RELEASE_TOL, SVMPlusProblem,
                                       privileged_ridge)

#: A LOO decision value against the cold QP refit's: both are exact solutions of the refit (the QP route's polished
#: to its active sets, each KKT point to KKT_TOL), so they differ by the round-off of their solves (measured on
#: these problems: at most 1.4e-12); 1e-6 is the tolerance of the other exact-LOO tests (tests/test_svm_plus.py).
DECISION_ATOL = 1e-6


def problem(seed: int, l: int = 40, n_positive: int | None = None, duplicates: int = 0):
    """RBF kernels of noisy features and of clean privileged ones. ``n_positive``: that many points of class +1
    (a tiny class); ``duplicates``: that many points repeated with the opposite label (the same features in both
    spaces: a refit's minimiser may not be unique in a there)."""
    rng = np.random.default_rng(seed)
    X_priv = rng.normal(size=(l, 2))
    y = np.where(X_priv[:, 0] + 0.3 * rng.normal(size=l) > 0, 1.0, -1.0)
    if n_positive is not None:
        y[:] = -1.0
        y[:n_positive] = 1.0
    else:
        y[:2] = (1.0, -1.0)
    if duplicates:
        X_priv = np.vstack([X_priv, X_priv[:duplicates]])
        y = np.concatenate([y, -y[:duplicates]])
    X = X_priv + rng.normal(size=X_priv.shape)
    return y, ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(X_priv, gamma=0.5)


def cold_decision(K, K_priv, y, C, gamma, p) -> float:
    """f^p(x_p) of SVM+ trained from scratch by the QP route on every point but p."""
    rest = np.delete(np.arange(y.size), p)
    cold = fit_svm_plus(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], C, gamma, solver="qp")
    return float(cold.decision_function(K[p:p + 1, rest])[0])


CASES = {
    "random": (dict(seed=0), 1.0, 1.0),
    "large C": (dict(seed=1), 64.0, 0.25),
    "small C, every beta_i = 0": (dict(seed=2), 0.05, 2.0),
    "duplicates with opposite labels": (dict(seed=3, l=34, duplicates=6), 4.0, 0.5),
    "a class of three": (dict(seed=4, n_positive=3), 2.0, 1.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_loo_decision_value_is_a_cold_qp_refits(case):
    kwargs, C, gamma = CASES[case]
    y, K, K_priv = problem(**kwargs)
    model = fit_svm_plus(K, K_priv, y, C, gamma)
    loo = leave_one_out(model, K, K_priv)
    assert 0 < loo.retrained.sum() < loo.points.size  # both ways taken (measured: 22-35 of 40 retrained)
    cold = np.array([cold_decision(K, K_priv, y, C, gamma, p) for p in loo.points])
    np.testing.assert_allclose(loo.decision_loo, cold, atol=DECISION_ATOL)
    np.testing.assert_array_equal(y[loo.points] * loo.decision_loo <= 0, y[loo.points] * cold <= 0)
    assert loo.error == np.count_nonzero(y[loo.points] * cold <= 0) / y.size


def test_both_ways_are_taken_and_the_retrained_points_are_the_ones_whose_check_failed(monkeypatch):
    """On a problem where some refits keep the model's sets and others do not: the points taken from the sets
    passed the check, exactly the others were retrained (``loo._refit``, counted), and those others' refits did change
    the sets or failed the check for round-off; both kinds equal cold QP refits
    (``test_every_loo_decision_value_is_a_cold_qp_refits``)."""
    y, K, K_priv = problem(0)
    model = fit_svm_plus(K, K_priv, y, 1.0, 1.0)
    calls = []
    refit = svm_plus_loo._refit

    def spy(model, problem, K, K_priv, p, bordered=None, known=None):
        calls.append(p)
        return refit(model, problem, K, K_priv, p, bordered, known)

    monkeypatch.setattr(svm_plus_loo, "_refit", spy)
    loo = leave_one_out(model, K, K_priv)
    assert 0 < loo.retrained.sum() < loo.points.size
    np.testing.assert_array_equal(calls, loo.points[loo.retrained])
    exact, f, same, _ = svm_plus_loo.refits_on_the_model_sets(
        model, SVMPlusProblem.build(K, K_priv, y, 1.0, 1.0), loo.points)
    np.testing.assert_array_equal(exact, ~loo.retrained)
    np.testing.assert_array_equal(f[exact], loo.decision_loo[exact])
    assert same[exact].all() and not loo.sets_unchanged[loo.retrained].all()


def test_a_lone_point_of_its_class_counts_as_an_error():
    """Without the only point of its class one class is left: no refit, an error (f^p(x_p) = -y_p)."""
    y, K, K_priv = problem(5, l=30, n_positive=1)
    model = fit_svm_plus(K, K_priv, y, 1.0, 1.0)
    loo = leave_one_out(model, K, K_priv)
    t = int(np.flatnonzero(loo.points == 0)[0])
    assert loo.decision_loo[t] == -1.0 and not loo.retrained[t]
    others = np.flatnonzero(loo.points != 0)[:8]
    cold = [cold_decision(K, K_priv, y, 1.0, 1.0, p) for p in loo.points[others]]
    np.testing.assert_allclose(loo.decision_loo[others], cold, atol=DECISION_ATOL)


@pytest.mark.parametrize("why", ["unpolished model", "ridge moves with the point"])
def test_every_point_is_retrained_where_the_model_sets_do_not_serve(why):
    """An unpolished model's sets are its QP solver's rounding, and where the privileged kernel's diagonal is
    uneven (a linear kernel) the ridge, and with it the problem, moves with the point left out: every point is
    then retrained, and the values are still the cold QP refits'."""
    y, K, K_priv = problem(6, l=30)
    if why == "unpolished model":
        model = fit_svm_plus(K, K_priv, y, 1.0, 1.0, solver="qp", polish=False)
    else:
        rng = np.random.default_rng(6)
        X_priv = rng.normal(size=(y.size, 2))
        K_priv = X_priv @ X_priv.T
        model = fit_svm_plus(K, K_priv, y, 1.0, 1.0)
    loo = leave_one_out(model, K, K_priv)
    assert loo.retrained.all()
    cold = [cold_decision(K, K_priv, y, 1.0, 1.0, p) for p in loo.points[:8]]
    # the unpolished model's refits start from its rounded sets but end exact
    np.testing.assert_allclose(loo.decision_loo[:8], cold, atol=DECISION_ATOL)


def test_a_retrained_refit_from_its_known_first_iteration_is_the_refit_from_scratch():
    """``refit_without`` given the minimiser on the model's sets minus p (``refits_on_the_model_sets``' ``first``)
    takes it for its first iteration instead of a solve (one solve fewer, counted by the compiled method) and ends at
    the refit it reaches without it (the same exact zeros, a within 1e-9 C)."""
    y, K, K_priv = problem(1)
    C, gamma = 64.0, 0.25
    model = fit_svm_plus(K, K_priv, y, C, gamma)
    points = svm_plus_loo._points(model)
    exact, _, _, first = svm_plus_loo.refits_on_the_model_sets(
        model, SVMPlusProblem.build(K, K_priv, y, C, gamma), points)
    Z, B = svm_plus_loo.active_sets(model)
    full = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    assert np.count_nonzero(~exact) >= 6
    for j in np.flatnonzero(~exact)[:6]:
        p = points[j]
        rest = np.delete(np.arange(y.size), p)
        known = Z[rest], B[rest], (first[0][rest, j], first[1][rest, j], float(first[2][j]), float(first[3][j]))
        with_known, _ = svm_plus_loo.refit_without(model, K, K_priv, p, known=known)
        alone, _ = svm_plus_loo.refit_without(model, K, K_priv, p)
        np.testing.assert_array_equal(with_known.alpha == 0, alone.alpha == 0)
        np.testing.assert_allclose(with_known.alpha, alone.alpha, atol=1e-9 * C)
        assert with_known.b == pytest.approx(alone.b, abs=1e-9)
        # the compiled method's own count: one solve fewer with the known first iteration, the same iterations
        counts = []
        for first_known in (known, None):
            out = _native_on(full, rest, Z[rest], B[rest], first_known)
            assert ACTIVE_SET_STATUS[out[5]] == "converged"
            counts.append((out[4], out[7]))
        assert counts[0][0] == counts[1][0] and counts[0][1] == counts[1][1] - 1


def _native_on(full: SVMPlusProblem, rest, Z, B, known=None, max_iter=MAX_ACTIVE_SET_ITER,
               block_backup=BLOCK_BACKUP):
    """``_native.svm_plus_active_set`` on the problem without the points off ``rest`` as ``active_set_on`` calls it,
    its raw tuple (with the count of solves)."""
    T_diag = full.priv_diag[rest] / full.gamma
    T_diag += privileged_ridge(full.priv_diag[rest]) / full.gamma
    first = first_Z = first_B = None
    if known is not None:
        first = np.concatenate([known[2][0], known[2][1], known[2][2:]])
        first_Z, first_B = known[0].astype(np.uint8), known[1].astype(np.uint8)
    return _native.svm_plus_active_set(full.Q, full.T, T_diag, rest.astype(np.int64), full.y[rest], full.C,
                                       Z.astype(np.uint8), B.astype(np.uint8), first, first_Z, first_B, max_iter,
                                       block_backup, RELEASE_TOL, KKT_TOL)
