"""The active-set homotopy of the instance-weighted SVM dual (solution-path.md), without any engine.

From an exact solution at weights c_old, follow the piecewise-linear path of (alpha, b)
along c(theta) = c_old + theta (c_new - c_old), theta in [0, 1], event by event.
Index sets: O (a_i = 0, y_i f_i >= 1), M (0 < a_i < c_i, y_i f_i = 1), I (a_i = c_i,
y_i f_i <= 1). Inside a region (fixed O, M, I) b and a_M are affine in theta:

    A phi = -[y_I' d_I; Q_MI d_I],  A = [[0, y_M'], [y_M, Q_MM]],  phi = d[b; a_M]/dtheta,
    psi_j = y_j phi_0 + Q_jM phi_M + Q_jI d_I = d(y_j f_j)/dtheta  (j in O u I),

and the next event is the smallest non-negative ratio among M -> O, M -> I, O -> M, I -> M.

The path is computed for Q + ridge I (ridge ~ 1e-10 max K_ii, see ``RIDGE_RTOL``), which
makes Q_MM positive definite for duplicate points. The end solution is re-solved on its
final sets (exact right-hand side; the factor is refreshed from scratch every
``refactor_every`` events), its decision values are recomputed from scratch and checked
against the KKT conditions of the TRUE problem (no ridge); when the check fails ``path_end``
hands the end to its ``refit`` (``wsvm_span.solution_path`` passes LIBSVM at c_new), and
``PathEnd.fallback`` says why.

This module sits below the engines (it trains nothing itself): engine ``path`` polishes LIBSVM's solution
with ``polish``, and ``wsvm_span.solution_path`` (above the engines) follows paths with ``path_end``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..model import BOUND_RTOL, WeightedSVM
from ..span.geometry import coincident_groups
from ..utils.validation import check_kernel
from .factorization import MarginFactor, SingularMarginError

O_SET, M_SET, I_SET = 0, 1, 2
SET_NAMES = ("O", "M", "I")
EVENT_DTYPE = np.dtype([("theta", "f8"), ("index", "i8"), ("from_set", "U1"), ("to_set", "U1")])

#: ridge added to the diagonal of Q, relative to max K_ii. It keeps Q_MM + ridge I positive
#: definite for duplicate points (their pivot is ~2 ridge, far above the ~|M| 1e-16
#: rounding of a Cholesky pivot). What it changes: the path solves the ridged dual, whose
#: solution violates the true KKT conditions by ridge * a_i at most (1e-10 * 2^10 ~ 1e-7
#: for the largest weights of the study, below KKT_TOL); alpha among duplicates is split
#: evenly (any split is optimal for the true problem).
RIDGE_RTOL = 1e-10

#: a LIBSVM alpha within this fraction of c_i of a bound is taken AT the bound when the
#: start is identified; the exact re-solve and the KKT repair then decide.
ID_RTOL = 1e-8

#: |y_i f_i - 1| allowed for the starting sets after the exact re-solve (computed margins
#: of an exact solution carry ~1e-12 of rounding; LIBSVM's own error, up to ~1e-5 since it
#: keeps Q in single precision, is what the repair removes).
START_GTOL = 1e-9

#: KKT tolerance of the end solution on the TRUE problem: max violation of y_i f_i >= 1
#: (a_i < c_i), y_i f_i <= 1 (a_i > 0), in units of the margin (= 1). Covers the ridge
#: (<= 1e-7) and rounding (~1e-12); LIBSVM's own solutions are less accurate (it keeps Q
#: in single precision: violations ~1e-5 measured at tol = 1e-10 with weights ~500).
KKT_TOL = 1e-6

#: |sum_i y_i a_i| allowed at the end, relative to sum_i c_i.
EQ_RTOL = 1e-9

#: derivatives smaller than this times their rounding scale (|phi_0| + ||phi_M||_1 +
#: ||d_I||_1) * max K_ii are treated as zero: no event is predicted from noise.
DERIV_RTOL = 1e-12

#: a step shorter than this (in theta) is "zero-length"; the index moved by the previous
#: event may not move back by a zero-length step (that would be a numerical cycle: in exact
#: arithmetic an entering index moves into its set's interior).
ZERO_STEP = 1e-12

#: default cap on events per point (events grow about linearly in l; see the benchmark).
EVENTS_PER_POINT = 20

#: events between refactorizations from scratch (drift control; solution-path.md: ~100).
REFACTOR_EVERY = 100

#: rounds of the end clean-up: a margin point whose re-solved alpha is outside [0, c_i]
#: had its exit event within rounding of theta = 1, and one AT a bound (to make_model's
#: BOUND_RTOL) is a bounded point or a non-SV: each is moved to its bound and the system
#: re-solved. Then an empty margin set gets LIBSVM's b (the middle of the optimal
#: interval) instead of the end of the interval that a point at its bound pinned it to.
#: The KKT check judges the result.
END_CLEANUP_ROUNDS = 3


class PathStartError(RuntimeError):
    """The starting sets could not be made consistent with the exact KKT conditions (``start_path``).

    Examples
    --------
    >>> from wsvm_span.solution_path import PathStartError
    >>> issubclass(PathStartError, RuntimeError)
    True
    """


class PathEventLimitError(RuntimeError):
    """The path needed more than ``max_events`` events (``follow_path``).

    Examples
    --------
    >>> from wsvm_span.solution_path import PathEventLimitError
    >>> issubclass(PathEventLimitError, RuntimeError)
    True
    """


class PathDegenerateError(ArithmeticError):
    """The path state became inconsistent (only on degenerate data); the caller falls back."""


@dataclass(frozen=True)
class PathStart:
    """The exact starting point of paths from one model (``start_path``; shared by LOO and CV paths).

    Parameters
    ----------
    K : ndarray of shape (l, l)
        The training kernel.
    y : ndarray of shape (l,)
        Labels.
    c : ndarray of shape (l,)
        The weights at the start.
    ridge : float
        The ridge on Q's diagonal.
    status : ndarray of int, shape (l,)
        0/1/2 for the sets O/M/I.
    a : ndarray of shape (l,)
        The exact solution of the ridged problem at ``c``.
    b : float
        Its bias.
    yf : ndarray of shape (l,)
        y_i f_i of the ridged problem.
    factor : MarginFactor
        Cholesky factor of the margin system.
    repair_events : int or None
        None when the sets identified from the model re-solved consistently, else the events of the repair
        path.
    moved : ndarray of int
        Indices whose set the repair changed.
    t_start : float
        Seconds.
    since_refactor : int, default=0
        Events since the factor was last refactored (a chain carries it on).

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
    >>> start = sp.start_path(model, K)
    >>> start.repair_events is None, sorted(set(start.status.tolist()))
    (True, [0, 1, 2])
    """

    K: np.ndarray
    y: np.ndarray
    c: np.ndarray
    ridge: float
    status: np.ndarray
    a: np.ndarray
    b: float
    yf: np.ndarray
    factor: MarginFactor
    repair_events: int | None
    moved: np.ndarray
    t_start: float
    since_refactor: int = 0

    @cached_property
    def kmax(self) -> float:
        return float(np.max(np.diag(self.K)))

    @cached_property
    def side(self) -> np.ndarray:
        """-1 on O (an event needs d(y f)/dtheta < 0), +1 on I (> 0), 0 on M."""
        return np.select([self.status == O_SET, self.status == I_SET], [-1.0, 1.0], 0.0)


# --------------------------------------------------------------------------- checks ---

def kkt_violation(model: WeightedSVM) -> tuple[float, float]:
    """How far a model is from the exact solution of its problem (the KKT conditions).

    Margin violation: y_i f_i < 1 where a_i < c_i, y_i f_i > 1 where a_i > 0; points with c_i = 0 are at
    both bounds and have none.

    Parameters
    ----------
    model : WeightedSVM
        The model.

    Returns
    -------
    margin : float
        The largest margin violation.
    balance : float
        ``|sum_i y_i a_i|`` / sum_i c_i.

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
    >>> margin, balance = sp.kkt_violation(sp.follow_path(model, K, ws.class_weights(y, 4.0, 1.0)).model)
    >>> bool(margin < 1e-8 and balance < 1e-12)
    True
    """
    return _kkt(model.y, model.C, model.alpha, model.decision_train)


def _kkt(y, c, a, f) -> tuple[float, float]:
    """``kkt_violation`` on arrays: labels, weights, alpha, decision values."""
    g = y * f - 1.0
    active = c > 0
    can_grow = active & (a < c)
    can_shrink = active & (a > 0)
    viol = max(float(np.max(-g[can_grow], initial=0.0)), float(np.max(g[can_shrink], initial=0.0)))
    eq = abs(float(y @ a)) / max(float(c.sum()), np.finfo(float).tiny)
    return viol, eq


def check_path_input(model: WeightedSVM, K, c_new, check_input: bool):
    if not isinstance(model, WeightedSVM):
        raise ValueError(f"model must be a WeightedSVM (e.g. from fit_svm), got {type(model).__name__}")
    l = model.n_train
    if check_input:
        K = check_kernel(K)
    else:
        K = np.asarray(K, dtype=float)
    if K.shape != (l, l):
        raise ValueError(f"K must be the ({l}, {l}) training kernel of the model, got shape {K.shape}")
    if not np.all(model.C > 0):
        raise ValueError("the start model's weights must be positive (a path never starts from c_i = 0)")
    c_new = np.asarray(c_new, dtype=float)
    if c_new.ndim == 0:
        c_new = np.full(l, float(c_new))
    if c_new.shape != (l,):
        raise ValueError(f"c_new must be a scalar or a vector of length {l}, got shape {c_new.shape}")
    if not np.isfinite(c_new).all():
        raise ValueError("c_new contains NaN or inf")
    if (c_new < 0).any():
        i = int(np.flatnonzero(c_new < 0)[0])
        raise ValueError(f"c_new must be >= 0 (c_i = 0 removes point i); c_new[{i}] = {c_new[i]!r}")
    for label in (-1.0, 1.0):
        if not (c_new[model.y == label] > 0).any():
            raise ValueError(
                f"c_new gives no positive weight to class {int(label):+d}: the SVM at c_new is undefined"
            )
    return K, c_new


def check_path_options(l: int, max_events: int | None,
                       refactor_every: int = REFACTOR_EVERY) -> tuple[int, int]:
    """(max_events, refactor_every) validated; max_events defaults to EVENTS_PER_POINT l + 1000."""
    if max_events is None:
        max_events = EVENTS_PER_POINT * l + 1000
    if not (isinstance(max_events, (int, np.integer)) and max_events >= 1):
        raise ValueError(f"max_events must be a positive integer, got {max_events!r}")
    if not (isinstance(refactor_every, (int, np.integer)) and refactor_every >= 1):
        raise ValueError(f"refactor_every must be a positive integer, got {refactor_every!r}")
    return int(max_events), int(refactor_every)


# ---------------------------------------------------------------------- shared maths ---

#: a combination of more than this fraction of K's rows is one full GEMV (no row gather)
GATHER_FRACTION = 0.25


def _combine_rows(K, idx, coef) -> np.ndarray:
    """sum_{i in idx} coef_i K[i]: (l,). K is symmetric, so rows are columns too."""
    l = K.shape[0]
    if idx.size > GATHER_FRACTION * l:
        full = np.zeros(l)
        full[idx] = coef
        return full @ K
    return coef @ K[idx] if idx.size else np.zeros(l)


def _margins(K, y, a, b, ridge) -> np.ndarray:
    """y_i f_i of the ridged problem: (Q a)_i + ridge a_i + y_i b, from scratch."""
    S = np.flatnonzero(a)
    return y * _combine_rows(K, S, y[S] * a[S]) + ridge * a + y * b


def _solve_margin_system(K, y, c, status, factor, target=1.0) -> tuple[np.ndarray, float | None]:
    """a (a_O = 0, a_I = c_I, a_M solved) and b for the current sets, with y_m f_m =
    target_m on M (1 except on a repair path); b is None when M is empty (then every b of
    the interval of ``_b_interval`` is optimal)."""
    a = np.zeros(y.shape[0])
    I = np.flatnonzero(status == I_SET)
    a[I] = c[I]
    M = factor.order
    if M.size == 0:
        return a, None
    tM = target if np.isscalar(target) else target[M]
    b, a[M] = factor.solve(-float(y[I] @ c[I]), tM - factor.rows_times(I, c[I]))
    return a, b


def _b_interval(y, status, h, active, target=1.0):
    """Empty margin: every b in [lo, hi] is optimal, with h = Q a (ridged) and
    lo = max_L y_i (1 - h_i), hi = min_U y_i (1 - h_i) (L = O+ u I-, U = O- u I+; the 1 is
    ``target`` on a repair path). Returns (v, L, U) with v = y (1 - h) and the masks."""
    v = y * (target - h)
    in_o, in_i = status == O_SET, status == I_SET
    L = active & ((in_o & (y > 0)) | (in_i & (y < 0)))
    U = active & ((in_o & (y < 0)) | (in_i & (y > 0)))
    return v, L, U


def _b_bounds(y, status, h, active) -> tuple[float, float]:
    """(lo, hi) of the optimal b of an empty margin set (lo > hi: no consistent b)."""
    v, L, U = _b_interval(y, status, h, active)
    return float(np.max(v[L], initial=-np.inf)), float(np.min(v[U], initial=np.inf))


def _midpoint_b(y, status, h, active) -> float:
    # LIBSVM's convention without free SVs: the middle of the optimal interval.
    return 0.5 * sum(_b_bounds(y, status, h, active))


# --------------------------------------------------------------------------- start ---

def start_path(model: WeightedSVM, K, *, ridge: float | None = None, check_input: bool = True,
               max_events: int | None = None) -> PathStart:
    """The exact start of paths from ``model`` (e.g. LIBSVM's solution).

    O/M/I are identified from the model's alphas (``ID_RTOL``) and the margin system is re-solved exactly on
    them. When that is inconsistent (a_M outside its box, or a margin on the wrong side of 1 by more than
    ``START_GTOL``: LIBSVM is only tolerance-accurate), the start is repaired by a path: the model's
    (alpha, b) is the exact solution of the problem whose margin targets t_i replace 1 (t_M = y_M f_M,
    t_O = min(1, y f), t_I = max(1, y f)), and the targets are moved to 1 event by event.

    Parameters
    ----------
    model : WeightedSVM
        The model, at weights c > 0.
    K : array-like of shape (l, l)
        Its training kernel.
    ridge : float or None, default=None
        Ridge on Q's diagonal (default ``RIDGE_RTOL * max K_ii``).
    check_input : bool, default=True
        Validate K.
    max_events : int or None, default=None
        Cap on the repair path's events.

    Returns
    -------
    PathStart
        The exact start.

    Raises
    ------
    PathStartError
        If even the repaired start fails the check.

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
    >>> sp.start_path(model, K).repair_events is None  # LIBSVM's sets re-solved consistently
    True
    """
    t0 = time.perf_counter()
    K, _ = check_path_input(model, K, model.C, check_input)
    y, c = model.y, model.C
    ridge = RIDGE_RTOL * float(np.max(np.diag(K))) if ridge is None else float(ridge)
    if not ridge >= 0:
        raise ValueError(f"ridge must be >= 0, got {ridge!r}")
    identified = np.where(model.alpha <= ID_RTOL * c, O_SET,
                          np.where(model.alpha >= (1.0 - ID_RTOL) * c, I_SET, M_SET)).astype(np.int8)
    a0, identified = _concentrate_twins(K, y, c, model.alpha, identified)
    factor = MarginFactor(K, y, ridge)
    factor.refactor(np.flatnonzero(identified == M_SET))
    a, b = _solve_margin_system(K, y, c, identified, factor)
    b = _consistent_b(y, c, identified, a, b, _margins(K, y, a, 0.0, ridge), ridge)
    if b is not None:
        return PathStart(K, y, c, ridge, identified, a, b, _margins(K, y, a, b, ridge), factor, None,
                         np.empty(0, dtype=np.intp), time.perf_counter() - t0)
    # Repair: LIBSVM's own (alpha, b) on the identified sets, exact for shifted targets.
    a = np.where(identified == O_SET, 0.0, np.where(identified == I_SET, c, a0))
    yf = _margins(K, y, a, model.b, ridge)
    target = np.select([identified == O_SET, identified == I_SET],
                       [np.minimum(1.0, yf), np.maximum(1.0, yf)], yf)
    shifted = PathStart(K, y, c, ridge, identified, a, model.b, yf, factor, None,
                        np.empty(0, dtype=np.intp), 0.0)
    max_events, refactor_every = check_path_options(y.shape[0], max_events)
    walker = _Walker(shifted, c, max_events, refactor_every, None, target=target)
    try:
        walker.run()
        a, b, _ = walker.finish()
    except (PathEventLimitError, PathDegenerateError, SingularMarginError) as exc:
        raise PathStartError(f"the repair path of the start failed: {exc}") from None
    status, factor = walker.status, walker.factor
    b = _consistent_b(y, c, status, a, b, _margins(K, y, a, 0.0, ridge), ridge)
    if b is None:
        raise PathStartError(
            f"the start is inconsistent even after a repair path of {len(walker.events)} events;"
            " train the start model with a tighter tol"
        )
    factor.refactor(factor.order)
    return PathStart(K, y, c, ridge, status, a, b, _margins(K, y, a, b, ridge), factor, len(walker.events),
                     np.flatnonzero(status != identified), time.perf_counter() - t0)


def _concentrate_twins(K, y, c, a, status):
    """Margin points at one place with one label (duplicates; LIBSVM may split alpha among
    them): their total alpha is moved onto as few copies as possible, largest c first.
    f is unchanged, and at most one copy stays in M (two make Q_MM singular)."""
    M = np.flatnonzero(status == M_SET)
    if M.size < 2:
        return a, status
    groups = coincident_groups(K[np.ix_(M, M)])
    a, status = a.copy(), status.copy()
    for g in np.unique(groups):
        for label in (-1.0, 1.0):
            copies = M[(groups == g) & (y[M] == label)]
            if copies.size < 2:
                continue
            total = float(a[copies].sum())
            for j in copies[np.argsort(-c[copies], kind="stable")]:
                a[j] = min(c[j], total)
                total -= a[j]
            status[copies] = np.where(a[copies] <= 0, O_SET, np.where(a[copies] >= c[copies], I_SET, M_SET))
    return a, status


def _consistent_b(y, c, status, a, b, h, ridge) -> float | None:
    """b when (status, a, b) satisfies the KKT conditions of the ridged problem (h = Q~ a),
    the middle of the optimal interval when M is empty (LIBSVM's convention), else None.
    Margins may be off by START_GTOL + ridge max c: a duplicate kept at its bound while its
    twin is in M has the twin's margin, which is off by ridge * alpha_twin in the ridged
    problem (and exact in the true one)."""
    gtol = START_GTOL + ridge * float(c.max())
    if b is None:
        lo, hi = _b_bounds(y, status, h, np.ones(y.shape[0], dtype=bool))
        if lo > hi + gtol or abs(float(y @ a)) > EQ_RTOL * float(c.sum()):
            return None
        return 0.5 * (lo + hi)
    yf = h + y * b
    in_m = status == M_SET
    if (a[in_m] < 0).any() or (a[in_m] > c[in_m]).any():
        return None
    if (yf[status == O_SET] < 1 - gtol).any() or (yf[status == I_SET] > 1 + gtol).any():
        return None
    return b


# ---------------------------------------------------------------------------- walk ---

class _Walker:
    """State of one path from a ``PathStart`` to c_new."""

    def __init__(self, start: PathStart, c_new, max_events: int, refactor_every: int, K_track,
                 target=None):
        # target: margin targets at theta = 0, moved linearly to 1 (the start repair); the
        # regular path keeps the scalar 1.
        self.tgt = 1.0 if target is None else np.array(target, dtype=float)
        self.dtgt = None if target is None else 1.0 - self.tgt
        self.K, self.y, self.ridge = start.K, start.y, start.ridge
        self.kmax = start.kmax
        self.c0, self.c1 = start.c, c_new
        self.d = c_new - start.c
        self.dnz = np.flatnonzero(self.d)
        self.status = start.status.copy()
        self.side = start.side.copy()
        self.a = start.a.copy()
        self.b = float(start.b)
        self.yf = start.yf.copy()
        self.factor = start.factor.copy()
        self.theta = 0.0
        self.max_events = max_events
        self.refactor_every = refactor_every
        self.since_refactor = start.since_refactor
        self.last_moved = -1
        # Duplicates of a margin point (same place, same label) stay at their bound while
        # their twin is in M: twin -> [blocked indices]; their side is 0 meanwhile.
        self.blocked: dict[int, list[int]] = {}
        self.n_steps = 0
        self.events: list[tuple] = []
        self.margin_sizes = [self.factor.size]
        self.K_track = K_track
        if K_track is not None:
            self.f_track = K_track @ (self.y * self.a) + self.b
            self.track_theta = [0.0]
            self.track_f = [self.f_track.copy()]
        self._set_weight_direction()

    # -- bookkeeping ----------------------------------------------------------------
    def c_at(self, idx):
        return self.c0[idx] + self.theta * self.d[idx]

    def _set_weight_direction(self):
        """w = Q~_:I d_I (ridge included), sI = y_I' d_I and ||d_I||_1, from scratch."""
        D = self.dnz[self.status[self.dnz] == I_SET]
        yd = self.y[D] * self.d[D]
        self.w = self.y * _combine_rows(self.K, D, yd)
        self.w[D] += self.ridge * self.d[D]
        self.sI = float(yd.sum())
        self.abs_dI = float(np.abs(yd).sum())
        if self.K_track is not None:
            self.w_track = self.K_track[:, D] @ yd

    def _shift_bounded(self, k, sign):
        """k joins (sign +1) or leaves (-1) I: rank-one change of w, sI."""
        dk = self.d[k]
        if dk == 0.0:
            return
        s = sign * dk * self.y[k]
        self.w += s * self.y * self.K[k]
        self.w[k] += sign * self.ridge * dk
        self.sI += s
        self.abs_dI = max(self.abs_dI + sign * abs(dk), 0.0)
        if self.K_track is not None:
            self.w_track += s * self.K_track[:, k]

    def _advance(self, step, remaining) -> bool:
        """theta += step (exactly 1 at the end), record the breakpoint; True when done."""
        done = step >= remaining
        self.theta = 1.0 if done else self.theta + step
        if self.K_track is not None:
            self.track_theta.append(self.theta)
            self.track_f.append(self.f_track.copy())
        return done

    def _event(self, k, to):
        frm = int(self.status[k])
        on_target = self.tgt if self.dtgt is None else self.tgt[k]
        if frm != M_SET:
            twin = self.factor.twin(k)
            if twin >= 0:
                # k's margin is its twin's: k stays at its bound (any split of the pair's
                # alpha is optimal) until the twin leaves M. Not a set change.
                self.blocked.setdefault(twin, []).append(k)
                self.side[k] = 0.0
                return
        if frm == M_SET:
            self.factor.remove(k)
            self.yf[k] = on_target  # it leaves the margin exactly
            for j in self.blocked.pop(k, ()):
                self.side[j] = -1.0 if self.status[j] == O_SET else 1.0
            if to == I_SET:
                self.a[k] = self.c_at(k)
                self.status[k], self.side[k] = I_SET, 1.0
                self._shift_bounded(k, +1)
            else:
                self.a[k] = 0.0
                self.status[k], self.side[k] = O_SET, -1.0
        else:
            if frm == I_SET:
                self._shift_bounded(k, -1)
                self.a[k] = self.c_at(k)
            else:
                self.a[k] = 0.0
            self.factor.add(k)
            self.status[k], self.side[k] = M_SET, 0.0
            self.yf[k] = on_target
        self.events.append((self.theta, k, SET_NAMES[frm], SET_NAMES[to]))
        self.margin_sizes.append(self.factor.size)
        self.since_refactor += 1
        self.last_moved = k

    def _count_step(self):
        self.n_steps += 1
        if self.n_steps > self.max_events:
            raise PathEventLimitError(
                f"the path reached max_events = {self.max_events} at theta = {self.theta:.6g} "
                f"({len(self.events)} events, |M| = {self.factor.size}); raise max_events, or the "
                "path is cycling on degenerate data"
            )

    def refresh(self):
        """Recompute a, b, y f, w and the factor from scratch (stops drift)."""
        c = self.c0 + self.theta * self.d
        self.factor.refactor(self.factor.order)
        self.a, self.b = _solve_margin_system(self.K, self.y, c, self.status, self.factor, self.tgt)
        self.yf = _margins(self.K, self.y, self.a, self.b, self.ridge)
        self._set_weight_direction()
        if self.K_track is not None:
            self.f_track = self.K_track @ (self.y * self.a) + self.b
        self.since_refactor = 0

    # -- the loop -------------------------------------------------------------------
    def run(self):
        while self.theta < 1.0:
            self._count_step()
            if self.factor.size == 0:
                self._empty_margin()
            else:
                if self.since_refactor >= self.refactor_every:
                    self.refresh()
                self._regular_step()

    def _regular_step(self):
        # (hot loop: few numpy calls, methods rather than functions)
        fac, y, dtgt = self.factor, self.y, self.dtgt
        M = fac.order
        # A phi = -[y_I'd_I; Q_MI d_I - dt_M] (dt: the targets' rate, 0 but on a repair)
        db, da = fac.solve(-self.sI, -self.w[M] if dtgt is None else dtgt[M] - self.w[M])
        psi = fac.times_rows(da)
        psi += self.w
        psi += db * y
        noise = DERIV_RTOL * (abs(db) + np.abs(da).sum() + self.abs_dI) * self.kmax
        rate = psi if dtgt is None else psi - dtgt  # d(y_j f_j - target_j)/dtheta
        aM, dM = self.a[M], self.d[M]
        n = aM.shape[0]
        # M -> O: a_m + t da_m = 0 (da_m < 0);  M -> I: a_m + t da_m = c_m + t d_m
        t_o = np.divide(aM, -da, out=np.full(n, np.inf), where=da < -noise)
        grow = da - dM
        t_i = np.divide(self.c0[M] + self.theta * dM - aM, grow, out=np.full(n, np.inf), where=grow > noise)
        # O -> M (psi < 0) and I -> M (psi > 0): side * psi > 0 selects both at once.
        cand = (self.side * rate > noise).nonzero()[0]
        t_j = ((self.tgt if dtgt is None else self.tgt[cand]) - self.yf[cand]) / rate[cand]
        k = self.last_moved
        if k >= 0:  # no zero-length return of the index the previous event moved
            if self.status[k] == M_SET:
                pos = (M == k).nonzero()[0][0]
                if t_o[pos] <= ZERO_STEP:
                    t_o[pos] = np.inf
                if t_i[pos] <= ZERO_STEP:
                    t_i[pos] = np.inf
            else:
                t_j[(cand == k) & (t_j <= ZERO_STEP)] = np.inf
        jo, ji = t_o.argmin(), t_i.argmin()
        if t_o[jo] <= t_i[ji]:
            t_event, to, k = t_o[jo], O_SET, M[jo]
        else:
            t_event, to, k = t_i[ji], I_SET, M[ji]
        if cand.size:
            jj = t_j.argmin()
            if t_j[jj] < t_event:
                t_event, to, k = t_j[jj], M_SET, cand[jj]
        t_event = max(float(t_event), 0.0)  # a slightly violated bound: the event is now
        remaining = 1.0 - self.theta
        step = min(t_event, remaining)
        self.a[M] = aM + step * da
        self.b += step * db
        self.yf += step * psi
        if dtgt is not None:
            self.tgt += step * dtgt
        if self.K_track is not None:
            df = db + self.K_track[:, M] @ (y[M] * da) + self.w_track
            self.f_track += step * df
        if not self._advance(step, remaining):
            self._event(int(k), to)

    def _empty_margin(self):
        """M is empty: solution-path.md's rule. delta = y_I' d_I > 0: U's argmin enters M;
        < 0: L's argmax; = 0: walk the b interval until its ends meet (both enter)."""
        y = self.y
        h = self.yf - y * self.b
        active = self.c_at(slice(None)) > 0
        v, L, U = _b_interval(y, self.status, h, active, self.tgt)
        delta = self.sI
        if abs(delta) > DERIV_RTOL * self.abs_dI * max(1.0, self.kmax):
            pool = np.flatnonzero(U if delta > 0 else L)
            k = pool[np.argmin(v[pool])] if delta > 0 else pool[np.argmax(v[pool])]
            self._jump_b(float(v[k]), h)
            self._event(int(k), M_SET)
            return
        s = -y * (self.w if self.dtgt is None else self.w - self.dtgt)  # dv/dtheta
        iL, iU = np.flatnonzero(L), np.flatnonzero(U)
        if iL.size == 0 or iU.size == 0:
            raise PathDegenerateError("empty margin set with a one-sided interval for b")
        while True:
            lo = _extreme(iL, v, s, upper=False)
            hi = _extreme(iU, v, s, upper=True)
            self._jump_b(0.5 * (v[lo] + v[hi]), h)
            t_lo = _overtake(iL, v, s, lo, upper=False)
            t_hi = _overtake(iU, v, s, hi, upper=True)
            gap, gslope = v[hi] - v[lo], s[hi] - s[lo]
            t_meet = max(gap, 0.0) / -gslope if gslope < 0 else np.inf
            remaining = 1.0 - self.theta
            step = min(t_lo, t_hi, t_meet, remaining)
            db = 0.5 * (s[lo] + s[hi])
            v += step * s
            h += step * self.w
            if self.dtgt is not None:
                self.tgt += step * self.dtgt
            self.b += step * db
            self.yf = h + y * self.b
            if self.K_track is not None:
                self.f_track += step * (db + self.w_track)
            if self._advance(step, remaining):
                return
            if step == t_meet:
                self._jump_b(0.5 * (v[lo] + v[hi]), h)
                self._event(int(lo), M_SET)
                self._event(int(hi), M_SET)
                return
            self._count_step()

    def _jump_b(self, b_new, h):
        """Pick another optimal b of an empty margin set (a zero-length jump)."""
        if b_new == self.b:
            return
        if self.K_track is not None:
            self.f_track += b_new - self.b
            self.track_theta.append(self.theta)
            self.track_f.append(self.f_track.copy())
        self.b = b_new
        self.yf = h + self.y * b_new

    # -- the end --------------------------------------------------------------------
    def finish(self) -> tuple[np.ndarray, float, np.ndarray]:
        """(alpha, b, f on the training points) at theta = 1, re-solved on the final sets
        (points with c_new_i = 0 leave M and I) and with f recomputed from scratch. The
        factor is the updated one: it is refreshed every ``refactor_every`` events."""
        c1, y = self.c1, self.y
        for k in self.factor.order[c1[self.factor.order] == 0]:
            self.factor.remove(int(k))
        self.status[c1 == 0] = O_SET
        a, b = _solve_margin_system(self.K, y, c1, self.status, self.factor)
        for _ in range(END_CLEANUP_ROUNDS):
            M = self.factor.order
            low, high = M[a[M] <= BOUND_RTOL * c1[M]], M[a[M] >= (1.0 - BOUND_RTOL) * c1[M]]
            if low.size + high.size == 0:
                break
            for k in np.concatenate((low, high)):
                self.factor.remove(int(k))
            self.status[low], self.status[high] = O_SET, I_SET
            a, b = _solve_margin_system(self.K, y, c1, self.status, self.factor)
        np.clip(a, 0.0, c1, out=a)
        S = np.flatnonzero(a)
        f = _combine_rows(self.K, S, y[S] * a[S])
        if b is None:
            b = _midpoint_b(y, self.status, y * f + self.ridge * a, c1 > 0)
        return a, b, f + b


def _extreme(idx, v, s, *, upper: bool) -> int:
    """argmax over idx of v (argmin if upper); ties -> the line that stays extreme longest."""
    vals = v[idx]
    if upper:
        tied = idx[vals == vals.min()]
        return int(tied[np.argmin(s[tied])])
    tied = idx[vals == vals.max()]
    return int(tied[np.argmax(s[tied])])


def _overtake(idx, v, s, k, *, upper: bool) -> float:
    """theta-step after which another line of idx becomes the extreme instead of k."""
    if upper:
        faster = idx[s[idx] < s[k]]
        gaps = (v[faster] - v[k]) / (s[k] - s[faster])
    else:
        faster = idx[s[idx] > s[k]]
        gaps = (v[k] - v[faster]) / (s[faster] - s[k])
    return float(np.maximum(gaps, 0.0).min(initial=np.inf))


def start_or_reason(model: WeightedSVM, K, ridge: float | None = None) -> PathStart | str:
    """``start_path``, or why it failed (then every path from this model falls back)."""
    try:
        return start_path(model, K, ridge=ridge, check_input=False)
    except (PathStartError, SingularMarginError) as exc:
        return f"start: {exc}"


def polish(model: WeightedSVM, K) -> tuple[np.ndarray, float, str | None]:
    """(alpha, b, None): ``model`` (e.g. LIBSVM's, tolerance-accurate) made exact by ``start_path``'s
    re-solve (and repair) on its identified sets, checked against the KKT conditions of the TRUE problem
    (``KKT_TOL``, ``EQ_RTOL``). When no start can be made or the check fails: the model's own
    (alpha, b) and why it was kept."""
    start = start_or_reason(model, K)
    if isinstance(start, str):
        return model.alpha, model.b, start
    y, c = model.y, model.C
    a = np.clip(start.a, 0.0, c)
    S = np.flatnonzero(a)
    viol, eq = _kkt(y, c, a, _combine_rows(K, S, y[S] * a[S]) + start.b)
    if viol > KKT_TOL or eq > EQ_RTOL:
        return model.alpha, model.b, (f"KKT check of the exact re-solve failed (margin violation {viol:.3g} >"
                                      f" {KKT_TOL:g} or equality residual {eq:.3g} > {EQ_RTOL:g})")
    return a, start.b, None


@dataclass(frozen=True)
class PathEnd:
    """A path's end as arrays (what LOO and CV read, without building a WeightedSVM):
    alpha, b, decision (f on the training points), inbound / bounded index arrays (the
    path's final M and I), and ``model`` only when the fallback (``refit``) replaced the path."""

    alpha: np.ndarray
    b: float
    decision: np.ndarray
    inbound: np.ndarray
    bounded: np.ndarray
    events: np.ndarray
    margin_sizes: np.ndarray
    kkt_violation: float
    fallback: str | None
    t_path: float
    t_finish: float
    model: WeightedSVM | None = None
    track_theta: np.ndarray | None = None
    track_f: np.ndarray | None = None
    next_start: PathStart | None = None


def path_end(model, K, c_new, start: PathStart | str, max_events: int, refactor_every: int,
             K_track=None, *, refit) -> PathEnd:
    """Run one path from ``start`` to c_new, finish, KKT-check, fall back if needed (at once
    when ``start`` is the reason why no start could be made): the fallback is
    ``refit(K, y, c_new, tol=model.tol)``, a WeightedSVM on all l points."""
    if isinstance(start, str):
        return _fallback_end(refit, model, K, c_new, start, np.empty(0, dtype=EVENT_DTYPE),
                             np.zeros(1, dtype=np.int64), 0.0, time.perf_counter())
    walker = _Walker(start, c_new, max_events, refactor_every, K_track)
    t0 = time.perf_counter()
    reason = None
    try:
        walker.run()
    except (SingularMarginError, PathDegenerateError) as exc:
        reason = f"path: {exc}"
    t_path = time.perf_counter() - t0
    events = np.array(walker.events, dtype=EVENT_DTYPE)
    sizes = np.asarray(walker.margin_sizes)
    t0 = time.perf_counter()
    if reason is None:
        try:
            alpha, b, f = walker.finish()
        except SingularMarginError as exc:
            reason = f"end: {exc}"
    if reason is None:
        viol, eq = _kkt(model.y, c_new, alpha, f)
        if viol > KKT_TOL or eq > EQ_RTOL:
            reason = (f"end: KKT check failed (margin violation {viol:.3g} > {KKT_TOL:g} or "
                      f"equality residual {eq:.3g} > {EQ_RTOL:g})")
    if reason is not None:
        return _fallback_end(refit, model, K, c_new, reason, events, sizes, t_path, t0)
    track_theta = track_f = None
    if K_track is not None:
        S = np.flatnonzero(alpha)
        walker.track_f[-1] = K_track[:, S] @ (model.y[S] * alpha[S]) + b  # exact end, no drift
        track_theta, track_f = np.asarray(walker.track_theta), np.asarray(walker.track_f)
    status = walker.status
    next_start = None
    if np.all(c_new > 0):
        # The exact end is the start of a next segment (a chain of chords) as it stands:
        # no re-identification, no refactorization.
        yf = model.y * f + walker.ridge * alpha
        if _consistent_b(model.y, c_new, status, alpha, b, yf - model.y * b, walker.ridge) is not None:
            next_start = PathStart(K, model.y, c_new, walker.ridge, status, alpha, b, yf, walker.factor,
                                   None, np.empty(0, dtype=np.intp), 0.0, walker.since_refactor)
    return PathEnd(alpha=alpha, b=b, decision=f, inbound=np.flatnonzero(status == M_SET),
                   bounded=np.flatnonzero((status == I_SET) & (c_new > 0)), events=events,
                   margin_sizes=sizes, kkt_violation=viol, fallback=None, t_path=t_path,
                   t_finish=time.perf_counter() - t0, track_theta=track_theta, track_f=track_f,
                   next_start=next_start)


def _fallback_end(refit, model, K, c_new, reason, events, sizes, t_path, t0) -> PathEnd:
    """``refit`` at c_new (``solution_path``: LIBSVM, points with c_i = 0 left out of the training set)."""
    end = refit(K, model.y, c_new, tol=model.tol)
    return PathEnd(alpha=end.alpha, b=end.b, decision=end.decision_train, inbound=end.inbound,
                bounded=end.bounded, events=events, margin_sizes=sizes,
                kkt_violation=kkt_violation(end)[0], fallback=reason, t_path=t_path,
                t_finish=time.perf_counter() - t0, model=end)
