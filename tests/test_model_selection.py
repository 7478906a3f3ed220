"""SpanSearchCV, the span scorer, the tie rule, Nadaraya-Watson weights and ``wsvm-span select``.

Ground truths: scikit-learn's own estimator checks and GridSearchCV; an independent brute-force loop
(fit_svm + span_rule per grid point); exact ties with the tie rules' choices worked out by hand; a fresh SVC trained with
best_params_; LIBSVM itself (libsvm-official's svm_load_model/svm_predict) for saved models; hand
computations for the weights.
"""
from __future__ import annotations

import hashlib
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import wsvm_span as ws
from wsvm_span.cli import main
from wsvm_span.model_selection import (
    SpanSearchCV,
    TieRule,
    WholeTrainingSet,
    gridpy_param_grid,
    make_span_scorer,
    nadaraya_watson_label_probability,
    nadaraya_watson_weights,
)
from wsvm_span.model_selection._sklearn_compat import has_fit_callbacks
from wsvm_span.model_selection.files import read_data_file

GRID = {"C": [0.25, 2.0, 16.0], "gamma": [0.05, 0.5]}
TOL = 1e-7  # tight: the brute-force loop must see the same solutions


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=160, n_features=5, n_informative=3, flip_y=0.1, random_state=3)
    return X[:100], y[:100], X[100:], y[100:]


