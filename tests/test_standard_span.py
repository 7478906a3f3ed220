"""The span bound of the standard SVM (every C_i = C; shared/spec/standard-svm-span.md) against
independent ground truth.

Ground truths: brute-force leave-one-out (retraining LIBSVM without each SV), a general QP solver
(Clarabel through solve_qp) for the box-constrained span problems and for the enclosing ball of the
in-bound SVs on all of them at once, hand-solved geometry (linear kernel on known points), and the
combinatorial form of Lemma 1 for equal weights written out here.
"""
import numpy as np
import pytest

import wsvm_span as ws
from conftest import make_problem
from wsvm_span.model import make_model
from wsvm_span.solvers import qp
from wsvm_span.span.geometry import box_span_qp

#: (seed, l, generator, log2 C): overlapping Gaussians (the study's generator), 10% positives in
#: strongly overlapping classes (where class weights make Lemma 1 fail), from tiny to large C
CASES = [
    (s, l, gen, log2_C)
    for s in range(6)
    for l, gen in ((40, "class"), (90, "class"), (30, "imbalanced"), (70, "imbalanced"))
    for log2_C in (-2.0, 3.0, 8.0)
]


def standard_problem(seed: int, l: int, generator: str, log2_C: float):
    """A problem of conftest's generator with every C_i = 2^log2_C."""
    p = make_problem(seed, l, generator)
    return p.K, p.y, 2.0 ** log2_C


@pytest.fixture(scope="module")
def solved():
    out = {}
    for case in CASES:
        K, y, C = standard_problem(*case)
        model = ws.fit_svm(K, y, C, tol=1e-10)
        spans = ws.analyse_spans(model, K, all_box_spans=True)
        out[case] = (K, model, spans)
    return out


def _separable_problem(seed: int, l: int = 60, d: int = 4):
    """Two Gaussian clouds 4 standard deviations apart, RBF gamma 0.3: separable in feature space (a
    huge C leaves no bounded SV), yet close enough for leave-one-out errors."""
    rng = np.random.default_rng(1000 + seed)
    y = np.where(np.arange(l) % 2 == 0, 1.0, -1.0)
    X = rng.standard_normal((l, d)) + 2.0 * y[:, None] * np.eye(d)[0]
    return ws.rbf_kernel(X, None, 0.3), y


# ------------------------------------------------------------------------------------ Lemma 1
@pytest.mark.parametrize("case", CASES)
def test_lemma1_never_fails_for_equal_weights(solved, case):
    """k = 0: with C_i = C every in-bound SV has a non-empty Lambda_p. Checked three ways: the count,
    the combinatorial condition (#in-bound of p's class but p) + #bounded of p's class >= #bounded of
    the other class, written out here, and the general QP solver finding every box-constrained span
    problem feasible."""
    K, model, spans = solved[case]
    assert spans.n_empty_lambda == 0
    y, M, B = model.y, model.inbound, model.bounded
    for p in M:
        same_inbound = np.sum(y[M] == y[p]) - 1
        same_bounded, other_bounded = np.sum(y[B] == y[p]), np.sum(y[B] != y[p])
        assert same_inbound + same_bounded >= other_bounded
        if M.size > 1:
            assert box_span_qp(model, K, p, solver="clarabel").status == "optimal"


def test_cases_cover_bounded_and_inbound_svs(solved):
    """The Lemma 1 test above is not vacuous: many models have bounded SVs of both classes."""
    both = sum(1 for _, m, _ in solved.values()
               if m.inbound.size >= 2 and len(np.unique(m.y[m.bounded])) == 2)
    assert both >= 20


def test_class_weights_do_make_lemma1_fail():
    """The same imbalanced problems with 10:1 class weights give k > 0: the count can detect a failure."""
    k = 0
    for seed in range(6):
        p = make_problem(seed, 30, "imbalanced")
        k += ws.analyse_spans(ws.fit_svm(p.K, p.y, p.C, tol=1e-10), p.K).n_empty_lambda
    assert k > 0


