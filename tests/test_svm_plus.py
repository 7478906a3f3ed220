"""SVM+ and its weighted-SVM equivalent (svm-plus.md), against independent ground truth:
the SVM+ KKT conditions recomputed from the kernels, the primal QP solved by Clarabel,
LIBSVM on the converted weights, a hand-solved 1-D case (the spec's counterexample),
SVM+ retrained without each point, hand-written Nadaraya-Watson sums and finite
differences."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import wsvm_span as ws
from wsvm_span.solvers.qp import solve_qp
from wsvm_span.svm_plus import (
    ActiveSetFailure,
    evaluate_svm_plus,
    evaluate_weighted,
    fit_svm_plus,
    kept_unpolished,
    learn_weights,
    leave_one_out,
    loo_rule,
    nadaraya_watson,
    probability_weights,
    rho,
    smooth_hinge,
    svm_plus_weights,
    to_weighted_svm,
    validation_loss,
    weighted_to_svm_plus,
    zero_weight_errors,
)
from wsvm_span.svm_plus.equivalence import ZERO_WEIGHT
from wsvm_span.svm_plus import loo as svm_plus_loo
from wsvm_span.svm_plus import solver as solver_module
from wsvm_span import _native
from wsvm_span._native import ACTIVE_SET_STATUS
from wsvm_span.svm_plus.solver import (KKT_TOL, PRIV_RIDGE, RELEASE_TOL, SVMPlusProblem, pivoted_cholesky,
                                       solve_symmetric)
from wsvm_span.svm_plus.weight_schemes import BANDWIDTH_FACTORS, P_FLOOR


def privileged_problem(seed: int, l: int = 60, noise: float = 1.0, priv_gamma: float = 0.5):
    """Labels from clean features x~ (privileged), ordinary features x = x~ + noise."""
    rng = np.random.default_rng(seed)
    X_priv = rng.normal(size=(l, 2))
    y = np.where(X_priv[:, 0] + 0.3 * rng.normal(size=l) > 0, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    X = X_priv + noise * rng.normal(size=(l, 2))
    return X, X_priv, y, ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(X_priv, gamma=priv_gamma)


def validation_problem(seed: int, l: int, n_val: int):
    """A training and a validation sample of a noisy linear boundary, their RBF kernels (gamma 0.5)."""
    rng = np.random.default_rng(seed)
    X, Xv = rng.normal(size=(l, 2)), rng.normal(size=(n_val, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=l) > 0, 1.0, -1.0)
    yv = np.where(Xv[:, 0] + 0.5 * rng.normal(size=n_val) > 0, 1.0, -1.0)
    return rng, y, yv, ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(Xv, X, gamma=0.5)


def dual_objective(m, K, K_priv):
    Q = K * np.outer(m.y, m.y)
    T = (K_priv + m.ridge * np.eye(m.n_train)) / m.gamma
    return 0.5 * m.alpha @ Q @ m.alpha - m.alpha.sum() + 0.5 * m.alpha_tilde @ T @ m.alpha_tilde


def assert_kkt_from_kernels(m, K, K_priv, tol):
    """The SVM+ optimality conditions, recomputed from the kernels (not from the model's
    stored values)."""
    y, a, at, C = m.y, m.alpha, m.alpha_tilde, m.C
    f = K @ (y * a) + m.b
    xi = (K_priv + m.ridge * np.eye(y.size)) @ at / m.gamma + m.b_tilde
    beta = C + at - a
    mu = y * f - 1.0 + xi
    scale = max(1.0, C)
    assert a.min() >= -tol * scale and beta.min() >= -tol * scale  # dual feasibility
    assert xi.min() >= -tol and mu.min() >= -tol  # primal feasibility: xi >= 0, y f >= 1 - xi
    assert np.abs(a * mu).max() <= tol * scale and np.abs(beta * xi).max() <= tol * scale
    assert abs(y @ a) <= tol * scale and abs(at.sum()) <= tol * scale
    np.testing.assert_allclose(m.decision_train, f, atol=1e-9 * scale)


# --- solver ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("C,gamma", [(1.0, 1.0), (8.0, 0.5), (0.25, 10.0)])
def test_kkt_conditions_hold(seed, C, gamma):
    _, _, y, K, K_priv = privileged_problem(seed)
    m = fit_svm_plus(K, K_priv, y, C, gamma)
    assert_kkt_from_kernels(m, K, K_priv, 10 * KKT_TOL)
    assert m.kkt_violation <= KKT_TOL


def test_active_set_matches_clarabel_qp():
    """The active-set solution against the raw interior-point solution (no polishing),
    on problems where Clarabel solves to full accuracy."""
    for seed in range(5):
        _, _, y, K, K_priv = privileged_problem(seed, l=40, priv_gamma=0.2)
        fast = fit_svm_plus(K, K_priv, y, 2.0, 1.0, solver="active-set")
        ref = fit_svm_plus(K, K_priv, y, 2.0, 1.0, solver="qp", qp_solver="clarabel", polish=False)
        assert ref.solver == "clarabel" and fast.solver == "active-set"
        np.testing.assert_allclose(dual_objective(fast, K, K_priv), dual_objective(ref, K, K_priv), rtol=1e-8)
        np.testing.assert_allclose(fast.decision_train, ref.decision_train, atol=1e-6)
        np.testing.assert_allclose(fast.correcting_train, ref.correcting_train, atol=1e-6)
        # the interior point stops at a gap of QP_TOL = 1e-8: alpha, less well determined than f where
        # YKY is nearly singular, agrees to ~3e-5 C (measured)
        np.testing.assert_allclose(fast.alpha, ref.alpha, atol=1e-4 * fast.C)
        assert fast.b == pytest.approx(ref.b, abs=1e-6) and fast.b_tilde == pytest.approx(ref.b_tilde, abs=1e-6)


def test_qp_route_is_polished_to_exact_sets():
    _, _, y, K, K_priv = privileged_problem(7)
    m = fit_svm_plus(K, K_priv, y, 4.0, 1.0, solver="qp")
    assert m.solver == "clarabel+active-set" and not kept_unpolished(m.solver)
    assert not kept_unpolished(fit_svm_plus(K, K_priv, y, 4.0, 1.0, solver="active-set").solver)
    with pytest.raises(ValueError, match="weighted_to_svm_plus"):
        kept_unpolished("weighted-svm")
    assert_kkt_from_kernels(m, K, K_priv, 10 * KKT_TOL)
    # exact bounds: in the polished SVM+ solution itself (no snapping) a_i = C + a~_i to the rounding of that
    # sum for the points with beta_i = 0 (a~_i = a_i - C rounds at C's scale and so does C + a~_i: within an ulp
    # of C, 7 ulp of a small weight; an interior point leaves ~1e-8 C), which the equivalent weighted SVM has as
    # bounded SVs; the others are strictly inside; the weighted SVM keeps that split and the alphas
    weights = m.C + m.alpha_tilde
    at_weight = np.flatnonzero((np.abs(m.alpha - weights) <= np.spacing(m.C)) & (m.alpha > 0))
    inside = np.setdiff1d(np.flatnonzero(m.alpha > 0), at_weight)
    assert np.all(m.alpha[inside] < weights[inside] * (1 - 1e-6))
    assert at_weight.size and inside.size
    w = to_weighted_svm(m, K)
    np.testing.assert_array_equal(w.bounded, at_weight)
    np.testing.assert_array_equal(w.inbound, inside)
    # (the bounded ones at their weight C + a~_i: within an ulp of C, as above)
    np.testing.assert_allclose(w.alpha, m.alpha, rtol=4 * np.finfo(float).eps, atol=np.spacing(m.C))


def test_pivoted_cholesky_against_the_eigendecomposition():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 7))
    K = X @ X.T  # rank 7
    L = pivoted_cholesky(K, 1e-10, 20)
    assert L.shape == (40, 7)
    np.testing.assert_allclose(L @ L.T, K, atol=1e-9 * K.diagonal().max())
    assert pivoted_cholesky(K, 1e-10, 6) is None  # the rank exceeds the budget
    # a full-rank kernel stopped early: K - LL' is positive semidefinite with its diagonal below the tolerance
    K = ws.rbf_kernel(rng.normal(size=(60, 2)), gamma=0.5)
    L = pivoted_cholesky(K, 1e-3, 60)
    residual = K - L @ L.T
    assert L.shape[1] < 60
    assert np.diag(residual).max() <= 1e-3 and np.linalg.eigvalsh(residual).min() >= -1e-12


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kernels", ["linear", "priv-1d"])
def test_low_rank_interior_point_lands_on_the_dense_routes_solution(seed, kernels, monkeypatch):
    """The QP route in the kernels' low-rank factors (linear kernels: both factored; an RBF on a 1-D privileged
    feature beside a 2-D ordinary RBF: only K~) ends at the same exact solution as the dense QP, which the KKT
    conditions recomputed from the kernels confirm."""
    rng = np.random.default_rng(seed)
    l, C, gamma = 60, 4.0, 0.5
    X_priv = rng.normal(size=(l, 2))
    y = np.where(X_priv[:, 0] + 0.5 * rng.normal(size=l) > 0, 1.0, -1.0)
    X = X_priv + 0.8 * rng.normal(size=(l, 2))
    if kernels == "linear":
        K, K_priv, factored = X @ X.T, X_priv @ X_priv.T, (True, True)
    else:
        K, K_priv, factored = ws.rbf_kernel(X, gamma=2.0), ws.rbf_kernel(X_priv[:, :1], gamma=0.5), (False, True)
    problem = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    assert problem.low_rank_factors() == (None, None)  # l = 60 < LOW_RANK_MIN_L: the dense route
    monkeypatch.setattr(solver_module, "LOW_RANK_MIN_L", 0)
    assert tuple(f is not None for f in problem.low_rank_factors()) == factored
    low_rank = fit_svm_plus(K, K_priv, y, C, gamma, solver="qp")
    assert low_rank.solver == "clarabel-low-rank+active-set"
    assert_kkt_from_kernels(low_rank, K, K_priv, 10 * KKT_TOL)
    monkeypatch.setattr(solver_module, "LOW_RANK_MAX_SHARE", 0.0)
    dense = fit_svm_plus(K, K_priv, y, C, gamma, solver="qp")
    assert dense.solver == "clarabel+active-set"
    np.testing.assert_allclose(low_rank.alpha, dense.alpha, atol=1e-9 * C)
    np.testing.assert_allclose(low_rank.alpha_tilde, dense.alpha_tilde, atol=1e-7 * C)
    np.testing.assert_allclose(low_rank.decision_train, dense.decision_train, atol=1e-9)
    np.testing.assert_allclose(low_rank.correcting_train, dense.correcting_train, atol=1e-9)


def test_a_crude_factor_never_gives_an_inexact_solution(monkeypatch):
    """The factors' QP only starts the polish: with factors far from the kernels (a pivoted Cholesky stopped at
    30% of the diagonal) every solution is still an exact KKT point of the true problem, polished from the
    factors' sets or, where that fails, from the dense QP's."""
    monkeypatch.setattr(solver_module, "LOW_RANK_RTOL", 0.3)
    monkeypatch.setattr(solver_module, "LOW_RANK_MIN_L", 0)
    routes = set()
    for seed in range(6):
        _, _, y, K, K_priv = privileged_problem(seed, l=50)
        m = fit_svm_plus(K, K_priv, y, 2.0, 1.0, solver="qp")
        routes.add(m.solver)
        assert_kkt_from_kernels(m, K, K_priv, 10 * KKT_TOL)
    assert "clarabel-low-rank+active-set" in routes


@pytest.mark.parametrize("seed", range(3))
def test_dual_against_primal_qp_with_linear_kernels(seed):
    """Linear kernels: solve the SVM+ PRIMAL in (w, w~, b, b~) with the QP switch and
    compare w = sum a_i y_i x_i, w~ = sum a~_i x~_i / gamma and both biases (this checks
    the signs of b and b~ read from the equality multipliers)."""
    rng = np.random.default_rng(seed)
    l, d, dp, C, gamma = 30, 3, 2, 2.0, 0.7
    X_priv = rng.normal(size=(l, dp))
    y = np.where(X_priv[:, 0] + 0.5 * rng.normal(size=l) > 0, 1.0, -1.0)
    X = np.hstack([X_priv, rng.normal(size=(l, 1))]) + 0.8 * rng.normal(size=(l, d))
    K, K_priv = X @ X.T, X_priv @ X_priv.T
    for solver in ("qp", "active-set"):
        m = fit_svm_plus(K, K_priv, y, C, gamma, solver=solver, polish=False)
        # the ridge is an extra privileged feature sqrt(ridge) e_i per point
        Xp = np.hstack([X_priv, np.sqrt(m.ridge) * np.eye(l)])
        n_w, n_p = d, Xp.shape[1]
        nv = n_w + n_p + 2  # [w, w~, b, b~]
        P = np.zeros((nv, nv))
        P[:n_w, :n_w] = np.eye(n_w)
        P[n_w:n_w + n_p, n_w:n_w + n_p] = gamma * np.eye(n_p)
        q = np.zeros(nv)
        q[n_w:n_w + n_p] = C * Xp.sum(axis=0)
        q[-1] = C * l
        # -y_i(w.x_i + b) - (w~.x~_i + b~) <= -1 ;  -(w~.x~_i + b~) <= 0
        G = np.zeros((2 * l, nv))
        G[:l, :n_w] = -y[:, None] * X
        G[:l, -2] = -y
        G[:l, n_w:n_w + n_p] = -Xp
        G[:l, -1] = -1.0
        G[l:, n_w:n_w + n_p] = -Xp
        G[l:, -1] = -1.0
        h = np.concatenate([-np.ones(l), np.zeros(l)])
        primal = solve_qp(P, q, np.zeros((0, nv)), np.zeros(0), G=G, h=h, solver="clarabel")
        assert primal.status == "optimal"
        w, w_priv, b, b_priv = primal.x[:n_w], primal.x[n_w:n_w + n_p], primal.x[-2], primal.x[-1]
        np.testing.assert_allclose((m.alpha * y) @ X, w, atol=1e-5)
        # (its ridge components sqrt(ridge) a~ / gamma are ~1e-4 and carry a~'s ill-conditioning)
        np.testing.assert_allclose(m.alpha_tilde @ X_priv / gamma, w_priv[:dp], atol=1e-5)
        assert m.b == pytest.approx(b, abs=1e-5)
        assert m.b_tilde == pytest.approx(b_priv, abs=1e-5)


def test_decision_and_correcting_functions_on_new_points():
    X, X_priv, y, K, K_priv = privileged_problem(3)
    m = fit_svm_plus(K, K_priv, y, 1.0, 1.0)
    np.testing.assert_allclose(m.decision_function(K[:5]), m.decision_train[:5], atol=1e-12)
    # new privileged rows carry no ridge: differs from the training values by ridge a~ / gamma
    np.testing.assert_allclose(m.correcting_function(K_priv[:5]) + m.ridge * m.alpha_tilde[:5] / m.gamma,
                               m.correcting_train[:5], atol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        m.decision_function(K[:5, :10])


def test_active_set_failure_is_reported_and_the_default_route_solves_the_problem():
    """Large C, small gamma: the active-set method from the plain SVM's sets cycles on this problem (measured) and
    says so; the default route (the decomposition solver made exact) solves it, to the KKT conditions recomputed
    from the kernels and to the QP route's objective."""
    _, _, y, K, K_priv = privileged_problem(2, l=120, priv_gamma=0.5)
    C, gamma = 64.0, 0.01
    with pytest.raises(ActiveSetFailure):
        fit_svm_plus(K, K_priv, y, C, gamma, solver="active-set")
    m = fit_svm_plus(K, K_priv, y, C, gamma)
    assert m.solver == "smo+active-set"
    assert_kkt_from_kernels(m, K, K_priv, KKT_TOL)
    qp = fit_svm_plus(K, K_priv, y, C, gamma, solver="qp")
    assert dual_objective(m, K, K_priv) == pytest.approx(dual_objective(qp, K, K_priv), rel=1e-9)