# ---------------------------------------------------------------------------------- sklearn checks
# Every check applies and none is excluded (scikit-learn excludes the two sample-weight equivalence
# checks for SVC itself; they pass here). The two array-API checks skip themselves unless
# SCIPY_ARRAY_API=1 is set before scipy is imported.
@parametrize_with_checks(
    [SpanSearchCV(param_grid={"C": [0.5, 4.0], "gamma": [0.1, 1.0]}),
     SpanSearchCV(SVC(kernel="precomputed"), param_grid={"C": [0.5, 4.0]}),
     # kernels as grid keys. The linear kernel's dual is degenerate: SVC's own solutions pass the sample-weight
     # checks at tol 1e-7, not 1e-5; gamma is a number, as "scale" reads X.var(), which repeated rows change
     SpanSearchCV(SVC(kernel="linear", tol=1e-7),
                  param_grid={"C": [0.5, 4.0], "kernel": ["linear", "rbf"], "gamma": [0.1]})],
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ------------------------------------------------------------------------------- search semantics
def test_selection_equals_brute_force_loop(data):
    X, y, Xt, yt = data
    y_pm = np.where(y == 1, 1.0, -1.0)
    yt_pm = np.where(yt == 1, 1.0, -1.0)
    points, rule, test_err = [], [], []
    for C in GRID["C"]:
        for gamma in GRID["gamma"]:
            K = ws.rbf_kernel(X, gamma=gamma)
            model = ws.fit_svm(K, y_pm, C, tol=TOL)
            points.append({"C": C, "gamma": gamma})
            rule.append(ws.span_rule(model, K))
            test_err.append(ws.test_error(model, ws.rbf_kernel(Xt, X, gamma), yt_pm))
    rule, test_err = np.array(rule), np.array(test_err)

    search = SpanSearchCV(SVC(tol=TOL), GRID).fit(X, y)
    assert search.best_params_ == points[int(np.argmin(rule))]  # first minimum in grid order
    np.testing.assert_allclose(search.cv_results_["span_rule"], rule)
    np.testing.assert_allclose(search.best_score_, 1 - rule.min())
    s = SpanSearchCV(SVC(tol=TOL), GRID).fit(X, y, heldout=(Xt, yt))
    np.testing.assert_allclose(s.cv_results_["test_error"], test_err, atol=1e-12)


#: a grid on which the span-rule's minimum (11 errors of 100) is an exact tie of five points (C outer, gamma
#: inner: ParameterGrid's order), with 5, 5, 4, 4 and 4 held-out errors of 60
TIE_GRID = {"C": [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0], "gamma": [0.05, 0.1, 0.5]}
TIED = [0, 1, 4, 8, 16]
TIED_HELDOUT_ERRORS = [5, 5, 4, 4, 4]
#: the study's tie rules among them, by hand: the worst (5 errors; the first such point in grid order),
#: the best (4), the lower median of 4, 4, 4, 5, 5 (4)
EXPECTED_INDEX = {"worst": 0, "best": 4, "median": 4}


def test_tie_rules_pick_among_exact_ties(data):
    X, y, Xt, yt = data
    y_pm, yt_pm = np.where(y == 1, 1.0, -1.0), np.where(yt == 1, 1.0, -1.0)
    errors, heldout = [], []  # counts, so that ties are exact: the span-rule's and the held-out errors
    for C in TIE_GRID["C"]:
        for gamma in TIE_GRID["gamma"]:
            K = ws.rbf_kernel(X, gamma=gamma)
            model = ws.fit_svm(K, y_pm, C, tol=TOL)
            errors.append(int(round(ws.span_rule(model, K) * len(y))))
            heldout.append(int(np.sum(-yt_pm * model.decision_function(ws.rbf_kernel(Xt, X, gamma)) >= 0)))
    errors, heldout = np.array(errors), np.array(heldout)
    assert np.flatnonzero(errors == errors.min()).tolist() == TIED and errors.min() == 11
    assert heldout[TIED].tolist() == TIED_HELDOUT_ERRORS
    for tie, index in EXPECTED_INDEX.items():
        s = SpanSearchCV(SVC(tol=TOL), TIE_GRID, tie_rule=tie).fit(X, y, heldout=(Xt, yt))
        assert s.best_index_ == index, tie
        assert s.best_params_ == {"C": TIE_GRID["C"][index // 3], "gamma": TIE_GRID["gamma"][index % 3]}
        assert np.sum(s.predict(Xt) != yt) == heldout[index]  # the refit model IS that point


def test_other_criteria_match_the_core_estimators(data):
    X, y, *_ = data
    y_pm = np.where(y == 1, 1.0, -1.0)
    s = SpanSearchCV(SVC(tol=TOL), GRID, criterion="span_bound", extra_criteria=("cv_error",), cv=4).fit(X, y)
    from sklearn.model_selection import StratifiedKFold

    folds = np.empty(len(y), dtype=int)
    for k, (_, test) in enumerate(StratifiedKFold(4).split(X, y)):
        folds[test] = k
    for i, p in enumerate(s.cv_results_["params"]):
        K = ws.rbf_kernel(X, gamma=p["gamma"])
        model = ws.fit_svm(K, y_pm, p["C"], tol=TOL)
        assert s.cv_results_["span_bound"][i] == pytest.approx(ws.span_bound(model, K))
        assert s.cv_results_["xi_alpha_bound"][i] == pytest.approx(ws.xi_alpha_bound(model, K))
        assert s.cv_results_["cv_error"][i] == pytest.approx(
            ws.kfold_cv_error(K, y_pm, p["C"], folds=folds, tol=TOL))
    assert s.cv_results_["mean_test_score"] == pytest.approx(1 - s.cv_results_["span_bound"])


def test_loo_error_criterion_is_the_exact_loo(data):
    X, y, *_ = data
    y_pm = np.where(y == 1, 1.0, -1.0)
    s = SpanSearchCV(SVC(tol=TOL), GRID, criterion="loo_error").fit(X, y)
    for i, p in enumerate(s.cv_results_["params"]):
        K = ws.rbf_kernel(X, gamma=p["gamma"])
        assert s.cv_results_["loo_error"][i] == ws.loo_error(K, y_pm, p["C"], tol=TOL)
    assert s.best_params_ == s.cv_results_["params"][int(np.argmin(s.cv_results_["loo_error"]))]


def test_cv_results_keys_are_gridsearchcvs(data):
    X, y, *_ = data
    for train_score in (False, True):
        ours = SpanSearchCV(SVC(tol=TOL), GRID, return_train_score=train_score).fit(X, y)
        theirs = GridSearchCV(SVC(tol=TOL), GRID, cv=WholeTrainingSet(), return_train_score=train_score).fit(X, y)
        extra = {"span_rule", "xi_alpha_bound", "sv_count_bound", "n_sv", "n_inbound",
                 "n_bounded", "kernel_time"}
        assert set(ours.cv_results_) == set(theirs.cv_results_) | extra
        assert ours.cv_results_["params"] == theirs.cv_results_["params"]
        np.testing.assert_array_equal(ours.cv_results_["param_C"], theirs.cv_results_["param_C"])
    assert ours.n_splits_ == theirs.n_splits_ == 1


def test_warm_walks_go_down_c_and_equal_libsvm_from_zero(data, monkeypatch):
    """engine="smo" walks the C axis of each (gamma, class_weight) line downwards, each point from the previous
    one (counted through the start function the search calls); every estimate of the walk equals LIBSVM's
    training from zero at each point, CV and exact LOO included, and n_jobs (walks run in parallel within a
    gamma) does not change any number."""
    import wsvm_span.model_selection._search as search_module

    X, y, *_ = data
    grid = {"C": [16.0, 0.25, 2.0], "gamma": [0.05, 0.5], "class_weight": [None, {0: 2.0, 1: 0.5}]}
    starts = []
    real = search_module.rescaled_start
    monkeypatch.setattr(search_module, "rescaled_start",
                        lambda neighbour, C, K=None: starts.append((float(neighbour.C.max()), float(C.max())))
                        or real(neighbour, C, K))
    warm = SpanSearchCV(SVC(tol=TOL), grid, criterion="cv_error", extra_criteria=("loo_error", "span_rule"),
                        engine="smo").fit(X, y)
    lines = len(grid["gamma"]) * len(grid["class_weight"])
    assert len(starts) == 12 - lines  # every point but the first of each line
    assert all(new < old for old, new in starts)  # downwards in C
    cold = SpanSearchCV(SVC(tol=TOL), grid, criterion="cv_error", extra_criteria=("loo_error", "span_rule"),
                        engine="sklearn").fit(X, y)
    for key in ("cv_error", "loo_error", "span_rule", "n_sv", "n_bounded"):
        np.testing.assert_array_equal(warm.cv_results_[key], cold.cv_results_[key], err_msg=key)
    monkeypatch.undo()
    one_gamma = {"C": grid["C"], "gamma": [0.5], "class_weight": grid["class_weight"]}
    a = SpanSearchCV(SVC(tol=TOL), one_gamma, criterion="span_bound", n_jobs=1).fit(X, y)
    b = SpanSearchCV(SVC(tol=TOL), one_gamma, criterion="span_bound", n_jobs=2).fit(X, y)
    for key in ("span_rule", "span_bound", "xi_alpha_bound"):
        np.testing.assert_array_equal(a.cv_results_[key], b.cv_results_[key])


def test_refit_is_a_plain_svc_equal_to_a_fresh_one(data):
    X, y, Xt, _ = data
    s = SpanSearchCV(SVC(tol=TOL), GRID).fit(X, y)
    assert type(s.best_estimator_) is SVC
    fresh = SVC(tol=TOL, **s.best_params_).fit(X, y)
    np.testing.assert_array_equal(s.predict(Xt), fresh.predict(Xt))
    np.testing.assert_allclose(s.decision_function(Xt), fresh.decision_function(Xt), atol=1e-9)
    again = pickle.loads(pickle.dumps(s.best_estimator_))
    np.testing.assert_array_equal(again.predict(Xt), fresh.predict(Xt))


def test_parallel_equals_serial(data):
    X, y, *_ = data
    a = SpanSearchCV(SVC(tol=TOL), GRID, n_jobs=1, criterion="span_bound").fit(X, y)
    b = SpanSearchCV(SVC(tol=TOL), GRID, n_jobs=2, criterion="span_bound").fit(X, y)
    for key in ("mean_test_score", "span_rule", "span_bound", "n_sv", "rank_test_score"):
        np.testing.assert_array_equal(a.cv_results_[key], b.cv_results_[key])
    assert a.best_params_ == b.best_params_


def test_pipeline_clone_and_default_grid(data):
    X, y, Xt, _ = data
    pipe = make_pipeline(StandardScaler(), SpanSearchCV(SVC(tol=TOL), GRID))
    pipe.fit(X * 100.0 + 3.0, y)
    direct = SpanSearchCV(SVC(tol=TOL), GRID).fit(StandardScaler().fit_transform(X * 100.0 + 3.0), y)
    assert pipe[-1].best_params_ == direct.best_params_
    assert pipe.predict(Xt * 100.0 + 3.0).shape == (len(Xt),)
    c = clone(pipe)
    assert c[-1].get_params()["param_grid"] == GRID and not hasattr(c[-1], "cv_results_")
    grid = gridpy_param_grid()
    assert len(grid["C"]) == 11 and len(grid["gamma"]) == 10
    assert grid["C"][0] == 2.0 ** -5 and grid["gamma"][0] == 2.0 ** 3 and grid["gamma"][-1] == 2.0 ** -15


def test_precomputed_kernel_equals_rbf(data):
    X, y, Xt, _ = data
    rbf = SpanSearchCV(SVC(tol=TOL, gamma=0.5), {"C": GRID["C"]}).fit(X, y)
    pre = SpanSearchCV(SVC(tol=TOL, kernel="precomputed"), {"C": GRID["C"]}).fit(ws.rbf_kernel(X, gamma=0.5), y)
    np.testing.assert_allclose(pre.cv_results_["mean_test_score"], rbf.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(pre.predict(ws.rbf_kernel(Xt, X, 0.5)), rbf.predict(Xt))


# ------------------------------------------------------------------------------ weighting schemes
def test_class_weights_match_libsvm_class_weights(data):
    X, y, *_ = data
    grid = {"C_plus": [1.0, 8.0], "C_minus": [0.5, 4.0], "gamma": [0.5]}
    s = SpanSearchCV(SVC(tol=TOL), grid).fit(X, y)
    K = ws.rbf_kernel(X, gamma=0.5)
    y_pm = np.where(y == 1, 1.0, -1.0)
    for i, p in enumerate(s.cv_results_["params"]):
        model = ws.fit_svm(K, y_pm, ws.class_weights(y_pm, p["C_plus"], p["C_minus"]), engine="libsvm", tol=TOL)
        assert s.cv_results_["span_rule"][i] == pytest.approx(ws.span_rule(model, K))
    best = s.best_params_
    assert s.best_estimator_.class_weight == {1: best["C_plus"], 0: best["C_minus"]}
    np.testing.assert_allclose(s.best_instance_weights_, np.where(y == 1, best["C_plus"], best["C_minus"]))


def test_sigmoid_weights_and_sample_weight(data):
    X, y, Xt, _ = data
    q = np.linspace(0.0, 1.0, len(y))
    sw = np.where(np.arange(len(y)) % 3 == 0, 2.0, 1.0)
    grid = {"C": [4.0], "gamma": [0.5], "sigmoid_A": [5.0, 20.0], "sigmoid_B": [0.5]}
    s = SpanSearchCV(SVC(tol=TOL), grid).fit(X, y, sample_weight=sw, scores=q)
    K = ws.rbf_kernel(X, gamma=0.5)
    y_pm = np.where(y == 1, 1.0, -1.0)
    for i, p in enumerate(s.cv_results_["params"]):
        C_i = ws.sigmoid_weights(q, p["sigmoid_A"], 0.5, 4.0) * sw
        model = ws.fit_svm(K, y_pm, C_i, tol=TOL)
        assert s.cv_results_["span_rule"][i] == pytest.approx(ws.span_rule(model, K))
    C_best = ws.sigmoid_weights(q, s.best_params_["sigmoid_A"], 0.5, 4.0) * sw
    np.testing.assert_allclose(s.best_instance_weights_, C_best)
    fresh = SVC(tol=TOL, C=4.0, gamma=0.5).fit(X, y, sample_weight=C_best / 4.0)
    np.testing.assert_allclose(s.decision_function(Xt), fresh.decision_function(Xt), atol=1e-9)
    with pytest.raises(ValueError, match="importance scores"):
        SpanSearchCV(SVC(), grid).fit(X, y)


def test_nadaraya_watson_by_hand():
    X = np.array([[0.0], [1.0], [3.0]])
    y = np.array([1.0, -1.0, 1.0])
    h = 1.0
    w = lambda a, b: np.exp(-((a - b) ** 2) / (2 * h * h))  # noqa: E731
    eta0 = (w(0, 1) * -1 + w(0, 3) * 1) / (w(0, 1) + w(0, 3))
    eta1 = (w(1, 0) + w(1, 3)) / (w(1, 0) + w(1, 3))
    eta2 = (w(3, 0) - w(3, 1)) / (w(3, 0) + w(3, 1))
    p = nadaraya_watson_label_probability(X, y, h)
    np.testing.assert_allclose(p, [(1 + eta0) / 2, (1 - eta1) / 2, (1 + eta2) / 2])
    np.testing.assert_allclose(nadaraya_watson_weights(p, 2.0), np.maximum(p, 1e-3) ** 2)
    np.testing.assert_allclose(nadaraya_watson_weights(p, 0.0), 1.0)  # tau = 0 is the plain SVM
    with pytest.raises(ValueError, match="bandwidth"):
        nadaraya_watson_label_probability(X, y, 0.0)


def test_nw_grid_uses_nw_weights(data):
    X, y, *_ = data
    s = SpanSearchCV(SVC(tol=TOL), {"C": [2.0], "gamma": [0.5], "nw_bandwidth": [1.0], "nw_tau": [0.0, 1.0]})
    s.fit(X, y)
    y_pm = np.where(y == 1, 1.0, -1.0)
    p = nadaraya_watson_label_probability(X, y_pm, 1.0)
    K = ws.rbf_kernel(X, gamma=0.5)
    for i, tau in enumerate((0.0, 1.0)):
        model = ws.fit_svm(K, y_pm, 2.0 * np.maximum(p, 1e-3) ** tau, tol=TOL)
        assert s.cv_results_["span_rule"][i] == pytest.approx(ws.span_rule(model, K))


def test_bad_search_inputs(data):
    X, y, *_ = data
    with pytest.raises(ValueError, match="unknown param_grid key"):
        SpanSearchCV(param_grid={"C": [1.0], "shrinking": [False]}).fit(X, y)
    with pytest.raises(ValueError, match="go together"):
        SpanSearchCV(param_grid={"C_plus": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="held-out"):
        SpanSearchCV(param_grid=GRID, tie_rule="worst").fit(X, y)
    with pytest.raises(ValueError, match="SVC's kernels"):
        SpanSearchCV(SVC(kernel="cosine"), GRID).fit(X, y)
    three = np.arange(len(y)) % 3
    with pytest.raises(ValueError, match="with 3 classes give class_weight"):
        SpanSearchCV(param_grid={"C_plus": [1.0], "C_minus": [2.0]}).fit(X, three)
    with pytest.raises(ValueError, match="Nadaraya-Watson weighting is defined for two classes"):
        SpanSearchCV(param_grid={"C": [1.0], "nw_bandwidth": [1.0], "nw_tau": [1.0]}, error_score="raise").fit(X, three)
    with pytest.raises(ValueError, match="2 classes"):
        SpanSearchCV(param_grid=GRID).fit(X, y, sample_weight=(y == 1).astype(float))
    with pytest.raises(ValueError, match="Negative values"):
        SpanSearchCV(param_grid=GRID).fit(X, y, sample_weight=np.where(y == 1, 1.0, -1.0))


# ---------------------------------------------------------------------- the scorer, the tie rule
def test_span_scorer_in_plain_gridsearchcv(data):
    X, y, *_ = data
    ours = SpanSearchCV(SVC(tol=TOL), GRID).fit(X, y)
    theirs = GridSearchCV(SVC(tol=TOL), GRID, scoring=make_span_scorer(), cv=WholeTrainingSet()).fit(X, y)
    np.testing.assert_allclose(theirs.cv_results_["mean_test_score"], ours.cv_results_["mean_test_score"])
    assert theirs.best_params_ == ours.best_params_
    pipe = GridSearchCV(make_pipeline(StandardScaler(), SVC(tol=TOL)), {"svc__C": GRID["C"]},
                        scoring=make_span_scorer("span_bound"), cv=WholeTrainingSet()).fit(X, y)
    assert np.all(np.isfinite(pipe.cv_results_["mean_test_score"]))
    with pytest.raises(ValueError, match="own training set"):
        GridSearchCV(SVC(), {"C": [1.0]}, scoring=make_span_scorer(), cv=3, error_score="raise").fit(X, y)


def test_tie_rule_as_refit_callable():
    results = {"mean_test_score": np.array([0.9, 0.95, 0.95, 0.95, 0.8]),
               "test_error": np.array([0.0, 0.3, 0.1, 0.2, 0.0])}
    assert TieRule("worst")(results) == 1
    assert TieRule("best")(results) == 2
    assert TieRule("median")(results) == 3  # lower median of (0.3, 0.1, 0.2) = 0.2
    with pytest.raises(ValueError, match="not a cv_results_ column"):
        TieRule("worst", key="missing")(results)


# ---------------------------------------------------------------------------------- the command
def _write_libsvm(path, X, y, *, drop_feature=None):
    with open(path, "w") as fh:
        for row, label in zip(X, y):
            feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v != 0 and j != drop_feature)
            fh.write(f"{int(label):+d} {feats}\n")


@pytest.fixture(scope="module")
def files(tmp_path_factory, data):
    X, y, Xt, yt = data
    root = tmp_path_factory.mktemp("select")
    _write_libsvm(root / "train.txt", X, np.where(y == 1, 1, -1))
    _write_libsvm(root / "test.txt", Xt, np.where(yt == 1, 1, -1))
    return root


SMALL = ["-log2c", "-1,3,2", "-log2g", "-3,-1,2", "--tol", "1e-7"]


def test_select_end_to_end(files, tmp_path, capsys):
    model, pkl, png, out = tmp_path / "m.model", tmp_path / "m.pkl", tmp_path / "c.png", tmp_path / "g.out"
    rc = main(["select", str(files / "train.txt"), "--test", str(files / "test.txt"), *SMALL,
               "--model", str(model), "-png", str(png), "-out", str(out)])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    c, g, rate = (float(v) for v in lines[-2].split())  # grid.py's closing line, then the test accuracy
    assert lines[-1].startswith("Accuracy = ")
    d = read_data_file(files / "train.txt")
    ref = SpanSearchCV(SVC(tol=1e-7), {"C": [0.5, 2.0, 8.0], "gamma": [0.125, 0.5]}).fit(d.X, d.y)
    assert (c, g) == (ref.best_params_["C"], ref.best_params_["gamma"])
    assert rate == pytest.approx(100 * ref.best_score_, abs=1e-4)
    assert len(out.read_text().splitlines()) == 6 and out.read_text().startswith("log2c=-1 log2g=-3 rate=")
    assert png.read_bytes()[:4] == b"\x89PNG"
    from libsvm import svmutil

    t = read_data_file(files / "test.txt", n_features=d.X.shape[1])
    pred, *_ = svmutil.svm_predict(t.y, t.X, svmutil.svm_load_model(str(model)), "-q")
    np.testing.assert_array_equal(np.asarray(pred), ref.predict(t.X))
    assert main(["select", str(files / "train.txt"), *SMALL, "--model", str(pkl), "-png", "null",
                 "-out", "null", "--quiet"]) == 0
    np.testing.assert_array_equal(pickle.loads(pkl.read_bytes()).predict(t.X), ref.predict(t.X))


def test_select_reads_csv_with_a_named_label_column(files, tmp_path, capsys):
    d = read_data_file(files / "train.txt")
    X = d.X.toarray()
    csv = tmp_path / "train.csv"
    csv.write_text("f1,f2,f3,f4,f5,label\n" + "".join(
        ",".join(f"{v:.6g}" for v in row) + f",{int(lab)}\n" for row, lab in zip(X, d.y)))
    assert main(["select", str(csv), "--label-column", "label", *SMALL, "-png", "null", "-out", "null",
                 "--quiet"]) == 0
    csv_best = capsys.readouterr().out.strip().splitlines()[-1]
    assert main(["select", str(files / "train.txt"), *SMALL, "-png", "null", "-out", "null", "--quiet"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == csv_best


@pytest.mark.parametrize("content, message", [
    ("+1 1:0.5 2:0.1\n-1 1:0.2 2:x\n", "bad.txt: not LIBSVM text, line 2: '-1 1:0.2 2:x': could not convert"),
    ("+1 1:0.5 2:0.1\n-1 2:0.2 1:0.3\n", "bad.txt: not LIBSVM text, line 2: '-1 2:0.2 1:0.3': Feature indices"),
    ("+1 1:0.5\nabc 1:0.2\n", "bad.txt: not LIBSVM text, line 2: 'abc 1:0.2': could not convert"),
    ("+1 1:0.5\n-1 0:0.2\n", "bad.txt: not LIBSVM text, line 2: '-1 0:0.2': Invalid index 0"),
    ("+1 1:0.5\n\n-1 1:inf\n", "bad.txt: not LIBSVM text, line 3: '-1 1:inf': a label or value is not finite"),
    ("+1 1:0.5\n+1 1:0.2\n+1 1:0.7\n", "1 class label"),
    ("", "no data lines"),
    ("# only a comment\n\n", "no data lines"),
])
def test_select_rejects_bad_files(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.txt"
    bad.write_text(content)
    assert main(["select", str(bad), *SMALL, "-png", "null", "-out", "null", "--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_select_rejects_a_missing_file(tmp_path, capsys):
    assert main(["select", str(tmp_path / "absent.txt"), *SMALL, "-png", "null", "-out", "null", "--quiet"]) == 2
    assert "absent.txt: no such file" in capsys.readouterr().err


def test_select_rejects_test_only_features_and_bad_weights(files, tmp_path, capsys, data):
    X, y, Xt, yt = data
    _write_libsvm(tmp_path / "train4.txt", X, np.where(y == 1, 1, -1), drop_feature=4)
    args = [*SMALL, "-png", "null", "-out", "null", "--quiet"]
    assert main(["select", str(tmp_path / "train4.txt"), "--test", str(files / "test.txt"), *args]) == 2
    assert "features only in the test file" in capsys.readouterr().err
    assert main(["select", str(tmp_path / "train4.txt"), "--test", str(files / "test.txt"), "--n-features", "5",
                 *args]) == 0
    capsys.readouterr()
    for weight in ("1:0", "1:-2", "1:abc"):
        with pytest.raises(SystemExit):
            main(["select", str(files / "train.txt"), "-w", weight, *args])
        assert "WEIGHT > 0" in capsys.readouterr().err
    assert main(["select", str(files / "train.txt"), "-w", "7:2", *args]) == 2
    assert "labels are" in capsys.readouterr().err


def test_select_logs_every_point_to_mlflow(files, tmp_path, capsys):
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert main(["select", str(files / "train.txt"), *SMALL, "-png", "null", "-out", "null", "--quiet",
                 "--mlflow", uri]) == 0
    mlflow.set_tracking_uri(uri)
    runs = mlflow.search_runs(experiment_names=["wsvm-span-select"])
    points = runs[runs["tags.mlflow.parentRunId"].notna()]
    assert len(points) == 6 and points["metrics.span_rule"].notna().all()
    sha = hashlib.sha256((files / "train.txt").read_bytes()).hexdigest()
    assert (runs["tags.data_sha256"] == sha).all()  # the parent run and every point
    assert runs["tags.config_hash"].nunique() == 1 and runs["tags.code_version"].notna().all()


@pytest.mark.skipif(not has_fit_callbacks(), reason="this scikit-learn has no fit callbacks (1.9 on)")
def test_fit_callbacks_see_every_grid_point_and_the_refit(data):
    X, y, *_ = data

    class Recorder:
        def __init__(self):
            self.ended = []

        def setup(self, estimator, context):
            pass

        def teardown(self, estimator, context):
            pass

        def on_fit_task_begin(self, estimator, context, **kwargs):
            pass

        def on_fit_task_end(self, estimator, context, **kwargs):
            self.ended.append(context.task_name)

    rec = Recorder()
    SpanSearchCV(SVC(tol=TOL), GRID, n_jobs=2).set_callbacks(rec).fit(X, y)
    assert rec.ended.count("candidate-evaluation") == 6 and rec.ended.count("refit-with-best-params") == 1



# ------------------------------------------------------------------------- more than two classes
@pytest.fixture(scope="module")
def data3():
    """Three classes labelled 2, 5, 9 (not 0..k-1)."""
    X, y = make_classification(n_samples=240, n_features=5, n_informative=4, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, flip_y=0.05, random_state=4)
    y = np.array([2, 5, 9])[y]
    return X[:120], y[:120], X[120:], y[120:]


GRID3 = {"C": [0.5, 8.0], "gamma": [0.1, 0.5], "class_weight": [None, "balanced", {2: 2.0, 5: 1.0, 9: 0.5}]}


def test_multiclass_search_equals_brute_force_loop(data3):
    """Every grid point: the one-vs-one classifier on its own RBF kernel with C_p = C * class_weight[y_p]
    * sample_weight_p; its span-rule, exact LOO and K-fold CV (the folds of ``cv``) and its held-out
    error, which equals a fresh SVC's with those parameters."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.utils.class_weight import compute_class_weight

    from wsvm_span import multiclass as mc

    X, y, Xt, yt = data3
    sw = np.where(np.arange(len(y)) % 4 == 0, 2.0, 1.0)
    s = SpanSearchCV(SVC(tol=TOL), GRID3, extra_criteria=("loo_error", "cv_error"), cv=3).fit(
        X, y, sample_weight=sw, heldout=(Xt, yt))
    folds = np.empty(len(y), dtype=int)
    for k, (_, test) in enumerate(StratifiedKFold(3).split(X, y)):
        folds[test] = k
    classes = np.unique(y)
    for i, p in enumerate(s.cv_results_["params"]):
        K = ws.rbf_kernel(X, gamma=p["gamma"])
        C = p["C"] * compute_class_weight(p["class_weight"], classes=classes, y=y)[np.searchsorted(classes, y)] * sw
        model = mc.fit_one_vs_one(K, y, C, tol=TOL)
        assert s.cv_results_["span_rule"][i] == mc.span_rule(model, K)
        assert s.cv_results_["loo_error"][i] == mc.leave_one_out(model, K).loo_error
        assert s.cv_results_["cv_error"][i] == mc.kfold_cv_error(K, y, C, folds=folds, tol=TOL)
        assert s.cv_results_["xi_alpha_bound"][i] == mc.xi_alpha_bound(model, K)
        assert s.cv_results_["n_sv"][i] == model.support.size
        fresh = SVC(tol=TOL, **p).fit(X, y, sample_weight=sw)
        assert s.cv_results_["test_error"][i] == pytest.approx(np.mean(fresh.predict(Xt) != yt))
    rule = s.cv_results_["span_rule"]
    assert s.best_params_ == s.cv_results_["params"][int(np.argmin(rule))]
    assert s.best_score_ == pytest.approx(1 - rule.min())
    assert np.unique(rule).size > 1  # the grid discriminates


def test_multiclass_refit_is_the_model_the_criterion_scored(data3):
    """best_estimator_ is a plain SVC (refit on the features) whose predictions are the vote of the
    one-vs-one model that was scored (trained on the precomputed kernel)."""
    from wsvm_span import multiclass as mc
    from wsvm_span.model_selection._search import DEFAULT_TOL

    X, y, Xt, yt = data3
    s = SpanSearchCV(param_grid=GRID3, criterion="span_bound").fit(X, y)
    assert type(s.best_estimator_) is SVC and list(s.classes_) == [2, 5, 9]
    gamma = s.best_params_["gamma"]
    scored = mc.fit_one_vs_one(ws.rbf_kernel(X, gamma=gamma), y, s.best_instance_weights_, tol=DEFAULT_TOL)
    np.testing.assert_array_equal(s.predict(Xt), scored.predict(ws.rbf_kernel(Xt, X, gamma)))
    assert s.cv_results_["mean_test_score"] == pytest.approx(1 - s.cv_results_["span_bound"])
    assert np.all(np.isfinite(s.cv_results_["span_rule"]))  # the span bound's search reports the span-rule too


def test_multiclass_cv_results_have_the_binary_keys(data, data3):
    X, y, *_ = data
    X3, y3, *_ = data3
    grid = {"C": [1.0, 4.0], "gamma": [0.5]}
    for train_score in (False, True):
        two = SpanSearchCV(SVC(tol=TOL), grid, return_train_score=train_score).fit(X, y)
        three = SpanSearchCV(SVC(tol=TOL), grid, return_train_score=train_score).fit(X3, y3)
        assert set(three.cv_results_) == set(two.cv_results_)
    train_acc = three.cv_results_["mean_train_score"]
    for i, p in enumerate(three.cv_results_["params"]):
        assert train_acc[i] == pytest.approx(np.mean(SVC(tol=TOL, **p).fit(X3, y3).predict(X3) == y3))


def test_multiclass_select_end_to_end_with_scale(tmp_path, capsys, data3):
    """``select`` on a 3-class LIBSVM file with --scale: the range file is svm-scale's (min and max of
    the training file per feature, a constant feature left out), the search equals SpanSearchCV on the
    hand-scaled data, and the saved LIBSVM model (svm_load_model/svm_predict) predicts as the selected SVC
    on the same map of the test file."""
    from libsvm import svmutil

    X, y, Xt, yt = data3
    X, Xt = np.column_stack([X * 10 + 5, np.full(len(X), 3.0)]), np.column_stack([Xt * 10 + 5, np.full(len(Xt), 7.0)])
    _write_libsvm(tmp_path / "train3.txt", X, y)
    _write_libsvm(tmp_path / "test3.txt", Xt, yt)
    model_path = tmp_path / "m3.model"
    args = ["-log2c", "-1,3,2", "-log2g", "-3,-1,2", "--tol", "1e-7", "-png", "null", "-out", "null", "--quiet"]
    assert main(["select", str(tmp_path / "train3.txt"), "--test", str(tmp_path / "test3.txt"), "--scale",
                 "--model", str(model_path), *args]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    c, g, rate = (float(v) for v in lines[-2].split())

    d = read_data_file(tmp_path / "train3.txt")
    t = read_data_file(tmp_path / "test3.txt", n_features=d.X.shape[1])
    raw = d.X.toarray()
    low, high = raw.min(axis=0), raw.max(axis=0)
    expected = ["x", "0 1"] + [f"{j + 1} {low[j]:.17g} {high[j]:.17g}" for j in range(raw.shape[1]) if low[j] != high[j]]
    assert (tmp_path / "m3.model.range").read_text().splitlines() == expected
    assert len(expected) == 2 + 5  # the constant sixth feature is left out, as svm-scale does
    span = np.where(high > low, high - low, 1.0)
    scaled, scaled_t = (raw - low) / span * (high > low), (t.X.toarray() - low) / span * (high > low)
    ref = SpanSearchCV(SVC(tol=1e-7), {"C": [0.5, 2.0, 8.0], "gamma": [0.125, 0.5]}).fit(scaled, d.y)
    assert (c, g) == (ref.best_params_["C"], ref.best_params_["gamma"])
    assert rate == pytest.approx(100 * ref.best_score_, abs=1e-4)
    hits = int(np.sum(ref.predict(scaled_t) == t.y))
    assert lines[-1].startswith(f"Accuracy = {100.0 * hits / len(t.y):g}% ({hits}/{len(t.y)})")
    pred, *_ = svmutil.svm_predict(t.y, scaled_t, svmutil.svm_load_model(str(model_path)), "-q")
    np.testing.assert_array_equal(np.asarray(pred), ref.predict(scaled_t))
