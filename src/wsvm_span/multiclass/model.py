"""LIBSVM's one-vs-one classifier on ONE precomputed kernel (multiclass.md, "The classifier").

Classes c_1 < ... < c_k (sorted, as ``SVC.classes_``); machine (i, j), i < j, in LIBSVM's order (0, 1),
(0, 2), ..., (1, 2), ..., is the weighted SVM of method.md on the points of classes c_i (label +1) and
c_j (label -1) with their own C_p (class weights and sample weights make C_p per point, the same in every
machine). A machine is an index set into the training kernel (``members``) and a ``WeightedSVM`` in the
positions of those members; no machine holds a kernel of its own. f_ij(x) > 0 votes c_i, otherwise c_j;
the class with most votes wins and a tie goes to the class that comes first (LIBSVM's rule, ``vote``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..engines import AUTO, DEFAULT_TOL, engine_for
from ..model import WeightedSVM, classify_dual
from ..utils.validation import check_class_labels, check_kernel, check_weights

__all__ = ["OneVsOneSVM", "fit_one_vs_one", "machine_pairs", "vote"]

#: rows of a held-out kernel block turned into decision values at a time: the block's SV columns are
#: copied (transposed) per block, so the copy stays small beside the (m, l) block itself
DECISION_BLOCK_ROWS = 2048


def machine_pairs(n_classes: int) -> np.ndarray:
    """(k(k-1)/2, 2) class positions (i, j), i < j, of the one-vs-one machines in LIBSVM's order."""
    return np.array([(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)], dtype=np.int64).reshape(-1, 2)


def vote(decisions, pairs, n_classes: int) -> np.ndarray:
    """LIBSVM's vote: (m,) class positions from the machines' decision values ((n_machines, m)).

    f_ij > 0 votes class i, anything else (0 included) class j; the most votes win, and among classes
    with as many votes the one that comes first (``argmax`` takes the first maximum, as LIBSVM's loop).
    """
    decisions = np.asarray(decisions, dtype=float)
    counts = np.zeros((n_classes, decisions.shape[1]), dtype=np.int32)
    columns = np.arange(decisions.shape[1])
    for (i, j), f in zip(pairs, decisions):
        counts[np.where(f > 0, i, j), columns] += 1
    return counts.argmax(axis=0)


@dataclass(frozen=True)
class OneVsOneSVM:
    """A trained one-vs-one classifier: k(k-1)/2 weighted SVMs on one training kernel.

    Attributes
    ----------
    classes : (k,) class labels, sorted
    class_index : (l,) position in ``classes`` of each training point's class
    pairs : (n_machines, 2) class positions (i, j) of each machine, LIBSVM's order
    members : per machine, the (l_ij,) ascending training indices of its two classes
    machines : per machine, the ``WeightedSVM`` on its members (y = +1 for class i, -1 for class j)
    coef : (n_machines, l) sparse y_p a_p of each machine in training indices (zero off its SVs)
    b : (n_machines,) biases
    decision_train : (n_machines, l) f_ij(x_p) at EVERY training point (the vote needs all machines)
    C : (l,) instance weights C_p
    engine, tol : the engine that trained the machines and its tolerance (retraining uses them too)
    fit_time : seconds in the engine
    """

    classes: np.ndarray
    class_index: np.ndarray
    pairs: np.ndarray
    members: tuple
    machines: tuple
    coef: sp.csr_matrix
    b: np.ndarray
    decision_train: np.ndarray
    C: np.ndarray
    engine: str
    tol: float
    fit_time: float = field(default=0.0, compare=False)

    @property
    def n_train(self) -> int:
        return int(self.class_index.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.classes.shape[0])

    @property
    def n_machines(self) -> int:
        return int(self.pairs.shape[0])

    def _points(self, part: str) -> np.ndarray:
        taken = [idx[getattr(m, part)] for idx, m in zip(self.members, self.machines)]
        return np.unique(np.concatenate(taken)) if taken else np.zeros(0, dtype=np.int64)

    @property
    def support(self) -> np.ndarray:
        """Training indices that are an SV of at least one machine (``SVC.support_``'s points)."""
        return self._points("support")

    @property
    def inbound(self) -> np.ndarray:
        """Training indices that are an in-bound SV (0 < a_p < C_p) of at least one machine."""
        return self._points("inbound")

    @property
    def bounded(self) -> np.ndarray:
        """Training indices that are a bounded SV (a_p = C_p) of at least one machine."""
        return self._points("bounded")

    def decisions_at(self, K_support_rows) -> np.ndarray:
        """(n_machines, m) decision values at m points from the kernel between ``support`` (rows) and
        those points (columns): K_support_rows is (support.size, m)."""
        sup = self.support
        K_support_rows = np.asarray(K_support_rows, dtype=float)
        if K_support_rows.ndim != 2 or K_support_rows.shape[0] != sup.size:
            raise ValueError(f"expected the ({sup.size}, m) kernel between the model's SVs and the points, "
                             f"got shape {K_support_rows.shape}")
        return self.coef[:, sup] @ K_support_rows + self.b[:, None]

    def decision_function(self, K_rows) -> np.ndarray:
        """(m, n_machines) f_ij at new points (``SVC.decision_function`` with shape "ovo"); K_rows:
        (m, l) kernel between them and the training set."""
        K_rows = np.asarray(K_rows, dtype=float)
        if K_rows.ndim != 2 or K_rows.shape[1] != self.n_train:
            raise ValueError(f"K_rows must have shape (m, {self.n_train}) (new points x training points), "
                             f"got {K_rows.shape}")
        sup = self.support
        out = np.empty((K_rows.shape[0], self.n_machines))
        for start in range(0, K_rows.shape[0], DECISION_BLOCK_ROWS):
            block = np.ascontiguousarray(K_rows[start:start + DECISION_BLOCK_ROWS, sup].T)
            out[start:start + DECISION_BLOCK_ROWS] = self.decisions_at(block).T
        return out

    def predict_index(self, K_rows) -> np.ndarray:
        """(m,) class positions voted at new points (K_rows: (m, l))."""
        return vote(self.decision_function(K_rows).T, self.pairs, self.n_classes)

    def predict(self, K_rows) -> np.ndarray:
        """(m,) class labels voted at new points (``SVC.predict``)."""
        return self.classes[self.predict_index(K_rows)]


