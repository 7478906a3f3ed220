"""Leave-one-out estimates of the one-vs-one classifier from ONE trained model (multiclass.md).

Removing training point p of class c changes only the k - 1 machines with class c, and among those only
the machines where p is an SV; every other decision value at x_p is the trained one. So a LOO estimate
is a set of LOO decision values f^p_cj(x_p), one per (machine, SV) pair, put into LIBSVM's vote:

- span-rule: f^p_cj(x_p) = f_cj(x_p) - y_p a_p S_p^2 (Theorem 2 per machine, S_p without box constraints,
  one factorization per machine for all its SVs: ``span.geometry.unconstrained_span2`` on the machine's
  rows of the training kernel, read in place); a machine without in-bound SV has no span (S_p = inf): its SVs vote against their class;
- span bound: the union bound (1/l) sum_ij l_ij bound_ij, bound_ij the machine's Theorem 1 value with
  its own enclosing-ball diameter D_ij (a multiclass LOO error of p needs a LOO error of p in one of its
  machines);
- xi-alpha and SV-count bounds, by the same argument per point: the fraction of points flagged
  (2 a_p R_ij^2 + xi_p - 1 >= 0, R_ij^2 the machine's kernel range) in, resp. SV of, at least one machine.

All values are fractions of l. For k = 2 the binary rule of method.md is kept exactly: a LOO decision
value of 0 counts as an error for both classes (the vote would give it to the second class).
"""
from __future__ import annotations

import numpy as np

from ..kernels import RBFRows
from ..solvers.enclosing_ball import enclosing_ball_diameter
from ..solvers.qp import qp_solver_name
from ..span.estimates import analyse_spans
from ..span.estimates import SPAN_BLOCK_ROWS
from ..span.geometry import NATIVE_SPAN_MAX_INBOUND, bordered_inverse, unconstrained_span2
from ..utils.validation import check_class_labels
from .model import OneVsOneSVM, machine_pairs, vote

#: rows of K gathered at a time for the class blocks' extremes (``machine_radius2``): a block that stays in
#: the CPU cache while both its minimum and its maximum are taken (one whole class's rows, gathered at once,
#: were read three times from memory: 3x the time on waveform's 2,500 points)
RADIUS_BLOCK_ROWS = 32

__all__ = ["loo_predictions", "machine_diameters", "machine_radius2", "span_bound", "span_rule",
           "span_rule_decisions", "span_rule_predictions", "sv_count_bound", "test_error", "xi_alpha_bound"]


# ------------------------------------------------------------------------------------ the LOO vote
def loo_predictions(model: OneVsOneSVM, loo_decisions, points=None) -> np.ndarray:
    """The class of every training point's LOO vote, from LOO decision values of (machine, SV) pairs.

    For k = 2 a LOO decision value of exactly 0 is an error for both classes (method.md's theta).

    Parameters
    ----------
    model : OneVsOneSVM
        The trained classifier.
    loo_decisions : sequence of (ndarray of int, ndarray)
        Per machine, (training indices, f^p(x_p)) for SVs p of that machine; the machine's other decision
        values are the trained ones. Every SV pair of every point in ``points`` must be there.
    points : array-like of int, optional
        The training indices whose vote is taken (default: the SVs of any machine). Every other point is
        predicted its own class, which it provably keeps when no SV pair of it changes (it gets all k - 1
        votes of its machines); for a point outside ``points`` the caller vouches for that.

    Returns
    -------
    ndarray of int, shape (l,)
        Positions in ``model.classes``.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> unchanged = [(idx[m.support], m.decision_train[m.support]) for idx, m in zip(model.members, model.machines)]
    >>> mc.loo_predictions(model, unchanged)[:3].tolist()  # the trained votes
    [0, 0, 0]
    """
    pred = model.class_index.copy()
    points = model.support if points is None else np.asarray(points, dtype=np.int64)
    if points.size == 0:
        return pred
    F = model.decision_train[:, points]
    column = np.full(model.n_train, -1)
    column[points] = np.arange(points.size)
    zero = np.zeros(points.size, dtype=bool)
    for m, (where, values) in enumerate(loo_decisions):
        where, values = np.asarray(where), np.asarray(values, dtype=float)
        at = column[where]
        keep = at >= 0
        F[m, at[keep]] = values[keep]
        zero[at[keep]] |= values[keep] == 0.0
    pred[points] = vote(F, model.pairs, model.n_classes)
    if model.n_classes == 2:
        wrong = np.flatnonzero(zero)
        pred[points[wrong]] = 1 - model.class_index[points[wrong]]
    return pred


