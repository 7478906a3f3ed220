"""The reference experiment of the solution path (solution-path.md, "Reference experiment"), measured
once per data set: the path against re-solving at its breakpoints, cold by the engine and hot-started by SMO.

Four 2-D Gaussians (``data.four_gaussians``), RBF exp(-(gamma / p) ||x - x'||^2) with gamma = 1, p = 2;
the weight of group D1 goes from ``d1_start`` (slightly above 0: a path never starts from c_i = 0) to
10 with group D2 fixed at 10. ``measure_reference_path`` is the one measurement that the benchmark
(``benchmarks/bench_solution_path.py exp7``) and the study's Experiment 7 job call; ``trace_reference_path``
traces one such path (every alpha at every breakpoint, and the validation error along it) for the figure
``exp7_alpha_paths``.

Times are CPU seconds of this process (the stable measure on a shared machine; the caller runs it under
one BLAS thread), wall seconds beside them. The engine's re-solves are cold (scikit-learn's LIBSVM has no warm
start). Beside them, the original study's baseline: SMO hot-started at every breakpoint from its own solution
at the previous one (alpha seeding, ``engines.warm_start.rescaled_start``) at a loose tolerance (``HOT_TOL``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..data.four_gaussians import make_four_gaussians
from ..engines import AUTO, DEFAULT_TOL, fit_svm
from ..engines.warm_start import Solved, rescaled_start
from ..kernels import rbf_kernel
from .solver import follow_path, start_path
from .uses import validation_error_pieces

__all__ = ["CpuClock", "D1_END", "D1_START", "D2_WEIGHT", "HOT_ENGINE", "HOT_TOL", "REFERENCE_GAMMA", "END_TOL",
           "ReferencePath", "ReferenceTrace", "hot_resolves", "measure_reference_path", "reference_problem",
           "trace_reference_path"]

#: exp(-(gamma / p) ||x - x'||^2) with gamma = 1 and p = 2 (the input dimension)
REFERENCE_GAMMA = 0.5
#: weights of the cost-weighted path: group D1 from D1_START (slightly above 0) to D1_END, D2 fixed
D1_START = 0.01
D1_END = 10.0
D2_WEIGHT = 10.0
#: LIBSVM's tolerance for the independent solution at the path's end (``end_max_abs_df``): far below the
#: study's 1e-7 so that the difference measures the path, not LIBSVM's stopping rule
END_TOL = 1e-10
#: the hot-started baseline: the original study's SMO re-solving at every breakpoint from the previous
#: breakpoint's solution at tolerance 1e-3 (the only engine here that starts from a given dual)
HOT_ENGINE = "smo"
HOT_TOL = 1e-3


class CpuClock:
    """CPU and wall seconds of a ``with`` block (CPU time is the stable measure on a shared machine)."""

    def __enter__(self):
        self.cpu0, self.wall0 = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu = time.process_time() - self.cpu0
        self.wall = time.perf_counter() - self.wall0


@dataclass(frozen=True)
class ReferencePath:
    """One data set of the reference experiment (Experiment 7): the path against LIBSVM re-solving.

    Parameters
    ----------
    n, seed : int
        The four-Gaussian data set's size and seed.
    engine : str
        The engine of the start model and the re-solves (its registered name).
    n_events, mean_margin_size, max_margin_size : int, float, int
        The path's events and ``|M|`` along it (``PathResult``).
    t_path, t_path_wall : float
        CPU / wall seconds of ``follow_path`` from the start model to c_new.
    n_resolved : int
        Breakpoints LIBSVM re-solved (n_events when all were, fewer when sampled).
    t_resolve, t_resolve_wall : float
        Mean CPU / wall seconds of one LIBSVM re-solve (cold).
    t_libsvm : float
        CPU seconds of re-solving at every breakpoint, t_resolve * n_events (measured when n_resolved ==
        n_events, scaled from the sample otherwise).
    speedup : float
        t_libsvm / t_path.
    hot_tol : float
        Tolerance of the hot-started SMO re-solves.
    t_smo_hot : float
        CPU seconds of SMO re-solving at every breakpoint, each hot-started from its own solution at the
        previous breakpoint (the first from the start model), at ``hot_tol`` (``hot_resolves``).
    speedup_smo_hot : float
        t_smo_hot / t_path.
    max_abs_df_smo_hot : float
        Largest ``|f_path - f_smo_hot|`` over the training points at every breakpoint (the hot re-solves'
        accuracy at ``hot_tol``; up to a constant where no SV is free).
    max_abs_df : float
        Largest ``|f_path - f_LIBSVM|`` over the training points at the re-solved breakpoints (up to a constant at
        the ``n_nonunique_b`` of them where no SV is free, so that b is not unique).
    n_nonunique_b : int
        Re-solved breakpoints where LIBSVM's solution has no free SV.
    end_max_abs_df : float
        The same at theta = 1 against LIBSVM trained from scratch at c_new (``END_TOL``).
    fallback : str or None
        None, or why the path's end was replaced by LIBSVM.

    Examples
    --------
    >>> from wsvm_span.solution_path import measure_reference_path
    >>> row = measure_reference_path(40, 0, resolve=3)
    >>> row.n_resolved, row.fallback, bool(row.max_abs_df < 1e-3)
    (3, None, True)
    """

    n: int
    seed: int
    engine: str
    n_events: int
    mean_margin_size: float
    max_margin_size: int
    t_path: float
    t_path_wall: float
    n_resolved: int
    t_resolve: float
    t_resolve_wall: float
    t_libsvm: float
    speedup: float
    hot_tol: float
    t_smo_hot: float
    speedup_smo_hot: float
    max_abs_df_smo_hot: float
    max_abs_df: float
    n_nonunique_b: int
    end_max_abs_df: float
    fallback: str | None


def reference_problem(n: int, seed: int, d1_start: float = D1_START):
    """(K, y, c_old, c_new) of data set (n, seed): the kernel and the path's two weight vectors."""
    if not (np.isfinite(d1_start) and 0 < d1_start < D1_END):
        raise ValueError(f"d1_start must lie in (0, {D1_END}) (a path never starts from c_i = 0), got {d1_start!r}")
    X, y, group = make_four_gaussians(n, seed)
    K = rbf_kernel(X, None, REFERENCE_GAMMA)
    c_old = np.where(group == 1, d1_start, D2_WEIGHT)
    c_new = np.where(group == 1, D1_END, D2_WEIGHT)
    return K, y, c_old, c_new


