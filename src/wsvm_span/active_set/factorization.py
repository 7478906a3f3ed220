"""The margin system of the solution path and its rank-one updates (solution-path.md).

For the margin set M the path solves the bordered system

    [[0, y_M'], [y_M, H]] [b; a_M] = [r0; r],   H = Q_MM + ridge I,  Q_ij = y_i y_j K_ij.

H is symmetric positive definite (the ridge makes it so for duplicate points), so the
factor kept is the upper Cholesky factor R (H = R'R) and the border is eliminated through
its scalar Schur complement y_M' H^-1 y_M > 0. Adding or removing one margin point updates
R in O(|M|^2); no refactorization from scratch per event.

A Cholesky factor rather than an explicitly updated inverse: the new diagonal pivot
sigma = H_kk - ||R'^-1 H_Mk||^2 of an added point is computed to about |M| * eps * H_kk,
whereas through an explicit inverse its error grows with ||H^-1|| and swamps a small
ridge (exact duplicates have sigma of the order of the ridge).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.linalg.lapack import dpotrs, dtrtrs

from ..span.geometry import COINCIDENT_RTOL

#: a new pivot sigma below this fraction of H_kk means the point is (numerically) a linear
#: combination of the margin points: H would not be positive definite. With the default
#: ridge of the solver, exact duplicates give sigma ~ 2 * ridge, far above this, and the
#: rounding error of sigma is about |M| * 1e-16 * H_kk, far below it.
SIGMA_RTOL = 1e-13


class SingularMarginError(ArithmeticError):
    """The margin system is (numerically) singular: raise the path's ridge."""


