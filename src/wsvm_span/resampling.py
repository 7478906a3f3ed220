"""Estimates that retrain: stratified K-fold CV and the exact leave-one-out error.

Both slice the ONE precomputed training kernel; nothing here recomputes kernel values. Every
retraining uses the engine (and tolerance) of the model it estimates. ``method="path"`` gets the
same models by following the exact solution path from the full model instead (zeroing the left-out
weights, ``wsvm_span.solution_path``); a path that fails its KKT check is replaced by LIBSVM.

An engine that starts from a neighbouring solution (``Capabilities.warm_start``: "smo") starts every
retraining from the full model's alphas without the left-out points (``warm_start.restricted_start``), and
an engine that reads rows of a larger kernel (``Capabilities.kernel_rows``) gets the full kernel and the
retraining's rows instead of a copy. The models are the same optima either way (to the tolerance).
"""
from __future__ import annotations

import numpy as np

from .engines import AUTO, DEFAULT_TOL, engine_for, fit_svm, get_engine
from .engines.warm_start import Solved, rescaled_start, restricted_start
from .kernels import kernel_entries, kernel_expansion
from .loo_results import LeaveOneOut
from .model import WeightedSVM, classify_alpha
from .utils.validation import check_class_labels, check_kernel, check_problem

#: how the left-out models are obtained: trained from scratch, or reached by the exact solution path
METHODS = ("retrain", "path")


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def stratified_folds(y, k: int = 5, seed: int = 0) -> np.ndarray:
    """Fold id in 0..k-1 for every point, stratified by class and fixed by ``seed``.

    Within each class the points are shuffled and dealt round-robin, so the fold sizes of a class differ by at
    most one; the same (y, k, seed) gives the same folds on any machine (numpy's PCG64 generator). The classes
    are dealt in sorted order (for {-1, +1}: -1 first).

    Parameters
    ----------
    y : array-like of shape (l,)
        Labels of two or more classes (the multiclass CV of ``wsvm_span.multiclass``).
    k : int, default=5
        Number of folds.
    seed : int, default=0
        Seed of the shuffle.

    Returns
    -------
    ndarray of int, shape (l,)
        The fold of every point.

    Raises
    ------
    ValueError
        If k is not an integer >= 2, there are fewer than k points or a single class.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> folds = ws.stratified_folds(np.repeat([-1.0, 1.0], 10), k=5, seed=0)
    >>> np.bincount(folds).tolist()
    [4, 4, 4, 4, 4]
    """
    _, class_index = check_class_labels(y)
    if not (isinstance(k, (int, np.integer)) and k >= 2):
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if k > class_index.shape[0]:
        raise ValueError(f"k = {k} folds need at least {k} points, got {class_index.shape[0]}")
    rng = np.random.default_rng(seed)
    folds = np.empty(class_index.shape[0], dtype=np.int64)
    offset = 0
    for label in range(class_index.max() + 1):
        idx = np.flatnonzero(class_index == label)
        idx = idx[rng.permutation(idx.size)]
        folds[idx] = (np.arange(idx.size) + offset) % k
        offset += idx.size  # continue the deal so small classes do not all start at fold 0
    return folds


