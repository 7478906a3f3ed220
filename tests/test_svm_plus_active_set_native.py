"""The compiled primal-dual active-set method of SVM+ (``_native.svm_plus_active_set``,
``SVMPlusProblem.active_set_on``) as the exact LOO uses it: on the full problem's matrices through an index array of
the points kept, with the refit's own ridge. Its reduced solves against a Python oracle written here (the reduced KKT
system solved by scipy, least squares where singular), its branches (a singular system, a cycle and an exhausted
iteration budget falling back to the default route, a privileged kernel whose ridge moves with the point left out,
a class of three) and every LOO decision value against SVM+ retrained cold by the QP route (Clarabel, polished)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sla

from wsvm_span import _native
from wsvm_span._native import ACTIVE_SET_STATUS
from wsvm_span.svm_plus import ActiveSetFailure, fit_svm_plus, leave_one_out
from wsvm_span.svm_plus import loo as svm_plus_loo
from wsvm_span.svm_plus.solver import (ACTIVE_SET_TRY_MAX_ITER, KKT_TOL, MAX_ACTIVE_SET_ITER, RELEASE_TOL,
                                       SVMPlusProblem, feasible_start, privileged_ridge, solve_symmetric)
from test_svm_plus_loo_sets import DECISION_ATOL, cold_decision, problem


def oracle_solve_on_sets(sub: SVMPlusProblem, Z, B):
    """The minimiser of the dual with a_Z = 0 and a~_B = a_B - C on the problem ``sub`` (built from cut kernels):
    its reduced KKT system solved by scipy (``solve_symmetric``)."""
    system = sub.reduced_system(Z, B)
    z = solve_symmetric(system.M, system.rhs)
    F, N, n = system.F, system.N, system.n
    a = np.zeros(sub.y.size)
    a[F] = z[:F.size]
    a_tilde = np.where(B, a - sub.C, 0.0)
    a_tilde[N] = z[F.size:n]
    return a, a_tilde, float(z[n]), float(z[n + 1]), system


def one_iteration(full: SVMPlusProblem, rest, Z, B):
    """The compiled method's first minimiser on the sets Z, B of the problem on ``rest`` (max_iter = 1: where it
    does not converge there, the iteration's minimiser unclipped)."""
    T_diag = full.priv_diag[rest] / full.gamma
    T_diag += privileged_ridge(full.priv_diag[rest]) / full.gamma
    a, a_tilde, b, b_tilde, iterations, status, _, solves, _, _ = _native.svm_plus_active_set(
        full.Q, full.T, T_diag, rest.astype(np.int64), full.y[rest], full.C, Z.astype(np.uint8), B.astype(np.uint8),
        None, None, None, 1, 0, RELEASE_TOL, KKT_TOL)
    assert iterations == 1 and solves == 1
    return a, a_tilde, b, b_tilde, ACTIVE_SET_STATUS[status]


def linear_privileged(seed: int, l: int = 30):
    y, K, _ = problem(seed, l=l)
    X_priv = np.random.default_rng(seed).normal(size=(l, 2))
    return y, K, X_priv @ X_priv.T  # a diagonal far from even: the ridge moves with each point left out


