"""SVM+ as a scikit-learn classifier: ``SVMPlusClassifier`` (svm-plus.md).

The privileged features are known for the training points only, so they are a fit parameter,
``fit(X, y, X_privileged=...)``, and a per-sample one: scikit-learn's meta-estimators (``GridSearchCV``,
``cross_validate``) split them with X where metadata routing asks for them
(``SVMPlusClassifier().set_fit_request(X_privileged=True)`` under ``sklearn.set_config(enable_metadata_routing=
True)``). Prediction needs the ordinary features alone.

Parameter names follow ``sklearn.svm.SVC`` where the quantity is SVC's (``C``, ``kernel``, ``gamma``: the kernel's
width, ``tol``, ``cache_size``); SVM+'s own weight of the correcting function's norm (svm-plus.md's gamma) is
``gamma_plus``, and the privileged space's kernel is ``priv_kernel`` / ``priv_gamma``.
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..kernels import KernelSpec, rbf_expansion, resolve_rbf_gamma
from ..utils.validation import check_features, check_kernel, check_positive_semidefinite
from .loo import leave_one_out, loo_rule
from .model import SVMPlus
from .solver import SMO, SMO_POLISH_MAX_L, SMO_TOL, SOLVERS, fit_svm_plus, fit_svm_plus_rbf_rows

KERNELS = ("rbf", "linear", "precomputed")
#: ``loo``: how ``fit`` estimates the model's leave-one-out error (``loo_error_``)
LOO_ESTIMATES = {"rule": loo_rule, "exact": leave_one_out}


class SVMPlusClassifier(ClassifierMixin, BaseEstimator):
    """SVM+ (learning using privileged information): a binary classifier whose slacks are modelled by a
    correcting function of privileged features, known at training time only.

    Parameters
    ----------
    C : float, default=1.0
        The SVM+ C (weight of the correcting function's values), > 0.
    gamma_plus : float, default=1.0
        The SVM+ gamma (weight of the correcting function's norm), > 0.
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        Kernel of the ordinary features. "precomputed": ``fit`` takes the (l, l) training kernel as X, and
        ``decision_function`` the (m, l) kernel between new points and the training points.
    gamma : float or {"scale", "auto"}, default="scale"
        The RBF kernel's parameter (SVC's rules for "scale" and "auto").
    priv_kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        Kernel of the privileged features ("precomputed": ``X_privileged`` is the (l, l) privileged kernel).
    priv_gamma : float or {"scale", "auto"}, default="scale"
        The privileged RBF kernel's parameter.
    solver : {"auto", "smo", "active-set", "qp"}, default="auto"
        The route of ``fit_svm_plus``. With RBF kernels in both spaces and more than ``SMO_POLISH_MAX_L`` training
        points, "auto" and "smo" train on kernel rows computed on demand (``fit_svm_plus_rbf_rows``: no l x l array).
    tol : float, default=1e-3
        Tolerance of the decomposition solver's solution where it is kept unpolished (above ``SMO_POLISH_MAX_L``
        points, or under "smo" where the exact methods fail). Such a model's decision values are accurate to about
        tol: where many points' f(x) is that close to 0 (small C), their predicted class is left to chance, and
        models selected by their errors need a smaller tol (docs/svm_plus.md).
    cache_size : float, default=200
        Kernel rows (MB per kernel) kept by the "smo" route on rows computed on demand.
    loo : {None, "rule", "exact"}, default=None
        Also estimate the model's leave-one-out error at fit (``loo_error_``): "rule" is SVM+'s LOO rule (from the
        one model's active-set system, ``loo_rule``), "exact" retrains without every point that can change the
        model (``leave_one_out``). ``make_loo_scorer`` turns it into a selection criterion for ``GridSearchCV``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels; ``classes_[1]`` is the positive class (decision value > 0).
    support_ : ndarray of int
        Indices of the support vectors (alpha_i > 0).
    support_vectors_ : ndarray of shape (n_SV, d)
        Their features (empty with ``kernel="precomputed"``).
    dual_coef_ : ndarray of shape (1, n_SV)
        alpha_i y_i of the support vectors.
    intercept_ : ndarray of shape (1,)
        b of f(x) = sum_i alpha_i y_i K(x_i, x) + b.
    alpha_tilde_ : ndarray of shape (l,)
        The correcting function's coefficients a~ (times 1 / gamma_plus).
    intercept_tilde_ : float
        b~ of the correcting function.
    model_ : SVMPlus
        The trained model (its KKT residuals, training decision and correcting values).
    solver_ : str
        The route that solved it (``SVMPlus.solver``).
    n_features_in_ : int
        Number of ordinary features.
    loo_error_ : float
        The leave-one-out error estimated at fit (only with ``loo`` set).

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.svm_plus import SVMPlusClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, "yes", "no")
    >>> X_priv = X[:, :1] + 0.1 * rng.normal(size=(60, 1))   # known when training only
    >>> clf = SVMPlusClassifier(C=1.0, gamma_plus=1.0).fit(X, y, X_privileged=X_priv)
    >>> clf.predict(X[:3]).tolist(), bool(clf.score(X, y) > 0.8)
    (['yes', 'yes', 'no'], True)
    """

    def __init__(self, C=1.0, gamma_plus=1.0, *, kernel="rbf", gamma="scale", priv_kernel="rbf", priv_gamma="scale",
                 solver="auto", tol=SMO_TOL, cache_size=200.0, loo=None):
        self.C = C
        self.gamma_plus = gamma_plus
        self.kernel = kernel
        self.gamma = gamma
        self.priv_kernel = priv_kernel
        self.priv_gamma = priv_gamma
        self.solver = solver
        self.tol = tol
        self.cache_size = cache_size
        self.loo = loo

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.classifier_tags.multi_class = False
        return tags

    def _check_params(self):
        for name in ("C", "gamma_plus", "tol", "cache_size"):
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
                    and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        for name in ("kernel", "priv_kernel"):
            if getattr(self, name) not in KERNELS:
                raise ValueError(f"{name} must be one of {KERNELS}, got {getattr(self, name)!r}")
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if self.loo is not None and self.loo not in LOO_ESTIMATES:
            raise ValueError(f"loo must be None or one of {tuple(LOO_ESTIMATES)}, got {self.loo!r}")

    def fit(self, X, y, X_privileged=None):
        """Train on (X, y) with the privileged features ``X_privileged``.

        Parameters
        ----------
        X : array-like of shape (l, d), or (l, l) with ``kernel="precomputed"``
            Training points.
        y : array-like of shape (l,)
            Labels of exactly two classes.
        X_privileged : array-like of shape (l, d~), or (l, l) with ``priv_kernel="precomputed"``
            Privileged features of the same points (required: SVM+ without them is not defined).

        Returns
        -------
        SVMPlusClassifier
            This estimator, fitted.

        Raises
        ------
        ValueError
            If a parameter or input is invalid, y has other than two classes, or X_privileged is missing.
        """
        return self._fit(X, y, X_privileged)

    def _fit(self, X, y, X_privileged, kernels=None, warm_start: SVMPlus | None = None, warm_start_points=None):
        """``fit``; a search passes ``kernels``, the training kernels (K, K~) of this estimator's kernel parameters
        that it computed once for all its C and gamma_plus, and ``warm_start``, the model of the previous C (or the
        full training set's, for a CV fold: ``warm_start_points``, these points' positions among its own)."""
        self._check_params()
        self.__dict__.pop("loo_error_", None)  # a refit without loo must not keep the last fit's estimate
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        if X_privileged is None:
            raise ValueError("SVMPlusClassifier.fit needs X_privileged, the privileged features of the training "
                             "points (for a model without them use sklearn.svm.SVC)")
        X_priv = np.asarray(X_privileged, dtype=np.float64)
        X_priv = check_features(X_priv[:, None] if X_priv.ndim == 1 else X_priv, name="X_privileged")
        if X_priv.shape[0] != X.shape[0]:
            raise ValueError(f"X_privileged must have one row per training point ({X.shape[0]}), got shape "
                             f"{X_priv.shape}")
        self.classes_, index = np.unique(y, return_inverse=True)
        if self.classes_.size != 2:
            raise ValueError(f"Only binary classification is supported by SVM+: y must hold exactly two classes, "
                             f"got {self.classes_.size} ({self.classes_[:5].tolist()})")
        labels = np.where(index == 1, 1.0, -1.0)
        l = X.shape[0]
        on_rows = self._trains_on_rows(l) and kernels is None
        if on_rows and self.loo is not None:
            raise ValueError(f"loo={self.loo!r} needs the l x l kernels, which the rows computed on demand "
                             f"(solver={self.solver!r}, l = {l} > {SMO_POLISH_MAX_L}) avoid: leave loo=None")
        if self.kernel == "precomputed" and X.shape[1] != l:
            raise ValueError(f"with kernel='precomputed', X must be the (l, l) training kernel, got shape {X.shape}")
        if self.priv_kernel == "precomputed" and X_priv.shape[1] != l:
            raise ValueError("with priv_kernel='precomputed', X_privileged must be the (l, l) privileged kernel, got "
                             f"shape {X_priv.shape}")
        self._resolve_gammas(X, X_priv)
        if on_rows:
            model = fit_svm_plus_rbf_rows(X, X_priv, labels, self.C, self.gamma_plus, self._gamma, self._priv_gamma,
                                          tol=self.tol, cache_mb=self.cache_size, warm_start=warm_start,
                                          warm_start_points=warm_start_points)
        else:
            K, K_priv = self._training_kernels(X, X_priv) if kernels is None else kernels
            model = self._train(K, K_priv, labels, warm_start, warm_start_points)
        self._set_fitted(model, X)
        return self

    def _resolve_gammas(self, X, X_priv) -> None:
        self._gamma = None if self.kernel != "rbf" else resolve_rbf_gamma(self.gamma, X, "gamma")
        self._priv_gamma = None if self.priv_kernel != "rbf" else resolve_rbf_gamma(self.priv_gamma, X_priv,
                                                                                 "priv_gamma")

    def _training_kernels(self, X, X_priv) -> tuple[np.ndarray, np.ndarray]:
        """(K, K~) of the training points, each checked (a precomputed one: finite, symmetric, PSD)."""
        K = (check_kernel(X) if self.kernel == "precomputed"
             else KernelSpec(self.kernel, gamma=self._gamma).block(X))
        K_priv = (check_kernel(X_priv, name="X_privileged") if self.priv_kernel == "precomputed"
                  else KernelSpec(self.priv_kernel, gamma=self._priv_gamma).block(X_priv))
        if self.kernel == "precomputed":
            check_positive_semidefinite(K, name="X (a precomputed kernel)")
        if self.priv_kernel == "precomputed":
            check_positive_semidefinite(K_priv, name="X_privileged (a precomputed kernel)")
        return K, K_priv

    def _train(self, K, K_priv, labels, warm_start: SVMPlus | None = None, warm_start_points=None) -> SVMPlus:
        """The model on the training kernels (labels in {-1, +1}), and ``loo_error_`` when ``loo`` is set;
        ``warm_start``: a neighbouring solution (the "auto" and "smo" routes start from it)."""
        if warm_start is not None and self.solver not in ("auto", SMO):
            warm_start = warm_start_points = None
        model = fit_svm_plus(K, K_priv, labels, self.C, self.gamma_plus, solver=self.solver, tol=self.tol,
                             check_input=False, warm_start=warm_start, warm_start_points=warm_start_points)
        if self.loo is not None:
            self.loo_error_ = float(LOO_ESTIMATES[self.loo](model, K, K_priv).error)
        return model

    def _trains_on_rows(self, l: int) -> bool:
        """Whether ``fit`` trains on kernel rows computed on demand (no l x l kernels)."""
        return (self.solver in ("auto", SMO) and self.kernel == "rbf" and self.priv_kernel == "rbf"
                and l > SMO_POLISH_MAX_L)

    def _set_fitted(self, model: SVMPlus, X) -> None:
        self.model_ = model
        self.solver_ = model.solver
        self.support_ = np.flatnonzero(model.alpha > 0)
        self.dual_coef_ = (model.alpha * model.y)[self.support_][None, :]
        self.intercept_ = np.array([model.b])
        self.alpha_tilde_ = model.alpha_tilde
        self.intercept_tilde_ = model.b_tilde
        self.support_vectors_ = X[self.support_] if self.kernel != "precomputed" else np.empty((0, X.shape[1]))
        self.shape_fit_ = X.shape

    def decision_function(self, X) -> np.ndarray:
        """f(x) = sum_i alpha_i y_i K(x_i, x) + b; positive for ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (m, d), or (m, l) with ``kernel="precomputed"``
            Points (ordinary features only).

        Returns
        -------
        ndarray of shape (m,)
            The decision values.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        coef = self.dual_coef_[0]
        if self.kernel == "precomputed":
            if X.shape[1] != self.shape_fit_[0]:
                raise ValueError(f"with kernel='precomputed', X must be (m, {self.shape_fit_[0]}): the kernel "
                                 f"between the points and the training points, got shape {X.shape}")
            return X[:, self.support_] @ coef + self.intercept_[0]
        if self.kernel == "rbf":
            return rbf_expansion(self.support_vectors_, coef, X, self._gamma) + self.intercept_[0]
        return X @ (self.support_vectors_.T @ coef) + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """The class of each point: ``classes_[1]`` where f(x) > 0, else ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (m, d), or (m, l) with ``kernel="precomputed"``
            Points.

        Returns
        -------
        ndarray of shape (m,)
            Predicted labels.
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]


def make_loo_scorer():
    """A scorer ``f(estimator, X, y) -> 1 - loo_error_`` of a fitted ``SVMPlusClassifier`` with ``loo`` set, on its
    own training set: with ``GridSearchCV(..., cv=WholeTrainingSet())`` every grid point is trained once on all the
    data and scored by its leave-one-out estimate (SVM+'s LOO rule, or its exact LOO).

    Returns
    -------
    callable
        The scorer. Called, it raises a ValueError for an estimator fitted without ``loo``, or for data that are not
        its training set.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.model_selection import GridSearchCV
    >>> from wsvm_span.model_selection import WholeTrainingSet
    >>> from wsvm_span.svm_plus import SVMPlusClassifier, make_loo_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, 0)
    >>> X_priv = X[:, :1] + 0.1 * rng.normal(size=(60, 1))
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(SVMPlusClassifier(loo="rule").set_fit_request(X_privileged=True),
    ...                           {"C": [0.25, 4.0], "gamma_plus": [0.25, 4.0]}, scoring=make_loo_scorer(),
    ...                           cv=WholeTrainingSet()).fit(X, y, X_privileged=X_priv)
    >>> sorted(search.best_params_), bool(0.5 < search.best_score_ <= 1.0)
    (['C', 'gamma_plus'], True)
    """

    return _LOOScorer()


class _LOOScorer:
    """``make_loo_scorer``'s scorer: a class, not a closure, so that a search holding it pickles."""

    def __call__(self, estimator, X, y, **kwargs):
        check_is_fitted(estimator)
        if not hasattr(estimator, "loo_error_"):
            raise ValueError("make_loo_scorer scores SVMPlusClassifier(loo='rule' or 'exact'): fit it with loo set")
        if np.shape(X)[0] != estimator.shape_fit_[0]:
            raise ValueError(f"the LOO scorer scores a model on its own training set ({estimator.shape_fit_[0]} "
                             f"points), got {np.shape(X)[0]}: use cv=WholeTrainingSet()")
        return 1.0 - estimator.loo_error_

    def __repr__(self) -> str:
        return "make_loo_scorer()"
