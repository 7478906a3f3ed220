"""SVMPlusSearchCV against brute force: every grid point's criterion and the chosen point equal a loop that fits
SVMPlusClassifier at each point and computes the criterion directly (the exact LOO by retraining l times without
each point, K-fold CV over StratifiedKFold with the privileged features split alongside); its input errors;
pickling and clone."""
import json
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid, StratifiedKFold

import wsvm_span as ws
from wsvm_span.model_selection import SVMPlusSearchCV, TieRule, read_data_file
from wsvm_span.svm_plus import SVMPlusClassifier, loo_rule

#: numeric widths: "scale" would resolve on each retraining's own points, not the full sample's
GRID = {"C": [0.25, 4.0], "gamma_plus": [0.25, 4.0], "gamma": [0.5], "priv_gamma": [1.0]}
L = 30


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(L, 2))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=L) > 0, "yes", "no")
    X_priv = X[:, :1] + 0.2 * rng.normal(size=(L, 1))
    return X, y, X_priv


def _brute_force(criterion, X, y, X_priv) -> np.ndarray:
    """The criterion at every point of GRID (ParameterGrid's order), computed without the search."""
    values = []
    for params in ParameterGrid(GRID):
        if criterion == "loo_rule":
            model = SVMPlusClassifier(**params).fit(X, y, X_privileged=X_priv).model_
            K, K_priv = ws.rbf_kernel(X, gamma=params["gamma"]), ws.rbf_kernel(X_priv, gamma=params["priv_gamma"])
            values.append(loo_rule(model, K, K_priv).error)
        elif criterion == "loo_error":
            wrong = 0
            for p in range(L):
                keep = np.arange(L) != p
                model = SVMPlusClassifier(**params).fit(X[keep], y[keep], X_privileged=X_priv[keep])
                wrong += model.predict(X[p:p + 1])[0] != y[p]
            values.append(wrong / L)
        else:
            wrong = 0
            for train, test in StratifiedKFold(3).split(X, y):
                model = SVMPlusClassifier(**params).fit(X[train], y[train], X_privileged=X_priv[train])
                wrong += np.sum(model.predict(X[test]) != y[test])
            values.append(wrong / L)
    return np.array(values)


@pytest.mark.parametrize("criterion", ["loo_rule", "loo_error", "cv_error"])
def test_the_search_equals_a_brute_force_loop_over_the_grid(problem, criterion):
    X, y, X_priv = problem
    search = SVMPlusSearchCV(param_grid=GRID, criterion=criterion, cv=3).fit(X, y, X_privileged=X_priv)
    expected = _brute_force(criterion, X, y, X_priv)
    res = search.cv_results_
    assert res["params"] == list(ParameterGrid(GRID))
    np.testing.assert_allclose(res[criterion], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res["mean_test_score"], 1.0 - expected, rtol=0, atol=1e-12)
    assert search.best_index_ == int(np.argmin(expected))  # the first best in grid order
    assert search.best_params_ == res["params"][search.best_index_]
    assert search.best_score_ == pytest.approx(1.0 - expected.min())
    assert (res["mean_fit_time"] > 0).all() and search.n_splits_ == 1
    refit = SVMPlusClassifier(**search.best_params_).fit(X, y, X_privileged=X_priv)
    np.testing.assert_array_equal(search.predict(X), refit.predict(X))
    np.testing.assert_allclose(search.decision_function(X), refit.decision_function(X))


#: walks of four C's, two gamma_plus, two pairs of kernel widths
WALK_GRID = {"C": [100.0, 0.1, 10.0, 1.0], "gamma_plus": [0.5, 8.0], "gamma": [0.5, 2.0], "priv_gamma": [1.0]}


