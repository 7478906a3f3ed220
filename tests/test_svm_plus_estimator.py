"""``SVMPlusClassifier``: SVM+ as a scikit-learn estimator, checked against the SVM+ of svm-plus.md computed here
from kernels built by scikit-learn's own ``pairwise`` functions, against scikit-learn's estimator checks, and inside
``GridSearchCV`` with the privileged features routed as fit metadata."""
import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.metrics.pairwise import linear_kernel
from sklearn.metrics.pairwise import rbf_kernel as sk_rbf
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from wsvm_span.model_selection import WholeTrainingSet
from wsvm_span.svm_plus import SVMPlusClassifier, fit_svm_plus, make_loo_scorer
from wsvm_span.svm_plus import estimator as estimator_module


def data(seed=0, l=80, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(l, d))
    y = np.where(X[:, 0] + 0.6 * rng.normal(size=l) > 0, "pos", "neg")
    X_priv = X[:, :1] + 0.2 * rng.normal(size=(l, 1))
    return X, y, X_priv


class DerivedPrivileged(SVMPlusClassifier):
    """scikit-learn's checks call fit(X, y) without fit parameters, where SVM+ is not defined: this subclass, for the
    checks only, gives every point a privileged feature of its own (its index modulo 3). Every check then runs on the
    estimator's own parameters, validation, fitting, prediction, cloning and pickling. scikit-learn itself skips
    check_array_api_input unless SCIPY_ARRAY_API is set (the estimator converts to numpy float64 anyway)."""

    def fit(self, X, y, X_privileged=None):
        if X_privileged is None:
            n = X.shape[0] if hasattr(X, "shape") else np.asarray(X).shape[0]
            X_privileged = (np.arange(n, dtype=float) % 3)[:, None]
        return super().fit(X, y, X_privileged=X_privileged)


@parametrize_with_checks([DerivedPrivileged()])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_fit_without_privileged_features_is_refused():
    X, y, _ = data()
    with pytest.raises(ValueError, match="needs X_privileged"):
        SVMPlusClassifier().fit(X, y)


@pytest.mark.parametrize("kernel, priv_kernel", [("rbf", "rbf"), ("linear", "rbf"), ("rbf", "linear")])
def test_same_model_as_the_dual_on_scikit_learns_kernels(kernel, priv_kernel):
    X, y, X_priv = data(1)
    X_new = np.random.default_rng(9).normal(size=(25, 3))
    clf = SVMPlusClassifier(C=2.0, gamma_plus=0.5, kernel=kernel, gamma=0.4, priv_kernel=priv_kernel,
                            priv_gamma=2.0).fit(X, y, X_privileged=X_priv)
    gram = {"rbf": lambda A, B, g: sk_rbf(A, B, gamma=g), "linear": lambda A, B, g: linear_kernel(A, B)}
    K, K_priv = gram[kernel](X, X, 0.4), gram[priv_kernel](X_priv, X_priv, 2.0)
    labels = np.where(y == "pos", 1.0, -1.0)  # classes_ sorted: "neg" < "pos", so "pos" is the positive class
    model = fit_svm_plus(K, K_priv, labels, 2.0, 0.5)
    f_new = gram[kernel](X_new, X, 0.4) @ (model.alpha * labels) + model.b
    np.testing.assert_allclose(clf.decision_function(X_new), f_new, atol=1e-8)
    np.testing.assert_array_equal(clf.predict(X_new), np.where(f_new > 0, "pos", "neg"))
    np.testing.assert_array_equal(clf.classes_, ["neg", "pos"])
    np.testing.assert_array_equal(clf.support_, np.flatnonzero(model.alpha > 0))
    assert clf.solver_ == model.solver


