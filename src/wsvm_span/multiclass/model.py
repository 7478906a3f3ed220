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
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..engines import AUTO, DEFAULT_TOL, engine_for
from ..engines.warm_start import Solved, rescaled_start
from ..kernels import _BLOCK_ELEMENTS, RBFRows
from ..model import WeightedSVM, classify_alpha
from ..utils.validation import check_class_labels, check_kernel, check_weights

__all__ = ["OneVsOneSVM", "fit_one_vs_one", "machine_pairs", "support_expansion", "vote"]

#: rows of a held-out kernel block turned into decision values at a time: the block's SV columns are
#: copied (transposed) per block, so the copy stays small beside the (m, l) block itself
DECISION_BLOCK_ROWS = 2048


def machine_pairs(n_classes: int) -> np.ndarray:
    """The class positions (i, j), i < j, of the one-vs-one machines, in LIBSVM's order.

    Parameters
    ----------
    n_classes : int
        k, the number of classes.

    Returns
    -------
    ndarray of int, shape (k(k-1)/2, 2)
        (0, 1), (0, 2), ..., (0, k-1), (1, 2), ...

    Examples
    --------
    >>> from wsvm_span import multiclass as mc
    >>> mc.machine_pairs(3).tolist()
    [[0, 1], [0, 2], [1, 2]]
    """
    return np.array([(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)], dtype=np.int64).reshape(-1, 2)


