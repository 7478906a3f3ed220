"""The project's SMO engine ("smo") against independent ground truth.

- the dual QP solved by a general interior-point solver (Clarabel, called here directly, not through the
  project's QP switch), and LIBSVM (scikit-learn's SVC) at the same tolerance;
- the KKT conditions checked by a function written here from their definition (the maximal violating
  pair's gap, feasibility), never by the solver's own report;
- warm starts (any vector, a neighbour's solution, the optimum itself) reaching the cold start's optimum;
- CV and leave-one-out with the warm-started engine against retraining loops written here with SVC.
"""
from __future__ import annotations

import threading
import warnings

import clarabel
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

import wsvm_span as ws
from conftest import make_problem
from wsvm_span import engines
from wsvm_span.engines import smo as smo_module
from wsvm_span.engines.smo import smo_solve
from wsvm_span.engines.warm_start import Solved, feasible_start, rescaled_start, restricted_start

TOL = 1e-7
#: objectives of two tol-accurate solutions agree to this (relative): the gap bound tol on the dual
OBJECTIVE_RTOL = 1e-6
#: a point whose margin y f is this close to 1 may be in-bound in one tol-accurate solution and bounded or
#: outside in another
MARGIN_ATOL = 1e-4

PROBLEMS = [(seed, l, w) for seed, (l, w) in enumerate(
    [(60, "class"), (90, "instance"), (120, "imbalanced"), (80, "class"), (100, "instance"), (70, "imbalanced")])]


def max_violation(K, y, C, alpha) -> float:
    """m(a) - M(a): the largest -y_i G_i over the indices that can move up minus the smallest over those that
    can move down (G = Qa - e); the definition, independent of the engine."""
    G = y * (K @ (y * alpha)) - 1.0
    v = -y * G
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return float(v[up].max() - v[low].min())


def dual_objective(K, y, alpha) -> float:
    coef = y * alpha
    return float(0.5 * coef @ K @ coef - alpha.sum())


def qp_solution(K, y, C) -> np.ndarray:
    """The dual solved by Clarabel: min 1/2 a'Qa - e'a  s.t.  y'a = 0, 0 <= a <= C."""
    l = y.shape[0]
    Q = (y[:, None] * y[None, :]) * K
    eye = sp.identity(l, format="csc")
    A = sp.vstack([sp.csc_matrix(y[None, :]), eye, -eye], format="csc")
    b = np.concatenate([[0.0], C, np.zeros(l)])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-11
    solution = clarabel.DefaultSolver(sp.triu(sp.csc_matrix(Q), format="csc"), -np.ones(l), A, b,
                                      [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(2 * l)], settings).solve()
    assert "Solved" in str(solution.status)
    return np.asarray(solution.x)


def libsvm_solution(K, y, C):
    svc = SVC(C=1.0, kernel="precomputed", tol=TOL).fit(K, y, sample_weight=C)
    alpha = np.zeros(y.shape[0])
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, float(svc.intercept_[0])


