"""The one-vs-one classifier and its LOO estimates (multiclass.md) against independent routes.

Ground truths: scikit-learn's ``SVC`` trained on the raw features (LIBSVM's own RBF, class_weight and
sample_weight, its own decision_function and predict) and retrained without each point (brute-force
LOO) or without each fold (CV); each machine trained alone by the binary ``fit_svm`` on its kernel slice;
the binary estimates of the same machine; Theorem 2's premise checked by retraining.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC
from sklearn.utils.class_weight import compute_class_weight

import wsvm_span as ws
from wsvm_span import multiclass as mc
from wsvm_span.resampling import leave_one_out as binary_leave_one_out

TOL = 1e-10  # tight: the brute-force retraining must see the same solutions
#: LIBSVM's decision values agree across routes to ~1e-8 x n C_max (the binary tests' bound)
DECISION_ATOL = 1e-6


def problem(seed: int, n_classes: int, l: int, *, weights: str = "dict"):
    """Overlapping Gaussian classes with labels that are not 0..k-1, class weights (a dict or
    "balanced") and per-instance weights; C_p as SVC forms it (C * class_weight[y_p] * sample_weight_p)."""
    rng = np.random.default_rng(seed)
    labels = np.array([3, 7, 11, 20, 25][:n_classes])
    y = labels[np.arange(l) % n_classes]
    centres = rng.standard_normal((n_classes, 3)) * 1.5
    X = centres[np.searchsorted(labels, y)] + rng.standard_normal((l, 3))
    gamma = float(rng.choice([0.2, 0.5]))
    C = 2.0 ** rng.uniform(-1, 4)
    class_weight = ({int(c): float(w) for c, w in zip(labels, 2.0 ** rng.uniform(-1, 1, n_classes))}
                    if weights == "dict" else "balanced")
    sample_weight = rng.lognormal(0.0, 0.5, size=l)
    per_class = compute_class_weight(class_weight, classes=labels, y=y)
    C_p = C * per_class[np.searchsorted(labels, y)] * sample_weight
    return dict(X=X, y=y, gamma=gamma, C=C, class_weight=class_weight, sample_weight=sample_weight, C_p=C_p,
                K=ws.rbf_kernel(X, gamma=gamma))


def svc(p, idx=None) -> SVC:
    """SVC on the points idx (default all) with the problem's weights. "balanced" is resolved on ALL the
    training points and handed over as a dict: the weights of LOO and CV are those of the full problem
    (method.md), where SVC would recompute "balanced" from each subset."""
    idx = np.arange(len(p["y"])) if idx is None else idx
    labels = np.unique(p["y"])
    class_weight = dict(zip(labels.tolist(), compute_class_weight(p["class_weight"], classes=labels, y=p["y"])))
    return SVC(C=p["C"], gamma=p["gamma"], class_weight=class_weight, tol=TOL,
               decision_function_shape="ovo").fit(p["X"][idx], p["y"][idx], sample_weight=p["sample_weight"][idx])


CASES = [(0, 3, "dict"), (1, 4, "balanced"), (2, 3, "balanced"), (3, 4, "dict")]


@pytest.fixture(scope="module", params=CASES, ids=[f"s{s}-k{k}-{w}" for s, k, w in CASES])
def solved(request):
    seed, k, weights = request.param
    p = problem(seed, k, 12 * k, weights=weights)
    model = mc.fit_one_vs_one(p["K"], p["y"], p["C_p"], tol=TOL)
    return p, model


# ----------------------------------------------------------------------------------- the classifier
def test_decisions_and_vote_equal_svc(solved):
    p, model = solved
    ref = svc(p)
    np.testing.assert_array_equal(model.classes, ref.classes_)
    Z = np.random.default_rng(9).standard_normal((400, 3)) * 2.5
    K_rows = ws.rbf_kernel(Z, p["X"], p["gamma"])
    np.testing.assert_allclose(model.decision_function(K_rows), ref.decision_function(Z), atol=DECISION_ATOL)
    np.testing.assert_array_equal(model.predict(K_rows), ref.predict(Z))
    np.testing.assert_allclose(model.decision_train.T, ref.decision_function(p["X"]), atol=DECISION_ATOL)
    np.testing.assert_array_equal(model.support, np.sort(ref.support_))


def test_vote_breaks_ties_like_libsvm():
    """Cyclic votes (each class one vote) go to the class that comes first; a decision value of 0
    votes for the second class of its machine."""
    pairs = mc.machine_pairs(3)  # (0, 1), (0, 2), (1, 2)
    decisions = np.array([[1.0, -1.0, 0.0, 1.0],    # (0,1): 0, 1, 1 (f = 0), 0
                          [-1.0, 1.0, -1.0, -1.0],  # (0,2): 2, 0, 2, 2
                          [1.0, -1.0, 1.0, 1.0]])   # (1,2): 1, 2, 1, 1
    np.testing.assert_array_equal(mc.vote(decisions, pairs, 3), [0, 0, 1, 0])
    # the same rule inside a trained classifier: SVC on points where the votes tie
    p = problem(5, 3, 36)
    model = mc.fit_one_vs_one(p["K"], p["y"], p["C_p"], tol=TOL)
    Z = np.random.default_rng(1).standard_normal((3000, 3)) * 3
    F = model.decision_function(ws.rbf_kernel(Z, p["X"], p["gamma"]))
    wins = np.stack([np.sum(np.where(F > 0, model.pairs[:, 0], model.pairs[:, 1]) == c, axis=1) for c in range(3)])
    tied = np.all(wins == 1, axis=0)
    assert tied.sum() >= 5  # the tie rule is exercised, not vacuous
    np.testing.assert_array_equal(model.classes[mc.vote(F.T, model.pairs, 3)[tied]], svc(p).predict(Z[tied]))


def test_each_machine_is_the_binary_svm_on_its_slice(solved):
    p, model = solved
    for (i, j), idx, machine in zip(model.pairs, model.members, model.machines):
        np.testing.assert_array_equal(idx, np.flatnonzero(np.isin(p["y"], model.classes[[i, j]])))
        y = np.where(p["y"][idx] == model.classes[i], 1.0, -1.0)
        alone = ws.fit_svm(p["K"][np.ix_(idx, idx)], y, p["C_p"][idx], tol=TOL)
        np.testing.assert_allclose(machine.alpha, alone.alpha, atol=1e-6 * p["C_p"].max())
        np.testing.assert_allclose(machine.decision_train, alone.decision_train, atol=DECISION_ATOL)


def test_per_machine_engine_route_equals_one_call():
    """An engine without one-call multiclass training trains each machine alone: libsvm-official (class
    weights only) on its kernel slice, this project's SMO on its rows of K in place; the machines are the
    same."""
    p = problem(4, 3, 30)
    C = p["C"] * compute_class_weight(p["class_weight"], classes=np.unique(p["y"]), y=p["y"])[
        np.searchsorted(np.unique(p["y"]), p["y"])]
    one = mc.fit_one_vs_one(p["K"], p["y"], C, tol=TOL)
    each = mc.fit_one_vs_one(p["K"], p["y"], C, tol=TOL, engine="libsvm")
    assert each.engine == "libsvm" and one.engine == "sklearn"
    np.testing.assert_allclose(each.decision_train, one.decision_train, atol=DECISION_ATOL)
    rows = mc.fit_one_vs_one(p["K"], p["y"], p["C_p"], tol=TOL, engine="smo")  # rows of K read in place
    np.testing.assert_allclose(rows.decision_train, mc.fit_one_vs_one(p["K"], p["y"], p["C_p"], tol=TOL).decision_train,
                               atol=DECISION_ATOL)
    with pytest.raises(ValueError, match="class weights only"):
        mc.fit_one_vs_one(p["K"], p["y"], p["C_p"], engine="libsvm")


def test_warm_started_machines_equal_svc_along_a_row_of_c():
    """Each C of a row started from the previous C's machines (warm_from, SMO) is the classifier SVC
    trains from zero at that C: its decision values on the training points and on new points, and its
    support vectors; a model of other labels is refused as a start."""
    p = problem(6, 4, 48)
    Z = np.random.default_rng(3).standard_normal((300, 3)) * 2.5
    K_rows = ws.rbf_kernel(Z, p["X"], p["gamma"])
    previous = None
    for C in (0.25, 2.0, 16.0, 128.0):
        C_p = p["C_p"] * (C / p["C"])
        model = mc.fit_one_vs_one(p["K"], p["y"], C_p, tol=TOL, engine="smo", warm_from=previous)
        ref = svc(dict(p, C=C))
        np.testing.assert_allclose(model.decision_train.T, ref.decision_function(p["X"]), atol=DECISION_ATOL * C)
        np.testing.assert_array_equal(model.predict(K_rows), ref.predict(Z))
        np.testing.assert_array_equal(model.support, np.sort(ref.support_))
        previous = model
    with pytest.raises(ValueError, match="same kernel and labels"):
        mc.fit_one_vs_one(p["K"], np.roll(p["y"], 1), p["C_p"], engine="smo", warm_from=previous)


def test_bad_input():
    K = np.eye(4)
    with pytest.raises(ValueError, match="single class"):
        mc.fit_one_vs_one(K, [1, 1, 1, 1], 1.0)
    with pytest.raises(ValueError, match="4 rows"):
        mc.fit_one_vs_one(K, [0, 1, 2], 1.0)
    with pytest.raises(ValueError, match="positive"):
        mc.fit_one_vs_one(K, [0, 1, 2, 2], [1.0, 1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="NaN or inf labels"):
        mc.fit_one_vs_one(K, [0.0, 1.0, np.nan, 2.0], 1.0)
    with pytest.raises(ValueError, match="no point of class"):
        mc.kfold_cv_error(np.eye(7), [0, 0, 0, 1, 1, 1, 2], 1.0, folds=np.array([0, 1, 2, 0, 1, 2, 2]))


# ------------------------------------------------------------------------------------ exact LOO
def test_exact_loo_equals_retraining_svc_without_each_point(solved):
    """The ground truth of multiclass.md: SVC retrained on all points but p, predicting x_p."""
    p, model = solved
    l = len(p["y"])
    brute = np.array([svc(p, np.delete(np.arange(l), q)).predict(p["X"][q:q + 1])[0] for q in range(l)])
    loo = mc.leave_one_out(model, p["K"])
    np.testing.assert_array_equal(model.classes[loo.predictions], brute)
    assert loo.loo_error == np.mean(brute != p["y"])
    assert 0 < loo.loo_error < 1  # neither trivial
    full = mc.leave_one_out(model, p["K"], prune=False)  # pruning changes work, never the result
    np.testing.assert_array_equal(full.predictions, loo.predictions)
    assert loo.n_retrained <= full.n_retrained == sum(m.support.size for m in model.machines)
    assert mc.loo_error(p["K"], p["y"], p["C_p"], tol=TOL) == loo.loo_error


def test_bounds_dominate_the_exact_loo(solved):
    p, model = solved
    loo = mc.leave_one_out(model, p["K"]).loo_error
    assert mc.span_bound(model, p["K"]) >= loo
    assert mc.xi_alpha_bound(model, p["K"]) >= loo
    assert mc.sv_count_bound(model) >= loo


# ------------------------------------------------------------------------------------- span-rule
def test_span_rule_identity_per_machine_sv(solved):
    """Theorem 2 per machine: f(x_p) - f^p(x_p) = y_p a_p S_p^2 for every (machine, SV) pair whose
    retraining keeps the machine's in-bound and bounded sets; the identity is checked on enough pairs."""
    p, model = solved
    loo = mc.leave_one_out(model, p["K"], prune=False)
    checked = 0
    for (glob, values), machine, machine_loo in zip(mc.span_rule_decisions(model, p["K"]), model.machines, loo.machines):
        np.testing.assert_array_equal(machine_loo.support, machine.support)
        keep = machine_loo.sets_unchanged
        np.testing.assert_allclose(values[keep], machine_loo.decision_loo[keep], atol=1e-6 * max(1.0, p["C_p"].max()))
        checked += int(keep.sum())
    assert checked >= 10