def _error_rate(model: OneVsOneSVM, pred) -> float:
    return float(np.sum(pred != model.class_index)) / model.n_train


# -------------------------------------------------------------------------------------- span-rule
def span_rule_decisions(model: OneVsOneSVM, K) -> list[tuple[np.ndarray, np.ndarray]]:
    """The span-rule's LOO decision values f^p(x_p) = f(x_p) - y_p a_p S_p^2 of every (machine, SV) pair.

    Each machine's spans read its rows of K in place (``span.geometry.unconstrained_span2``), and only among
    its SVs: one bordered factorization of its in-bound SVs serves all its SVs. A machine without in-bound SV has no span
    (S_p = inf): its SVs' values are -y_p inf, a vote against their class.

    Parameters
    ----------
    model : OneVsOneSVM
        The trained classifier.
    K : array-like of shape (l, l) or kernels.RBFRows
        Its training kernel, or a row cache of it (``RBFRows.cached``: each machine's SVs' blocks from the features).

    Returns
    -------
    list of (ndarray of int, ndarray)
        Per machine, the training indices of its SVs and their LOO decision values.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> where, values = mc.span_rule_decisions(model, K)[0]
    >>> where[:3].tolist(), np.round(values[:3], 3).tolist()
    ([0, 1, 3], [0.431, 0.065, -0.435])
    """
    rows_cache = isinstance(K, RBFRows) and not K.in_place
    if not rows_cache:
        K = np.asarray(K, dtype=float)
    out = []
    for idx, machine in zip(model.members, model.machines):
        sv = machine.support
        # the machine's rows of K in place: its in-bound block is factored, its bounded SVs read against it
        span2 = _span2_from_rows(machine, idx, K) if rows_cache else unconstrained_span2(machine, K, rows=idx)
        with np.errstate(invalid="ignore"):
            values = machine.decision_train[sv] - machine.y[sv] * machine.alpha[sv] * span2
        out.append((idx[sv], values))
    return out


def _span2_from_rows(machine, idx, K: RBFRows) -> np.ndarray:
    """``unconstrained_span2(machine, K, rows=idx)`` on a row cache: the kernel among the machine's in-bound SVs and
    one block of ``SPAN_BLOCK_ROWS`` bounded SVs at a time ((n* + block)^2 entries, computed from the features),
    each block's values computed as ``unconstrained_span2`` computes them on the whole kernel (above
    NATIVE_SPAN_MAX_INBOUND in-bound SVs from one factorization of their block, shared by the blocks; below it the
    compiled route, which factors that small block again per block)."""
    sv, M, B = machine.support, machine.inbound, machine.bounded
    s2 = np.full(sv.size, np.inf)
    if M.size == 0:  # no span (S_p = inf), as unconstrained_span2 has it
        return s2
    inverse = None if M.size <= NATIVE_SPAN_MAX_INBOUND else bordered_inverse(K.block(idx[M], idx[M]))
    for start in range(0, max(B.size, 1), SPAN_BLOCK_ROWS):
        # ascending positions, so that the in-bound SVs keep their order (the factorization's)
        part = np.sort(np.concatenate([M, B[start:start + SPAN_BLOCK_ROWS]]))
        points = idx[part]
        s2[np.searchsorted(sv, part)] = unconstrained_span2(machine.restricted(part), K.block(points, points),
                                                            inverse)
    return s2