def test_default_route_falls_back_to_the_qp_route_where_its_polish_fails(monkeypatch):
    """Where the active-set methods do not make the decomposition solver's point exact, "auto" hands the problem to
    the QP route (polished, named "smo->..."), and "smo" keeps its own solution at ``tol`` (named "smo")."""
    from wsvm_span.svm_plus import solver

    _, _, y, K, K_priv = privileged_problem(1, l=60)
    monkeypatch.setattr(solver.SVMPlusProblem, "exact_from", lambda self, alpha, beta, name: None)
    m = fit_svm_plus(K, K_priv, y, 2.0, 1.0)
    assert m.solver.startswith("smo->") and m.solver.endswith("+active-set")
    assert_kkt_from_kernels(m, K, K_priv, KKT_TOL)
    raw = fit_svm_plus(K, K_priv, y, 2.0, 1.0, solver="smo", tol=1e-4)
    assert raw.solver == "smo" and kept_unpolished(raw.solver)
    # tol bounds the working-set rule's violation (margin units), not the products a_i mu_i checked here
    assert_kkt_from_kernels(raw, K, K_priv, 1e-3)


# --- equivalence -----------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_libsvm_with_converted_weights_reproduces_svm_plus(seed):
    _, _, y, K, K_priv = privileged_problem(seed)
    m = fit_svm_plus(K, K_priv, y, 2.0, 1.0)
    weighted = to_weighted_svm(m, K)
    libsvm = ws.fit_svm(K, y, weighted.C, tol=1e-10)
    np.testing.assert_allclose(libsvm.alpha, m.alpha, atol=1e-6 * m.C)
    np.testing.assert_allclose(libsvm.decision_train, m.decision_train, atol=1e-6)
    # LIBSVM leaves alphas of ~1e-301 on zero-weight points (ZERO_WEIGHT = 1e-300): compare
    # the SV sets on the points that carry weight
    dropped = np.flatnonzero(svm_plus_weights(m) == 0.0)
    np.testing.assert_array_equal(np.setdiff1d(libsvm.inbound, dropped), weighted.inbound)
    np.testing.assert_array_equal(np.setdiff1d(libsvm.bounded, dropped), weighted.bounded)
    np.testing.assert_allclose(svm_plus_weights(m), m.alpha + m.beta, atol=1e-12 * m.C)


