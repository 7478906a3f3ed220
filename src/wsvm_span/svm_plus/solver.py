"""SVM+ training: the dual QP of svm-plus.md in 2l variables x = [a; a~],

    min 1/2 a'YKYa - 1'a + 1/(2 gamma) a~'K~a~   s.t.  y'a = 0,  1'a~ = 0,  0 <= a_i <= C + a~_i,

by one of these routes to the same solution:

- ``"qp"``: the project's QP switch (``solve_qp``: MOSEK when licensed, Clarabel otherwise).
  b and b~ are the multipliers of the two equality constraints: in the Lagrangian
  convention of ``solve_qp`` stationarity in a reads YKYa - 1 + b y - mu + xi = 0 and in
  a~ reads K~a~/gamma + b~ 1 - xi = 0, so nu = (b, b~) with xi the correcting values
  (derivation: svm-plus.md's primal; the signs are tested against the primal QP).
  The QP is solved in x / C (a box 0 <= a_i <= 1 + a~_i whatever C). When the kernels are of low
  numerical rank (pivoted Cholesky K = LL', K~ = L~L~' to ``LOW_RANK_RTOL``, ``low_rank_factors``), the
  interior point solves the same QP written in the factors' coordinates (v = L'Ya, u = L~'a~, with
  ~ r + r~ more equality rows and a diagonal quadratic term), whose KKT systems are sparse where the
  kernels' are dense: ~4x faster on the W toy at l = 400 (r ~ 60, r~ ~ 12 of 400). That QP is the kernels'
  only to the factorization's tolerance, so its solution serves only as the polish's start: if the polish
  fails, the dense QP is solved as before. The interior-point
  solution sits a little inside its bounds, which would blur the in-bound / bounded split
  the span-rule needs, so it is then polished by the active-set method started from its
  rounded active sets: a variable is taken at its bound when it is below its complementary
  slack (a_i / C < mu_i, beta_i / C < xi_i), which an interior point keeps apart by orders
  of magnitude (``polish=False`` keeps it raw).
- ``"active-set"``: a primal-dual active-set method (Hintermueller, Ito and Kunisch,
  SIAM J. Optim. 13, 2003). Each iteration guesses the active sets Z = {a_i = 0} and
  B = {beta_i = 0}, solves the equality-constrained QP they leave exactly (one symmetric
  indefinite system in the free a_i, the free a~_i and the two equality multipliers,
  which ARE b and b~) and updates the guess from the signs of the primal values and
  the multipliers (block principal pivoting safeguard, see ``active_set_on``). It stops
  when no guess is contradicted; that point satisfies every KKT condition to round-off.
  The iterations run in compiled code (csrc/svm_plus_active_set.c, scipy's LAPACK), on a
  subset's problem read in place from the full matrices (``active_set_on``: the exact LOO's refits).
  The first guess comes from the plain SVM (LIBSVM, C_i = C).
  Each iteration costs one dense solve of size n_free + 2 (n_free = free a's + free
  a~'s, between 0 and 2l), against one factorization of the whole (3l + 2)-row KKT
  system per interior-point iteration. Measured (benchmarks/bench_svm_plus.py): 8-12
  iterations from the plain SVM on parkinson_speech, ~17x faster than Clarabel; 2-5
  (counting the final check) from the full solution when refitting without one point.
  The method can cycle on problems whose reduced Hessian is not an M-matrix (seen with
  small gamma and large C on random problems: ~1 in 6); a repeated state or
  ``MAX_ACTIVE_SET_ITER`` without convergence raises ``ActiveSetFailure``.
- ``"smo"``: the compiled decomposition solver (``csrc/svm_plus_smo.c``): steps of two or three variables that keep
  both equality constraints (the alternating SMO of Pechyony, Izmailov, Vashist and Vapnik, 2010), second-order
  working sets, conjugate directions between unclipped steps (Pechyony and Vapnik's caSMO, 2011), stopped when the
  largest KKT violation is at most ``tol`` in margin units (LIBSVM's rule; ``SMO_TOL``). It reads kernel rows, so
  a fold or a leave-one-out problem is solved on the full kernels, and it can start from any feasible point. Alone
  it is slow on the study's problems: K~ of a 1-D privileged feature is numerically of low rank, so with the ridge
  below the dual is ill-conditioned, and a first-order method needs 10^4-10^6 steps at large C. So where it is
  polished ("smo+active-set") it stops early (``SMO_START_TOL``) and the active-set methods make its point exact
  (``SVMPlusProblem.exact_from``: a short try of the primal-dual one, then the primal one, ``primal_active_set``,
  one bound per iteration, its face system's QR factors updated: ``FaceSystem``), or start from ``warm_start``, a
  neighbouring solution made feasible (``feasible_start``: another C, or the full training set's solution for a CV
  fold or a leave-one-out refit); a point they do not make exact is taken on to ``tol`` and kept there ("smo").
- ``"auto"`` (the default): the "smo" route, handing a point the active-set methods do not make exact to the "qp"
  route (named "smo->..."). It replaced the active-set method from the plain SVM with the QP route as its fallback
  (issue 42): that fallback ran on most of bank_marketing's problems and on nearly every refit of their exact
  LOO, where the warm-started active-set methods finish (``benchmarks/bench_lupi_cost.py``, docs/experiments.md).
"""
from __future__ import annotations

import threading
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as sla

from .. import _native
from ..engines import fit_svm
from ..solvers.qp import solve_qp
from ..utils.validation import check_features, check_kernel, check_labels, check_positive_semidefinite
from .model import SVMPlus

#: The active-set route's name: a solver to ask for, and ``SVMPlus.solver`` of a model it solved alone (the
#: QP route's names are the QP solver's, "-low-rank" where it solved the factored QP, then "+active-set" where
#: polished; a polished name starts with "smo->" when the default route's active-set methods failed first
#: ("active-set->" in rows of the route before issue 42), an unpolished one never does: ``kept_unpolished``).
ACTIVE_SET = "active-set"
#: The decomposition solver's name (``SVMPlus.solver`` "smo", or "smo+active-set" where polished).
SMO = "smo"
SOLVERS = ("auto", ACTIVE_SET, "qp", SMO)
#: ``SVMPlus.solver`` of an SVM+ that ``equivalence.weighted_to_svm_plus`` built from a weighted SVM
WEIGHTED_SVM = "weighted-svm"

#: Ridge added to the privileged kernel, relative to its mean diagonal. With fewer
#: distinct privileged points than training points (parkinson_speech: 16 UPDRS values for
#: 520 recordings; any 1-D linear kernel) K~ is singular, and a smooth kernel on a 1-D
#: privileged feature (the W toy's posterior) is numerically of rank ~5: a~ is not unique
#: (only K~a~ is) and the active-set systems are (nearly) singular. K~ + ridge I is still a
#: kernel (an extra privileged feature of norm sqrt(ridge) per point), so the problem solved is
#: an exact SVM+; it changes each slack by ridge * a~_i / gamma. Measured on the W toy (l = 100,
#: 72 problems: RBF widths 0.5..128 and 1..100, C 0.25..64, gamma 0.25..4): with 1e-8 Clarabel
#: stopped with NumericalError on 2, and 6 solutions could not be polished to exact active sets;
#: with 1e-6 every problem was solved and polished, and the active-set method alone solved 34
#: (18 with 1e-8).
PRIV_RIDGE = 1e-6

#: KKT tolerance of the active-set method (relative to C for a and beta, margin units for
#: mu and xi). Its solutions are exact up to the round-off of a solve whose condition
#: number reaches ~1 / PRIV_RIDGE (1e6), i.e. ~1e-10 relative error in the worst direction:
#: a looser tolerance would accept wrong active sets, a tighter one would chase round-off
#: on problems whose kernels are worse conditioned than the ridge alone makes them.
KKT_TOL = 1e-7