def span_rule_predictions(model: OneVsOneSVM, K) -> np.ndarray:
    """The class of every training point's LOO vote as the span-rule estimates it.

    Parameters
    ----------
    model : OneVsOneSVM
        The trained classifier.
    K : array-like of shape (l, l) or kernels.RBFRows
        Its training kernel, or a row cache of it (``RBFRows.cached``: each machine's SVs' blocks from the features).

    Returns
    -------
    ndarray of int, shape (l,)
        Positions in ``model.classes``.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> mc.span_rule_predictions(model, K)[:5].tolist()
    [0, 0, 0, 1, 0]
    """
    return loo_predictions(model, span_rule_decisions(model, K))


def span_rule(model: OneVsOneSVM, K) -> float:
    """Multiclass span-rule: the fraction of training points whose vote with the span-rule's LOO decision
    values differs from their class.

    Parameters
    ----------
    model : OneVsOneSVM
        The trained classifier.
    K : array-like of shape (l, l) or kernels.RBFRows
        Its training kernel, or a row cache of it (``RBFRows.cached``: each machine's SVs' blocks from the features).

    Returns
    -------
    float
        The estimate of the LOO error, a fraction of l.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> round(mc.span_rule(model, K), 4), round(mc.leave_one_out(model, K).loo_error, 4)
    (0.2444, 0.2667)
    """
    return _error_rate(model, span_rule_predictions(model, K))


# ----------------------------------------------------------------------------------------- bounds
def machine_radius2(K, labels) -> np.ndarray:
    """R_ij^2 = max K - min K over the points of each machine's two classes: the xi-alpha bound's R^2.

    Computed from the extremes of the kernel's class blocks, one pass over K, a block of rows at a time.

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    labels : array-like of shape (l,)
        The training labels.

    Returns
    -------
    ndarray of shape (n_machines,)
        R_ij^2 per machine, in LIBSVM's order.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> mc.machine_radius2(K, labels).round(4).tolist()
    [1.0, 1.0, 1.0]
    """
    K = np.asarray(K, dtype=float)
    classes, class_index = check_class_labels(labels, K.shape[0], name="labels")
    k = classes.size
    lo, hi = np.empty((k, k)), np.empty((k, k))
    blocks = [np.flatnonzero(class_index == c) for c in range(k)]
    for a, rows in enumerate(blocks):
        col_lo, col_hi = np.full(K.shape[1], np.inf), np.full(K.shape[1], -np.inf)
        for start in range(0, rows.size, RADIUS_BLOCK_ROWS):
            part = K[rows[start:start + RADIUS_BLOCK_ROWS]]
            np.minimum(col_lo, part.min(axis=0), out=col_lo)
            np.maximum(col_hi, part.max(axis=0), out=col_hi)
        for c, cols in enumerate(blocks):
            lo[a, c], hi[a, c] = col_lo[cols].min(), col_hi[cols].max()
    return np.array([max(hi[i, i], hi[j, j], hi[i, j]) - min(lo[i, i], lo[j, j], lo[i, j])
                     for i, j in machine_pairs(k)])


def machine_diameters(K, labels, *, qp_solver: str = "auto") -> np.ndarray:
    """D_ij: the enclosing-ball diameter of each machine's training set (Theorem 1's D).

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    labels : array-like of shape (l,)
        The training labels.
    qp_solver : str, default="auto"
        The QP backend (``wsvm_span.solvers.qp``).

    Returns
    -------
    ndarray of shape (n_machines,)
        D_ij per machine, in LIBSVM's order.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> mc.machine_diameters(K, labels).round(3).tolist()
    [1.803, 1.814, 1.826]
    """
    K = np.asarray(K, dtype=float)
    _, class_index = check_class_labels(labels, K.shape[0], name="labels")
    solver = qp_solver_name(qp_solver)
    return np.array([
        enclosing_ball_diameter(K[np.ix_(idx, idx)], solver=solver)
        for idx in (np.flatnonzero((class_index == i) | (class_index == j))
                    for i, j in machine_pairs(int(class_index.max()) + 1))
    ])