@pytest.mark.parametrize("kind", ["rbf", "linear privileged kernel", "duplicate points"])
def test_compiled_solves_on_the_full_matrices_equal_the_cut_problems_reduced_systems(kind):
    """One iteration of the compiled method on the problem without p, read in place from the full Q and T (the
    diagonal with the refit's own ridge), against the reduced system of the problem built from the cut kernels, on
    the model's sets minus p and on sets moved at random. Six points repeated with their labels, both copies' a_i
    free and beta_i > 0 (their a~_i unknowns of their own), make the systems singular (the a_i rows hold Q and y
    alone: equal rows; where a~_i = a_i - C the ridge on T's diagonal tells the copies apart): least squares on both
    sides (scipy's rcond below eps)."""
    if kind == "rbf":
        y, K, K_priv = problem(0)
    elif kind == "linear privileged kernel":
        y, K, K_priv = linear_privileged(1)
    else:
        y, K, K_priv = problem(3, l=34)
        twice = np.concatenate([np.arange(34), np.arange(6)])
        y, K, K_priv = y[twice], K[np.ix_(twice, twice)], K_priv[np.ix_(twice, twice)]
    C, gamma = 4.0, 0.5
    model = fit_svm_plus(K, K_priv, y, C, gamma)
    full = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    Z0, B0 = svm_plus_loo.active_sets(model)
    if kind == "duplicate points":
        Z0, B0 = Z0.copy(), B0.copy()
        Z0[:6] = Z0[34:] = False
        B0[:6] = B0[34:] = False
    rng = np.random.default_rng(0)
    singular = 0
    for p in (0, 1, 5, 20, y.size - 1):
        rest = np.delete(np.arange(y.size), p)
        sub = SVMPlusProblem.build(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], C, gamma)
        for trial in range(6):
            Z, B = Z0[rest].copy(), B0[rest].copy()
            if trial:
                for sets in (Z, B):
                    sets[rng.choice(np.arange(6, rest.size - 6), 4, replace=False)] ^= True
            *got, _ = one_iteration(full, rest, Z, B)
            *want, system = oracle_solve_on_sets(sub, Z, B)
            with warnings.catch_warnings():
                warnings.simplefilter("error", sla.LinAlgWarning)
                try:
                    sla.solve(system.M, system.rhs, assume_a="sym")
                except (np.linalg.LinAlgError, sla.LinAlgWarning):
                    singular += 1
                    # a singular system's minimiser is not unique: both least squares' solutions solve it
                    for a, a_tilde, b, b_tilde in (got, want):
                        z = np.concatenate([a[system.F], a_tilde[system.N], [b, b_tilde]])
                        assert np.abs(system.M @ z - system.rhs).max() <= 1e-8 * max(1.0, C)
                    continue
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, atol=1e-9 * C)
    if kind == "duplicate points":
        assert singular > 0  # the least-squares branch was taken
    if kind == "linear privileged kernel":
        assert np.ptp(np.diag(K_priv)) > 0.1 * np.diag(K_priv).max()


def spied_active_set_on(monkeypatch):
    """Record each ``active_set_on`` call's outcome: (on a subset, "converged" or the ``ActiveSetFailure`` message,
    its max_iter)."""
    outcomes = []
    active_set_on = SVMPlusProblem.active_set_on

    def spy(self, points, *args, **kwargs):
        max_iter = args[2] if len(args) > 2 else kwargs.get("max_iter", MAX_ACTIVE_SET_ITER)
        try:
            out = active_set_on(self, points, *args, **kwargs)
        except ActiveSetFailure as exc:
            outcomes.append((points is not None, str(exc), max_iter))
            raise
        outcomes.append((points is not None, "converged", max_iter))
        return out

    monkeypatch.setattr(SVMPlusProblem, "active_set_on", spy)
    return outcomes


def test_refits_that_cycle_or_run_out_of_iterations_fall_back_to_the_default_route(monkeypatch):
    """A problem (large C, small gamma) on which the compiled method from the model's sets minus p cycles for some
    refits and runs out of ``MAX_ACTIVE_SET_ITER`` for others (found by search): those refits are retrained by the
    default route (``feasible_start``, the primal active-set method), and every LOO decision value is the cold QP
    refit's."""
    y, K, K_priv = problem(3)
    C, gamma = 256.0, 0.125
    model = fit_svm_plus(K, K_priv, y, C, gamma)
    outcomes = spied_active_set_on(monkeypatch)
    default_route = []
    smo = SVMPlusProblem.smo

    def counted(self, *args, **kwargs):
        default_route.append(1)
        return smo(self, *args, **kwargs)

    monkeypatch.setattr(SVMPlusProblem, "smo", counted)
    loo = leave_one_out(model, K, K_priv)
    on_subsets = [(why, max_iter) for on_points, why, max_iter in outcomes if on_points]  # the LOO's refits
    assert any("cycle" in why for why, _ in on_subsets) and any("no convergence" in why for why, _ in on_subsets)
    # the refits whose in-place tries all failed, the last the default route's first (from feasible_start's sets,
    # ACTIVE_SET_TRY_MAX_ITER iterations), went on to the primal method on the cut problem
    assert len(default_route) == sum(why != "converged" and max_iter == ACTIVE_SET_TRY_MAX_ITER
                                     for why, max_iter in on_subsets) > 0
    cold = np.array([cold_decision(K, K_priv, y, C, gamma, p) for p in loo.points])
    np.testing.assert_allclose(loo.decision_loo, cold, atol=DECISION_ATOL)
    assert loo.error == np.count_nonzero(y[loo.points] * cold <= 0) / y.size


