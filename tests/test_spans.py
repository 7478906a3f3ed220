"""Span-rule and span bound against independent ground truth.

Ground truths: brute-force leave-one-out (retraining LIBSVM without each SV, and without every point where
it is cheap), a general QP solver (Clarabel) for every S_p^2 with the box written in the test from
(alpha, C, y) (``span_reference``), a full QP for the enclosing ball, hand-solved cases.
"""
import numpy as np
import pytest

import span_reference as ref
import wsvm_span as ws
from conftest import make_problem
from wsvm_span.model import make_model
from wsvm_span.solvers import qp
from wsvm_span.span.geometry import affine_span_qp, bordered_inverse, box_span_qp

RANDOM_CASES = [
    (s, l, w) for s in range(8)
    for l, w in ((40, "class"), (120, "class"), (90, "instance"), (200, "instance"), (30, "imbalanced"), (60, "imbalanced"))
]


@pytest.fixture(scope="module")
def solved():
    """Trained models with their span analysis and exact LOO, shared by the tests below."""
    out = {}
    for seed, l, weighting in RANDOM_CASES:
        p = make_problem(seed, l, weighting)
        model = ws.fit_svm(p.K, p.y, p.C, tol=1e-10)
        spans = ws.analyse_spans(model, p.K, all_box_spans=True)
        loo = ws.leave_one_out(model, p.K)
        out[seed, l, weighting] = (p, model, spans, loo)
    return out


@pytest.mark.parametrize("case", RANDOM_CASES)
def test_span_rule_identity_per_sv(solved, case):
    """Theorem 2: y_p (f(x_p) - f^p(x_p)) = a_p S_p^2 for every SV whose LOO keeps the sets."""
    p, model, spans, loo = solved[case]
    sv = model.support
    lhs = model.y[sv] * (model.decision_train[sv] - loo.decision_loo)
    rhs = model.alpha[sv] * spans.span2_rule
    keep = loo.sets_unchanged
    # LIBSVM's margins are accurate to ~1e-8 x n C_max (single-precision kernel cache)
    tol = 1e-6 * max(1.0, p.C.max())
    assert np.all(np.abs(lhs[keep] - rhs[keep]) <= tol), np.abs(lhs[keep] - rhs[keep]).max()


def test_identity_checked_on_enough_svs(solved):
    checked = sum(int(loo.sets_unchanged.sum()) for *_, loo in solved.values())
    assert checked >= 200  # the identity test above is not vacuous


@pytest.mark.parametrize("case", RANDOM_CASES)
def test_span_rule_equals_loo_when_sets_do_not_change(solved, case):
    """Per SV: the span-rule's verdict is the exact LOO verdict when the premise holds."""
    p, model, spans, loo = solved[case]
    sv = model.support
    loo_err = -model.y[sv] * loo.decision_loo >= 0
    clear = loo.sets_unchanged & (np.abs(loo.decision_loo) > 1e-5 * max(1.0, p.C.max()))
    np.testing.assert_array_equal(spans.rule_errors[clear], loo_err[clear])
    if loo.sets_unchanged.all():
        assert spans.span_rule == pytest.approx(loo.loo_error)


@pytest.mark.parametrize("case", RANDOM_CASES)
def test_bounds_dominate_exact_loo(solved, case):
    p, model, spans, loo = solved[case]
    assert spans.span_bound >= loo.loo_error - 1e-12
    assert ws.xi_alpha_bound(model, p.K) >= loo.loo_error - 1e-12


#: the cases small enough to retrain without EVERY point (not only the SVs, as leave_one_out does)
BRUTE_FORCE_CASES = [c for c in RANDOM_CASES if c[1] <= 40 and c[0] < 4]