def hot_resolves(start, K, y, c_old, c_new, thetas, tol: float = HOT_TOL):
    """SMO re-solving at the breakpoints ``thetas`` (in path order), each hot-started from its own solution at
    the previous one, the first from ``start`` (the model at c_old): the original study's baseline.

    Alpha seeding (``engines.warm_start.rescaled_start``): the alphas at their upper bound move with their
    weights, the others stay, y'a = 0 is restored, and the start's gradient is updated from the previous
    solution where that is cheaper than the solver's own pass. The optimum reached is the one a cold start
    reaches, to ``tol``.

    Parameters
    ----------
    start : WeightedSVM
        The solution at c_old (any engine).
    K : ndarray of shape (l, l)
        The training kernel.
    y : ndarray of shape (l,)
        The labels.
    c_old, c_new : ndarray of shape (l,)
        The path's weights at theta = 0 and 1.
    thetas : array-like of float
        The breakpoints, non-decreasing.
    tol : float, default=1e-3
        SMO's tolerance.

    Yields
    ------
    WeightedSVM
        The SMO solution at c_old + theta (c_new - c_old), one per theta, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.engines import fit_svm
    >>> from wsvm_span.solution_path.reference import hot_resolves, reference_problem
    >>> K, y, c_old, c_new = reference_problem(40, 0)
    >>> start = fit_svm(K, y, c_old, engine="smo")
    >>> [m.engine for m in hot_resolves(start, K, y, c_old, c_new, [0.5, 1.0])]
    ['smo', 'smo']
    """
    previous = start
    for theta in thetas:
        c = c_old + theta * (c_new - c_old)
        seed = rescaled_start(Solved.from_model(previous), c, K)
        previous = fit_svm(K, y, c, engine=HOT_ENGINE, tol=tol, check_input=False, alpha0=seed)
        yield previous


