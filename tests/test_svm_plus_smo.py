"""The decomposition solver of the SVM+ dual (``fit_svm_plus(..., solver="smo")``, ``csrc/svm_plus_smo.c``) against
independent oracles: the KKT conditions of svm-plus.md written out here, Clarabel's solution of the same QP (its
objective), the active-set route's decision values, and the weighted-SVM equivalence."""
import numpy as np
import pytest

import wsvm_span as ws
from wsvm_span import _native, svm_plus
from wsvm_span.solvers.qp import solve_qp
from wsvm_span.svm_plus.solver import (KKT_TOL, PRIV_RIDGE, SMO, SMO_TOL, FaceSystem, SVMPlusProblem,
                                       solve_symmetric)

#: objective agreement with Clarabel (the issue's "relative 1e-6")
OBJECTIVE_RTOL = 1e-6


def ridge_of(K_priv):
    """The privileged kernel's ridge as solver.PRIV_RIDGE defines it (relative to its mean diagonal)."""
    return PRIV_RIDGE * float(np.mean(np.diag(K_priv)))


def dual_objective(model, K, K_priv):
    """1/2 a'YKYa - 1'a + 1/(2 gamma) a~'(K~ + ridge I)a~, written out from svm-plus.md."""
    a, at, y = model.alpha, model.alpha_tilde, model.y
    T = (K_priv + ridge_of(K_priv) * np.eye(y.size)) / model.gamma
    return 0.5 * a @ (np.outer(y, y) * K) @ a - a.sum() + 0.5 * at @ T @ at


def clarabel_objective(K, K_priv, y, C, gamma, ridge):
    """The minimum of the dual by Clarabel at its own default tolerance (1e-10), the QP assembled here from
    svm-plus.md in x = [a; a~] / C (the box 0 <= a_i <= 1 + a~_i whatever C)."""
    l = y.size
    P = np.zeros((2 * l, 2 * l))
    P[:l, :l] = np.outer(y, y) * K
    P[l:, l:] = (K_priv + ridge * np.eye(l)) / gamma
    q = np.concatenate([-np.ones(l) / C, np.zeros(l)])
    A_eq = np.zeros((2, 2 * l))
    A_eq[0, :l], A_eq[1, l:] = y, 1.0
    lb = np.concatenate([np.zeros(l), np.full(l, -np.inf)])
    G = np.hstack([np.eye(l), -np.eye(l)])
    res = solve_qp(P, q, A_eq, np.zeros(2), lb=lb, solver="clarabel", G=G, h=np.ones(l))
    assert res.status == "optimal"
    return C**2 * (0.5 * res.x @ P @ res.x + q @ res.x)


def kkt_violation(model, K, K_priv, tol):
    """The largest violation of svm-plus.md's KKT conditions, each recomputed from the kernels (not the model's own
    decision values): feasibility exact, sign conditions and complementarity to tol."""
    a, at, y, C = model.alpha, model.alpha_tilde, model.y, model.C
    beta = C + at - a
    f = K @ (y * a) + model.b
    xi = (K_priv + ridge_of(K_priv) * np.eye(y.size)) @ at / model.gamma + model.b_tilde
    mu = y * f - 1.0 + xi
    return max(-a.min() / C, -beta.min() / C, -xi.min(), -mu.min(), np.abs(a * mu).max() / C,
               np.abs(beta * xi).max() / C, abs(y @ a) / C, abs(at.sum()) / C)


def problem(seed, l=30, C=1.0, gamma=1.0, width=0.5, priv_width=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(l, 3))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=l) > 0, 1.0, -1.0)
    X_priv = X[:, :1] + 0.3 * rng.normal(size=(l, 1))
    return ws.rbf_kernel(X, gamma=width), ws.rbf_kernel(X_priv, gamma=priv_width), y, C, gamma


GRID = [(seed, C, gamma) for seed, (C, gamma) in enumerate([(2.0**-4, 2.0**-4), (2.0**-4, 2.0**4), (1.0, 1.0),
                                                              (8.0, 0.25), (2.0**6, 4.0), (2.0**10, 2.0**-4),
                                                              (2.0**10, 2.0**4)])]