# ------------------------------------------------------------------------------------ S <= D_SV
@pytest.mark.parametrize("case", CASES)
def test_span_at_most_inbound_diameter(solved, case):
    """Every box-constrained span S_p, and so S, is at most D_SV, which is at most D."""
    K, model, spans = solved[case]
    if model.inbound.size < 2:
        pytest.skip("fewer than two in-bound SVs: no span")
    d_sv = ws.inbound_diameter(model, K)
    assert spans.S <= d_sv * (1 + 1e-9) + 1e-9
    box = spans.span2_box[np.isfinite(spans.span2_box)]
    assert np.all(np.sqrt(box) <= d_sv * (1 + 1e-9) + 1e-9)
    assert d_sv <= spans.D * (1 + 1e-9)


def test_cases_have_enough_inbound_svs(solved):
    assert sum(m.inbound.size >= 2 for _, m, _ in solved.values()) >= len(CASES) - 4


def _full_qp_diameter(K) -> float:
    """D of the points of K by ONE QP over all of them (no working set): R^2 = -min (b'Kb - diag(K)'b)."""
    n = K.shape[0]
    res = qp.solve_qp(2 * K, -np.diag(K), np.ones((1, n)), [1.0], lb=np.zeros(n), solver="clarabel")
    assert res.status == "optimal"
    return 2.0 * np.sqrt(-res.objective)


@pytest.mark.parametrize("case", CASES[::5])
def test_inbound_diameter_matches_full_qp(solved, case):
    K, model, _ = solved[case]
    M = model.inbound
    if M.size < 2:
        pytest.skip("fewer than two in-bound SVs")
    assert ws.inbound_diameter(model, K) == pytest.approx(_full_qp_diameter(K[np.ix_(M, M)]), rel=1e-6)


def _model_with_inbound(X, y, alpha, C):
    """A WeightedSVM with the given alphas (its in-bound SVs are where 0 < a_i < C), linear kernel."""
    K = X @ X.T
    return K, make_model(K, y, np.full(len(y), C), alpha, 0.0, engine="sklearn", tol=1e-7)