class MarginFactor:
    """Cholesky factor of H = Q_MM + ridge I for an ordered margin set M, with the rows
    Q_M. of the margin points (kept for d(y_j f_j)/dtheta = ... + Q_jM phi_M).

    K : (l, l) kernel, y : (l,) labels, ridge : >= 0 added to the diagonal of Q_MM.
    """

    def __init__(self, K: np.ndarray, y: np.ndarray, ridge: float):
        self.K = K
        self.y = y
        self.ridge = float(ridge)
        self.order = np.empty(0, dtype=np.intp)  # margin points in factor order
        self.R = np.zeros((0, 0))
        # Rows Q_m. stored in slots (compact, any order) so that removing a point moves
        # one row instead of shifting all later ones; slot_of[j] is the slot of order[j].
        self._rows = np.empty((0, y.shape[0]))
        self._slot_of = np.empty(0, dtype=np.intp)
        self._hy: np.ndarray | None = None  # cached H^-1 y_M

    @property
    def size(self) -> int:
        return int(self.order.shape[0])

    def copy(self) -> MarginFactor:
        new = MarginFactor.__new__(MarginFactor)
        new.K, new.y, new.ridge = self.K, self.y, self.ridge
        new.order = self.order.copy()
        new.R = self.R.copy()
        # spare rows: the first add would otherwise regrow the buffer at once
        new._rows = np.empty((self.size + 16, self._rows.shape[1]))
        new._rows[: self.size] = self._rows[: self.size]
        new._slot_of = self._slot_of.copy()
        new._hy = None if self._hy is None else self._hy.copy()
        return new

    def _q_row(self, k: int) -> np.ndarray:
        return (self.y[k] * self.y) * self.K[k]

    def refactor(self, indices) -> None:
        """Factor H for the margin set ``indices`` from scratch (start, periodic refresh)."""
        order = np.asarray(indices, dtype=np.intp)
        n = order.shape[0]
        self.order = order.copy()
        self._rows = np.empty((max(2 * n, 16), self.y.shape[0]))
        self._rows[:n] = (self.y[order, None] * self.y[None, :]) * self.K[order]
        self._slot_of = np.arange(n, dtype=np.intp)
        self._hy = None
        if n == 0:
            self.R = np.zeros((0, 0))
            return
        H = self._rows[:n][:, order] + self.ridge * np.eye(n)
        try:
            self.R = np.asfortranarray(sla.cholesky(H, lower=False, check_finite=False))
        except np.linalg.LinAlgError as exc:
            raise SingularMarginError(
                f"Q_MM + ridge I is not positive definite for |M| = {n} ({exc}); raise the ridge"
            ) from None

    def add(self, k: int) -> None:
        """Append margin point k: R grows by one column (one triangular solve)."""
        n = self.size
        q = self._rows[self._slot_of, k]  # Q_Mk in factor order
        h = float(self.K[k, k]) + self.ridge
        s = dtrtrs(self.R, q, lower=0, trans=1)[0] if n else q  # R' s = q
        sigma = h - float(s @ s)
        if not sigma > SIGMA_RTOL * h:
            raise SingularMarginError(
                f"adding point {k} to the margin set makes Q_MM + ridge I singular "
                f"(pivot {sigma:.3g} for H_kk = {h:.3g}); raise the ridge"
            )
        R = np.zeros((n + 1, n + 1), order="F")  # LAPACK's order: no copy per solve
        R[:n, :n] = self.R
        R[:n, n] = s
        R[n, n] = np.sqrt(sigma)
        self.R = R
        if n == self._rows.shape[0]:
            grown = np.empty((max(2 * n, 16), self._rows.shape[1]))
            grown[:n] = self._rows[:n]
            self._rows = grown
        self._rows[n] = self._q_row(k)
        self._slot_of = np.concatenate((self._slot_of, (n,)))
        self.order = np.concatenate((self.order, (k,)))
        self._hy = None

    def remove(self, k: int) -> None:
        """Drop margin point k: delete its column of R and restore the triangle below row p
        (O(|M|^2))."""
        hits = np.flatnonzero(self.order == k)
        if hits.size == 0:
            raise KeyError(f"point {k} is not in the margin set")
        p = int(hits[0])
        n = self.size
        m = n - p
        R = np.empty((n - 1, n - 1), order="F")
        R[:p, :p] = self.R[:p, :p]
        R[:p, p:] = self.R[:p, p + 1:]
        if m > 1:
            # Rows p.. of R without column p are upper Hessenberg; LAPACK's column-delete
            # QR update (Givens rotations, compiled) restores the triangle. With Q = I the
            # result T has T'T = B'B for that block, so R'R = H without row/column p.
            # (T may have negative diagonal entries: R'R, all that is used, is unaffected.)
            _, T = sla.qr_delete(np.eye(m), self.R[p:, p:], 0, 1, "col", check_finite=False)
            R[p:, :p] = 0.0
            R[p:, p:] = T[: m - 1]
        self.R = R
        # Free k's slot by moving the row of the last slot into it.
        slot, last = self._slot_of[p], n - 1
        if slot != last:
            self._rows[slot] = self._rows[last]
            self._slot_of[self._slot_of == last] = slot
        self._slot_of = np.concatenate((self._slot_of[:p], self._slot_of[p + 1:]))
        self.order = np.concatenate((self.order[:p], self.order[p + 1:]))
        self._hy = None

    def solve(self, r0: float, r: np.ndarray) -> tuple[float, np.ndarray]:
        """(b, a_M) solving [[0, y_M'], [y_M, H]] [b; a_M] = [r0; r] (r in factor order)."""
        yM = self.y.take(self.order)
        # LAPACK directly: scipy's cho_solve wrapper costs ~40x the solve for small |M|.
        if self._hy is None:
            both = dpotrs(self.R, np.array((yM, r)).T, lower=0)[0]  # (n, 2), Fortran order
            self._hy, v = both[:, 0].copy(), both[:, 1]
        else:
            v = dpotrs(self.R, r, lower=0)[0]
        hy = self._hy
        b = (yM.dot(v) - r0) / yM.dot(hy)
        v -= b * hy
        return float(b), v

    def times_rows(self, coef: np.ndarray) -> np.ndarray:
        """sum_m coef_m Q_m. over the margin points (coef in factor order): (l,)."""
        n = self.size
        if n == 0:
            return np.zeros(self.y.shape[0])
        slotted = np.empty(n)
        slotted[self._slot_of] = coef
        return slotted.dot(self._rows[:n])

    def twin(self, k: int) -> int:
        """A margin point at the same place as k with k's label (phi(x_m) = phi(x_k),
        y_m = y_k, to ``COINCIDENT_RTOL``), or -1. Such a pair in M makes Q_MM singular
        and its split of alpha arbitrary."""
        n = self.size
        if n == 0:
            return -1
        M = self.order
        q = self._rows[self._slot_of, k]  # y_m y_k K_mk: K_mk where the labels agree
        d2 = self.K[k, k] + self.K[M, M] - 2.0 * q
        hit = np.flatnonzero((self.y[M] == self.y[k]) & (d2 <= COINCIDENT_RTOL * self.K[k, k]))
        return int(M[hit[0]]) if hit.size else -1

    def rows_times(self, idx: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Q_M,idx v in factor order: (|M|,)."""
        if idx.size == 0:
            return np.zeros(self.size)
        return self._rows[np.ix_(self._slot_of, idx)] @ v