@pytest.mark.parametrize("criterion", ["loo_rule", "cv_error"])
def test_walks_along_C_give_the_cold_fits_models(problem, criterion, monkeypatch):
    """Every point after the first of its walk starts from the previous C's model (the spy sees it), yet each
    model's support vectors and criterion are those of a cold fit at that point alone, in any n_jobs."""
    X, y, X_priv = problem
    starts = []
    train = SVMPlusClassifier._train

    def spy(self, K, K_priv, labels, warm_start=None, warm_start_points=None):
        starts.append((self.gamma, self.gamma_plus, self.C, None if warm_start is None else warm_start.C))
        return train(self, K, K_priv, labels, warm_start, warm_start_points)

    monkeypatch.setattr(SVMPlusClassifier, "_train", spy)
    search = SVMPlusSearchCV(param_grid=WALK_GRID, criterion=criterion, cv=3, refit=False).fit(
        X, y, X_privileged=X_priv)
    monkeypatch.undo()
    walks = sorted(starts)
    assert len(walks) == 16
    for i, (gamma, gamma_plus, C, start) in enumerate(walks):
        first = i == 0 or walks[i - 1][:2] != (gamma, gamma_plus)
        assert start == (None if first else walks[i - 1][2])
    res = search.cv_results_
    folds = np.empty(L, dtype=int)
    for k, (_, test) in enumerate(StratifiedKFold(3).split(X, y)):
        folds[test] = k
    for params, value, n_sv in zip(res["params"], res[criterion], res["n_sv"], strict=True):
        cold = SVMPlusClassifier(**params).fit(X, y, X_privileged=X_priv)
        K, K_priv = ws.rbf_kernel(X, gamma=params["gamma"]), ws.rbf_kernel(X_priv, gamma=params["priv_gamma"])
        if criterion == "loo_rule":
            expected = loo_rule(cold.model_, K, K_priv).error
        else:
            labels = np.where(y == cold.classes_[1], 1.0, -1.0)
            wrong = 0
            for k in range(3):
                tr, te = folds != k, folds == k
                fold = ws.svm_plus.fit_svm_plus(K[np.ix_(tr, tr)], K_priv[np.ix_(tr, tr)], labels[tr],
                                                params["C"], params["gamma_plus"], solver="qp")
                wrong += np.sum(-labels[te] * fold.decision_function(K[np.ix_(te, tr)]) >= 0)
            expected = wrong / L
        assert value == pytest.approx(expected, abs=1e-12), params
        assert n_sv == cold.support_.size, params
    parallel = SVMPlusSearchCV(param_grid=WALK_GRID, criterion=criterion, cv=3, refit=False, n_jobs=2).fit(
        X, y, X_privileged=X_priv)
    np.testing.assert_array_equal(parallel.cv_results_[criterion], res[criterion])


@pytest.mark.parametrize("rule, chosen", [("worst", 2), ("best", 1)])
def test_the_tie_rule_ranks_ties_by_the_heldout_error(problem, rule, chosen):
    X, y, X_priv = problem
    rng = np.random.default_rng(4)
    X_held = rng.normal(size=(200, 2))
    heldout = (X_held, np.where(X_held[:, 0] + 0.7 * rng.normal(size=200) > 0, "yes", "no"))
    search = SVMPlusSearchCV(param_grid=GRID, tie_rule=rule).fit(X, y, X_privileged=X_priv, heldout=heldout)
    res = search.cv_results_
    expected = [np.mean(SVMPlusClassifier(**p).fit(X, y, X_privileged=X_priv).predict(heldout[0]) != heldout[1])
                for p in res["params"]]
    np.testing.assert_allclose(res["test_error"], expected)
    # points 1 and 2 tie at the best LOO rule (13/30) with held-out errors 0.29 and 0.305
    np.testing.assert_array_equal(TieRule(rule).tied(res), [1, 2])
    assert search.best_index_ == chosen
    with pytest.raises(ValueError, match="heldout"):
        SVMPlusSearchCV(param_grid=GRID, tie_rule="worst").fit(X, y, X_privileged=X_priv)


@pytest.mark.parametrize("change, message", [
    (lambda X, y, Xp: (X, y, Xp[:-1]), "one row per training point"),
    (lambda X, y, Xp: (X, y, None), "needs X_privileged"),
    (lambda X, y, Xp: (np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), y, Xp), "NaN"),
    (lambda X, y, Xp: (X, y, np.full_like(Xp, np.nan)), "NaN"),
    (lambda X, y, Xp: (X, np.full(y.shape, "yes"), Xp), "exactly two classes"),
    (lambda X, y, Xp: (X, np.arange(y.size) % 3, Xp), "exactly two classes"),
])
def test_bad_input_is_one_clear_error(problem, change, message):
    X, y, X_priv = change(*problem)
    with pytest.raises(ValueError, match=message):
        SVMPlusSearchCV(param_grid=GRID).fit(X, y, X_privileged=X_priv)