@pytest.mark.parametrize("seed, C, gamma", GRID)
def test_polished_solution_is_exact_and_matches_clarabel(seed, C, gamma):
    K, K_priv, y, C, gamma = problem(seed, C=C, gamma=gamma)
    model = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO)
    assert model.solver in (SMO, f"{SMO}+active-set")
    F, F_ref = dual_objective(model, K, K_priv), clarabel_objective(K, K_priv, y, C, gamma, ridge_of(K_priv))
    assert abs(F - F_ref) <= OBJECTIVE_RTOL * abs(F_ref)
    if model.solver.endswith("+active-set"):
        assert kkt_violation(model, K, K_priv, 0) < 1e-7
    else:
        assert kkt_violation(model, K, K_priv, 0) < 10 * SMO_TOL


@pytest.mark.parametrize("seed, C, gamma", GRID[:5])
def test_unpolished_solution_meets_its_tolerance(seed, C, gamma):
    """The raw decomposition solution: feasible exactly (alpha, beta >= 0 with exact zeros, both sums 0 to round-off)
    and within its tolerance of the KKT conditions and of Clarabel's objective."""
    K, K_priv, y, C, gamma = problem(seed, C=C, gamma=gamma)
    tol = 1e-6
    model = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO, polish=False, tol=tol)
    assert model.solver == SMO
    assert model.alpha.min() >= 0 and model.beta.min() >= -1e-12 * C
    assert np.count_nonzero(model.alpha == 0) > 0
    assert abs(y @ model.alpha) < 1e-10 * C * y.size and abs(model.alpha_tilde.sum()) < 1e-10 * C * y.size
    # the margin and slack conditions to tol; a product a_i mu_i is at most a_i tol
    assert kkt_violation(model, K, K_priv, tol) < tol * max(1.0, model.alpha.max() / C) * 2
    F, F_ref = dual_objective(model, K, K_priv), clarabel_objective(K, K_priv, y, C, gamma, ridge_of(K_priv))
    assert abs(F - F_ref) <= 1e-5 * abs(F_ref)


def test_same_decision_values_as_the_active_set_route():
    checked = 0
    for seed in range(6):
        K, K_priv, y, C, gamma = problem(100 + seed, C=2.0 ** (seed - 2), gamma=2.0 ** (seed % 3 - 1))
        try:
            exact = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver="active-set")
        except svm_plus.ActiveSetFailure:
            continue
        model = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO)
        np.testing.assert_allclose(model.decision_train, exact.decision_train, atol=1e-6)
        checked += 1
    assert checked >= 4


def test_weighted_svm_equivalence_at_the_solution():
    """svm-plus.md: the weights c = a + beta make (a, b) optimal for the weighted SVM; its KKT conditions, written
    out: 0 <= a_i <= c_i, y'a = 0, y_i f(x_i) >= 1 where a_i = 0 < c_i, <= 1 where a_i = c_i, = 1 in between (a
    point with c_i = 0 carries no constraint)."""
    K, K_priv, y, C, gamma = problem(7, l=40, C=4.0, gamma=0.5)
    model = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO)
    c = svm_plus.svm_plus_weights(model)
    a = model.alpha
    margin = y * (K @ (y * a) + model.b)
    tol = 1e-6
    assert np.all(a >= 0) and np.all(a <= c + tol * C)
    assert np.all(margin[(a == 0) & (c > tol * C)] >= 1 - tol)
    assert abs(y @ a) < 1e-10 * C
    at_bound = a >= c - tol * C
    assert np.all(margin[at_bound & (a > 0)] <= 1 + tol)
    inside = (a > 0) & ~at_bound
    np.testing.assert_allclose(margin[inside], 1.0, atol=tol)
    weighted = svm_plus.to_weighted_svm(model, K)
    np.testing.assert_allclose(weighted.decision_train, model.decision_train, atol=1e-9)