@pytest.mark.parametrize("seed,l,weighting", PROBLEMS)
def test_cold_start_solves_the_dual_to_tol(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    alpha, b, _, report = smo_solve(p.K, p.y, p.C, TOL)
    assert report.converged
    assert np.all(alpha >= 0) and np.all(alpha <= p.C)
    assert abs(p.y @ alpha) <= 1e-12 * p.C.sum()
    assert max_violation(p.K, p.y, p.C, alpha) <= TOL
    reference = dual_objective(p.K, p.y, qp_solution(p.K, p.y, p.C))
    assert dual_objective(p.K, p.y, alpha) == pytest.approx(reference, rel=OBJECTIVE_RTOL)
    assert report.objective == pytest.approx(dual_objective(p.K, p.y, alpha), rel=1e-12, abs=1e-12)
    alpha_lib, b_lib = libsvm_solution(p.K, p.y, p.C)
    assert dual_objective(p.K, p.y, alpha) <= dual_objective(p.K, p.y, alpha_lib) + OBJECTIVE_RTOL * abs(reference)
    # the decision function of two tol-accurate solutions agrees on the training points
    f = p.K @ (p.y * alpha) + b
    f_lib = p.K @ (p.y * alpha_lib) + b_lib
    assert np.max(np.abs(f - f_lib)) <= 1e-4


@pytest.mark.parametrize("seed,l,weighting", PROBLEMS)
def test_sets_agree_with_libsvm_off_the_margin(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    mine = ws.fit_svm(p.K, p.y, p.C, engine="smo", tol=TOL)
    libsvm = ws.fit_svm(p.K, p.y, p.C, engine="sklearn", tol=TOL)
    for name in ("support", "inbound", "bounded"):
        differ = np.setxor1d(getattr(mine, name), getattr(libsvm, name))
        # a point in one set and not the other sits on the margin in both solutions
        assert np.all(np.abs(mine.margins[differ] - 1.0) <= MARGIN_ATOL), (name, differ)
        assert np.all(np.abs(libsvm.margins[differ] - 1.0) <= MARGIN_ATOL), (name, differ)


def test_duplicate_points_and_a_flat_kernel():
    """Non-unique duals: duplicated points (some with opposite labels) and a nearly constant kernel, where
    the pair's curvature K_ii + K_jj - 2 K_ij vanishes."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, 2))
    X = np.vstack([X, X[:15]])
    y = np.where(rng.random(55) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    for gamma, C in ((1.0, 4.0), (1e-6, 50.0)):
        K = ws.rbf_kernel(X, None, gamma)
        Cv = np.full(55, C)
        alpha, b, _, report = smo_solve(K, y, Cv, TOL)
        assert report.converged and max_violation(K, y, Cv, alpha) <= TOL
        reference = dual_objective(K, y, qp_solution(K, y, Cv))
        assert dual_objective(K, y, alpha) == pytest.approx(reference, rel=OBJECTIVE_RTOL, abs=1e-9)


def test_a_long_solve_with_many_shrinking_passes():
    """Random labels and a large C: over a thousand shrinking passes, so the shrunk variables' snapshots
    are collapsed many times (csrc/smo.c's MAX_SNAPSHOTS); the solution still meets the KKT conditions."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    y = np.where(rng.random(200) < 0.5, 1.0, -1.0)
    K = ws.rbf_kernel(X, None, 1.0)
    C = np.full(200, 1e5)
    alpha, b, _, report = smo_solve(K, y, C, TOL)
    assert report.converged and report.n_iter > 200 * 32 * 10
    assert max_violation(K, y, C, alpha) <= TOL
    reference = dual_objective(K, y, qp_solution(K, y, C))
    assert dual_objective(K, y, alpha) == pytest.approx(reference, rel=OBJECTIVE_RTOL)


@pytest.mark.parametrize("seed,l,weighting", PROBLEMS[:4])
def test_warm_starts_reach_the_cold_optimum(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    cold, b_cold, _, _ = smo_solve(p.K, p.y, p.C, TOL)
    f_cold = p.K @ (p.y * cold) + b_cold
    rng = np.random.default_rng(seed)
    neighbour, b_n, g_n, _ = smo_solve(p.K, p.y, p.C * 1.7, TOL)
    starts = {
        "random, infeasible": rng.uniform(-1.0, 2.0, l) * p.C,
        "zeros": np.zeros(l),
        "at the bounds": p.C.copy(),
        "a neighbour's solution": neighbour,
        "a neighbour's, rescaled": rescaled_start(Solved(None, p.y, p.C * 1.7, neighbour, p.y * (g_n + 1.0)), p.C),
        "a neighbour's, rescaled, with its gradient": rescaled_start(
            Solved(None, p.y, p.C * 1.7, neighbour, p.y * (g_n + 1.0)), p.C, p.K),
    }
    for name, start in starts.items():
        alpha, b, _, report = smo_solve(p.K, p.y, p.C, TOL, alpha0=start)
        assert report.converged, name
        assert max_violation(p.K, p.y, p.C, alpha) <= TOL, name
        assert dual_objective(p.K, p.y, alpha) == pytest.approx(dual_objective(p.K, p.y, cold), rel=OBJECTIVE_RTOL)
        assert np.max(np.abs(p.K @ (p.y * alpha) + b - f_cold)) <= 1e-4, name
    # from the optimum itself: nothing to do
    again, b_again, _, report = smo_solve(p.K, p.y, p.C, TOL, alpha0=cold)
    # (b from the gradient recomputed in one pass instead of accumulated over the steps: rounding apart)
    assert report.n_iter == 0 and np.array_equal(again, cold) and b_again == pytest.approx(b_cold, abs=1e-12)


def test_an_alpha_an_ulp_below_its_bound_does_not_set_b(monkeypatch):
    """With every alpha at its bound (n* = 0) b is not unique, and every solver takes the middle of the optimal
    interval. A start one ulp below C_i on one point (what a step's rounding leaves) is optimal as it is, so SMO
    makes no step; that point must count as bounded, as the model's sets read it (model.BOUND_RTOL), and not set
    b alone at an end of the interval (issue 26: warm-started grid jobs on bank_marketing)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + 2.0 * rng.normal(size=40) > 0, 1.0, -1.0)
    y[:20], y[20:] = 1.0, -1.0  # balanced: y'a = 0 with every alpha at C
    K = ws.rbf_kernel(X, gamma=0.5)
    C = np.full(40, 1e-3)
    cold = ws.fit_svm(K, y, C, tol=1e-10)  # LIBSVM
    assert cold.inbound.size == 0 and cold.bounded.size == 40
    lb, ub = -np.inf, np.inf  # the interval of b that the bounded points' KKT conditions allow
    for t in range(40):
        g = K[t] @ (cold.alpha * y)  # f_t - b
        # a_t = C_t: y_t f_t <= 1, i.e. b <= 1 - g for y = +1 and b >= -1 - g for y = -1
        if y[t] > 0:
            ub = min(ub, 1.0 - g)
        else:
            lb = max(lb, -1.0 - g)
    assert lb < ub and cold.b == pytest.approx(0.5 * (lb + ub), abs=1e-9)
    # the point that sets the interval's upper end: as a free variable it violates nothing, so SMO keeps it
    f_minus_b = K @ (cold.alpha * y)
    end = int(np.argmin(np.where(y > 0, 1.0 - f_minus_b, np.inf)))
    start = np.array(C)
    start[end] = np.nextafter(C[end], 0.0)
    alpha, b, _, report = smo_solve(K, y, C, 1e-10, alpha0=start)
    assert report.n_iter == 0 and alpha[end] < C[end]
    assert b == pytest.approx(cold.b, abs=1e-9)
    # read with exact bounds, that alpha alone sets b, at the interval's end (the defect this guards against)
    monkeypatch.setattr(smo_module, "BOUND_RTOL", 0.0)
    b_exact = smo_solve(K, y, C, 1e-10, alpha0=start)[1]
    assert b_exact == pytest.approx(ub, abs=1e-9) and abs(b_exact - cold.b) > 0.1


def test_rows_of_a_larger_kernel_equal_the_copied_subproblem():
    p = make_problem(11, 150, "instance")
    rows = np.sort(np.random.default_rng(0).permutation(150)[:110])
    K_sub = np.ascontiguousarray(p.K[np.ix_(rows, rows)])
    full = ws.fit_svm(p.K, p.y, p.C, engine="smo", tol=TOL)
    for start in (None, restricted_start(Solved.from_model(full), rows)):
        in_place = smo_solve(p.K, p.y[rows], p.C[rows], TOL, rows=rows, alpha0=start)
        copied = smo_solve(K_sub, p.y[rows], p.C[rows], TOL, alpha0=start)
        # the same arithmetic on the same values: the same bits
        assert np.array_equal(in_place[0], copied[0]) and in_place[1] == copied[1]
        assert np.array_equal(in_place[2], copied[2])
    with pytest.raises(ValueError, match="idx must hold rows of K"):
        smo_solve(p.K, p.y[:3], p.C[:3], TOL, rows=np.array([0, 1, 150]))


@pytest.mark.parametrize("seed,l,weighting", PROBLEMS[:4])
def test_start_gradients_from_the_neighbour_equal_computed_ones(seed, l, weighting):
    """restricted_start / rescaled_start with K carry the start's gradient, updated from the neighbour's:
    it must be Qa - e at the start, computed here in full."""
    p = make_problem(seed, l, weighting)
    model = ws.fit_svm(p.K, p.y, p.C, engine="smo", tol=TOL)
    neighbour = Solved.from_model(model)
    keep = np.delete(np.arange(l), model.support[:3])  # three support vectors left out
    C_new = p.C.copy()
    C_new[model.bounded[:2]] *= 1.3  # two bounded alphas move with their bounds (and the repair moves some)
    for start, K, y in ((restricted_start(neighbour, keep, p.K), p.K[np.ix_(keep, keep)], p.y[keep]),
                        (rescaled_start(neighbour, C_new, p.K), p.K, p.y)):
        assert start.grad is not None
        assert np.allclose(start.grad, y * (K @ (y * start.alpha)) - 1.0, rtol=0, atol=1e-10)
    # a start that changes most alphas gets no gradient: the solver computes it
    assert rescaled_start(neighbour, np.full(l, 1e-3), p.K).grad is None


def test_feasible_start_changes_the_fewest_alphas():
    rng = np.random.default_rng(3)
    for _ in range(300):
        l = int(rng.integers(2, 40))
        y = rng.choice([-1.0, 1.0], l)
        y[:2] = (1.0, -1.0)
        C = rng.uniform(0.1, 3.0, l)
        raw = rng.uniform(-1.0, 4.0, l) * (rng.random(l) < 0.7)
        start = feasible_start(raw, y, C)
        assert np.all(start >= 0) and np.all(start <= C)
        assert abs(y @ start) <= 1e-12 * max(1.0, C.sum())
        clipped = np.clip(raw, 0.0, C)
        changed = np.flatnonzero(start != clipped)
        # only the heavier class is lowered, and every changed alpha but the last one changed is zeroed
        heavier = 1.0 if clipped[y > 0].sum() > clipped[y < 0].sum() else -1.0
        assert np.all(y[changed] == heavier) and np.all(start[changed] <= clipped[changed])
        assert np.sum(start[changed] > 0) <= 1
        # and they are the smallest of their class
        if changed.size:
            others = np.flatnonzero((y == heavier) & (clipped > 0) & (start == clipped))
            assert not others.size or clipped[changed].max() <= clipped[others].min() + 1e-15


def test_bad_starts_are_refused_with_a_message():
    p = make_problem(2, 30, "class")
    with pytest.raises(ValueError, match="alpha0 holds NaN or inf"):
        ws.fit_svm(p.K, p.y, p.C, engine="smo", alpha0=np.full(30, np.nan))
    with pytest.raises(ValueError, match=r"alpha0 must have shape \(30,\)"):
        ws.fit_svm(p.K, p.y, p.C, engine="smo", alpha0=np.zeros(29))
    with pytest.raises(ValueError, match="engine='sklearn' cannot start from alpha0; engines that can: \\['smo'\\]"):
        ws.fit_svm(p.K, p.y, p.C, engine="sklearn", alpha0=np.zeros(30))


def test_bad_problems_get_fit_svms_errors():
    p = make_problem(2, 30, "class")
    K = p.K.copy()
    K[3, 4] = np.nan
    with pytest.raises(ValueError, match="contains NaN or inf"):
        ws.fit_svm(K, p.y, p.C, engine="smo")
    with pytest.raises(ValueError, match="single class"):
        ws.fit_svm(p.K, np.ones(30), p.C, engine="smo")
    with pytest.raises(ValueError, match="must be positive"):
        ws.fit_svm(p.K, p.y, np.r_[0.0, p.C[1:]], engine="smo")


def test_the_step_limit_warns(monkeypatch):
    p = make_problem(4, 80, "class")
    monkeypatch.setattr(smo_module, "max_iterations", lambda l: 3)
    with pytest.warns(RuntimeWarning, match="engine 'smo' stopped at its step limit \\(3 steps\\)"):
        model = ws.fit_svm(p.K, p.y, p.C, engine="smo")
    assert np.all(model.alpha >= 0)  # a feasible point, not garbage


def test_counting_step_limits_collects_every_stop_and_passes_other_warnings_on(monkeypatch):
    """Two fits from the same line that both stop: two messages (not one per place, as the default filter shows
    warnings); a warning of another kind raised inside still reaches the caller."""
    import warnings

    from wsvm_span.engines import counting_step_limits

    p = make_problem(4, 80, "class")
    monkeypatch.setattr(smo_module, "max_iterations", lambda l: 3)
    with pytest.warns(UserWarning, match="something else"):
        with counting_step_limits() as stopped:
            for _ in range(2):
                ws.fit_svm(p.K, p.y, p.C, engine="smo")
            warnings.warn("something else", UserWarning)
    assert len(stopped) == 2 and all("stopped at its step limit (3 steps)" in m for m in stopped)
    monkeypatch.undo()
    with counting_step_limits() as stopped:
        ws.fit_svm(p.K, p.y, p.C, engine="smo")
    assert stopped == []


@pytest.mark.parametrize("seed,l,weighting", PROBLEMS[:3])
def test_cv_with_warm_folds_equals_retraining_each_fold(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    folds = ws.stratified_folds(p.y, 5, seed=1)
    model = ws.fit_svm(p.K, p.y, p.C, engine="smo", tol=TOL)
    errors = 0
    for fold in range(5):
        held, train = folds == fold, folds != fold
        svc = SVC(C=1.0, kernel="precomputed", tol=TOL).fit(p.K[np.ix_(train, train)], p.y[train],
                                                           sample_weight=p.C[train])
        errors += int(np.sum(p.y[held] * svc.decision_function(p.K[np.ix_(held, train)]) <= 0))
    by_copy = ws.kfold_cv_error(p.K, p.y, p.C, folds=folds, engine="smo", tol=TOL, model=model)
    in_place = ws.kfold_cv_error(p.K, p.y, p.C, folds=folds, engine="smo", tol=TOL, model=model,
                                 fold_kernels=ws.FoldKernels(p.K, folds))
    assert by_copy == in_place == errors / l


@pytest.mark.parametrize("seed,l,weighting", PROBLEMS[:3])
def test_loo_with_warm_retrainings_equals_retraining_without_each_point(seed, l, weighting):
    p = make_problem(seed, l, weighting)
    model = ws.fit_svm(p.K, p.y, p.C, engine="smo", tol=TOL)
    loo = ws.leave_one_out(model, p.K)
    errors = 0
    for i in range(l):
        rest = np.arange(l) != i
        svc = SVC(C=1.0, kernel="precomputed", tol=TOL).fit(p.K[np.ix_(rest, rest)], p.y[rest],
                                                           sample_weight=p.C[rest])
        errors += int(p.y[i] * svc.decision_function(p.K[i:i + 1, rest])[0] <= 0)
    assert loo.loo_error == errors / l


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loo_on_the_margin_system_equals_retraining_without_each_point(seed):
    """Many in-bound SVs (a narrow kernel, a large C): the retrainings start from the margin system's active-set
    solution (resampling._MarginSystemStarts), which must be each retraining's exact solution."""
    from wsvm_span.resampling import _MarginSystemStarts

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((120, 4))
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 1.0 + 0.3 * rng.standard_normal(120) > 0, 1.0, -1.0)
    K = ws.rbf_kernel(X, None, 1.0)
    C = np.full(120, 1000.0)
    model = ws.fit_svm(K, y, C, engine="smo", tol=TOL)
    assert _MarginSystemStarts.of(model, K) is not None  # the path under test
    starts = _MarginSystemStarts.of(model, K)
    solved = 0
    for i in model.support:  # the loop's solution meets the retraining's KKT conditions (checked here)
        rest = np.flatnonzero(np.arange(120) != i)
        start = starts.start(i, rest, TOL)
        if start is not None:
            solved += 1
            assert max_violation(K[np.ix_(rest, rest)], y[rest], C[rest], start.alpha) <= 2 * TOL
            assert np.allclose(start.grad, y[rest] * (K[np.ix_(rest, rest)] @ (y[rest] * start.alpha)) - 1.0,
                               atol=1e-9)
    assert solved >= 0.9 * model.support.size
    loo = ws.leave_one_out(model, K)
    errors = 0
    for t, i in enumerate(loo.support):
        rest = np.arange(120) != i
        svc = SVC(C=1.0, kernel="precomputed", tol=TOL).fit(K[np.ix_(rest, rest)], y[rest], sample_weight=C[rest])
        f = svc.decision_function(K[i:i + 1, rest])[0]
        errors += int(y[i] * f <= 0)
        assert loo.decision_loo[t] == pytest.approx(f, abs=1e-4)
    assert loo.loo_error == errors / 120


def test_fold_starts_along_a_grid_walk_give_the_same_cv():
    """A grid walk reuses each fold's previous model when the full model's sets did not change: the CV
    errors equal those of cold fold trainings at every point."""
    p = make_problem(5, 120, "class")
    folds = ws.stratified_folds(p.y, 5, seed=0)
    starts = ws.FoldStarts()
    previous = None
    for c_minus in 2.0 ** np.arange(-2, 8):
        C = np.where(p.y > 0, 4.0, c_minus)
        start = None if previous is None else rescaled_start(Solved.from_model(previous), C, p.K)
        model = ws.fit_svm(p.K, p.y, C, engine="smo", tol=TOL, alpha0=start)
        walked = ws.kfold_cv_error(p.K, p.y, C, folds=folds, engine="smo", tol=TOL, model=model, fold_starts=starts)
        assert walked == ws.kfold_cv_error(p.K, p.y, C, folds=folds, engine="sklearn", tol=TOL)
        previous = model
    assert len(starts.previous) == 5


def test_it_trains_without_holding_the_gil():
    """While one thread trains, another runs Python code (the solve is long enough to notice)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1500, 10))
    y = np.where(X[:, 0] + 0.8 * rng.standard_normal(1500) > 0, 1.0, -1.0)
    K = ws.rbf_kernel(X, None, 0.1)
    C = np.full(1500, 64.0)
    started, done = threading.Event(), threading.Event()

    def train():
        started.set()
        smo_solve(K, y, C, TOL)
        done.set()

    worker = threading.Thread(target=train)
    worker.start()
    started.wait()
    ticks = 0
    while not done.is_set():
        ticks += 1
    worker.join()
    # with the GIL held for the whole solve this loop could not run until it ended
    assert ticks > 10_000


def test_the_engine_is_registered_with_its_capabilities():
    smo = engines.get_engine("smo")
    assert "smo" in ws.ENGINE_NAMES
    assert smo.capabilities.warm_start and smo.capabilities.kernel_rows and smo.capabilities.per_instance_weights
    assert not engines.get_engine("sklearn").capabilities.warm_start
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = ws.fit_features(make_problem(0, 40).X, make_problem(0, 40).y, 2.0, gamma=0.5, engine="smo")
    assert model.engine == "smo"