#: A bound stays active in the active-set methods unless its multiplier (mu_i of a_i = 0, xi_i of beta_i = 0, margin
#: units) is below -RELEASE_TOL: tighter than ``KKT_TOL``, which only accepts a solution. Degenerate points (a_i = 0
#: and mu_i ~ 0: 22 of bank_marketing's 300 at C = gamma = 0.25) have a multiplier of -1e-8..-1e-7 at the bound where
#: the optimum holds them just off it; at -KKT_TOL the methods kept them there, a KKT point to 6e-8 whose sets (which
#: SVM+'s LOO rule reads) differed by such a point from the exact optimum's by the route it came by (the LOO rule
#: 0.320 against 0.313 there). At 1e-9 the decomposition route lands in the sets of the other routes there, and on
#: 86 sampled problems each of bank_marketing 2:1, parkinson_speech 2:1 and w_mixture 1:2 it ends at a KKT
#: violation below 1e-10 on 163 of 258 (131 at 1e-7), for 1-6% more CPU; 1e-10 cost up to 13% more for 2 more.
RELEASE_TOL = 1e-9

#: Bound on active-set iterations. From the plain-SVM start it converged in <= 12 on
#: parkinson_speech and in a median of 4 (90% within 15) on random problems; the single
#: pivots that end cycling needed up to ~2700 iterations on hard random problems (small
#: gamma, large C), where the QP route (~15 interior-point iterations) is cheaper.
MAX_ACTIVE_SET_ITER = 30

#: The polish's second try. Where the active-set method from an interior point's rounded sets fails (it cycles
#: or runs out of ``MAX_ACTIVE_SET_ITER``), it starts again from the same sets with no block backup (single
#: pivots as soon as a block update does not lower the number of wrong guesses) for up to this many
#: iterations; the first try is unchanged, so is every solution it reaches. Degenerate problems need it: on the
#: W toy at 1:2, l = 200 (K of numerical rank ~25, every beta_i = 0, ~100 of 200 pairs with both a_i / C and
#: mu_i near 1e-5: the free-set Hessian is set by the ridge and far from an M-matrix) block pivots failed on 250
#: of the 489 problems 14 sampled SVM+ models met, and the fallback, the dense QP with its own polish, costs
#: ~100 ms and mostly failed the same way; the second try polished 249 (median 40 iterations, largest 129,
#: ~5 ms more per problem). One such model took 22.1 s (its 200 exact-LOO retrainings each paid both QPs) and
#: takes 0.54 s (benchmarks/bench_svm_plus_polish.py and bench_lupi_cost.py --baseline POLISH_MAX_ITER=0,
#: w_mixture 1:2 fraction 0.5 seed 0).
POLISH_MAX_ITER = 300

#: Block updates allowed without reducing the number of wrong guesses before the
#: active-set method falls back to single pivots (Kim and Park use 3).
BLOCK_BACKUP = 3

#: Duality-gap / feasibility tolerance of the SVM+ dual QP. The polish makes the solution exact, so the
#: interior point only has to land in the right active sets: 1e-8 does. At the QP switch's default 1e-10
#: Clarabel ran into its iteration cap on parkinson_speech (l = 520, C = 1, gamma = 10: 128 s, then
#: 6 s for the retry at 1e-8).
QP_TOL = 1e-8

#: KKT tolerance accepted from the interior-point route when it cannot be polished. Clarabel
#: stops at a relative gap of 1e-10 but accepts "AlmostSolved" and falls back to 1e-8 / 1e-6
#: on hard problems (``solvers.qp.clarabel_backend.RETRY_TOLERANCES``): complementarity
#: products of ~2e-4 were seen on degenerate linear-kernel problems. Anything far above means
#: b, b~ were read with the wrong sign or the solve is unreliable.
QP_KKT_TOL = 1e-3


#: Pivoted-Cholesky stopping tolerance of the low-rank route, relative to the kernel's largest diagonal:
#: K - LL' is positive semidefinite with every diagonal entry below it. On the W toy (l = 400, 33 problems)
#: 1e-10, 1e-12 and 1e-14 all landed in the active sets of the dense route's polished solutions (the same
#: 31 of 31), at median ranks 58, 73 and 88 (largest 269, 308, 340); the smaller the rank, the faster.
LOW_RANK_RTOL = 1e-10

#: A kernel is factored when its rank is at most this share of l (else its block stays dense). The interior
#: point's KKT system then has r (r~) sparse rows where it had a dense l x l block. Measured on the W toy, the QP
#: route (interior point + polish) per problem: 1.17x faster at l = 40-49 (K~ alone factored), 2.1x at 160,
#: 2.9x at 199, 2.7x at 320 and 3.9x at 400 (ranks ~60 and ~12 of 400).
LOW_RANK_MAX_SHARE = 0.5

#: ... and only for l at least this. Below, a model whose polish fails (its LOO retrainings too) pays for both
#: routes: an l = 50 job's SVM+ models cost 0.90x as much on the dense route alone (bench_lupi_cost.py
#: --baseline LOW_RANK_MAX_SHARE=0, w_mixture 1:40 fraction 0.5, 14 models), where the few QP solves are cheap anyway.
LOW_RANK_MIN_L = 100


#: Stopping tolerance of the "smo" route: the largest KKT violation in margin units (LIBSVM's -e; the same rule
#: as its m(a) - M(a) <= eps). The polish makes a solution exact where it lands in the right active sets.
SMO_TOL = 1e-3

#: Step limit of the "smo" route, per training point (the solver stops there unconverged, and says so).
SMO_MAX_ITER_PER_POINT = 10_000

#: The "smo" route makes its solution exact up to this l: the active-set methods' dense solves cost O(l^3) each, and
#: at l = 2,000 (bank_marketing, C = gamma = 1, benchmarks/bench_svm_plus_large.py --l 2000) the primal one took 708
#: iterations, 13.5 s of CPU. (Measured with a dense solve per primal iteration; its O(n^2) updates since
#: (``FaceSystem``) were not measured at that size.)
SMO_POLISH_MAX_L = 1000

#: Where the "smo" route polishes, the decomposition solver stops at this KKT violation (margin units) or after
#: this many steps per training point, and the active-set methods take over. A first-order method gets the
#: active sets roughly right fast, and then crawls where the dual is ill-conditioned (large C: K~ / gamma of low
#: rank plus the ridge), while each active-set iteration fixes one bound exactly. Measured on bank_marketing 2:1's
#: 86 sampled problems (l = 200, CPU of both stages; all 86 made exact unless said): tol 0.01 / 0.03 / 0.1 / 0.3 / 1
#: with 100 steps per point: 3.2 / 2.8 / 2.5 / 2.2 / 5.0 s (at tol 1 it stops at once, and the active-set method
#: needs 4x the iterations); tol 0.1 with 2.5 / 10 / 25 steps per point: 2.8 / 2.2 (one not made exact) / 2.0 s;
#: tol 0.001 / 0.01 / 0.03 with 25 per point: 2.1 / 2.0 / 2.0 s (the split between the stages moves, not the sum).
SMO_START_TOL = 0.1
SMO_START_MAX_ITER_PER_POINT = 25

#: Iterations the primal-dual active-set method gets from the "smo" route's starts before the primal method takes
#: over (``SVMPlusProblem.exact_from``). Where it converged it took 4-12 iterations from the decomposition solver's
#: point (up to 28) and 1-5 from the next lower C's solution (one 20), and each failure cost up to
#: ``MAX_ACTIVE_SET_ITER`` dense solves: 2.3 s of w_mixture 1:2's (l = 400) 75 warm starts. CPU of the two methods
#: on 86 problems (bank_marketing 2:1 + parkinson_speech 2:1 + w_mixture 1:2) with 30 / 12 / 8 / 5 / 0 tries: from
#: the decomposition solver, 1.43 + 1.80 + 5.26 / 1.29 + 1.56 + 4.13 / 1.47 + 2.57 + 3.87 / 1.71 + 4.05 + 3.81 /
#: 1.45 + 4.16 + 2.97 s; from the next lower C (parkinson + w_mixture, 75 each), 0.44 + 3.01 / 0.40 + 2.12 /
#: 0.40 + 1.76 / 1.10 + 1.37 / 1.54 + 0.75 s. All exact.
ACTIVE_SET_TRY_MAX_ITER = 12

