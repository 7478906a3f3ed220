"""The randomized-sampling trainer (random-sampling.md) against full LIBSVM, the doubling rule
and the multiset draw against their definitions, the features entry point, and the span-rule
from SV kernel blocks against the span-rule on the full kernel and per-SV QPs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import make_problem
from scipy.special import comb

import wsvm_span as ws
from wsvm_span import engines
from wsvm_span.engines import FEATURE_ENGINE_NAMES, fit_features
from wsvm_span.engines.random_sampling import (
    SamplingError,
    draw_sample,
    effective_tol,
    fit_sampling,
    kkt_certificate,
    kkt_violations,
    update_weights,
)
from wsvm_span.model import decision_values, make_model_from_features
from wsvm_span.span import span_rule_from_svs

GAMMA = 0.5
#: Decision values of the sampled and the full LIBSVM model must agree to this. Both meet the
#: KKT conditions only to effective_tol (~1e-5 here: LIBSVM's float32 kernel cache); measured
#: agreement 2e-7..2e-4, the largest where two near-coincident margin points trade alpha (a
#: degenerate dual). Dropping one SV moves f by far more (checked in test_tolerance_discriminates).
DECISION_ATOL = 1e-3


def blobs(seed: int, l: int, weighting: str, sep: float = 3.0, d: int = 2):
    """Two Gaussian blobs a few SDs apart: few SVs (50-110 of l = 2000-3000), so the sample
    need not grow to all points. Returns X, y, C."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(l) < 0.4, 1.0, -1.0)
    X = rng.standard_normal((l, d)) + sep * y[:, None] * np.eye(d)[0]
    C = np.where(y > 0, 4.0, 1.0) if weighting == "class" else 2.0 * rng.lognormal(0.0, 0.7, l)
    return X, y, C


