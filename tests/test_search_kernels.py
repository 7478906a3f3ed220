"""SpanSearchCV over every kernel of SVC (issue 45, item 7): linear, poly, rbf, sigmoid and a callable as grid keys.

Ground truths, independent of the search: scikit-learn's ``SVC`` trained with the same parameters on the features
(LIBSVM computes the kernel itself), the kernels of ``sklearn.metrics.pairwise``, the project's span functions on
SVC's model, and a brute-force leave-one-out loop of SVCs for the exact-LOO criterion.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel, sigmoid_kernel
from sklearn.svm import SVC

import wsvm_span as ws
from wsvm_span.kernels import RBFRows
from wsvm_span import multiclass as mc
from wsvm_span.model import make_model
from wsvm_span.model_selection import SpanSearchCV
from wsvm_span.model_selection import _search as search_module

TOL = 1e-7  # tight: the search and SVC must reach the same solutions
#: decision values of the search's model and SVC's: both solve to TOL by LIBSVM's stopping rule
DECISION_ATOL = 1e-4
#: dual coefficients y_i a_i of the two, relative to C
DUAL_RTOL = 1e-3
#: the span bound, continuous in the alphas (its sum of a_p) and in S (a QP): two solutions within TOL differ in
#: its sixth digit (poly, degree 3: 1.2e-6)
SPAN_BOUND_RTOL = 1e-5
C_GRID = [0.5, 8.0]


def scaled_gamma(X) -> float:
    """SVC's gamma="scale"."""
    return 1.0 / (X.shape[1] * X.var())


def cubic(A, B):
    """A callable kernel, (<a, b> / 4 + 1)^3, as SVC takes one."""
    return (A @ B.T / 4.0 + 1.0) ** 3


#: (grid keys, the kernel block K(X, Z) of sklearn.metrics.pairwise with SVC's parameters; Z is the training set)
KERNELS = {
    "linear": ({"kernel": ["linear"]}, lambda X, Z: linear_kernel(X, Z)),
    "poly2": ({"kernel": ["poly"], "degree": [2], "coef0": [1.0]},
              lambda X, Z: polynomial_kernel(X, Z, degree=2, gamma=scaled_gamma(Z), coef0=1.0)),
    "poly3": ({"kernel": ["poly"], "degree": [3], "coef0": [1.0], "gamma": [0.1]},
              lambda X, Z: polynomial_kernel(X, Z, degree=3, gamma=0.1, coef0=1.0)),
    "rbf": ({"kernel": ["rbf"], "gamma": [0.3]}, lambda X, Z: rbf_kernel(X, Z, gamma=0.3)),
    "sigmoid": ({"kernel": ["sigmoid"], "gamma": [0.02], "coef0": [0.0]},
                lambda X, Z: sigmoid_kernel(X, Z, gamma=0.02, coef0=0.0)),
    "callable": ({"kernel": [cubic]}, cubic),
}


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=110, n_features=4, n_informative=3, n_redundant=0, flip_y=0.1,
                               random_state=5)
    return X[:70], y[:70], X[70:], y[70:]


def record_models(monkeypatch) -> dict:
    """The model the search trains at each grid point, by its sorted params' repr."""
    models = {}
    evaluate = search_module._evaluate

    class Recording:
        def __init__(self, kernels, key):
            self.kernels, self.key = kernels, key

        def __getattr__(self, name):
            return getattr(self.kernels, name)

        def fit_model(self, *args, **kwargs):
            model = self.kernels.fit_model(*args, **kwargs)
            train = self.kernels.train
            # a copy: the search reuses its kernel buffer for the next kernel (an RBF kernel: its rows on demand)
            models[self.key] = (model, (train.complete() if isinstance(train, RBFRows) else train).copy())
            return model

    def recording(kernels, y, C, params, **options):
        return evaluate(Recording(kernels, _key(params)), y, C, params, **options)

    monkeypatch.setattr(search_module, "_evaluate", recording)
    return models


def _key(params) -> str:
    return repr(sorted(params.items(), key=lambda item: item[0]))


def svc_model(svc, K, y_pm):
    """SVC's solution as the project's model on the training kernel K (the span scorer's mapping)."""
    alpha = np.zeros(len(y_pm))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return make_model(K, y_pm, np.full(len(y_pm), svc.C), alpha, float(svc.intercept_[0]), engine="sklearn",
                      tol=svc.tol)


