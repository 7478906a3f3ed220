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