def vote(decisions, pairs, n_classes: int) -> np.ndarray:
    """LIBSVM's vote: the class each point gets from the machines' decision values.

    f_ij > 0 votes class i, anything else (0 included) class j; the most votes win, and among classes with
    as many votes the one that comes first (``argmax`` takes the first maximum, as LIBSVM's loop does).

    Parameters
    ----------
    decisions : array-like of shape (n_machines, m)
        f_ij at m points, one row per machine in the order of ``pairs``.
    pairs : ndarray of int, shape (n_machines, 2)
        The machines' class positions (:func:`machine_pairs`).
    n_classes : int
        k.

    Returns
    -------
    ndarray of int, shape (m,)
        The voted class positions.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span import multiclass as mc
    >>> # votes 0, 2, 1: one each, the tie goes to class 0
    >>> mc.vote(np.array([[1.0], [-1.0], [1.0]]), mc.machine_pairs(3), 3).tolist()
    [0]
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

    Built by :func:`fit_one_vs_one`, not by hand. Frozen: its fields are the solution.

    Parameters
    ----------
    classes : ndarray of shape (k,)
        The class labels, sorted (``SVC.classes_``).
    class_index : ndarray of int, shape (l,)
        Position in ``classes`` of each training point's class.
    pairs : ndarray of int, shape (n_machines, 2)
        Class positions (i, j) of each machine, in LIBSVM's order (:func:`machine_pairs`).
    members : tuple of ndarray of int
        Per machine, the ascending training indices of its two classes.
    machines : tuple of WeightedSVM
        Per machine, the binary model on its members (y = +1 for class i, -1 for class j).
    coef : scipy.sparse.csr_matrix of shape (n_machines, l)
        y_p a_p of each machine in training indices (zero off its SVs).
    b : ndarray of shape (n_machines,)
        The machines' biases.
    decision_train : ndarray of shape (n_machines, l)
        f_ij(x_p) at EVERY training point (a point's vote needs every machine).
    C : ndarray of shape (l,)
        Instance weights C_p, the same in every machine.
    engine : str
        The engine that trained the machines; retraining (LOO, CV) uses it too.
    tol : float
        Its stopping tolerance.
    fit_time : float, default=0.0
        Seconds in the engine.

    Attributes
    ----------
    n_train, n_classes, n_machines : int
        l, k and k(k-1)/2.
    support, inbound, bounded : ndarray of int
        Training indices that are an SV (in-bound SV, bounded SV) of at least one machine.

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
    >>> model.classes.tolist(), model.n_machines, model.support.size
    (['a', 'b', 'c'], 3, 34)
    >>> model.predict(ws.rbf_kernel(np.array([[2.0, 0.0], [0.0, 2.0]]), X, gamma=0.5)).tolist()
    ['b', 'c']
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
        taken = np.zeros(self.n_train, dtype=bool)
        for idx, m in zip(self.members, self.machines):
            taken[idx[getattr(m, part)]] = True
        points = np.flatnonzero(taken)
        points.flags.writeable = False  # cached: every caller shares it
        return points

    # cached (the dataclass is frozen, its machines with it): a grid point reads them several times
    @cached_property
    def support(self) -> np.ndarray:
        """Training indices that are an SV of at least one machine (``SVC.support_``'s points)."""
        return self._points("support")

    @cached_property
    def inbound(self) -> np.ndarray:
        """Training indices that are an in-bound SV (0 < a_p < C_p) of at least one machine."""
        return self._points("inbound")

    @cached_property
    def bounded(self) -> np.ndarray:
        """Training indices that are a bounded SV (a_p = C_p) of at least one machine."""
        return self._points("bounded")

    def decisions_at(self, K_support_rows) -> np.ndarray:
        """Decision values of every machine at m points, from the kernel rows of the model's SVs.

        Parameters
        ----------
        K_support_rows : array-like of shape (support.size, m)
            The kernel between ``support`` (rows) and the points (columns).

        Returns
        -------
        ndarray of shape (n_machines, m)
            f_ij at the points.
        """
        sup = self.support
        K_support_rows = np.asarray(K_support_rows, dtype=float)
        if K_support_rows.ndim != 2 or K_support_rows.shape[0] != sup.size:
            raise ValueError(f"expected the ({sup.size}, m) kernel between the model's SVs and the points, "
                             f"got shape {K_support_rows.shape}")
        return self.coef[:, sup] @ K_support_rows + self.b[:, None]

    def decision_function(self, K_rows) -> np.ndarray:
        """f_ij at new points, as ``SVC.decision_function`` with ``decision_function_shape="ovo"``.

        Parameters
        ----------
        K_rows : array-like of shape (m, l)
            Kernel block between the new points and the training set.

        Returns
        -------
        ndarray of shape (m, n_machines)
            The machines' decision values.

        Raises
        ------
        ValueError
            If ``K_rows`` is not (m, l).
        """
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
        """The class positions voted at new points.

        Parameters
        ----------
        K_rows : array-like of shape (m, l)
            Kernel block between the new points and the training set.

        Returns
        -------
        ndarray of int, shape (m,)
            Positions in ``classes``.
        """
        return vote(self.decision_function(K_rows).T, self.pairs, self.n_classes)

    def predict(self, K_rows) -> np.ndarray:
        """The class labels voted at new points (``SVC.predict``).

        Parameters
        ----------
        K_rows : array-like of shape (m, l)
            Kernel block between the new points and the training set.

        Returns
        -------
        ndarray of shape (m,)
            Labels from ``classes``.
        """
        return self.classes[self.predict_index(K_rows)]


def support_expansion(coef, K: RBFRows) -> np.ndarray:
    """``coef @ K`` on a row cache: the kernel rows of coef's non-zero columns (the SVs of any machine) in blocks of
    at most ``_BLOCK_ELEMENTS`` entries, each block multiplied into every machine's row at once (a point's row is
    computed once for all the machines it is an SV of).

    Parameters
    ----------
    coef : scipy.sparse.csr_matrix of shape (n_machines, l)
        y_p a_p of each machine (``OneVsOneSVM.coef``).
    K : kernels.RBFRows
        The training kernel (a row cache: ``RBFRows.cached``).

    Returns
    -------
    ndarray of shape (n_machines, l)
        sum_p coef[m, p] K[p, t] at every training point t.
    """
    sup = np.flatnonzero(np.diff(coef.tocsc().indptr))
    out = np.zeros((coef.shape[0], K.l))
    step = max(1, _BLOCK_ELEMENTS // max(1, K.l))
    for start in range(0, sup.size, step):
        part = sup[start:start + step]
        out += coef[:, part] @ K.block(part)
    return out


def _row_cache_order(pairs) -> list[int]:
    """The machines in the order they train on a row cache (each machine is trained on its own: the order changes which
    rows are computed again, not the machines, beyond a recomputed row's rounding). LIBSVM's order (0, 1), ..., (0,
    k-1), (1, 2), ... reads class j's rows again only k - 2 machines later, by when a cache that holds a few classes
    has evicted them; here class i's machines run together (its rows stay recent), each sweep over the other classes
    in the direction opposite to the previous sweep, so that it starts with the classes read last (the ones the
    least-recently-used eviction kept). Measured on 6,000 MNIST digits, 6 grid points, a cache of 200 MB (73% of the
    rows): rows computed 64,194 in LIBSVM's order, 38,201 here; CPU 29.2 s, 21.1 s."""
    order = []
    for sweep, first in enumerate(np.unique(pairs[:, 0])):
        mine = np.flatnonzero(pairs[:, 0] == first).tolist()
        order += mine[::-1] if sweep % 2 else mine
    return order


def fit_one_vs_one(K, labels, C, *, engine: str = AUTO, tol: float = DEFAULT_TOL,
                   check_input: bool = True, warm_from: OneVsOneSVM | None = None) -> OneVsOneSVM:
    """Train LIBSVM's one-vs-one classifier on a precomputed training kernel.

    Parameters
    ----------
    K : array-like of shape (l, l) or kernels.RBFRows
        The training kernel; or a row cache of it (``RBFRows.cached``: no l x l array), which an engine that reads
        rows on demand ("smo") trains each machine on, restricted to the machine's points, and whose SVs' rows
        give the decision values in blocks (``support_expansion``).
    labels : array-like of shape (l,)
        Any labels, at least two classes.
    C : float or array-like of shape (l,)
        Instance weights C_p > 0 (class weights times sample weights, as ``SVC`` forms them).
    engine : str, default="auto"
        A name of ``ENGINE_NAMES``. An engine that can (``capabilities.one_vs_one``: scikit-learn's LIBSVM)
        trains every machine in one call on the whole kernel; any other trains each machine by its binary
        ``solve``, on the machine's rows of K in place (``capabilities.kernel_rows``) or on a slice of K.
    tol : float, default=1e-7
        The engine's stopping tolerance.
    check_input : bool, default=True
        Validate K and C (labels are always checked).
    warm_from : OneVsOneSVM, optional
        A model of the same kernel and labels at other weights (the previous C of a grid row): with an
        engine that starts from a neighbouring solution (``capabilities.warm_start``: "smo"), each machine
        starts from that model's machine with its bounded alphas moved to the new weights
        (``engines.warm_start.rescaled_start``); the optimum reached is the same, in fewer steps.

    Returns
    -------
    OneVsOneSVM
        The machines, their decision values at every training point and the classes.

    Raises
    ------
    ValueError
        For invalid K, C or tol, fewer than two classes, or weights the engine cannot express.

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
    >>> [m.support.size for m in model.machines]
    [20, 21, 20]
    """
    # a row cache (kernels.RBFRows.cached) holds no l x l array: the machines read its rows through the solver
    rows_cache = isinstance(K, RBFRows) and not K.in_place
    if not rows_cache:
        K = check_kernel(K) if check_input else np.asarray(K, dtype=float)
    classes, class_index = check_class_labels(labels, K.shape[0], name="labels")
    l = class_index.shape[0]
    C = check_weights(C, l) if check_input else np.broadcast_to(np.asarray(C, dtype=float), (l,)).astype(float)
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    same_labels = (warm_from is not None and np.array_equal(warm_from.class_index, class_index)
                   and warm_from.decision_train.shape[1] == l)
    if same_labels:  # a grid row's next point: the machines' index sets and labels are the previous model's
        pairs, members = warm_from.pairs, warm_from.members
        signs = tuple(m.y for m in warm_from.machines)
    else:
        pairs = machine_pairs(classes.size)
        members = tuple(np.flatnonzero((class_index == i) | (class_index == j)) for i, j in pairs)
        signs = tuple(np.where(class_index[idx] == i, 1.0, -1.0) for idx, (i, _) in zip(members, pairs))
    solver = engine_for(engine, signs[0], C[members[0]])
    if rows_cache and not solver.capabilities.rows_on_demand:
        raise ValueError(f"engine {solver.name!r} trains on a whole kernel; a row cache needs one that reads its rows "
                         "on demand (engine='smo')")
    if not solver.capabilities.per_instance_weights:  # every machine's weights must be expressible too
        for idx, y in zip(members[1:], signs[1:]):
            engine_for(engine, y, C[idx])

    t0 = time.perf_counter()
    starts = [None] * len(members)
    if warm_from is not None and solver.capabilities.warm_start:
        if not same_labels:
            raise ValueError("warm_from must be a model of the same kernel and labels")
        starts = [rescaled_start(Solved(idx, m.y, m.C, m.alpha, m.decision_train - m.b), C[idx], K)
                  for idx, m in zip(members, warm_from.machines)]
    if solver.capabilities.one_vs_one:  # (no engine has both: its starts are all None)
        alphas, b = solver.solve_one_vs_one(K, class_index, C, tol)
        alphas = [alphas[m, idx] for m, idx in enumerate(members)]
    elif solver.capabilities.kernel_rows:  # each machine reads its rows of K in place
        options = [{} if start is None else {"alpha0": start} for start in starts]
        solved = [None] * len(members)
        for m in _row_cache_order(pairs) if rows_cache else range(len(members)):
            solved[m] = solver.solve(K, signs[m], C[members[m]], tol, rows=members[m], **options[m])
        alphas, b = [a for a, _ in solved], np.array([bias for _, bias in solved])
    else:
        solved = [solver.solve(K[np.ix_(idx, idx)], y, C[idx], tol) for idx, y in zip(members, signs)]
        alphas, b = [a for a, _ in solved], np.array([bias for _, bias in solved])
    fit_time = time.perf_counter() - t0

    parts = [classify_alpha(a, C[idx]) for a, idx in zip(alphas, members)]
    # CSR by hand: row m holds machine m's SVs in ascending training index
    indptr = np.concatenate([[0], np.cumsum([sv.size for _, sv, _, _ in parts])])
    cols = np.concatenate([idx[sv] for idx, (_, sv, _, _) in zip(members, parts)])
    vals = np.concatenate([y[sv] * a[sv] for y, (a, sv, _, _) in zip(signs, parts)])
    coef = sp.csr_matrix((vals, cols, indptr), shape=(pairs.shape[0], l))
    b = np.asarray(b, dtype=float)
    # K is symmetric: row m of coef @ K is f_ij at every training point, reading only the SV rows of K
    decision = (support_expansion(coef, K) if rows_cache else np.asarray(coef @ K)) + b[:, None]
    machines = tuple(
        WeightedSVM(alpha=a, b=float(b[m]), y=y, C=C[idx], decision_train=decision[m, idx], support=sv,
                    inbound=inb, bounded=bnd, engine=solver.name, tol=float(tol))
        for m, (idx, y, (a, sv, inb, bnd)) in enumerate(zip(members, signs, parts))
    )
    return OneVsOneSVM(classes=classes, class_index=class_index, pairs=pairs, members=members, machines=machines,
                       coef=coef, b=b, decision_train=decision, C=C, engine=solver.name, tol=float(tol),
                       fit_time=fit_time)