def test_precomputed_kernels_give_the_rbf_model():
    X, y, X_priv = data(2)
    X_new = np.random.default_rng(3).normal(size=(10, 3))
    rbf = SVMPlusClassifier(gamma=0.3, priv_gamma=1.5).fit(X, y, X_privileged=X_priv)
    pre = SVMPlusClassifier(kernel="precomputed", priv_kernel="precomputed").fit(
        sk_rbf(X, gamma=0.3), y, X_privileged=sk_rbf(X_priv, gamma=1.5))
    np.testing.assert_allclose(pre.decision_function(sk_rbf(X_new, X, gamma=0.3)), rbf.decision_function(X_new),
                               atol=1e-8)
    with pytest.raises(ValueError, match="expecting 80 features"):  # new points' features, not their kernel
        pre.decision_function(X_new)


def test_clone_get_params_and_pickle():
    X, y, X_priv = data(3)
    clf = SVMPlusClassifier(C=4.0, gamma_plus=2.0, gamma=0.5, solver="smo")
    assert clone(clf).get_params() == clf.get_params()
    clf.fit(X, y, X_privileged=X_priv)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))
    assert again.solver_ == clf.solver_ and clf.solver_.startswith("smo")


def test_grid_search_routes_the_privileged_features_by_fold():
    """GridSearchCV splits X_privileged with X: its CV score at a grid point equals the mean over the same folds of
    models fitted here on each fold's rows of X and X_privileged."""
    X, y, X_priv = data(4, l=90)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(SVMPlusClassifier(gamma=0.5).set_fit_request(X_privileged=True),
                              {"C": [0.5, 4.0], "gamma_plus": [0.25, 4.0]}, cv=cv)
        search.fit(X, y, X_privileged=X_priv)
    for i, params in enumerate(search.cv_results_["params"]):
        scores = [SVMPlusClassifier(gamma=0.5, **params).fit(X[tr], y[tr], X_privileged=X_priv[tr]).score(X[te], y[te])
                  for tr, te in cv.split(X, y)]
        assert search.cv_results_["mean_test_score"][i] == pytest.approx(np.mean(scores), abs=1e-12)


@pytest.mark.parametrize("solver", ["auto", "smo"])
def test_rows_computed_on_demand_beyond_the_polish_size(monkeypatch, solver):
    """With the default route or "smo", RBF kernels and more points than the polish takes, fit trains on kernel rows
    computed on demand (no l x l array): the decomposition solver's model at tol, the same as on the precomputed
    kernels."""
    monkeypatch.setattr(estimator_module, "SMO_POLISH_MAX_L", 50)
    X, y, X_priv = data(5, l=120)
    clf = SVMPlusClassifier(C=1.0, gamma_plus=1.0, gamma=0.3, priv_gamma=1.0, solver=solver, tol=1e-6,
                            cache_size=0.01).fit(X, y, X_privileged=X_priv)
    assert clf.solver_ == "smo"
    labels = np.where(y == "pos", 1.0, -1.0)
    reference = fit_svm_plus(sk_rbf(X, gamma=0.3), sk_rbf(X_priv, gamma=1.0), labels, 1.0, 1.0, solver="smo",
                             tol=1e-6, polish=False)
    np.testing.assert_allclose(clf.model_.decision_train, reference.decision_train, atol=1e-5)
    np.testing.assert_allclose(clf.decision_function(X), clf.model_.decision_train, atol=1e-8)


@pytest.mark.parametrize("params, fit_kwargs, match", [
    ({"C": 0.0}, {}, "C must be a positive"),
    ({"gamma_plus": -1.0}, {}, "gamma_plus must be a positive"),
    ({"kernel": "poly"}, {}, "kernel must be one of"),
    ({"priv_gamma": "wide"}, {}, "priv_gamma must be a positive number"),
    ({"solver": "simplex"}, {}, "solver must be one of"),
    ({"loo": "span"}, {}, "loo must be None or one of"),
    ({}, {"X_privileged": np.ones((5, 1))}, "one row per training point"),
    ({}, {"X_privileged": np.full((80, 1), np.nan)}, "NaN"),
    ({}, {"y": np.repeat(["a", "b", "c", "d"], 20)}, "Only binary classification"),
])
def test_bad_input_is_refused(params, fit_kwargs, match):
    X, y, X_priv = data()
    kwargs = {"X_privileged": X_priv, **fit_kwargs}
    y = kwargs.pop("y", y)
    with pytest.raises(ValueError, match=match):
        SVMPlusClassifier(**params).fit(X, y, **kwargs)


