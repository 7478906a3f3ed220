"""Coincident in-bound SVs (issue 8, defect 1): duplicates make K_MM exactly singular; the closed form
merges them, and every member of a group must get S_p = 0 (a twin spans it), never inf and never a
wrong twin. Checked against Clarabel's QPs for groups of 2, 3 and 4 coincident points placed so that
the group labels are not contiguous, with equal and mixed labels; and on the real splice model where
the defect was found."""

from __future__ import annotations

import numpy as np
import pytest

import span_reference as ref
import wsvm_span as ws
from wsvm_span.model import make_model
from wsvm_span.span.geometry import affine_span_qp, unconstrained_span2

#: positions of the base points: groups of 2, 3 and 4 coincident points, interleaved with singletons
ROWS = [0, 1, 1, 2, 3, 4, 4, 4, 5, 6, 7, 7, 7, 7, 8, 9, 10, 11, 12, 13]
GROUPS = ([1, 2], [5, 6, 7], [10, 11, 12, 13])


def coincident_model(seed: int, labels: str):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((14, 2))[ROWS]
    l = len(ROWS)
    y = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    if labels == "equal":
        for g in GROUPS:
            y[g] = y[g[0]]
    else:  # every group holds both labels
        for g in GROUPS:
            y[g] = np.resize([1.0, -1.0], len(g))
    y[[0, 3]] = (1.0, -1.0)
    K = ws.rbf_kernel(X, None, 0.5)
    C = rng.uniform(1.0, 3.0, l)
    alpha = rng.uniform(0.1, 0.9, l) * C  # in-bound ...
    alpha[[3, 15]] = C[[3, 15]]  # ... except two bounded SVs
    alpha[9] = 0.0  # and one non-SV
    return make_model(K, y, C, alpha, 0.1, engine="none", tol=1e-9), K


@pytest.mark.parametrize("labels", ["equal", "mixed"])
@pytest.mark.parametrize("seed", range(3))
def test_unconstrained_spans_of_coincident_points_match_the_qp(seed, labels):
    model, K = coincident_model(seed, labels)
    s2 = unconstrained_span2(model, K)
    ref = np.array([affine_span_qp(model, K, p, solver="clarabel").objective for p in model.support])
    assert np.isfinite(s2).all()
    np.testing.assert_allclose(s2, ref, atol=1e-8, rtol=1e-7)
    for g in GROUPS:  # every member of a coincident in-bound group is spanned by its twins
        assert np.all(s2[np.searchsorted(model.support, g)] == 0.0)


@pytest.mark.parametrize("labels", ["equal", "mixed"])
@pytest.mark.parametrize("seed", range(3))
def test_box_constrained_spans_of_coincident_points_match_the_qp(seed, labels):
    model, K = coincident_model(seed, labels)
    spans = ws.analyse_spans(model, K, qp_solver="clarabel", all_box_spans=True)
    a, C, y, M, B = model.alpha, model.C, model.y, model.inbound, model.bounded
    checked = 0
    for j, p in enumerate(M):  # against the box written from (alpha, C, y) in span_reference
        status, value = ref.box_span2(K, a, C, y, M, p)
        assert (status == "optimal") == ref.lemma1(a, C, y, M, B, p) == spans.lemma1[j], p
        if status == "optimal":
            assert spans.span2_box[j] == pytest.approx(value, abs=1e-7, rel=1e-6), p
            checked += 1
    assert checked >= M.size // 2
    assert np.isfinite(spans.span_bound)


def test_splice_model_with_triplicate_inbound_svs(shared_data):
    """splice, log2 C+ = 2, log2 C- = 3 (study split, gamma = 1/d): in-bound SV 861 has two exact
    duplicates among the in-bound SVs; S_p^2 was inf and the span bound inf."""
    from wsvm_span.data import load_dataset

    split = load_dataset("splice", mirror=str(shared_data))
    K = ws.rbf_kernel(split.X_train, None, 1.0 / split.d)
    model = ws.fit_svm(K, split.y_train, ws.class_weights(split.y_train, 2.0**2, 2.0**3))
    assert 861 in model.inbound
    spans = ws.analyse_spans(model, K, qp_solver="clarabel", all_box_spans=True)
    assert np.isfinite(spans.span2_rule).all() and np.isfinite(spans.span_bound)
    t = np.searchsorted(model.support, 861)
    assert spans.span2_rule[t] == 0.0
    assert affine_span_qp(model, K, 861, solver="clarabel").objective < 1e-9
    j = np.searchsorted(model.inbound, 861)
    status, value = ref.box_span2(K, model.alpha, model.C, model.y, model.inbound, 861)
    assert status == "optimal" and value < 1e-9
    assert spans.span2_box[j] == pytest.approx(value, abs=1e-9)