class FoldKernels:
    """The training kernel of every CV fold, ``K[np.ix_(train, train)]``, sliced once and shared by every model
    of a grid.

    Slicing a fold's kernel copies (0.8 l)^2 values: on MNIST (l = 11907) that is 0.7 GB per fold and costs
    more than training the fold model, so a grid job slices the folds once when they fit in its memory
    (:meth:`nbytes` tells how much they take: about 3.2 l^2 doubles for 5 folds).

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    folds : array-like of int, shape (l,)
        Fold id of every point (e.g. from :func:`stratified_folds`).

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> folds = ws.stratified_folds(y, k=5, seed=0)
    >>> shared = ws.FoldKernels(K, folds)
    >>> ws.kfold_cv_error(K, y, 1.0, folds=folds, fold_kernels=shared) == ws.kfold_cv_error(K, y, 1.0, folds=folds)
    True
    """

    def __init__(self, K, folds):
        K = np.asarray(K, dtype=float)
        self.folds = np.asarray(folds)
        if self.folds.shape != (K.shape[0],):
            raise ValueError(f"folds must have shape ({K.shape[0]},), got {self.folds.shape}")
        self.parts = []
        for fold in np.unique(self.folds):
            held, train = np.flatnonzero(self.folds == fold), np.flatnonzero(self.folds != fold)
            self.parts.append((fold, held, train, np.ascontiguousarray(K[np.ix_(train, train)])))

    @staticmethod
    def nbytes(folds) -> int:
        """Bytes the fold kernels of these fold ids take."""
        folds = np.asarray(folds)
        return int(sum(8 * np.sum(folds != f) ** 2 for f in np.unique(folds)))


class FoldStarts:
    """The last solution of each CV fold along a grid walk, for engines that start from one (``warm_start``).

    A fold model starts from the full model of its own grid point without the fold's points
    (``restricted_start``), or, when the full model has the same in-bound and bounded sets as the previous
    grid point's (the weights changed nothing that matters), from that fold's previous model with its
    bounded alphas moved to the new weights (``rescaled_start``): then that start is nearly the answer
    (measured on mnist_2_9 at large C-: 0.03 s against 0.3 s for the five folds). Keep one per grid walk;
    pass it to every :func:`kfold_cv_error` call of the walk, in the walk's order. It takes no parameters.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> folds, starts = ws.stratified_folds(y, 5, seed=0), ws.FoldStarts()
    >>> errors = []
    >>> for C in (0.5, 1.0, 2.0):  # a grid walk: each point's folds start from the previous point's
    ...     model = ws.fit_svm(K, y, C, engine="smo")
    ...     errors.append(ws.kfold_cv_error(K, y, C, folds=folds, engine="smo", model=model, fold_starts=starts))
    >>> errors == [ws.kfold_cv_error(K, y, C, folds=folds) for C in (0.5, 1.0, 2.0)]
    True
    """

    def __init__(self):
        self.previous: dict[int, Solved] = {}  # fold -> its last solution
        self.sets: tuple[np.ndarray, np.ndarray] | None = None  # the previous full model's (inbound, bounded)

    def start(self, fold, model: WeightedSVM, train, K, same_sets: bool):
        if same_sets and fold in self.previous:
            return rescaled_start(self.previous[fold], model.C[train], K)
        return restricted_start(Solved.from_model(model), train, K)


def resolve_folds(y, k: int, seed: int, folds=None, fold_kernels: FoldKernels | None = None) -> np.ndarray:
    """The (l,) fold ids of a K-fold CV: ``fold_kernels``' folds, else ``folds``, else
    ``stratified_folds(y, k, seed)``; a ValueError when they disagree or have the wrong shape."""
    l = np.shape(y)[0]
    if fold_kernels is not None:
        if folds is not None and not np.array_equal(np.asarray(folds), fold_kernels.folds):
            raise ValueError("fold_kernels were built for other folds")
        folds = fold_kernels.folds
    folds = stratified_folds(y, k, seed) if folds is None else np.asarray(folds)
    if folds.shape != (l,):
        raise ValueError(f"folds must have shape ({l},), got {folds.shape}")
    return folds


def fold_parts(folds, fold_kernels: FoldKernels | None = None):
    """(fold, held-out indices, training indices, training kernel or None) per fold: the sliced kernels of
    ``fold_kernels`` when given (None: the caller slices, or reads the rows in place)."""
    if fold_kernels is not None:
        return fold_kernels.parts
    return [(fold, np.flatnonzero(folds == fold), np.flatnonzero(folds != fold), None) for fold in np.unique(folds)]


def _same_sets(model: WeightedSVM, sets) -> bool:
    return sets is not None and np.array_equal(model.inbound, sets[0]) and np.array_equal(model.bounded, sets[1])