#: Iterations of the primal active-set method per training point (each adds or drops one bound; from the
#: decomposition solver's point at tol 0.1 on bank_marketing's 86 sampled problems (l = 200) it took 11-350).
PRIMAL_ACTIVE_SET_MAX_ITER_PER_POINT = 5

#: A face system (``FaceSystem``) whose QR factor has a diagonal entry below this share of its largest is taken as
#: singular and solved by least squares, as ``solve_symmetric`` does where LAPACK's rcond estimate is below eps.
SINGULAR_RTOL = 1e-13

#: Round-off of beta = C + a~ - a (relative to C) at an active bound of a solution given as a warm start: a~ = a - C
#: there, and the sum gives back 0 only to a few ulps of C.
ROUND_OFF_RTOL = 1e-12

#: Kernel rows the "smo" route keeps per kernel, in MB, where it reads rows of a subset (``idx``) of the kernels.
SMO_CACHE_MB = 100.0

#: LIBSVM tolerance of the plain SVM that gives the first active-set guess (only the
#: guess depends on it, not the solution).
START_SVM_TOL = 1e-3


#: SVM+ solutions this process kept unpolished (``unpolished_solutions``). Counted, and warned about once: a
#: study job meets thousands (its models' CV folds and LOO retrainings), and Python's once-per-location rule
#: for warnings does not hold them back, as every ``warnings.catch_warnings`` in between (``solve_symmetric``
#: enters one per active-set iteration) resets it: an Experiment 8 job logged 1,935 of them.
_unpolished = 0
_unpolished_lock = threading.Lock()


def kept_unpolished(solver: str) -> bool:
    """Whether an ``SVMPlus.solver`` name of ``fit_svm_plus`` is that of a QP route's solution kept unpolished:
    neither the active-set method's own ("active-set") nor a polished one ("...+active-set").

    Parameters
    ----------
    solver : str
        ``SVMPlus.solver`` (an Experiment 8 row's ``engine`` less its ``SVM_PLUS_ENGINE_PREFIX``).

    Returns
    -------
    bool
        True for an unpolished solution ("clarabel", "clarabel-low-rank", ...).

    Examples
    --------
    >>> from wsvm_span.svm_plus import kept_unpolished
    >>> kept_unpolished("clarabel"), kept_unpolished("active-set->clarabel-low-rank+active-set")
    (True, False)
    """
    if solver == WEIGHTED_SVM:
        raise ValueError(f"{WEIGHTED_SVM!r} names an SVM+ built from a weighted SVM (weighted_to_svm_plus), "
                         "not a solution of fit_svm_plus")
    return solver != ACTIVE_SET and not solver.endswith(f"+{ACTIVE_SET}")


def unpolished_solutions() -> int:
    """How many SVM+ solutions this process has kept unpolished: the QP route's solutions whose active sets
    the active-set method could not confirm (its CV folds' and LOO retrainings' included).

    Such a solution satisfies the KKT conditions only to the QP solver's tolerance, so its split into in-bound
    and bounded SVs (which the span-rule reads) is only that accurate. ``fit_svm_plus`` warns about the first
    one; a caller that trains many reads this count before and after (a study job logs it).

    Returns
    -------
    int
        The count since the process started.

    Examples
    --------
    >>> from wsvm_span.svm_plus import unpolished_solutions
    >>> unpolished_solutions() >= 0
    True
    """
    return _unpolished


def _count_unpolished() -> bool:
    """Count one more unpolished solution; True for the process's first."""
    global _unpolished
    with _unpolished_lock:
        _unpolished += 1
        return _unpolished == 1


class ActiveSetFailure(RuntimeError):
    """The active-set method of ``fit_svm_plus`` cycled or ran out of iterations, or the sets it converged to
    give a solution that violates the KKT conditions; its message says which.

    Examples
    --------
    >>> from wsvm_span.svm_plus import ActiveSetFailure
    >>> issubclass(ActiveSetFailure, RuntimeError)
    True
    """



def fit_svm_plus(
    K, K_priv, y, C: float, gamma: float, *, solver: str = "auto", qp_solver: str = "auto",
    polish: bool = True, check_input: bool = True, tol: float = SMO_TOL, warm_start: SVMPlus | None = None,
    warm_start_points=None,
) -> SVMPlus:
    """Train SVM+ on precomputed kernels.

    Parameters
    ----------
    K : array-like of shape (l, l)
        Kernel of the ordinary features.
    K_priv : array-like of shape (l, l)
        Kernel of the privileged features (training only).
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C : float
        The SVM+ C, > 0.
    gamma : float
        The SVM+ gamma (weight of the correcting function's norm), > 0.
    solver : {"auto", "smo", "active-set", "qp"}, default="auto"
        "smo" (the decomposition solver, then polished; where the polish fails, kept at ``tol``), "auto" (the
        same, falling back to "qp" where the polish fails), "active-set" (from the plain SVM's sets; exact, raises
        ``ActiveSetFailure`` if it cycles) or "qp" (the project's QP switch, then polished).
    qp_solver : str, default="auto"
        For the "qp" route: "auto", "clarabel" or "mosek" (``solvers.qp.qp_solver_name``).
    polish : bool, default=True
        Refine a "qp" or "smo" solution to exact active sets (False keeps the raw solution: a reference for
        tests).
    check_input : bool, default=True
        Validate K, K_priv, y, C, gamma; internal callers training on slices of a validated problem skip it.
    tol : float, default=SMO_TOL
        The decomposition solver's tolerance (the largest KKT violation, margin units) for a solution it keeps
        unpolished (``polish=False``, l > ``SMO_POLISH_MAX_L``, or, under "smo", where the polish fails).
    warm_start : SVMPlus, optional
        For the "auto" and "smo" routes: a solution of a neighbouring problem (any C and gamma: a neighbouring grid
        point's; on more points: the full training set's, for a CV fold or a leave-one-out refit), from which the
        active-set methods start instead of from the decomposition solver (where they fail, the route runs from
        scratch); a solution kept unpolished (above ``SMO_POLISH_MAX_L`` points) is the decomposition solver's from
        there. ``feasible_start`` makes it feasible here.
    warm_start_points : array-like of int, optional
        Where ``warm_start`` was trained on more points: the positions of this problem's l points among
        ``warm_start``'s (None: the same points).

    Returns
    -------
    SVMPlus
        The trained model (``solver`` records which solver ran).

    Raises
    ------
    ValueError
        If the inputs are invalid or ``solver`` is unknown.
    ActiveSetFailure
        Under ``solver="active-set"``, if the method cycles.
    RuntimeError
        If the QP route fails, or the "smo" route stops at its step limit.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> bool(abs(model.alpha_tilde.sum()) < 1e-9), bool(model.kkt_violation < 1e-6)
    (True, True)
    """
    K, K_priv, y = _check_inputs(K, K_priv, y, C, gamma, solver, check_input)
    C, gamma = float(C), float(gamma)
    if solver == SMO and not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    start = None
    if warm_start is not None:
        if solver not in ("auto", SMO):
            raise ValueError(f"warm_start is used by the 'auto' and {SMO!r} routes only, not {solver!r}")
        start = _warm_start(warm_start, warm_start_points, y, C)
    elif warm_start_points is not None:
        raise ValueError("warm_start_points without warm_start")
    problem = SVMPlusProblem.build(K, K_priv, y, C, gamma)
    t0 = time.perf_counter()
    if solver == ACTIVE_SET:
        # First guess: a = 0 where the plain SVM has no SV, and beta = 0 everywhere. At the
        # optimum beta_i > 0 forces xi_i = 0, and a nonnegative smooth correcting
        # function touches 0 at few privileged points, so few beta_i are free; guessing
        # more of them makes the first systems ask xi = 0 on many points at once, which a
        # low-rank K~ can only meet with huge a~ (measured: more iterations and cycles).
        start = fit_svm(K, y, C, tol=START_SVM_TOL, check_input=False)
        Z0 = start.alpha == 0.0
        B0 = np.ones(y.size, dtype=bool)
        model = problem.active_set(Z0, B0, ACTIVE_SET)
    elif solver in ("auto", SMO):
        model = problem.smo(tol, polish, start, qp_solver=qp_solver if solver == "auto" else None)
    else:
        model = problem.qp(qp_solver, polish)
    return with_fit_time(model, time.perf_counter() - t0)


