"""RBF kernel blocks, the other kernels of ``sklearn.svm.SVC`` (``KernelSpec``) and the per-data-set kernel cache.

Precomputing the training kernel once per data set and handing it to LIBSVM as a
precomputed kernel is much faster than letting LIBSVM evaluate kernel values for every
grid point (method.md section 1). ``KernelCache`` is the one place where kernel matrices
are computed; every grid point and every CV fold slices it. ``RBFRows`` is the same kernel filled row by row
on demand, for a consumer that reads few of its rows (SMO, the span-rule: ``SpanSearchCV``).
"""
from __future__ import annotations

import numbers
import threading
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import _native
from .utils.validation import check_features, check_int

#: elements of the row blocks of temporaries in ``squared_distances`` (32 MB of float64)
_BLOCK_ELEMENTS = 2**22


def squared_distances(X, Z=None) -> np.ndarray:
    """Squared Euclidean distances D2_ij = ||x_i - z_j||^2, the part of the RBF kernel that does not
    depend on gamma (a grid over gamma computes it once: ``rbf_from_squared_distances``).

    X: (n, d), Z: (m, d) or None (then Z = X and the result is exactly symmetric with a zero
    diagonal). Returns an (n, m) float64 array.
    """
    X = check_features(X, name="X")
    same = Z is None
    Z = X if same else check_features(Z, name="Z")
    if X.shape[1] != Z.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Z has {Z.shape[1]}")
    # ||x||^2 + ||z||^2 - 2 x.z through one GEMM; clip the tiny negatives that
    # cancellation produces so exp() never exceeds 1.
    sq_x = np.einsum("ij,ij->i", X, X)
    sq_z = sq_x if same else np.einsum("ij,ij->i", Z, Z)
    D2 = X @ Z.T
    D2 *= -2.0
    if same:
        # X @ X.T is exactly symmetric (numpy computes it with SYRK and mirrors the triangle), and so
        # is (sq_i + sq_j): adding them in that order keeps D2 symmetric without a transposed pass
        # over an l x l matrix (which cost as much as the GEMM itself on MNIST). Row blocks keep the
        # temporaries small.
        block = max(1, _BLOCK_ELEMENTS // max(1, D2.shape[1]))
        for start in range(0, D2.shape[0], block):
            D2[start:start + block] += sq_x[start:start + block, None] + sq_x[None, :]
    else:
        D2 += sq_x[:, None]
        D2 += sq_z[None, :]
    np.maximum(D2, 0.0, out=D2)
    if same:
        np.fill_diagonal(D2, 0.0)
    return D2


def rbf_from_squared_distances(D2, gamma: float, out: np.ndarray | None = None) -> np.ndarray:
    """RBF kernel exp(-gamma D2) from squared distances, D2 left as it is.

    out : an array of D2's shape to write into (a grid over gamma reuses one buffer: a fresh l x l
    array per gamma costs its page faults again, as much as the exp itself on MNIST), or None.
    """
    if not gamma > 0:
        raise ValueError(f"gamma must be positive, got {gamma!r}")
    K = np.multiply(D2, -float(gamma), out=out)
    np.exp(K, out=K)
    return K


#: a row cache's "last used" of a pinned slot while the least recently used one is sought
_NEVER = np.iinfo(np.int64).max
#: the fewest rows a row cache holds: each thread that trains on it keeps the row it reads last (a pin) and the
#: solver reads one more while it gathers
MIN_CACHE_ROWS = 4
#: features from which a row cache computes the rows a solver misses in blocks (one GEMM for the missed row and up
#: to ROW_BATCH - 1 other absent rows of the solver's problem) rather than alone (one GEMV, which streams all of X for
#: one row). Per row, one thread, measured: 10,000 points of d = 32: GEMV 0.073 ms, a block of 64 0.108 ms; d = 64:
#: 0.134, 0.112; d = 128: 0.506, 0.153; MNIST's 784 pixels at 3,000 points: 1.21, 0.13 (20,000: 7.7, 0.93). From
#: here a block pays even where two of every three of its rows are never read; below it the exp dominates and a
#: block would compute rows for nothing
ROW_BATCH_MIN_FEATURES = 128
#: rows in such a block (the block measured above), at most 1 / ROW_BATCH_SLOT_FRACTION of the cache's slots, so that
#: one block evicts few of the rows the solver reads
ROW_BATCH = 64
ROW_BATCH_SLOT_FRACTION = 8


class RBFRows:
    """The RBF training kernel exp(-gamma D2), each row computed when it is read: the project's one kernel row cache.

    Two storages, one interface (``row_address``, ``block``, ``expansion``, ``radius2``):

    - **in place** (``RBFRows(D2, gamma)``, where the whole kernel fits): the l x l buffer ``array``, each row
      computed on its first use from the l x l squared distances and kept. SMO reads the kernel rows of the
      points that enter a working set (and of a start's support vectors); the span-rule reads K among the support
      vectors; f on the training set needs the support vectors' rows. On MNIST at a large gamma a whole grid row of
      C touches a sixth of the rows, so the exps of the rest are saved. Every entry is computed as
      ``rbf_from_squared_distances`` computes it (the same multiply and exp, one row at a time), so a consumer
      reads exactly the full kernel's values. ``computed`` flags the valid rows (the diagonal, K_ii = 1, is valid
      from the start); ``rows`` and ``complete`` hand out the buffer.
    - **a row cache** (``RBFRows.cached(X, gamma, cache_mb)``, where l x l does not fit): no l x l array at all.
      A row is computed from the features, ||x_i||^2 + ||x_j||^2 - 2 x_i.x_j clipped at 0 as ``squared_distances``
      computes it (a block of rows is one GEMM), and kept in one of ``n_slots`` slots of l doubles, the least
      recently used one evicted. The values equal the whole kernel's up to the rounding of the inner products
      (BLAS sums a block's dot products in another order than the l x l GEMM: ``ROW_CACHE_RTOL`` in the tests);
      K_ii = 1 exactly, as there. The memory is O(l d + cache_mb).

    The SMO solver reads rows through ``row_address`` (``_native.solve``'s ``RowSource``): in place, the buffer's
    row (computed first); in a row cache, a slot that stays valid until the calling thread's next call (each
    thread pins the slot it read last, and eviction skips pinned slots), so several threads may train on one
    cache.

    Parameters
    ----------
    D2 : ndarray of shape (l, l)
        Squared distances (``squared_distances(X)``: symmetric, zero diagonal), read, never written.
    gamma : float
        RBF parameter, positive.
    out : ndarray of shape (l, l), optional
        The buffer to fill (a search over gammas reuses one); None: a new one.
    unset : float, optional
        Write this into every entry first (tests: NaN shows a read of a row that was never computed).

    Attributes
    ----------
    in_place : bool
        Which storage: the whole buffer (``array``, ``computed``) or a row cache (``slots``, ``n_slots``,
        ``cache_mb``, on the features ``X`` with their squared norms ``sq_norms``).
    rows_computed : int
        Kernel rows computed so far (with a row cache: evicted rows count again when recomputed).

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span.kernels import RBFRows, squared_distances
    >>> X = np.random.default_rng(0).normal(size=(5, 2))
    >>> K = RBFRows(squared_distances(X), 0.5, unset=np.nan)
    >>> rows = K.rows([1, 3])
    >>> bool(np.array_equal(rows[[1, 3]], ws.rbf_kernel(X, gamma=0.5)[[1, 3]])), int(K.computed.sum())
    (True, 2)
    >>> bool(np.array_equal(K.complete(), ws.rbf_kernel(X, gamma=0.5)))
    True
    >>> cached = RBFRows.cached(X, 0.5, cache_mb=160 / 2**20)  # 4 slots of 5 doubles
    >>> bool(np.allclose(cached.block([1, 3]), ws.rbf_kernel(X, gamma=0.5)[[1, 3]], rtol=1e-12, atol=0))
    True
    """

    def __init__(self, D2, gamma: float, out: np.ndarray | None = None, *, unset: float | None = None):
        if not gamma > 0:
            raise ValueError(f"gamma must be positive, got {gamma!r}")
        self.d2, self.gamma = D2, float(gamma)
        self.l = D2.shape[0]
        self.cache_mb = None  # the whole kernel
        self.array = np.empty_like(D2) if out is None else out
        if unset is not None:
            self.array.fill(unset)
        np.fill_diagonal(self.array, 1.0)  # exp(-gamma * 0): the SMO solver reads the diagonal of every point
        self.computed = np.zeros(D2.shape[0], dtype=np.uint8)
        self.diag = None  # the solver reads it from the buffer
        self.X = self.sq_norms = None
        # two threads must not fill one row at once: the second would overwrite (with the multiply's
        # intermediate) a row that the first has marked computed and a solver already reads
        self._lock = threading.Lock()
        self.rows_computed = 0

    @classmethod
    def cached(cls, X, gamma: float, cache_mb: float, *, sq_norms: np.ndarray | None = None,
               out: np.ndarray | None = None) -> RBFRows:
        """The RBF kernel of the features X as a row cache of ``cache_mb`` MB (rows of l doubles, at least
        ``MIN_CACHE_ROWS``, at most l of them), nothing of size l x l.

        Parameters
        ----------
        X : ndarray of shape (l, d)
            The training features (C-contiguous float64, kept by reference).
        gamma : float
            RBF parameter, positive.
        cache_mb : float
            The cache's size in MB (2^20 bytes).
        sq_norms : ndarray of shape (l,), optional
            ||x_i||^2 (a search computes them once for every gamma); None: computed here.
        out : ndarray of shape (n_slots, l), optional
            The slots' buffer (a search over gammas reuses one); None: a new one.

        Returns
        -------
        RBFRows
            The kernel, no row computed yet.

        Raises
        ------
        ValueError
            If gamma or cache_mb is not positive.
        """
        if not gamma > 0:
            raise ValueError(f"gamma must be positive, got {gamma!r}")
        if not cache_mb > 0:
            raise ValueError(f"cache_mb must be positive, got {cache_mb!r}")
        self = cls.__new__(cls)
        self.X = check_features(X, name="X")
        self.l = l = self.X.shape[0]
        self.gamma, self.cache_mb = float(gamma), float(cache_mb)
        self.sq_norms = np.einsum("ij,ij->i", self.X, self.X) if sq_norms is None else sq_norms
        n_slots = cache_rows(l, cache_mb)
        self.slots = np.empty((n_slots, l)) if out is None else out[:n_slots]
        if self.slots.shape != (n_slots, l):
            raise ValueError(f"out must have shape ({n_slots}, {l}) or more rows")
        self._address = self.slots.ctypes.data
        self.slot_of = np.full(l, -1, dtype=np.int64)
        self.owner = np.full(n_slots, -1, dtype=np.int64)
        self.last_used = np.full(n_slots, -1, dtype=np.int64)
        self._clock = 0
        self._pins: dict[int, int] = {}  # thread -> the slot it read last (valid until its next read)
        # rows computed together on a miss (``reading``), and per thread the rows of its solver's problem with the
        # position its next block starts from
        self.batch = (min(ROW_BATCH, n_slots // ROW_BATCH_SLOT_FRACTION)
                      if self.X.shape[1] >= ROW_BATCH_MIN_FEATURES else 1)
        self._problems: dict[int, list] = {}
        self.diag = np.ones(l)  # K_ii = exp(-gamma * 0)
        self.array = self.d2 = self.computed = None
        self._lock = threading.Lock()
        self.rows_computed = 0
        return self

    @property
    def in_place(self) -> bool:
        """True: the whole l x l buffer (rows kept once computed); False: a row cache of ``n_slots`` rows."""
        return self.computed is not None

    @property
    def shape(self) -> tuple[int, int]:
        return (self.l, self.l)

    @property
    def n_slots(self) -> int:
        return self.l if self.in_place else self.slots.shape[0]

    # ------------------------------------------------------------------ computing rows from the features
    def _compute(self, rows, cols=None) -> np.ndarray:
        """K[rows][:, cols] (cols None: every column) from the features, one GEMM: ``squared_distances``'s
        formula (||x_i||^2 + ||x_j||^2 - 2 x_i.x_j, clipped at 0, exactly 0 for a point with itself), then
        ``rbf_from_squared_distances``'s multiply and exp."""
        rows = np.asarray(rows, dtype=np.int64)
        Xc = self.X if cols is None else self.X[cols]
        sq_c = self.sq_norms if cols is None else self.sq_norms[cols]
        D2 = _distance_block(self.X[rows], self.sq_norms[rows], Xc, sq_c)
        # a point's distance to itself is 0 exactly (squared_distances' zero diagonal: K_ii = 1)
        if cols is None:
            D2[np.arange(rows.size), rows] = 0.0
        else:
            hit_r, hit_c = np.nonzero(rows[:, None] == np.asarray(cols, dtype=np.int64)[None, :])
            D2[hit_r, hit_c] = 0.0
        self.rows_computed += rows.size if cols is None else 0
        return rbf_from_squared_distances(D2, self.gamma, out=D2)

    def _slot(self, row: int) -> int:
        """The slot holding ``row`` (computed into the least recently used unpinned slot when absent, with a block
        of other absent rows of the calling thread's problem where it reads one: ``reading``); under the lock."""
        k = int(self.slot_of[row])
        if k < 0:
            others = self._absent_rows_of_problem(row)
            if others.size:
                block = np.concatenate([[row], others])
                for r, values in zip(block, self._compute(block)):
                    self.slots[self._take_slot(int(r))] = values
                k = int(self.slot_of[row])
            else:
                k = self._take_slot(row)
                self._compute_row(row, self.slots[k])
        self._clock += 1
        self.last_used[k] = self._clock
        return k

    def _take_slot(self, row: int) -> int:
        """The least recently used unpinned slot, given to ``row`` (its previous row evicted) and marked used now, so
        that the next call takes another; under the lock."""
        pinned = list(self._pins.values())
        if pinned:
            saved = self.last_used[pinned]
            self.last_used[pinned] = _NEVER
        k = int(np.argmin(self.last_used))
        if pinned:
            self.last_used[pinned] = saved
        if k in pinned:
            raise RuntimeError(f"every slot of the row cache ({self.n_slots}) is pinned by a thread: give it "
                               "more rows than threads")
        if self.owner[k] >= 0:
            self.slot_of[self.owner[k]] = -1
        self.owner[k], self.slot_of[row] = row, k
        self._clock += 1
        self.last_used[k] = self._clock
        return k

    def _absent_rows_of_problem(self, row: int) -> np.ndarray:
        """Up to ``batch`` - 1 rows of the calling thread's problem (``reading``) that the cache lacks, other than
        ``row``, in the problem's order from where the thread's last block ended (empty: none, or no problem)."""
        problem = self._problems.get(threading.get_ident())
        if problem is None or self.batch <= 1:
            return np.zeros(0, dtype=np.int64)
        rows, start = problem
        order = np.roll(rows, -start)
        absent = np.flatnonzero((self.slot_of[order] < 0) & (order != row))[:self.batch - 1]
        if absent.size:
            problem[1] = (start + int(absent[-1]) + 1) % rows.size
        return order[absent]

    @contextmanager
    def reading(self, rows=None):
        """While the calling thread's solver reads the rows of its problem ``rows`` (None: all l), a row it misses is
        computed in one block with other absent rows of that problem (``batch`` rows, one GEMM: with many features a
        row alone is a GEMV that streams all of X; ``ROW_BATCH_MIN_FEATURES``); nothing changes in place or with few
        features. The values are the same formula's either way."""
        if self.in_place or self.batch <= 1:
            yield
            return
        ident = threading.get_ident()
        self._problems[ident] = [np.arange(self.l) if rows is None else np.asarray(rows, dtype=np.int64), 0]
        try:
            yield
        finally:
            del self._problems[ident]

    def _compute_row(self, row: int, out: np.ndarray) -> None:
        """Row ``row`` into ``out`` (l doubles): ``_compute``'s formula for one row, written in place (the solver's
        reads: one GEMV, no temporaries of l beyond the sum of the squared norms)."""
        np.dot(self.X, self.X[row], out=out)
        out *= -2.0
        out += self.sq_norms[row] + self.sq_norms
        np.maximum(out, 0.0, out=out)
        out[row] = 0.0
        out *= -self.gamma
        np.exp(out, out=out)
        self.rows_computed += 1

    # ----------------------------------------------------------------------------------- the readers
    def fill_row(self, row: int) -> None:
        """Compute row ``row`` of the in-place buffer if it is not yet."""
        with self._lock:
            if not self.computed[row]:
                out = self.array[row]
                np.multiply(self.d2[row], -self.gamma, out=out)
                np.exp(out, out=out)
                self.rows_computed += 1
                self.computed[row] = 1

    def row_address(self, row: int) -> int:
        """The address of row ``row``'s l doubles, computed first where needed (the SMO solver's read): in place,
        the buffer's row; in a row cache, its slot, valid until this thread's next call (the thread pins it)."""
        if self.in_place:
            self.fill_row(row)
            return self.array.ctypes.data + row * self.array.strides[0]
        with self._lock:
            k = self._slot(int(row))
            self._pins[threading.get_ident()] = k
            return self._address + k * self.slots.strides[0]

    def rows(self, rows) -> np.ndarray:
        """``array`` with (at least) the rows ``rows`` computed (in place only).

        Parameters
        ----------
        rows : array-like of int
            Row indices.

        Returns
        -------
        ndarray of shape (l, l)
            The buffer: valid on the rows computed so far, these among them.
        """
        self._in_place_only("rows")
        rows = np.asarray(rows, dtype=np.int64).ravel()
        if rows.size and not self.computed[rows].all():
            with self._lock:
                todo = np.unique(rows[self.computed[rows] == 0])
                block = max(1, _BLOCK_ELEMENTS // max(1, self.array.shape[1]))
                for start in range(0, todo.size, block):
                    part = todo[start:start + block]
                    values = np.multiply(self.d2[part], -self.gamma)
                    np.exp(values, out=values)
                    self.array[part] = values
                    self.rows_computed += part.size
                    self.computed[part] = 1
        return self.array

    def block(self, rows, cols=None) -> np.ndarray:
        """K[rows][:, cols] as a new array (cols None: every column): in place from the buffer; in a row cache,
        the cached rows copied and the others computed in blocks (one GEMM each, not cached: an estimate's block
        would evict the rows the trainer reads).

        Parameters
        ----------
        rows : array-like of int
            Row indices.
        cols : array-like of int or None, default=None
            Column indices; None: all l.

        Returns
        -------
        ndarray of shape (len(rows), len(cols) or l)
            The block.
        """
        rows = np.asarray(rows, dtype=np.int64).ravel()
        if cols is not None and len(cols) == self.l and np.array_equal(cols, np.arange(self.l)):
            cols = None  # every column in order (a warm start's expansion over all points): the plain GEMM
        if self.in_place:
            K = self.rows(rows)
            return K[rows] if cols is None else K[np.ix_(rows, np.asarray(cols, dtype=np.int64))]
        width = self.l if cols is None else len(cols)
        out = np.empty((rows.size, width))
        with self._lock:
            at = self.slot_of[rows]
            have = np.flatnonzero(at >= 0)
            # with cols, only those entries of the cached rows (a row block of l columns would be copied first)
            out[have] = self.slots[at[have]] if cols is None else self.slots[np.ix_(at[have], cols)]
        todo = np.flatnonzero(at < 0)
        step = max(1, _BLOCK_ELEMENTS // max(1, width))
        for start in range(0, todo.size, step):
            part = todo[start:start + step]
            out[part] = self._compute(rows[part], cols)
        return out

    def expansion(self, coef, cols, rows=None, out=None) -> np.ndarray:
        """sum_k coef_k K[cols_k, t] for the columns t of ``rows`` (all l when None), in blocks of ``cols`` (one GEMM
        each, never more than ``_BLOCK_ELEMENTS`` kernel entries at once); ``out``: add into it. A row cache's
        route of ``kernel_expansion``."""
        cols = np.asarray(cols, dtype=np.int64).ravel()
        coef = np.asarray(coef, dtype=np.float64).ravel()
        width = self.l if rows is None else len(rows)
        if out is None:
            out = np.zeros(width)
        step = max(1, _BLOCK_ELEMENTS // max(1, width))
        for start in range(0, cols.size, step):
            out += coef[start:start + step] @ self.block(cols[start:start + step], rows)
        return out

    def complete(self) -> np.ndarray:
        """The whole kernel (every row computed, in place only): for consumers that read beyond the rows they
        name."""
        self._in_place_only("complete")
        if not self.computed.all():
            if not self.computed.any():
                # in place, as rbf_from_squared_distances: no temporaries
                with self._lock:
                    if not self.computed.any():
                        rbf_from_squared_distances(self.d2, self.gamma, out=self.array)
                        self.rows_computed += self.l
                        self.computed[:] = 1
            self.rows(np.flatnonzero(self.computed == 0))
        return self.array

    def _in_place_only(self, what: str) -> None:
        if not self.in_place:
            raise ValueError(f"RBFRows.{what} hands out the whole l x l buffer, which a row cache does not hold "
                             "(read rows through block or expansion)")

    def radius2(self, max_d2: float) -> float:
        """R^2 = max K - min K (``kernel_radius2`` of the whole kernel) without computing it: K_ii = 1 is the
        largest entry and exp(-gamma max D2) the smallest (exp is increasing).

        Parameters
        ----------
        max_d2 : float
            The largest squared distance, ``D2.max()`` or ``max_squared_distance(X)`` (a search computes it once
            for every gamma).

        Returns
        -------
        float
            R^2.
        """
        smallest = np.multiply(np.array([max_d2], dtype=np.float64), -self.gamma)
        np.exp(smallest, out=smallest)
        return float(1.0 - smallest[0])


def cache_rows(l: int, cache_mb: float) -> int:
    """Rows of l doubles in a row cache of ``cache_mb`` MB: at least ``MIN_CACHE_ROWS``, at most l."""
    return int(min(l, max(MIN_CACHE_ROWS, int(cache_mb * 2**20) // (8 * max(1, l)))))


def max_squared_distance(X, sq_norms=None) -> float:
    """max_ij ||x_i - x_j||^2 in row blocks (``squared_distances``' formula, at most ``_BLOCK_ELEMENTS`` entries at
    once): what ``RBFRows.radius2`` needs, without an l x l array. O(l^2 d) time, once per search.

    Parameters
    ----------
    X : ndarray of shape (l, d)
        The points.
    sq_norms : ndarray of shape (l,), optional
        ||x_i||^2; None: computed here.

    Returns
    -------
    float
        The largest squared distance (0 for a single point).

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.kernels import max_squared_distance
    >>> max_squared_distance(np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]]))
    25.0
    """
    X = check_features(X, name="X")
    sq = np.einsum("ij,ij->i", X, X) if sq_norms is None else sq_norms
    l = X.shape[0]
    block = max(1, _BLOCK_ELEMENTS // max(1, l))
    largest = 0.0
    for start in range(0, l, block):
        largest = max(largest, float(_distance_block(X[start:start + block], sq[start:start + block], X, sq).max()))
    return largest


def class_max_squared_distances(X, class_index, sq_norms=None) -> np.ndarray:
    """The largest squared distance between a point of class a and one of class c, for every pair of classes, in
    row blocks (``max_squared_distance`` per pair of class blocks): what the one-vs-one machines' R_ij^2 need on a
    row cache (``RBFRows.radius2`` of the largest over classes i and j). O(l^2 d) time, once per search.

    Parameters
    ----------
    X : ndarray of shape (l, d)
        The points.
    class_index : ndarray of int, shape (l,)
        Each point's class position, 0..k-1, every class present.
    sq_norms : ndarray of shape (l,), optional
        ||x_i||^2; None: computed here.

    Returns
    -------
    ndarray of shape (k, k)
        Symmetric; entry (a, c) the largest ||x_i - x_j||^2 over class a's i and class c's j.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.kernels import class_max_squared_distances
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]])
    >>> class_max_squared_distances(X, np.array([0, 1, 0])).tolist()
    [[2.0, 25.0], [25.0, 0.0]]
    """
    X = check_features(X, name="X")
    sq = np.einsum("ij,ij->i", X, X) if sq_norms is None else sq_norms
    class_index = np.asarray(class_index, dtype=np.int64)
    k = int(class_index.max()) + 1
    members = [np.flatnonzero(class_index == c) for c in range(k)]
    l = X.shape[0]
    block = max(1, _BLOCK_ELEMENTS // max(1, l))
    largest = np.zeros((k, k))
    for start in range(0, l, block):
        D2 = _distance_block(X[start:start + block], sq[start:start + block], X, sq)
        np.fill_diagonal(D2[:, start:start + block], 0.0)  # a point with itself: 0, as squared_distances has it
        owners = class_index[start:start + block]
        for c, cols in enumerate(members):
            np.maximum.at(largest[:, c], owners, D2[:, cols].max(axis=1))
    return np.maximum(largest, largest.T)


def _distance_block(A, sq_a, B, sq_b) -> np.ndarray:
    """||a_i||^2 + ||b_j||^2 - 2 a_i.b_j for the rows of A and B, clipped at 0: ``squared_distances``' operations in
    the order of its symmetric case (-2 A B' + (sq_a_i + sq_b_j)), on one block."""
    D2 = A @ B.T
    D2 *= -2.0
    D2 += sq_a[:, None] + sq_b[None, :]
    np.maximum(D2, 0.0, out=D2)
    return D2


def rbf_kernel(X, Z=None, gamma: float = 1.0) -> np.ndarray:
    """RBF kernel block K_ij = exp(-gamma ||x_i - z_j||^2).

    Parameters
    ----------
    X : array-like of shape (n, d)
        The rows' points.
    Z : array-like of shape (m, d) or None, default=None
        The columns' points; None: Z = X, and the result is exactly symmetric with a unit diagonal.
    gamma : float, default=1.0
        RBF parameter, positive.

    Returns
    -------
    ndarray of shape (n, m)
        The kernel block, float64.

    Raises
    ------
    ValueError
        If ``gamma`` is not positive or the points are not finite (n, d) and (m, d) arrays.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> K = ws.rbf_kernel(np.array([[0.0, 0.0], [1.0, 0.0]]), gamma=np.log(2.0))
    >>> K.round(3).tolist()
    [[1.0, 0.5], [0.5, 1.0]]
    """
    if not gamma > 0:
        raise ValueError(f"gamma must be positive, got {gamma!r}")
    D2 = squared_distances(X, Z)
    D2 *= -float(gamma)
    np.exp(D2, out=D2)
    return D2


def resolve_rbf_gamma(gamma, X, name: str = "gamma") -> float:
    """The RBF parameter a user asked for, by ``sklearn.svm.SVC``'s rules: "scale" is 1 / (d var(X)) (1 where X is
    constant), "auto" is 1 / d, a number is taken as it is.

    Parameters
    ----------
    gamma : float or {"scale", "auto"}
        The parameter.
    X : ndarray of shape (n, d)
        The (training) features it is resolved on.
    name : str, default="gamma"
        Its name in the error message.

    Returns
    -------
    float
        The RBF parameter.

    Raises
    ------
    ValueError
        If gamma is neither a positive number nor "scale" or "auto".

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.kernels import resolve_rbf_gamma
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> resolve_rbf_gamma("scale", X), resolve_rbf_gamma("auto", X), resolve_rbf_gamma(0.3, X)
    (2.0, 0.5, 0.3)
    """
    if isinstance(gamma, str) and gamma == "scale":
        var = float(np.var(X))
        return 1.0 / (X.shape[1] * var) if var != 0 else 1.0
    if isinstance(gamma, str) and gamma == "auto":
        return 1.0 / X.shape[1]
    if not (isinstance(gamma, numbers.Real) and gamma > 0):
        raise ValueError(f"{name} must be a positive number, 'scale' or 'auto', got {gamma!r}")
    return float(gamma)


#: ``sklearn.svm.SVC``'s kernels by name ("precomputed" and a callable aside): what a search grids over
KERNEL_NAMES = ("linear", "poly", "rbf", "sigmoid")
#: the kernels computed from the inner products <x, z> (one GEMM per search, shared by all their parameters)
PRODUCT_KERNELS = frozenset({"linear", "poly", "sigmoid"})
#: kernels whose Gram matrix need not be positive semidefinite: sigmoid's is not for most gamma and coef0
#: (tanh of a Gram matrix), so nothing that measures distances in feature space holds for it
INDEFINITE_KERNELS = frozenset({"sigmoid"})


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of ``sklearn.svm.SVC`` with its parameters resolved, keeping only those the kernel reads.

    SVC's formulas: linear <x, z>; poly (gamma <x, z> + coef0)^degree; rbf exp(-gamma ||x - z||^2); sigmoid
    tanh(gamma <x, z> + coef0); "callable" ``function(X, Z)``, the Gram block; "precomputed" the training
    kernel given as X. Two grid points that differ only in a parameter their kernel ignores (degree with
    rbf) get equal specs, so a search computes their kernel once.

    Parameters
    ----------
    name : {"linear", "poly", "rbf", "sigmoid", "callable", "precomputed"}
        The kernel.
    gamma : float, default=0.0
        Its gamma (poly, rbf, sigmoid), positive.
    degree : int, default=0
        Its degree (poly).
    coef0 : float, default=0.0
        Its coef0 (poly, sigmoid).
    function : callable or None, default=None
        ``function(X, Z)`` -> (n, m) Gram block ("callable").

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.kernels import KernelSpec
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> spec = KernelSpec.from_svc_params("poly", X, gamma=1.0, degree=2, coef0=1.0)
    >>> spec.block(X).tolist()
    [[4.0, 4.0], [4.0, 9.0]]
    >>> KernelSpec.from_svc_params("rbf", X, gamma=0.5, degree=2) == KernelSpec("rbf", gamma=0.5)
    True
    """

    name: str
    gamma: float = 0.0
    degree: int = 0
    coef0: float = 0.0
    function: Callable | None = None

    @classmethod
    def from_svc_params(cls, kernel, X, *, gamma="scale", degree: int = 3, coef0: float = 0.0) -> KernelSpec:
        """The spec of SVC's parameters on the training features X (gamma "scale"/"auto" resolved on them).

        Parameters
        ----------
        kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"} or callable
            SVC's ``kernel``.
        X : ndarray of shape (n, d)
            The training features.
        gamma : float or {"scale", "auto"}, default="scale"
            SVC's ``gamma`` (``resolve_rbf_gamma``), read by poly, rbf and sigmoid.
        degree : int, default=3
            SVC's ``degree``, read by poly (a non-negative integer).
        coef0 : float, default=0.0
            SVC's ``coef0``, read by poly and sigmoid.

        Returns
        -------
        KernelSpec
            The kernel, with the parameters it ignores left at their defaults.

        Raises
        ------
        ValueError
            If the kernel is unknown or a parameter it reads is out of range.
        """
        if callable(kernel):
            return cls("callable", function=kernel)
        if kernel == "precomputed":
            return cls("precomputed")
        if kernel not in KERNEL_NAMES:
            raise ValueError(f"kernel must be one of {KERNEL_NAMES}, 'precomputed' or a callable, got {kernel!r}")
        if kernel == "linear":
            return cls("linear")
        g = resolve_rbf_gamma(gamma, X)
        if kernel == "rbf":
            return cls("rbf", gamma=g)
        if not (isinstance(coef0, numbers.Real) and np.isfinite(coef0)):
            raise ValueError(f"coef0 must be a finite number, got {coef0!r}")
        if kernel == "sigmoid":
            return cls("sigmoid", gamma=g, coef0=float(coef0))
        if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 0:
            raise ValueError(f"degree must be a non-negative integer, got {degree!r}")
        return cls("poly", gamma=g, degree=int(degree), coef0=float(coef0))

    @property
    def positive_semidefinite(self) -> bool:
        """Whether every Gram matrix of this kernel is positive semidefinite (a callable is taken to be, as SVC
        takes it)."""
        return self.name not in INDEFINITE_KERNELS

    def from_products(self, G, out: np.ndarray | None = None) -> np.ndarray:
        """A product kernel's block from the inner products G = X Z' (G left as it is).

        Parameters
        ----------
        G : ndarray of shape (n, m)
            Inner products <x_i, z_j>.
        out : ndarray of shape (n, m) or None, default=None
            The array to write into (a search reuses one buffer), or None.

        Returns
        -------
        ndarray of shape (n, m)
            The kernel block.
        """
        if self.name not in PRODUCT_KERNELS:
            raise ValueError(f"the {self.name} kernel is not computed from inner products")
        if self.name == "linear":
            if out is None:
                return G.copy()
            np.copyto(out, G)
            return out
        K = np.multiply(G, self.gamma, out=out)
        K += self.coef0
        if self.name == "poly":
            return np.power(K, self.degree, out=K)
        return np.tanh(K, out=K)

    def block(self, X, Z=None) -> np.ndarray:
        """The kernel block K(x_i, z_j) (Z None: the training kernel of X).

        Parameters
        ----------
        X : ndarray of shape (n, d)
            The rows' points.
        Z : ndarray of shape (m, d) or None, default=None
            The columns' points; None: Z = X.

        Returns
        -------
        ndarray of shape (n, m)
            The block, float64.
        """
        if self.name == "rbf":
            return rbf_kernel(X, Z, self.gamma)
        if self.name == "callable":
            return np.asarray(self.function(X, X if Z is None else Z), dtype=np.float64)
        if self.name == "precomputed":
            raise ValueError("a precomputed kernel is given, not computed")
        X = check_features(X, name="X")
        G = X @ (X if Z is None else check_features(Z, name="Z")).T
        # G is this call's own array: the product kernels overwrite it (linear is G itself) rather than copy l x l
        return self.from_products(G, out=G)


def kernel_expansion(K, coef, cols, rows=None, out=None) -> np.ndarray:
    """sum_k coef_k K[cols_k, t] for the columns t of ``rows`` (all of K's columns when None): a model's f - b
    on those points when cols are its support vectors (K symmetric: K[s, t] = K(x_s, x_t)).

    Read in place: ``K[np.ix_(rows, cols)] @ coef`` would first copy the block (n_SV x l doubles: 0.5 GB for a
    model at a small C on MNIST, more time than training it). Each term reads one kernel row, or, when there are
    fewer points than terms, each point does (a kernel row touches as much memory either way). ``out``: add
    into this (len(rows)) array instead of a new one. K may be an ``RBFRows``: the rows read are computed first.
    """
    if isinstance(K, RBFRows):
        if not K.in_place:
            return K.expansion(coef, cols, rows, out)
        by_point = rows is not None and len(rows) < len(cols)
        K = K.rows(rows if by_point else cols)
    K = np.ascontiguousarray(K, dtype=np.float64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    n = K.shape[1] if rows is None else len(rows)
    if out is None:
        out = np.zeros(n)
    if rows is not None and len(rows) < cols.size and K.shape[0] == K.shape[1]:
        dense = np.zeros(K.shape[1])
        np.add.at(dense, cols, coef)
        _native.add_row_products(K, np.ascontiguousarray(rows, dtype=np.int64), dense, out)
        return out
    rows = None if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    _native.add_expansion(K, rows, cols, coef, out)
    return out


def kernel_entries(K, rows, cols) -> np.ndarray:
    """K[rows][:, cols] as a new array, of an array or an ``RBFRows`` (``RBFRows.block``: a row cache computes the
    rows it does not hold from the features, without caching them).

    Parameters
    ----------
    K : ndarray of shape (l, l) or RBFRows
        The kernel.
    rows, cols : array-like of int
        Row and column indices.

    Returns
    -------
    ndarray of shape (len(rows), len(cols))
        The entries.
    """
    if isinstance(K, RBFRows):
        return K.block(rows, cols)
    return K[np.ix_(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))]


#: bytes of one kernel block in ``rbf_expansion`` (rows x expansion points doubles): large
#: enough for BLAS to run at full speed, small beside the data
EXPANSION_BLOCK_BYTES = 2**27


def rbf_expansion(X_sv, coef, Z, gamma: float, *, block_rows: int | None = None) -> np.ndarray:
    """sum_i coef_i K(x_i, z) for every row z of Z, in row blocks of Z: never more than a
    (block_rows, n) kernel block in memory (n = rows of X_sv), so that f can be evaluated on
    hundreds of thousands of points. block_rows: default EXPANSION_BLOCK_BYTES worth."""
    if block_rows is None:
        block_rows = max(1, EXPANSION_BLOCK_BYTES // (8 * max(1, X_sv.shape[0])))
    else:
        block_rows = check_int(block_rows, "block_rows")
    out = np.zeros(Z.shape[0])
    if X_sv.shape[0] == 0:
        return out
    for start in range(0, Z.shape[0], block_rows):
        out[start:start + block_rows] = rbf_kernel(Z[start:start + block_rows], X_sv, gamma) @ coef
    return out


class KernelCache:
    """Kernel matrices of one train/test split, each computed once on first use.

    Parameters
    ----------
    X_train : array-like of shape (l, d)
        Training features.
    gamma : float
        RBF parameter (the study uses gamma = 1/d).
    X_test : array-like of shape (m, d) or None, default=None
        Test features.
    qp_solver : str, default="auto"
        QP solver for the enclosing ball (D), a name of ``wsvm_span.solvers.qp.SOLVERS``.

    Attributes
    ----------
    train : ndarray of shape (l, l)
        The training kernel, shared by every grid point and CV fold.
    test : ndarray of shape (m, l)
        The kernel between test and training points (a ValueError without ``X_test``).
    radius2 : float
        R^2 of the xi-alpha bound (``kernel_radius2(train)``).
    diameter : float
        D of the span bound: the diameter of the smallest ball enclosing the training points in feature
        space (``enclosing_ball_diameter(train)``).

    Raises
    ------
    ValueError
        If ``gamma`` is not positive or the features are not finite 2-d arrays.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> kernels = ws.KernelCache(X[:30], 0.5, X[30:])
    >>> kernels.train.shape, kernels.test.shape
    ((30, 30), (10, 30))
    >>> bool(kernels.diameter ** 2 <= 4 * kernels.radius2)
    True
    """

    def __init__(self, X_train, gamma: float, X_test=None, *, qp_solver: str = "auto"):
        self.X_train = check_features(X_train, name="X_train")
        self.X_test = None if X_test is None else check_features(X_test, name="X_test")
        if not gamma > 0:
            raise ValueError(f"gamma must be positive, got {gamma!r}")
        self.gamma = float(gamma)
        self.qp_solver = qp_solver

    @cached_property
    def train(self) -> np.ndarray:
        return rbf_kernel(self.X_train, None, self.gamma)

    @cached_property
    def test(self) -> np.ndarray:
        if self.X_test is None:
            raise ValueError("this KernelCache was built without X_test")
        return rbf_kernel(self.X_test, self.X_train, self.gamma)

    @cached_property
    def radius2(self) -> float:
        """R^2 of the xi-alpha bound for this training set (see ``kernel_radius2``)."""
        return kernel_radius2(self.train)

    @cached_property
    def diameter(self) -> float:
        """D of the span bound (smallest enclosing ball of the training set)."""
        from .solvers.enclosing_ball import enclosing_ball_diameter

        return enclosing_ball_diameter(self.train, solver=self.qp_solver)


def kernel_radius2(K) -> float:
    """R^2 = max_ij K_ij - min_ij K_ij: the xi-alpha bound's constant (method.md section 2.3).

    It is valid for every kernel with c <= K(x_i, x_j) <= c + R^2 on the training set.

    Parameters
    ----------
    K : array-like of shape (l, l)
        The training kernel.

    Returns
    -------
    float
        R^2.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> ws.kernel_radius2(ws.rbf_kernel(np.array([[0.0], [1.0]]), gamma=np.log(2.0)))
    0.5
    """
    K = np.asarray(K, dtype=float)
    return float(K.max() - K.min())