@pytest.mark.parametrize("seed", range(4))
def test_rho_of_svm_plus_solutions_is_nonnegative(seed):
    """rho(c, xi) = a~'K~a~ / gamma with the correcting values, and >= 0 with the weighted
    SVM's slacks (the spec's necessary condition)."""
    _, _, y, K, K_priv = privileged_problem(seed)
    m = fit_svm_plus(K, K_priv, y, 4.0, 0.5)
    c = svm_plus_weights(m)
    T = (K_priv + m.ridge * np.eye(y.size)) / m.gamma
    assert rho(c, m.correcting_train) == pytest.approx(m.alpha_tilde @ T @ m.alpha_tilde, rel=1e-8, abs=1e-10)
    assert rho(c, to_weighted_svm(m, K).slacks) >= -1e-8


@pytest.mark.parametrize("seed", range(4))
def test_weighted_svm_to_svm_plus_round_trip(seed):
    _, _, y, K, _ = privileged_problem(seed, l=40)
    C = np.random.default_rng(seed).uniform(0.5, 5.0, size=y.size)
    weighted = ws.fit_svm(K, y, C, tol=1e-10)
    plus, x_priv = weighted_to_svm_plus(weighted)
    xi = weighted.slacks.copy()
    xi[weighted.inbound] = 0.0
    # its own weights when they give rho > 0, else the equivalent weights c = alpha
    own = rho(C, xi)
    assert plus.gamma == pytest.approx(own if own > 0 else rho(weighted.alpha, xi))
    np.testing.assert_allclose(plus.correcting_train, x_priv[:, 0] + plus.b_tilde)
    refit = fit_svm_plus(K, x_priv @ x_priv.T, y, plus.C, plus.gamma)
    np.testing.assert_allclose(refit.decision_train, weighted.decision_train, atol=1e-5)
    # alpha itself is ill-determined where K is nearly singular; the weighted-SVM dual
    # objective at the SVM+ alpha is its optimum
    Q = K * np.outer(y, y)
    assert 0.5 * refit.alpha @ Q @ refit.alpha - refit.alpha.sum() == pytest.approx(
        0.5 * weighted.alpha @ Q @ weighted.alpha - weighted.alpha.sum(), rel=1e-7)


def test_counterexample_of_the_spec():
    """1-D, linear kernel: (1,+1), (2,-1), (3,+1), c = (4, 6, 2)."""
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, -1.0, 1.0])
    c = np.array([4.0, 6.0, 2.0])
    K = np.outer(x, x)
    weighted = ws.fit_svm(K, y, c, tol=1e-12)
    assert (weighted.alpha * y) @ x == pytest.approx(-2.0, abs=1e-8)
    assert weighted.b == pytest.approx(3.0, abs=1e-8)
    np.testing.assert_allclose(weighted.slacks, [0.0, 0.0, 4.0], atol=1e-8)
    np.testing.assert_allclose(weighted.alpha, [4.0, 6.0, 2.0], atol=1e-8)
    assert rho(c, weighted.slacks) < 0
    with pytest.raises(ValueError, match="not reachable by SVM\\+"):
        weighted_to_svm_plus(weighted)
    # the SVM+ built as in the spec (C = mean(c), gamma = 1) predicts the opposite labels
    b_tilde = c @ weighted.slacks / c.sum()
    x_priv = (weighted.slacks - b_tilde)[:, None]
    # fit_svm_plus solves SVM+ with K~ + PRIV_RIDGE * mean(diag K~) I: the ridge moves this solution
    # by O(ridge) (measured: 4e-6 for the ridge 1e-6)
    for solver in ("active-set", "qp"):
        plus = fit_svm_plus(K, x_priv @ x_priv.T, y, c.mean(), 1.0, solver=solver)
        assert (plus.alpha * y) @ x == pytest.approx(2.0 / 3.0, abs=100 * PRIV_RIDGE)
        assert plus.b == pytest.approx(-1.0, abs=100 * PRIV_RIDGE)


# --- leave-one-out -----------------------------------------------------------------------
@pytest.mark.parametrize("seed,C,gamma", [(0, 1.0, 1.0), (1, 4.0, 0.1), (2, 1.0, 1.0)])
def test_loo_rule_matches_retrained_svm_plus_where_sets_do_not_change(seed, C, gamma):
    _, _, y, K, K_priv = privileged_problem(seed)
    m = fit_svm_plus(K, K_priv, y, C, gamma)
    brute = leave_one_out(m, K, K_priv)
    rule = loo_rule(m, K, K_priv)
    np.testing.assert_array_equal(rule.points, brute.points)
    same = brute.sets_unchanged
    assert same.sum() >= 5  # the comparison is not vacuous
    np.testing.assert_allclose(rule.decision_loo[same], brute.decision_loo[same], atol=1e-8)
    for t, p in enumerate(brute.points[:3]):  # the brute force itself, against a cold refit
        rest = np.delete(np.arange(y.size), p)
        cold = fit_svm_plus(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], C, gamma, solver="qp")
        assert cold.decision_function(K[p:p + 1, rest])[0] == pytest.approx(brute.decision_loo[t], abs=1e-6)


@pytest.mark.parametrize("seed,C,gamma", [(0, 1.0, 1.0), (1, 4.0, 0.1), (3, 16.0, 2.0), (5, 0.5, 0.3)])
def test_exact_loo_by_bordering_equals_cold_refits(seed, C, gamma, monkeypatch):
    """The exact LOO's refits by the compiled active-set method, each solve bordering the full model's KKT system
    (loo.BorderedSystem), against SVM+ cold QP refits without each point (every decision value to the QP's accuracy,
    the same errors), and every refit against the same refit on fresh reduced systems. Not vacuous: the bordering
    served most refits' solves, among the points left out are ones at a_p = 0, at beta_p = 0 and ones whose refit
    changed the sets."""
    _, _, y, K, K_priv = privileged_problem(seed, l=50)
    m = fit_svm_plus(K, K_priv, y, C, gamma)
    built = []
    build = svm_plus_loo.BorderedSystem.build

    def kept(*args):
        bordered = build(*args)
        built.append(bordered)
        return bordered

    monkeypatch.setattr(svm_plus_loo.BorderedSystem, "build", staticmethod(kept))
    monkeypatch.setattr(svm_plus_loo.BorderedSystem, "pays", staticmethod(lambda *args: True))  # cost aside
    # every point retrained (none taken from the model's sets by refits_on_the_model_sets), so that every refit
    # goes through the bordering
    on_the_model_sets = svm_plus_loo.refits_on_the_model_sets

    def none_taken(*args):
        exact, f, same, first = on_the_model_sets(*args)
        return np.zeros_like(exact), f, same, first

    monkeypatch.setattr(svm_plus_loo, "refits_on_the_model_sets", none_taken)
    loo = leave_one_out(m, K, K_priv)
    assert loo.retrained.all()
    (bordered,) = built
    assert bordered.served > 0.9 * (bordered.served + bordered.refused) and bordered.served >= loo.points.size
    Z, B = svm_plus_loo.active_sets(m)
    assert Z[loo.points].any() and B[loo.points].any() and not loo.sets_unchanged.all()
    cold_errors = 0
    for t, p in enumerate(loo.points):
        rest = np.delete(np.arange(y.size), p)
        cold = fit_svm_plus(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], C, gamma, solver="qp")
        f = cold.decision_function(K[p:p + 1, rest])[0]
        assert f == pytest.approx(loo.decision_loo[t], abs=1e-6)
        cold_errors += int(y[p] * f <= 0)
        by_border, _ = svm_plus_loo.refit_without(m, K, K_priv, p, bordered)
        fresh, _ = svm_plus_loo.refit_without(m, K, K_priv, p)
        np.testing.assert_allclose(by_border.alpha, fresh.alpha, atol=1e-9 * C)
        np.testing.assert_array_equal(by_border.alpha == 0, fresh.alpha == 0)  # the same exact zeros (sets)
        np.testing.assert_allclose(by_border.alpha_tilde, fresh.alpha_tilde, atol=1e-9 * C)
        assert by_border.b == pytest.approx(fresh.b, abs=1e-9)
    assert loo.error == cold_errors / y.size