def kfold_cv_error(
    K, y, C, k: int = 5, seed: int = 0, *, folds=None, engine: str = AUTO, tol: float = DEFAULT_TOL,
    check_input: bool = True, fold_kernels: FoldKernels | None = None, method: str = "retrain",
    model: WeightedSVM | None = None, fold_starts: FoldStarts | None = None,
) -> float:
    """Stratified k-fold CV error with the instance weights: each fold model is trained with the weights of
    its training part, and its errors are counted on the held-out part (f = 0 counts as an error).

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C : float or array-like of shape (l,)
        Positive instance weights.
    k : int, default=5
        Number of folds (with ``seed``; not used when ``folds`` is given).
    seed : int, default=0
        Seed of :func:`stratified_folds`.
    folds : array-like of int, shape (l,), optional
        Fold ids, overriding k and seed, so that a grid can share one split.
    engine : str, default="auto"
        The engine that trains the fold models (``ENGINE_NAMES``).
    tol : float, default=1e-7
        Its stopping tolerance.
    check_input : bool, default=True
        Validate K, y, C.
    fold_kernels : FoldKernels, optional
        The folds' kernels, built from K and the same folds, to save slicing them again.
    method : {"retrain", "path"}, default="retrain"
        "path": the model on all l points (``engine``, ``tol``), then each fold model by the exact path
        that zeroes the fold's weights (``fold_kernels`` is not needed then).
    model : WeightedSVM, optional
        The model of (K, y, C) on all l points, when the caller has it: an engine with ``warm_start``
        ("smo") starts each fold from it (without it, from zero).
    fold_starts : FoldStarts, optional
        The folds' previous models along a grid walk (the same object for every point of the walk, in its
        order): a fold starts from its previous model when the full model's sets did not change.

    Returns
    -------
    float
        The CV error, a fraction of l.

    Raises
    ------
    ValueError
        If the inputs are invalid, the folds do not fit y, or ``method`` is unknown.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> ws.kfold_cv_error(K, y, 1.0, k=5, seed=0)
    0.15
    """
    K, y, C = check_problem(K, y, C, check_input=check_input)
    l = K.shape[0]
    folds = resolve_folds(y, k, seed, folds, fold_kernels)
    if _check_method(method) == "path":
        # solution_path builds on this module (its LOO result is a LeaveOneOut): imported on use
        from .solution_path.uses import kfold_cv_by_path

        model = fit_svm(K, y, C, engine=engine, tol=tol, check_input=False)
        return kfold_cv_by_path(model, K, folds, check_input=False).cv_error
    solver = engine_for(engine, y, C)
    warm = solver.capabilities.warm_start and model is not None
    if warm and (model.y.shape != y.shape or not np.array_equal(model.C, C)):
        raise ValueError("model must be the model of (K, y, C) on all points (its weights differ from C)")
    same_sets = warm and fold_starts is not None and _same_sets(model, fold_starts.sets)
    errors = 0
    starts = fold_starts if fold_starts is not None else FoldStarts()
    for fold, held, train, K_train in fold_parts(folds, fold_kernels):
        y_tr = y[train]
        if np.all(y_tr == y_tr[0]):
            raise ValueError(f"fold {fold}'s training part holds a single class; use fewer folds")
        options = {}
        if K_train is None and solver.capabilities.kernel_rows:
            options["rows"] = train  # read in place: no (0.8 l)^2 copy
            K_train = K
        elif K_train is None:
            K_train = K[np.ix_(train, train)]
        if warm:
            options["alpha0"] = starts.start(fold, model, train, K, same_sets)
            alpha, b, grad = solver.solve_warm(K_train, y_tr, C[train], tol, **options)
            starts.previous[fold] = Solved(train, y_tr, C[train], alpha, y_tr * (grad + 1.0))
        else:
            alpha, b = solver.solve(K_train, y_tr, C[train], tol, **options)
        alpha, sv, _, _ = classify_alpha(alpha, C[train])
        if warm:
            # from the full model's f - b on the held-out points, changed by the alphas that differ (the
            # held-out support vectors, which the fold model lacks, and those that moved): fewer kernel rows
            full = np.zeros(l)
            full[train] = alpha
            changed = np.flatnonzero(full != model.alpha)
            f = kernel_expansion(K, y[changed] * (full[changed] - model.alpha[changed]), changed, rows=held,
                                 out=model.decision_train[held] - model.b) + b
        else:
            # only the SV rows, at the held-out columns: f = (y a)_SV K[train_SV, held] + b
            f = kernel_expansion(K, y_tr[sv] * alpha[sv], train[sv], rows=held) + b
        errors += int(np.sum(-y[held] * f >= 0))
    if warm:
        starts.sets = (model.inbound, model.bounded)
    return errors / l