@pytest.mark.parametrize("kwargs, message", [
    ({"param_grid": {"C": [1.0], "kernel": ["linear"]}}, "unknown param_grid key"),
    ({"criterion": "span_rule"}, "criterion"),
    ({"estimator": ws.svm_plus.SVMPlusClassifier(priv_kernel="precomputed"), "criterion": "cv_error"},
     "precomputed"),
])
def test_bad_settings_are_refused(problem, kwargs, message):
    with pytest.raises(ValueError, match=message):
        SVMPlusSearchCV(**{"param_grid": GRID, **kwargs}).fit(*problem[:2], X_privileged=problem[2])


def test_it_pickles_and_clones(problem):
    X, y, X_priv = problem
    search = SVMPlusSearchCV(SVMPlusClassifier(solver="qp"), GRID, criterion="loo_error", cv=3, tie_rule="best")
    twin = clone(search)
    assert twin.get_params()["criterion"] == "loo_error" and twin.estimator.solver == "qp"
    assert not hasattr(twin, "cv_results_")
    search = SVMPlusSearchCV(param_grid=GRID).fit(X, y, X_privileged=X_priv)
    restored = pickle.loads(pickle.dumps(search))
    assert restored.best_params_ == search.best_params_
    np.testing.assert_array_equal(restored.predict(X), search.predict(X))