def _largest_difference(tracked, thetas, decisions, no_free_sv) -> tuple[float, int]:
    """(largest |f_path - f| over the training points at the breakpoints ``thetas``, how many of them had no
    free SV). Where a solution has no free SV (e.g. the only margin point reaches a bound at that breakpoint)
    every b of an interval is optimal and a re-solver may take any of it, the path one end: f is compared up to
    that constant."""
    rows = np.searchsorted(tracked.track_theta, thetas, side="right") - 1
    largest, nonunique_b = 0.0, 0
    for row, f, no_free in zip(rows, decisions, no_free_sv):
        df = tracked.track_f[row] - f
        if no_free:
            nonunique_b += 1
            df = df - df.mean()
        largest = max(largest, float(np.max(np.abs(df))))
    return largest, nonunique_b


def measure_reference_path(n: int, seed: int, *, d1_start: float = D1_START, resolve: int | None = None,
                           tol: float = DEFAULT_TOL, engine: str = AUTO, hot_tol: float = HOT_TOL) -> ReferencePath:
    """Follow the cost-weighted path of a four-Gaussian data set, re-solve by the engine (cold) at its
    breakpoints, and by SMO hot-started from the previous breakpoint at every breakpoint.

    Parameters
    ----------
    n : int
        Size of the data set (a multiple of 4).
    seed : int
        Its seed.
    d1_start : float, default=0.01
        Starting weight of group D1 (the path ends at 10; group D2 stays at 10).
    resolve : int or None, default=None
        None re-solves at every breakpoint; a positive count re-solves at that many breakpoints drawn without
        replacement (seeded by ``seed``) and scales the time to all of them.
    tol : float, default=1e-7
        The engine's tolerance (the start model and the cold re-solves).
    engine : str, default="auto"
        The engine of the start model and the cold re-solves.
    hot_tol : float, default=1e-3
        SMO's tolerance for the hot-started re-solves (``hot_resolves``; always at every breakpoint: each
        starts from the previous one's solution).

    Returns
    -------
    ReferencePath
        The path's events and times against the re-solvers', and their largest differences.

    Raises
    ------
    ValueError
        If n is not a positive multiple of 4, ``d1_start`` is not in (0, 10), ``resolve`` is neither None
        nor a positive integer, or ``hot_tol`` is not positive.

    Examples
    --------
    >>> from wsvm_span.solution_path import measure_reference_path
    >>> row = measure_reference_path(40, 0, resolve=3)
    >>> row.n, row.engine, row.n_events > 0
    (40, 'sklearn', True)
    """
    if resolve is not None and not (isinstance(resolve, (int, np.integer)) and resolve >= 1):
        raise ValueError(f"resolve must be None (every breakpoint) or a positive integer, got {resolve!r}")
    if not (np.isfinite(hot_tol) and hot_tol > 0):
        raise ValueError(f"hot_tol must be a positive tolerance, got {hot_tol!r}")
    K, y, c_old, c_new = reference_problem(n, seed, d1_start)
    start = fit_svm(K, y, c_old, engine=engine, tol=tol, check_input=False)
    with CpuClock() as t_path:
        res = follow_path(start, K, c_new, check_input=False)
    thetas = res.events["theta"]
    picked = np.arange(thetas.size)
    if resolve is not None and resolve < thetas.size:
        picked = np.sort(np.random.default_rng(seed).choice(thetas.size, resolve, replace=False))
    resolved = []
    with CpuClock() as t_lib:
        for k in picked:
            resolved.append(fit_svm(K, y, c_old + thetas[k] * (c_new - c_old), engine=engine, tol=tol,
                                    check_input=False))
    # only what the comparison needs is kept: a model per breakpoint would hold several l-vectors each
    hot_f, hot_no_free = [], []
    with CpuClock() as t_hot:
        for model in hot_resolves(start, K, y, c_old, c_new, thetas, tol=hot_tol):
            hot_f.append(model.decision_train)
            hot_no_free.append(model.inbound.size == 0)
    # The path's decision values at the breakpoints, from a second (untimed) run that tracks them
    max_df, nonunique_b, max_df_hot = 0.0, 0, 0.0
    if thetas.size and res.fallback is None:
        tracked = follow_path(start, K, c_new, K_track=K, check_input=False)
        max_df, nonunique_b = _largest_difference(tracked, thetas[picked], [r.decision_train for r in resolved],
                                                  [r.inbound.size == 0 for r in resolved])
        max_df_hot, _ = _largest_difference(tracked, thetas, hot_f, hot_no_free)
    elif thetas.size:
        max_df = max_df_hot = float("nan")  # the path did not reach its end: no path values to compare
    end_ref = fit_svm(K, y, c_new, engine=engine, tol=END_TOL, check_input=False)
    per_solve = t_lib.cpu / picked.size if picked.size else float("nan")
    t_libsvm = per_solve * res.n_events if picked.size else 0.0
    return ReferencePath(
        n=int(n), seed=int(seed), engine=start.engine, n_events=res.n_events, mean_margin_size=res.mean_margin_size,
        max_margin_size=int(res.margin_sizes.max()), t_path=t_path.cpu, t_path_wall=t_path.wall,
        n_resolved=int(picked.size), t_resolve=per_solve,
        t_resolve_wall=t_lib.wall / picked.size if picked.size else float("nan"), t_libsvm=t_libsvm,
        speedup=t_libsvm / t_path.cpu if t_path.cpu > 0 else float("nan"), hot_tol=float(hot_tol),
        t_smo_hot=t_hot.cpu, speedup_smo_hot=t_hot.cpu / t_path.cpu if t_path.cpu > 0 else float("nan"),
        max_abs_df_smo_hot=max_df_hot, max_abs_df=max_df,
        n_nonunique_b=nonunique_b,
        end_max_abs_df=float(np.max(np.abs(res.model.decision_train - end_ref.decision_train))),
        fallback=res.fallback)