def test_bordered_solves_equal_fresh_reduced_systems_on_changed_sets():
    """The compiled bordered solve (one iteration of the compiled method given the bordering) on sets that differ
    from the model's in every way a refit's can (points newly at a_i = 0 or beta_i = 0, points that left either set,
    the left-out point in Z, in B, in both) against the problem without that point solved on the same sets by its
    own reduced system (elimination, not bordering; a Python oracle)."""
    _, _, y, K, K_priv = privileged_problem(2, l=40)
    C, gamma = 2.0, 0.5
    m = fit_svm_plus(K, K_priv, y, C, gamma)
    Z0, B0 = svm_plus_loo.active_sets(m)
    Z0, B0 = Z0.copy(), B0.copy()
    Z0[[0, 1]], B0[[1, 2]] = True, True  # a base with a point in both sets; any sets define a minimiser
    full = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    bordered = svm_plus_loo.BorderedSystem.build(full, Z0, B0)
    rng = np.random.default_rng(0)
    for p in (0, 1, 2, 3, 20):
        rest = np.delete(np.arange(y.size), p)
        sub = SVMPlusProblem.build(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], C, gamma)
        for _ in range(5):
            Z, B = Z0[rest].copy(), B0[rest].copy()
            for sets in (Z, B):
                sets[rng.choice(rest.size, 3, replace=False)] ^= True
            out = _native.svm_plus_active_set(
                full.Q, full.T, sub.T.diagonal().copy(), rest.astype(np.int64), y[rest], C, Z.astype(np.uint8),
                B.astype(np.uint8), None, None, None, 1, 0, RELEASE_TOL, KKT_TOL, bordered.native(p))
            assert out[8:] == (1, 0) and out[7] == 0  # served by the bordering, no fresh solve
            if ACTIVE_SET_STATUS[out[5]] == "converged":
                continue  # clipped and checked: not the raw minimiser
            system = sub.reduced_system(Z, B)
            z = solve_symmetric(system.M, system.rhs)
            a = np.zeros(rest.size)
            a[system.F] = z[:system.F.size]
            a_tilde = np.where(B, a - C, 0.0)
            a_tilde[system.N] = z[system.F.size:system.n]
            for g, w in zip(out[:4], (a, a_tilde, z[system.n], z[system.n + 1])):
                np.testing.assert_allclose(g, w, atol=1e-8)


def test_the_bordering_stands_aside_where_a_refit_would_change_the_ridge():
    """A privileged kernel with an uneven diagonal (a linear one): the ridge is a share of its mean diagonal,
    which moves with the point left out, so the full model's system is not the refits'; the exact LOO then
    refits on fresh systems (each with its own ridge: tests/test_svm_plus_active_set_native.py) and still equals
    cold refits."""
    X, X_priv, y, K, _ = privileged_problem(6, l=30)
    K_priv = X_priv @ X_priv.T
    m = fit_svm_plus(K, K_priv, y, 1.0, 1.0)
    Z, B = svm_plus_loo.active_sets(m)
    assert svm_plus_loo.BorderedSystem.build(SVMPlusProblem.build(K, K_priv, y, 1.0, 1.0), Z, B) is None
    loo = leave_one_out(m, K, K_priv)
    for t, p in enumerate(loo.points[:6]):
        rest = np.delete(np.arange(y.size), p)
        cold = fit_svm_plus(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], 1.0, 1.0, solver="qp")
        assert cold.decision_function(K[p:p + 1, rest])[0] == pytest.approx(loo.decision_loo[t], abs=1e-6)


def test_weighted_span_rule_is_exact_for_the_converted_model_not_for_svm_plus():
    """The converted model obeys the weighted-SVM span identity y_p (f - f^p) = a_p S_p^2
    for LIBSVM refits with its weights fixed; SVM+ refits move the weights, so the same
    identity misses the SVM+ leave-one-out values even where SVM+'s sets do not change."""
    _, _, y, K, K_priv = privileged_problem(1, l=80)
    m = fit_svm_plus(K, K_priv, y, 4.0, 1.0)
    weighted = to_weighted_svm(m, K)
    spans = ws.analyse_spans(weighted, K)
    assert weighted.inbound.size >= 2
    sv = weighted.support
    predicted = weighted.decision_train[sv] - y[sv] * weighted.alpha[sv] * spans.span2_rule
    # LIBSVM refits with the weights fixed (zero weights as in to_weighted_svm); the SV
    # sets are compared on the points that carry weight (LIBSVM leaves ~1e-301 alphas on
    # the others, so ws.leave_one_out's own sets_unchanged flag is always False here)
    dropped = svm_plus_weights(m) == 0.0
    checked = 0
    for t, p in enumerate(sv):
        rest = np.delete(np.arange(y.size), p)
        sub = ws.fit_svm(K[np.ix_(rest, rest)], y[rest], weighted.C[rest], tol=1e-10)
        keep = ~dropped[rest]
        same = (np.array_equal(np.setdiff1d(rest[sub.inbound], np.flatnonzero(dropped)),
                               np.setdiff1d(weighted.inbound, p))
                and np.array_equal(np.setdiff1d(rest[sub.bounded], np.flatnonzero(dropped)),
                                   np.setdiff1d(weighted.bounded, p)))
        if same and keep.any():
            assert sub.decision_function(K[p:p + 1, rest])[0] == pytest.approx(predicted[t], abs=1e-5)
            checked += 1
    assert checked >= 2
    plus = leave_one_out(m, K, K_priv)
    at = np.searchsorted(plus.points, sv)
    stable = plus.sets_unchanged[at]
    assert stable.any()
    assert np.abs(predicted[stable] - plus.decision_loo[at][stable]).max() > 0.1


def test_zero_weight_errors_are_training_errors_of_dropped_points():
    _, _, y, K, K_priv = privileged_problem(1, l=80)
    m = fit_svm_plus(K, K_priv, y, 4.0, 1.0)
    c = svm_plus_weights(m)
    assert (c == 0).any()
    assert zero_weight_errors(m) == int(np.sum((c == 0) & (y * (K @ (y * m.alpha) + m.b) <= 0)))


# --- weight schemes --------------------------------------------------------------------------
def test_nadaraya_watson_against_hand_written_sums():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    h = 0.7
    est = nadaraya_watson(X, y, bandwidth=h)
    for i in range(X.shape[0]):
        w = np.array([np.exp(-np.sum((X[i] - X[j]) ** 2) / (2 * h * h)) if j != i else 0.0 for j in range(25)])
        eta = w @ y / w.sum()
        assert est.eta[i] == pytest.approx(eta, rel=1e-10)
        assert est.p[i] == pytest.approx(max((1 + y[i] * eta) / 2, P_FLOOR), rel=1e-10)
    # chosen bandwidth: the candidate with the largest leave-one-out log-likelihood
    chosen = nadaraya_watson(X, y)
    dist = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    median = np.median(dist[~np.eye(25, dtype=bool)])
    best = max(nadaraya_watson(X, y, bandwidth=median * f).log_likelihood for f in BANDWIDTH_FACTORS)
    assert chosen.log_likelihood == pytest.approx(best)
    assert np.isclose(chosen.bandwidth / median, BANDWIDTH_FACTORS).any()