def test_degenerate_problems():
    rng = np.random.default_rng(3)
    # duplicate points with opposite labels
    X = rng.normal(size=(20, 2))
    X = np.vstack([X, X[:5]])
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[20:] = -y[:5]
    K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(X[:, :1], gamma=1.0)
    # K~ of rank 1 (a constant privileged feature): the correcting function is a constant
    ones = np.ones((25, 25))
    # a class of two points
    y_two = -np.ones(25)
    y_two[[3, 11]] = 1.0
    # K of rank 1 (a constant kernel: f is constant, every beta_i ends at its bound 0) and a linear kernel of one
    # feature (more free points than features: singular face systems, solved by least squares)
    linear = X[:, :1] @ X[:, :1].T
    for K_, Kp_, y_ in ((K, K_priv, y), (K, ones, y), (K, K_priv, y_two), (ones, K_priv, y), (ones, ones, y),
                        (linear, K_priv, y)):
        for C, gamma in ((2.0**-4, 2.0**-4), (1.0, 1.0), (2.0**10, 2.0**4)):
            model = svm_plus.fit_svm_plus(K_, Kp_, y_, C, gamma, solver=SMO)
            F, F_ref = dual_objective(model, K_, Kp_), clarabel_objective(K_, Kp_, y_, C, gamma, ridge_of(Kp_))
            assert abs(F - F_ref) <= OBJECTIVE_RTOL * abs(F_ref), (C, gamma, model.solver)
            assert model.solver == f"{SMO}+active-set"
            assert kkt_violation(model, K_, Kp_, 0) < KKT_TOL


def native_solve(kernel, privileged, n_points, y, C, gamma, ridge, idx=None, start=None, tol=1e-9, cache_mb=1.0):
    n = y.size
    alpha, beta = (np.zeros(n), np.full(n, C)) if start is None else (start[0].copy(), start[1].copy())
    w, z = np.zeros(n), np.zeros(n)
    out = _native.svm_plus_solve(kernel, privileged, n_points, idx, y, C, 1.0 / gamma, ridge / gamma, alpha, beta,
                                 w, z, start is None, tol, 10**7, cache_mb)
    return alpha, beta, out


def test_rows_from_features_and_from_an_index_set():
    """The rows computed from the features (RBF, through a cache of 16 rows per kernel: the fewest) give the precomputed kernels'
    solution (to the kernels' round-off, which can change a step or two); a subset given by idx gives the sliced problem's; a start at the solution takes no step."""
    rng = np.random.default_rng(5)
    X, X_priv = rng.normal(size=(60, 4)), rng.normal(size=(60, 1))
    y = np.where(X[:, 0] + X_priv[:, 0] > 0, 1.0, -1.0)
    K, K_priv = ws.rbf_kernel(X, gamma=0.3), ws.rbf_kernel(X_priv, gamma=2.0)
    C, gamma, ridge = 2.0, 0.5, 1e-6
    a1, b1, out1 = native_solve(("precomputed", K), ("precomputed", K_priv), 60, y, C, gamma, ridge)
    a2, b2, out2 = native_solve(("rbf", X, 0.3), ("rbf", X_priv, 2.0), 60, y, C, gamma, ridge, cache_mb=1e-4)
    assert out1[3] and out2[3]
    np.testing.assert_allclose(a2, a1, atol=1e-7 * C)
    np.testing.assert_allclose(b2, b1, atol=1e-7 * C)
    assert out2[6] > 2 * 16  # rows were computed, and computed again after eviction (16 slots per kernel of 60 rows)
    idx = np.flatnonzero(rng.random(60) < 0.7).astype(np.int64)
    a3, b3, out3 = native_solve(("precomputed", K), ("precomputed", K_priv), 60, y[idx], C, gamma, ridge, idx=idx)
    sub = np.ix_(idx, idx)
    a4, b4, out4 = native_solve(("precomputed", np.ascontiguousarray(K[sub])),
                                ("precomputed", np.ascontiguousarray(K_priv[sub])), idx.size, y[idx], C, gamma, ridge)
    np.testing.assert_allclose(a3, a4, atol=1e-12 * C)
    np.testing.assert_allclose(out3[:2], out4[:2], atol=1e-12)
    _, _, again = native_solve(("precomputed", K), ("precomputed", K_priv), 60, y, C, gamma, ridge, start=(a1, b1))
    assert again[3] and again[2] == 0


