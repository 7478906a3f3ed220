"""The engine registry: one dispatch point, declared capabilities, and estimates that retrain with the
engine of the model they estimate."""

from __future__ import annotations

import numpy as np
import pytest

import wsvm_span as ws
from conftest import make_problem
from wsvm_span import engines
from wsvm_span.engines.sklearn_libsvm import SklearnLibsvm


def test_registry_names_and_capabilities():
    assert ws.ENGINE_NAMES[0] == "auto" and {"sklearn", "libsvm"} <= set(ws.ENGINE_NAMES)
    assert engines.get_engine("auto").name == "sklearn"
    assert engines.get_engine("sklearn").capabilities.per_instance_weights
    assert not engines.get_engine("libsvm").capabilities.per_instance_weights
    assert engines.get_engine("path").capabilities.solution_path
    assert not engines.get_engine("sklearn").capabilities.solution_path
    with pytest.raises(ValueError, match="unknown engine 'libsvn'; available: 'auto'.*'sklearn'.*'libsvm'"):
        engines.get_engine("libsvn")


def test_capabilities_are_checked_before_training():
    p = make_problem(0, 30, "instance")
    with pytest.raises(ValueError, match="supports class weights only.*use one of \\['sklearn', 'smo', 'path'\\]"):
        ws.fit_svm(p.K, p.y, p.C, engine="libsvm")


class RecordingEngine(SklearnLibsvm):
    """scikit-learn's LIBSVM under another name, counting its calls."""

    name = "recording"
    calls = 0

    def solve(self, K, y, C, tol):
        RecordingEngine.calls += 1
        return super().solve(K, y, C, tol)


@pytest.fixture
def recording(monkeypatch):
    monkeypatch.setitem(engines._ENGINES, "recording", RecordingEngine())
    RecordingEngine.calls = 0
    return RecordingEngine


def test_retraining_estimates_use_the_models_engine(recording):
    p = make_problem(3, 40, "class")
    model = ws.fit_svm(p.K, p.y, p.C, engine="recording", tol=1e-9)
    assert model.engine == "recording" and recording.calls == 1
    loo = ws.leave_one_out(model, p.K)
    assert recording.calls == 1 + model.support.size  # one retraining per SV, all by the model's engine
    reference = ws.leave_one_out(ws.fit_svm(p.K, p.y, p.C, tol=1e-9), p.K)
    assert loo.loo_error == reference.loo_error
    folds = ws.stratified_folds(p.y, 5, seed=0)
    ev = ws.evaluate_model(p.K, p.y, p.C, p.K[:5], p.y[:5], folds=folds, D=2.0, R2=1.0, engine="recording",
                           compute_loo=True, tol=1e-9)
    assert ev.engine == "recording" and ev.cv_folds == 5
    # the evaluation's training, its 5 CV folds and one retraining per SV
    assert recording.calls == 1 + model.support.size + 1 + 5 + ev.n_sv
    assert np.isfinite(ev.loo_error)


def test_per_class_test_errors_against_sklearn_predictions():
    """test_error_by_class and evaluate_model's per-class test errors equal the error rates, counted here per
    class, of scikit-learn's SVC on the same precomputed kernel; their shares of the test set weight test_error."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0.3, 1.0, -1.0)
    Xt = rng.normal(size=(300, 2))
    yt = np.where(Xt[:, 0] + 0.5 * rng.normal(size=300) > 0.8, 1.0, -1.0)  # unequal class shares
    K, K_test = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(Xt, X, gamma=0.5)
    f = SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(K, y).decision_function(K_test)
    wrong = yt * f <= 0
    expected = (wrong[yt == 1].mean(), wrong[yt == -1].mean())
    assert 0 < expected[0] != expected[1] > 0
    model = ws.fit_svm(K, y, C=2.0)
    np.testing.assert_allclose(ws.test_error_by_class(model, K_test, yt), expected, atol=0)
    ev = ws.evaluate_model(K, y, 2.0, K_test, yt, folds=ws.stratified_folds(y, 5, seed=0), D=2.0, R2=1.0)
    np.testing.assert_allclose((ev.test_error_positive, ev.test_error_negative), expected, atol=0)
    share = np.mean(yt == 1)
    assert ev.test_error == pytest.approx(share * expected[0] + (1 - share) * expected[1], abs=1e-15)
    # a class without held-out points has no error rate
    only_neg = yt == -1
    pos, neg = ws.test_error_by_class(model, K_test[only_neg], yt[only_neg])
    assert np.isnan(pos) and neg == pytest.approx(expected[1])
