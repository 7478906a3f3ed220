"""Bad input fails early with a clear ValueError."""
import numpy as np
import pytest

import wsvm_span as ws
from conftest import make_problem
from wsvm_span.solvers import qp


@pytest.fixture
def p():
    return make_problem(0, 30)


def test_shape_mismatch(p):
    with pytest.raises(ValueError, match="30 rows"):
        ws.fit_svm(p.K, p.y[:-1], p.C)
    with pytest.raises(ValueError, match="square"):
        ws.fit_svm(p.K[:, :-1], p.y, p.C)
    with pytest.raises(ValueError, match="length 30"):
        ws.fit_svm(p.K, p.y, p.C[:-2])


def test_labels(p):
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        ws.fit_svm(p.K, np.where(p.y > 0, 1.0, 0.0), p.C)
    with pytest.raises(ValueError, match="single class"):
        ws.fit_svm(p.K, np.ones(30), p.C)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_kernel(p, bad):
    K = p.K.copy()
    K[3, 4] = K[4, 3] = bad
    with pytest.raises(ValueError, match="NaN or inf"):
        ws.fit_svm(K, p.y, p.C)


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_non_positive_weights(p, bad):
    C = p.C.copy()
    C[5] = bad
    with pytest.raises(ValueError, match=r"positive.*C\[5\]"):
        ws.fit_svm(p.K, p.y, C)
    with pytest.raises(ValueError, match="positive"):
        ws.kfold_cv_error(p.K, p.y, C)


def test_non_symmetric_kernel(p):
    K = p.K.copy()
    K[0, 1] += 0.1
    with pytest.raises(ValueError, match="not symmetric"):
        ws.fit_svm(K, p.y, p.C)


def test_nan_features_and_bad_gamma():
    X = np.ones((4, 2))
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        ws.rbf_kernel(X, None, 1.0)
    with pytest.raises(ValueError, match="gamma"):
        ws.rbf_kernel(np.ones((3, 2)), None, 0.0)


def test_weighting_schemes_validate():
    with pytest.raises(ValueError, match="positive"):
        ws.class_weights(np.array([1.0, -1.0]), 1.0, 0.0)
    with pytest.raises(ValueError, match="positive"):
        ws.sigmoid_weights(np.array([0.5]), 1.0, 0.5, C=-1.0)


def test_engine_and_solver_names(p):
    with pytest.raises(ValueError, match="engine"):
        ws.fit_svm(p.K, p.y, p.C, engine="svmlight")
    with pytest.raises(ValueError, match="qp_solver"):
        qp.qp_solver_name("gurobi")


def test_test_block_shape(p):
    model = ws.fit_svm(p.K, p.y, p.C)
    with pytest.raises(ValueError, match=r"\(m, 30\)"):
        model.decision_function(np.ones((5, 29)))