def fit_one_vs_one(K, labels, C, *, engine: str = AUTO, tol: float = DEFAULT_TOL,
                   check_input: bool = True) -> OneVsOneSVM:
    """Train LIBSVM's one-vs-one classifier on a precomputed training kernel.

    K : (l, l) training kernel;  labels : (l,) any labels, at least two classes
    C : scalar or (l,) C_p > 0 (class weights times sample weights, as ``SVC`` forms them)
    engine : a name of ``ENGINE_NAMES``. An engine that can (``capabilities.one_vs_one``, scikit-learn's
        LIBSVM) trains every machine in one call on the whole kernel; any other trains each machine by
        its binary ``solve`` on the machine's kernel slice.
    """
    if check_input:
        K = check_kernel(K)
    else:
        K = np.asarray(K, dtype=float)
    classes, class_index = check_class_labels(labels, K.shape[0], name="labels")
    l = class_index.shape[0]
    C = check_weights(C, l) if check_input else np.broadcast_to(np.asarray(C, dtype=float), (l,)).astype(float)
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    pairs = machine_pairs(classes.size)
    members = tuple(np.flatnonzero((class_index == i) | (class_index == j)) for i, j in pairs)
    signs = tuple(np.where(class_index[idx] == i, 1.0, -1.0) for idx, (i, _) in zip(members, pairs))
    solver = engine_for(engine, signs[0], C[members[0]])
    if not solver.capabilities.per_instance_weights:  # every machine's weights must be expressible too
        for idx, y in zip(members[1:], signs[1:]):
            engine_for(engine, y, C[idx])

    t0 = time.perf_counter()
    if solver.capabilities.one_vs_one:
        alphas, b = solver.solve_one_vs_one(K, class_index, C, tol)
        alphas = [alphas[m, idx] for m, idx in enumerate(members)]
    else:
        solved = [solver.solve(K[np.ix_(idx, idx)], y, C[idx], tol) for idx, y in zip(members, signs)]
        alphas, b = [a for a, _ in solved], np.array([bias for _, bias in solved])
    fit_time = time.perf_counter() - t0

    parts = [classify_dual(a, C[idx]) for a, idx in zip(alphas, members)]
    rows = np.concatenate([np.full(sv.size, m) for m, (_, sv, _, _) in enumerate(parts)])
    cols = np.concatenate([idx[sv] for idx, (_, sv, _, _) in zip(members, parts)])
    vals = np.concatenate([y[sv] * a[sv] for y, (a, sv, _, _) in zip(signs, parts)])
    coef = sp.csr_matrix((vals, (rows, cols)), shape=(pairs.shape[0], l))
    b = np.asarray(b, dtype=float)
    # K is symmetric: row m of coef @ K is f_ij at every training point, reading only the SV rows of K
    decision = np.asarray(coef @ K) + b[:, None]
    machines = tuple(
        WeightedSVM(alpha=a, b=float(b[m]), y=y, C=C[idx], decision_train=decision[m, idx], support=sv,
                    inbound=inb, bounded=bnd, engine=solver.name, tol=float(tol))
        for m, (idx, y, (a, sv, inb, bnd)) in enumerate(zip(members, signs, parts))
    )
    return OneVsOneSVM(classes=classes, class_index=class_index, pairs=pairs, members=members, machines=machines,
                       coef=coef, b=b, decision_train=decision, C=C, engine=solver.name, tol=float(tol),
                       fit_time=fit_time)
