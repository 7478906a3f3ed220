"""Measuring one training run from the features: wall and CPU seconds, peak memory, the sampling
record and the full-problem KKT check; and one fold of K-fold CV with LIBSVM's own RBF.

One implementation for ``benchmarks/bench_sampling.py`` and the exp9 job kind
(``study/experiments/sampling.py``), so that the benchmark and the study measure the same way.

Peak memory is the process's resident-set high-water mark (``VmHWM``) during the fit minus its
resident size just before: the high-water mark is reset to the current size first (Linux
``/proc/self/clear_refs``, value 5), so fits run one after another in one process are each measured
on their own, and everything the fit allocates counts, LIBSVM's C++ kernel-row cache included (which
tracemalloc would not see). Memory freed by earlier work is handed back to the system first (glibc's
``malloc_trim``), so that a fit cannot reuse it unseen. Where the kernel refuses the reset, the peak is
NaN, never a number that includes an earlier fit's peak.
"""
from __future__ import annotations

import ctypes
import gc
import os
import time
from dataclasses import dataclass

import numpy as np

from ..model import WeightedSVM, decision_values
from ..utils.environment import single_threaded
from . import fit_features
from .random_sampling import DEFAULT_KKT_TOL, KKTCertificate, SamplingRecord, fit_sampling, kkt_certificate
from .sklearn_rbf import DEFAULT_CACHE_MB

__all__ = ["FitMeasurement", "MEMORY_METHOD", "PRECOMPUTED_ENGINES", "cv_fold", "kernel_mib", "measure_fit",
           "load_average", "peak_rss_reset", "peak_rss_since"]

#: how ``FitMeasurement.peak_mem_mb`` is measured (recorded with the results)
MEMORY_METHOD = "rss"
#: the engines that build the l x l kernel from the features (8 l^2 bytes) before training on it
PRECOMPUTED_ENGINES = ("sklearn", "libsvm")
#: engines that take LIBSVM's kernel-row cache size (``cache_mb``)
_CACHED_ENGINES = ("sampling", "sklearn-rbf")


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"/proc/self/status has no {field}")


def _release_free_memory() -> None:
    """Hand memory that earlier work freed back to the system (garbage collection, glibc's
    ``malloc_trim``): otherwise the allocator reuses it without the resident size growing, and a fit
    run after another one in the same process would show too small a peak."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the peak may then be understated after earlier fits
        pass


def peak_rss_reset() -> float | None:
    """Release free memory, reset this process's resident-set high-water mark to its current size and
    return that size (MiB), or None where the kernel does not allow the reset (no ``/proc/self/clear_refs``)."""
    _release_free_memory()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return _status_kib("VmRSS") / 1024.0
    except OSError:
        return None


def peak_rss_since(base: float | None) -> float:
    """The resident-set high-water mark since ``peak_rss_reset`` returned ``base`` (MiB), less ``base``: what the
    work since then added at its peak; NaN where the reset was refused (``base`` None)."""
    return _status_kib("VmHWM") / 1024.0 - base if base is not None else float("nan")


def kernel_mib(l: int) -> float:
    """Size (MiB) of an l x l float64 kernel: what a precomputed-kernel engine holds besides LIBSVM."""
    return 8.0 * l * l / 2**20


@dataclass(frozen=True)
class FitMeasurement:
    """One measured training run.

    t_train, cpu_train : wall and CPU seconds of the whole fit from the features (for a precomputed
        engine the kernel is included); one thread
    peak_mem_mb : resident-set high-water mark during the fit minus the resident size before (MiB;
        see the module docstring); NaN where it cannot be measured
    record : the sampling engine's ``SamplingRecord`` (None for the other engines)
    certificate : the KKT conditions of the full problem on all l points (``kkt_certificate``), for
        every engine, at the sampling engine's tolerance, so that the engines compare
    """

    model: WeightedSVM
    t_train: float
    cpu_train: float
    peak_mem_mb: float
    record: SamplingRecord | None
    certificate: KKTCertificate


def measure_fit(X, y, C, *, gamma: float, engine: str, tol: float | None = None, seed: int = 0,
                cache_mb: float = DEFAULT_CACHE_MB, kkt_tol: float = DEFAULT_KKT_TOL,
                **options) -> FitMeasurement:
    """Train with ``engine`` (a feature engine name: "sampling", "sklearn-rbf", or a precomputed one
    that builds the kernel) on one thread and measure it.

    tol : LIBSVM's tolerance (for "sampling": of each sample, ``inner_tol``); None: the engine's default
    seed, options : the sampling engine's seed and further options (``fit_sampling``)
    cache_mb : LIBSVM's kernel-row cache for the engines that evaluate the RBF themselves
    kkt_tol : tolerance of the certificate (for "sampling" also its violator test)
    """
    if engine != "sampling" and options:
        raise ValueError(f"options {sorted(options)} apply to the sampling engine only, not {engine!r}")
    base = peak_rss_reset()
    record = None
    with single_threaded():
        t0, c0 = time.perf_counter(), time.process_time()
        if engine == "sampling":
            extra = {} if tol is None else {"inner_tol": tol}
            model, record = fit_sampling(X, y, C, gamma=gamma, tol=kkt_tol, seed=seed, cache_mb=cache_mb,
                                         **extra, **options)
        else:
            extra = {"cache_mb": cache_mb} if engine in _CACHED_ENGINES else {}
            model = fit_features(X, y, C, gamma=gamma, engine=engine, tol=tol, **extra)
        t_train, cpu_train = time.perf_counter() - t0, time.process_time() - c0
    peak = peak_rss_since(base)
    certificate = record.certificate if record is not None else kkt_certificate(model, kkt_tol)
    return FitMeasurement(model, t_train, cpu_train, peak, record, certificate)


def cv_fold(X, y, C, *, gamma: float, folds: np.ndarray, fold: int, tol: float | None = None,
            cache_mb: float = DEFAULT_CACHE_MB) -> tuple[float, int, int]:
    """One fold of K-fold CV with scikit-learn's LIBSVM evaluating the RBF itself: train on the points
    with ``folds != fold``, count the errors (y f <= 0, as ``kfold_cv_error``) on the held-out ones.
    Returns (seconds for training and prediction, errors, held-out points); one thread."""
    train, held = folds != fold, folds == fold
    C = np.broadcast_to(np.asarray(C, dtype=float), y.shape)
    with single_threaded():
        t0 = time.perf_counter()
        model = fit_features(X[train], y[train], C[train], gamma=gamma, engine="sklearn-rbf", tol=tol,
                             cache_mb=cache_mb)
        f = decision_values(model, X[train], X[held], gamma)
        seconds = time.perf_counter() - t0
    return seconds, int(np.sum(y[held] * f <= 0)), int(held.sum())


def load_average() -> float:
    """The 1-minute load average (recorded beside timings: the machine may be shared)."""
    return os.getloadavg()[0]