def test_inbound_diameter_hand_solved():
    """In-bound SVs at the vertices of an equilateral triangle of side 3: D_SV = 2 * 3 / sqrt(3). A
    bounded SV far away and a non-SV do not count (D of all five points is larger)."""
    s = 3.0
    X = np.array([[0.0, 0.0], [s, 0.0], [s / 2, s * np.sqrt(3) / 2], [40.0, 40.0], [-7.0, 1.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    K, model = _model_with_inbound(X, y, np.array([0.5, 0.7, 0.2, 1.0, 0.0]), C=1.0)
    np.testing.assert_array_equal(model.inbound, [0, 1, 2])
    np.testing.assert_array_equal(model.bounded, [3])
    assert ws.inbound_diameter(model, K) == pytest.approx(2 * s / np.sqrt(3), rel=1e-7)
    assert ws.enclosing_ball_diameter(K) > 50


def test_inbound_diameter_degenerate_sets():
    X = np.array([[0.0], [1.0], [2.0]])
    y = np.array([1.0, -1.0, 1.0])
    K, one = _model_with_inbound(X, y, np.array([0.5, 1.0, 0.0]), C=1.0)
    assert ws.inbound_diameter(one, K) == 0.0
    K, none = _model_with_inbound(X, y, np.array([1.0, 1.0, 0.0]), C=1.0)
    assert np.isnan(ws.inbound_diameter(none, K))
    with pytest.raises(ValueError, match="training kernel"):
        ws.inbound_diameter(one, K[:2, :2])


# ---------------------------------------------------------------------------- Theorem 1, standard
@pytest.mark.parametrize("case", CASES)
def test_standard_form_equals_weighted_form(solved, case):
    """With every C_i = C the standard form of Theorem 1 is the weighted one (k = 0, one C)."""
    K, model, spans = solved[case]
    standard = ws.span_bound_standard(model, spans=spans)
    assert standard == pytest.approx(spans.span_bound, rel=1e-12, abs=1e-15)
    assert ws.span_bound_standard(model, K) == pytest.approx(standard, rel=1e-9)


@pytest.fixture(scope="module")
def exact_loo(solved):
    return {case: ws.leave_one_out(model, K).loo_error for case, (K, model, _) in solved.items()}


@pytest.mark.parametrize("case", CASES)
def test_standard_bound_dominates_exact_loo(solved, exact_loo, case):
    _, model, spans = solved[case]
    assert ws.span_bound_standard(model, spans=spans) >= exact_loo[case] - 1e-12


def test_standard_bound_is_informative_somewhere(solved, exact_loo):
    """The domination test is not vacuous: the bound is below 1 (a real statement) on some models, and
    the exact LOO error is positive on most."""
    below_one = [c for c, (_, m, s) in solved.items() if ws.span_bound_standard(m, spans=s) < 1]
    assert len(below_one) >= 5
    assert sum(exact_loo[c] > 0 for c in below_one) >= 3


def test_standard_form_rejects_instance_weights():
    p = make_problem(0, 40, "class")
    model = ws.fit_svm(p.K, p.y, p.C)
    with pytest.raises(ValueError, match="every C_i equal"):
        ws.span_bound_standard(model, p.K)


def test_standard_form_accepts_equal_weight_vectors():
    K, y, C = standard_problem(1, 40, "class", 2.0)
    scalar = ws.fit_svm(K, y, C, tol=1e-10)
    vector = ws.fit_svm(K, y, np.full(len(y), C), tol=1e-10)
    assert ws.span_bound_standard(vector, K) == pytest.approx(ws.span_bound_standard(scalar, K), rel=1e-9)


def test_spans_of_another_model_are_rejected(solved):
    (K, model, _), (_, _, other) = solved[CASES[0]], solved[CASES[1]]
    with pytest.raises(ValueError, match="another model"):
        ws.span_bound_standard(model, spans=other)
    with pytest.raises(ValueError, match="training kernel K"):
        ws.span_bound_standard(model)


# ---------------------------------------------------------------------------- separable form
@pytest.mark.parametrize("seed", range(8))
def test_separable_form_dominates_exact_loo(seed):
    """Separable data, C = 1e6 (effectively infinite): no bounded SV, S D / (l rho^2) >= exact LOO,
    and it equals the standard form (max(D, 1/sqrt(C)) = D, m = 0)."""
    K, y = _separable_problem(seed)
    model = ws.fit_svm(K, y, 1e6, tol=1e-10)
    assert model.bounded.size == 0
    spans = ws.analyse_spans(model, K)
    separable = ws.span_bound_separable(model, spans=spans)
    assert separable == pytest.approx(spans.S * spans.D * model.alpha.sum() / len(y), rel=1e-12)
    assert separable == pytest.approx(ws.span_bound_standard(model, spans=spans), rel=1e-12)
    assert separable >= ws.leave_one_out(model, K).loo_error - 1e-12


def test_separable_form_is_informative():
    """On these separable problems the bound is a real statement (below 1) for most seeds, where the
    exact LOO error is positive (the domination test above is not vacuous)."""
    informative = 0
    for seed in range(8):
        K, y = _separable_problem(seed)
        model = ws.fit_svm(K, y, 1e6, tol=1e-10)
        informative += ws.span_bound_separable(model, K) < 1 and ws.leave_one_out(model, K).loo_error > 0
    assert informative >= 4


def test_separable_form_rejects_bounded_svs(solved):
    K, model, spans = solved[(0, 90, "class", -2.0)]
    assert model.bounded.size > 0
    with pytest.raises(ValueError, match="without bounded SVs"):
        ws.span_bound_separable(model, spans=spans)