def all_bounded_problem(l: int = 400):
    """Balanced, overlapping classes with a tiny C: w ~ 0, every margin < 1, so every point is
    a bounded SV (alpha_i = C); the equality sum a_i y_i = 0 holds because the classes are
    balanced. Returns X, y, C."""
    rng = np.random.default_rng(4)
    y = np.repeat([1.0, -1.0], l // 2)
    X = rng.standard_normal((l, 3)) + 0.5 * y[:, None]
    return X, y, np.full(l, 1e-3)


def same_sets_up_to_margin_ties(a: ws.WeightedSVM, b: ws.WeightedSVM, tol: float):
    """SV / in-bound / bounded sets equal, except points on the margin (|y f - 1| <= tol in both
    models), whose alpha LIBSVM cannot pin down at that tolerance. Returns the excepted points."""
    on_margin = (np.abs(a.margins - 1.0) <= tol) & (np.abs(b.margins - 1.0) <= tol)
    excepted = set()
    for name in ("support", "inbound", "bounded"):
        diff = np.setxor1d(getattr(a, name), getattr(b, name))
        assert on_margin[diff].all(), f"{name} sets differ off the margin at {diff[~on_margin[diff]]}"
        excepted |= set(diff.tolist())
    return excepted


@pytest.mark.parametrize("weighting", ["class", "instance"])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_full_libsvm(weighting, seed):
    X, y, C = blobs(seed, 3000, weighting)
    X_test, _, _ = blobs(seed + 100, 500, weighting)
    model, record = fit_sampling(X, y, C, gamma=GAMMA, r0=128, seed=seed)
    # a real sampling run: weights were doubled and the final sample is a proper subset
    assert record.final_n_distinct < 3000
    assert any(r.outcome == "weights doubled" for r in record.rounds)
    full = ws.fit_svm(ws.rbf_kernel(X, None, GAMMA), y, C, tol=1e-7)
    tol = max(effective_tol(model, record.tol), effective_tol(full, record.tol))
    assert len(same_sets_up_to_margin_ties(model, full, tol)) <= 2
    f_full = full.decision_function(ws.rbf_kernel(X_test, X, GAMMA))
    np.testing.assert_allclose(decision_values(model, X, X_test, GAMMA), f_full, rtol=0, atol=DECISION_ATOL)
    np.testing.assert_allclose(model.decision_train, full.decision_train, rtol=0, atol=DECISION_ATOL)
    assert record.certificate.passed and record.certificate.n_points == 3000
    assert model.engine == "sampling" and model.alpha[np.setdiff1d(np.arange(3000), model.support)].max() == 0


def test_outside_points_held_to_the_samples_accuracy():
    """Nearly hard margin (C x 2500): the certificate's worst-case float32 allowance (1.2e-5) is
    20x the KKT accuracy full LIBSVM reaches (5.8e-7). The violator test holds the points outside
    the sample to the accuracy LIBSVM reached on the sample, so the result is as accurate as full
    LIBSVM; testing against the allowance instead stopped at violations of 1e-5 with f off by
    1.4e-4 (measured), which fails both checks below."""
    X, y, C = blobs(0, 3000, "class")
    C = 2500 * C
    model, record = fit_sampling(X, y, C, gamma=GAMMA, r0=128, seed=0)
    full = ws.fit_svm(ws.rbf_kernel(X, None, GAMMA), y, C)
    full_accuracy = kkt_violations(full).max()
    assert record.final_n_distinct < 3000 and record.certificate.tol_effective > 10 * full_accuracy
    for r in record.rounds:
        assert 0 <= r.sample_accuracy < record.certificate.tol_effective
    worst = kkt_violations(model).max()
    assert worst <= record.tol + record.rounds[-1].sample_accuracy
    assert worst <= 2 * full_accuracy + record.tol
    np.testing.assert_allclose(model.decision_train, full.decision_train, rtol=0, atol=1e-5)


def test_tolerance_discriminates():
    """Training without one bounded SV (a solution that misses one point) breaks DECISION_ATOL."""
    X, y, C = blobs(0, 3000, "class")
    full = ws.fit_svm(ws.rbf_kernel(X, None, GAMMA), y, C)
    keep = np.setdiff1d(np.arange(3000), full.bounded[:1])
    partial = ws.fit_svm(ws.rbf_kernel(X[keep], None, GAMMA), y[keep], C[keep])
    f_partial = partial.decision_function(ws.rbf_kernel(X, X[keep], GAMMA))
    assert np.abs(f_partial - full.decision_train).max() > 10 * DECISION_ATOL


@pytest.mark.parametrize("delta_rule", ["sample", "svs"])
def test_rounds_follow_the_doubling_rule(delta_rule):
    """Recompute every round's decision from its record: u(V) <= u(all)/(3 delta) doubles the
    weights on V (u(all) grows by u(V), r stays), otherwise r doubles (u(all) stays)."""
    X, y, C = blobs(0, 3000, "instance")
    model, record = fit_sampling(X, y, C, gamma=GAMMA, r0=64, seed=3, delta_rule=delta_rule)
    rounds = record.rounds
    assert rounds[0].sample_size == 64 and rounds[0].total_weight == 3000
    for cur, nxt in zip(rounds[:-1], rounds[1:]):
        delta = math.sqrt(cur.sample_size / 6) if delta_rule == "sample" else max(1, cur.n_sv)
        assert cur.delta == pytest.approx(delta)
        assert cur.n_violators > 0
        if cur.violator_weight <= cur.total_weight / (3 * delta):
            assert cur.outcome == "weights doubled"
            assert (nxt.total_weight, nxt.sample_size) == (cur.total_weight + cur.violator_weight, cur.sample_size)
        else:
            assert cur.outcome == "r doubled"
            assert (nxt.total_weight, nxt.sample_size) == (cur.total_weight, min(2 * cur.sample_size, 3000))
        assert cur.n_distinct <= cur.sample_size
    assert rounds[-1].outcome == "certified" and rounds[-1].n_violators == 0
    assert record.n_rounds == len(rounds) and record.certificate.passed


def test_update_weights_one_round():
    """A constructed round: l = 100, r = 24, so delta = sqrt(24/6) = 2 and the threshold is
    u(all)/6. u(all) = 100 + 20 = 120 (ten points carry weight 3): threshold 20."""
    u = np.ones(100, dtype=np.int64)
    u[:10] = 3
    heavy_and_light = np.array([0, 1, 2, 50, 51, 52, 53, 54, 55, 56, 57])  # 3*3 + 8 = 17
    new_u, r, doubled = update_weights(u, heavy_and_light, 24, 2.0)
    assert doubled and r == 24
    np.testing.assert_array_equal(new_u[heavy_and_light], 2 * u[heavy_and_light])
    np.testing.assert_array_equal(np.delete(new_u, heavy_and_light), np.delete(u, heavy_and_light))
    assert u[0] == 3  # the input is not modified
    at_threshold = np.arange(0, 7)  # 7 heavy points weigh 21 > 20: weights, not counts, decide
    new_u, r, doubled = update_weights(u, at_threshold, 24, 2.0)
    assert not doubled and r == 48
    np.testing.assert_array_equal(new_u, u)
    assert update_weights(u, at_threshold, 80, 2.0)[1] == 100  # r is capped at l
    assert update_weights(u, np.arange(10, 30), 24, 2.0)[2]  # 20 light points: exactly 20 <= 20


def test_draw_sample_is_a_multiset_draw():
    """Inclusion frequencies against the hypergeometric law: point i is missed with probability
    C(U - u_i, r) / C(U, r) when r copies are drawn without replacement from U copies."""
    u = np.array([1, 2, 5, 1, 3, 1, 1, 10], dtype=np.int64)
    U, r, n = int(u.sum()), 4, 4000
    rng = np.random.default_rng(0)
    hits = np.zeros(u.size)
    for _ in range(n):
        R = draw_sample(u, r, rng)
        assert np.all(np.diff(R) > 0) and 1 <= R.size <= r
        hits[R] += 1
    p = 1.0 - comb(U - u, r) / comb(U, r)
    assert np.all(np.abs(hits / n - p) <= 5 * np.sqrt(p * (1 - p) / n))
    np.testing.assert_array_equal(draw_sample(u, u.size, rng), np.arange(u.size))


def test_sample_grows_to_all_points():
    """C tiny on overlapping classes: every point is a bounded SV, so any point left out of
    the sample violates; the loop must end on the full set, with the LIBSVM solution."""
    X, y, C = all_bounded_problem()
    full = ws.fit_svm(ws.rbf_kernel(X, None, GAMMA), y, C)
    assert full.bounded.size == 400
    model, record = fit_sampling(X, y, C, gamma=GAMMA, r0=16, seed=1)
    assert record.rounds[-1].sample_size == 400 and record.final_n_distinct == 400
    assert all(r.n_violators > 0 for r in record.rounds[:-1])
    np.testing.assert_array_equal(model.bounded, full.bounded)
    np.testing.assert_allclose(model.decision_train, full.decision_train, atol=DECISION_ATOL)


def test_round_cap_raises_with_the_record():
    X, y, C = blobs(0, 3000, "class")
    with pytest.raises(SamplingError, match=r"max_rounds=2 rounds") as err:
        fit_sampling(X, y, C, gamma=GAMMA, r0=64, max_rounds=2)
    assert err.value.record.n_rounds == 2 and err.value.record.certificate is None
    assert err.value.model is not None


def test_single_class_sample_doubles_r():
    """A 2-point first draw from 1 positive among 300 holds one class: r doubles, no solve."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2))
    y = -np.ones(300)
    y[0] = 1.0
    X[0] += 3.0
    model, record = fit_sampling(X, y, 1.0, gamma=GAMMA, r0=2, seed=0)
    first = record.rounds[0]
    assert first.outcome == "single class" and record.rounds[1].sample_size == 4
    assert record.certificate.passed


def test_certificate_detects_a_wrong_solution():
    X, y, C = blobs(1, 2000, "class")
    model, _ = fit_sampling(X, y, C, gamma=GAMMA, seed=0)
    cert = kkt_certificate(model, 1e-6)
    assert cert.passed and cert.max_zero <= cert.tol_effective
    # drop one SV's alpha and rebalance the equality with another of the same class
    alpha = model.alpha.copy()
    i = model.inbound[0]
    j = next(k for k in model.support if k != i and model.y[k] == model.y[i])
    alpha[j] += alpha[i]
    alpha[i] = 0.0
    broken = make_model_from_features(X, y, model.C, alpha, model.b, gamma=GAMMA, engine="test", tol=1e-6)
    assert not kkt_certificate(broken, 1e-6).passed


def test_model_from_features_matches_make_model():
    p = make_problem(5, 300, "instance")
    full = ws.fit_svm(p.K, p.y, p.C)
    rebuilt = make_model_from_features(p.X, p.y, p.C, full.alpha, full.b, gamma=p.gamma, engine="x",
                                  tol=1e-7, block_rows=7)
    for name in ("support", "inbound", "bounded", "alpha"):
        np.testing.assert_array_equal(getattr(rebuilt, name), getattr(full, name))
    np.testing.assert_allclose(rebuilt.decision_train, full.decision_train, rtol=0, atol=1e-12)
    Z = np.random.default_rng(0).standard_normal((50, p.X.shape[1]))
    np.testing.assert_allclose(decision_values(full, p.X, Z, p.gamma, block_rows=9),
                               full.decision_function(ws.rbf_kernel(Z, p.X, p.gamma)), atol=1e-12)


@pytest.mark.parametrize("engine", FEATURE_ENGINE_NAMES)
def test_fit_features_engines_agree(engine):
    X, y, C = blobs(2, 1500, "class")
    reference = ws.fit_svm(ws.rbf_kernel(X, None, GAMMA), y, C)
    model = fit_features(X, y, C, gamma=GAMMA, engine=engine)
    assert isinstance(model, ws.WeightedSVM) and model.n_train == 1500
    assert model.engine == ("sklearn" if engine == "auto" else engine)
    assert len(same_sets_up_to_margin_ties(model, reference, effective_tol(reference, 1e-6))) <= 2
    np.testing.assert_allclose(model.decision_train, reference.decision_train, atol=DECISION_ATOL)


def test_kernel_engines_from_features_equal_fit_svm():
    """The kernel engines' features route is fit_svm on the RBF kernel: the same solution exactly."""
    p = make_problem(6, 300, "class")
    for engine in ("sklearn", "libsvm"):
        a, b = fit_features(p.X, p.y, p.C, gamma=p.gamma, engine=engine), ws.fit_svm(p.K, p.y, p.C, engine=engine)
        np.testing.assert_array_equal(a.alpha, b.alpha)
        np.testing.assert_array_equal(a.decision_train, b.decision_train)


def test_engine_capabilities_and_bad_engines():
    X, y, C = blobs(2, 200, "instance")
    assert set(FEATURE_ENGINE_NAMES) - set(ws.ENGINE_NAMES) == {"sklearn-rbf", "sampling"}
    for name in ("sklearn-rbf", "sampling"):
        caps = engines.get_engine(name).capabilities
        assert caps.per_instance_weights and not caps.precomputed_kernel
        with pytest.raises(ValueError, match="trains from features only"):
            ws.fit_svm(ws.rbf_kernel(X, None, GAMMA), y, C, engine=name)
    with pytest.raises(ValueError, match="unknown engine 'svmlight'"):
        fit_features(X, y, C, gamma=GAMMA, engine="svmlight")
    with pytest.raises(ValueError, match="class weights only"):
        fit_features(X, y, C, gamma=GAMMA, engine="libsvm")
    with pytest.raises(ValueError, match="gamma must be a positive"):
        fit_features(X, y, C, gamma=-1.0, engine="sklearn")
    with pytest.raises(ValueError, match="cache_mb must be positive"):
        fit_features(X, y, C, gamma=GAMMA, engine="sklearn-rbf", cache_mb=0)
    for engine, option in (("sklearn", "cache_mb"), ("sklearn-rbf", "r0"), ("sampling", "cache_size")):
        with pytest.raises(TypeError, match=option):
            fit_features(X, y, C, gamma=GAMMA, engine=engine, **{option: 10})


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"X": np.full((10, 2), np.nan)}, "NaN or inf"),
        ({"X": np.zeros(10)}, "2-D array"),
        ({"y": np.r_[-np.ones(4), np.ones(5)]}, "9 labels but X has 10"),
        ({"y": np.r_[np.zeros(5), np.ones(5)]}, r"labels in \{-1, \+1\}"),
        ({"y": np.ones(10)}, "single class"),
        ({"C": -1.0}, "must be positive"),
        ({"C": np.ones(3)}, "vector of length 10"),
        ({"gamma": 0.0}, "gamma must be a positive"),
        ({"gamma": float("nan")}, "gamma must be a positive"),
        ({"r0": 1}, "r0 must be an integer >= 2"),
        ({"r0": 4.0}, "r0 must be an integer"),
        ({"r0": True}, "r0 must be an integer"),
        ({"tol": 0.0}, "tol must be a positive"),
        ({"inner_tol": 1e-5}, "inner_tol must be positive and below tol"),
        ({"max_rounds": 0}, "max_rounds must be an integer >= 1"),
        ({"block_rows": 0}, "block_rows must be an integer >= 1"),
        ({"cache_mb": 0}, "cache_mb must be positive"),
        ({"seed": -1}, "seed must be an integer >= 0"),
        ({"delta_rule": "sqrt"}, "delta_rule must be one of"),
    ],
)
def test_bad_input(kwargs, match):
    rng = np.random.default_rng(0)
    args = {"X": rng.standard_normal((10, 2)), "y": np.r_[-np.ones(5), np.ones(5)], "C": 1.0,
            "gamma": 0.5}
    args.update(kwargs)
    X, y, C = args.pop("X"), args.pop("y"), args.pop("C")
    with pytest.raises(ValueError, match=match):
        fit_sampling(X, y, C, **args)