def constructed_premise_case(seed: int, n_classes: int):
    """Few points per class, a narrow RBF (K close to, but not, the identity) and a large C: every point
    is an in-bound SV of its machines, and removing one leaves the others in-bound (Theorem 2's premise)."""
    rng = np.random.default_rng(seed)
    sizes = np.arange(4, 4 + n_classes)
    y = np.repeat(np.arange(n_classes), sizes)
    X = rng.standard_normal((y.size, 2)) * 1.5 + 0.5 * y[:, None]
    K = ws.rbf_kernel(X, gamma=4.0)
    return K, y, 100.0 * rng.uniform(0.5, 2.0, y.size)


def test_span_rule_equals_exact_loo_when_no_sv_set_changes():
    """Constructed cases where no machine's SV sets change in any leave-one-out: the multiclass
    span-rule IS the exact multiclass LOO, point by point."""
    premise_held = 0
    for seed in range(8):
        for k in (3, 4):
            K, y, C = constructed_premise_case(seed, k)
            model = mc.fit_one_vs_one(K, y, C, tol=1e-12)
            loo = mc.leave_one_out(model, K, prune=False)
            if not all(m.sets_unchanged.all() for m in loo.machines):
                continue
            premise_held += 1
            np.testing.assert_array_equal(mc.span_rule_predictions(model, K), loo.predictions)
            assert mc.span_rule(model, K) == loo.loo_error
    assert premise_held >= 6