def test_refits_where_the_ridge_moves_take_each_refits_own_ridge(monkeypatch):
    """A linear privileged kernel: its diagonal is uneven, so the ridge (a share of the mean diagonal of the points
    trained on) differs in every refit from the model's. The compiled method serves the refits on the full
    matrices with each refit's own ridge on the diagonal: the refit equals the one ``refit_without``'s default
    route finds on the cut problem, and every LOO decision value the cold QP refit's."""
    y, K, K_priv = linear_privileged(6)
    C, gamma = 1.0, 1.0
    model = fit_svm_plus(K, K_priv, y, C, gamma)
    outcomes = spied_active_set_on(monkeypatch)
    loo = leave_one_out(model, K, K_priv)
    assert loo.retrained.all()  # no step 1: the model's system is not the refits'
    served = [why == "converged" for on_points, why, _ in outcomes if on_points]
    assert np.mean(served) > 0.9
    cold = np.array([cold_decision(K, K_priv, y, C, gamma, p) for p in loo.points])
    np.testing.assert_allclose(loo.decision_loo, cold, atol=DECISION_ATOL)
    for p in loo.points[:6]:
        compiled, rest = svm_plus_loo.refit_without(model, K, K_priv, p)
        sub = SVMPlusProblem.build(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], C, gamma)
        assert compiled.ridge == sub.ridge != model.ridge
        default = sub.smo(1e-3, True, feasible_start(model, C, rest), qp_solver="auto")
        np.testing.assert_array_equal(compiled.alpha == 0, default.alpha == 0)
        np.testing.assert_allclose(compiled.alpha, default.alpha, atol=1e-8 * C)
        np.testing.assert_allclose(compiled.decision_train, default.decision_train, atol=1e-8)
        np.testing.assert_allclose(compiled.correcting_train, default.correcting_train, atol=1e-8)
        assert compiled.kkt_violation <= KKT_TOL


def test_a_class_of_three_keeps_two_in_each_refit_of_its_points(monkeypatch):
    """A class of three points: leaving one of them out leaves two, y'a = 0 pins the class's a to a sum over two
    points; the compiled method retrains those refits (where it fails, the default route) and the values are the
    cold QP refits'."""
    y, K, K_priv = problem(4, n_positive=3)
    C, gamma = 2.0, 1.0
    model = fit_svm_plus(K, K_priv, y, C, gamma)
    outcomes = spied_active_set_on(monkeypatch)
    calls = []
    refit = svm_plus_loo._refit

    def spy(model, problem, K, K_priv, p, bordered=None, known=None):
        before = len(outcomes)
        out = refit(model, problem, K, K_priv, p, bordered, known)
        calls.append((p, outcomes[before][1]))  # the compiled method's outcome on this refit
        return out

    monkeypatch.setattr(svm_plus_loo, "_refit", spy)
    loo = leave_one_out(model, K, K_priv)
    small = np.flatnonzero(y > 0)
    assert set(small) <= set(loo.points)
    small_refits = [why for p, why in calls if y[p] > 0]
    # measured: two of the three by the compiled method, one (30 iterations run out) by the default route
    assert len(small_refits) == 3 and small_refits.count("converged") >= 2
    t = np.flatnonzero(np.isin(loo.points, small))
    cold = [cold_decision(K, K_priv, y, C, gamma, p) for p in loo.points[t]]
    np.testing.assert_allclose(loo.decision_loo[t], cold, atol=DECISION_ATOL)


def test_the_compiled_method_refuses_bad_arguments():
    y, K, K_priv = problem(0, l=10)
    full = SVMPlusProblem.build(K, K_priv, y, 1.0, 1.0)
    Z = np.zeros(9, dtype=np.uint8)
    with pytest.raises(ValueError, match="idx must hold rows"):
        _native.svm_plus_active_set(full.Q, full.T, np.ones(9), np.arange(2, 11, dtype=np.int64), y[:9], 1.0, Z,
                                    Z.copy(), None, None, None, 5, 3, RELEASE_TOL, KKT_TOL)
    with pytest.raises(ValueError, match="first must be"):
        _native.svm_plus_active_set(full.Q, full.T, np.ones(9), np.arange(9, dtype=np.int64), y[:9], 1.0, Z,
                                    Z.copy(), np.zeros(5), Z, Z, 5, 3, RELEASE_TOL, KKT_TOL)