def span_bound(model: OneVsOneSVM, K, *, diameters=None, qp_solver: str = "auto") -> float:
    """Union span bound (1/l) sum_ij l_ij bound_ij of the multiclass LOO error; can exceed 1.

    bound_ij is machine (i, j)'s Theorem 1 value with its own diameter D_ij; each reads the kernel among the
    machine's SVs only.

    Parameters
    ----------
    model : OneVsOneSVM
        The trained classifier.
    K : array-like of shape (l, l)
        Its training kernel.
    diameters : array-like of shape (n_machines,), optional
        D_ij (:func:`machine_diameters`); computed here when None (pass them to share them across a grid).
    qp_solver : str, default="auto"
        The QP backend of the box-constrained spans and the diameters.

    Returns
    -------
    float
        The bound, a fraction of l.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> round(mc.span_bound(model, K), 4)
    1.3417
    """
    K = np.asarray(K, dtype=float)
    if diameters is None:
        diameters = machine_diameters(K, model.class_index, qp_solver=qp_solver)
    total = 0.0
    for idx, machine, D in zip(model.members, model.machines, diameters):
        sv = machine.support
        if sv.size == 0:
            continue
        glob = idx[sv]
        analysis = analyse_spans(machine.restricted(sv), K[np.ix_(glob, glob)], D=float(D), qp_solver=qp_solver)
        total += analysis.span_bound * analysis.l  # l_ij * bound_ij: the numerator of Theorem 1
    return total / model.n_train


def xi_alpha_bound(model: OneVsOneSVM, K=None, *, radius2=None) -> float:
    """Fraction of training points with 2 a_p R_ij^2 + xi_p - 1 >= 0 in at least one of their machines.

    Parameters
    ----------
    model : OneVsOneSVM
        The trained classifier.
    K : array-like of shape (l, l), optional
        Its training kernel (for the machines' R_ij^2 when ``radius2`` is not given).
    radius2 : array-like of shape (n_machines,), optional
        R_ij^2 (:func:`machine_radius2`).

    Returns
    -------
    float
        The bound, a fraction of l.

    Raises
    ------
    ValueError
        If neither K nor radius2 is given.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> round(mc.xi_alpha_bound(model, K), 4)
    0.6444
    """
    if radius2 is None:
        if K is None:
            raise ValueError("xi_alpha_bound needs the training kernel K or the machines' radius2")
        radius2 = machine_radius2(K, model.class_index)
    flagged = np.zeros(model.n_train, dtype=bool)
    for idx, machine, R2 in zip(model.members, model.machines, radius2):
        flagged[idx] |= 2.0 * machine.alpha * R2 + machine.slacks - 1.0 >= 0
    return float(flagged.sum()) / model.n_train


def sv_count_bound(model: OneVsOneSVM) -> float:
    """Fraction of training points that are an SV of at least one machine.

    Parameters
    ----------
    model : OneVsOneSVM
        The trained classifier.

    Returns
    -------
    float
        The bound, a fraction of l.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> round(mc.sv_count_bound(model), 4)
    0.7556
    """
    return model.support.size / model.n_train


def test_error(model: OneVsOneSVM, K_test, labels_test) -> float:
    """Error rate of the vote on held-out points.

    Parameters
    ----------
    model : OneVsOneSVM
        The trained classifier.
    K_test : array-like of shape (m, l)
        Kernel block between the held-out points and the training set.
    labels_test : array-like of shape (m,)
        Their labels.

    Returns
    -------
    float
        The fraction of the m points voted another class.

    Raises
    ------
    ValueError
        If the labels do not match K_test's rows.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import multiclass as mc
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(45, 2)) + np.repeat([[0, 0], [2, 0], [0, 2]], 15, axis=0)
    >>> labels = np.repeat(["a", "b", "c"], 15)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = mc.fit_one_vs_one(K, labels, C=1.0)
    >>> round(mc.test_error(model, ws.rbf_kernel(X[:6], X, gamma=0.5), labels[:6]), 4)
    0.1667
    """
    labels_test = np.asarray(labels_test)
    pred = model.predict(K_test)
    if labels_test.shape != pred.shape:
        raise ValueError(f"labels_test must have one label per row of K_test ({pred.shape[0]}), "
                         f"got shape {labels_test.shape}")
    return float(np.mean(pred != labels_test))