def test_two_classes_keep_the_binary_rule():
    """k = 2: the multiclass estimates are the binary ones of the single machine (a LOO decision value
    of 0 counts as an error for both classes)."""
    p = problem(6, 2, 40)
    model = mc.fit_one_vs_one(p["K"], p["y"], p["C_p"], tol=TOL)
    machine = model.machines[0]
    assert mc.span_rule(model, p["K"]) == ws.span_rule(machine, p["K"])
    assert mc.leave_one_out(model, p["K"]).loo_error == binary_leave_one_out(machine, p["K"]).loo_error
    assert mc.xi_alpha_bound(model, p["K"]) == ws.xi_alpha_bound(machine, p["K"])
    assert mc.span_bound(model, p["K"]) == pytest.approx(ws.span_bound(machine, p["K"]))
    folds = ws.stratified_folds(p["y"], 4, seed=1)
    y_pm = np.where(p["y"] == model.classes[0], 1.0, -1.0)
    assert mc.kfold_cv_error(p["K"], p["y"], p["C_p"], folds=folds, tol=TOL) == ws.kfold_cv_error(
        p["K"], y_pm, p["C_p"], folds=folds, tol=TOL)
    # the zero rule itself: a LOO decision value of 0 is an error for the second class too
    sv = machine.support[:2]
    pred = mc.loo_predictions(model, [(sv, np.zeros(2))], sv)
    assert np.all(pred[sv] != model.class_index[sv])