class _MarginSystemStarts:
    """Starts for the leave-one-out retrainings of a warm-starting engine, solved on the margin system.

    The model's in-bound SVs M satisfy K_MM beta_M + b 1 = y_M - K_MB beta_B, 1'beta_M = -1'beta_B (beta = y
    alpha, B the bounded SVs). Without p this system changes by one row (in-bound p) or one right-hand side
    term (bounded p); from one inverse H of its bordered matrix [[0, 1'], [1, K_MM]] the solution without p is a
    rank-one change away (Theorem 2's premise: the sets do not change). Where the sets do change, an active-set
    loop moves the in-bound alphas that leave their box to their bound (a row of H out) and the points that
    violate their margin into M (a row of H in, by its Schur complement), until the KKT conditions hold to tol:
    the retraining's exact solution, which SMO confirms in no step. On Experiment 10's hard cases (mnist_0to4_5to9
    at C = 2^10, most points in-bound SVs) this is where SMO from any start spends most of its steps: the margin
    system is ill-conditioned. Each change costs O(n*^2); after MAX_CHANGES, or at a singular pivot, the loop
    gives up and the start is the model without p (SMO finishes). Not built (``of`` gives None) when the
    in-bound SVs have coincident points or K_MM needs a ridge: H is not the margin system's inverse then.
    """

    #: changes of the active set before the loop gives up on a retraining
    MAX_CHANGES = 200
    #: fewer in-bound SVs than this: SMO's steps on so small a margin system cost less than the loop's Python
    #: (measured on breast_cancer_wisconsin_200_77, n* = 12-18: the loop 0.4-0.6x LIBSVM, SMO 3-6x)
    MIN_INBOUND = 64
    #: a pivot (H[k, k] or a Schur complement) below this is singular: the loop gives up
    PIVOT_ATOL = 1e-12

    def __init__(self, model: WeightedSVM, K, H_border_last):
        self.model, self.K = model, K
        n = model.inbound.size
        order = np.r_[n, np.arange(n)]
        self.H = H_border_last[np.ix_(order, order)]  # border first: points are appended at the end
        self.expansion = model.decision_train - model.b

    @classmethod
    def of(cls, model: WeightedSVM, K):
        """The starts of ``model``'s retrainings, or None where they are not worth it: fewer than MIN_INBOUND
        in-bound SVs, or fewer in-bound than bounded ones (a small C: SMO's steps from the model without p are
        few and cheap there, and the loop's changes of the sets many), or no usable inverse."""
        from .span.geometry import bordered_inverse

        M = model.inbound
        if M.size < max(cls.MIN_INBOUND, model.bounded.size):
            return None
        try:
            inverse = bordered_inverse(kernel_entries(K, M, M))
        except np.linalg.LinAlgError:
            return None
        if inverse.rep.size != M.size or inverse.ridge != 0.0:
            return None
        return cls(model, K, inverse.inverse)

    @classmethod
    def _without(cls, H, k):
        """H of the system without its row/column k (a rank-one change), or None at a singular pivot."""
        if not abs(H[k, k]) > cls.PIVOT_ATOL:
            return None
        H = H - np.outer(H[:, k], H[k]) / H[k, k]
        return np.delete(np.delete(H, k, 0), k, 1)

    @classmethod
    def _with(cls, H, v, d):
        """H of the system with a row/column appended (v: its entries against the border and M; d: its
        diagonal entry), by the Schur complement s = d - v'Hv; None when s is singular."""
        u = H @ v
        s = d - v @ u
        if not abs(s) > cls.PIVOT_ATOL:
            return None
        n = H.shape[0]
        out = np.empty((n + 1, n + 1))
        out[:n, :n] = H + np.outer(u, u) / s
        out[:n, n] = out[n, :n] = -u / s
        out[n, n] = 1.0 / s
        return out

    def start(self, p: int, rest, tol: float):
        """The retraining without p: its exact solution (a ``Start`` with its gradient), or None."""
        from .engines.warm_start import Start

        model, K = self.model, self.K
        y, C, alpha = model.y, model.C, model.alpha
        M, H = list(model.inbound), self.H
        if 0.0 < alpha[p] < C[p]:
            H = self._without(H, M.index(p) + 1)
            M.remove(p)
        bounded = alpha >= C
        bounded[p] = False
        changes = 0
        while H is not None and changes <= self.MAX_CHANGES:
            Mi = np.asarray(M, dtype=int)
            B = np.flatnonzero(bounded)
            beta_B = y[B] * C[B]
            rhs = np.empty(Mi.size + 1)
            rhs[0] = -beta_B.sum()
            rhs[1:] = y[Mi] - (beta_B @ kernel_entries(K, B, Mi) if B.size else 0.0)
            x = H @ rhs
            alpha_M = y[Mi] * x[1:]
            out = np.flatnonzero((alpha_M <= 0.0) | (alpha_M >= C[Mi]))
            if out.size:  # in-bound alphas that leave the box go to their bound
                for k in out[::-1]:
                    H = self._without(H, k + 1) if H is not None else None
                    bounded[Mi[k]] = alpha_M[k] >= C[Mi[k]]
                    del M[k]
                changes += out.size
                continue
            new = np.zeros(y.size)
            new[Mi] = alpha_M
            new[bounded] = C[bounded]
            changed = np.flatnonzero(new != alpha)
            h = kernel_expansion(K, y[changed] * (new[changed] - alpha[changed]), changed,
                                 out=self.expansion.copy())
            margin = y * (h + x[0])
            violate = np.flatnonzero(((new == 0.0) & (margin < 1.0 - tol)) | (bounded & (margin > 1.0 + tol)))
            violate = violate[violate != p]
            if violate.size == 0:
                return Start(new[rest], y[rest] * h[rest] - 1.0)
            for i in violate:  # points that violate their margin join it
                if H is not None:
                    H = self._with(H, np.append(1.0, kernel_entries(K, [i], M)[0]), kernel_entries(K, [i], [i])[0, 0])
                M.append(int(i))
                bounded[i] = False
            changes += violate.size
        return None


