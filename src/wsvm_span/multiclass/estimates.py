"""Leave-one-out estimates of the one-vs-one classifier from ONE trained model (multiclass.md).

Removing training point p of class c changes only the k - 1 machines with class c, and among those only
the machines where p is an SV; every other decision value at x_p is the trained one. So a LOO estimate
is a set of LOO decision values f^p_cj(x_p), one per (machine, SV) pair, put into LIBSVM's vote:

- span-rule: f^p_cj(x_p) = f_cj(x_p) - y_p a_p S_p^2 (Theorem 2 per machine, S_p without box constraints,
  one factorization per machine for all its SVs: ``span.estimates.span_rule_errors`` on the machine's
  SV kernel); a machine without in-bound SV has no span (S_p = inf): its SVs vote against their class;
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

from ..solvers.enclosing_ball import enclosing_ball_diameter
from ..solvers.qp import qp_solver_name
from ..span.estimates import analyse_spans, span_rule_errors
from ..utils.validation import check_class_labels
from .model import OneVsOneSVM, machine_pairs, vote

__all__ = ["loo_predictions", "machine_diameters", "machine_radius2", "span_bound", "span_rule",
           "span_rule_decisions", "span_rule_predictions", "sv_count_bound", "test_error", "xi_alpha_bound"]


# ------------------------------------------------------------------------------------ the LOO vote
def loo_predictions(model: OneVsOneSVM, loo_decisions, points=None) -> np.ndarray:
    """(l,) class positions of the LOO vote of every training point.

    loo_decisions : per machine, (training indices, f^p(x_p)) for SVs p of that machine (the rest of
        the machine's decision values are the trained ones); every SV of every machine in ``points``
        must be there.
    points : the training indices whose vote is taken (default: the SVs of any machine); every other
        point is predicted its own class, which it provably keeps (with no SV pair changed, it gets all
        k - 1 votes of its machines; for a point outside ``points`` the caller vouches for that).
    For k = 2 a LOO decision value of exactly 0 is an error for both classes (method.md's theta).
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
    """Per machine, (training indices of its SVs, span-rule LOO decision values f - y_p a_p S_p^2).

    Each machine's spans come from the kernel among its SVs only (``WeightedSVM.restricted``): one
    bordered factorization of its in-bound SVs serves all its SVs.
    """
    out = []
    for idx, machine in zip(model.members, model.machines):
        sv = machine.support
        glob = idx[sv]
        if sv.size == 0:
            out.append((glob, np.zeros(0)))
            continue
        span2, _ = span_rule_errors(machine.restricted(sv), K[np.ix_(glob, glob)])
        with np.errstate(invalid="ignore"):
            values = machine.decision_train[sv] - machine.y[sv] * machine.alpha[sv] * span2
        out.append((glob, values))
    return out


def span_rule_predictions(model: OneVsOneSVM, K) -> np.ndarray:
    """(l,) class positions of the LOO vote estimated by the span-rule."""
    return loo_predictions(model, span_rule_decisions(model, np.asarray(K, dtype=float)))


def span_rule(model: OneVsOneSVM, K) -> float:
    """Multiclass span-rule: the fraction of training points whose vote with the span-rule's LOO
    decision values differs from their class."""
    return _error_rate(model, span_rule_predictions(model, K))


# ----------------------------------------------------------------------------------------- bounds
def machine_radius2(K, labels) -> np.ndarray:
    """(n_machines,) R_ij^2 = max K - min K over the points of each machine's two classes (the
    xi-alpha bound's R^2 of that machine), from the kernel's per-class-block extremes."""
    K = np.asarray(K, dtype=float)
    classes, class_index = check_class_labels(labels, K.shape[0], name="labels")
    k = classes.size
    lo, hi = np.empty((k, k)), np.empty((k, k))
    blocks = [np.flatnonzero(class_index == c) for c in range(k)]
    for a, rows in enumerate(blocks):
        part = K[rows]
        col_lo, col_hi = part.min(axis=0), part.max(axis=0)
        for c, cols in enumerate(blocks):
            lo[a, c], hi[a, c] = col_lo[cols].min(), col_hi[cols].max()
    return np.array([max(hi[i, i], hi[j, j], hi[i, j]) - min(lo[i, i], lo[j, j], lo[i, j])
                     for i, j in machine_pairs(k)])


def machine_diameters(K, labels, *, qp_solver: str = "auto") -> np.ndarray:
    """(n_machines,) D_ij: the enclosing-ball diameter of each machine's training set (Theorem 1's D)."""
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

    diameters : (n_machines,) D_ij (``machine_diameters``; computed here when None: pass them to share
        them across a grid). Each machine's Theorem 1 reads the kernel among its SVs only.
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
    """Fraction of training points with 2 a_p R_ij^2 + xi_p - 1 >= 0 in at least one of their machines."""
    if radius2 is None:
        if K is None:
            raise ValueError("xi_alpha_bound needs the training kernel K or the machines' radius2")
        radius2 = machine_radius2(K, model.class_index)
    flagged = np.zeros(model.n_train, dtype=bool)
    for idx, machine, R2 in zip(model.members, model.machines, radius2):
        flagged[idx] |= 2.0 * machine.alpha * R2 + machine.slacks - 1.0 >= 0
    return float(flagged.sum()) / model.n_train


def sv_count_bound(model: OneVsOneSVM) -> float:
    """Fraction of training points that are an SV of at least one machine."""
    return model.support.size / model.n_train


def test_error(model: OneVsOneSVM, K_test, labels_test) -> float:
    """Error rate of the vote on held-out points (K_test: (m, l) against the training set)."""
    labels_test = np.asarray(labels_test)
    pred = model.predict(K_test)
    if labels_test.shape != pred.shape:
        raise ValueError(f"labels_test must have one label per row of K_test ({pred.shape[0]}), "
                         f"got shape {labels_test.shape}")
    return float(np.mean(pred != labels_test))