@pytest.mark.parametrize("case", BRUTE_FORCE_CASES)
def test_exact_loo_and_the_sv_count_bound_against_retraining_without_every_point(solved, case):
    """LOO by retraining without each of the l points (scikit-learn's SVC on the precomputed kernel, in this
    test): the library's leave_one_out (which retrains only without SVs) gives the same error, and every bound
    covers it; the SV-count bound holds because a point that is not an SV stays correct when left out."""
    from sklearn.svm import SVC

    p, model, spans, loo = solved[case]
    l = p.y.size
    wrong = np.zeros(l, dtype=bool)
    for i in range(l):
        rest = np.delete(np.arange(l), i)
        svc = SVC(C=1.0, kernel="precomputed", tol=1e-10).fit(p.K[np.ix_(rest, rest)], p.y[rest],
                                                              sample_weight=p.C[rest])
        wrong[i] = -p.y[i] * svc.decision_function(p.K[np.ix_([i], rest)])[0] >= 0
    assert loo.loo_error == wrong.sum() / l
    assert not wrong[np.setdiff1d(np.arange(l), model.support)].any()  # non-SVs are never LOO errors
    for bound in (ws.sv_count_bound(model), spans.span_bound, ws.xi_alpha_bound(model, p.K)):
        assert bound >= wrong.sum() / l - 1e-12