def test_nadaraya_watson_from_a_validation_sample_against_hand_written_sums():
    """svm-plus.md A as the study does it: P(1|x) learned on the validation sample (bandwidth by that sample's
    leave-one-out likelihood) and evaluated at the training points, every validation point counted."""
    rng = np.random.default_rng(1)
    X_val, X = rng.normal(size=(40, 2)), rng.normal(size=(15, 2))
    y_val, y = np.where(X_val[:, 0] > 0, 1.0, -1.0), np.where(X[:, 0] > 0.3, 1.0, -1.0)
    est = nadaraya_watson(X_val, y_val, X_eval=X, y_eval=y)
    h = nadaraya_watson(X_val, y_val).bandwidth
    assert est.bandwidth == h and est.log_likelihood == nadaraya_watson(X_val, y_val).log_likelihood
    for i in range(X.shape[0]):
        w = np.array([np.exp(-np.sum((X[i] - X_val[j]) ** 2) / (2 * h * h)) for j in range(40)])
        eta = w @ y_val / w.sum()
        assert est.eta[i] == pytest.approx(eta, rel=1e-10)
        assert est.p[i] == pytest.approx(max((1 + y[i] * eta) / 2, P_FLOOR), rel=1e-10)
    with pytest.raises(ValueError, match="come together"):
        nadaraya_watson(X_val, y_val, X_eval=X)
    with pytest.raises(ValueError, match="features"):
        nadaraya_watson(X_val, y_val, X_eval=X[:, :1], y_eval=y)


def test_probability_round_off_is_clipped_and_real_errors_refused():
    """Issue 22: a Nadaraya-Watson p_i of 1 + 2.2e-16 (round-off) crashed Experiment 8's job; a p that is
    really outside [0, 1] is still refused."""
    one_ulp = np.nextafter(1.0, 2.0)
    p = np.array([0.25, one_ulp, 1.0, -1e-17, 0.0])
    c = probability_weights(p, 2.0, 1.0)
    np.testing.assert_array_equal(c, 2.0 * np.maximum([0.25, 1.0, 1.0, 0.0, 0.0], P_FLOOR))
    for bad in (1.0 + 1e-9, -1e-9, 1.5, np.nan, np.inf):
        with pytest.raises(ValueError, match="probabilities in \\[0, 1\\]"):
            probability_weights(np.array([0.5, bad]), 2.0, 1.0)


def test_nadaraya_watson_probabilities_stay_in_the_unit_interval(shared_data, tmp_path):
    """The subsample on which Experiment 8's job exp8/breast_cancer_wisconsin_351/1to2/s0-r1/chunk-3 (paper
    configuration) crashed: its leave-one-out estimate had p_i = 1 + 2.2e-16 before eta was clipped."""
    from wsvm_span.data import load_dataset
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import plan_jobs
    from wsvm_span.study.experiments.lupi import subsample

    jobs = plan_jobs(sc.load_config(Path(__file__).resolve().parents[1] / "config" / "paper.yaml"), ("exp8",))
    job = next(j for j in jobs if j.slot == "exp8/breast_cancer_wisconsin_351/1to2/s0-r1/chunk-3")
    split = load_dataset(job.dataset, seed=job.seed, data_dir=tmp_path, mirror=shared_data)
    train, _ = subsample(split.y_train, job.n_train, job.n_val, job.seed, f"{job.dataset}/{job.ratio}",
                         y_val_pool=split.y_val)
    X, y = split.X_train[train], split.y_train[train]
    nw = nadaraya_watson(X, y)
    assert nw.p.max() <= 1.0 and np.abs(nw.eta).max() <= 1.0
    # the same estimate from sums written here: eta may round to 1 + 2.2e-16, p is it clipped
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(D2, np.inf)
    W = np.exp(-(D2 - D2.min(axis=1, keepdims=True)) / (2 * nw.bandwidth**2))
    eta = (W * y).sum(axis=1) / W.sum(axis=1)
    np.testing.assert_allclose(nw.eta, eta, rtol=0, atol=1e-15)
    c = probability_weights(nw.p, 4.0, 2.0)
    assert np.all((c > 0) & (c <= 4.0))


def test_tau_zero_gives_the_plain_svm():
    X, _, y, K, _ = privileged_problem(0)
    p = nadaraya_watson(X, y).p
    c = probability_weights(p, 2.0, 0.0)
    np.testing.assert_array_equal(c, np.full(y.size, 2.0))
    a = ws.fit_svm(K, y, c, tol=1e-10)
    b = ws.fit_svm(K, y, 2.0, tol=1e-10)
    np.testing.assert_allclose(a.alpha, b.alpha)
    c2 = probability_weights(p, 2.0, 2.0)
    np.testing.assert_allclose(c2, 2.0 * np.maximum(p, P_FLOOR) ** 2)


def test_smooth_hinge_pieces_and_derivative():
    d = 0.2
    t = np.array([-1.0, 1 - 2 * d, 0.9, 1.0, 2.0])
    loss, grad = smooth_hinge(t, d)
    np.testing.assert_allclose(loss, [2 - d, d, 0.1**3 * (0.9 - 1 + 4 * d) / (16 * d**3), 0.0, 0.0])
    ts = np.linspace(-0.5, 1.5, 401)
    eps = 1e-6
    numeric = (smooth_hinge(ts + eps, d)[0] - smooth_hinge(ts - eps, d)[0]) / (2 * eps)
    np.testing.assert_allclose(smooth_hinge(ts, d)[1], numeric, atol=1e-6)


def test_validation_gradient_against_finite_differences():
    """Implicit differentiation vs central differences of LIBSVM refits."""
    rng, y, yv, K, Kv = validation_problem(0, 60, 80)
    c = rng.uniform(0.5, 3.0, size=60)
    _, grad = validation_loss(c, K, y, Kv, yv, 0.1)
    model = ws.fit_svm(K, y, c, tol=1e-10)
    assert model.bounded.size >= 4 and model.inbound.size >= 2
    probe = np.concatenate([model.bounded[:6], model.inbound[:2], np.setdiff1d(np.arange(60), model.support)[:2]])
    h = 1e-5
    for j in probe:
        e = np.zeros(60)
        e[j] = h
        fd = (validation_loss(c + e, K, y, Kv, yv, 0.1)[0] - validation_loss(c - e, K, y, Kv, yv, 0.1)[0]) / (2 * h)
        assert grad[j] == pytest.approx(fd, rel=1e-4, abs=1e-8)
    assert np.count_nonzero(grad[model.bounded]) > 0


def test_validation_gradient_at_zero_weights_is_one_sided():
    """A zero weight leaves its point out; the gradient is the forward difference as the weight grows
    from 0: nonzero for a margin violator (it becomes a bounded SV), zero for the others."""
    rng, y, yv, K, Kv = validation_problem(2, 50, 70)
    c = rng.uniform(0.5, 3.0, size=50)
    keep = np.arange(8, 50)
    sub = ws.fit_svm(K[np.ix_(keep, keep)], y[keep], c[keep], tol=1e-10)
    margin = y[:8] * (K[:8, keep] @ sub.coef + sub.b)
    assert (margin < 1).sum() >= 2 and (margin > 1).sum() >= 2  # both cases are probed
    c[:8] = ZERO_WEIGHT
    loss, grad = validation_loss(c, K, y, Kv, yv, 0.1)
    # forward steps of 1e-4: the inner solves' KKT tolerance (1e-10) swamps smaller ones (measured:
    # 1% off at 1e-6), the curvature larger ones (0.6% off at 1e-3)
    h = 1e-4
    for j in range(8):
        e = np.zeros(50)
        e[j] = h
        fd = (validation_loss(c + e, K, y, Kv, yv, 0.1)[0] - loss) / h
        assert grad[j] == pytest.approx(fd, rel=2e-3, abs=1e-7)
        if margin[j] > 1:
            assert grad[j] == 0.0


def test_learn_weights_lowers_the_validation_loss():
    rng, y, yv, K, Kv = validation_problem(1, 40, 60)
    res = learn_weights(K, y, Kv, yv, 1.0, d=0.1, max_iter=30)
    assert res.loss < res.initial_loss
    assert (res.c >= 0).all()
    assert res.loss == pytest.approx(validation_loss(res.c, K, y, Kv, yv, 0.1)[0])
    with pytest.warns(UserWarning, match="overfits"):
        learn_weights(K, y, Kv[:10], yv[:10], 1.0, max_iter=1)


def test_weights_that_leave_a_class_empty_are_outside_the_domain():
    """No weighted SVM is trained on one class: there the validation loss is +inf with a zero gradient (the
    line search steps back), not a crash of the inner solver."""
    _, y, yv, K, Kv = validation_problem(1, 40, 60)
    c = np.where(y > 0, 1.0, ZERO_WEIGHT)
    for engine in ("auto", "smo"):
        loss, grad = validation_loss(c, K, y, Kv, yv, 0.1, engine=engine)
        assert loss == np.inf and not grad.any()
    with pytest.raises(ValueError, match="each class"):
        learn_weights(K, y, Kv, yv, 1.0, c0=np.where(y > 0, 1.0, 0.0))


