"""The compiled span-rule of small machines (``_native.span2_unconstrained``, behind ``unconstrained_span2``):
S_p^2 of every SV against Clarabel's QP over the affine hull (an independent ground truth), against LAPACK's
route (``bordered_inverse``) on the same models, read in place from a larger kernel, falling back where the
in-bound block is not positive definite, and its errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest

import wsvm_span as ws
from wsvm_span import _native
from wsvm_span import multiclass as mc
from wsvm_span.model import make_model
from wsvm_span.span import geometry
from wsvm_span.span.geometry import affine_span_qp, bordered_inverse, unconstrained_span2


def random_machine(seed: int, l: int = 30, duplicates: int = 0):
    """A weighted model with most SVs in-bound, some bounded, one non-SV; ``duplicates`` points repeated."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((l, 3))
    if duplicates:
        X[rng.choice(l, duplicates, replace=False)] = X[rng.choice(l, duplicates, replace=False)]
    y = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    K = ws.rbf_kernel(X, None, float(rng.choice([0.2, 1.0, 3.0])))
    C = rng.uniform(1.0, 3.0, l)
    alpha = rng.uniform(0.1, 0.9, l) * C
    bounded = rng.choice(l, l // 4, replace=False)
    alpha[bounded] = C[bounded]
    alpha[rng.integers(l)] = 0.0
    return make_model(K, y, C, alpha, 0.1, engine="none", tol=1e-9), K


def split_support(model):
    pos = np.searchsorted(model.support, model.inbound)
    others = np.setdiff1d(np.arange(model.support.size), pos)
    return pos, others


@pytest.mark.parametrize("duplicates", [0, 4])
@pytest.mark.parametrize("seed", range(4))
def test_compiled_spans_match_the_qp(seed, duplicates):
    model, K = random_machine(seed, duplicates=duplicates)
    pos, others = split_support(model)
    assert _native.span2_unconstrained(K, model.inbound, model.support[others], geometry.COINCIDENT_RTOL,
                                       geometry.MIN_RCOND) is not None  # the compiled route is the one tested
    s2 = unconstrained_span2(model, K)
    expected = np.array([affine_span_qp(model, K, p, solver="clarabel").objective for p in model.support])
    np.testing.assert_allclose(s2, expected, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("seed", range(30))
def test_compiled_spans_equal_lapacks_route(seed):
    l = 8 + 3 * seed  # n* from a handful up to NATIVE_SPAN_MAX_INBOUND and beyond it
    model, K = random_machine(100 + seed, l=l, duplicates=seed % 3)
    M = model.inbound
    compiled = unconstrained_span2(model, K)
    lapack_route = unconstrained_span2(model, K, bordered_inverse(K[np.ix_(M, M)]))
    pos, _ = split_support(model)  # the same coincident in-bound points, S_p = 0 exactly
    assert np.array_equal(compiled[pos] == 0.0, lapack_route[pos] == 0.0)
    np.testing.assert_allclose(compiled, lapack_route, rtol=1e-9, atol=1e-12)


def test_machine_rows_are_read_in_place():
    model, K = random_machine(7)
    rng = np.random.default_rng(7)
    L = 50
    rows = np.sort(rng.choice(L, model.alpha.size, replace=False))
    big = np.full((L, L), np.nan)  # any read outside the machine's rows would show as NaN
    big[np.ix_(rows, rows)] = K
    np.testing.assert_allclose(unconstrained_span2(model, big, rows=rows), unconstrained_span2(model, K),
                               rtol=1e-12, atol=1e-15)


def test_a_singular_inbound_block_takes_the_general_route():
    """A linear kernel on 2-d points: K_MM has rank <= 2 with ~20 in-bound SVs, so no Cholesky factor."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 2))
    K = X @ X.T
    model, _ = random_machine(3)
    model = make_model(K, model.y, model.C, model.alpha, 0.1, engine="none", tol=1e-9)
    pos, others = split_support(model)
    assert _native.span2_unconstrained(K, model.inbound, model.support[others], geometry.COINCIDENT_RTOL,
                                       geometry.MIN_RCOND) is None
    s2 = unconstrained_span2(model, K)
    M = model.inbound
    np.testing.assert_array_equal(s2, unconstrained_span2(model, K, bordered_inverse(K[np.ix_(M, M)])))
    expected = np.array([affine_span_qp(model, K, p, solver="clarabel").objective for p in model.support])
    # every point lies in the plane the others span (S_p = 0); the general route's ridge (geometry.RIDGES)
    # moves the bounded SVs' values by about ridge * ||lambda||^2, here up to ~5e-5 of max K_ii
    np.testing.assert_allclose(s2[pos], expected[pos], atol=1e-9)
    np.testing.assert_allclose(s2, expected, atol=1e-4 * np.max(np.diag(K)))


def test_bad_input_is_refused():
    model, K = random_machine(1)
    M, rtol, rcond = model.inbound, geometry.COINCIDENT_RTOL, geometry.MIN_RCOND
    with pytest.raises(ValueError, match="rows of K"):
        _native.span2_unconstrained(K, np.append(M, K.shape[0]), M[:0], rtol, rcond)
    with pytest.raises(ValueError, match="rows of K"):
        _native.span2_unconstrained(K, M, np.array([-1], dtype=np.int64), rtol, rcond)
    with pytest.raises(ValueError, match="at least one in-bound SV"):
        _native.span2_unconstrained(K, M[:0], M, rtol, rcond)
    with pytest.raises(ValueError, match="square"):
        _native.span2_unconstrained(np.ascontiguousarray(K[:-1]), M[:2], M[:0], rtol, rcond)


def test_multiclass_span_rule_is_the_same_without_the_compiled_span(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(90, 2)) + np.repeat([[0, 0], [1.5, 0], [0, 1.5]], 30, axis=0)
    labels = np.repeat(["a", "b", "c"], 30)
    K = ws.rbf_kernel(X, gamma=0.5)
    model = mc.fit_one_vs_one(K, labels, C=4.0)
    compiled = mc.span_rule_decisions(model, K)
    monkeypatch.setattr(geometry, "NATIVE_SPAN_MAX_INBOUND", -1)
    lapack_route = mc.span_rule_decisions(model, K)
    for (where, values), (where_ref, values_ref) in zip(compiled, lapack_route):
        np.testing.assert_array_equal(where, where_ref)
        np.testing.assert_allclose(values, values_ref, rtol=1e-9, atol=1e-12)
    assert mc.span_rule_predictions(model, K).tolist() == mc.loo_predictions(model, lapack_route).tolist()