def test_a_precomputed_matrix_that_is_no_kernel_is_refused():
    X, y, X_priv = data(6)
    distance = -np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    with pytest.raises(ValueError, match="precomputed kernel\\) is not positive semidefinite"):
        SVMPlusClassifier(kernel="precomputed").fit(distance, y, X_privileged=X_priv)
    with pytest.raises(ValueError, match="X_privileged \\(a precomputed kernel\\) is not positive semidefinite"):
        SVMPlusClassifier(priv_kernel="precomputed").fit(X, y, X_privileged=distance)


def brute_force_loo_error(K, K_priv, labels, C, gamma):
    """Retrain SVM+ from scratch without each point in turn (no warm start, no shortcut) and count the errors."""
    l = labels.size
    errors = 0
    for p in range(l):
        keep = np.delete(np.arange(l), p)
        cut = np.ix_(keep, keep)
        model = fit_svm_plus(K[cut], K_priv[cut], labels[keep], C, gamma)
        errors += int(labels[p] * (K[p, keep] @ (model.alpha * labels[keep]) + model.b) <= 0)
    return errors / l


def test_loo_estimates_against_retraining_and_the_scorer_in_a_grid_search():
    X, y, X_priv = data(7, l=40)
    labels = np.where(y == "pos", 1.0, -1.0)
    K, K_priv = sk_rbf(X, gamma=0.5), sk_rbf(X_priv, gamma=1.0)
    exact = SVMPlusClassifier(C=2.0, gamma_plus=0.5, gamma=0.5, priv_gamma=1.0, loo="exact").fit(
        X, y, X_privileged=X_priv)
    assert exact.loo_error_ == brute_force_loo_error(K, K_priv, labels, 2.0, 0.5)
    rule = SVMPlusClassifier(C=2.0, gamma_plus=0.5, gamma=0.5, priv_gamma=1.0, loo="rule").fit(
        X, y, X_privileged=X_priv)
    assert abs(rule.loo_error_ - exact.loo_error_) <= 2 / 40  # the rule assumes the active sets do not change
    scorer = make_loo_scorer()
    assert scorer(rule, X, y) == 1.0 - rule.loo_error_
    with pytest.raises(ValueError, match="own training set"):
        scorer(rule, X[:10], y[:10])
    with pytest.raises(ValueError, match="fit it with loo set"):
        scorer(SVMPlusClassifier().fit(X, y, X_privileged=X_priv), X, y)
    grid = {"C": [0.5, 2.0, 8.0], "gamma_plus": [0.5, 4.0]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(SVMPlusClassifier(gamma=0.5, priv_gamma=1.0, loo="exact").set_fit_request(
            X_privileged=True), grid, scoring=scorer, cv=WholeTrainingSet()).fit(X, y, X_privileged=X_priv)
    by_hand = [1.0 - brute_force_loo_error(K, K_priv, labels, p["C"], p["gamma_plus"])
               for p in search.cv_results_["params"]]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], by_hand)
    assert search.best_score_ == max(by_hand)
    again = pickle.loads(pickle.dumps(search))  # the scorer is no closure
    assert again.best_params_ == search.best_params_
    refit = clone(exact).set_params(loo=None).fit(X, y, X_privileged=X_priv)
    assert not hasattr(refit, "loo_error_")
    exact.set_params(loo=None).fit(X, y, X_privileged=X_priv)
    with pytest.raises(ValueError, match="fit it with loo set"):  # the last fit's estimate is gone
        scorer(exact, X, y)