def test_bad_input_is_refused():
    K, K_priv, y, C, gamma = problem(0)
    bad = K.copy()
    bad[0, 1] = bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        svm_plus.fit_svm_plus(bad, K_priv, y, C, gamma, solver=SMO)
    with pytest.raises(ValueError, match="K_priv has shape"):
        svm_plus.fit_svm_plus(K, K_priv[:-1, :-1], y, C, gamma, solver=SMO)
    with pytest.raises(ValueError, match="class"):
        svm_plus.fit_svm_plus(K, K_priv, np.ones_like(y), C, gamma, solver=SMO)
    with pytest.raises(ValueError, match="tol"):
        svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO, tol=0.0)
    with pytest.raises(ValueError, match="smo"):
        svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver="sm0")
    with pytest.raises(ValueError, match="idx"):
        native_solve(("precomputed", K), ("precomputed", K_priv), 30, y[:3], C, gamma, 0.0,
                     idx=np.array([0, 1, 30], dtype=np.int64))


def test_step_limit_is_an_error_not_a_solution(monkeypatch):
    """A solution kept at tol (unpolished) must reach it; the polish's start is capped by its own limit."""
    from wsvm_span.svm_plus import solver as module
    monkeypatch.setattr(module, "SMO_MAX_ITER_PER_POINT", 0)
    K, K_priv, y, C, gamma = problem(1)
    with pytest.raises(RuntimeError, match="step limit"):
        svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO, polish=False)
    assert svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO).solver == f"{SMO}+active-set"


def degenerate_problem(seed):
    """A 1-D, duration-like privileged feature (|x_1 + noise|) and a wide kernel: problems on which the primal-dual
    active-set method, started from the decomposition solver's sets, runs out of iterations (found by search)."""
    rng = np.random.default_rng(seed)
    l = 40
    X = rng.normal(size=(l, 2))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=l) > 0, 1.0, -1.0)
    X_priv = np.abs(X[:, :1] + rng.normal(size=(l, 1)))
    C, gamma, width = 2.0 ** rng.integers(-4, 11), 2.0 ** rng.integers(-4, 5), 2.0 ** rng.integers(-3, 3)
    return ws.rbf_kernel(X, gamma=width), ws.rbf_kernel(X_priv, gamma=1.0), y, C, gamma


@pytest.mark.parametrize("seed", [37, 78, 176])
def test_primal_active_set_is_exact_where_the_primal_dual_method_fails(seed):
    K, K_priv, y, C, gamma = degenerate_problem(seed)
    problem = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    l = y.size
    alpha, beta, out = native_solve(("precomputed", K), ("precomputed", K_priv), l, y, C, gamma, ridge_of(K_priv),
                                    tol=SMO_TOL)
    assert out[3]
    with pytest.raises(svm_plus.ActiveSetFailure):
        problem.active_set(alpha == 0, beta == 0, "primal-dual")
    model = problem.primal_active_set(alpha.copy(), beta.copy(), "primal", 5 * l)
    assert model is not None
    assert kkt_violation(model, K, K_priv, 0) < 1e-7
    F, F_ref = dual_objective(model, K, K_priv), clarabel_objective(K, K_priv, y, C, gamma, ridge_of(K_priv))
    assert abs(F - F_ref) <= OBJECTIVE_RTOL * abs(F_ref)
    # the route does the same by itself
    routed = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO)
    assert routed.solver == f"{SMO}+active-set"
    np.testing.assert_allclose(routed.decision_train, model.decision_train, atol=1e-9)