# --------------------------------------------------------------------------------- CV and bounds
def test_cv_equals_svc_retrained_per_fold(solved):
    p, model = solved
    folds = ws.stratified_folds(p["y"], 4, seed=2)
    for c in np.unique(p["y"]):  # stratified over every class
        counts = np.bincount(folds[p["y"] == c], minlength=4)
        assert counts.max() - counts.min() <= 1
    errors = sum(int(np.sum(svc(p, np.flatnonzero(folds != f)).predict(p["X"][folds == f]) != p["y"][folds == f]))
                 for f in range(4))
    got = mc.kfold_cv_error(p["K"], p["y"], p["C_p"], folds=folds, tol=TOL)
    assert got == errors / len(p["y"])
    cached = ws.FoldKernels(p["K"], folds)
    assert mc.kfold_cv_error(p["K"], p["y"], p["C_p"], fold_kernels=cached, tol=TOL) == got


def test_union_bounds_recomputed_per_machine(solved):
    """The union span bound from each machine's binary Theorem 1 on its own kernel slice, and the
    machines' R^2 and D from their slices."""
    p, model = solved
    l = len(p["y"])
    radius2 = mc.machine_radius2(p["K"], p["y"])
    diameters = mc.machine_diameters(p["K"], p["y"])
    total, flagged = 0.0, np.zeros(l, dtype=bool)
    for idx, machine, R2, D in zip(model.members, model.machines, radius2, diameters):
        K_m = p["K"][np.ix_(idx, idx)]
        assert R2 == K_m.max() - K_m.min()
        assert D == pytest.approx(ws.enclosing_ball_diameter(K_m))
        total += idx.size * ws.span_bound(machine, K_m, D=D)
        flagged[idx] |= 2 * machine.alpha * R2 + machine.slacks - 1 >= 0
    assert mc.span_bound(model, p["K"], diameters=diameters) == pytest.approx(total / l)
    assert mc.xi_alpha_bound(model, radius2=radius2) == flagged.mean()
    assert mc.sv_count_bound(model) == svc(p).support_.size / l
