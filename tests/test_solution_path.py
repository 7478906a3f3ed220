"""Solution path of the weighted SVM against independent ground truth.

Ground truth: LIBSVM trained from scratch at the target weights (``ws.fit_svm`` with a tight
tol, points with c_i = 0 left out), Clarabel on the dual QP (``solvers.qp.solve_qp``), hand-solved
two-point problems, brute-force retraining for LOO / CV (``ws.leave_one_out``,
``ws.kfold_cv_error``), and a LIBSVM scan of theta for the best theta of a segment.
"""
import numpy as np
import pytest

import wsvm_span as ws
from conftest import make_problem
from wsvm_span.data.four_gaussians import make_four_gaussians
from wsvm_span.solution_path import (
    PathEventLimitError,
    best_theta_on_segment,
    follow_path,
    kfold_cv_by_path,
    kkt_violation,
    loo_by_path,
    snake_order,
    sweep_chords,
    sweep_class_grid,
)
from wsvm_span.engines import get_engine
from wsvm_span.active_set import homotopy as path_solver
from wsvm_span.solvers.qp import solve_qp

LIBSVM_TOL = 1e-10
#: the path solves Q + ridge I (ridge = 1e-10 here, see RIDGE_RTOL): hand-solved values are
#: met to ridge * a_i
RIDGE_SLACK = 1e-9
#: LIBSVM keeps Q in single precision (Qfloat = float): its gradients, hence y_i f_i, are
#: off by up to ~2^-24 * sum_j a_j per term of rounding, whatever its stopping tol. The
#: comparisons allow 2^-17 * (1 + sum_j a_j): observed differences stay 10-100x below.
F32_SLACK = 2.0 ** -17


def libsvm_at(K, y, c):
    """LIBSVM from scratch at weights c >= 0 (points with c_i = 0 left out); returns
    (alpha (l,), b, decision values (l,))."""
    keep = np.flatnonzero(c > 0)
    ref = ws.fit_svm(K[np.ix_(keep, keep)], y[keep], c[keep], tol=LIBSVM_TOL)
    alpha = np.zeros(y.shape[0])
    alpha[keep] = ref.alpha
    return alpha, ref.b, K[:, keep] @ ref.coef + ref.b


def assert_matches_libsvm(model, K, y, c, *, check_alpha=False):
    alpha, b, f = libsvm_at(K, y, c)
    tol = F32_SLACK * (1.0 + alpha.sum())
    np.testing.assert_allclose(model.decision_train, f, rtol=0, atol=tol)
    assert abs(model.b - b) <= tol
    assert np.all(model.alpha[c == 0] == 0)
    if check_alpha:
        np.testing.assert_allclose(model.alpha, alpha, rtol=0, atol=alpha_tolerance(model, K, y, c, alpha, tol))


def alpha_tolerance(model, K, y, c, alpha, gradient_tol) -> float:
    """How far LIBSVM's alpha may be from the exact one, from LIBSVM's own accuracy: with the same SV sets,
    both solve the KKT system of the in-bound SVs M, A [a_M; b] = r with A = [[Q_MM, y_M], [y_M', 0]]
    (Q = yy' * K), LIBSVM with a residual of at most ``gradient_tol`` per row (its float32 gradients), so
    |delta a| <= ||A^-1||_inf * gradient_tol; bounded and zero alphas sit exactly on their bounds in both."""
    inbound = np.flatnonzero((alpha > 0) & (alpha < c))
    assert np.array_equal(inbound, model.inbound), "the SV sets differ: alpha is not comparable"
    Q = np.outer(y, y) * K
    A = np.block([[Q[np.ix_(inbound, inbound)], y[inbound][:, None]], [y[inbound][None, :], np.zeros((1, 1))]])
    return float(np.abs(np.linalg.inv(A)).sum(axis=1).max()) * gradient_tol