@dataclass(frozen=True)
class ReferenceTrace:
    """One cost-weighted path of the reference experiment, traced (``trace_reference_path``).

    Parameters
    ----------
    n, n_val, seed : int
        Training and validation sizes and the seed of the four-Gaussian draw.
    y, group : ndarray of shape (n,)
        The training labels and groups (1 = D1, whose weight moves; 2 = D2).
    theta : ndarray of shape (P,)
        The path's breakpoints, 0 and 1 included; alpha is linear in theta between them.
    weight_d1 : ndarray of shape (P,)
        Group D1's weight there (``D1_START`` + theta (``D1_END`` - ``D1_START``)).
    alpha : ndarray of shape (P, n)
        The exact solution at each breakpoint.
    error_lo, error_hi, validation_error : ndarray of shape (Q,)
        The validation error along the path: constant on each open piece (error_lo, error_hi) of theta
        (``validation_error_pieces``).
    n_fallbacks : int
        Steps between breakpoints whose end failed the KKT check and came from LIBSVM instead.

    Examples
    --------
    >>> from wsvm_span.solution_path import trace_reference_path
    >>> tr = trace_reference_path(40, 0, n_val=40)
    >>> tr.alpha.shape == (tr.theta.size, 40), float(tr.theta[0]), float(tr.theta[-1]), tr.n_fallbacks
    (True, 0.0, 1.0, 0)
    """

    n: int
    n_val: int
    seed: int
    y: np.ndarray
    group: np.ndarray
    theta: np.ndarray
    weight_d1: np.ndarray
    alpha: np.ndarray
    error_lo: np.ndarray
    error_hi: np.ndarray
    validation_error: np.ndarray
    n_fallbacks: int