def fit_svm_plus_rbf_rows(X, X_priv, y, C: float, gamma: float, kernel_gamma: float, priv_kernel_gamma: float, *,
                          tol: float = SMO_TOL, cache_mb: float = SMO_CACHE_MB, warm_start: SVMPlus | None = None,
                          warm_start_points=None) -> SVMPlus:
    """Train SVM+ with RBF kernels in both spaces by the decomposition solver, its kernel rows computed from the
    features on demand and kept in a cache of ``cache_mb`` per kernel: no l x l array, for training sets whose
    kernels do not fit in memory. The solution is the "smo" route's at ``tol``, not polished (the polish's dense
    solves are O(l^3)).

    Parameters
    ----------
    X : array-like of shape (l, d)
        Ordinary features.
    X_priv : array-like of shape (l, d~)
        Privileged features.
    y : array-like of shape (l,)
        Labels in {-1, +1}.
    C, gamma : float
        The SVM+ C and gamma, > 0.
    kernel_gamma, priv_kernel_gamma : float
        The RBF parameters of the two kernels, > 0.
    tol : float, default=SMO_TOL
        Stopping tolerance (the largest KKT violation, margin units).
    cache_mb : float, default=SMO_CACHE_MB
        Kernel rows kept, per kernel.
    warm_start, warm_start_points : SVMPlus and array-like of int, optional
        As in :func:`fit_svm_plus`: the solver starts from ``feasible_start`` of a neighbouring solution (another C,
        or more points: the positions of these among its own) instead of from a = 0, beta = C.

    Returns
    -------
    SVMPlus
        The model (``solver`` "smo"; ``iterations`` the solver's steps).

    Raises
    ------
    ValueError
        If the inputs are invalid.
    RuntimeError
        If the solver stops at its step limit.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    >>> model = svm_plus.fit_svm_plus_rbf_rows(X, X[:, :1] * y[:, None], y, 1.0, 1.0, 0.5, 1.0)
    >>> model.solver, bool(model.kkt_violation < 1e-2)
    ('smo', True)
    """
    X = check_features(X)
    X_priv = check_features(X_priv, name="X_priv")
    l = X.shape[0]
    if X_priv.shape[0] != l:
        raise ValueError(f"X_priv has {X_priv.shape[0]} rows but X has {l}: privileged features are needed for every"
                         " training point")
    y = check_labels(y, l)
    for name, value in (("C", C), ("gamma", gamma), ("kernel_gamma", kernel_gamma),
                        ("priv_kernel_gamma", priv_kernel_gamma), ("tol", tol), ("cache_mb", cache_mb)):
        if not (np.ndim(value) == 0 and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive finite scalar, got {value!r}")
    C, gamma = float(C), float(gamma)
    ridge = PRIV_RIDGE  # the RBF kernel's diagonal is 1
    if warm_start is None and warm_start_points is not None:
        raise ValueError("warm_start_points without warm_start")
    start = None if warm_start is None else _warm_start(warm_start, warm_start_points, y, C)
    t0 = time.perf_counter()
    model = _smo_solution(("rbf", X, float(kernel_gamma)), ("rbf", X_priv, float(priv_kernel_gamma)), y, C,
                          gamma, 1.0 / gamma, ridge / gamma, ridge, float(tol), float(cache_mb), start=start)
    return with_fit_time(model, time.perf_counter() - t0)


def _smo_solution(kernel, priv_kernel, y, C: float, gamma: float, priv_scale: float, priv_diag_add: float,
                  ridge: float, tol: float, cache_mb: float, start=None) -> SVMPlus:
    """The decomposition solver to ``tol`` on the kernels ``_native.svm_plus_solve`` takes (the privileged one
    entering as priv_scale K~ + priv_diag_add I, which is T), from ``start`` = (a, beta, Qa, Ta~), a feasible point
    and its gradient parts, continued in place; by default from a = 0, beta = C (a~ = 0: feasible for every
    problem). RuntimeError at its step limit."""
    l = y.size
    if start is None:
        start = np.zeros(l), np.full(l, C), np.zeros(l), np.zeros(l)  # Q a = T a~ = 0 there
    # (a, beta) alone: the solver computes Q a and T a~ from the rows of the start's nonzero a and a~
    have_grad = len(start) == 4
    alpha, beta, w, z = start if have_grad else (*start, np.empty(l), np.empty(l))
    b, b_tilde, n_iter, converged, violation, _, _ = _native.svm_plus_solve(
        kernel, priv_kernel, l, None, y, C, priv_scale, priv_diag_add, alpha, beta, w, z, have_grad, tol,
        SMO_MAX_ITER_PER_POINT * l, cache_mb)
    if not converged:
        raise RuntimeError(f"the SVM+ SMO solver stopped at its step limit ({n_iter} steps) with a KKT violation "
                           f"of {violation:.3g} (tol {tol:g})")
    return SVMPlus(alpha=alpha, alpha_tilde=alpha + beta - C, b=float(b), b_tilde=float(b_tilde), y=y, C=C,
                   gamma=gamma, decision_train=y * w + b, correcting_train=z + b_tilde, ridge=ridge, solver=SMO,
                   iterations=int(n_iter))


def feasible_start(model: SVMPlus, C: float, points=None) -> tuple[np.ndarray, np.ndarray]:
    """A feasible (a, beta) of the SVM+ dual at ``C`` on ``points`` (positions among ``model``'s training points;
    None: all of them), from ``model``'s solution: a start for the active-set methods (``SVMPlusProblem.exact_from``)
    that keeps the model's active bounds where it can.

    The dual's constraints in (a, beta) are a >= 0, beta >= 0, y'a = 0 and 1'(a + beta) = l' C (1'a~ = 0, l' points).
    Scaled by C / C_0, the model's own solution meets them all with the same bounds active; without some points
    (a CV fold, a leave-one-out refit) it misses the two sums by the left-out points' share. Each class's a is then
    scaled to the common sum s = (l' C - 1'beta) / 2 and beta to l' C - 2 s (s >= 0): a scaling keeps every zero a
    zero, so only a class (or beta) that sums to 0 where it must not gets its total spread evenly instead. On the
    model's own points it changes nothing but round-off.

    Parameters
    ----------
    model : SVMPlus
        A solution (any C).
    C : float
        The C of the problem to start.
    points : array-like of int, optional
        The problem's points among the model's.

    Returns
    -------
    (ndarray, ndarray)
        a and beta.

    Examples
    --------
    >>> import numpy as np
    >>> import wsvm_span as ws
    >>> from wsvm_span import svm_plus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2))
    >>> y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    >>> K, K_priv = ws.rbf_kernel(X, gamma=0.5), ws.rbf_kernel(y[:, None] * X[:, :1], gamma=1.0)
    >>> model = svm_plus.fit_svm_plus(K, K_priv, y, C=1.0, gamma=1.0)
    >>> a, beta = svm_plus.feasible_start(model, 2.0, np.arange(1, 30))
    >>> bool(abs(y[1:] @ a) < 1e-9 and abs((a + beta).sum() - 29 * 2.0) < 1e-9 and min(a.min(), beta.min()) >= 0)
    True
    """
    points = np.arange(model.n_train) if points is None else np.asarray(points, dtype=np.intp)
    scale = C / model.C
    a = scale * np.maximum(model.alpha[points], 0.0)
    # beta = C_0 + a~ - a rounds where the bound is active (a~ = a - C_0): its exact zeros are restored, as the
    # working sets are the bounds at which the point sits exactly
    beta = scale * np.where(model.beta <= ROUND_OFF_RTOL * model.C, 0.0, model.beta)[points]
    total = points.size * C
    y = model.y[points]
    share = max((total - beta.sum()) / 2.0, 0.0)
    for in_class in (y > 0, y < 0):
        a[in_class] = _scaled_to_sum(a[in_class], share)
    return a, _scaled_to_sum(beta, total - 2.0 * share)


def _scaled_to_sum(v: np.ndarray, total: float) -> np.ndarray:
    s = v.sum()
    if s > 0.0 or v.size == 0:
        return v * (total / s) if s > 0.0 else v
    return np.full(v.size, total / v.size)


def _warm_start(warm_start: SVMPlus, warm_start_points, y, C: float) -> tuple[np.ndarray, np.ndarray]:
    """``feasible_start`` of a caller's ``warm_start`` (on ``warm_start_points`` among its points), checked to be a
    solution on these points' labels."""
    points = (np.arange(warm_start.n_train) if warm_start_points is None
              else np.asarray(warm_start_points, dtype=np.intp))
    if points.shape != y.shape or not np.array_equal(warm_start.y[points], y):
        raise ValueError("warm_start was trained on other labels: it must be a solution on the same points, or "
                         "on more points with warm_start_points giving the positions of these among them")
    return feasible_start(warm_start, C, points)


@dataclass(frozen=True)
class ReducedSystem:
    """M z = rhs of ``SVMPlusProblem.reduced_system``; z = [a_F; a~_N; b; b~].

    J : points whose a~ moves with an unknown (F & B, then N); posJ : their positions in z.
    """

    M: np.ndarray
    rhs: np.ndarray
    F: np.ndarray
    N: np.ndarray
    J: np.ndarray
    posJ: np.ndarray

    @property
    def n(self) -> int:
        return int(self.F.size + self.N.size)


def privileged_ridge(diag_priv) -> float:
    """The ridge ``SVMPlusProblem.build`` adds to K~: ``PRIV_RIDGE`` times the mean of K~'s diagonal ``diag_priv``
    over the points trained on (1 where that is 0)."""
    scale = float(np.mean(diag_priv))
    return PRIV_RIDGE * (scale if scale > 0 else 1.0)


class SVMPlusProblem:
    """One SVM+ problem: Q = YKY, T = (K~ + ridge I) / gamma, labels, C; priv_diag: K~'s diagonal (the ridge of a
    subset of the points, ``active_set_on``)."""

    def __init__(self, K, Q, T, y, C, gamma, ridge, priv_diag):
        self.K, self.Q, self.T, self.y, self.C, self.gamma, self.ridge = K, Q, T, y, C, gamma, ridge
        self.priv_diag = priv_diag
        #: start sets (packed Z, B) whose polish failed on this problem, and why
        self.failed_polishes: dict[bytes, str] = {}

    @classmethod
    def build(cls, K, K_priv, y, C, gamma):
        ridge = privileged_ridge(np.diag(K_priv))
        T = K_priv / gamma
        T.flat[:: y.size + 1] += ridge / gamma
        Q = K * np.outer(y, y)
        return cls(K, Q, T, y, C, gamma, ridge, np.diag(K_priv).copy())

    # --- the "qp" route -----------------------------------------------------------
    def qp(self, qp_solver: str, polish: bool, prefix: str = "") -> SVMPlus:
        factors = self.low_rank_factors() if polish else (None, None)
        low_rank = None
        if factors[0] is not None or factors[1] is not None:
            try:
                low_rank = self.interior_point(qp_solver, factors)
                return self.polished(low_rank, f"{prefix}{low_rank.solver}-low-rank+{ACTIVE_SET}")
            except RuntimeError:  # not solved, or not polished (ActiveSetFailure): the dense QP decides
                pass
        try:
            raw = self.interior_point(qp_solver)
        except RuntimeError:
            # Clarabel stopped with InsufficientProgress on the dense QP of a W-toy problem (l = 200, C = 1024)
            # whose factored QP it solved: that solution is then the one kept, unpolished, if it satisfies the
            # true problem's KKT conditions to QP_KKT_TOL (checked below, as for the dense one).
            if low_rank is None:
                raise
            raw = replace(low_rank, solver=f"{low_rank.solver}-low-rank")
            why = "the dense QP was not solved, and the factored QP's solution not polished"
        else:
            if polish:
                try:
                    return self.polished(raw, f"{prefix}{raw.solver}+{ACTIVE_SET}")
                except ActiveSetFailure as exc:
                    why = str(exc)
        if polish:
            if _count_unpolished():
                warnings.warn(f"polishing the {raw.solver} SVM+ solution failed ({why}); keeping it unpolished:"
                              " its in-bound / bounded split is only accurate to the solver tolerance (further"
                              " ones in this process are counted, not repeated: unpolished_solutions())",
                              RuntimeWarning, stacklevel=3)
        if raw.kkt_violation > QP_KKT_TOL:
            raise RuntimeError(
                f"{raw.solver}'s SVM+ solution violates the KKT conditions by {raw.kkt_violation:.3g} "
                f"with b, b~ read from its equality multipliers ({raw.kkt_residuals()})"
            )
        return raw

    # --- the "smo" route ----------------------------------------------------------
    def smo(self, tol: float, polish: bool, start=None, qp_solver: str | None = None, first=None,
            tried: bool = False) -> SVMPlus:
        """The decomposition solver from a = 0, beta = C (a~ = 0: feasible for every problem). Where ``polish`` and
        l <= ``SMO_POLISH_MAX_L``, it stops early (``SMO_START_TOL``, ``SMO_START_MAX_ITER_PER_POINT``) and the
        active-set methods make its point exact (``exact_from``); with ``start``, a feasible (a, beta) of this
        problem (``feasible_start`` of a neighbouring solution), they first start from there (on bank_marketing's
        problems, from the next lower C of the grid, the median start was optimal at once). A point they do not
        make exact goes to the QP route (polished) where ``qp_solver`` names its solver ("auto" route), and is
        otherwise taken on by the decomposition solver to ``tol`` and kept there, as is every point without the
        polish (from ``start`` where there is one). ``first``: a known minimiser for the primal-dual method from
        ``start`` (``exact_from``, ``active_set``); ``tried``: that method's try from ``start`` was made and failed
        (the exact LOO makes it in place on the full problem's matrices, ``active_set_on``)."""
        l, C, y = self.y.size, self.C, self.y
        name = f"{SMO}+{ACTIVE_SET}"
        polishing = polish and l <= SMO_POLISH_MAX_L
        kernels = ("precomputed", np.ascontiguousarray(self.K)), ("precomputed", np.ascontiguousarray(self.T))
        if start is not None:
            if not polishing:
                return _smo_solution(*kernels, y, C, self.gamma, 1.0, 0.0, self.ridge, tol, SMO_CACHE_MB,
                                     start=tuple(v.copy() for v in start))
            exact = self.exact_from(*start, name, first=first, tried=tried)
            if exact is not None:
                return exact
        alpha, beta, w, z = np.zeros(l), np.full(l, C), np.zeros(l), np.zeros(l)  # w = Q a, z = T a~ at that start
        if polishing:
            # beta as the solver leaves it, not C + a~ - a: a bound it reached is an exact 0, which that sum need not
            # give back
            _native.svm_plus_solve(*kernels, l, None, y, C, 1.0, 0.0, alpha, beta, w, z, True, SMO_START_TOL,
                                   SMO_START_MAX_ITER_PER_POINT * l, SMO_CACHE_MB)
            exact = self.exact_from(alpha, beta, name)
            if exact is not None:
                return exact
            if qp_solver is not None:
                return self.qp(qp_solver, polish, prefix=f"{SMO}->")
        return _smo_solution(*kernels, y, C, self.gamma, 1.0, 0.0, self.ridge, tol, SMO_CACHE_MB,
                             start=(alpha, beta, w, z))

    def exact_from(self, alpha, beta, name: str, first=None, tried: bool = False) -> SVMPlus | None:
        """The exact solution from a feasible point (its exact zeros are its active bounds), or None: the primal-dual
        method from its active sets, block pivots only, for up to ``ACTIVE_SET_TRY_MAX_ITER`` iterations (with
        ``first`` its known minimiser on some sets, as in ``active_set``; ``tried``: made already, and failed), and
        where that fails the primal method from the point (``primal_active_set``). The primal-dual method changes
        many bounds per dense solve where it converges, the primal one a bound per (cheaper) iteration: which is
        faster depends on the problem (measured at ``ACTIVE_SET_TRY_MAX_ITER``)."""
        if not tried:
            try:
                return self.active_set(alpha == 0.0, beta == 0.0, name, max_iter=ACTIVE_SET_TRY_MAX_ITER, first=first)
            except ActiveSetFailure:
                pass
        return self.primal_active_set(alpha.copy(), beta.copy(), name,
                                      PRIMAL_ACTIVE_SET_MAX_ITER_PER_POINT * self.y.size)

    def primal_active_set(self, alpha, beta, name: str, max_iter: int) -> SVMPlus | None:
        """The primal active-set method (Nocedal and Wright, Numerical Optimization, 2nd ed., Algorithm 16.3) in
        x = [a; beta] from a feasible point: the working set holds the bounds at which the point sits (a_i = 0,
        beta_i = 0); each iteration minimises the dual on that face and steps towards the minimiser as far as
        feasibility allows, adding the bound that stops it; at the face's minimiser it drops the bound with the
        most negative multiplier (mu_i for a_i = 0, xi_i for beta_i = 0), or stops where none is below
        -``RELEASE_TOL``. F never increases, and one bound changes per iteration, so unlike the primal-dual method it
        does not cycle on degenerate problems (a_i and mu_i both ~0: bank_marketing's, where that method failed on
        nearly every model from the QP's rounded sets and from the decomposition solver's). As one bound changes,
        the face's KKT system loses or gains one row and column: its QR factorization is updated (``FaceSystem``),
        O(n^2) per iteration where a fresh solve costs O(n^3). None where ``max_iter`` runs out or the end point
        fails the KKT check."""
        C, y, l = self.C, self.y, self.y.size
        x = np.concatenate([alpha, beta])
        face = FaceSystem(self, np.flatnonzero(x != 0.0))
        dropped = -1  # the bound dropped last: re-added at once by a zero step, the method would go round
        for iteration in range(1, max_iter + 1):
            x_face, b, b_tilde = face.minimiser()
            d = x_face - x
            with np.errstate(divide="ignore", invalid="ignore"):
                room = np.where(d < 0, x / -d, np.inf)
            k = int(np.argmin(room))
            if room[k] < 1.0:
                if room[k] == 0.0 and k == dropped:
                    # the face minimiser is no descent along the dropped bound (a singular face, whose least-squares
                    # solution is not a minimiser): give up rather than cycle
                    return None
                x = np.maximum(x + room[k] * d, 0.0)
                x[k] = 0.0
                face.fix(k)
                continue
            x = x_face
            alpha, beta = x[:l], x[l:]
            xi = self.T @ (alpha + beta - C) + b_tilde
            mu = self.Q @ alpha + b * y - 1.0 + xi
            multipliers = np.where(face.fixed, np.concatenate([mu, xi]), np.inf)
            k = int(np.argmin(multipliers))
            if multipliers[k] >= -RELEASE_TOL:
                model = self.model(alpha, alpha + beta - C, b, b_tilde, name, iteration)
                if model.kkt_violation > KKT_TOL:
                    # the face solve's forward error (condition ~1 / PRIV_RIDGE): mu_i of a free a_i ~ C far from 0
                    # is ~1e-9, a_i mu_i / C above KKT_TOL (w_mixture 1:2, l = 400, C = 2^10, gamma = 2^-4); one
                    # step of iterative refinement (the residual of M formed anew) takes it to round-off
                    x, b, b_tilde = face.minimiser(refine=True)
                    model = self.model(x[:l], x[:l] + x[l:] - C, b, b_tilde, name, iteration)
                return model if model.kkt_violation <= KKT_TOL else None
            face.free(k)
            dropped = k
        return None


    def interior_point(self, qp_solver: str, factors=(None, None)) -> SVMPlus:
        """The QP switch's solution of the dual (RuntimeError if it was not solved). ``factors`` = (L, L~), each
        None or a factor (YKY = YLL'Y, T - ridge I / gamma = L~L~'): a factored block's quadratic term is
        written in the factor's coordinates, v = L'Ya and u = L~'a~ (equality rows), as 1/2 ||v||^2 and
        1/2 ||u||^2 + ridge / (2 gamma) ||a~||^2 (the same QP up to the factor's error). Variables
        z = [a; a~; v; u] / C.
        """
        l, C, y = self.y.size, self.C, self.y
        L, L_priv = factors
        r = 0 if L is None else L.shape[1]
        r_priv = 0 if L_priv is None else L_priv.shape[1]
        n = 2 * l + r + r_priv
        P = np.zeros((n, n))
        A_eq = np.zeros((2 + r + r_priv, n))
        A_eq[0, :l] = y
        A_eq[1, l:2 * l] = 1.0
        A_eq[2:, 2 * l:] = np.eye(r + r_priv)
        if L is None:
            P[:l, :l] = self.Q
        else:
            A_eq[2:2 + r, :l] = -(L * y[:, None]).T
        if L_priv is None:
            P[l:2 * l, l:2 * l] = self.T
        else:
            P[np.arange(l, 2 * l), np.arange(l, 2 * l)] = self.ridge / self.gamma
            A_eq[2 + r:, l:2 * l] = -L_priv.T
        P[np.arange(2 * l, n), np.arange(2 * l, n)] = 1.0
        # Solved in x / C: the box becomes 0 <= a_i <= 1 + a~_i whatever C is (unscaled, Clarabel stopped
        # with NumericalError at C = 64 on the W toy, and converged scaled). For the scaled problem
        # min 1/2 z'Pz + q'z / C, stationarity times C is the original one, so the multipliers are C nu
        # (with or without factors: their rows only rename the quadratic term).
        q = np.zeros(n)
        q[:l] = -1.0 / C
        lb = np.full(n, -np.inf)
        lb[:l] = 0.0
        # a_i - a~_i <= C; with a >= 0 it also gives a~_i >= -C.
        G = np.zeros((l, n))
        G[:, :l] = np.eye(l)
        G[:, l:2 * l] = -np.eye(l)
        res = solve_qp(P, q, A_eq, np.zeros(A_eq.shape[0]), lb=lb, solver=qp_solver, G=G, h=np.ones(l), tol=QP_TOL)
        if res.status != "optimal":
            raise RuntimeError(f"the SVM+ dual QP was not solved by {res.solver}: {res.status}")
        b, b_tilde = C * res.eq_dual[:2]
        return self.model(C * res.x[:l], C * res.x[l:2 * l], b, b_tilde, res.solver, 0)

    def polished(self, raw: SVMPlus, name: str) -> SVMPlus:
        """The active-set method started from an interior point's rounded active sets, and where its block pivots
        fail, started again from them with single pivots (``POLISH_MAX_ITER``). An interior point keeps each
        complementary pair apart: the active member of a pair is orders of magnitude below the other (both in
        units of C), so comparing them rounds better than any fixed threshold on one of them."""
        C = self.C
        Z = raw.alpha / C < np.maximum(raw.margin_slack, 0.0)
        B = raw.beta / C < np.maximum(raw.correcting_train, 0.0)
        return self.polished_from_sets(Z, B, name)

    def polished_from_sets(self, Z, B, name: str) -> SVMPlus:
        """The active-set method from the sets Z (a_i = 0), B (beta_i = 0), with block pivots, then single ones."""
        # The polish is a function of its start sets alone: where the dense interior point rounds to the sets whose
        # polish already failed from the factored one (most refits of an unpolished model's exact LOO), it would
        # fail again, iteration for iteration; so it is not run again (two such bank_marketing models' exact LOO:
        # 1.19x and 1.38x cheaper, every refit the same, docs/experiments.md).
        start = np.packbits(Z).tobytes() + np.packbits(B).tobytes()
        if start in self.failed_polishes:
            raise ActiveSetFailure(self.failed_polishes[start])
        try:
            return self.active_set(Z, B, name)
        except ActiveSetFailure:
            try:
                return self.active_set(Z, B, name, max_iter=POLISH_MAX_ITER, block_backup=0)
            except ActiveSetFailure as exc:
                self.failed_polishes[start] = str(exc)
                raise

    def low_rank_factors(self):
        """(L, L~): pivoted-Cholesky factors of K and of T - ridge I / gamma to ``LOW_RANK_RTOL``, each None
        where its rank exceeds ``LOW_RANK_MAX_SHARE`` of l (that block stays dense); both None below
        ``LOW_RANK_MIN_L``."""
        l = self.y.size
        if l < LOW_RANK_MIN_L:
            return None, None
        max_rank = int(LOW_RANK_MAX_SHARE * l)
        T0 = self.T.copy()
        T0.flat[:: l + 1] -= self.ridge / self.gamma
        return pivoted_cholesky(self.K, LOW_RANK_RTOL, max_rank), pivoted_cholesky(T0, LOW_RANK_RTOL, max_rank)

    # --- the "active-set" route ---------------------------------------------------
    def active_set(self, Z, B, name: str, max_iter: int = MAX_ACTIVE_SET_ITER,
                   block_backup: int = BLOCK_BACKUP, first=None) -> SVMPlus:
        """Primal-dual active-set iterations from the guess (Z: a_i = 0, B: beta_i = 0) (``active_set_on`` of all
        the points), as a model; ``ActiveSetFailure`` where they cycle, run out of ``max_iter`` or end in a KKT
        violation above ``KKT_TOL``."""
        a, a_tilde, b, b_tilde, iterations = self.active_set_on(None, Z, B, max_iter, block_backup, first)
        return self.model(a, a_tilde, b, b_tilde, name, iterations)

    def active_set_on(self, points, Z, B, max_iter: int = MAX_ACTIVE_SET_ITER,
                      block_backup: int = BLOCK_BACKUP, first=None, bordered=None):
        """The primal-dual active-set method on the problem of ``points`` (None: all), the one
        ``SVMPlusProblem.build`` makes of their kernels, read in place from this problem's Q and T
        (``_native.svm_plus_active_set``, csrc/svm_plus_active_set.c): a leave-one-out refit's matrices are not
        cut. From the guess Z (a_i = 0), B (beta_i = 0) over ``points``; ``first`` = (Z', B', (a, a~, b, b~)): a
        minimiser on the sets Z', B' already known, taken instead of solving them where an iteration meets them (the
        exact LOO's first iteration; where the solution it ends in fails the KKT check, its sets are solved once
        more). ``bordered``: the full model's bordering where ``points`` are its points but one
        (``loo.BorderedSystem``: ``native(p)``, and its counts ``served`` and ``refused``, updated here), each
        iteration's minimiser from it where its Schur complement is well conditioned.

        Each iteration solves the equality-constrained QP its sets leave (``reduced_system``, a symmetric
        indefinite system: LAPACK's dsysv, least squares by dgelsd where singular, as ``solve_symmetric``) and
        updates the guess: an active bound is released where its multiplier (mu_i of a_i = 0, xi_i of beta_i = 0)
        is below -``RELEASE_TOL``, a free variable fixed where it left its bound by more than ``KKT_TOL`` C. Block
        principal pivoting safeguard (Judice and Pires, Comput. Oper. Res. 21, 1994; Kim and Park, SIAM J. Sci.
        Comput. 33, 2011): all wrong guesses are flipped at once while their number keeps falling, or for
        ``block_backup`` more tries; then only the last one (Murty's single pivot), which ends the cycling that
        full block updates show on problems whose reduced Hessian is not an M-matrix. A state seen after an
        earlier flip ends it (a cycle). It stops where no guess is contradicted and every KKT residual
        (``SVMPlus.kkt_residuals``, a clipped at 0) is at most ``KKT_TOL``.

        Returns (a, a~, b, b~, iterations) over ``points``; raises ``ActiveSetFailure`` where it cycles, runs out of
        ``max_iter`` or converges to sets whose solution violates the KKT conditions.
        """
        if points is None:
            idx, y, T_diag = None, self.y, np.diag(self.T).copy()
        else:
            idx = np.asarray(points, dtype=np.int64)
            y = self.y[idx]
            # T's diagonal on the points, as ``build`` computes it for them (K~ / gamma, then ridge / gamma added): the
            # ridge is a share of the mean K~ diagonal of the points trained on, the same as the full problem's only
            # where that diagonal is even (RBF); off the diagonal T is the full problem's
            T_diag = self.priv_diag[idx] / self.gamma
            T_diag += privileged_ridge(self.priv_diag[idx]) / self.gamma
        Z, B = np.array(Z, dtype=np.uint8), np.array(B, dtype=np.uint8)
        if first is None:
            known = known_Z = known_B = None
        else:
            known_Z, known_B = np.asarray(first[0], dtype=np.uint8), np.asarray(first[1], dtype=np.uint8)
            known = np.concatenate([*first[2][:2], first[2][2:]])
        native_bordering = None
        if bordered is not None:
            left_out = np.setdiff1d(np.arange(self.y.size), idx)
            native_bordering = bordered.native(int(left_out[0])) if left_out.size == 1 else None
        a, a_tilde, b, b_tilde, iterations, status, violation, _, served, refused = _native.svm_plus_active_set(
            np.ascontiguousarray(self.Q), np.ascontiguousarray(self.T), T_diag, idx, y, self.C, Z, B, known, known_Z,
            known_B, max_iter, block_backup, RELEASE_TOL, KKT_TOL, native_bordering)
        if bordered is not None:
            bordered.served += served
            bordered.refused += refused
        outcome = _native.ACTIVE_SET_STATUS[status]
        if outcome == "converged":
            return a, a_tilde, b, b_tilde, iterations
        if outcome == "lstsq":
            raise np.linalg.LinAlgError("SVD did not converge in Linear Least Squares")
        raise ActiveSetFailure({"cycle": f"active sets cycle after {iterations} iterations",
                                "max_iter": f"no convergence in {max_iter} iterations",
                                "kkt": f"converged sets violate KKT by {violation:.3g}"}[outcome])


    def reduced_system(self, Z, B) -> ReducedSystem:
        """KKT system of the dual restricted to the active sets Z (a_i = 0), B (beta_i = 0).

        Unknowns z = [u; v; b; b~]: u = a_F (F = not Z), v = a~_N (N = not B). a~ is u - C
        on F & B, v on N and -C on Z & B. The matrix is [[H, A'], [A, 0]] with H = Q_FF on
        u plus T restricted to the a~'s that move with an unknown, A the rows of y'a = 0
        and 1'a~ = 0; the last two unknowns are the equality multipliers, i.e. b and b~.
        """
        Q, T, y, C = self.Q, self.T, self.y, self.C
        F = np.flatnonzero(~Z)
        N = np.flatnonzero(~B)
        FB = np.flatnonzero(~Z & B)
        nF, nN = F.size, N.size
        n = nF + nN
        J = np.concatenate([FB, N])
        posJ = np.concatenate([np.searchsorted(F, FB), nF + np.arange(nN)])
        M = np.zeros((n + 2, n + 2))
        M[:nF, :nF] = Q[np.ix_(F, F)]
        M[np.ix_(posJ, posJ)] += T[np.ix_(J, J)]
        M[n, :nF] = M[:nF, n] = y[F]
        M[n + 1, posJ] = M[posJ, n + 1] = 1.0
        rhs = np.zeros(n + 2)
        rhs[:nF] = 1.0
        # the fixed part -C of a~ on B enters the gradient of the a~ term as T_JB (-C 1)
        rhs[posJ] += C * (T[J] @ B.astype(float))
        rhs[n + 1] = C * np.count_nonzero(B)
        return ReducedSystem(M=M, rhs=rhs, F=F, N=N, J=J, posJ=posJ)

    def model(self, a, a_tilde, b, b_tilde, solver: str, iterations: int) -> SVMPlus:
        y = self.y
        return SVMPlus(
            alpha=a, alpha_tilde=a_tilde, b=float(b), b_tilde=float(b_tilde), y=y, C=self.C,
            gamma=self.gamma, decision_train=y * (self.Q @ a) + b,
            correcting_train=self.T @ a_tilde + b_tilde, ridge=self.ridge, solver=solver,
            iterations=iterations,
        )



class FaceSystem:
    """The KKT system of the SVM+ dual on one face of its bounds, in x = [a; beta] (2l variables, a~ = a + beta - C):

        min 1/2 x'Hx + q'x  s.t.  Ax = c,  x_k = 0 for the fixed k,

    H = [[Q + T, T], [T, T]], q = -[1 + C T1; C T1], A = [[y', 0], [1', 1']], c = [0; lC] (1'a~ = 0). On the free
    set S its matrix is M = [[0, A_S], [A_S', H_SS]] and M [nu; x_S] = [c; -q_S] gives the face's minimiser and the
    equality multipliers nu, which are b and b~ (stationarity in a: Qa + Ta~ - 1 + b y + b~ = mu; in beta:
    Ta~ + b~ = xi). M is kept as its QR factorization, updated by Givens rotations (``scipy.linalg.qr_insert``,
    ``qr_delete``) when a variable is freed (a row and a column appended) or fixed (its row and column deleted):
    backward stable like a fresh factorization, where updating M's inverse by bordering lost up to 8 digits on
    bank_marketing's faces (docs/experiments.md)."""

    def __init__(self, problem: SVMPlusProblem, free):
        self.problem = problem
        l = problem.y.size
        self.fixed = np.ones(2 * l, dtype=bool)
        self.fixed[free] = False
        self.order = np.asarray(free, dtype=np.intp)  # the variable of each row of M after the two of A
        T1 = problem.T.sum(axis=1)
        self.q = -np.concatenate([1.0 + problem.C * T1, problem.C * T1])
        self.c = np.array([0.0, l * problem.C])
        self.orthogonal, self.triangular = sla.qr(self.matrix(), check_finite=False)

    def entries(self, k: int, rows) -> np.ndarray:
        """M's entries of variable k on the variables ``rows``: H[rows, k]."""
        problem, l = self.problem, self.problem.y.size
        i = k % l
        column = problem.T[rows % l, i]
        if k < l:
            column = column + np.where(rows < l, problem.Q[rows % l, i], 0.0)
        return column

    def constraint(self, k: int) -> np.ndarray:
        """A's column of variable k: (y_i, 1) for a_i, (0, 1) for beta_i."""
        l = self.problem.y.size
        return np.array([self.problem.y[k] if k < l else 0.0, 1.0])

    def matrix(self) -> np.ndarray:
        """M formed anew from Q and T (the factorization's start, the least-squares fallback, the refinement)."""
        problem, l, order = self.problem, self.problem.y.size, self.order
        n = order.size
        points, is_alpha = order % l, order < l
        M = np.zeros((n + 2, n + 2))
        M[2:, 2:] = problem.T[np.ix_(points, points)]
        M[2:, 2:] += np.where(np.outer(is_alpha, is_alpha), problem.Q[np.ix_(points, points)], 0.0)
        M[0, 2:] = M[2:, 0] = np.where(is_alpha, problem.y[points], 0.0)
        M[1, 2:] = M[2:, 1] = 1.0
        return M

    def free(self, k: int) -> None:
        """Drop the bound x_k = 0: M gains the row and column of x_k, appended."""
        n = self.order.size + 2
        column = np.concatenate([self.constraint(k), self.entries(k, self.order)])
        self.orthogonal, self.triangular = sla.qr_insert(self.orthogonal, self.triangular, column, n, which="col",
                                                         check_finite=False)
        row = np.concatenate([column, self.entries(k, np.array([k]))])
        self.orthogonal, self.triangular = sla.qr_insert(self.orthogonal, self.triangular, row, n, which="row",
                                                         check_finite=False)
        self.order = np.append(self.order, k)
        self.fixed[k] = False

    def fix(self, k: int) -> None:
        """Add the bound x_k = 0: M loses the row and column of x_k."""
        position = 2 + int(np.flatnonzero(self.order == k)[0])
        self.orthogonal, self.triangular = sla.qr_delete(self.orthogonal, self.triangular, position, 1, which="row",
                                                         check_finite=False)
        self.orthogonal, self.triangular = sla.qr_delete(self.orthogonal, self.triangular, position, 1, which="col",
                                                         check_finite=False)
        self.order = np.delete(self.order, position - 2)
        self.fixed[k] = True

    def minimiser(self, refine: bool = False):
        """(x, b, b~): the face's minimiser (zero on the fixed variables) and the equality multipliers. Where M is
        singular to working precision (duplicate free points, a linear kernel with more free points than features,
        no in-bound SV to pin b) the least-squares solution of ``solve_symmetric``: any solution of the consistent
        system serves. ``refine``: one step of iterative refinement, its residual from M formed anew."""
        rhs = np.concatenate([self.c, -self.q[self.order]])
        diagonal = np.abs(np.diag(self.triangular))
        if diagonal.min() > SINGULAR_RTOL * diagonal.max():
            z = sla.solve_triangular(self.triangular, self.orthogonal.T @ rhs, check_finite=False)
            if refine:
                z += sla.solve_triangular(self.triangular, self.orthogonal.T @ (rhs - self.matrix() @ z),
                                          check_finite=False)
        else:
            z = solve_symmetric(self.matrix(), rhs)
        x = np.zeros(self.fixed.size)
        x[self.order] = z[2:]
        return x, float(z[0]), float(z[1])


def pivoted_cholesky(K, rtol: float, max_rank: int):
    """L (l x r) with K - LL' positive semidefinite and its diagonal below rtol * max K_ii (LAPACK dpstrf),
    or None when r would exceed max_rank."""
    if max_rank < 1:
        return None
    U, piv, rank, info = sla.lapack.dpstrf(K, lower=0, tol=rtol * float(np.max(np.diag(K))))
    if info < 0 or rank > max_rank:
        return None
    L = np.empty((K.shape[0], rank))
    L[piv - 1] = np.triu(U[:rank]).T
    return L


def solve_symmetric(M, rhs):
    """Solve a symmetric indefinite KKT system; least squares when it is singular (duplicate free
    points, a linear kernel with more free points than features, no in-bound SV to pin b), where the
    solution is not unique and any solution of the consistent system serves (the quantities read from
    it, f and its derivatives, are the same for all)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            return sla.solve(M, rhs, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, sla.LinAlgWarning):
        return sla.lstsq(M, rhs, check_finite=False)[0]


def with_fit_time(model: SVMPlus, seconds: float) -> SVMPlus:
    """``model`` with ``fit_time`` set."""
    return replace(model, fit_time=seconds)


def _check_inputs(K, K_priv, y, C, gamma, solver, check_input):
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    for name, value in (("C", C), ("gamma", gamma)):
        if not (np.ndim(value) == 0 and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive finite scalar, got {value!r}")
    if not check_input:
        return K, K_priv, np.asarray(y, dtype=float)
    K = check_kernel(K)
    K_priv = check_kernel(K_priv, name="K_priv")
    if K_priv.shape != K.shape:
        raise ValueError(
            f"K_priv has shape {K_priv.shape} but K has {K.shape}: both are kernels of the same"
            " l training points (privileged features are needed for every training point)"
        )
    y = check_labels(y, K.shape[0])
    # the dual is convex only for kernels: the solvers would otherwise stop anywhere, or at their limits
    check_positive_semidefinite(K)
    check_positive_semidefinite(K_priv, name="K_priv")
    return K, K_priv, y