def direction(p, kind, rng):
    """Target weights of a random path of the given kind."""
    l = p.y.size
    if kind == "class":  # one class's weight scaled
        label = rng.choice([-1.0, 1.0])
        return np.where(p.y == label, p.C * 2.0 ** rng.uniform(-4, 4), p.C)
    if kind == "instance":
        return p.C * rng.lognormal(0.0, 1.0, l)
    if kind == "to_zero":  # some points removed at theta = 1
        c = p.C.copy()
        c[rng.choice(l, size=max(2, l // 10), replace=False)] = 0.0
        c[:2] = p.C[:2]  # keep both classes
        return c
    raise ValueError(kind)


def with_duplicates(p, rng):
    """The problem with a quarter of its points duplicated (same x, same y)."""
    l = p.y.size
    dup = rng.choice(l, size=l // 4, replace=False)
    idx = np.concatenate([np.arange(l), dup])
    X = p.X[idx]
    return X, p.y[idx], ws.rbf_kernel(X, None, p.gamma), p.C[idx] * rng.uniform(0.5, 2.0, idx.size)


CASES = [
    (0, 20, "class", "class"), (1, 20, "instance", "instance"), (2, 20, "imbalanced", "to_zero"),
    (3, 100, "class", "instance"), (4, 100, "instance", "class"), (5, 100, "imbalanced", "class"),
    (6, 100, "instance", "to_zero"), (7, 400, "class", "class"), (8, 400, "instance", "instance"),
    (9, 400, "imbalanced", "instance"), (10, 400, "class", "to_zero"),
]


@pytest.mark.parametrize("seed,l,weighting,kind", CASES)
def test_path_equals_libsvm_at_random_thetas(seed, l, weighting, kind):
    p = make_problem(seed, l, weighting)
    rng = np.random.default_rng(seed)
    start = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    c_end = direction(p, kind, rng)
    thetas = [1.0] if kind == "to_zero" else rng.uniform(0.05, 1.0, size=2)
    for theta in thetas:
        c = p.C + theta * (c_end - p.C)
        res = follow_path(start, p.K, c)
        assert res.fallback is None, res.fallback
        assert res.model.engine == "path"
        assert_matches_libsvm(res.model, p.K, p.y, c, check_alpha=l <= 100)


@pytest.mark.parametrize("seed", [0, 1])
def test_path_with_duplicate_points_equals_libsvm(seed):
    """Duplicates make Q_MM singular; alpha is not unique there, f and b are."""
    rng = np.random.default_rng(seed)
    X, y, K, C = with_duplicates(make_problem(seed, 80, "instance"), rng)
    start = ws.fit_svm(K, y, C, tol=LIBSVM_TOL)
    c = C * rng.lognormal(0.0, 1.0, C.size)
    res = follow_path(start, K, c)
    assert res.fallback is None
    assert_matches_libsvm(res.model, K, y, c)
    # copies of one point never share the margin set (that would make Q_MM singular)
    M = res.model.inbound
    same = (X[M][:, None, :] == X[M][None, :, :]).all(-1) & (y[M][:, None] == y[M][None, :])
    assert same.sum() == M.size


def dual_objective(K, y, a):
    return a.sum() - 0.5 * (y * a) @ K @ (y * a)


@pytest.mark.parametrize("seed,weighting", [(11, "class"), (12, "imbalanced")])
def test_path_end_solves_the_dual_qp_like_clarabel(seed, weighting):
    p = make_problem(seed, 60, weighting)
    rng = np.random.default_rng(seed)
    c = direction(p, "instance", rng)
    res = follow_path(ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL), p.K, c)
    Q = p.y[:, None] * p.y[None, :] * p.K
    qp = solve_qp(Q, -np.ones(60), p.y[None, :], [0.0], np.zeros(60), c, solver="clarabel", tol=1e-12)
    assert qp.status == "optimal"
    # The path's end is feasible and at least as good as the interior-point optimum.
    assert dual_objective(p.K, p.y, res.model.alpha) >= -qp.objective - 1e-9 * abs(qp.objective)
    assert abs(p.y @ res.model.alpha) <= 1e-9 * c.sum()
    np.testing.assert_allclose(res.model.alpha, qp.x, atol=1e-5 * c.max())


def test_weights_reaching_zero_end_with_zero_alpha():
    p = make_problem(13, 120, "class")
    start = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    c = p.C.copy()
    c[start.support[:15]] = 0.0  # remove support vectors, some in-bound, some bounded
    res = follow_path(start, p.K, c)
    assert res.fallback is None
    assert np.all(res.model.alpha[start.support[:15]] == 0)
    assert not np.isin(start.support[:15], res.model.support).any()
    assert_matches_libsvm(res.model, p.K, p.y, c)


def test_events_are_recorded_consistently():
    p = make_problem(14, 150, "instance")
    start = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    res = follow_path(start, p.K, p.C * 3.0)
    ev = res.events
    assert res.n_events == ev.shape[0] > 0
    assert np.all(np.diff(ev["theta"]) >= 0) and ev["theta"][0] >= 0 and ev["theta"][-1] < 1
    allowed = {("O", "M"), ("I", "M"), ("M", "O"), ("M", "I")}
    assert set(zip(ev["from_set"], ev["to_set"])) <= allowed
    assert res.margin_sizes.shape == (res.n_events + 1,)
    steps = np.where(ev["to_set"] == "M", 1, -1)
    np.testing.assert_array_equal(np.diff(res.margin_sizes), steps)
    assert res.margin_sizes[-1] == res.model.inbound.size or res.fallback


def test_simultaneous_events_of_mirror_symmetric_data():
    """Point-mirror symmetric data (x, +1) <-> (-x, -1) with mirrored weights: every event
    comes as a pair at exactly tied theta (the two mirror points cross together)."""
    rng = np.random.default_rng(15)
    half = rng.standard_normal((30, 2)) + np.array([0.6, 0.0])
    X = np.vstack([half, -half])
    y = np.repeat([1.0, -1.0], 30)
    K = ws.rbf_kernel(X, None, 0.5)
    w = rng.uniform(0.5, 4.0, 30)
    C0 = np.concatenate([w, w])
    w1 = w * rng.lognormal(0.0, 1.0, 30)
    c1 = np.concatenate([w1, w1])
    res = follow_path(ws.fit_svm(K, y, C0, tol=LIBSVM_TOL), K, c1)
    assert res.fallback is None
    thetas = res.events["theta"]
    _, counts = np.unique(np.round(thetas, 9), return_counts=True)
    assert res.n_events >= 4 and np.any(counts >= 2)  # ties happened and were handled
    assert_matches_libsvm(res.model, K, y, c1)


def two_points(k):
    K = np.array([[1.0, k], [k, 1.0]])
    return K, np.array([1.0, -1.0])


def test_empty_margin_start_with_net_change_is_hand_solved():
    """Two points, K_12 = k: a_1 = a_2 = min(c_1, c_2, 1/(1-k)). From c = (0.5, 0.5)
    (both bounded, M empty) to (1, 0.8): delta = y_I'd_I = 0.2 > 0, the argmin of U
    enters M; at the end a = 0.8 (point 2 bounded, point 1 in M), b = 1 - 0.8 (1 - k)."""
    k = 0.2
    K, y = two_points(k)
    start = ws.fit_svm(K, y, [0.5, 0.5], tol=LIBSVM_TOL)
    assert start.inbound.size == 0
    res = follow_path(start, K, np.array([1.0, 0.8]))
    assert res.fallback is None
    np.testing.assert_allclose(res.model.alpha, [0.8, 0.8], atol=RIDGE_SLACK)
    assert res.model.b == pytest.approx(1.0 - 0.8 * (1.0 - k), abs=RIDGE_SLACK)
    assert res.events[0]["theta"] == 0.0 and res.events[0]["to_set"] == "M"


def test_empty_margin_without_net_change_walks_the_b_interval():
    """Same two points from c = (0.5, 0.5) to (0.6, 0.6): delta = 0 all along, M stays
    empty, a = c, and b is the middle of the optimal interval (LIBSVM's convention),
    which is 0 by symmetry."""
    K, y = two_points(0.2)
    start = ws.fit_svm(K, y, [0.5, 0.5], tol=LIBSVM_TOL)
    res = follow_path(start, K, np.array([0.6, 0.6]))
    assert res.fallback is None and res.n_events == 0
    np.testing.assert_allclose(res.model.alpha, [0.6, 0.6], atol=RIDGE_SLACK)
    assert abs(res.model.b) < RIDGE_SLACK
    assert abs(ws.fit_svm(K, y, [0.6, 0.6], tol=LIBSVM_TOL).b) < 1e-9


def test_empty_margin_interval_ends_meet_and_both_enter():
    """Four points, all bounded at c = 0.05 (M empty). One point of each class grows by the
    same amount, so delta = 0: the b interval moves until its ends meet, then both extremes
    enter M together (two events at one theta). End checked against LIBSVM."""
    X = np.array([[0.0, 0.0], [0.2, 0.1], [1.0, 1.0], [0.9, 1.2]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    K = ws.rbf_kernel(X, None, 1.0)
    c0 = np.full(4, 0.05)
    start = ws.fit_svm(K, y, c0, tol=LIBSVM_TOL)
    assert start.inbound.size == 0 and start.bounded.size == 4
    c1 = np.array([3.0, 0.05, 3.0, 0.05])
    res = follow_path(start, K, c1)
    assert res.fallback is None
    ev = res.events
    assert ev.size >= 2 and ev["theta"][0] == ev["theta"][1] > 0
    assert set(ev["to_set"][:2]) == {"M"}
    assert_matches_libsvm(res.model, K, y, c1)


def test_event_cap_raises_a_clear_error():
    p = make_problem(16, 150, "instance")
    start = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    with pytest.raises(PathEventLimitError, match="max_events = 3"):
        follow_path(start, p.K, p.C * 5.0, max_events=3)


def test_failed_kkt_check_falls_back_to_libsvm_and_says_so(monkeypatch):
    p = make_problem(17, 80, "class")
    start = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    c = p.C * 2.0
    monkeypatch.setattr(path_solver, "KKT_TOL", -1.0)  # no solution can pass
    res = follow_path(start, p.K, c)
    assert res.fallback is not None and "KKT" in res.fallback
    assert res.model.engine != "path"
    assert_matches_libsvm(res.model, p.K, p.y, c)


def test_unrepairable_start_falls_back_for_every_loo_path(monkeypatch):
    p = make_problem(29, 50, "instance")
    model = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    monkeypatch.setattr(path_solver, "START_GTOL", -1.0)  # no start can pass its check
    got = loo_by_path(model, p.K)
    assert got.n_fallbacks == model.support.size
    assert all(reason.startswith("start:") for reason in got.fallbacks)
    assert got.loo_error == ws.leave_one_out(model, p.K).loo_error


def test_inaccurate_libsvm_start_is_repaired():
    p = make_problem(18, 200, "instance")
    rough = ws.fit_svm(p.K, p.y, p.C, tol=1e-1)
    c = p.C * 1.5
    res = follow_path(rough, p.K, c)
    assert res.fallback is None and res.start_repair_events is not None
    assert_matches_libsvm(res.model, p.K, p.y, c)


def test_bad_input_is_rejected_with_clear_messages():
    p = make_problem(19, 30, "class")
    start = ws.fit_svm(p.K, p.y, p.C)
    with pytest.raises(ValueError, match=">= 0"):
        follow_path(start, p.K, -p.C)
    with pytest.raises(ValueError, match="length 30"):
        follow_path(start, p.K, p.C[:-1])
    with pytest.raises(ValueError, match="NaN"):
        follow_path(start, p.K, np.where(np.arange(30) == 3, np.nan, p.C))
    with pytest.raises(ValueError, match="no positive weight to class"):
        follow_path(start, p.K, np.where(p.y > 0, 0.0, p.C))
    with pytest.raises(ValueError, match=r"\(30, 30\)"):
        follow_path(start, p.K[:20, :20], p.C)
    with pytest.raises(ValueError, match="WeightedSVM"):
        follow_path("model", p.K, p.C)
    with pytest.raises(ValueError, match="max_events"):
        follow_path(start, p.K, p.C, max_events=0)
    with pytest.raises(ValueError, match="K_track"):
        follow_path(start, p.K, p.C, K_track=np.ones((3, 29)))
    with pytest.raises(ValueError, match="folds"):
        kfold_cv_by_path(start, p.K, np.zeros(29))


@pytest.mark.parametrize("seed,l,weighting",
                         [(20, 60, "class"), (21, 80, "instance"), (22, 60, "imbalanced")])
def test_loo_by_path_equals_loo_by_retraining(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    model = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    ref = ws.leave_one_out(model, p.K)
    got = loo_by_path(model, p.K)
    assert got.n_fallbacks == 0
    assert got.loo_error == ref.loo_error
    np.testing.assert_array_equal(got.support, ref.support)
    np.testing.assert_array_equal(np.sign(got.decision_loo), np.sign(ref.decision_loo))
    np.testing.assert_allclose(got.decision_loo, ref.decision_loo,
                               atol=F32_SLACK * (1.0 + model.alpha.sum()))
    np.testing.assert_array_equal(got.sets_unchanged, ref.sets_unchanged)
    assert isinstance(got, ws.LeaveOneOut)


@pytest.mark.parametrize("seed", [0, 1])
def test_loo_by_path_with_duplicate_points(seed):
    """f^p(x_p), hence the LOO error, is unique; which copy of a duplicate carries alpha is
    not (the path splits it evenly, LIBSVM does not), so sets_unchanged is not compared."""
    X, y, K, C = with_duplicates(make_problem(seed, 60, "class"), np.random.default_rng(seed))
    model = ws.fit_svm(K, y, C, tol=LIBSVM_TOL)
    ref = ws.leave_one_out(model, K)
    got = loo_by_path(model, K)
    assert got.n_fallbacks == 0 and got.loo_error == ref.loo_error
    np.testing.assert_allclose(got.decision_loo, ref.decision_loo,
                               atol=F32_SLACK * (1.0 + model.alpha.sum()))


@pytest.mark.parametrize("seed,l,weighting",
                         [(23, 100, "class"), (24, 120, "instance"), (25, 100, "imbalanced")])
def test_cv_by_path_equals_cv_by_retraining(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    folds = ws.stratified_folds(p.y, 5, seed=seed)
    model = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    got = kfold_cv_by_path(model, p.K, folds)
    assert all(f is None for f in got.fallbacks)
    assert got.cv_error == ws.kfold_cv_error(p.K, p.y, p.C, folds=folds, tol=LIBSVM_TOL)
    assert got.n_events.shape == (5,)


def test_class_grid_sweep_equals_libsvm_at_every_node():
    p = make_problem(26, 80, "class")
    lp, lm = [-2.0, 1.0, 4.0], [-1.0, 3.0]
    grid = sweep_class_grid(p.K, p.y, lp, lm, tol=LIBSVM_TOL)
    assert grid.order == snake_order(3, 2) == [(0, 0), (0, 1), (1, 1), (1, 0), (2, 0), (2, 1)]
    assert len(grid.sweep.segments) == 5 and grid.sweep.n_fallbacks == 0
    for i, a in enumerate(lp):
        for j, b in enumerate(lm):
            c = ws.class_weights(p.y, 2.0 ** a, 2.0 ** b)
            np.testing.assert_array_equal(grid.models[i][j].C, c)
            assert_matches_libsvm(grid.models[i][j], p.K, p.y, c)


def test_chords_through_sigmoid_weights_are_exact_at_the_nodes():
    p = make_problem(27, 90, "class")
    q = np.random.default_rng(27).random(90)
    W = [ws.sigmoid_weights(q, A, 0.5, 8.0) for A in (-10.0, 0.0, 10.0, 30.0)]
    sweep = sweep_chords(p.K, p.y, W, tol=LIBSVM_TOL)
    assert len(sweep.models) == 4 and sweep.n_fallbacks == 0
    for model, c in zip(sweep.models[1:], W[1:]):
        assert_matches_libsvm(model, p.K, p.y, c)


def test_best_theta_on_segment_beats_a_fine_libsvm_scan():
    p = make_problem(28, 60, "class")
    rng = np.random.default_rng(28)
    labels = np.where(rng.random(200) < 0.4, 1.0, -1.0)
    X_val = rng.standard_normal((200, 3)) + 0.9 * labels[:, None] * np.eye(3)[0]
    y_val = np.where(X_val[:, 0] > 0, 1.0, -1.0)
    K_val = ws.rbf_kernel(X_val, p.X, p.gamma)
    start = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    c_new = np.where(p.y > 0, p.C * 30.0, p.C / 30.0)
    best = best_theta_on_segment(start, p.K, c_new, K_val, y_val)
    lo, hi = best.interval
    assert 0.0 <= lo <= best.theta <= hi <= 1.0

    def libsvm_val_error(theta):
        c = p.C + theta * (c_new - p.C)
        model = ws.fit_svm(p.K, p.y, c, tol=LIBSVM_TOL)
        return ws.test_error(model, K_val, y_val)

    assert libsvm_val_error(best.theta) == pytest.approx(best.error, abs=1e-12)
    scan = np.linspace(0.0, 1.0, 101)
    errors = np.array([libsvm_val_error(t) for t in scan])
    assert errors.min() >= best.error - 1e-12  # no theta is better than the exact optimum
    # The tracked decision values, linear between breakpoints, give LIBSVM's validation
    # error at every scanned theta (away from f(x_v) ~ 0, where LIBSVM's rounding decides).
    th, F = best.path.track_theta, best.path.track_f
    for t, err in zip(scan, errors):
        k = min(np.searchsorted(th, t, side="right") - 1, th.size - 2)
        w = (t - th[k]) / (th[k + 1] - th[k]) if th[k + 1] > th[k] else 0.0
        f = (1 - w) * F[k] + w * F[k + 1]
        if np.abs(f).min() > 1e-6:
            assert np.mean(-y_val * f >= 0) == pytest.approx(err, abs=1e-12)


def test_four_gaussians_generator():
    X, y, group = make_four_gaussians(400, seed=3)
    assert X.shape == (400, 2) and y.shape == group.shape == (400,)
    assert X.min() == 0.0 and X.max() == 1.0
    for label in (1.0, -1.0):
        for g in (1, 2):
            assert np.count_nonzero((y == label) & (group == g)) == 100
    X2, y2, g2 = make_four_gaussians(400, seed=3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2) and np.array_equal(group, g2)
    assert not np.array_equal(X, make_four_gaussians(400, seed=4)[0])
    # the components sit where the spec puts them: +1 D1 right of -1 D1, and above... in x2
    mean = {(lab, g): X[(y == lab) & (group == g)].mean(0) for lab in (1.0, -1.0) for g in (1, 2)}
    assert mean[(1.0, 1)][0] > mean[(-1.0, 1)][0] and mean[(1.0, 1)][1] < mean[(-1.0, 1)][1]
    assert mean[(1.0, 2)][0] < mean[(-1.0, 2)][0] and mean[(1.0, 2)][1] < mean[(-1.0, 2)][1]
    for bad in (0, 6, 4.0, -4):
        with pytest.raises(ValueError, match="multiple of 4"):
            make_four_gaussians(bad)


# ------------------------------------------------ library integration (method=, engine) ---

@pytest.mark.parametrize("seed,l,weighting", [(40, 60, "class"), (41, 70, "instance")])
def test_resampling_method_path_equals_retraining(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    model = ws.fit_svm(p.K, p.y, p.C, tol=LIBSVM_TOL)
    by_path = ws.leave_one_out(model, p.K, method="path")
    assert isinstance(by_path, ws.LeaveOneOut) and by_path.n_fallbacks == 0
    assert by_path.loo_error == ws.leave_one_out(model, p.K).loo_error
    assert ws.loo_error(p.K, p.y, p.C, tol=LIBSVM_TOL, method="path") == by_path.loo_error
    folds = ws.stratified_folds(p.y, 5, seed=seed)
    retrained = ws.kfold_cv_error(p.K, p.y, p.C, folds=folds, tol=LIBSVM_TOL)
    assert ws.kfold_cv_error(p.K, p.y, p.C, folds=folds, tol=LIBSVM_TOL, method="path") == retrained
    shared = ws.FoldKernels(p.K, folds)
    assert ws.kfold_cv_error(p.K, p.y, p.C, tol=LIBSVM_TOL, fold_kernels=shared, method="path") == retrained
    assert ws.kfold_cv_error(p.K, p.y, p.C, k=5, seed=seed, tol=LIBSVM_TOL, method="path") == retrained


def test_resampling_rejects_an_unknown_method():
    p = make_problem(42, 30, "class")
    with pytest.raises(ValueError, match="method must be one of \\('retrain', 'path'\\)"):
        ws.kfold_cv_error(p.K, p.y, p.C, method="paths")
    with pytest.raises(ValueError, match="method must be one of"):
        ws.leave_one_out(ws.fit_svm(p.K, p.y, p.C), p.K, method="")


@pytest.mark.parametrize("seed,weighting", [(43, "class"), (44, "instance")])
def test_engine_path_solves_the_dual_qp_like_clarabel(seed, weighting):
    """The path engine (LIBSVM at the default tol, re-solved exactly) against Clarabel at 1e-12."""
    assert get_engine("path").capabilities.solution_path
    p = make_problem(seed, 60, weighting)
    model = ws.fit_svm(p.K, p.y, p.C, engine="path")
    assert model.engine == "path"
    Q = (p.y[:, None] * p.y[None, :]) * p.K
    qp = solve_qp(Q, -np.ones(60), p.y[None, :], [0.0], np.zeros(60), p.C, solver="clarabel", tol=1e-12)
    assert dual_objective(p.K, p.y, model.alpha) == pytest.approx(dual_objective(p.K, p.y, qp.x), rel=1e-9)
    assert kkt_violation(model)[0] <= path_solver.KKT_TOL
    assert_matches_libsvm(model, p.K, p.y, p.C)
    # LIBSVM at its default tol is less exact than the polished model
    assert kkt_violation(model)[0] < kkt_violation(ws.fit_svm(p.K, p.y, p.C))[0]


def test_engine_path_keeps_libsvm_with_a_warning_when_no_exact_start(monkeypatch):
    p = make_problem(45, 50, "instance")
    monkeypatch.setattr(path_solver, "START_GTOL", -1.0)  # no start can pass its check
    with pytest.warns(RuntimeWarning, match="engine 'path' returns LIBSVM's solution unpolished"):
        model = ws.fit_svm(p.K, p.y, p.C, engine="path")
    libsvm = ws.fit_svm(p.K, p.y, p.C)
    np.testing.assert_array_equal(model.alpha, libsvm.alpha)
    assert model.b == libsvm.b


def test_evaluation_with_engine_path_uses_paths_and_equals_retraining(monkeypatch):
    from wsvm_span.solution_path import uses

    p = make_problem(46, 70, "instance")
    folds = ws.stratified_folds(p.y, 5, seed=0)
    kw = dict(folds=folds, D=2.0, R2=1.0, compute_loo=True, tol=LIBSVM_TOL)
    ref = ws.evaluate_model(p.K, p.y, p.C, p.K[:20], p.y[:20], **kw)
    calls = []
    for name in ("loo_by_path", "kfold_cv_by_path"):
        real = getattr(uses, name)
        monkeypatch.setattr(uses, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    monkeypatch.setattr(ws.evaluation, "kfold_cv_by_path", uses.kfold_cv_by_path)
    got = ws.evaluate_model(p.K, p.y, p.C, p.K[:20], p.y[:20], engine="path", **kw)
    assert sorted(calls) == ["kfold_cv_by_path", "loo_by_path"]
    assert got.engine == "path"
    for name in ("test_error", "span_rule", "cv_error", "xi_alpha_bound", "sv_count_bound", "loo_error",
                 "n_sv", "n_inbound", "n_bounded"):
        assert getattr(got, name) == getattr(ref, name), name
    # a sum of real terms a_p S_p^2 - y_p f(x_p): LIBSVM's single-precision margins show
    assert got.span_bound == pytest.approx(ref.span_bound, rel=F32_SLACK)
