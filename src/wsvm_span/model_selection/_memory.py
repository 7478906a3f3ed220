"""The memory a ``SpanSearchCV`` search takes, known before it allocates any of it (issue 45).

``search_memory`` adds up the arrays a search holds at its peak from the problem's sizes and the search's
settings alone (nothing is trained or allocated), each term naming the array it counts and its size;
``SpanSearchCV.fit`` compares the total with ``max_memory`` (by default the memory available to the process:
``utils.environment.available_memory``) and refuses, with ``SearchMemoryError``, before it computes any kernel.

What a search holds (l training points, d features, m held-out rows, 8-byte doubles; ``_search`` and the
estimates it calls, read and measured):

- for the whole search: its copy of X (``X[keep]``), the squared distances (RBF kernels) and the inner products
  (linear, poly, sigmoid), l x l each, with their held-out blocks (m x l);
- per kernel in memory (one, whose buffer every kernel is written into, or one per thread when ``n_jobs`` threads
  take a kernel each: ``parallel_plan``): the training kernel (l x l), its held-out block (m x l) and, for
  ``cv_error``, the CV folds' kernels (``FoldKernels``: about (k-1)^2 / k l^2 doubles for k folds);
- per thread at work: the trainer's row cache (SMO keeps one per thread, up to ``LIBSVM_CACHE_MB``), the models
  (vectors of l) and the one grid point's estimates, whose arrays grow as the square of its in-bound support
  vectors n* (the span-rule's factorization of their kernel, the exact LOO's bordered inverse and its rank-one
  updates, the span bound's box QPs) or of the machine's points (a one-vs-one machine's kernel slice);
- per kernel, before its points: the span bound's enclosing ball (a QP whose working set can grow to every
  point, through Clarabel's dense KKT factorization), and the row blocks of the kernels' temporaries.

n* is not known before training: the estimate takes the worst case, every point of the largest machine an
in-bound support vector (it happens: at grid.py's largest gamma and C on [0, 1]-scaled data every point is one),
so the estimate is an upper bound, tight at such grid points and loose (by the estimates' terms) where every
model has few in-bound SVs. The factors of n*^2 below were measured as the high-water mark of the resident size
(VmHWM) around one call at n* = l = 2,000 and 3,000 with every point in-bound (RBF gamma = 10, C = 1000) and
around the multiclass calls at machines of 2,000 points; docs/selecting.md, "Memory and progress", has the
whole search measured against the estimate (``benchmarks/bench_search_memory.py``).

With a row cache (``SpanSearchCV(cache_size=...)``, or chosen when the whole kernel does not fit: ``cache_mb``) no
l x l array is held: the copy of X and its squared norms, the row cache (``kernels.cache_rows`` rows of l doubles
per kernel in memory), the trainer's active-set slots (its largest one-vs-one machine's) and the models (a
one-vs-one model's decision values are machines x l; the binary CV folds' starts), for ``cv_error`` on more classes
the fold's own row cache on its training points, the blocks of kernel entries that the estimates, the gradients, the
CV folds' and the held-out errors are computed in (at most ``_BLOCK_ELEMENTS`` entries each, three such arrays at
once). A grid point's span-rule grows as the square of its in-bound SVs n*, which is known only
after training: the estimate counts its blocks at n* = 0 (``ROW_SPAN_BLOCK``), and each point checks its own
(``row_point_bytes``; the exact LOO's margin system, ``row_loo_bytes``) against what the limit leaves beside the
search's terms, before it allocates (``SearchMemoryError``, that point scored ``error_score``).

The refit (``best_estimator_``: LIBSVM on the features) runs after the search's arrays are released: its row cache
(floats, at most 4 l^2 bytes) and its copy of the support vectors' features are a phase of their own, counted
when they are the larger.

Not counted: what a callable kernel allocates besides the Gram block it returns, and the Nadaraya-Watson weights
(grid keys ``nw_*``), whose l x l kernel per bandwidth is computed while the grid is resolved, before the check
(and freed before the search's kernels are built).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wsvm_span.engines import get_engine
from wsvm_span.engines.base import LIBSVM_CACHE_MB
from wsvm_span.kernels import _BLOCK_ELEMENTS, PRODUCT_KERNELS, cache_rows
from wsvm_span.span.estimates import SPAN_BLOCK_ROWS
from wsvm_span.resampling import FoldKernels
from wsvm_span.utils.environment import available_memory

from ._grid import FREE_CRITERIA

__all__ = ["AVAILABLE", "MB", "MemoryTerm", "SearchMemory", "SearchMemoryError", "check_memory", "check_point_memory",
           "memory_limit", "parallel_plan", "row_loo_bytes", "row_point_bytes", "search_memory",
           "svm_plus_search_memory"]

#: bytes in the MB of ``max_memory`` and of the messages (2^20: what the resident-size counters count in)
MB = 2**20
#: bytes of a double
DOUBLE = 8
#: ``max_memory``'s default: the memory available to the process when the search starts
AVAILABLE = "available"
#: the criteria that need the least memory: the span-rule (what the refusal suggests) and the free ones
LEAST_CRITERIA = frozenset({"span_rule", *FREE_CRITERIA})
#: peaks of one grid point's estimates in doubles per n*^2 (n* in-bound SVs: the worst case, every point of the
#: largest machine), measured (VmHWM) at n* = 2,000 and 3,000: the span-rule (its in-bound SVs' kernel, the
#: coincident-point test's temporaries, the Cholesky factor and its inverse) 3.42; the span bound's
#: ``analyse_spans`` (the same factorization kept while the box-constrained QPs slice and solve theirs; with a
#: one-vs-one machine, the slice of its SVs' kernel too) 5.6-8.8; the exact LOO's margin-system starts of a
#: warm-started trainer (the bordered inverse and its rank-one updates) 6.3-6.5
SPAN_RULE_SQUARES = 3.5
SPAN_BOUND_SQUARES = 9.0
LOO_SQUARES = 6.5
#: the span bound's enclosing ball, per kernel (or per one-vs-one machine, with its kernel slice), in doubles per
#: n^2 of its points: measured 10.6-11.0 with every point on the ball (the working-set QP then takes them all)
BALL_SQUARES = 11.5
#: doubles per training point and machine of what a thread keeps of its models (alpha, f, the margins, the
#: walk's previous model and the CV folds' starts): a bound, small beside any l^2 term
MODEL_DOUBLES = 32
#: a row cache's kernel blocks held at once (``RBFRows.block`` and ``expansion``: the block, the squared
#: distances it is computed in and the sum of the squared norms added to them)
ROW_BLOCKS = 3
#: the span-rule from the SVs' kernel blocks (``span_rule_from_svs``) in doubles per (n* + SPAN_BLOCK_ROWS)^2: each
#: block's kernel, its two off-diagonal pieces and the bordered system's solve beside the n* x n* factorization
#: (SPAN_RULE_SQUARES n*^2)
ROW_SPAN_BLOCK = 4.0
#: bytes resident beyond the arrays: memory freed but kept by the allocator (glibc gives the top of its heap back
#: only above twice its mmap threshold, which rises to 32 MB after the search's 32 MB row blocks: up to 64 MB) and
#: the modules a search imports on first use (1-4 MB over the arrays on 300-point searches; 37 MB over them at
#: 10,000 points with every array at its largest)
SLACK = 64 * MB


@dataclass(frozen=True)
class _Trainer:
    """What one engine allocates to train a problem of n points on a precomputed kernel: its row cache
    (``row_bytes`` per kernel entry, at most LIBSVM_CACHE_MB), kept by each thread between trainings
    (``per_thread``, SMO's) or allocated per training (LIBSVM's); and ``scratch_bytes`` per kernel entry beside
    it, per training (measured at n = 2,000: LIBSVM's node lists of the official binding 28, the path engine's
    exact re-solve on the margin system 24)."""

    row_bytes: int
    per_thread: bool
    scratch_bytes: int = 0

    def cache(self, n: int) -> int:
        return min(LIBSVM_CACHE_MB * MB, self.row_bytes * n * n)

    def training(self, n: int) -> int:
        """Bytes one training allocates and frees."""
        return (0 if self.per_thread else self.cache(n)) + self.scratch_bytes * n * n


#: by the engine's registry name (``get_engine(name).name``): SMO's rows are doubles, LIBSVM's floats
TRAINERS = {"smo": _Trainer(8, True), "sklearn": _Trainer(4, False), "path": _Trainer(4, False, 24),
            "libsvm": _Trainer(4, False, 28)}


@dataclass(frozen=True)
class MemoryTerm:
    """One array (or group of arrays) of a search: what it is, and its bytes."""

    name: str
    nbytes: int


@dataclass(frozen=True)
class SearchMemory:
    """A search's memory: its terms at the search's peak and at the refit's; ``nbytes`` is the larger sum.

    Attributes
    ----------
    search, refit : tuple of MemoryTerm
        The terms of the search (kernels, estimates) and of the refit that follows it.
    """

    search: tuple[MemoryTerm, ...]
    refit: tuple[MemoryTerm, ...]

    @property
    def nbytes(self) -> int:
        return max(sum(t.nbytes for t in self.search), sum(t.nbytes for t in self.refit))

    @property
    def mb(self) -> float:
        return self.nbytes / MB

    def summary(self, most: int = 4) -> str:
        """"1,234 MB: <the largest terms of the larger phase, MB each>"."""
        terms = self.search if sum(t.nbytes for t in self.search) >= sum(t.nbytes for t in self.refit) else self.refit
        shown = sorted((t for t in terms if t.nbytes), key=lambda t: -t.nbytes)[:most]
        return f"{_mb(self.nbytes)}: " + ", ".join(f"{t.name} {_mb(t.nbytes)}" for t in shown)


class SearchMemoryError(MemoryError):
    """A search refused before it allocates: its memory estimate exceeds ``max_memory`` (a ``MemoryError``, so that
    a job runner retries it with more memory, as after a real one). The message names the estimate, its largest
    terms, the limit and what would need less.

    Examples
    --------
    >>> import numpy as np
    >>> from wsvm_span.model_selection import SearchMemoryError, SpanSearchCV
    >>> X = np.random.default_rng(0).normal(size=(3000, 4))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> try:
    ...     SpanSearchCV(max_memory=100).fit(X, y)
    ... except SearchMemoryError as refused:
    ...     print(str(refused).split(":")[0])
    SpanSearchCV would need about 330 MB
    """


def _mb(nbytes: float) -> str:
    mb = nbytes / MB
    return f"{mb:,.1f} MB" if mb < 10 else f"{mb:,.0f} MB"


def parallel_plan(n_jobs: int, n_kernels: int, walks: int) -> tuple[bool, int, int]:
    """How a search spreads over ``n_jobs`` threads: (across kernels, kernels in memory at once, threads per kernel).

    Across the kernels when there are at least n_jobs of them (each thread computes its own kernel: n_jobs kernels
    in memory), else over the walks of one kernel at a time (one kernel, shared by up to n_jobs threads, no more
    than its ``walks``: the most of any kernel).
    """
    across = n_jobs > 1 and n_kernels >= n_jobs
    return across, n_jobs if across else 1, 1 if across else max(1, min(n_jobs, walks))


def search_memory(l: int, d: int, *, class_sizes=None, heldout: int = 0, kernels=frozenset({"rbf"}),
                  n_kernels: int = 1, walks: int = 1, n_jobs: int = 1, criteria=("span_rule",), cv_folds=5,
                  engine: str = "smo", sparse: bool = False, refit: bool = True,
                  refit_cache_mb: float = LIBSVM_CACHE_MB, cache_mb: float | None = None) -> SearchMemory:
    """The peak memory of a ``SpanSearchCV`` search from its sizes and settings (the module's doc has the terms).

    A pure function: nothing is allocated or trained. An upper bound (every point of the largest machine taken as an
    in-bound SV). Its error, measured against the resident-set high-water mark of whole searches (2,000, 5,000 and
    10,000 points, two and three classes, span_rule, cv_error, loo_error, span_bound, one and two threads:
    ``benchmarks/bench_search_memory.py``, docs/selecting.md): no search exceeded it; one thread on grids that
    reach the worst case measured 0.61-0.99 of it (0.82-0.99 from 5,000 points on), two threads 0.49-0.57 (each
    thread is given the worst grid point at once); grids whose models keep few in-bound SVs 0.29-0.56 with the
    span-rule, 0.61-0.91 with CV.

    Parameters
    ----------
    l, d : int
        Training points and features (with a precomputed kernel, d is ignored: X is l x l).
    class_sizes : sequence of int or None, default=None
        Points per class; None: two classes. With k > 2, the one-vs-one machines (k(k-1)/2, the largest on the
        two largest classes) set the size of a point's estimates.
    heldout : int, default=0
        Held-out rows (``fit(..., heldout=)``).
    kernels : set of str, default={"rbf"}
        The grid's kernels by ``KernelSpec.name`` ("rbf", "linear", "poly", "sigmoid", "callable",
        "precomputed"): which shared matrices the search computes.
    n_kernels : int, default=1
        Distinct kernels of the grid (one per gamma of the RBF).
    walks : int, default=1
        The most walks of one kernel (points that can run at once on it: one per C axis with "smo", one per point
        otherwise).
    n_jobs : int, default=1
        Threads (``effective_n_jobs``).
    criteria : collection of str, default=("span_rule",)
        Every estimate computed (the criterion, the extra criteria and the free ones).
    cv_folds : int or array-like of int, default=5
        For "cv_error": the number of (equal) folds, or every point's fold id.
    engine : str, default="smo"
        The trainer (``wsvm_span.engines.ENGINE_NAMES``).
    sparse : bool, default=False
        X is a sparse matrix (the search keeps a sparse copy beside its dense one).
    refit : bool, default=True
        Whether ``best_estimator_`` is refit on the features.
    refit_cache_mb : float, default=200
        The template SVC's ``cache_size``: the refit's LIBSVM row cache.
    cache_mb : float or None, default=None
        None: the search holds the whole kernel; a number: a row cache of that many MB per kernel in memory (RBF,
        the span-rule, CV and the free criteria: ``SpanSearchCV``'s ``cache_size``; with k > 2 classes, the
        one-vs-one machines train on it one after another, the largest setting the trainer's slots, and each CV
        fold's machines on a row cache of that size on the fold's training points).

    Returns
    -------
    SearchMemory
        The terms; ``nbytes`` is the estimate.

    Examples
    --------
    >>> from wsvm_span.model_selection._memory import search_memory
    >>> estimate = search_memory(10_000, 20, n_kernels=4, walks=1)
    >>> round(estimate.nbytes / 2**20)  # the squared distances, the kernel, SMO's cache, the span-rule's factorization
    4464
    >>> [term.name for term in estimate.search if term.nbytes][:3]
    ['the copy of X', 'squared distances', 'training kernel']
    """
    criteria = set(criteria)
    if cache_mb is not None:
        return _row_cache_memory(l, d, cache_mb, class_sizes=class_sizes, heldout=heldout, n_kernels=n_kernels,
                                 walks=walks, n_jobs=n_jobs, criteria=criteria, cv_folds=cv_folds, engine=engine,
                                 sparse=sparse, refit=refit, refit_cache_mb=refit_cache_mb)
    precomputed = "precomputed" in kernels
    width = l if precomputed else d
    k = 2 if class_sizes is None else len(class_sizes)
    n, machines = _largest_machine(l, class_sizes)
    trainer_engine = get_engine(engine)
    trainer = TRAINERS[trainer_engine.name]
    _, kernels_at_once, threads = parallel_plan(n_jobs, n_kernels, walks)
    threads_at_work = kernels_at_once * threads
    square, held = DOUBLE * l * l, DOUBLE * heldout * l
    rbf, products = "rbf" in kernels and not precomputed, bool(PRODUCT_KERNELS & set(kernels)) and not precomputed

    data = DOUBLE * l * width + (12 * l * width if sparse else 0)  # a sparse copy: 8-byte values, 4-byte indices
    held_data = DOUBLE * heldout * width if sparse or precomputed else 0  # densified or restricted to the kept points
    per_kernel = (0 if precomputed else square + held) + (FoldKernels.nbytes(_fold_ids(l, cv_folds))
                                                          if "cv_error" in criteria else 0)
    # a callable's kernel is its own array, never written into the shared buffer: beside a named kernel's, one more
    callable_beside = square + held if "callable" in kernels and len(kernels) > 1 and kernels_at_once == 1 else 0
    # before a kernel's points (one at a time per kernel): the row blocks of the kernels' temporaries, the span
    # bound's enclosing ball; then the estimates of each grid point, one after another, in each thread at work
    setup = [("kernel temporaries", DOUBLE * min(_BLOCK_ELEMENTS, l * max(l, heldout)))]
    if "span_bound" in criteria:
        setup.append(("the span bound's enclosing ball", BALL_SQUARES * DOUBLE * n * n))
    point = [("training", trainer.training(n))]
    if "span_rule" in criteria:
        point.append(("the span-rule's factorization", SPAN_RULE_SQUARES * DOUBLE * n * n))
    if "span_bound" in criteria:
        point.append(("the span bound's analysis", SPAN_BOUND_SQUARES * DOUBLE * n * n))
    if "loo_error" in criteria:
        # a warm-started trainer reads the rows in place and starts from the margin system; any other trains on a
        # copy of the kernel without the point
        point.append(("the exact LOO", LOO_SQUARES * DOUBLE * n * n if trainer_engine.capabilities.warm_start
                      else DOUBLE * n * n + trainer.training(n)))
    if "cv_error" in criteria and k > 2:
        folds = _fold_ids(l, cv_folds)
        held_out = max(int(np.sum(folds == f)) for f in np.unique(folds))
        # the one-vs-one vote of a fold's held-out points reads the fold's SV rows at them: a copy
        point.append(("the CV folds' decision block", DOUBLE * (l - held_out) * held_out + trainer.training(n)))
    setup_name, setup_bytes = max(setup, key=lambda item: item[1])
    point_name, point_bytes = max(point, key=lambda item: item[1])
    if threads * point_bytes > setup_bytes:
        copies, transient = threads_at_work, f"{point_name} (worst case: {n:,} in-bound SVs)"
    else:
        copies = kernels_at_once
        transient = setup_name + (f" (worst case: all {n:,} points)" if setup_name != "kernel temporaries" else "")
    transient = (f"{copies} x " if copies > 1 else "") + transient
    search = (
        MemoryTerm("the copy of X", data + held_data),
        MemoryTerm("squared distances", (square + held) if rbf else 0),
        MemoryTerm("inner products", (square + held) if products else 0),
        MemoryTerm("training kernel" if kernels_at_once == 1 else f"{kernels_at_once} training kernels",
                   kernels_at_once * per_kernel + callable_beside),
        MemoryTerm(transient, int(kernels_at_once * max(setup_bytes, threads * point_bytes))),
        MemoryTerm("trainer row caches", threads_at_work * trainer.cache(n) if trainer.per_thread else 0),
        MemoryTerm("models", threads_at_work * MODEL_DOUBLES * DOUBLE * l * machines),
        MemoryTerm("allocator slack and imports", SLACK),
    )
    refit_terms = _refit_terms(l, width, data + held_data, sparse=sparse, refit=refit, refit_cache_mb=refit_cache_mb)
    return SearchMemory(search, refit_terms)


def _largest_machine(l: int, class_sizes) -> tuple[int, int]:
    """(the largest machine's points, the machines): (l, 1) for two classes (class_sizes None), else the two largest
    classes' points and k(k-1)/2 one-vs-one machines."""
    if class_sizes is None:
        return l, 1
    k = len(class_sizes)
    return int(sum(sorted(class_sizes)[-2:])), k * (k - 1) // 2


def _refit_terms(l: int, width: int, data: int, *, sparse: bool, refit: bool, refit_cache_mb: float):
    return (
        MemoryTerm("the copy of X", data),
        MemoryTerm("the refit's row cache", min(int(refit_cache_mb * MB), 4 * l * l) if refit else 0),
        # LIBSVM's copy of the support vectors' features (sparse: its own node list of the whole X too)
        MemoryTerm("the refit's support vectors", (DOUBLE + (16 if sparse else 0)) * l * width if refit else 0),
        MemoryTerm("allocator slack and imports", SLACK),
    )


def _row_cache_memory(l: int, d: int, cache_mb: float, *, class_sizes, heldout: int, n_kernels: int, walks: int,
                      n_jobs: int, criteria: set, cv_folds, engine: str, sparse: bool, refit: bool,
                      refit_cache_mb: float) -> SearchMemory:
    """``search_memory`` of a search on a row cache (RBF; two classes, or the one-vs-one machines of more, each
    trained on the cache's rows restricted to its points): the module's doc has the terms."""
    trainer = TRAINERS[get_engine(engine).name]
    n, machines = _largest_machine(l, class_sizes)
    _, kernels_at_once, threads = parallel_plan(n_jobs, n_kernels, walks)
    threads_at_work = kernels_at_once * threads
    data = DOUBLE * l * (d + 1) + (12 * l * d if sparse else 0)  # X (and its sparse copy), its squared norms
    held_data = DOUBLE * heldout * d if sparse else 0
    blocks = ROW_BLOCKS * DOUBLE * min(_BLOCK_ELEMENTS, l * max(l, 1))
    span_blocks = int(row_point_bytes(0))
    own_cache = 0
    if machines > 1:
        # a one-vs-one CV fold trains on a row cache of its training points (and their copy) beside the search's; the
        # exact LOO retrains each machine on a row cache of the machine's points
        points = []
        if "cv_error" in criteria:
            folds = _fold_ids(l, cv_folds)
            points.append(l - min(int(np.sum(folds == f)) for f in np.unique(folds)))
        if "loo_error" in criteria:
            points.append(n)
        own_cache = max((cache_rows(m, cache_mb) * m * DOUBLE + DOUBLE * m * (d + 1) for m in points), default=0)
    search = (
        MemoryTerm("the copy of X", data + held_data),
        MemoryTerm("row cache" if kernels_at_once == 1 else f"{kernels_at_once} row caches",
                   kernels_at_once * cache_rows(l, cache_mb) * l * DOUBLE),
        MemoryTerm((f"{threads_at_work} x " if threads_at_work > 1 else "") + "kernel blocks and the span-rule's "
                   "blocks (n* = 0; each point checks its own)", threads_at_work * max(blocks, span_blocks)),
        # SMO's active-set slots, no larger than the row cache (engines.smo.smo_solve)
        MemoryTerm("trainer row caches", threads_at_work * min(trainer.cache(n), int(cache_mb * MB))),
        MemoryTerm("the CV folds' and LOO machines' row caches", threads_at_work * own_cache),
        # a one-vs-one model's decision values at every training point are machines x l (and so is the product of
        # each block of SV rows that computes them: multiclass.support_expansion)
        MemoryTerm("models", threads_at_work * MODEL_DOUBLES * DOUBLE * l * machines),
        MemoryTerm("allocator slack and imports", SLACK),
    )
    return SearchMemory(search, _refit_terms(l, d, data + held_data, sparse=sparse, refit=refit,
                                             refit_cache_mb=refit_cache_mb))


def check_point_memory(need: float, budget: int | None, what: str) -> None:
    """A grid point's estimate on a row cache against ``budget`` (``SpanSearchCV``'s point budget: what max_memory
    leaves beside the search's arrays; None: no limit): a ``SearchMemoryError`` naming ``what`` where it does not
    fit, before it allocates."""
    if budget is not None and need > budget:
        raise SearchMemoryError(
            f"this grid point's {what} would need about {need / MB:,.0f} MB, more than the {budget / MB:,.0f} MB that "
            "max_memory leaves beside the search's row cache and arrays: refused before it allocates (a smaller "
            "cache_size, or max_memory=None)")


def row_loo_bytes(n_inbound: int, n_bounded: int) -> float:
    """The most one grid point's exact LOO on a row cache allocates (``resampling.leave_one_out`` at n* in-bound SVs
    and n_bounded bounded ones): the margin system's bordered inverse and its rank-one updates (LOO_SQUARES n*^2)
    and the bounded SVs' block against the in-bound ones (n_bounded x n*)."""
    return DOUBLE * (LOO_SQUARES * n_inbound ** 2 + n_bounded * n_inbound)


def row_point_bytes(n_inbound: int, n_bounded: int = SPAN_BLOCK_ROWS) -> float:
    """The most one grid point's span-rule on a row cache allocates (``span_rule_from_svs`` at n* in-bound SVs and
    n_bounded bounded ones): the n* x n* factorization and the blocks of (n* + min(n_bounded, SPAN_BLOCK_ROWS))^2."""
    block = min(n_bounded, SPAN_BLOCK_ROWS)
    return DOUBLE * (SPAN_RULE_SQUARES * n_inbound ** 2 + ROW_SPAN_BLOCK * (n_inbound + block) ** 2)


def _fold_ids(l: int, cv_folds) -> np.ndarray:
    return np.arange(l) % cv_folds if np.ndim(cv_folds) == 0 else np.asarray(cv_folds)


def memory_limit(max_memory) -> tuple[int | None, str]:
    """(bytes or None for no limit, what it is) of a search's ``max_memory``: "available" (the memory available to
    this process now, ``utils.environment.available_memory``; no limit where it cannot be read), a number of MB,
    or None (no limit)."""
    if max_memory is None:
        return None, "no limit (max_memory=None)"
    if isinstance(max_memory, str) and max_memory == AVAILABLE:
        available = available_memory()
        return available, "no limit (the available memory cannot be read here)" if available is None else \
            f"{_mb(available)} available"
    return int(max_memory * MB), f"max_memory={_mb(max_memory * MB)}"


def check_memory(settings: dict, max_memory, owner: str = "SpanSearchCV") -> tuple[SearchMemory, str]:
    """The estimate ``search_memory(**settings)`` and its limit's description ("22,010 MB available"), or a
    ``SearchMemoryError`` where it exceeds ``max_memory`` (``memory_limit``), naming the estimate, its largest terms,
    the limit and what would need less: n_jobs=1, the span-rule alone, a smaller row cache, the largest sample that
    fits.

    Raises
    ------
    SearchMemoryError
        If the estimate exceeds the limit.
    """
    estimate = search_memory(**settings)
    limit, source = memory_limit(max_memory)
    if limit is None or estimate.nbytes <= limit:
        return estimate, source
    changes = []
    if settings.get("n_jobs", 1) > 1:
        serial = search_memory(**{**settings, "n_jobs": 1}).nbytes
        if serial < estimate.nbytes:
            changes.append(f"n_jobs=1 (each of the {settings['n_jobs']} threads holds its own buffers): "
                           f"{_mb(serial)}")
    costly = sorted(set(settings.get("criteria", ())) - LEAST_CRITERIA)
    if costly:
        least = search_memory(**{**settings, "criteria": LEAST_CRITERIA}).nbytes
        changes.append(f"criterion='span_rule' without {costly}: {_mb(least)}")
    if settings.get("cache_mb") is not None:
        # the row cache's term is its only one that cache_size sets: the rest is what the smallest cache needs
        smallest = search_memory(**{**settings, "cache_mb": 1e-9})
        _, caches, _ = parallel_plan(settings.get("n_jobs", 1), settings.get("n_kernels", 1), settings.get("walks", 1))
        room = (limit - smallest.nbytes) / caches
        if room > 0:
            changes.append(f"a smaller row cache: cache_size={room / MB:,.0f} (MB) or less")
    sample = largest_sample(settings, limit)
    if sample:
        changes.append(f"a sample of at most {sample:,} of the {settings['l']:,} points (the kernels grow as l^2)")
    raise SearchMemoryError(
        f"{owner} would need about {estimate.summary()}, more than the {source}: refused before computing any "
        f"kernel. The estimate is an upper bound (docs/selecting.md, 'Memory and progress'). To need less: "
        + "; ".join(changes + ["or set max_memory (MB; None: no check, e.g. for a grid whose models keep few "
                               "in-bound SVs: small gammas)"]))


def largest_sample(settings: dict, limit: int, estimate=search_memory) -> int:
    """The most training points (the same proportions of classes, folds and the rest) whose search fits in
    ``limit`` bytes by ``estimate(**settings)`` (``search_memory``, or ``svm_plus_search_memory``); 0 if not even
    two do."""
    l = settings["l"]

    def fits(m: int) -> bool:
        scaled = dict(settings, l=m)
        if settings.get("class_sizes") is not None:
            scaled["class_sizes"] = [max(1, round(c * m / l)) for c in settings["class_sizes"]]
        if np.ndim(settings.get("cv_folds", 0)) > 0:
            scaled["cv_folds"] = np.unique(settings["cv_folds"]).size
        return estimate(**scaled).nbytes <= limit

    if not fits(2):
        return 0
    low, high = 2, l  # fits(low), not fits(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low


# ------------------------------------------------------------------------------------------------------- SVM+
#: the SVM+ routes' peaks beside the two l x l kernels, in doubles per l^2 (VmHWM around one ``SVMPlusClassifier``
#: fit or ``SVMPlusSearchCV`` grid point, one thread, generated problems, ``benchmarks/bench_search_memory.py
#: --svm-plus``): the QP route's Clarabel on the dual's 2l unknowns, where the route can fall back to it (at most
#: ``SMO_POLISH_MAX_L`` points under "auto", any size under "qp" and "active-set"), 55 at l = 300, 31 at 600, 26 at
#: 900 (the first also counts Clarabel's own start); the LOO rule's inverse of the active-set KKT system (up to 2l
#: unknowns) 4.2 at 1,500 and 4.1 at 2,500
SVM_PLUS_QP_SQUARES = 60.0
SVM_PLUS_LOO_RULE_SQUARES = 4.5
#: the exact LOO (svm_plus.leave_one_out): the inverse of the model's KKT system, every refit's solution on the
#: model's sets minus its point (l x k arrays) and the retrained points' own systems, measured 82 at l = 600 and
#: 84.5 at 1,000 (two-point grids of the search, the whole search's high-water mark less its kernels)
SVM_PLUS_EXACT_LOO_SQUARES = 100.0
#: csrc/svm_plus_smo.c's MIN_SLOTS: the fewest rows its row cache keeps per kernel, whatever ``cache_size``
SVM_PLUS_MIN_SLOTS = 16


def svm_plus_search_memory(l: int, d: int, d_priv: int, *, criterion: str = "loo_rule", on_rows: bool = False,
                           cache_mb: float = 200.0, qp_fallback: bool = True, computed_kernels: int = 2,
                           n_pairs: int = 1, n_jobs: int = 1, heldout: int = 0, cv_folds: int = 5,
                           refit: bool = True) -> SearchMemory:
    """The peak memory of an ``SVMPlusSearchCV`` search from its sizes and settings (nothing is trained or
    allocated): an upper bound, each route's term measured at its worst (the constants above).

    Parameters
    ----------
    l, d, d_priv : int
        Training points, ordinary and privileged features (with precomputed kernels, d and d_priv are l).
    criterion : {"loo_rule", "loo_error", "cv_error"}, default="loo_rule"
        The search's criterion.
    on_rows : bool, default=False
        The models train on kernel rows computed on demand (``SVMPlusClassifier._trains_on_rows``; with
        "cv_error" only: the LOO criteria read the l x l kernels).
    cache_mb : float, default=200
        The template's ``cache_size``: rows kept per kernel on rows.
    qp_fallback : bool, default=True
        The route can fall back to the QP route (dense in the dual's 2l unknowns).
    computed_kernels : int, default=2
        The kernels computed from features (a precomputed one is X or X_privileged itself, counted as data).
    n_pairs, n_jobs : int, default=1
        Pairs of kernel widths (gamma, priv_gamma) of the grid, and threads: each pair's task holds its two
        kernels, ``min(n_jobs, n_pairs)`` of them at once.
    heldout : int, default=0
        Held-out rows (``fit(..., heldout=)``).
    cv_folds : int, default=5
        Folds of "cv_error" (each fold's training part, l - l / cv_folds points, is what its slices hold).
    refit : bool, default=True
        Whether ``best_estimator_`` is refit on all the data (after the search's arrays are released).

    Returns
    -------
    SearchMemory
        The terms; ``nbytes`` is the estimate.

    Examples
    --------
    >>> from wsvm_span.model_selection._memory import svm_plus_search_memory
    >>> round(svm_plus_search_memory(20_000, 10, 1, criterion="loo_rule", qp_fallback=False).mb)  # kernels, system
    19907
    >>> round(svm_plus_search_memory(20_000, 10, 1, criterion="cv_error", on_rows=True, qp_fallback=False).mb)
    470
    """
    square = DOUBLE * l * l
    data = DOUBLE * l * (d + d_priv) + DOUBLE * heldout * d
    rows = DOUBLE * l * min(l, max(SVM_PLUS_MIN_SLOTS, int(cache_mb * MB) // (DOUBLE * max(1, l))))
    kernels = computed_kernels * (rows if on_rows else square)
    at_once = max(1, min(n_jobs, n_pairs))
    route = SVM_PLUS_QP_SQUARES * square if qp_fallback and not on_rows else 0
    folds = 0
    if criterion == "cv_error" and not on_rows:
        # kfold_cv_error trains each fold on its slices of both kernels, one fold at a time
        kept = l - l // max(2, cv_folds)
        folds = 2 * DOUBLE * kept * kept  # slices are copies, of a precomputed kernel too
    estimate = {"loo_rule": ("the LOO rule's system", SVM_PLUS_LOO_RULE_SQUARES * square),
                "loo_error": ("the exact LOO's refits", SVM_PLUS_EXACT_LOO_SQUARES * square)}.get(criterion)
    transient_name, transient = max([("the QP route (Clarabel)", route)] + ([estimate] if estimate else []),
                                    key=lambda item: item[1])
    each = "" if at_once == 1 else f"{at_once} x "
    search = (
        MemoryTerm("the copies of X and X_privileged", data),
        MemoryTerm(each + ("the row caches" if on_rows else "the training kernels"), at_once * kernels),
        MemoryTerm(each + "the CV folds' kernels", at_once * folds),
        MemoryTerm(each + transient_name, int(at_once * transient)),
        MemoryTerm("the held-out block", DOUBLE * heldout * l),
        MemoryTerm("models", at_once * MODEL_DOUBLES * DOUBLE * l),
        MemoryTerm("allocator slack and imports", SLACK),
    )
    refit_terms = (
        MemoryTerm("the copies of X and X_privileged", data),
        MemoryTerm("the refit's kernels", kernels if refit else 0),
        MemoryTerm("the refit's QP route (Clarabel)", int(route) if refit else 0),
        MemoryTerm("allocator slack and imports", SLACK),
    )
    return SearchMemory(search, refit_terms)