# ------------------------------------------------------------------------------- wsvm-span select --privileged
def _select(*args, cwd):
    return subprocess.run([sys.executable, "-m", "wsvm_span", "select", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def file_pair(tmp_path_factory, problem):
    """train.txt (LIBSVM), its privileged features priv.csv (CSV, label column first) and test.txt."""
    X, y, X_priv = problem
    root = tmp_path_factory.mktemp("select_plus")
    labels = np.where(y == "yes", 1, -1)

    def libsvm(path, X, labels):
        path.write_text("".join(f"{lab:+d} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row)) + "\n"
                                for row, lab in zip(X, labels)))

    libsvm(root / "train.txt", X, labels)
    libsvm(root / "test.txt", X[::-1] + 0.3, labels[::-1])
    (root / "priv.csv").write_text("".join(f"{lab},{v[0]:.6g}\n" for lab, v in zip(labels, X_priv)))
    (root / "short.csv").write_text("".join(f"{lab},{v[0]:.6g}\n" for lab, v in zip(labels[:-1], X_priv)))
    return root


def test_select_privileged_end_to_end(file_pair, tmp_path):
    grid = ["-log2c", "-2,2,4", "-log2g", "-1,-1,1", "-log2gp", "-2,2,4", "-log2pg", "0,0,1"]
    done = _select(file_pair / "train.txt", "--privileged", file_pair / "priv.csv", *grid, "--test",
                   file_pair / "test.txt", "--model", tmp_path / "m.pkl", "-out", tmp_path / "g.out", "--quiet",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 4 + 1 + 1 and all(line.startswith("[loo_rule] ") for line in lines[:4])
    assert lines[-1].startswith("Accuracy = ")
    train = read_data_file(file_pair / "train.txt")
    priv = read_data_file(file_pair / "priv.csv")
    ref = SVMPlusSearchCV(param_grid={"C": [0.25, 4.0], "gamma": [0.5], "gamma_plus": [0.25, 4.0],
                                      "priv_gamma": [1.0]}).fit(train.X.toarray(), train.y,
                                                                X_privileged=priv.X.toarray())
    *chosen, rate = (float(v) for v in lines[-2].split())  # c g gamma_plus priv_gamma rate
    p = ref.best_params_
    assert chosen == [p["C"], p["gamma"], p["gamma_plus"], p["priv_gamma"]]
    assert rate == pytest.approx(100 * ref.best_score_, abs=1e-4)
    out = (tmp_path / "g.out").read_text().splitlines()
    assert len(out) == 4 and out[0].startswith("log2c=-2 log2g=-1 log2gp=-2 log2pg=0 rate=")
    model = pickle.loads((tmp_path / "m.pkl").read_bytes())
    assert isinstance(model, SVMPlusClassifier) and model.get_params()["C"] == p["C"]
    test = read_data_file(file_pair / "test.txt")
    np.testing.assert_array_equal(model.predict(test.X.toarray()), ref.predict(test.X.toarray()))
    saved = json.loads((tmp_path / "m.pkl.json").read_text())
    assert saved["params"] == p and saved["criterion"] == "loo_rule"
    assert saved["loo_rule"] == pytest.approx(1.0 - ref.best_score_)


@pytest.mark.parametrize("extra, message", [
    (["--privileged", "short.csv"], "the privileged file must have the training file's rows"),
    (["--privileged", "priv.csv", "-w", "1:2"], "cannot be combined with --privileged"),
    (["--privileged", "priv.csv", "--criterion", "span_rule"], "not one of SVM\\+'s"),
    (["--criterion", "loo_rule"], "give --privileged"),
    (["--privileged", "priv.csv", "--max-memory", "1"], "(?s)SVMPlusSearchCV would need about .* --max-memory MB"),
])
def test_select_privileged_refuses_bad_files_and_options(file_pair, extra, message):
    done = _select("train.txt", *extra, "-out", "null", "-png", "null", cwd=file_pair)
    assert done.returncode == 2 and re.search(message, done.stderr), done.stderr


def test_loo_criteria_read_the_kernels_above_the_size_trained_on_rows():
    """Above SMO_POLISH_MAX_L points the classifier trains on kernel rows and refuses loo; the search computes the
    two kernels for a LOO criterion instead, so every point is scored: by the LOO rule of the default route's model
    on those kernels (kept at tol above that size, not polished: its sets are the route's, so the oracle is that
    route's model, trained here outside the search)."""
    from wsvm_span.svm_plus import fit_svm_plus
    from wsvm_span.svm_plus.solver import SMO_POLISH_MAX_L

    l = SMO_POLISH_MAX_L + 20
    rng = np.random.default_rng(5)
    X = rng.normal(size=(l, 2))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=l) > 0, 1, 0)
    X_priv = X[:, :1] + 0.2 * rng.normal(size=(l, 1))
    grid = {"C": [1.0], "gamma_plus": [1.0], "gamma": [0.5], "priv_gamma": [1.0]}
    search = SVMPlusSearchCV(param_grid=grid, refit=False, error_score="raise").fit(X, y, X_privileged=X_priv)
    K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(X_priv, gamma=1.0)
    reference = fit_svm_plus(K, K_priv, np.where(y == 1, 1.0, -1.0), 1.0, 1.0)
    assert search.cv_results_["loo_rule"][0] == loo_rule(reference, K, K_priv).error


def test_on_rows_the_walks_and_folds_start_from_their_neighbours(monkeypatch):
    """Where the classifier trains on kernel rows (above SMO_POLISH_MAX_L points, lowered here to 60 so that a
    150-point problem's 100-point folds train on rows too) each point of a walk starts from the previous C's model
    and each CV fold from its point's model; at a tight tol the CV errors are those of cold fits of every fold."""
    from wsvm_span.svm_plus import solver as svm_plus_solver

    monkeypatch.setattr("wsvm_span.svm_plus.estimator.SMO_POLISH_MAX_L", 60)
    l = 150
    rng = np.random.default_rng(6)
    X = rng.normal(size=(l, 2))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=l) > 0, 1, 0)
    X_priv = X[:, :1] + 0.2 * rng.normal(size=(l, 1))
    grid = {"C": [2.0, 0.5], "gamma_plus": [1.0], "gamma": [0.5], "priv_gamma": [1.0]}
    template = SVMPlusClassifier(tol=1e-9)
    starts = []
    rows = svm_plus_solver.fit_svm_plus_rbf_rows

    def spy(X, X_priv, y, C, *args, warm_start=None, warm_start_points=None, **kwargs):
        starts.append((C, y.size, None if warm_start is None else (warm_start.C, warm_start.n_train)))
        return rows(X, X_priv, y, C, *args, warm_start=warm_start, warm_start_points=warm_start_points, **kwargs)

    monkeypatch.setattr("wsvm_span.svm_plus.estimator.fit_svm_plus_rbf_rows", spy)
    search = SVMPlusSearchCV(template, grid, criterion="cv_error", cv=3, refit=False, error_score="raise").fit(
        X, y, X_privileged=X_priv)
    # C = 0.5 on all points cold, its 3 folds from it, then C = 2 from C = 0.5, its folds from it
    assert [s[2] for s in starts] == [None, (0.5, l), (0.5, l), (0.5, l), (0.5, l), (2.0, l), (2.0, l), (2.0, l)]
    assert [s[1] for s in starts[1:4]] == [l - test.size for _, test in StratifiedKFold(3).split(X, y)]
    for params, value in zip(search.cv_results_["params"], search.cv_results_["cv_error"], strict=True):
        wrong = 0
        for train, test in StratifiedKFold(3).split(X, y):
            cold = clone(template).set_params(**params).fit(X[train], y[train], X_privileged=X_priv[train])
            assert cold.solver_ == "smo"  # on rows, not polished
            wrong += np.sum(cold.predict(X[test]) != y[test])
        assert value == wrong / l, params