@pytest.mark.parametrize("weighting", ["class", "instance", "imbalanced"])
def test_span_rule_from_svs_equals_full_kernel(weighting):
    p = make_problem(7, 400, weighting)
    model = ws.fit_svm(p.K, p.y, p.C)
    assert model.inbound.size > 1 and model.bounded.size > 3
    expected = ws.span_rule(model, p.K)
    for block_rows in (None, 3):  # 3: bounded SVs go through many blocks
        assert span_rule_from_svs(model, p.X, p.gamma, block_rows=block_rows) == expected


def test_span_rule_from_svs_against_per_sv_qps():
    """Independent ground truth: one QP per SV (the original method) on the full kernel."""
    p = make_problem(8, 150, "class")
    model = ws.fit_svm(p.K, p.y, p.C)
    assert span_rule_from_svs(model, p.X, p.gamma) == ws.span_rule(model, p.K, method="qp")


def test_span_rule_from_svs_on_sampled_model_and_without_inbound():
    X, y, C = blobs(0, 2000, "class")
    model, _ = fit_sampling(X, y, C, gamma=GAMMA, seed=0)
    assert span_rule_from_svs(model, X, GAMMA) == ws.span_rule(model, ws.rbf_kernel(X, None, GAMMA))
    X, y, C = all_bounded_problem()
    all_bounded = ws.fit_svm(ws.rbf_kernel(X, None, GAMMA), y, C)
    assert all_bounded.inbound.size == 0
    assert span_rule_from_svs(all_bounded, X, GAMMA) == 1.0  # every SV counts as an error
    with pytest.raises(ValueError, match="X has 10 rows"):
        span_rule_from_svs(all_bounded, X[:10], GAMMA)