def test_a_matrix_that_is_no_kernel_is_refused():
    """A symmetric similarity with negative eigenvalues (here -||x - x'||, a distance) is refused before any solver
    runs; an exact Gram matrix of rank 1 (all ones) or of low rank passes, round-off and all."""
    K, K_priv, y, C, gamma = problem(0)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(y.size, 2))
    distance = -np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    for solver in ("auto", SMO):
        with pytest.raises(ValueError, match="K is not positive semidefinite"):
            svm_plus.fit_svm_plus(distance, K_priv, y, C, gamma, solver=solver)
        with pytest.raises(ValueError, match="K_priv is not positive semidefinite"):
            svm_plus.fit_svm_plus(K, distance, y, C, gamma, solver=solver)
    low_rank = X[:, :1] @ X[:, :1].T
    svm_plus.fit_svm_plus(K, np.ones_like(K), y, C, gamma, solver=SMO)
    svm_plus.fit_svm_plus(low_rank + 1e-3 * K, low_rank, y, C, gamma, solver=SMO)
    # an RBF kernel of features far from 0, whose expansion |x|^2 + |x'|^2 - 2 x.x' rounds to eigenvalues of ~-1e-7
    far = 1e4 + rng.normal(size=(400, 3))
    y_far = np.where(far[:, 0] > 1e4, 1.0, -1.0)
    K_far = ws.rbf_kernel(far, gamma=0.1)
    assert np.linalg.eigvalsh(K_far)[0] < 0
    svm_plus.fit_svm_plus(K_far, ws.rbf_kernel(far[:, :1], gamma=1.0), y_far, 1.0, 1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_updated_face_system_solves_as_the_reduced_system(seed):
    """FaceSystem's QR factors after 200 single-variable updates are backward stable: the face's minimiser solves
    the face's KKT system M (formed anew) to round-off, and agrees with a fresh solve of ``reduced_system`` (other
    unknowns: a_F and a~_N) to the forward error a condition number of ~2e7 (the ridge's) allows."""
    K, K_priv, y, C, gamma = problem(seed, l=40, C=4.0, gamma=0.5)
    prob = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    l = y.size
    rng = np.random.default_rng(seed)
    face = FaceSystem(prob, np.flatnonzero(rng.random(2 * l) < 0.6))
    for _ in range(200):
        k = int(rng.integers(2 * l))
        if face.fixed[k]:
            face.free(k)
        elif np.count_nonzero(~face.fixed) > 3:
            face.fix(k)
    x, b, b_tilde = face.minimiser()
    M = face.matrix()
    z = np.concatenate([[b, b_tilde], x[face.order]])
    rhs = np.concatenate([face.c, -face.q[face.order]])
    assert np.abs(M @ z - rhs).max() <= 1e-13 * np.abs(M).max() * np.abs(z).max()
    assert np.all(x[face.fixed] == 0.0)
    Z, B = face.fixed[:l], face.fixed[l:]
    # the reduced system of the same sets (other unknowns), solved by scipy
    system = prob.reduced_system(Z, B)
    z = solve_symmetric(system.M, system.rhs)
    a = np.zeros(l)
    a[system.F] = z[:system.F.size]
    a_tilde = np.where(B, a - C, 0.0)
    a_tilde[system.N] = z[system.F.size:system.n]
    b_ref, b_tilde_ref = z[system.n], z[system.n + 1]
    x_ref = np.concatenate([a, np.where(B, 0.0, C + a_tilde - a)])
    scale = np.abs(x_ref).max()
    np.testing.assert_allclose(x, x_ref, atol=1e-8 * scale)
    np.testing.assert_allclose([b, b_tilde], [b_ref, b_tilde_ref], atol=1e-8 * scale)


def test_refined_face_solution_has_a_smaller_residual():
    """``minimiser(refine=True)`` (the end point's second try, where the face solve's forward error fails the KKT
    check) solves the face system at least as well as the plain solve."""
    K, K_priv, y, C, gamma = problem(4, l=40, C=2.0**10, gamma=2.0**-4)
    prob = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    face = FaceSystem(prob, np.arange(0, 2 * y.size, 3))
    M = face.matrix()
    rhs = np.concatenate([face.c, -face.q[face.order]])
    residuals = []
    for refine in (False, True):
        x, b, b_tilde = face.minimiser(refine=refine)
        residuals.append(np.abs(M @ np.concatenate([[b, b_tilde], x[face.order]]) - rhs).max())
    assert residuals[1] <= residuals[0]


def test_warm_start_along_a_grid_of_C_is_exact(monkeypatch):
    """Each C of a grid started from the previous C's solution (scaled by the ratio of the Cs) reaches the solution
    from scratch: the same objective as Clarabel's, the KKT conditions to KKT_TOL; and the sweep along gamma too.
    The warm-started fits are the active-set method's alone (the decomposition solver is never called)."""
    calls = []
    solve = _native.svm_plus_solve
    monkeypatch.setattr(_native, "svm_plus_solve", lambda *args: calls.append(1) or solve(*args))
    K, K_priv, y, _, _ = problem(11, l=40)
    previous = None
    for C, gamma in [(2.0**k, 0.5) for k in range(-4, 11, 2)] + [(4.0, 2.0**k) for k in range(-4, 5, 2)]:
        n_calls = len(calls)
        model = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO, warm_start=previous)
        assert len(calls) == n_calls + (previous is None)
        assert model.solver == f"{SMO}+active-set"
        assert kkt_violation(model, K, K_priv, 0) < KKT_TOL
        F, F_ref = dual_objective(model, K, K_priv), clarabel_objective(K, K_priv, y, C, gamma, ridge_of(K_priv))
        assert abs(F - F_ref) <= OBJECTIVE_RTOL * abs(F_ref)
        previous = model


