"""Leave-one-out of SVM+: exact by retraining, and from one factorization.

Leaving x_p out of SVM+ is not leaving it out of the equivalent weighted SVM: the
constraint 1'a~ = 0 loses a~_p, so the correcting function and every weight
c_i = C + a~_i move, and even a point with a_p = 0 changes the model when a~_p != 0 (on
the training set such a point can be misclassified when xi_p > 1). So every point with
a_p > 0 or a~_p != 0 is retrained without (a point with a_p = a~_p = 0 leaves the
solution optimal when removed, and has xi_p = 0, y_p f(x_p) >= 1: never an error).

``leave_one_out`` takes each refit in two steps. First, all refits on the full model's active sets minus p at once
(``refits_on_the_model_sets``): their minimisers follow from ONE inverse of the model's reduced KKT system by
bordering, as in ``loo_rule`` below (with one step of iterative refinement), and a refit counts as exact where it
passes the test that ends the active-set method, on the problem without p: no guess contradicted and every KKT
residual, computed from the kernels, at most ``KKT_TOL``. That is the active-set method's own first iteration from
the model's sets, and its last where the sets do not change: 3-97% of the points of a model on w_mixture 1:2
(l = 400), 0-36% on parkinson_speech 1:2 (l = 173, whose refits' sets nearly always change). Second, every other
point is retrained (``refit_without``; ``SVMPlusLeaveOneOut.retrained``), in compiled code on the full problem's
matrices (``SVMPlusProblem.active_set_on``: no matrix cut per refit) as far as the route allows: where bordering ONE
inverse of the model's full KKT system costs less (``BorderedSystem.pays``), the active-set method from the full
model's sets (2-5 iterations a refit on Experiment 8's data), its first iteration the first step's minimiser (not
solved again), each later one's solve bordering that inverse; then (or without it) the default route warm-started
from the full solution made feasible without p (``_refit``). Both steps end in an exact solution of the refit by the
same test, so the LOO decision values are those of the refits retrained alone (to ~1e-7 on Experiment 8's problems;
every LOO error the same, docs/experiments.md) and of cold QP refits (tests/test_svm_plus_loo_sets.py). A first step
that reads the refits off the decomposition solver (its duality gap bounding the error of f^p(x_p)) was tried and
dropped: from the full solution made feasible, it needed 10^3-10^4 steps a refit to a KKT violation of 1e-6 even at
C = 2^-4 on w_mixture, where a bound tight enough to decide the sign of f^p(x_p) needs ~1e-11.

``loo_rule`` is the SVM+ counterpart of the span-rule (method.md section 4): if the active
sets Z = {a_i = 0} and B = {beta_i = 0} do not change when x_p is left out, the reduced
problem is the active-set KKT system of the full solution (``SVMPlusProblem.reduced_system``)
with p's unknowns deleted and p's constant terms (a~_p = -C on B) dropped, so f^p(x_p)
follows from ONE inverse of that system by bordering (a 1x1 or 2x2 solve per point):
O(n^3 + l n^2) for all l points, n = number of free variables. It is exact under that
premise (checked against retraining in the tests) and needs no in-bound SVs, unlike the
weighted-SVM span-rule of the equivalent model, which degenerates for SVM+ (few SVs are
in-bound there: beta_i > 0 forces xi_i = 0, and the correcting function touches 0 at few
points).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from .model import SVMPlus
from .solver import (ACTIVE_SET, ACTIVE_SET_TRY_MAX_ITER, KKT_TOL, RELEASE_TOL, SMO_TOL, ActiveSetFailure,
                     SVMPlusProblem, feasible_start, privileged_ridge, solve_symmetric, with_fit_time)


@dataclass(frozen=True)
class SVMPlusLeaveOneOut:
    """Leave-one-out of SVM+ (``leave_one_out``, ``loo_rule``).

    Parameters
    ----------
    points : ndarray of int, shape (k,)
        Points left out (every point with a_p > 0 or a~_p != 0).
    decision_loo : ndarray of shape (k,)
        f^p(x_p), the decision value of the model trained without x_p.
    sets_unchanged : ndarray of bool, shape (k,), or None
        True where the refit's active sets are the full model's minus p (retraining only; None for
        ``loo_rule``, which assumes it).
    retrained : ndarray of bool, shape (k,), or None
        True where the point was retrained by ``refit_without`` because the refit on the full model's sets
        minus p (``refits_on_the_model_sets``) failed its KKT check (``leave_one_out`` only; None for
        ``loo_rule``).
    error : float
        Fraction of l with y_p f^p(x_p) <= 0.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> loo = svm_plus.leave_one_out(model, K, K_priv)
    >>> round(loo.error, 4)
    0.1667
    """

    points: np.ndarray
    decision_loo: np.ndarray
    sets_unchanged: np.ndarray | None
    retrained: np.ndarray | None
    error: float


#: A privileged kernel's diagonal counts as even (the ridge ``SVMPlusProblem.build`` adds is the same with or
#: without any one point, so the full model's system serves every refit) when its spread is below this share of
#: its largest entry: the mean of l equal entries and of l - 1 of them differ by round-off alone.
RIDGE_RTOL = 1e-12


#: Condition number of a refit's Schur complement (the compiled bordered solve) above which the bordering gives way
#: to a fresh reduced system: there the refit's minimiser is not unique (no free a_i left to pin b, duplicate
#: points), and that system's least squares picks the one the method has always taken.
SCHUR_COND_MAX = 1e12

#: The bordering is given up for the rest of a model's exact LOO once at least this many of its solves have been
#: tried and more were refused (Schur complement too ill-conditioned: ``SCHUR_COND_MAX``) than served: each refused
#: one costs its fresh reduced system on top. On w_mixture 1:2 (l = 400, C = 2^8, narrow kernels) 812 of 1,608 were
#: refused and the LOO took 12.5 s against 4.2 s without the bordering; on bank_marketing and parkinson_speech none
#: was, and the bordering is 1.1-1.4x faster there.
BORDERED_TRIAL_SOLVES = 20


def active_sets(model: SVMPlus) -> tuple[np.ndarray, np.ndarray]:
    """(Z, B): a_i = 0 and beta_i = 0 (to ``solver.KKT_TOL``) of a solution."""
    return model.alpha == 0.0, model.beta <= KKT_TOL * model.C


def _points(model: SVMPlus) -> np.ndarray:
    return np.flatnonzero((model.alpha != 0.0) | (model.alpha_tilde != 0.0))


class BorderedSystem:
    """The dual's minimiser on given active sets with one point left out, from ONE inverse of the full model's
    KKT system.

    The full system is the equality-constrained QP of all 2l variables x = [a; a~] with the model's active
    constraints as rows (a_i = 0 on Z0, a~_i - a_i = -C on B0) besides y'a = 0 and 1'a~ = 0: its matrix
    K0 = [[blkdiag(Q, T), A0'], [A0, 0]] does not depend on which point is left out. Leaving p out is pinning
    a_p = a~_p = 0 in it (p then adds nothing to the objective or to the two sums), and a refit's active sets
    differ from the model's in a few points: each added row (a pin, a new a_i = 0 or beta_i = 0) and each
    dropped row (a multiplier held at 0, the row freed by its own unknown) borders K0 by one column w_j. With
    W those columns and d their right-hand sides, the bordered system's solution is x = x0 - K0^-1 W mu,
    (W' K0^-1 W) mu = W' x0 - d (Schur complement; x0 = K0^-1 r0): O(N k) for k changed rows against a fresh
    reduced system's O(n^3) (``SVMPlusProblem.solve_on_sets``), N = 2l + 2 + |Z0| + |B0|, one O(N^3) inverse
    per model. The reduced system is this one with the active rows eliminated, so both give the same minimiser.

    ``build`` returns None where the bordering cannot serve: K0 singular (the model's own reduced system was,
    duplicate free points), the inverse too inexact to give the model itself back within the KKT check's
    tolerance, or a ridge that moves when p leaves (a privileged kernel with an uneven diagonal;
    ``SVMPlusProblem.build`` scales the ridge by the mean diagonal of the points trained on). Where the sets a
    bordered refit converges to fail the KKT check, they are solved once more on their own reduced system. The
    bordered solves run in the compiled active-set method (``SVMPlusProblem.active_set_on``, ``native``). Kept by
    measurement (``benchmarks/bench_svm_plus_loo.py``): on models with many free variables the bordering still pays
    with compiled solves (parkinson_speech 1:2, l = 173, kernel scale 2^6, C = 2^6-2^10: a model's exact LOO
    0.089-0.091 s with the Python bordering, 0.19-0.22 s by compiled fresh reduced systems alone, 0.047-0.051 s by
    the compiled bordering; the 67 sampled models 6.69 s without it, 5.18 s with it).
    """

    def __init__(self, problem: SVMPlusProblem, Z0, B0, inverse, x0):
        self.problem, self.Z0, self.B0, self.inverse, self.x0 = problem, Z0, B0, inverse, x0
        self.served = self.refused = 0  # solves so far (``failing``)
        self.Z0_u8, self.B0_u8 = Z0.astype(np.uint8), B0.astype(np.uint8)
        l = problem.y.size
        self.row_of = np.full(2 * l, -1)  # the multiplier's position of each point's active row: a_i, then beta_i
        self.row_of[np.flatnonzero(Z0)] = 2 * l + 2 + np.arange(np.count_nonzero(Z0))
        self.row_of[l + np.flatnonzero(B0)] = 2 * l + 2 + np.count_nonzero(Z0) + np.arange(np.count_nonzero(B0))
        self.row_of = self.row_of.astype(np.int64)

    @staticmethod
    def pays(Z0, B0, n_refits: int) -> bool:
        """Whether one inverse of the full system (~2 N^3 flops) costs less than the refits' own reduced systems
        (one factorization of ~n^3 / 3 flops per active-set iteration, ~3 iterations a refit; n = the model's
        free variables): where n is small (the W toy's n = 20-50 of N = 750 at l = 200) those are cheap and
        the inverse made the exact LOO 1.1-1.6x slower."""
        N = 2 * Z0.size + 2 + np.count_nonzero(Z0) + np.count_nonzero(B0)
        n = 2 * Z0.size - np.count_nonzero(Z0) - np.count_nonzero(B0)
        return 2.0 * N**3 < n_refits * float(n) ** 3

    @classmethod
    def build(cls, problem: SVMPlusProblem, Z0, B0) -> BorderedSystem | None:
        l, C = problem.y.size, problem.C
        if not _ridge_is_even(problem):
            return None
        iZ, iB = np.flatnonzero(Z0), np.flatnonzero(B0)
        n = 2 * l + 2 + iZ.size + iB.size
        K0 = np.zeros((n, n))
        K0[:l, :l] = problem.Q
        K0[l:2 * l, l:2 * l] = problem.T
        K0[:l, 2 * l] = K0[2 * l, :l] = problem.y
        K0[l:2 * l, 2 * l + 1] = K0[2 * l + 1, l:2 * l] = 1.0
        rows = 2 * l + 2 + np.arange(iZ.size)
        K0[rows, iZ] = K0[iZ, rows] = 1.0
        rows = 2 * l + 2 + iZ.size + np.arange(iB.size)
        K0[rows, iB] = K0[iB, rows] = -1.0
        K0[rows, l + iB] = K0[l + iB, rows] = 1.0
        r0 = np.zeros(n)
        r0[:l] = 1.0
        r0[rows] = -C
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", sla.LinAlgWarning)
                inverse = sla.solve(K0, np.eye(n), assume_a="sym", check_finite=False)
        except (np.linalg.LinAlgError, sla.LinAlgWarning):
            return None
        x0 = inverse @ r0
        # Products with an explicit inverse have errors of cond(K0) eps |x|, not the small residuals of a
        # backward-stable solve: where the base's own solution leaves residuals above the KKT check's tolerance
        # (margin units in the stationarity rows, units of C in the constraint rows; bank_marketing at
        # C = 2^6-2^8, gamma = 4-16: 1e-7-5e-7), nearly every refit would end in a fresh solve anyway
        residual = np.abs(r0 - K0 @ x0)
        if max(residual[:2 * l].max(), residual[2 * l:].max() / C) > KKT_TOL:
            return None
        return cls(problem, Z0, B0, inverse, x0)

    @property
    def failing(self) -> bool:
        """Whether the bordering refuses more solves than it serves (after ``BORDERED_TRIAL_SOLVES`` of them)."""
        return self.served + self.refused >= BORDERED_TRIAL_SOLVES and self.refused > self.served

    def native(self, p: int) -> tuple:
        """The bordering of the refit without p, as ``_native.svm_plus_active_set`` takes it."""
        return self.inverse, self.x0, self.Z0_u8, self.B0_u8, self.row_of, int(p), SCHUR_COND_MAX


def refit_without(model: SVMPlus, K, K_priv, p: int, bordered: BorderedSystem | None = None, known=None
                  ) -> tuple[SVMPlus, np.ndarray]:
    """SVM+ retrained without training point p, warm-started from ``model``.

    Returns the model on the l - 1 other points and their indices: ``leave_one_out``'s refit of p (``_refit``)
    as a model; ``bordered``: the full model's bordering (``BorderedSystem``), each iteration's solve bordering it.
    ``known`` = (Z, B, (a, a~, b, b~)) over the other points: a minimiser on the sets Z, B already
    found (``refits_on_the_model_sets``: on the model's sets minus p, the first iteration of both ways), which the
    primal-dual method takes instead of solving those sets again.
    """
    t0 = time.perf_counter()
    K, K_priv = np.asarray(K, dtype=float), np.asarray(K_priv, dtype=float)
    problem = SVMPlusProblem.build(K, K_priv, model.y, model.C, model.gamma)
    solved, rest = _refit(model, problem, K, K_priv, p, bordered, known)
    if isinstance(solved, SVMPlus):
        return with_fit_time(solved, time.perf_counter() - t0), rest
    a, a_tilde, b, b_tilde, iterations = solved
    sub = SVMPlus(alpha=a, alpha_tilde=a_tilde, b=float(b), b_tilde=float(b_tilde), y=model.y[rest], C=model.C,
                  gamma=model.gamma, decision_train=model.y[rest] * (problem.Q[np.ix_(rest, rest)] @ a) + b,
                  correcting_train=_T_without(problem, rest) @ a_tilde + b_tilde,
                  ridge=privileged_ridge(problem.priv_diag[rest]), solver=ACTIVE_SET, iterations=iterations)
    return with_fit_time(sub, time.perf_counter() - t0), rest


def _T_without(problem: SVMPlusProblem, rest) -> np.ndarray:
    """T of the problem on ``rest``, as ``SVMPlusProblem.build`` makes it (its diagonal with the ridge of those
    points, ``privileged_ridge``)."""
    T = problem.T[np.ix_(rest, rest)]
    diag = problem.priv_diag[rest] / problem.gamma
    diag += privileged_ridge(problem.priv_diag[rest]) / problem.gamma
    T[np.diag_indices_from(T)] = diag
    return T


def _refit(model: SVMPlus, problem: SVMPlusProblem, K, K_priv, p: int, bordered: BorderedSystem | None = None,
           known=None):
    """The refit without p: ((a, a~, b, b~, iterations), rest) where the compiled primal-dual active-set method
    solves it on the full problem's matrices (``SVMPlusProblem.active_set_on``: no matrix cut), else (the model,
    rest) by the rest of ``fit_svm_plus``'s default route on the cut problem. The route is the one the refits always
    took: where ``bordered`` (the full model's bordering, ``BorderedSystem``) is given, the method from the model's
    active sets minus p, each iteration's solve bordering it (1-3 iterations where the sets barely move); then (or
    without it) the default route warm-started from the model's solution made feasible without p (``feasible_start``:
    its active sets kept), whose first try, the primal-dual method from that point's sets
    (``SVMPlusProblem.exact_from``), runs compiled in place too, then the primal method and, where that fails too,
    the decomposition solver and the QP route. So the active-set methods, not the QP route, finish nearly every
    refit: on bank_marketing 2:1 (l = 200) models whose sets move, 1.5-2.5 ms a refit where the QP route took
    15-260 ms (in Python; ``benchmarks/bench_svm_plus_loo.py``).

    ``problem``: the full model's (``SVMPlusProblem.build`` of K, K_priv)."""
    rest = np.delete(np.arange(model.n_train), p)
    if bordered is not None:
        Z, B = active_sets(model)
        try:
            return problem.active_set_on(rest, Z[rest], B[rest], first=known, bordered=bordered), rest
        except ActiveSetFailure:
            pass
    start = feasible_start(model, model.C, rest)
    try:
        return problem.active_set_on(rest, start[0] == 0.0, start[1] == 0.0, ACTIVE_SET_TRY_MAX_ITER,
                                     first=known), rest
    except ActiveSetFailure:
        pass
    sub = SVMPlusProblem.build(K[np.ix_(rest, rest)], K_priv[np.ix_(rest, rest)], model.y[rest], model.C,
                               model.gamma)
    # fit_svm_plus's default route on the problem already cut (not cut again from K and K~), its first try made
    return sub.smo(SMO_TOL, True, start, qp_solver="auto", first=known, tried=True), rest


def leave_one_out(model: SVMPlus, K, K_priv) -> SVMPlusLeaveOneOut:
    """Exact leave-one-out of SVM+: retrain without each point that can change it (warm-started).

    Every refit is first tried on the full model's active sets minus p, all of them from one inverse
    (``refits_on_the_model_sets``), and taken where it passes the active-set method's own acceptance test on the
    problem without p; the others are retrained by ``refit_without``.

    Parameters
    ----------
    model : SVMPlus
        The model trained on all l points.
    K, K_priv : array-like of shape (l, l)
        Its ordinary and privileged kernels.

    Returns
    -------
    SVMPlusLeaveOneOut
        The LOO decision values and error.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> round(svm_plus.leave_one_out(model, K, K_priv).error, 4)
    0.1667
    """
    y = model.y
    K, K_priv = np.asarray(K, dtype=float), np.asarray(K_priv, dtype=float)
    Z, B = active_sets(model)
    points = _points(model)
    f_loo = np.empty(points.size)
    unchanged = np.zeros(points.size, dtype=bool)
    # without the only point of its class one class is left: no classifier, counted as an error
    lone = np.array([np.count_nonzero(y == y[p]) == 1 for p in points], dtype=bool)
    f_loo[lone] = -y[points[lone]]
    retrained = ~lone
    known = {}  # t: the minimiser of points[t]'s refit on the model's sets minus it (``_refit``)
    problem = SVMPlusProblem.build(K, K_priv, y, model.C, model.gamma)
    # an unpolished model's sets are its QP solver's rounding, not exact: its refits go the way they always went;
    # where the ridge moves with the point left out, the full model's system is not the refits'
    polished = model.solver.endswith(ACTIVE_SET)
    if polished and _ridge_is_even(problem) and retrained.any():
        tried = np.flatnonzero(retrained)
        exact, f_tried, same, first = refits_on_the_model_sets(model, problem, points[tried])
        f_loo[tried[exact]], unchanged[tried[exact]] = f_tried[exact], same[exact]
        retrained[tried[exact]] = False
        # the others' first iteration on the model's sets minus p is done: their retraining starts after it
        for j in np.flatnonzero(~exact):
            rest = np.delete(np.arange(model.n_train), points[tried[j]])
            known[tried[j]] = Z[rest], B[rest], (first[0][rest, j], first[1][rest, j], float(first[2][j]),
                                                 float(first[3][j]))
    bordered = (BorderedSystem.build(problem, Z, B)
                if polished and BorderedSystem.pays(Z, B, np.count_nonzero(retrained)) else None)
    for t in np.flatnonzero(retrained):
        if bordered is not None and bordered.failing:
            bordered = None
        solved, rest = _refit(model, problem, K, K_priv, points[t], bordered, known.get(t))
        if isinstance(solved, SVMPlus):
            a, a_tilde, b = solved.alpha, solved.alpha_tilde, solved.b
        else:
            a, a_tilde, b, _, _ = solved
        f_loo[t] = float(K[points[t], rest] @ (y[rest] * a) + b)
        # the refit's active sets (``active_sets`` of its model): a_i = 0, beta_i = C + a~_i - a_i <= KKT_TOL C
        Z_sub, B_sub = a == 0.0, model.C + a_tilde - a <= KKT_TOL * model.C
        unchanged[t] = np.array_equal(Z_sub, Z[rest]) and np.array_equal(B_sub, B[rest])
    return SVMPlusLeaveOneOut(points=points, decision_loo=f_loo, sets_unchanged=unchanged, retrained=retrained,
                              error=_error(y[points], f_loo, model.n_train))


def refits_on_the_model_sets(model: SVMPlus, problem: SVMPlusProblem, points) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
    """The refits without each of ``points`` on the full model's active sets minus p, and which of them are exact.

    Each refit's minimiser on those sets comes from ONE inverse of the model's reduced KKT system by bordering
    (``_Bordering``, the module's doc). It is the exact refit where it passes the test that ends the
    active-set method (``SVMPlusProblem.active_set``) on the problem without p: no guess contradicted (mu_i >=
    -RELEASE_TOL on Z, xi_i >= -RELEASE_TOL on B, a_i and beta_i >= -KKT_TOL C off them) and every KKT residual
    of the solution (a clipped at 0, ``SVMPlus.kkt_residuals``) at most KKT_TOL: a KKT point of the convex dual is
    its minimiser, whichever way it was found, and the residuals are computed from the kernels anew, so the
    inverse's round-off can make a refit fail (it is then retrained) but not pass wrongly. All refits are refined
    and checked at once by four l x l by l x k matrix products (k = len(points)): no Python per refit.

    ``problem`` must be the model's (``SVMPlusProblem.build``) with a ridge that does not move with the point
    left out (``_ridge_is_even``), and no point may be its class's only one.

    Returns
    -------
    exact, f_loo, same : ndarray of shape (k,)
        Whether the refit passed, f^p(x_p) (meaningful where it did), and whether its active sets (a_i = 0,
        beta_i <= KKT_TOL C) are the model's minus p.
    first : (ndarray (l, k), ndarray (l, k), ndarray (k,), ndarray (k,))
        a, a~, b, b~ of each refit on those sets, unclipped (column t; p's own rows 0): what the active-set
        method's solve on them returns, its first iteration (``refit_without``'s ``known``).
    """
    y, C, l = problem.y, problem.C, problem.y.size
    points = np.asarray(points, dtype=np.intp)
    Z, B = active_sets(model)
    bordering = _Bordering(problem, Z, B, points)
    F, N, n = bordering.system.F, bordering.system.N, bordering.system.n
    left_out = (points, np.arange(points.size))  # entry (p, t): p in the refit without p

    def iterates(W, clip: bool):
        """(a, a~) of the refits whose unknowns are W's columns (a clipped at 0 where ``clip``, as the active-set
        method returns it); p's own a_p = a~_p = 0 (bordered to 0 up to round-off)."""
        A = np.zeros((l, points.size))
        A[F] = W[:F.size]
        A[left_out] = 0.0
        if clip:
            A = np.maximum(A, 0.0)
        A_tilde = np.where(B[:, None], A - C, 0.0)  # a~ = a - C on B
        A_tilde[N] = W[F.size:n]
        A_tilde[left_out] = 0.0
        return A, A_tilde

    def refits(W, clip: bool):
        """(a, a~, b, b~, xi, mu) of the refits whose unknowns are W's columns (``iterates``); p has no conditions
        of its own (xi_p = mu_p = 0)."""
        A, A_tilde = iterates(W, clip)
        xi = problem.T @ A_tilde + W[n + 1]
        mu = problem.Q @ A + np.outer(y, W[n]) - 1.0 + xi
        xi[left_out] = mu[left_out] = 0.0
        return A, A_tilde, W[n], W[n + 1], xi, mu

    W = bordering.unknowns()
    # One step of iterative refinement: products with an explicit inverse have errors of cond(M) eps |z| (w_mixture
    # 1:2, C = 4, gamma = 16: cond 1.7e6, a_i mu_i / C ~ 5e-7 on the free a_i of nearly every refit, above KKT_TOL,
    # where the model's own solve left 4e-11; refined, 386 of its 400 refits pass, the 386 whose sets retraining
    # finds unchanged). The residual r = rhs - M z is minus the
    # gradient of the Lagrangian on the unknowns: mu_i on a free a_i in B, mu_i - xi_i on one off B (there a~_i is
    # an unknown of its own), xi_i on a free a~_i, y'a and 1'a~ in the rows of b and b~.
    A, A_tilde, _, _, xi, mu = refits(W, clip=False)
    R = np.empty_like(W)
    R[:F.size] = -(mu[F] - np.where(B[F, None], 0.0, xi[F]))
    R[F.size:n] = -xi[N]
    R[n], R[n + 1] = -(y @ A), -A_tilde.sum(axis=0)
    W = W + bordering.solve(R)
    wrong = np.zeros((l, points.size), dtype=bool)
    wrong[F] = W[:F.size] < -KKT_TOL * C  # a free a_i below its bound (before the clip)
    wrong[left_out] = False
    A, A_tilde, b, _, xi, mu = refits(W, clip=True)
    beta = C + A_tilde - A  # C at p (a_p = a~_p = 0), which meets every condition
    wrong |= Z[:, None] & (mu < -RELEASE_TOL)
    wrong |= B[:, None] & (xi < -RELEASE_TOL)
    wrong |= ~B[:, None] & (beta < -KKT_TOL * C)
    # SVMPlus.kkt_residuals of each refit, column by column (a >= 0 holds: clipped)
    residual = np.max([np.maximum(-beta.min(axis=0), 0.0) / C, np.maximum(-xi.min(axis=0), 0.0),
                       np.maximum(-mu.min(axis=0), 0.0), np.abs(A * mu).max(axis=0) / C,
                       np.abs(beta * xi).max(axis=0) / C, np.abs(y @ A) / C, np.abs(A_tilde.sum(axis=0)) / C], axis=0)
    exact = ~wrong.any(axis=0) & (residual <= KKT_TOL)
    f_loo = np.einsum("tj,jt->t", problem.K[points] * y, A) + b  # f^p(x_p) = (K Y a^p)_p + b^p
    same = ((A == 0.0) == Z[:, None]) & ((beta <= KKT_TOL * C) == B[:, None])
    same[left_out] = True
    return exact, f_loo, same.all(axis=0), (*iterates(W, clip=False), W[n], W[n + 1])


def _ridge_is_even(problem: SVMPlusProblem) -> bool:
    """Whether the ridge ``SVMPlusProblem.build`` adds is the same without any one point: it is a share of the
    privileged kernel's mean diagonal, which moves with the point left out unless the diagonal is even
    (``RIDGE_RTOL``)."""
    diag = np.diag(problem.T)
    return bool(np.ptp(diag) <= RIDGE_RTOL * np.max(np.abs(diag)))


class _Bordering:
    """The reduced KKT system of the sets Z (a_i = 0), B (beta_i = 0) (``SVMPlusProblem.reduced_system``) with
    each of ``points`` left out in turn, all from ONE inverse (the module's doc): leaving p out drops p's constant
    a~_p = -C from the right-hand side where p is in B and borders p's unknowns to zero (``unknowns``)."""

    def __init__(self, problem: SVMPlusProblem, Z, B, points):
        y = problem.y
        self.C, self.B, self.points = problem.C, B, points
        self.system = system = problem.reduced_system(Z, B)
        F, N, J, posJ, n = system.F, system.N, system.J, system.posJ, system.n
        # the inverse, or the pseudo-inverse when the system is singular (non-unique minimiser)
        self.inverse = solve_symmetric(system.M, np.eye(system.M.shape[0]))
        self.z = self.inverse @ system.rhs
        # Leaving p out of B removes its constant a~_p = -C: rhs loses C d_p with
        # d_p = [T_Jp at posJ; 1 in the row of 1'a~ = 0].
        B_idx = np.flatnonzero(B)
        D = np.zeros((n + 2, B_idx.size))
        D[posJ] = problem.T[np.ix_(J, B_idx)]
        D[n + 1] = 1.0
        self.shift = self.inverse @ D
        self.column_of_B = np.full(y.size, -1)
        self.column_of_B[B_idx] = np.arange(B_idx.size)
        pos_u = np.full(y.size, -1)
        pos_u[F] = np.arange(F.size)
        pos_v = np.full(y.size, -1)
        pos_v[N] = F.size + np.arange(N.size)
        self.pinned = [[pos for pos in (pos_u[p], pos_v[p]) if pos >= 0] for p in points]

    def unknowns(self) -> np.ndarray:
        """Column t: [a_F; a~_N; b; b~] of the problem without points[t] on the sets minus that point."""
        W = np.empty((self.z.size, len(self.points)))
        for t, p in enumerate(self.points):
            W[:, t] = self.z - self.C * self.shift[:, self.column_of_B[p]] if self.B[p] else self.z
        return self._bordered(W)

    def solve(self, R) -> np.ndarray:
        """Column t: the solution of the system without points[t]'s unknowns (pinned to 0) for right-hand side
        R[:, t] (whose entries in p's rows are ignored: those equations go with p)."""
        return self._bordered(self.inverse @ R)

    def _bordered(self, V) -> np.ndarray:
        for t, E in enumerate(self.pinned):
            if E:
                # Border p's unknowns E to zero: v' = v - Minv_E (Minv_EE)^-1 v_E.
                V[:, t] = V[:, t] - self.inverse[:, E] @ np.linalg.solve(self.inverse[np.ix_(E, E)], V[E, t])
        return V


def loo_rule(model: SVMPlus, K, K_priv) -> SVMPlusLeaveOneOut:
    """SVM+'s LOO rule: f^p(x_p) for every point that matters, from one inverse of the active-set KKT system.

    Exact when leaving x_p out does not change the active sets (the module's doc).

    Parameters
    ----------
    model : SVMPlus
        The model trained on all l points.
    K, K_priv : array-like of shape (l, l)
        Its ordinary and privileged kernels.

    Returns
    -------
    SVMPlusLeaveOneOut
        The estimated LOO decision values and error (``sets_unchanged`` and ``retrained`` None).

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> svm_plus.loo_rule(model, K, K_priv).error
    0.2
    """
    K = np.asarray(K, dtype=float)
    y = model.y
    problem = SVMPlusProblem.build(K, np.asarray(K_priv, dtype=float), y, model.C, model.gamma)
    Z, B = active_sets(model)
    points = _points(model)
    bordering = _Bordering(problem, Z, B, points)
    W, F, n = bordering.unknowns(), bordering.system.F, bordering.system.n
    yK_F = y[F][:, None] * K[np.ix_(F, points)]  # column t: y_j K(x_j, x_p) over F
    f_loo = np.array([float(W[:F.size, t] @ yK_F[:, t] + W[n, t]) for t in range(points.size)])
    return SVMPlusLeaveOneOut(points=points, decision_loo=f_loo, sets_unchanged=None, retrained=None,
                              error=_error(y[points], f_loo, model.n_train))


def _error(y, f_loo, l: int) -> float:
    return float(np.sum(-y * f_loo >= 0)) / l