@pytest.mark.parametrize("engine", ["auto", "smo"])
def test_learn_weights_stays_where_both_classes_have_weight(engine):
    """With a validation set of one class, L-BFGS-B drives the other class's weights to zero (LIBSVM then
    refused the one-class problem and the whole Experiment 8 job failed). It now ends inside the domain, at a
    loss below the start's that the weights it returns give when evaluated again."""
    rng = np.random.default_rng(13)
    X, y = rng.normal(size=(12, 2)), np.where(rng.random(12) < 0.5, 1.0, -1.0)
    Xv, yv = rng.normal(size=(30, 2)), np.ones(30)
    K, Kv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(Xv, X, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = learn_weights(K, y, Kv, yv, 1.0, max_iter=50, engine=engine)
    assert np.isfinite(res.loss) and res.loss < 0.1 * res.initial_loss
    assert all((res.c[y == s] > ZERO_WEIGHT).any() for s in (-1.0, 1.0))
    assert res.loss == pytest.approx(validation_loss(res.c, K, y, Kv, yv, 0.1, engine=engine)[0], abs=1e-8)


def test_learn_weights_by_libsvm_is_the_method_written_out():
    """engine="auto" (LIBSVM from zero at every evaluation) is L-BFGS-B on validation_loss from c0, written
    here as the method's definition: the same weights bit for bit (learn_weights does not solve c0 twice)."""
    from scipy.optimize import minimize

    _, y, yv, K, Kv = validation_problem(1, 40, 60)
    got = learn_weights(K, y, Kv, yv, 1.0, d=0.1, max_iter=30)
    ref = minimize(validation_loss, np.ones(40), args=(K, y, Kv, yv, 0.1), jac=True, method="L-BFGS-B",
                   bounds=[(ZERO_WEIGHT, None)] * 40, options={"maxiter": 30})
    assert np.array_equal(got.c, ref.x) and got.loss == ref.fun and got.n_evaluations == ref.nfev


@pytest.mark.parametrize("seed,l,n_val", [(1, 40, 60), (3, 80, 100)])
def test_learn_weights_warm_started_evaluates_the_same_loss(seed, l, n_val):
    """By smo, each evaluation's inner solve starts from the previous evaluation's alpha (replayed here: the
    chain of smo solves over the evaluated weights, each from the one before) and computes the loss that LIBSVM
    from zero computes at the same weights; the gradient too wherever both solves split the SVs alike (at a
    weight where a point sits on its bound the split, and with it the one-sided gradient, may differ)."""
    from unittest import mock

    from wsvm_span.svm_plus import weight_schemes

    _, y, yv, K, Kv = validation_problem(seed, l, n_val)
    seen, real = [], weight_schemes._validation_loss

    def spy(c, *args):
        out = real(c, *args)
        seen.append((c.copy(), out))
        return out

    with mock.patch.object(weight_schemes, "_validation_loss", spy):
        res = learn_weights(K, y, Kv, yv, 1.0, d=0.1, max_iter=30, engine="smo")
    assert res.loss < res.initial_loss and len(seen) == res.n_evaluations  # c0 solved once for both
    alpha, same_split = np.zeros(l), 0
    for c, (loss, grad, alpha_seen) in seen:
        keep = np.flatnonzero(c > ZERO_WEIGHT)
        warm = ws.fit_svm(K[np.ix_(keep, keep)], y[keep], c[keep], engine="smo", tol=1e-10, alpha0=alpha[keep])
        alpha = np.zeros(l)
        alpha[keep] = warm.alpha
        assert np.array_equal(alpha, alpha_seen)  # the chain of warm starts
        cold = ws.fit_svm(K[np.ix_(keep, keep)], y[keep], c[keep], tol=1e-10)
        cold_loss, cold_grad = validation_loss(c, K, y, Kv, yv, 0.1)
        assert loss == pytest.approx(cold_loss, abs=1e-7)
        if np.array_equal(warm.bounded, cold.bounded) and np.array_equal(warm.inbound, cold.inbound):
            same_split += 1
            np.testing.assert_allclose(grad, cold_grad, rtol=1e-3, atol=1e-4 * np.abs(cold_grad).max())
    assert same_split >= 0.8 * len(seen)


def maximal_violating_pair_gap(K, y, c, alpha) -> float:
    """m(a) - M(a) of the weighted SVM's dual (Keerthi et al.'s first-order optimality measure), written out
    here from its definition: the gap every SMO stops on when it is <= tol. Zero weights leave the problem."""
    keep = c > ZERO_WEIGHT
    K, y, c, alpha = K[np.ix_(keep, keep)], y[keep], c[keep], alpha[keep]
    grad = (K * np.outer(y, y)) @ alpha - 1.0
    up = ((y > 0) & (alpha < c)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < c))
    return float(np.max(-y[up] * grad[up]) - np.min(-y[low] * grad[low]))


@pytest.mark.parametrize("step_limit", [5, 150])
def test_learn_weights_counts_the_inner_solves_stopped_at_the_step_limit(monkeypatch, step_limit):
    """With smo's step limit set low, inner solves stop short of INNER_TOL (all of them at 5 steps, 9 of 40 at
    150): learn_weights counts exactly those whose solution's maximal violating pair gap (computed here from
    alpha) exceeds INNER_TOL, and warns once for the whole weight learning, not once per solve; at the real
    limit it counts none."""
    from unittest import mock

    from wsvm_span.engines import StepLimitWarning
    from wsvm_span.engines import smo as smo_module
    from wsvm_span.svm_plus import weight_schemes

    _, y, yv, K, Kv = validation_problem(3, 80, 100)
    seen, real = [], weight_schemes._validation_loss

    def spy(c, *args):
        out = real(c, *args)
        seen.append((c.copy(), out[2]))
        return out

    with mock.patch.object(weight_schemes, "_validation_loss", spy):
        res = learn_weights(K, y, Kv, yv, 1.0, d=0.1, max_iter=15, engine="smo")
    assert res.n_unconverged_inner == 0 and len(seen) == res.n_evaluations
    assert max(maximal_violating_pair_gap(K, y, c, a) for c, a in seen) <= weight_schemes.INNER_TOL

    seen.clear()
    monkeypatch.setattr(smo_module, "max_iterations", lambda l: step_limit)
    with mock.patch.object(weight_schemes, "_validation_loss", spy), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = learn_weights(K, y, Kv, yv, 1.0, d=0.1, max_iter=15, engine="smo")
    short = sum(maximal_violating_pair_gap(K, y, c, a) > weight_schemes.INNER_TOL for c, a in seen)
    assert 0 < short and res.n_unconverged_inner == short and len(seen) == res.n_evaluations
    assert step_limit < 100 or short < len(seen)  # at 150 steps the later warm starts converge: some, not all
    limit = [w for w in caught if issubclass(w.category, StepLimitWarning)]
    assert len(limit) == 1 and f"{short} inner solve(s) stopped at the engine's step limit" in str(limit[0].message)


# --- selection -------------------------------------------------------------------------------
def cold_qp_cv_error(K, K_priv, y, C, gamma, folds, fit=fit_svm_plus) -> float:
    """The K-fold CV error by cold QP refits of SVM+ on each fold's training part (f = 0 an error)."""
    errors = 0
    for fold in np.unique(folds):
        tr, te = folds != fold, folds == fold
        fm = fit(K[np.ix_(tr, tr)], K_priv[np.ix_(tr, tr)], y[tr], C, gamma, solver="qp")
        errors += np.sum(y[te] * fm.decision_function(K[np.ix_(te, tr)]) <= 0)
    return errors / y.size