def test_warm_start_is_refused_where_it_does_not_apply():
    K, K_priv, y, C, gamma = problem(0)
    model = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=SMO)
    for route in ("qp", "active-set"):
        with pytest.raises(ValueError, match="warm_start is used by the 'auto' and 'smo' routes only"):
            svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, solver=route, warm_start=model)
    with pytest.raises(ValueError, match="other labels"):
        svm_plus.fit_svm_plus(K, K_priv, -y, C, gamma, solver=SMO, warm_start=model)
    with pytest.raises(ValueError, match="other labels"):  # positions of other points
        svm_plus.fit_svm_plus(K[:10, :10], K_priv[:10, :10], y[:10], C, gamma, warm_start=model,
                              warm_start_points=np.arange(1, 11))
    with pytest.raises(ValueError, match="warm_start_points without warm_start"):
        svm_plus.fit_svm_plus(K, K_priv, y, C, gamma, warm_start_points=np.arange(y.size))


@pytest.mark.parametrize("seed", range(4))
def test_feasible_start_meets_the_constraints_and_keeps_the_active_bounds(seed):
    """``feasible_start`` on a subset (a CV fold, a point left out) and at another C: a >= 0, beta >= 0, y'a = 0 and
    1'(a + beta) = l'C, checked here; on the model's own points at its own C it is the model's (a, beta)."""
    K, K_priv, y, C, gamma = problem(seed)
    model = svm_plus.fit_svm_plus(K, K_priv, y, C, gamma)
    rng = np.random.default_rng(seed)
    for points, C_new in ((np.arange(y.size), C), (np.arange(y.size), 4 * C),
                          (np.sort(rng.choice(y.size, y.size - 1, replace=False)), C),
                          (np.sort(rng.choice(y.size, 4 * y.size // 5, replace=False)), C / 2)):
        a, beta = svm_plus.feasible_start(model, C_new, points)
        assert a.min() >= 0.0 and beta.min() >= 0.0
        assert abs(y[points] @ a) <= 1e-9 * C_new * y.size
        assert (a + beta).sum() == pytest.approx(points.size * C_new, rel=1e-12)
        if points.size == y.size:
            np.testing.assert_allclose(a, model.alpha * C_new / C, rtol=1e-12, atol=1e-12 * C_new)
            np.testing.assert_array_equal(beta == 0.0, model.beta <= 1e-12 * C)
        else:  # scalings keep every zero of a zero where the class still carries weight
            assert np.all(a[model.alpha[points] == 0.0] == 0.0)


def test_leave_one_out_refits_give_the_decision_values_of_cold_qp_refits():
    """The exact LOO's refits (bordered active-set iterations, else the default route warm-started from the full model
    without the point) give the LOO decision values of cold QP refits written here, at a small and a large C."""
    K, K_priv, y, C, gamma = problem(3)
    for C_try in (C / 16, C * 16):
        model = svm_plus.fit_svm_plus(K, K_priv, y, C_try, gamma)
        loo = svm_plus.leave_one_out(model, K, K_priv)
        for t, p in enumerate(loo.points):
            rest = np.delete(np.arange(y.size), p)
            sub = np.ix_(rest, rest)
            cold = svm_plus.fit_svm_plus(K[sub], K_priv[sub], y[rest], C_try, gamma, solver="qp")
            assert loo.decision_loo[t] == pytest.approx(float(K[p, rest] @ (cold.y * cold.alpha) + cold.b), abs=1e-5)


def test_rows_route_from_a_neighbouring_solution_reaches_clarabels_minimum(monkeypatch):
    """fit_svm_plus_rbf_rows started from another C's model on more points (a CV fold's start) ends within its
    tolerance of Clarabel's minimum of the fold's problem at its own C, and so does fit_svm_plus above the polish
    size, which keeps the decomposition solver's solution from the start it is given."""
    rng = np.random.default_rng(11)
    l = 80
    X, X_priv = rng.normal(size=(l, 3)), rng.normal(size=(l, 1))
    y = np.where(X[:, 0] + X_priv[:, 0] + 0.3 * rng.normal(size=l) > 0, 1.0, -1.0)
    kg, pg, gamma = 0.4, 1.5, 0.5
    K, K_priv = ws.rbf_kernel(X, gamma=kg), ws.rbf_kernel(X_priv, gamma=pg)
    full = svm_plus.fit_svm_plus_rbf_rows(X, X_priv, y, 1.0, gamma, kg, pg, tol=1e-9)
    train = np.flatnonzero(np.arange(l) % 4 != 0)
    sub = np.ix_(train, train)
    F_ref = clarabel_objective(K[sub], K_priv[sub], y[train], 3.0, gamma, ridge_of(K_priv))
    fold = svm_plus.fit_svm_plus_rbf_rows(X[train], X_priv[train], y[train], 3.0, gamma, kg, pg, tol=1e-9,
                                          warm_start=full, warm_start_points=train)
    assert fold.solver == SMO and fold.C == 3.0
    assert abs(dual_objective(fold, K[sub], K_priv[sub]) - F_ref) <= 1e-7 * abs(F_ref)
    cold = svm_plus.fit_svm_plus_rbf_rows(X[train], X_priv[train], y[train], 3.0, gamma, kg, pg, tol=1e-9)
    assert fold.iterations < cold.iterations  # it started nearer
    with pytest.raises(ValueError, match="other labels"):
        svm_plus.fit_svm_plus_rbf_rows(X[train], X_priv[train], -y[train], 3.0, gamma, kg, pg, warm_start=full,
                                       warm_start_points=train)
    monkeypatch.setattr("wsvm_span.svm_plus.solver.SMO_POLISH_MAX_L", 50)  # the fold (60 points) is not polished
    kept = svm_plus.fit_svm_plus(K[sub], K_priv[sub], y[train], 3.0, gamma, tol=1e-9, warm_start=full,
                                 warm_start_points=train)
    assert kept.solver == SMO and kept.iterations < cold.iterations
    assert abs(dual_objective(kept, K[sub], K_priv[sub]) - F_ref) <= 1e-7 * abs(F_ref)
