"""The exact solution path with its fallback (solution-path.md): ``follow_path`` from a model to new weights.

The path's mathematics (the sets O/M/I, the exact start, the event-by-event walk, the KKT check) is
``wsvm_span.active_set.homotopy``, below the engines; this module adds what needs an engine: when a path's
end fails the KKT check of the true problem it is replaced by LIBSVM at c_new (``fit_with_zero_weights``),
and ``PathResult.fallback`` says why.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..active_set import homotopy
from ..active_set.homotopy import (
    REFACTOR_EVERY,
    PathEnd,
    PathEventLimitError,
    PathStart,
    PathStartError,
    check_path_input,
    check_path_options,
    kkt_violation,
    start_or_reason,
    start_path,
)
from ..engines import AUTO, fit_svm
from ..model import WeightedSVM, make_model
from ..utils.validation import check_kernel

__all__ = [
    "REFACTOR_EVERY", "PathEnd", "PathEventLimitError", "PathResult", "PathStart", "PathStartError",
    "check_path_options", "fit_with_zero_weights", "follow_path", "kkt_violation", "path_end",
    "start_or_reason", "start_path",
]


@dataclass(frozen=True)
class PathResult:
    """The end of a path and how it got there (``follow_path``).

    Parameters
    ----------
    model : WeightedSVM
        The solution at c_new (engine "path", or LIBSVM's when ``fallback`` is set).
    events : ndarray
        Structured array (theta, index, from_set, to_set), one row per event.
    margin_sizes : ndarray of int, shape (n_events + 1,)
        ``|M|`` at the start and after each event.
    kkt_violation : float
        Max KKT violation of ``model`` on the true problem (margin units).
    fallback : str or None
        None, or why the path's end was replaced by LIBSVM at c_new.
    start_repair_events : int or None
        None, or the events of the path that repaired the start (``start_path``).
    t_start, t_path, t_finish : float
        Seconds: identification and re-solve; events; final re-solve, KKT check and fallback.
    track_theta, track_f : ndarray or None, default=None
        When ``K_track`` was given: (P,) breakpoints in theta and (P, m) decision values of the tracked points
        there; f is linear in theta between consecutive breakpoints (repeated thetas mark jumps of b in an
        empty margin).
    next_start : PathStart or None, default=None
        The exact end as the start of a next segment from ``model`` (``follow_path(model, K, c, start=...)``);
        None after a fallback or when c_new has zero weights.

    Attributes
    ----------
    n_events : int
        Events along the path.
    mean_margin_size : float
        Mean ``|M|`` along it.
    t_total : float
        All its seconds.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> res = sp.follow_path(model, K, ws.class_weights(y, 4.0, 1.0))
    >>> res.n_events, res.fallback, res.model.engine
    (17, None, 'path')
    """

    model: WeightedSVM
    events: np.ndarray
    margin_sizes: np.ndarray
    kkt_violation: float
    fallback: str | None
    start_repair_events: int | None
    t_start: float
    t_path: float
    t_finish: float
    track_theta: np.ndarray | None = None
    track_f: np.ndarray | None = None
    next_start: PathStart | None = None

    @property
    def n_events(self) -> int:
        return int(self.events.shape[0])

    @property
    def mean_margin_size(self) -> float:
        return float(np.mean(self.margin_sizes))

    @property
    def t_total(self) -> float:
        return self.t_start + self.t_path + self.t_finish


def follow_path(
    model: WeightedSVM,
    K,
    c_new,
    *,
    start: PathStart | None = None,
    max_events: int | None = None,
    refactor_every: int = REFACTOR_EVERY,
    ridge: float | None = None,
    K_track=None,
    check_input: bool = True,
) -> PathResult:
    """Exact solution of the weighted SVM at ``c_new`` by following the path from ``model``.

    The path of (alpha, b) along c(theta) = c_old + theta (c_new - c_old) is piecewise linear; it is followed
    event by event (solution-path.md) instead of re-solving.

    Parameters
    ----------
    model : WeightedSVM
        The solution at c_old = ``model.C`` (c_old > 0), e.g. ``fit_svm`` (LIBSVM; the start is re-solved
        exactly and KKT-repaired first) or the end of a previous path.
    K : array-like of shape (l, l)
        Its training kernel.
    c_new : float or array-like of shape (l,)
        Target weights, >= 0 (c_i = 0 removes point i: alpha_i = 0).
    start : PathStart or None, default=None
        A ``start_path(model, K)`` to share between many paths from one model (its ridge is used; ``ridge``
        is then ignored).
    max_events : int or None, default=None
        Cap on events (default ``EVENTS_PER_POINT * l + 1000``).
    refactor_every : int, default=100
        Events between refactorizations from scratch (drift control).
    ridge : float or None, default=None
        Ridge on Q's diagonal (default ``RIDGE_RTOL * max K_ii``).
    K_track : array-like of shape (m, l) or None, default=None
        Kernel rows of extra points whose decision values are recorded at every breakpoint
        (``PathResult.track_theta`` / ``track_f``).
    check_input : bool, default=True
        Validate K and c_new.

    Returns
    -------
    PathResult
        Its ``model`` passed the KKT check of the true problem, or comes from LIBSVM at c_new
        (``fallback`` says why).

    Raises
    ------
    PathEventLimitError
        If the path needs more than ``max_events`` events.
    ValueError
        If the inputs are invalid (e.g. a negative weight).

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> c_new = ws.class_weights(y, 4.0, 1.0)
    >>> res = sp.follow_path(model, K, c_new)
    >>> bool(np.allclose(res.model.alpha, ws.fit_svm(K, y, c_new).alpha, atol=1e-4))
    True
    """
    K, c_new = check_path_input(model, K, c_new, check_input)
    l = model.n_train
    max_events, refactor_every = check_path_options(l, max_events, refactor_every)
    if K_track is not None:
        K_track = check_kernel(K_track, name="K_track", square=False) if check_input else np.asarray(K_track)
        if K_track.ndim != 2 or K_track.shape[1] != l:
            raise ValueError(f"K_track must have shape (m, {l}), got {K_track.shape}")
    if start is None:
        start = start_or_reason(model, K, ridge)
    elif start.c is not model.C and not np.array_equal(start.c, model.C):
        raise ValueError("start was prepared for another model (its weights differ from model.C)")
    end = path_end(model, K, c_new, start, max_events, refactor_every, K_track)
    if end.model is None:
        model_end = make_model(K, model.y, c_new, end.alpha, end.b, engine="path", tol=model.tol)
    else:
        model_end = end.model
    started = isinstance(start, PathStart)
    return PathResult(
        model=model_end, events=end.events, margin_sizes=end.margin_sizes,
        kkt_violation=end.kkt_violation, fallback=end.fallback,
        start_repair_events=start.repair_events if started else None,
        t_start=start.t_start if started else 0.0,
        t_path=end.t_path, t_finish=end.t_finish, track_theta=end.track_theta, track_f=end.track_f,
        next_start=end.next_start,
    )

def path_end(model, K, c_new, start: PathStart | str, max_events: int, refactor_every: int,
             K_track=None) -> PathEnd:
    """``homotopy.path_end`` from ``start`` to c_new, with LIBSVM at c_new (``fit_with_zero_weights``) as its
    fallback."""
    return homotopy.path_end(model, K, c_new, start, max_events, refactor_every, K_track,
                             refit=fit_with_zero_weights)


def fit_with_zero_weights(K, y, c, *, tol: float, engine: str = AUTO) -> WeightedSVM:
    """LIBSVM on the points with c_i > 0, returned on all l points (alpha_i = 0 where c_i = 0).

    Parameters
    ----------
    K : ndarray of shape (l, l)
        The training kernel (not validated).
    y : ndarray of shape (l,)
        Labels in {-1, +1}.
    c : ndarray of shape (l,)
        Weights, >= 0.
    tol : float
        LIBSVM's tolerance.
    engine : str, default="auto"
        The engine.

    Returns
    -------
    WeightedSVM
        The model on all l points.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import solution_path as sp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> c = np.where(np.arange(40) < 5, 0.0, 1.0)
    >>> m = sp.fit_with_zero_weights(K, y, c, tol=1e-7)
    >>> m.n_train, float(m.alpha[:5].max())
    (40, 0.0)
    """
    keep = c > 0
    if keep.all():
        return fit_svm(K, y, c, engine=engine, tol=tol, check_input=False)
    idx = np.flatnonzero(keep)
    sub = fit_svm(K[np.ix_(idx, idx)], y[idx], c[idx], engine=engine, tol=tol, check_input=False)
    alpha = np.zeros(y.shape[0])
    alpha[idx] = sub.alpha
    return make_model(K, y, c, alpha, sub.b, engine=sub.engine, tol=tol, fit_time=sub.fit_time)