@pytest.mark.parametrize("engine", ["auto", "smo"])
def test_evaluate_svm_plus_against_retraining(engine):
    """Every quantity of one SVM+ grid point against its own computation: exact LOO by SVM+ refits without
    each of the l points (written here), the LOO rule of the loo module, K-fold CV by cold QP refits on the
    folds, the converted model's exact LOO (retrained by ``engine``: LIBSVM, or smo from the SVM+ solution)
    against LIBSVM refits from zero with the weights held fixed, test and validation errors from the decision
    values."""
    X, X_priv, y, K, K_priv = privileged_problem(4, l=40)
    rng = np.random.default_rng(0)
    X_val = rng.normal(size=(15, 2)) * 1.3
    y_val = np.where(X_val[:, 0] > 0, 1.0, -1.0)
    K_val = ws.rbf_kernel(X_val, X, gamma=0.5)
    folds = ws.stratified_folds(y, 5, 0)
    D = ws.enclosing_ball_diameter(K)
    for C, gamma in ((1.0, 1.0), (4.0, 0.3)):
        r = evaluate_svm_plus(K, K_priv, y, C, gamma, K[:10], y[:10], folds=folds, D=D, K_val=K_val, y_val=y_val,
                              compute_loo=True, engine=engine)
        m = fit_svm_plus(K, K_priv, y, C, gamma)
        refit_errors = 0
        for p in range(y.size):  # exact LOO: the SVM+ retrained without x_p (both kernels), from scratch
            rest = np.delete(np.arange(y.size), p)
            sub = fit_svm_plus(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], y[rest], C, gamma, solver="qp")
            refit_errors += int(y[p] * sub.decision_function(K[p:p + 1, rest])[0] <= 0)
        assert 0 < refit_errors < y.size
        assert r.loo_error == refit_errors / y.size
        assert r.loo_error == pytest.approx(leave_one_out(m, K, K_priv).error)
        assert r.loo_rule == pytest.approx(loo_rule(m, K, K_priv).error)
        assert r.test_error == pytest.approx(np.mean(y[:10] * m.decision_train[:10] <= 0))
        assert r.val_error == pytest.approx(np.mean(y_val * m.decision_function(K_val) <= 0))
        assert r.cv_error == pytest.approx(cold_qp_cv_error(K, K_priv, y, C, gamma, folds))
        weighted = to_weighted_svm(m, K)
        assert to_weighted_svm(m, K, engine=engine).engine == {"auto": "sklearn", "smo": "smo"}[engine]
        with pytest.raises(ValueError, match="supports class weights only"):
            to_weighted_svm(m, K, engine="libsvm")
        c = weighted.C
        loo_errors = zero_weight_errors(m)
        for p in weighted.support:
            rest = np.delete(np.arange(y.size), p)
            sub = ws.fit_svm(K[np.ix_(rest, rest)], y[rest], c[rest], tol=1e-7)
            loo_errors += int(y[p] * sub.decision_function(K[p:p + 1, rest])[0] <= 0)
        assert r.loo_converted == pytest.approx(loo_errors / y.size) and 0 < loo_errors
        spans = ws.analyse_spans(weighted, K, D=D)
        assert r.span_rule == pytest.approx(spans.span_rule + zero_weight_errors(m) / y.size)
        assert r.n_zero_weight == int(np.sum(svm_plus_weights(m) == 0)) and r.engine == f"svm+:{m.solver}"
        assert r.cv_folds == 5 and r.n_sv == weighted.support.size


@pytest.mark.parametrize("C, gamma", [(64.0, 0.01), (1.0, 10.0), (0.25, 0.25)])
def test_cv_folds_start_from_the_full_model_and_give_cold_qp_refits_cv_error(C, gamma):
    """K-fold CV warm-started from the full model (each fold's problem is the full one less a fold's points) gives
    the CV error of cold QP refits of the folds (written here), and each fold's model is the same solution."""
    from wsvm_span.svm_plus import kfold_cv_error

    _, _, y, K, K_priv = privileged_problem(2, l=120, priv_gamma=0.5)
    folds = ws.stratified_folds(y, 5, 0)
    full = fit_svm_plus(K, K_priv, y, C, gamma)
    assert kfold_cv_error(K, K_priv, y, C, gamma, folds, model=full) == pytest.approx(
        cold_qp_cv_error(K, K_priv, y, C, gamma, folds))
    for fold in np.unique(folds):
        train = np.flatnonzero(folds != fold)
        sub = np.ix_(train, train)
        warm = fit_svm_plus(K[sub], K_priv[sub], y[train], C, gamma, warm_start=full, warm_start_points=train)
        cold = fit_svm_plus(K[sub], K_priv[sub], y[train], C, gamma, solver="qp")
        assert_kkt_from_kernels(warm, K[sub], K_priv[sub], KKT_TOL)
        assert dual_objective(warm, K[sub], K_priv[sub]) == pytest.approx(
            dual_objective(cold, K[sub], K_priv[sub]), rel=1e-9)


def test_evaluate_weighted_matches_evaluate_model_and_drops_zero_weights():
    X, _, y, K, _ = privileged_problem(5, l=40)
    folds = ws.stratified_folds(y, 5, 0)
    D, R2 = ws.enclosing_ball_diameter(K), ws.kernel_radius2(K)
    C = np.random.default_rng(1).uniform(0.5, 4.0, size=y.size)
    r = evaluate_weighted(K, y, C, K[:12], y[:12], folds=folds, D=D, compute_loo=True)
    ref = ws.evaluate_model(K, y, C, K[:12], y[:12], folds=folds, D=D, R2=R2, compute_loo=True)
    for key in ("test_error", "cv_error", "span_rule", "span_bound", "loo_error", "n_sv", "n_inbound"):
        assert getattr(r, key) == pytest.approx(getattr(ref, key)), key
    assert np.isnan(r.val_error) and np.isnan(r.loo_rule) and r.n_zero_weight == 0
    # zero weights: the point is out of the model; a LOO error exactly when the model misclassifies it
    C0 = C.copy()
    C0[:6] = ZERO_WEIGHT
    r0 = evaluate_weighted(K, y, C0, K[:12], y[:12], folds=folds, D=D, compute_loo=True)
    keep = np.arange(6, y.size)
    sub = ws.fit_svm(K[np.ix_(keep, keep)], y[keep], C[keep], tol=1e-7)
    f_dropped = K[:6, keep] @ sub.coef + sub.b
    errors = int(np.sum(y[:6] * f_dropped <= 0))
    for t, p in enumerate(keep):  # brute force over every kept point
        rest = np.delete(keep, t)
        m = ws.fit_svm(K[np.ix_(rest, rest)], y[rest], C[rest], tol=1e-7)
        errors += int(y[p] * m.decision_function(K[p:p + 1, rest])[0] <= 0)
    assert r0.loo_error == pytest.approx(errors / y.size)
    assert r0.n_zero_weight == 6 and r0.n_sv == sub.support.size
    assert r0.span_rule == pytest.approx((ws.span_rule(sub, K[np.ix_(keep, keep)]) * keep.size
                                          + np.sum(y[:6] * f_dropped <= 0)) / y.size)
    assert r0.test_error == pytest.approx(np.mean(y[:12] * (K[:12, keep] @ sub.coef + sub.b) <= 0))
    with pytest.raises(ValueError, match="one class"):
        evaluate_weighted(K, y, np.where(y > 0, ZERO_WEIGHT, 1.0), K[:12], y[:12], folds=folds, D=D)


# --- bad input -------------------------------------------------------------------------------
def test_bad_inputs_raise_clear_errors():
    _, _, y, K, K_priv = privileged_problem(0, l=20)
    with pytest.raises(ValueError, match="K_priv has shape"):
        fit_svm_plus(K, K_priv[:10, :10], y, 1.0, 1.0)
    with pytest.raises(ValueError, match="labels"):
        fit_svm_plus(K, K_priv, np.where(y > 0, 1.0, 0.0), 1.0, 1.0)
    with pytest.raises(ValueError, match="C must be a positive"):
        fit_svm_plus(K, K_priv, y, 0.0, 1.0)
    with pytest.raises(ValueError, match="gamma must be a positive"):
        fit_svm_plus(K, K_priv, y, 1.0, -1.0)
    with pytest.raises(ValueError, match="gamma must be a positive"):
        fit_svm_plus(K, K_priv, y, 1.0, np.nan)
    bad = K_priv.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fit_svm_plus(K, bad, y, 1.0, 1.0)
    with pytest.raises(ValueError, match="solver"):
        fit_svm_plus(K, K_priv, y, 1.0, 1.0, solver="simplex")
    weighted = ws.fit_svm(K, y, 1.0)
    with pytest.raises(ValueError, match="nonnegative slacks"):
        weighted_to_svm_plus(weighted, -np.ones(20))
    with pytest.raises(ValueError, match="tau"):
        probability_weights(np.full(20, 0.5), 1.0, -1.0)
    with pytest.raises(ValueError, match="probabilities"):
        probability_weights(np.full(20, 1.5), 1.0, 1.0)
    with pytest.raises(ValueError, match="d must be"):
        smooth_hinge(np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="bandwidth"):
        nadaraya_watson(np.zeros((20, 2)) + np.arange(20)[:, None], y, bandwidth=0.0)
    with pytest.raises(ValueError, match="C must be a positive"):
        learn_weights(K, y, K[:5], y[:5], 0.0)