@pytest.mark.parametrize("case", RANDOM_CASES[::3])
def test_closed_form_equals_unconstrained_qp(solved, case):
    p, model, spans, _ = solved[case]
    for t, sv in enumerate(model.support):
        res = affine_span_qp(model, p.K, sv)
        if model.inbound.size <= 1 and sv in model.inbound:
            continue
        assert res.status == "optimal"
        assert spans.span2_rule[t] == pytest.approx(res.objective, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("case", RANDOM_CASES[::4])
def test_span_rule_qp_method_agrees(solved, case):
    p, model, spans, _ = solved[case]
    assert ws.span_rule(model, p.K, method="qp") == spans.span_rule == ws.span_rule(model, p.K)


@pytest.mark.parametrize("case", RANDOM_CASES[::2])
def test_box_spans_against_a_qp_written_in_the_test(solved, case):
    """Every box-constrained S_p^2 against Clarabel on the box written from (alpha, C, y) in the test
    (span_reference); Lambda_p empty exactly where Lemma 1, summed here, fails."""
    p, model, spans, _ = solved[case]
    a, C, y, M, B = model.alpha, model.C, model.y, model.inbound, model.bounded
    for j, sv in enumerate(M):
        status, value = ref.box_span2(p.K, a, C, y, M, sv)
        holds = ref.lemma1(a, C, y, M, B, sv)
        assert (status == "infeasible") == (not holds) == (not spans.lemma1[j]), (sv, status)
        if holds:
            # the box-constrained span equals the QP, and is >= the closed form
            assert spans.span2_box[j] == pytest.approx(value, rel=1e-6, abs=1e-8), sv
            pos = np.searchsorted(model.support, sv)
            assert spans.span2_box[j] >= spans.span2_rule[pos] - 1e-8
        else:
            assert np.isnan(spans.span2_box[j])


def test_random_cases_exercise_the_box(solved):
    """The test above is not vacuous: many spans have a box that binds (the closed form violates it) and some
    in-bound SVs an empty Lambda_p."""
    binding = sum(int((~spans.closed_form_feasible & spans.lemma1).sum()) for *_, spans, _ in solved.values())
    assert binding >= 100


def test_span_bound_recomputed_from_theorem_1(solved):
    """Theorem 1 assembled independently from QP spans (box written in the test) and a full enclosing-ball QP."""
    p, model, spans, _ = solved[(1, 120, "class")]
    a, C, y, M, B = model.alpha, model.C, model.y, model.inbound, model.bounded
    D = 2 * np.sqrt(full_enclosing_ball_radius2(p.K))

    def theorem1(size):
        return ref.theorem1(p.K, a, C, y, M, B, size)

    assert spans.span_bound == pytest.approx(theorem1(D), rel=1e-6)
    # the study's variant (issue 22): the radius D/2 in place of D, only where it is asked for
    assert spans.span_bound_radius == pytest.approx(theorem1(D / 2), rel=1e-6)
    assert ws.span_bound(model, p.K) == pytest.approx(theorem1(D), rel=1e-6)
    assert ws.span_bound(model, p.K, ball="radius") == pytest.approx(theorem1(D / 2), rel=1e-6)
    assert spans.span_bound_radius < spans.span_bound  # this model has terms where D/2 > 1/sqrt(C_p)
    with pytest.raises(ValueError, match="diameter"):
        ws.span_bound(model, p.K, ball="half")


def test_pruned_box_qps_give_the_same_bound(solved):
    for p, model, spans, _ in list(solved.values())[:10]:
        pruned = ws.analyse_spans(model, p.K, D=spans.D)
        assert pruned.S == pytest.approx(spans.S, rel=1e-9)
        assert pruned.span_bound == pytest.approx(spans.span_bound, rel=1e-9)
        assert pruned.n_qp <= spans.n_qp


def test_a_box_qp_the_solver_cannot_solve_gets_an_upper_bound(solved, monkeypatch):
    """Where the QP solver fails on a box-constrained span (Clarabel: DualInfeasible on an SV of a converted SVM+
    model with a weight of ~1e-9 C), the projected closed form's objective stands in: every such S_p^2 is at
    least the one the QP solves (the ground truth here, with the solver failing on purpose afterwards), so S
    and the span bound are upper bounds of theirs."""
    from wsvm_span.solvers.qp import QPResult
    from wsvm_span.span import estimates

    monkeypatch.setattr(estimates, "box_span_qp", lambda *a, **k: QPResult(None, float("nan"), "failed:DualInfeasible",
                                                                          "clarabel"))
    checked = 0
    for p, model, spans, _ in solved.values():
        if spans.n_qp == 0:
            continue
        failed = ws.analyse_spans(model, p.K, D=spans.D, all_box_spans=True)
        assert failed.n_qp_failed == failed.n_qp == spans.n_qp and spans.n_qp_failed == 0
        solved_by_qp = ~spans.closed_form_feasible & spans.lemma1
        assert np.all(failed.span2_box[solved_by_qp] >= spans.span2_box[solved_by_qp] * (1 - 1e-9) - 1e-12)
        # (the QP solves to a gap of ~1e-10: its values are that accurate)
        assert failed.S >= spans.S * (1 - 1e-9) and failed.span_bound >= spans.span_bound * (1 - 1e-9)
        checked += 1
    assert checked >= 3


def full_enclosing_ball_radius2(K):
    """The enclosing-ball QP on ALL points at once (no working set)."""
    l = K.shape[0]
    res = qp.solve_qp(2 * K, -np.diag(K), np.ones((1, l)), [1.0], lb=np.zeros(l), solver="clarabel")
    assert res.status == "optimal"
    return -res.objective


@pytest.mark.parametrize("seed", range(4))
def test_enclosing_ball_matches_full_qp(seed):
    p = make_problem(seed, 150, d=4)
    D = ws.enclosing_ball_diameter(p.K)
    assert D == pytest.approx(2 * np.sqrt(full_enclosing_ball_radius2(p.K)), rel=1e-6)
    assert D <= 2.0 + 1e-12


def test_enclosing_ball_hand_solved():
    """Linear kernel on 1-D points {-1, 0, 3}: the ball is [-1, 3], R = 2, D = 4."""
    x = np.array([[-1.0], [0.0], [3.0]])
    assert ws.enclosing_ball_diameter(x @ x.T) == pytest.approx(4.0, rel=1e-7)


def test_hand_solved_two_points():
    """x = -1 (y = -1), x = +1 (y = +1), linear kernel, C = 10.

    w = 1, b = 0, a = (1/2, 1/2), both in-bound; S_p^2 = |x_1 - x_2|^2 = 4; the span-rule
    gives 1/2 * 4 - 1 >= 0 for both (LOO leaves one class: both errors); Lambda_p = {lambda = 1}
    touches the box (a_q - a_p = 0); D = 2; bound = (2 * 2 * (1/2 + 1/2)) / 2 = 2.
    """
    x = np.array([[-1.0], [1.0]])
    y = np.array([-1.0, 1.0])
    K = x @ x.T
    model = ws.fit_svm(K, y, 10.0, tol=1e-12)
    np.testing.assert_allclose(model.alpha, [0.5, 0.5], atol=1e-9)
    assert abs(model.b) < 1e-9
    spans = ws.analyse_spans(model, K)
    np.testing.assert_allclose(spans.span2_rule, [4.0, 4.0], rtol=1e-9)
    assert spans.span_rule == 1.0
    assert spans.D == pytest.approx(2.0, rel=1e-7)
    assert spans.lemma1.all()
    assert spans.span_bound == pytest.approx(2.0, rel=1e-6)
    assert ws.loo_error(K, y, 10.0) == 1.0
    # Lemma 1 holds with equality: the box QP's feasible set is the single point lambda = 1
    for p in (0, 1):
        res = box_span_qp(model, K, p)
        assert res.status == "optimal" and res.objective == pytest.approx(4.0, rel=1e-7)


def test_hand_solved_span_where_a_lower_box_limit_binds():
    """Linear kernel on 1-D points x = (0, 1, 2), all labels +1, in-bound SVs with a = (1, 1, 0.5), C = (5, 5, 5)
    (a model built by hand: the span geometry reads only alpha, C, y and K).

    For p = 0: lambda_1 + lambda_2 = 1 and 0 <= a_i + a_p lambda_i <= C_i, i.e. lambda_1 in [-1, 4],
    lambda_2 in [-0.5, 4.5]. The combination is lambda_1 x_1 + lambda_2 x_2 = 1 + lambda_2, at squared
    distance (1 + lambda_2)^2 from x_0 = 0: without the box lambda_2 = -1 (S_0^2 = 0, the span-rule's value),
    with it the lower limit binds, lambda_2 = -0.5, lambda_1 = 1.5 and S_0^2 = 0.25.
    For p = 1: lambda_0 + lambda_2 = 1, combination 2 lambda_2, distance (1 - 2 lambda_2)^2: lambda_2 = 0.5 is
    inside [-1, 4] and lambda_0 = 0.5 inside [-1, 4]: S_1^2 = 0 = its closed form.
    For p = 2 (a_p = 0.5): lambda_0, lambda_1 in [-a_i/0.5, (5 - a_i)/0.5] = [-2, 8]; the combination lambda_1
    reaches x_2 = 2 with lambda_1 = 2, lambda_0 = -1, inside the box: S_2^2 = 0.
    The three points are affinely dependent (K_MM is singular: the closed form runs on a ridge). So S = 0.5, D = 2 (the ball [0, 2]) and the bound is (0.5 (2 * 1 + 2 * 1 + 2 * 0.5) + 0 + 0) / 3 = 5/6."""
    x = np.array([[0.0], [1.0], [2.0]])
    K = x @ x.T
    y = np.ones(3)
    C = np.full(3, 5.0)
    alpha = np.array([1.0, 1.0, 0.5])
    model = make_model(K, y, C, alpha, 0.0, engine="none", tol=1e-12)
    assert list(model.inbound) == [0, 1, 2] and model.bounded.size == 0
    spans = ws.analyse_spans(model, K, all_box_spans=True)
    np.testing.assert_allclose(spans.span2_rule, [0.0, 0.0, 0.0], atol=1e-9)
    assert not spans.closed_form_feasible[0] and spans.closed_form_feasible[1:].all()
    np.testing.assert_allclose(spans.span2_box, [0.25, 0.0, 0.0], atol=1e-9)
    assert ref.box_span2(K, alpha, C, y, model.inbound, 0) == ("optimal", pytest.approx(0.25, abs=1e-9))
    assert spans.S == pytest.approx(0.5, rel=1e-8) and spans.D == pytest.approx(2.0, rel=1e-7)
    assert spans.span_bound == pytest.approx(5 / 6, rel=1e-7)
    assert box_span_qp(model, K, 0).objective == pytest.approx(0.25, abs=1e-9)


def lemma1_failure_case():
    """Heavily weighted positives among many bounded negatives: a positive in-bound SV
    then has sum_{in-bound i != p, y_i = +1} C_i + sum_bounded y_i C_i < 0."""
    for seed in range(50):
        rng = np.random.default_rng(seed)
        l = 30
        y = np.where(rng.random(l) < 0.1, 1.0, -1.0)
        y[:2] = (1.0, -1.0)
        X = rng.standard_normal((l, 2)) + 0.3 * y[:, None]
        K = ws.rbf_kernel(X, None, 0.05)
        C = np.where(y > 0, 10.0, 1.0)
        model = ws.fit_svm(K, y, C, tol=1e-10)
        spans = ws.analyse_spans(model, K, all_box_spans=True)
        if spans.n_empty_lambda > 0:
            return K, y, C, model, spans
    raise AssertionError("no Lemma 1 failure found")


def test_constructed_lemma1_failure():
    K, y, C, model, spans = lemma1_failure_case()
    failing = model.inbound[~spans.lemma1]
    for p in failing:
        # Lemma 1's sum by hand, and the QP agrees that Lambda_p is empty
        others = model.inbound[model.inbound != p]
        total = C[others][y[others] == y[p]].sum() + y[p] * np.sum(y[model.bounded] * C[model.bounded])
        assert total < 0
        assert ref.box_span2(K, model.alpha, C, y, model.inbound, p)[0] == "infeasible"
    assert np.isnan(spans.span2_box[~spans.lemma1]).all()
    # Theorem 1 counts them in k
    ok = spans.lemma1
    S = np.sqrt(np.nanmax(spans.span2_box[ok])) if ok.any() else 0.0
    w = np.maximum(spans.D, 1 / np.sqrt(C[model.inbound[ok]]))
    expected = (S * np.sum(w * model.alpha[model.inbound[ok]]) + spans.n_empty_lambda + spans.n_bounded) / len(y)
    assert spans.span_bound == pytest.approx(expected)
    assert spans.span_bound >= ws.leave_one_out(model, K).loo_error


def test_no_inbound_sv_counts_every_sv():
    """Tiny equal weights on balanced classes: every SV is bounded, the span is undefined."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    y = np.repeat([1.0, -1.0], 10)
    K = ws.rbf_kernel(X, None, 0.5)
    model = ws.fit_svm(K, y, 1e-3, tol=1e-10)
    assert model.inbound.size == 0
    spans = ws.analyse_spans(model, K)
    assert spans.no_inbound
    assert spans.span_rule == ws.span_rule(model, K) == model.support.size / 20
    assert spans.span_bound == pytest.approx(model.support.size / 20)


def test_duplicate_points_give_zero_span():
    p = make_problem(4, 60, "class")
    model = ws.fit_svm(p.K, p.y, p.C, tol=1e-10)
    i = int(model.inbound[0])
    X = np.vstack([p.X, p.X[i]])
    y = np.append(p.y, p.y[i])
    C = np.append(p.C, p.C[i])
    K = ws.rbf_kernel(X, None, p.gamma)
    dup = ws.fit_svm(K, y, C, tol=1e-10)
    spans = ws.analyse_spans(dup, K)
    pair = [t for t, s in enumerate(dup.support) if s in (i, 60) and s in dup.inbound]
    assert len(pair) == 2  # both copies in-bound: K_MM is exactly singular
    assert spans.ridge == 0.0  # coincident points are merged, not regularised
    np.testing.assert_array_equal(spans.span2_rule[pair], 0.0)  # S_p = 0 is legitimate
    # every other S_p^2 still equals the general QP on the full (singular) problem
    for t, sv in enumerate(dup.support):
        if t not in pair:
            assert spans.span2_rule[t] == pytest.approx(
                affine_span_qp(dup, K, sv).objective, rel=1e-6, abs=1e-9)
    assert np.isfinite(spans.span_rule) and np.isfinite(spans.span_bound)
    assert spans.span_bound >= ws.leave_one_out(dup, K).loo_error


@pytest.mark.parametrize("l", [2, 3, 5])
def test_tiny_training_sets(l):
    """Against brute-force LOO: LIBSVM retrained on the raw features without each point."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(l)
    X = rng.standard_normal((l, 2))
    y = np.array([1.0, -1.0] + [1.0] * (l - 2))
    K = ws.rbf_kernel(X, None, 1.0)
    model = ws.fit_svm(K, y, 2.0, tol=1e-10)
    spans = ws.analyse_spans(model, K)
    brute = 0
    for i in range(l):
        rest = np.delete(np.arange(l), i)
        if np.all(y[rest] == y[rest][0]):
            brute += 1  # one class left: the reduced SVM cannot classify x_i
            continue
        svc = SVC(C=2.0, kernel="rbf", gamma=1.0, tol=1e-10).fit(X[rest], y[rest])
        brute += int(-y[i] * svc.decision_function(X[i:i + 1])[0] >= 0)
    assert ws.leave_one_out(model, K).loo_error == brute / l
    # the span-rule counted here: SVs with a_p S_p^2 - y_p f(x_p) >= 0, S_p^2 from span_reference (every SV
    # an error when no in-bound SV is left to span it)
    f = K @ (model.y * model.alpha) + model.b
    if model.inbound.size == 0:
        expected = model.support.size
    else:
        expected = sum(model.alpha[p] * ref.affine_span2(K, model.inbound, p) - y[p] * f[p] >= 0 for p in model.support)
    assert spans.span_rule == expected / l
    assert spans.span_bound >= brute / l


def test_near_zero_alpha():
    """An in-bound SV with a_p ~ 0 has a box of width ~C_i/a_p: the analysis must stay exact."""
    found = 0
    for seed in range(30):
        p = make_problem(seed, 80, "instance")
        model = ws.fit_svm(p.K, p.y, p.C, tol=1e-10)
        M = model.inbound
        if not np.any(model.alpha[M] < 1e-3 * model.C[M]):
            continue
        found += 1
        spans = ws.analyse_spans(model, p.K, all_box_spans=True)
        assert np.isfinite(spans.span_bound)
        assert spans.span_bound >= ws.leave_one_out(model, p.K).loo_error
        j = int(np.argmin(model.alpha[M] / model.C[M]))
        if spans.lemma1[j]:
            status, value = ref.box_span2(p.K, model.alpha, model.C, model.y, M, M[j])
            assert status == "optimal" and spans.span2_box[j] == pytest.approx(value, rel=1e-5, abs=1e-8)
    assert found >= 2


def test_random_cases_cover_lemma1_failures(solved):
    """The 'infeasible exactly when Lemma 1 fails' test sees both outcomes."""
    k = sum(spans.n_empty_lambda for _, _, spans, _ in solved.values())
    assert k >= 3


def test_bordered_inverse_routes_match_numpy_inverse():
    """Both representations of Kt^-1 (a triangular inverse of the Cholesky factor, Kt^-1 formed on
    demand; the symmetric-indefinite solve when K_MM is not positive definite) against numpy's inverse
    of the explicit bordered matrix: the diagonal, the bounded SVs' quadratic forms and Kt^-1 itself."""
    rng = np.random.default_rng(7)
    n = 60
    A = rng.standard_normal((n, n))
    indefinite = (A + A.T) / 2 + 5.0 * np.eye(n)  # symmetric, eigenvalues of both signs, no coincident rows
    assert np.linalg.eigvalsh(indefinite).min() < 0
    for K_MM, cholesky in ((ws.rbf_kernel(rng.random((n, 4)), None, 5.0), True), (indefinite, False)):
        ones = np.ones((n, 1))
        ref = np.linalg.inv(np.block([[K_MM, ones], [ones.T, np.zeros((1, 1))]]))
        inv = bordered_inverse(K_MM)
        assert (inv._W is not None) == cholesky and inv.ridge == 0.0 and inv.rep.size == n
        np.testing.assert_allclose(inv.diagonal(), np.diag(ref)[:n], rtol=1e-9)
        K_Rq = rng.random((n, 7))
        V = np.vstack([K_Rq, np.ones((1, 7))])
        np.testing.assert_allclose(inv.quadratic(K_Rq), np.einsum("ij,ij->j", V, ref @ V), rtol=1e-9)
        np.testing.assert_allclose(inv.inverse, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