@pytest.mark.parametrize("name", list(KERNELS))
def test_every_grid_point_is_svcs_model_and_span_rule(monkeypatch, data, name):
    """At every grid point of each kernel, the search's model equals SVC's (same parameters, kernel computed by
    LIBSVM): dual coefficients, support vectors, decision values on held-out points; its span-rule, span bound
    (not for sigmoid: refused) and xi-alpha bound equal the project's functions on SVC's model with the kernel of
    sklearn.metrics.pairwise, R^2 and D computed from that kernel."""
    X, y, Xt, yt = data
    keys, pairwise = KERNELS[name]
    models = record_models(monkeypatch)
    extra = () if name == "sigmoid" else ("span_bound",)
    s = SpanSearchCV(SVC(tol=TOL), {**keys, "C": C_GRID}, extra_criteria=extra, error_score="raise").fit(
        X, y, heldout=(Xt, yt))
    K, Kt = pairwise(X, X), pairwise(Xt, X)
    y_pm = np.where(y == s.classes_[1], 1.0, -1.0)
    for i, params in enumerate(s.cv_results_["params"]):
        svc = SVC(tol=TOL, **params).fit(X, y)
        model, train = models[_key(params)]
        np.testing.assert_allclose(train, K, rtol=1e-10, atol=1e-12)
        reference = svc_model(svc, K, y_pm)
        np.testing.assert_array_equal(model.support, np.sort(svc.support_))
        np.testing.assert_allclose((model.y * model.alpha)[svc.support_], svc.dual_coef_[0],
                                   rtol=0, atol=DUAL_RTOL * params["C"])
        np.testing.assert_allclose(model.decision_function(Kt), svc.decision_function(Xt), atol=DECISION_ATOL)
        assert s.cv_results_["span_rule"][i] == ws.span_rule(reference, K)
        assert s.cv_results_["xi_alpha_bound"][i] == ws.xi_alpha_bound(reference, K, R2=ws.kernel_radius2(K))
        if extra:
            expected = ws.analyse_spans(reference, K, D=ws.enclosing_ball_diameter(K)).span_bound
            assert s.cv_results_["span_bound"][i] == pytest.approx(expected, rel=SPAN_BOUND_RTOL)
        assert s.cv_results_["test_error"][i] == np.mean(svc.predict(Xt) != yt)
    best = SVC(tol=TOL, **s.best_params_).fit(X, y)
    np.testing.assert_array_equal(s.predict(Xt), best.predict(Xt))


def test_exact_loo_is_a_brute_force_loop_of_svcs(data):
    """criterion="loo_error" with a poly kernel: each point left out, an SVC retrained on the rest."""
    X, y, *_ = data
    X, y = X[:30], y[:30]
    grid = {"kernel": ["poly"], "degree": [2], "coef0": [1.0], "C": C_GRID}
    s = SpanSearchCV(SVC(tol=TOL), grid, criterion="loo_error").fit(X, y)
    for i, params in enumerate(s.cv_results_["params"]):
        keep = np.ones(len(y), dtype=bool)
        wrong = 0
        for p in range(len(y)):
            keep[p] = False
            wrong += SVC(tol=TOL, **params).fit(X[keep], y[keep]).predict(X[p:p + 1])[0] != y[p]
            keep[p] = True
        assert s.cv_results_["loo_error"][i] == wrong / len(y)


def test_a_list_of_grids_mixes_kernels(data):
    """param_grid as a list of grids, as GridSearchCV takes it: each grid's own keys, cv_results_ a masked column
    for a key that a grid leaves out; the same points as SVC's, grid by grid."""
    X, y, Xt, yt = data
    grid = [{"kernel": ["linear"], "C": C_GRID}, {"kernel": ["rbf"], "gamma": [0.1, 1.0], "C": C_GRID}]
    s = SpanSearchCV(SVC(tol=TOL), grid).fit(X, y, heldout=(Xt, yt))
    assert [p["kernel"] for p in s.cv_results_["params"]] == ["linear"] * 2 + ["rbf"] * 4
    assert s.cv_results_["param_gamma"].mask.tolist() == [True] * 2 + [False] * 4
    for i, params in enumerate(s.cv_results_["params"]):
        assert s.cv_results_["test_error"][i] == np.mean(SVC(tol=TOL, **params).fit(X, y).predict(Xt) != yt)
    assert s.best_estimator_.kernel == s.best_params_["kernel"]


def test_keys_a_kernel_ignores_are_columns_and_change_nothing(data):
    """degree and coef0 with rbf, gamma with linear: ignored by the kernel (as SVC ignores them), reported as
    columns; the points that differ only in them share one kernel and score the same."""
    X, y, *_ = data
    grid = {"kernel": ["linear", "rbf"], "degree": [2, 5], "gamma": [0.2], "C": [1.0]}
    s = SpanSearchCV(SVC(tol=TOL), grid).fit(X, y)
    assert {"param_degree", "param_gamma", "param_kernel"} <= set(s.cv_results_)
    rule = s.cv_results_["span_rule"]
    kernels = [p["kernel"] for p in s.cv_results_["params"]]
    for kernel in ("linear", "rbf"):
        assert np.unique(rule[[k == kernel for k in kernels]]).size == 1
    # one kernel matrix each (kernel_time is the shared work of a point's kernel)
    assert np.unique(s.cv_results_["kernel_time"]).size <= 2