def degenerate_problem(l: int = 25, seed: int = 1, kernel_gamma: float = 2.0**-6, priv_gamma: float = 2.0**-2,
                       C: float = 2.0**-4, gamma: float = 2.0**4):
    """A degenerate W-toy problem (found by search over Experiment 8's grid): a wide RBF (K of low numerical
    rank), a small C and a large SVM+ gamma put every beta_i at 0 and leave many pairs with both a_i and mu_i
    near 0 in the interior point, so that the free-set Hessian is set by the ridge and block pivots cycle.
    The default (l = 25) is the test suite's first problem the active-set method failed to polish."""
    from wsvm_span.data import make_w_mixture
    from wsvm_span.data.synthetic import w_mixture_posterior

    X, y = make_w_mixture(l, seed=seed)
    p = w_mixture_posterior(X)
    q = np.where(y > 0, p, 1.0 - p)[:, None]
    return ws.rbf_kernel(X, gamma=kernel_gamma), ws.rbf_kernel(q, gamma=priv_gamma), y, C, gamma


@pytest.mark.parametrize("problem", [
    {},
    {"l": 60, "seed": 6, "priv_gamma": 1.0, "C": 0.25},
    {"l": 100, "seed": 0, "kernel_gamma": 2.0**-4, "priv_gamma": 1.0, "C": 0.25},
])
def test_the_polish_second_try_solves_degenerate_problems(problem, monkeypatch):
    """Where block pivots from the interior point's rounded sets fail (the precondition, checked), the polish's
    second try (single pivots) ends at an exact KKT point, recomputed from the kernels, with the objective of
    Clarabel's raw solution of the dense QP (the independent reference); without the second try the same problem
    is not polished."""
    K, K_priv, y, C, gamma = degenerate_problem(**problem)
    qp = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    raw = qp.interior_point("clarabel")
    Z = raw.alpha / C < np.maximum(raw.margin_slack, 0.0)
    B = raw.beta / C < np.maximum(raw.correcting_train, 0.0)
    with pytest.raises(ActiveSetFailure):
        qp.active_set(Z, B, "block pivots")
    m = fit_svm_plus(K, K_priv, y, C, gamma, solver="qp", qp_solver="clarabel")
    assert m.solver in ("clarabel+active-set", "clarabel-low-rank+active-set")  # polished (l = 100: factored)
    assert_kkt_from_kernels(m, K, K_priv, 10 * KKT_TOL)
    assert m.kkt_violation <= KKT_TOL
    ref = fit_svm_plus(K, K_priv, y, C, gamma, solver="qp", qp_solver="clarabel", polish=False)
    np.testing.assert_allclose(dual_objective(m, K, K_priv), dual_objective(ref, K, K_priv), rtol=1e-7)
    assert dual_objective(m, K, K_priv) <= dual_objective(ref, K, K_priv) + 1e-12 * abs(dual_objective(ref, K, K_priv))
    np.testing.assert_allclose(m.decision_train, ref.decision_train, atol=1e-3)
    monkeypatch.setattr(solver_module, "POLISH_MAX_ITER", 0)
    with pytest.raises(ActiveSetFailure):
        qp.polished(raw, "no second try")


def test_unpolished_solutions_are_counted_and_warned_about_once(monkeypatch):
    """Every unpolished solution is counted; the warning comes once per process, however many follow and
    whatever resets Python's once-per-location rule in between (a study job met thousands: one line each).
    The degenerate problem is made unpolishable by taking the polish's second try away."""
    import warnings

    from wsvm_span.svm_plus import solver as svm_plus_solver
    from wsvm_span.svm_plus import unpolished_solutions

    monkeypatch.setattr(svm_plus_solver, "POLISH_MAX_ITER", 0)
    K, K_priv, y, C, gamma = degenerate_problem()
    before = unpolished_solutions()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        models = [fit_svm_plus(K, K_priv, y, C, gamma, solver="qp") for _ in range(3)]
    assert [m.solver for m in models] == ["clarabel"] * 3  # the QP route's raw solution, kept
    assert all(kept_unpolished(m.solver) for m in models)
    assert unpolished_solutions() == before + 3
    unpolished = [w for w in caught if "keeping it unpolished" in str(w.message)]
    assert len(unpolished) == (1 if before == 0 else 0)
    for m in models:  # unpolished, but a KKT point to the QP route's tolerance
        assert m.kkt_violation <= svm_plus_solver.QP_KKT_TOL


def test_a_polish_that_failed_from_some_sets_is_not_run_again_from_them(monkeypatch):
    """The polish is a function of its start sets: a second polish of the same problem from the same rounded sets
    (the dense interior point after the factored one) fails with the same message without iterating; other start
    sets, and a successful polish, are run as before."""
    from wsvm_span.svm_plus import solver as svm_plus_solver

    K, K_priv, y, C, gamma = degenerate_problem()
    problem = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    raw = problem.interior_point("auto")
    runs = []
    active_set = SVMPlusProblem.active_set

    def counting(self, *args, **kwargs):
        runs.append(args[:2])
        return active_set(self, *args, **kwargs)

    monkeypatch.setattr(SVMPlusProblem, "active_set", counting)
    monkeypatch.setattr(svm_plus_solver, "POLISH_MAX_ITER", 0)  # unpolishable: no second try
    with pytest.raises(ActiveSetFailure) as first:
        problem.polished(raw, "x")
    assert len(runs) == 2  # block pivots, then the (empty) second try
    with pytest.raises(ActiveSetFailure) as again:
        problem.polished(raw, "x")
    assert len(runs) == 2 and str(again.value) == str(first.value)
    fresh = SVMPlusProblem.build(K, K_priv, y, C, gamma)  # another problem remembers nothing
    with pytest.raises(ActiveSetFailure):
        fresh.polished(raw, "x")
    assert len(runs) == 4
    monkeypatch.setattr(svm_plus_solver, "POLISH_MAX_ITER", 300)
    polished = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    assert polished.polished(raw, "x").kkt_violation <= KKT_TOL and not polished.failed_polishes


def test_when_the_dense_qp_fails_the_factored_solution_is_kept_only_as_a_kkt_point(monkeypatch):
    """Clarabel stopped with InsufficientProgress on the dense QP of one W-toy problem (l = 200, C = 1024) whose
    factored QP it solved. Simulated here (the dense interior point raises, the polish of the factored solution
    fails): the factored solution is kept, counted as unpolished, and it is a KKT point of the true problem to
    the QP route's tolerance, recomputed from the kernels; were it not, the fit raises."""
    from wsvm_span.svm_plus import unpolished_solutions

    monkeypatch.setattr(solver_module, "LOW_RANK_MIN_L", 0)
    X, X_priv, y, _, _ = privileged_problem(1, l=40)
    K, K_priv = X @ X.T, X_priv @ X_priv.T  # linear: both kernels factored
    solve = SVMPlusProblem.interior_point

    def dense_fails(self, qp_solver, factors=(None, None)):
        if factors[0] is None and factors[1] is None:
            raise RuntimeError("the SVM+ dual QP was not solved by clarabel: failed:InsufficientProgress")
        return solve(self, qp_solver, factors)

    def polish_fails(self, raw, name):
        raise ActiveSetFailure("no convergence in 30 iterations")

    monkeypatch.setattr(SVMPlusProblem, "interior_point", dense_fails)
    monkeypatch.setattr(SVMPlusProblem, "polished", polish_fails)
    before = unpolished_solutions()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = fit_svm_plus(K, K_priv, y, 2.0, 1.0, solver="qp")
    assert m.solver == "clarabel-low-rank" and unpolished_solutions() == before + 1 and kept_unpolished(m.solver)
    assert_kkt_from_kernels(m, K, K_priv, solver_module.QP_KKT_TOL)
    monkeypatch.setattr(solver_module, "QP_KKT_TOL", 1e-14)  # a solution that fails the check is not kept
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(RuntimeError, match="violates the KKT conditions"):
            fit_svm_plus(K, K_priv, y, 2.0, 1.0, solver="qp")


def test_evaluate_svm_plus_refuses_a_model_of_another_grid_point():
    """A model trained by the caller (a C sweep) must be the grid point's own: another C is refused."""
    _, _, y, K, K_priv = privileged_problem(0, l=30)
    other = fit_svm_plus(K, K_priv, y, 2.0, 1.0)
    with pytest.raises(ValueError, match="not at this grid point"):
        evaluate_svm_plus(K, K_priv, y, 1.0, 1.0, K[:5], y[:5], folds=ws.stratified_folds(y, 5, 0),
                          D=ws.enclosing_ball_diameter(K), model=other)
