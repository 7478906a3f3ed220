"""The trained SVM+ model (svm-plus.md).

Notation of the dual: a = alpha, a~ = alpha_tilde, beta = C + a~ - a (the multiplier of
xi_i >= 0), f(x) = sum_i a_i y_i K(x_i, x) + b (decision function) and
xi(x~) = (1/gamma) sum_j a~_j k~(x~_j, x~) + b~ (correcting function). The optimality
(KKT) conditions read

    a >= 0,  beta >= 0,  xi_i >= 0,  mu_i = y_i f(x_i) - 1 + xi_i >= 0,
    a_i mu_i = 0,  beta_i xi_i = 0,  y'a = 0,  1'a~ = 0,

where mu_i is the slack of the margin constraint y_i f(x_i) >= 1 - xi_i.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SVMPlus:
    """A trained SVM+: decision function f(x) = sum_i a_i y_i K(x_i, x) + b, correcting (slack) function
    xi(x~) = sum_i a~_i K~(x~_i, x~) / gamma + b~.

    Parameters
    ----------
    alpha : ndarray of shape (l,)
        Dual variables a of the margin constraints.
    alpha_tilde : ndarray of shape (l,)
        a~ = a + beta - C 1 (sums to 0).
    b, b_tilde : float
        Biases of the decision and the correcting function.
    y : ndarray of shape (l,)
        Training labels in {-1, +1}.
    C, gamma : float
        The SVM+ hyperparameters.
    decision_train : ndarray of shape (l,)
        f(x_i).
    correcting_train : ndarray of shape (l,)
        xi(x~_i), the slack values.
    ridge : float
        Added to the diagonal of K~ (the problem solved is SVM+ with the kernel K~ + ridge I, see
        ``solver.PRIV_RIDGE``); ``correcting_train`` includes it.
    solver : str
        Which solver produced the solution ("active-set", "clarabel", "mosek", "clarabel+active-set" when the
        interior-point solution was polished, "clarabel-low-rank+active-set" when the interior point solved
        the QP in the kernels' low-rank factors, "active-set->..." after the active-set method failed; "smo" for
        the decomposition solver's solution at its tolerance, "smo+active-set" where it was polished).
    iterations : int, default=0
        Active-set iterations (0 for a pure QP solve; the decomposition solver's steps for a "smo" solution).
    fit_time : float, default=0.0
        Seconds spent solving (the kernels are precomputed and not counted).

    Attributes
    ----------
    n_train : int
        l.
    beta : ndarray of shape (l,)
        The multipliers of xi >= 0.
    margin_slack : ndarray of shape (l,)
        y_i f(x_i) - 1 + xi_i.
    kkt_violation : float
        The largest KKT residual.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> f = model.decision_function(ws.rbf_kernel(X[:3], X, gamma=0.5))
    >>> bool(np.allclose(f, model.decision_train[:3]))
    True
    """

    alpha: np.ndarray
    alpha_tilde: np.ndarray
    b: float
    b_tilde: float
    y: np.ndarray
    C: float
    gamma: float
    decision_train: np.ndarray
    correcting_train: np.ndarray
    ridge: float
    solver: str
    iterations: int = 0
    fit_time: float = field(default=0.0, compare=False)

    @property
    def n_train(self) -> int:
        return int(self.y.shape[0])

    @property
    def beta(self) -> np.ndarray:
        """(l,) beta = C + a~ - a >= 0, the multiplier of xi_i >= 0."""
        return self.C + self.alpha_tilde - self.alpha

    @property
    def margin_slack(self) -> np.ndarray:
        """(l,) mu = y f(x) - 1 + xi >= 0 on the training set."""
        return self.y * self.decision_train - 1.0 + self.correcting_train

    def kkt_residuals(self) -> dict[str, float]:
        """Largest violation of each optimality condition (0 at an exact optimum).

        Dual quantities (a, beta) are measured relative to C, primal ones (mu, xi) in
        margin units, products relative to C.
        """
        a, beta, mu, xi = self.alpha, self.beta, self.margin_slack, self.correcting_train
        C = self.C
        return {
            "alpha >= 0": float(max(0.0, -a.min())) / C,
            "beta >= 0": float(max(0.0, -beta.min())) / C,
            "xi >= 0": float(max(0.0, -xi.min())),
            "mu >= 0": float(max(0.0, -mu.min())),
            "alpha mu = 0": float(np.abs(a * mu).max()) / C,
            "beta xi = 0": float(np.abs(beta * xi).max()) / C,
            "y'alpha = 0": abs(float(self.y @ a)) / C,
            "1'alpha_tilde = 0": abs(float(self.alpha_tilde.sum())) / C,
        }

    @property
    def kkt_violation(self) -> float:
        """max of ``kkt_residuals``."""
        return max(self.kkt_residuals().values())

    def decision_function(self, K_rows) -> np.ndarray:
        """f(x) for new points.

        Parameters
        ----------
        K_rows : array-like of shape (m, l)
            Kernel block between the new points and the training set.

        Returns
        -------
        ndarray of shape (m,)
            The decision values.
        """
        return _rows(K_rows, self.n_train, "K_rows") @ (self.y * self.alpha) + self.b

    def correcting_function(self, K_priv_rows) -> np.ndarray:
        """xi(x~) for new privileged points.

        Parameters
        ----------
        K_priv_rows : array-like of shape (m, l)
            Privileged-kernel block between them and the training set (without the ridge, which only touches the
            training diagonal).

        Returns
        -------
        ndarray of shape (m,)
            The correcting (slack) values.
        """
        return _rows(K_priv_rows, self.n_train, "K_priv_rows") @ self.alpha_tilde / self.gamma + self.b_tilde


def _rows(K_rows, l: int, name: str) -> np.ndarray:
    K_rows = np.asarray(K_rows, dtype=float)
    if K_rows.ndim != 2 or K_rows.shape[1] != l:
        raise ValueError(f"{name} must have shape (m, {l}) (new points x training points), got {K_rows.shape}")
    return K_rows