# ------------------------------------------------------------------------------------------------------ memory
def test_a_search_over_its_memory_limit_is_refused_before_any_kernel(problem, monkeypatch):
    X, y, X_priv = problem

    def no_kernels(*args, **kwargs):
        raise AssertionError("a kernel was computed before the memory check")

    monkeypatch.setattr(SVMPlusClassifier, "_training_kernels", no_kernels)
    search = SVMPlusSearchCV(param_grid=GRID, max_memory=1)
    estimate = search.memory_estimate(X, y, X_privileged=X_priv)
    with pytest.raises(ws.model_selection.SearchMemoryError) as refused:
        search.fit(X, y, X_privileged=X_priv)
    message = str(refused.value)
    assert f"would need about {estimate.summary()}" in message and "max_memory=1.0 MB" in message
    assert "refused before computing any kernel" in message and "max_memory" in message


def test_the_estimate_names_what_each_setting_holds():
    from wsvm_span.model_selection._memory import DOUBLE, svm_plus_search_memory

    l, mb = 4000, 2**20

    def terms(**kwargs):
        return {t.name: t.nbytes for t in svm_plus_search_memory(l, 10, 1, **kwargs).search}

    # LOO criteria above the polish size: both l x l kernels and the LOO rule's system, no QP route
    rule = terms(criterion="loo_rule", qp_fallback=False)
    assert rule["the training kernels"] == 2 * DOUBLE * l * l
    assert rule["the LOO rule's system"] > 4 * DOUBLE * l * l
    # K-fold CV on rows: two row caches of cache_mb each (whole rows of l doubles), no l x l array anywhere
    rows = terms(criterion="cv_error", on_rows=True, cache_mb=50, qp_fallback=False)
    assert rows["the row caches"] == 2 * DOUBLE * l * (50 * mb // (DOUBLE * l))
    assert max(rows.values()) < DOUBLE * l * l
    # two threads over two pairs of kernel widths: two tasks' kernels at once
    assert terms(criterion="loo_rule", qp_fallback=False, n_jobs=2, n_pairs=2)["2 x the training kernels"] == \
        2 * rule["the training kernels"]
    # a precomputed privileged kernel is X_privileged itself: one kernel computed
    assert terms(criterion="loo_rule", qp_fallback=False, computed_kernels=1)["the training kernels"] == \
        DOUBLE * l * l


_SVM_PLUS_PEAK = """
import json, sys
import numpy as np
from threadpoolctl import threadpool_limits
from wsvm_span.engines.measure import peak_rss_reset, peak_rss_since
from wsvm_span.model_selection import SVMPlusSearchCV

l, criterion = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
X = rng.normal(size=(l, 10))
y = np.where(X[:, 0] + 0.7 * rng.normal(size=l) > 0, 1, 0)
X_priv = X[:, :2] + 0.3 * rng.normal(size=(l, 2))
search = SVMPlusSearchCV(param_grid={"C": [1.0]}, criterion=criterion, cv=3)
estimate = search.memory_estimate(X, y, X_privileged=X_priv).nbytes
base = peak_rss_reset()
with threadpool_limits(1):
    search.fit(X, y, X_privileged=X_priv)
print(json.dumps({"grown": peak_rss_since(base) * 2**20, "estimate": estimate}))
"""


@pytest.mark.parametrize("l, criterion", [(1200, "loo_rule"), (1200, "cv_error")])
def test_the_estimate_bounds_the_measured_peak(l, criterion):
    # above SMO_POLISH_MAX_L: the LOO rule on both l x l kernels, K-fold CV on rows; the estimate must hold the
    # high-water mark of the whole search (refit included) and not be loose by more than 3x there
    out = subprocess.run([sys.executable, "-c", _SVM_PLUS_PEAK, str(l), criterion], capture_output=True, text=True,
                         check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert 0 < got["grown"] <= got["estimate"] < 3 * got["grown"] + 64 * 2**20