def leave_one_out(model: WeightedSVM, K, *, check_input: bool = True, method: str = "retrain",
                  points=None) -> LeaveOneOut:
    """Retrain without each SV of ``model`` (same weights, engine and tolerance) and classify it.

    Parameters
    ----------
    model : WeightedSVM
        The model trained on all l points.
    K : array-like of shape (l, l)
        Its training kernel.
    check_input : bool, default=True
        Validate K.
    method : {"retrain", "path"}, default="retrain"
        "path": each model without x_p is the end of the exact path c_p -> 0 from ``model`` (a
        ``solution_path.PathLeaveOneOut``: the same fields plus the paths' events and fallbacks).
    points : array-like of int, optional
        Leave out only these SVs (ascending training indices; the multiclass LOO retrains a machine only
        for the points whose vote its LOO can change); ``support`` then holds them and ``loo_error`` counts
        their errors over l. ``method="retrain"`` only.

    Returns
    -------
    LeaveOneOut
        Per-SV decision values without that SV, and the LOO error.

    Raises
    ------
    ValueError
        If K does not match the model, ``method`` is unknown or ``points`` are not SVs.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> loo = ws.leave_one_out(model, K)
    >>> loo.loo_error, int(loo.sets_unchanged.sum())
    (0.15, 2)
    """
    if _check_method(method) == "path":
        if points is not None:
            raise ValueError("points= is available with method='retrain' only")
        from .solution_path.uses import loo_by_path  # imported on use: it builds on this module

        return loo_by_path(model, K, check_input=check_input)
    K = check_kernel(K) if check_input else K
    l = model.n_train
    y, C = model.y, model.C
    sv = model.support
    if points is not None:
        points = np.asarray(points, dtype=np.int64)
        if not np.isin(points, sv).all():
            raise ValueError("points must be support vectors of the model (non-SVs are never LOO errors)")
        sv = points
    f_loo = np.empty(sv.size)
    unchanged = np.empty(sv.size, dtype=bool)
    inbound, bounded = set(model.inbound.tolist()), set(model.bounded.tolist())
    everyone = np.arange(l)
    solver = get_engine(model.engine)
    neighbour = Solved.from_model(model) if solver.capabilities.warm_start else None
    margin_starts = _MarginSystemStarts.of(model, K) if solver.capabilities.warm_start else None
    for t, p in enumerate(sv):
        rest = np.delete(everyone, p)
        if np.all(y[rest] == y[rest][0]):
            # Removing p leaves one class: the reduced SVM is undefined, count an error.
            f_loo[t] = -y[p]
            unchanged[t] = False
            continue
        options = {}
        if solver.capabilities.warm_start:
            # the retraining solved on the margin system (_MarginSystemStarts: SMO then takes no step), else
            # the full model without p (Lee et al. 2004): most alphas do not move; with their gradients
            start = margin_starts.start(p, rest, model.tol) if margin_starts is not None else None
            options["alpha0"] = start if start is not None else restricted_start(neighbour, rest, K)
        if solver.capabilities.kernel_rows:
            options["rows"] = rest
            K_rest = K
        else:
            K_rest = K[np.ix_(rest, rest)]
        alpha, b = solver.solve(K_rest, y[rest], C[rest], model.tol, **options)
        alpha, sub_sv, sub_in, sub_bd = classify_alpha(alpha, C[rest])
        f_loo[t] = float(kernel_entries(K, [p], rest[sub_sv])[0] @ (y[rest][sub_sv] * alpha[sub_sv]) + b)
        unchanged[t] = (set(rest[sub_in].tolist()) == inbound - {p}
                        and set(rest[sub_bd].tolist()) == bounded - {p})
    error = float(np.sum(-y[sv] * f_loo >= 0)) / l
    return LeaveOneOut(support=sv, decision_loo=f_loo, sets_unchanged=unchanged, loo_error=error)


def loo_error(K, y, C, *, engine: str = AUTO, tol: float = DEFAULT_TOL, method: str = "retrain") -> float:
    """Exact leave-one-out error of the weighted SVM: trains on all l points, then without each SV.

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C : float or array-like of shape (l,)
        Positive instance weights.
    engine : str, default="auto"
        The engine (``ENGINE_NAMES``).
    tol : float, default=1e-7
        Its stopping tolerance.
    method : {"retrain", "path"}, default="retrain"
        As in :func:`leave_one_out`.

    Returns
    -------
    float
        The LOO error, a fraction of l.

    Raises
    ------
    ValueError
        If the inputs are invalid.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> K = ws.rbf_kernel(X, gamma=0.5)
    >>> model = ws.fit_svm(K, y, C=1.0)
    >>> ws.loo_error(K, y, 1.0)
    0.15
    """
    return leave_one_out(fit_svm(K, y, C, engine=engine, tol=tol), K, method=method).loo_error
