"""Randomized-sampling trainer for weighted SVMs on large training sets (random-sampling.md).

Clarkson-style random sampling: solve the weighted SVM exactly on a random sample R, find the
points outside R that violate the sample's solution, double their SAMPLING weights u_i when
they carry little weight, and stop when nothing violates. The answer is then the optimum of
the full problem, whatever the sample sizes were; the sample sizes only decide the running time.

Why "nothing violates" certifies the full optimum for C-SVC (method.md section 1): extend the
sample's dual solution by alpha_i = 0 off R. The KKT conditions of the full problem are those of
the sample for i in R, and for i outside R (alpha_i = 0) they ask y_i f(x_i) >= 1. So the
violators are V = {i not in R : y_i f(x_i) < 1 - tol}: a point outside R inside its margin would
take alpha_i > 0 in the full solution. ``kkt_certificate`` checks all conditions again on all l
points from the final (alpha, b), with f recomputed from the features.

The sampling weights u_i (integer multiplicities of a multiset) are NOT the SVM weights C_i:
a point drawn several times enters the sub-problem ONCE with its own C_i (duplicating it would
multiply its C_i in the primal sum_i C_i xi_i and change the problem).

Only kernel blocks between row blocks of X and the current support vectors are ever formed
(``block_rows`` x n), never the l x l kernel. Each sample is solved by scikit-learn's LIBSVM
with its own RBF kernel and a row cache of ``cache_mb``: precomputing the sample's kernel
instead is slower for one fit (measured on 8192 skin_nonskin points: 8-11 s to build the
kernel against 0.2-0.8 s for the whole LIBSVM run; on 4000 mnist_2_9 points 1.7 s against
0.6-1.1 s), and it would cost r^2 memory.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from ..model import WeightedSVM, make_model_from_features
from ..utils.validation import check_features_problem, check_int
from .base import DEFAULT_TOL, Capabilities
from .sklearn_rbf import DEFAULT_CACHE_MB, libsvm_rbf

#: Default KKT tolerance (in y f) of the violator test and of the final certificate, on top
#: of LIBSVM's own accuracy (LIBSVM_KERNEL_EPS below). LIBSVM's eps-stopping rule bounds every
#: margin violation by eps on the gradient it works with; with the samples solved at
#: ``inner_tol`` = 1e-7, 1e-6 leaves a 10x margin for rounding in the recomputed f.
DEFAULT_KKT_TOL = 1e-6
#: LIBSVM keeps kernel values in its cache as float32 (Qfloat), so its gradient
#: G_i = sum_j y_i y_j K_ij a_j - 1 carries an error up to 2^-24 sum_j a_j |K_ij| <= 2^-24 sum a
#: (RBF: |K| <= 1), and b, derived from the same gradients, as much again. A LIBSVM solution
#: therefore meets the KKT conditions in y f only to eps + 2^-23 sum_i a_i, whatever eps is
#: (measured: in-bound margins off by ~1e-8 sum a at eps = 1e-7, 5.6e-4 on 3000 skin points at
#: C = 1024). The certificate accepts tol + 2 * LIBSVM_KERNEL_EPS * sum a, the worst case a full
#: LIBSVM run can deliver. The violator test is stricter: it holds the points outside the sample to
#: the accuracy LIBSVM actually reached on the sample (``SamplingRound.sample_accuracy``), which is
#: usually far below that worst case: testing against the worst case let a skin_nonskin run at
#: C = 1024 stop with KKT violations of 1e-2 (duality gap 30x full LIBSVM's, f off by 0.1) where
#: full LIBSVM reached 3e-4.
LIBSVM_KERNEL_EPS = 2.0**-24
#: LIBSVM stopping tolerance for each sample: the other engines' (method.md: train with a tight eps).
DEFAULT_INNER_TOL = DEFAULT_TOL
#: Default initial sample size r0 (draws). Small enough that the first rounds cost little on
#: any l, large enough to hold a few hundred SVs; r then doubles whenever a round makes no
#: progress, so a poor r0 costs a few extra rounds, never correctness.
DEFAULT_R0 = 1024
#: Default cap on rounds. Every unsuccessful round doubles r, so log2(245,057 / 1024) < 8 of
#: them reach the full set of skin_nonskin; the rest are weight doublings (Clarkson: O(delta
#: ln l) of them; measured up to 50 on 3000 points with ~100 SVs).
DEFAULT_MAX_ROUNDS = 100
#: Relative residual |sum_i alpha_i y_i| / sum_i alpha_i accepted by the certificate: LIBSVM
#: keeps the equality exactly up to rounding; snapping alphas to their bounds (model.BOUND_RTOL =
#: 1e-9 relative) can move the sum by at most that fraction.
EQUALITY_RTOL = 1e-8
#: ways to set delta of the doubling rule (see ``fit_sampling``)
DELTA_RULES = ("sample", "svs")
#: Sampling weights are int64 multiplicities; the total must stay an exact integer draw range.
MAX_TOTAL_WEIGHT = 2**62


class SamplingError(RuntimeError):
    """The sampling trainer stopped without a certified solution.

    ``record`` holds the rounds run so far (a ``SamplingRecord`` without certificate, or with
    the failed one); ``model`` the last solution when there is one.
    """

    def __init__(self, message: str, record: "SamplingRecord", model: WeightedSVM | None = None):
        super().__init__(message)
        self.record = record
        self.model = model


@dataclass(frozen=True)
class KKTCertificate:
    """KKT conditions of the FULL weighted-SVM problem, checked on all l training points.

    Violations are measured without tolerance (0 when a condition holds exactly):
    max_zero : max over alpha_i = 0 of 1 - y_i f(x_i)        (needs y f >= 1)
    max_inbound : max over 0 < alpha_i < C_i of |y_i f(x_i) - 1|   (needs y f = 1)
    max_bounded : max over alpha_i = C_i of y_i f(x_i) - 1     (needs y f <= 1)
    equality_residual : |sum_i alpha_i y_i| / sum_i alpha_i
    tol : the requested tolerance;  tol_effective : tol + 2 LIBSVM_KERNEL_EPS sum_i alpha_i
    passed : the three margin violations are <= tol_effective, the residual <= EQUALITY_RTOL
        and 0 <= alpha_i <= C_i
    """

    tol: float
    tol_effective: float
    n_points: int
    max_zero: float
    max_inbound: float
    max_bounded: float
    equality_residual: float
    passed: bool


@dataclass(frozen=True)
class SamplingRound:
    """One round of the sampling loop.

    sample_size : r, draws from the multiset (l when the full set was taken)
    n_distinct : |R|, distinct points in the sub-problem
    n_sv : support vectors of the sample's solution
    n_violators, violator_weight : |V| and u(V)
    total_weight : u(all) when R was drawn
    sample_accuracy : the largest KKT violation (in y f, recomputed in float64) of the sample's
        solution on its own points R: what LIBSVM reached there
    delta : delta of the doubling rule (``fit_sampling``'s delta_rule; nan when nothing was solved)
    threshold : u(all) / (3 delta)
    outcome : "certified" (V empty), "weights doubled" (u(V) <= threshold),
        "r doubled" (no progress: u(V) > threshold) or "single class" (R held one class: r doubled)
    t_draw, t_solve, t_check : seconds drawing R, solving it, computing f and V on all l points
    """

    round: int
    sample_size: int
    n_distinct: int
    n_sv: int
    n_violators: int
    violator_weight: int
    total_weight: int
    sample_accuracy: float
    delta: float
    threshold: float
    outcome: str
    t_draw: float
    t_solve: float
    t_check: float


@dataclass(frozen=True)
class SamplingRecord:
    """Every round of one ``fit_sampling`` run and the final KKT certificate."""

    l: int
    r0: int
    tol: float
    inner_tol: float
    seed: int
    delta_rule: str
    rounds: tuple[SamplingRound, ...]
    certificate: KKTCertificate | None
    wall_time: float

    @property
    def n_rounds(self) -> int:
        return len(self.rounds)

    @property
    def final_sample_size(self) -> int:
        return self.rounds[-1].sample_size if self.rounds else 0

    @property
    def final_n_distinct(self) -> int:
        return self.rounds[-1].n_distinct if self.rounds else 0


# --------------------------------------------------------------------------------------------
# the sampling loop
# --------------------------------------------------------------------------------------------
def fit_sampling(
    X,
    y,
    C,
    *,
    gamma: float,
    r0: int | None = None,
    tol: float = DEFAULT_KKT_TOL,
    seed: int = 0,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    block_rows: int | None = None,
    inner_tol: float = DEFAULT_INNER_TOL,
    cache_mb: float = DEFAULT_CACHE_MB,
    delta_rule: str = "sample",
) -> tuple[WeightedSVM, SamplingRecord]:
    """Train a weighted RBF SVM on all l points by solving random samples (random-sampling.md).

    Parameters
    ----------
    X : (l, d) features;  y : (l,) labels in {-1, +1};  C : scalar or (l,) weights C_i > 0
    gamma : RBF parameter of K(x, z) = exp(-gamma ||x - z||^2)
    r0 : initial sample size in draws (default min(l, DEFAULT_R0))
    tol : KKT tolerance: the violator test is y_i f(x_i) < 1 - tol - (the sample's own KKT accuracy),
        the final certificate accepts tol + 2 LIBSVM_KERNEL_EPS sum_i alpha_i (``effective_tol``)
    seed : seed of the draws (numpy Generator)
    max_rounds : cap on rounds; reaching it raises ``SamplingError`` with the record so far
    block_rows : rows per kernel block when f is evaluated on all points (default: blocks of
        kernels.EXPANSION_BLOCK_BYTES against the current SVs)
    inner_tol : LIBSVM tolerance on each sample; must be < tol
    cache_mb : LIBSVM's kernel row cache for the sample, in MB
    delta_rule : how delta of the doubling rule is set, see below ("sample" or "svs")

    Rule (random-sampling.md): u_i = 1; each round draws r copies without replacement from the
    multiset holding u_i copies of point i, solves the distinct points R exactly, and computes
    V = {i not in R : y_i f(x_i) < 1 - tol - a_R}, a_R the largest KKT violation of the sample's
    solution on R itself (points outside are held to the accuracy LIBSVM reached inside, see
    LIBSVM_KERNEL_EPS). If u(V) <= u(all) / (3 delta) the round succeeds and u_i doubles on V;
    otherwise the round made no progress and r doubles.

    delta is the combinatorial dimension: the size of the largest basis (fewest points whose
    solution is that of a whole subset). Its worst-case bound can be l with kernels, which
    would make the threshold u(all)/(3 l) useless, so it is set each round (``delta_rule``):
    - "sample" (default): from the spec's r = 6 delta^2, delta = sqrt(r / 6): the sample size
      r stands for a guess of delta, and a round without progress doubles r, i.e. raises the
      guess by sqrt(2). Clarkson's analysis makes a round succeed with probability >= 1/2
      when r >= 6 delta^2 for the true delta, so repeated failures say the guess is too low.
    - "svs": delta = n_sv of the sample's solution (the SVs are a basis of the sample: the
      other points can be dropped), the largest basis seen in the round. Stricter: on
      data where a sample's violators are many (soft margin: every bounded SV missing from R)
      it doubles r up to the full set in log2(l / r0) rounds; "sample" takes more, cheaper
      rounds where the violators are near the threshold (tests/test_engine_sampling.py).
    A sample of r >= l draws is the full set, where nothing can violate: every run ends by then.

    Returns
    -------
    (model, record): the ``WeightedSVM`` on all l points (alpha zero off the final sample,
    decision_train computed from the features, engine "sampling") and the ``SamplingRecord``
    with every round and the passed ``KKTCertificate``.

    Raises
    ------
    ValueError for bad input; SamplingError when max_rounds is reached or the certificate fails.
    """
    X, y, C, gamma = check_features_problem(X, y, C, gamma)
    l = y.shape[0]
    r = r_init = check_int(min(l, DEFAULT_R0) if r0 is None else r0, "r0", minimum=2)
    max_rounds = check_int(max_rounds, "max_rounds")
    block_rows = None if block_rows is None else check_int(block_rows, "block_rows")
    if not (math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    if not 0 < inner_tol < tol:
        raise ValueError(
            f"inner_tol must be positive and below tol (the sample must be solved more tightly "
            f"than the certificate checks it), got inner_tol={inner_tol!r}, tol={tol!r}"
        )
    if not cache_mb > 0:
        raise ValueError(f"cache_mb must be positive, got {cache_mb!r}")
    if delta_rule not in DELTA_RULES:
        raise ValueError(f"delta_rule must be one of {DELTA_RULES}, got {delta_rule!r}")
    seed = check_int(seed, "seed", minimum=0)
    rng = np.random.default_rng(seed)
    u = np.ones(l, dtype=np.int64)
    rounds: list[SamplingRound] = []
    start = time.perf_counter()
    model = None

    def record(certificate=None):
        return SamplingRecord(l=l, r0=r_init, tol=float(tol),
                              inner_tol=float(inner_tol), seed=seed, delta_rule=delta_rule,
                              rounds=tuple(rounds),
                              certificate=certificate, wall_time=time.perf_counter() - start)

    for t in range(1, max_rounds + 1):
        r_used = min(r, l)
        t0 = time.perf_counter()
        R = draw_sample(u, r_used, rng)
        total = int(u.sum())
        t1 = time.perf_counter()
        if np.all(y[R] == y[R[0]]):
            # No SVM exists on one class: the sample is too small to say anything.
            rounds.append(SamplingRound(t, r_used, R.size, 0, 0, 0, total, math.nan, math.nan, math.nan,
                                        "single class", t1 - t0, 0.0, 0.0))
            r = min(2 * r, l)
            continue
        alpha_R, b = libsvm_rbf(X[R], y[R], C[R], gamma, inner_tol, cache_mb)
        alpha = np.zeros(l)
        alpha[R] = alpha_R
        t2 = time.perf_counter()
        model = make_model_from_features(X, y, C, alpha, b, gamma=gamma, engine="sampling", tol=tol,
                                         block_rows=block_rows)
        outside = np.ones(l, dtype=bool)
        outside[R] = False
        sample_accuracy = float(kkt_violations(model)[R].max())
        V = np.flatnonzero(outside & (model.margins < 1.0 - tol - sample_accuracy))
        t3 = time.perf_counter()
        violator_weight = int(u[V].sum())
        delta = math.sqrt(r_used / 6.0) if delta_rule == "sample" else max(1, model.support.size)
        threshold = total / (3.0 * delta)
        if V.size == 0:
            outcome = "certified"
        else:
            u, r, doubled = update_weights(u, V, r_used, delta)
            outcome = "weights doubled" if doubled else "r doubled"
        rounds.append(SamplingRound(t, r_used, R.size, model.support.size, V.size,
                                    violator_weight, total, sample_accuracy, delta, threshold, outcome,
                                    t1 - t0, t2 - t1, t3 - t2))
        if V.size == 0:
            break
    else:
        raise SamplingError(
            f"no certified solution after max_rounds={max_rounds} rounds (last sample: "
            f"{rounds[-1].sample_size} draws, {rounds[-1].n_violators} violators out of l={l}); "
            "raise max_rounds or start from a larger r0", record(), model)

    model = replace(model, fit_time=time.perf_counter() - start)
    certificate = kkt_certificate(model, tol)
    if not certificate.passed:
        raise SamplingError(
            f"the final solution fails the KKT conditions of the full problem ({certificate}); "
            "solve the samples more tightly (lower inner_tol)", record(certificate), model)
    return model, record(certificate)


def draw_sample(u, r: int, rng: np.random.Generator) -> np.ndarray:
    """Distinct points of r draws without replacement from the multiset with u_i copies of i.

    u : (l,) positive int64 multiplicities. r >= l returns every point (the full problem).
    The draw is exact: r distinct copy numbers uniform in 0..u(all)-1, each mapped to the
    point owning it. Returns the sorted indices.
    """
    u = np.asarray(u)
    l = u.shape[0]
    if r >= l:
        return np.arange(l)
    owner_end = np.cumsum(u)
    copies = rng.choice(int(owner_end[-1]), size=r, replace=False)
    return np.unique(np.searchsorted(owner_end, copies, side="right"))


def update_weights(u, V, r: int, delta: float) -> tuple[np.ndarray, int, bool]:
    """One step of the doubling rule for a round with violators V drawn at sample size r.

    If u(V) <= u(all) / (3 delta): double u on V and keep r; otherwise (no progress) keep u
    and double r, capped at l. Returns (u, r, doubled).
    """
    u = np.asarray(u, dtype=np.int64)
    V = np.asarray(V, dtype=np.intp)
    total, weight = int(u.sum()), int(u[V].sum())
    if weight <= total / (3.0 * delta):
        if total + weight > MAX_TOTAL_WEIGHT:
            raise OverflowError(
                f"sampling weights reach u(all) = {total + weight} > 2^62; the loop is not "
                "converging at this sample size (start from a larger r0)"
            )
        u = u.copy()
        u[V] *= 2
        return u, r, True
    return u, min(2 * r, u.shape[0]), False


# --------------------------------------------------------------------------------------------
# the full-problem certificate
# --------------------------------------------------------------------------------------------
def effective_tol(model: WeightedSVM, tol: float) -> float:
    """tol + 2 LIBSVM_KERNEL_EPS sum_i alpha_i: the KKT accuracy (in y f) that LIBSVM's float32
    kernel cache allows on top of ``tol`` (see LIBSVM_KERNEL_EPS)."""
    return float(tol) + 2.0 * LIBSVM_KERNEL_EPS * float(model.alpha.sum())


def kkt_certificate(model: WeightedSVM, tol: float) -> KKTCertificate:
    """Check the KKT conditions of the full problem on every training point of ``model``
    (its alpha and decision_train; method.md section 1), each to ``effective_tol(model, tol)``
    in y f."""
    a, C = model.alpha, model.C
    violation = kkt_violations(model)
    zero = a == 0.0
    bounded = np.zeros(a.shape[0], dtype=bool)
    bounded[model.bounded] = True
    inbound = ~zero & ~bounded
    max_zero, max_inbound, max_bounded = (float(np.max(violation[mask], initial=0.0))
                                          for mask in (zero, inbound, bounded))
    total = float(a.sum())
    residual = abs(float(a @ model.y)) / total if total > 0 else 0.0
    in_box = bool(np.all((a >= 0.0) & (a <= C)))
    limit = effective_tol(model, tol)
    passed = (in_box and max(max_zero, max_inbound, max_bounded) <= limit
              and residual <= EQUALITY_RTOL)
    return KKTCertificate(float(tol), limit, int(a.shape[0]), max_zero, max_inbound, max_bounded,
                          residual, passed)


def kkt_violations(model: WeightedSVM) -> np.ndarray:
    """(l,) violation of each point's KKT condition in y f (0 where it holds): 1 - y f for
    alpha_i = 0 (needs y f >= 1), |y f - 1| in-bound, y f - 1 bounded (needs y f <= 1)."""
    m = model.margins
    violation = np.maximum(1.0 - m, 0.0)
    violation[model.inbound] = np.abs(m[model.inbound] - 1.0)
    violation[model.bounded] = np.maximum(m[model.bounded] - 1.0, 0.0)
    return violation


# --------------------------------------------------------------------------------------------
# the engine
# --------------------------------------------------------------------------------------------
class Sampling:
    name = "sampling"
    description = ("randomized sampling (random-sampling.md): LIBSVM on samples, KKT-certified on all points, "
                   "no l x l kernel; class and per-instance weights; features only")
    capabilities = Capabilities(per_instance_weights=True, precomputed_kernel=False)

    def fit_features(self, X, y, C, gamma, tol, **options):
        """``fit_sampling``'s model (tol: the certificate's; None: DEFAULT_KKT_TOL). The
        ``SamplingRecord`` is dropped: call ``fit_sampling`` to keep it."""
        model, _ = fit_sampling(X, y, C, gamma=gamma, tol=DEFAULT_KKT_TOL if tol is None else tol, **options)
        return model