def trace_reference_path(n: int, seed: int, *, n_val: int | None = None, d1_start: float = D1_START,
                         tol: float = DEFAULT_TOL, engine: str = AUTO) -> ReferenceTrace:
    """Trace the cost-weighted path of a four-Gaussian training set: every alpha at every breakpoint, and the
    exact validation error along the path on a validation sample from the same distribution.

    The training and validation points are one draw of ``n + n_val`` four-Gaussian points (scaled together to
    [0, 1]^2), the first n/4 of each Gaussian for training; the kernel and weights are those of
    ``reference_problem``. The path is followed once with the validation points tracked (their decision
    values are linear in theta between breakpoints, so the error is exact, ``validation_error_pieces``), and
    once more from breakpoint to breakpoint to read alpha there (each step's end passes the path's KKT check).

    Parameters
    ----------
    n : int
        Training size (a multiple of 4).
    seed : int
        Seed of the draw.
    n_val : int or None, default=None
        Validation size (a multiple of 4; default n).
    d1_start : float, default=0.01
        Starting weight of group D1.
    tol : float, default=1e-7
        LIBSVM's tolerance for the start model.
    engine : str, default="auto"
        The start model's engine.

    Returns
    -------
    ReferenceTrace
        The breakpoints, the alphas there and the validation error along the path.

    Raises
    ------
    ValueError
        If n or n_val is not a positive multiple of 4, or ``d1_start`` is not in (0, 10).
    RuntimeError
        If the tracked path failed (then the validation error along it is unknown).

    Examples
    --------
    >>> from wsvm_span.solution_path import trace_reference_path
    >>> tr = trace_reference_path(40, 0)
    >>> bool(tr.error_lo[0] == 0.0 and tr.error_hi[-1] == 1.0), bool((tr.validation_error <= 1).all())
    (True, True)
    """
    n_val = n if n_val is None else n_val
    for name, v in (("n", n), ("n_val", n_val)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 4 or v % 4:
            raise ValueError(f"{name} must be a positive multiple of 4 (one quarter per Gaussian), got {v!r}")
    if not (np.isfinite(d1_start) and 0 < d1_start < D1_END):
        raise ValueError(f"d1_start must lie in (0, {D1_END}) (a path never starts from c_i = 0), got {d1_start!r}")
    X_all, y_all, group_all = make_four_gaussians(n + n_val, seed)
    quarter = (n + n_val) // 4
    train = (np.arange(n + n_val) % quarter) < n // 4  # the first n/4 of each Gaussian (drawn in order)
    X, y, group = X_all[train], y_all[train], group_all[train]
    X_val, y_val = X_all[~train], y_all[~train]
    K = rbf_kernel(X, None, REFERENCE_GAMMA)
    c_old = np.where(group == 1, d1_start, D2_WEIGHT)
    c_new = np.where(group == 1, D1_END, D2_WEIGHT)
    model = fit_svm(K, y, c_old, engine=engine, tol=tol, check_input=False)
    start = start_path(model, K)
    tracked = follow_path(model, K, c_new, start=start, K_track=rbf_kernel(X_val, X, REFERENCE_GAMMA),
                          check_input=False)
    if tracked.fallback is not None:
        raise RuntimeError(f"the path failed ({tracked.fallback}); the validation error along it is unknown")
    lo, hi, error = validation_error_pieces(tracked.track_theta, tracked.track_f, y_val)
    theta = np.unique(np.concatenate([[0.0], tracked.events["theta"], [1.0]]))
    alphas, fallbacks = [start.a], 0
    for t in theta[1:]:
        # from the exact solution at the previous breakpoint to this one: a path with (about) one event
        step = follow_path(model, K, c_old + t * (c_new - c_old), start=start, check_input=False)
        fallbacks += step.fallback is not None
        model = step.model
        start = step.next_start if step.next_start is not None else start_path(model, K)
        alphas.append(model.alpha)
    return ReferenceTrace(
        n=int(n), n_val=int(n_val), seed=int(seed), y=y, group=group, theta=theta,
        weight_d1=d1_start + theta * (D1_END - d1_start), alpha=np.vstack(alphas), error_lo=lo, error_hi=hi,
        validation_error=error, n_fallbacks=int(fallbacks))