def test_the_templates_kernel_is_the_default(data):
    """SVC(kernel="poly", degree=2) as the estimator: the grid's C only, the template's kernel for every point."""
    X, y, Xt, yt = data
    s = SpanSearchCV(SVC(kernel="poly", degree=2, coef0=1.0, tol=TOL), {"C": C_GRID}).fit(X, y, heldout=(Xt, yt))
    for i, params in enumerate(s.cv_results_["params"]):
        svc = SVC(kernel="poly", degree=2, coef0=1.0, tol=TOL, **params).fit(X, y)
        assert s.cv_results_["test_error"][i] == np.mean(svc.predict(Xt) != yt)
    assert (s.best_estimator_.kernel, s.best_estimator_.degree) == ("poly", 2)


def test_multiclass_poly(data):
    """Three classes, poly kernel: every point is the one-vs-one classifier on sklearn's polynomial kernel, its
    span-rule the multiclass span-rule of that model, its held-out error a fresh SVC's."""
    X, y, Xt, yt = data
    three, three_t = np.digitize(X[:, 0], [-0.5, 0.5]), np.digitize(Xt[:, 0], [-0.5, 0.5])
    grid = {"kernel": ["poly"], "degree": [2], "coef0": [1.0], "gamma": [0.2], "C": C_GRID}
    s = SpanSearchCV(SVC(tol=TOL), grid).fit(X, three, heldout=(Xt, three_t))
    K = polynomial_kernel(X, degree=2, gamma=0.2, coef0=1.0)
    for i, params in enumerate(s.cv_results_["params"]):
        model = mc.fit_one_vs_one(K, three, np.full(len(three), params["C"]), tol=TOL)
        assert s.cv_results_["span_rule"][i] == mc.span_rule(model, K)
        fresh = SVC(tol=TOL, **params).fit(X, three)
        assert s.cv_results_["test_error"][i] == np.mean(fresh.predict(Xt) != three_t)


def test_sigmoid_refuses_the_feature_space_criteria(data):
    """The span bound's D and the xi-alpha bound's R^2 need a positive semidefinite kernel: refused with the
    sigmoid, as criterion or extra criterion, before any training."""
    X, y, *_ = data
    grid = {"kernel": ["rbf", "sigmoid"], "gamma": [0.02], "C": [1.0]}
    for options in ({"criterion": "span_bound"}, {"extra_criteria": ("span_bound",)},
                    {"criterion": "xi_alpha_bound"}):
        with pytest.raises(ValueError, match=r"\['sigmoid'\] kernel \(not positive semidefinite\)"):
            SpanSearchCV(param_grid=grid, **options).fit(X, y)


def test_bad_kernel_keys(data):
    X, y, *_ = data
    with pytest.raises(ValueError, match="kernel must be one of"):
        SpanSearchCV(param_grid={"kernel": ["cosine"], "C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="degree must be a non-negative integer"):
        SpanSearchCV(param_grid={"kernel": ["poly"], "degree": [2.5], "C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="not a grid value"):
        SpanSearchCV(param_grid={"kernel": ["precomputed"], "C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="no meaning with kernel='precomputed'"):
        SpanSearchCV(SVC(kernel="precomputed"), {"degree": [2], "C": [1.0]}).fit(X @ X.T, y)


def test_span_scorer_takes_every_kernel(data):
    """GridSearchCV(SVC()) scored by make_span_scorer over the same kernels scores what SpanSearchCV does (SVC's
    own solutions, within TOL of the search's: the span-rule, a count, is equal)."""
    from sklearn.model_selection import GridSearchCV

    from wsvm_span.model_selection import WholeTrainingSet, make_span_scorer

    X, y, *_ = data
    grid = [{"kernel": ["linear", "sigmoid"], "gamma": [0.02], "C": C_GRID},
            {"kernel": ["poly"], "degree": [2], "coef0": [1.0], "C": C_GRID}, {"kernel": [cubic], "C": C_GRID}]
    plain = GridSearchCV(SVC(tol=TOL), grid, scoring=make_span_scorer(), cv=WholeTrainingSet()).fit(X, y)
    span = SpanSearchCV(SVC(tol=TOL), grid).fit(X, y)
    np.testing.assert_array_equal(plain.cv_results_["mean_test_score"], span.cv_results_["mean_test_score"])
    with pytest.raises(ValueError, match="not positive semidefinite"):
        make_span_scorer("span_bound")(SVC(kernel="sigmoid", gamma=0.02).fit(X, y), X, y)


def test_threads_over_kernels_give_the_same_results(data):
    """n_jobs=2 over four kernels (each its own arrays, computed in threads) equals the sequential search (one
    buffer reused kernel after kernel)."""
    X, y, Xt, yt = data
    grid = [{"kernel": ["linear", "sigmoid"], "gamma": [0.02], "C": C_GRID},
            {"kernel": ["rbf"], "gamma": [0.3], "C": C_GRID}, {"kernel": [cubic], "C": C_GRID}]
    one, two = (SpanSearchCV(SVC(tol=TOL), grid, n_jobs=n_jobs).fit(X, y, heldout=(Xt, yt)) for n_jobs in (1, 2))
    for key in ("span_rule", "xi_alpha_bound", "test_error", "n_sv"):
        np.testing.assert_array_equal(one.cv_results_[key], two.cv_results_[key])
