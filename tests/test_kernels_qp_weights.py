"""Kernel blocks and cache, the QP-solver switch, weighting schemes."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel as sk_rbf

import wsvm_span as ws
from wsvm_span.solvers import qp
from wsvm_span.solvers.qp import mosek_backend


def test_rbf_matches_sklearn_and_is_symmetric():
    rng = np.random.default_rng(0)
    X, Z = rng.random((40, 6)), rng.random((15, 6))
    np.testing.assert_allclose(ws.rbf_kernel(X, Z, 0.7), sk_rbf(X, Z, gamma=0.7), atol=1e-14)
    K = ws.rbf_kernel(X, None, 0.7)
    assert np.array_equal(K, K.T) and np.all(np.diag(K) == 1.0)


def test_squared_distances_and_the_kernels_of_several_gammas(monkeypatch):
    from sklearn.metrics.pairwise import euclidean_distances

    import wsvm_span.kernels as kernels
    from wsvm_span.kernels import rbf_from_squared_distances, squared_distances

    monkeypatch.setattr(kernels, "_BLOCK_ELEMENTS", 7 * 300)  # row blocks of 7: the last one partial
    rng = np.random.default_rng(2)
    X, Z = rng.random((300, 6)), rng.random((20, 6))
    D2 = squared_distances(X)
    np.testing.assert_allclose(D2, euclidean_distances(X, squared=True), atol=1e-13)
    assert np.array_equal(D2, D2.T) and np.all(np.diag(D2) == 0.0)
    np.testing.assert_allclose(squared_distances(Z, X), euclidean_distances(Z, X, squared=True), atol=1e-13)
    before, buffer = D2.copy(), np.empty_like(D2)
    for gamma in (0.1, 2.0):
        K = rbf_from_squared_distances(D2, gamma, out=buffer)
        assert K is buffer and np.array_equal(K, ws.rbf_kernel(X, None, gamma))  # the same bits as one gamma's kernel
        np.testing.assert_allclose(K, sk_rbf(X, gamma=gamma), atol=1e-14)
    assert np.array_equal(D2, before)
    with pytest.raises(ValueError, match="gamma must be positive"):
        rbf_from_squared_distances(D2, 0.0)


def test_kernel_cache_computes_once(monkeypatch):
    import wsvm_span.kernels as kernels

    calls = []
    real = kernels.rbf_kernel
    monkeypatch.setattr(kernels, "rbf_kernel", lambda *a, **k: calls.append(a) or real(*a, **k))
    rng = np.random.default_rng(1)
    cache = ws.KernelCache(rng.random((30, 3)), 0.5, rng.random((7, 3)))
    for _ in range(3):
        K, Kt = cache.train, cache.test
    assert len(calls) == 2  # one training kernel, one test block, however often they are read
    np.testing.assert_allclose(K, sk_rbf(cache.X_train, gamma=0.5), atol=1e-14)
    np.testing.assert_allclose(Kt, sk_rbf(cache.X_test, cache.X_train, gamma=0.5), atol=1e-14)
    assert cache.radius2 == pytest.approx(cache.train.max() - cache.train.min())
    assert 0 < cache.diameter <= 2


def test_mosek_without_license_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv(qp.LICENSE_ENV, str(tmp_path / "missing.lic"))
    monkeypatch.setenv("HOME", str(tmp_path))
    mosek_backend.availability.cache_clear()
    try:
        with pytest.raises(qp.SolverUnavailableError, match="MOSEKLM_LICENSE_FILE"):
            qp.qp_solver_name("mosek")
        assert qp.qp_solver_name("auto") == "clarabel"
        assert "license" in qp.qp_fallback_reason()
        spans_solver = ws.analyse_spans(*_tiny_model(), qp_solver="auto").qp_solver
        assert spans_solver == "clarabel"
    finally:
        mosek_backend.availability.cache_clear()


def _tiny_model():
    x = np.array([[-1.0], [1.0], [0.2]])
    y = np.array([-1.0, 1.0, 1.0])
    K = ws.rbf_kernel(x, None, 1.0)
    return ws.fit_svm(K, y, 1.0), K


def test_clarabel_qp_hand_solved():
    """min (x1^2 + x2^2) s.t. x1 + x2 = 1, 0.7 <= x1: optimum (0.7, 0.3)."""
    res = qp.solve_qp(2 * np.eye(2), np.zeros(2), [[1.0, 1.0]], [1.0], lb=[0.7, -np.inf],
                      solver="clarabel")
    assert res.status == "optimal"
    np.testing.assert_allclose(res.x, [0.7, 0.3], atol=1e-7)
    bad = qp.solve_qp(2 * np.eye(2), np.zeros(2), [[1.0, 1.0]], [1.0], ub=[0.2, 0.2],
                      solver="clarabel")
    assert bad.status == "infeasible"


def test_clarabel_qp_general_inequalities_and_equality_multipliers():
    """Hand-solved: min (x^2 + z^2)/2 s.t. x + z = 1, x <= 0.2 -> x = 0.2, z = 0.8, and stationarity
    z + nu = 0 (the Lagrangian + nu'(A_eq x - b_eq)) gives nu = -0.8."""
    res = qp.solve_qp(np.eye(2), np.zeros(2), [[1.0, 1.0]], [1.0], G=[[1.0, 0.0]], h=[0.2], solver="clarabel")
    np.testing.assert_allclose(res.x, [0.2, 0.8], atol=1e-8)
    np.testing.assert_allclose(res.eq_dual, [-0.8], atol=1e-8)
    with pytest.raises(ValueError, match="G and h"):
        qp.solve_qp(np.eye(2), np.zeros(2), [[1.0, 1.0]], [1.0], G=[[1.0, 0.0]])
    with pytest.raises(ValueError, match="G must have shape"):
        qp.solve_qp(np.eye(2), np.zeros(2), [[1.0, 1.0]], [1.0], G=[[1.0, 0.0, 0.0]], h=[0.2])


def test_weighting_schemes_by_hand():
    y = np.array([1.0, -1.0, 1.0])
    np.testing.assert_array_equal(ws.class_weights(y, 4.0, 0.5), [4.0, 0.5, 4.0])
    q = np.array([0.0, 0.5, 1.0])
    w = ws.sigmoid_weights(q, A=2.0, B=0.5, C=8.0)
    np.testing.assert_allclose(w, [8 / (1 + np.e), 4.0, 8 / (1 + np.exp(-1))])
    assert ws.sigmoid_weights(np.array([0.0]), A=10.0, B=0.9, C=0.01)[0] == 0.01  # sigma floor
