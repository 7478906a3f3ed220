"""``wsvm-span select DATA_FILE``: what LIBSVM's tools/grid.py does, scored by the span-rule.

Grid over log2 C and log2 gamma (grid.py's default ranges and option syntax: ``-log2c begin,end,step``),
one RBF SVM per grid point (the RBF kernel only, svm-train's -t 2, as grid.py; SpanSearchCV grids over the other
kernels too) trained on the whole file (any number of classes: LIBSVM's one-vs-one
classifier, as svm-train), each scored by the span-rule (or another criterion, ``-v`` folds for
``--criterion cv_error``); prints grid.py's lines ("log2c log2g rate (best c=,
g=, rate=)" per point, then "c g rate" for the best), where rate is 100 * (1 - estimate): the
estimated leave-one-out accuracy for the span-rule. Writes grid.py's ``.out`` file and a contour
plot (PNG), optionally logs every point to MLflow, reports the test accuracy on ``--test`` and saves
the selected model (a LIBSVM model file trained by libsvm-official, or a pickled ``SVC``).

Ties: the first best point in grid order (ascending C, then gamma in the order of -log2g), i.e. the
smallest C among the tied points.

With ``--privileged FILE`` (privileged features of the same points, known for training only) the grid points are
SVM+ models (``SVMPlusSearchCV``): grid.py's C x gamma grid times a short grid of SVM+'s gamma_plus and of the
privileged RBF kernel's width (``-log2gp``, ``-log2pg``), scored by SVM+'s LOO rule (``--criterion loo_rule``, the
default there), its exact LOO (``loo_error``) or K-fold CV (``cv_error``). The lines then carry the four log2 values;
there is no contour plot, and the model is a pickled ``SVMPlusClassifier`` (SVM+ is no LIBSVM model) with its
chosen parameters beside it in ``MODEL.json``.

Before the grid, the search's memory is estimated (``SpanSearchCV.memory_estimate``, an upper bound) and printed on
stderr with the limit (``--max-memory MB``, default the memory available now); a search over it is refused before
any kernel is computed, with what would need less. While it runs, a stderr line shows the points done, the time so
far and the time left at the rate so far (scikit-learn 1.9's fit callbacks).

``--dask ADDRESS`` runs the grid's tasks on a dask.distributed cluster through joblib's dask backend (the scheduler's
address, or ``local`` for a ``LocalCluster`` of ``--jobs`` worker processes here): each task computes its kernel
where it runs, and the results are those of the search in one process (docs/distributed.md).

``--scale`` maps every feature to [0, 1] by the training file's min and max (svm-scale -l 0 -u 1: a
feature constant on the training file maps to 0), applies the same map to ``--test`` and writes it in
svm-scale's range-file format beside the model (``MODEL.range``, or ``DATA_FILE name.range`` without
``--model``), so that ``svm-scale -r`` scales new data for the saved model the same way.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import sys
import time
from pathlib import Path

import numpy as np

from wsvm_span.utils.environment import DASK_EXTRA, STUDY_EXTRA

from ._progress import SearchProgress

__all__ = ["configure_parser", "run"]

GRIDPY_USAGE = "begin,end,step (log2 values, end included), as in LIBSVM grid.py"


def _triple(text: str) -> tuple[float, float, float]:
    parts = text.split(",")
    try:
        begin, end, step = (float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {GRIDPY_USAGE}, got {text!r}") from None
    return begin, end, step


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _class_weight(text: str) -> tuple[str, float]:
    label, sep, weight = text.partition(":")
    try:
        value = _positive(weight)
    except argparse.ArgumentTypeError:
        value = None
    if not sep or value is None:
        raise argparse.ArgumentTypeError(f"class weight must be LABEL:WEIGHT with WEIGHT > 0, got {text!r}")
    return label, value


def configure_parser(p: argparse.ArgumentParser) -> None:
    """Options of ``wsvm-span select`` (grid.py's names where it has one)."""
    from ._grid import (
        CRITERIA, DEFAULT_ENGINE, GRIDPY_LOG2C, GRIDPY_LOG2G, SVM_PLUS_CRITERIA, SVM_PLUS_LOG2GP, SVM_PLUS_LOG2PG,
    )

    p.add_argument("data_file", help="training data: LIBSVM/svmlight format, or CSV (.csv) with a label column")
    p.add_argument("--test", help="test file (same format): report the selected model's accuracy on it")
    p.add_argument("-log2c", "--log2c", type=_triple, default=GRIDPY_LOG2C, help=f"C range, {GRIDPY_USAGE} "
                   "(default %(default)s)")
    p.add_argument("-log2g", "--log2g", type=_triple, default=GRIDPY_LOG2G,
                   help=f"gamma range of the RBF kernel, {GRIDPY_USAGE} (default %(default)s). select grids over the "
                        "RBF kernel only (svm-train -t 2), as grid.py does; the linear, poly and sigmoid kernels and "
                        "a callable are SpanSearchCV's grid keys (docs/selecting.md, Kernels)")
    p.add_argument("--criterion", choices=list(dict.fromkeys(CRITERIA + SVM_PLUS_CRITERIA)),
                   help=f"estimate minimised (default span_rule; with --privileged one of "
                        f"{', '.join(SVM_PLUS_CRITERIA)}, default loo_rule: SVM+'s LOO rule)")
    p.add_argument("--privileged", metavar="FILE",
                   help="privileged features of the training points (known for training only), one row per row of "
                        "DATA_FILE with the same labels; LIBSVM/svmlight format, or CSV (.csv) with a label column "
                        "(--format and --label-column apply to it too): select SVM+ (SVMPlusSearchCV) instead of the "
                        "SVM, over -log2c x -log2g x -log2gp x -log2pg (by default 11 x 10 x 3 x 3 = 990 SVM+ "
                        "models). No contour plot; --model writes "
                        "a pickled SVMPlusClassifier and MODEL.json with the chosen parameters; --scale scales the "
                        "privileged features by their own min and max too. Not with -w or --mlflow")
    p.add_argument("-log2gp", "--log2gp", type=_triple, default=SVM_PLUS_LOG2GP,
                   help=f"with --privileged: SVM+'s gamma_plus range, {GRIDPY_USAGE} (default %(default)s)")
    p.add_argument("-log2pg", "--log2pg", type=_triple, default=SVM_PLUS_LOG2PG,
                   help=f"with --privileged: the privileged RBF kernel's gamma range, {GRIDPY_USAGE} "
                        "(default %(default)s)")
    p.add_argument("-v", "--folds", type=int, default=5,
                   help="folds of --criterion cv_error (default 5; stratified, in file order)")
    p.add_argument("-w", "--class-weight", type=_class_weight, action="append", default=[], metavar="LABEL:WEIGHT",
                   help="weight of a class's C (svm-train's -wi); repeat per class")
    p.add_argument("--tol", type=_positive, help="LIBSVM stopping tolerance (default: SpanSearchCV's DEFAULT_TOL)")
    p.add_argument("--format", choices=["auto", "libsvm", "csv"], default="auto",
                   help="file format (default: CSV for *.csv, LIBSVM otherwise)")
    p.add_argument("--label-column", default="0", help="CSV label column: index or header name (default 0)")
    p.add_argument("--n-features", type=int, help="feature dimension (default: highest index in the training file)")
    p.add_argument("--scale", action="store_true",
                   help="scale features to [0, 1] by the training file's min and max (svm-scale -l 0 -u 1), apply "
                        "the same map to --test, and save it as a svm-scale range file beside the model "
                        "(MODEL.range, or DATA_FILE name.range)")
    p.add_argument("-out", "--out", help="grid.py-style result file, 'null' for none (default DATA_FILE name.out)")
    p.add_argument("-png", "--png", help="contour plot, 'null' for none (default DATA_FILE name.png)")
    p.add_argument("--model", help="save the selected model: *.pkl/*.pickle = pickled sklearn SVC, "
                   "anything else = LIBSVM model file (libsvm-official's svm_save_model); with --privileged "
                   "always a pickled SVMPlusClassifier, its chosen parameters and criterion in MODEL.json")
    p.add_argument("--mlflow", metavar="TRACKING_URI", help="log every grid point to this MLflow store")
    p.add_argument("--mlflow-experiment", default="wsvm-span-select", help="MLflow experiment name")
    p.add_argument("--engine", default=DEFAULT_ENGINE,
                   help=f"trainer of the grid points (default {DEFAULT_ENGINE}: this project's SMO, each C "
                        "started from the previous C's solution; sklearn: LIBSVM from zero; any name of "
                        "wsvm_span.engines.ENGINE_NAMES)")
    p.add_argument("--jobs", type=int, default=1, help="grid points trained in parallel (joblib threads)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run the grid on a dask.distributed cluster through joblib's dask backend, on every worker "
                        "thread of it: the scheduler's address (tcp://HOST:8786; --jobs is not used), or 'local' for a "
                        "LocalCluster of --jobs worker processes of one thread each here; each task computes its "
                        f"kernel where it runs (needs the dask extra: {DASK_EXTRA})")
    p.add_argument("--max-memory", type=_positive, metavar="MB",
                   help="the most memory (MB) the search may take: it is estimated first (an upper bound, printed "
                        "at the start) and the search refused beyond it (default: the memory available now)")
    p.add_argument("--cache-size", type=_positive, metavar="MB",
                   help="a kernel row cache of MB (svm-train's -m): no l x l kernel is held, rows are computed as they "
                        "are read (the RBF kernel, engine smo, any number of classes; not --criterion span_bound); "
                        "default: the whole kernel where it fits --max-memory, else a row cache of 200 MB")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)
    # grid.py writes ranges as "-log2c -1,7,2": let argparse read "-1,7,2" as a value, not an option
    # (its own pattern only knows plain negative numbers; this parser has no option that looks like one).
    p._negative_number_matcher = re.compile(r"^-\d[\d.,eE+-]*$")


class _Progress:
    """scikit-learn fit callback: a stderr line, rewritten as each grid point finishes, with the points done, the
    time so far and the time left (the search's ``SearchProgress``, as its verbose lines)."""

    def __init__(self, total: int):
        self.total, self.width = total, 0
        self.progress = SearchProgress(total)

    def setup(self, estimator, context):
        self.progress = SearchProgress(self.total)

    def teardown(self, estimator, context):
        pass

    def on_fit_task_begin(self, estimator, context, **kwargs):
        pass

    def on_fit_task_end(self, estimator, context, **kwargs):
        if context.task_name == "candidate-evaluation":
            done, times = self.progress.tick()
            line = f"[wsvm-span select] {done} grid points; {times}"
            self.width = max(self.width, len(line))  # cover a longer line before it
            last = self.progress.done == self.total
            print(f"\r{line.ljust(self.width)}", end="\n" if last else "", file=sys.stderr, flush=True)


def run(args) -> int:
    """Run `wsvm-span select` with parsed arguments; a ValueError (bad file, grid or option) or a search refused
    for its memory estimate is printed and gives exit status 2.
    """
    from ._memory import SearchMemoryError

    try:
        return _run(args)
    except ValueError as exc:
        print(f"wsvm-span select: error: {exc}", file=sys.stderr)
        return 2
    except SearchMemoryError as exc:  # its advice names the search's parameters: say which options they are
        print(f"wsvm-span select: error: {exc}\n(select's options: n_jobs is --jobs, criterion --criterion, "
              "max_memory --max-memory MB)", file=sys.stderr)
        return 2


def _run(args) -> int:
    from ._grid import CRITERIA, log2_range
    from ._memory import AVAILABLE, memory_limit
    from ._search import DEFAULT_TOL, SpanSearchCV
    from ._sklearn_compat import has_fit_callbacks
    from .files import read_data_file

    if args.privileged:
        _check_svm_plus_options(args)
    elif args.criterion is None:
        args.criterion = "span_rule"
    elif args.criterion not in CRITERIA:
        raise ValueError(f"--criterion {args.criterion} is SVM+'s: give --privileged FILE, or one of {CRITERIA}")
    png = None if args.privileged else _png_target(args)
    if args.mlflow and not _installed("mlflow"):
        raise ValueError(f"--mlflow needs MLflow, which is part of the study extra: {STUDY_EXTRA}")
    train = read_data_file(args.data_file, args.format, label_column=args.label_column, n_features=args.n_features)
    labels = np.unique(train.y)
    if labels.size < 2:
        raise ValueError(f"{train.path}: {labels.size} class label(s) {labels.tolist()[:5]}; "
                         "select needs at least two classes")
    privileged = _read_privileged(args, train) if args.privileged else None
    test = None
    if args.test:
        test = read_data_file(args.test, args.format, label_column=args.label_column, n_features=args.n_features)
        if test.X.shape[1] > train.X.shape[1]:
            raise ValueError(f"{test.path} has feature index {test.X.shape[1]}, beyond the training file's highest "
                             f"({train.X.shape[1]}): features only in the test file; pass --n-features N to "
                             "declare the full dimension if they are legitimately absent from training")
        test.X.resize(test.X.shape[0], train.X.shape[1])
    if args.scale:
        train, test = _scaled(train, test, Path(f"{args.model}.range" if args.model else f"{train.path.name}.range"))
        if privileged is not None:
            from wsvm_span.data.scaling import MinMaxScaler01

            privileged = MinMaxScaler01().fit_transform(privileged)
    if privileged is not None:
        return _run_svm_plus(args, train, privileged, test)
    log2c, log2g = log2_range(*args.log2c), log2_range(*args.log2g)
    weights = _class_weights(args.class_weight, labels)
    from sklearn.svm import SVC

    svc = SVC(tol=DEFAULT_TOL if args.tol is None else args.tol, class_weight=weights,
              **({} if args.cache_size is None else {"cache_size": args.cache_size}))
    grid = {"C": [2.0 ** e for e in log2c], "gamma": [2.0 ** e for e in log2g]}
    search = SpanSearchCV(svc, grid, criterion=args.criterion, cv=args.folds, n_jobs=-1 if args.dask else args.jobs,
                          engine=args.engine, max_memory=AVAILABLE if args.max_memory is None else args.max_memory,
                          cache_size=args.cache_size)
    # the estimate depends on the backend (a task shipped to a worker holds one kernel): both under it
    with _dask_backend(args.dask, workers=args.jobs):
        if not args.quiet:
            _, limit = memory_limit(search.max_memory)
            print(f"[wsvm-span select] memory: about {search.memory_estimate(train.X, train.y).summary()} ({limit})",
                  file=sys.stderr)
            if has_fit_callbacks():  # scikit-learn 1.9 on; before, only the closing line
                search.set_callbacks(_Progress(len(log2c) * len(log2g)))
        t0 = time.perf_counter()
        search.fit(train.X, train.y)
        wall = time.perf_counter() - t0

    res = search.cv_results_
    rates = 100.0 * np.asarray(res["mean_test_score"], dtype=float)
    points = [(np.log2(p["C"]), np.log2(p["gamma"]), r) for p, r in zip(res["params"], rates)]
    best = points[search.best_index_]
    _print_grid(points, ("c", "g"), args.criterion, best)

    stem = train.path.name
    out = _target(args.out, f"{stem}.out")
    if out:
        out.write_text(_out_lines(points, ("c", "g")))
    if png:
        contour_png(points, best, png, title=stem, criterion=args.criterion)
    if test is not None:
        _print_accuracy(search.predict(test.X), test.y)
    if args.model:
        save_model(search, train, args.model)
    if args.mlflow:
        log_mlflow(search, points, args, wall)
    if not args.quiet:
        print(f"[wsvm-span select] {len(points)} points in {wall:.1f}s (kernels {search.kernel_time_:.1f}s)",
              file=sys.stderr)
    return 0


@contextlib.contextmanager
def _dask_backend(address: str | None, *, workers: int):
    """joblib's dask backend on the cluster whose scheduler is at ``address`` (``--dask``), or on a ``LocalCluster`` of
    ``workers`` processes started here for "local" (and closed after); nothing for None."""
    if address is None:
        yield
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise ValueError(f"--dask needs dask.distributed, which is the dask extra: {DASK_EXTRA}") from exc
    from joblib import parallel_config

    with contextlib.ExitStack() as stack:
        if address == "local":
            if workers < 1:
                raise ValueError(f"--dask local starts --jobs worker processes: give --jobs 1 or more, not {workers}")
            # the scheduler's web page on a free port: 8787 may be another cluster's
            target = stack.enter_context(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                      dashboard_address=":0"))
        else:
            target = address
        try:
            stack.enter_context(Client(target))
        except OSError as exc:  # no scheduler there (distributed's own message names the address and the timeout)
            raise ValueError(f"--dask {address}: {exc}") from exc
        stack.enter_context(parallel_config(backend="dask"))
        yield


def _check_svm_plus_options(args) -> None:
    """The options that SVM+'s selection has no use for are refused, not ignored; its criterion defaults to its
    LOO rule."""
    from ._grid import DEFAULT_ENGINE, SVM_PLUS_CRITERIA

    if args.criterion is None:
        args.criterion = "loo_rule"
    if args.criterion not in SVM_PLUS_CRITERIA:
        raise ValueError(f"--criterion {args.criterion} is not one of SVM+'s ({', '.join(SVM_PLUS_CRITERIA)})")
    refused = {"-w": args.class_weight, "--mlflow": args.mlflow, "--engine": args.engine != DEFAULT_ENGINE,
               "-png": args.png not in (None, "null"), "--cache-size": args.cache_size is not None}
    given = [name for name, value in refused.items() if value]
    if given:
        raise ValueError(f"{', '.join(given)} cannot be combined with --privileged (SVM+ has no class weights, "
                         "MLflow log, engine choice, contour plot or search-wide row cache here)")


def _read_privileged(args, train) -> np.ndarray:
    """The privileged features of the training file's points (dense): same rows, same labels, so that a file of
    other points, or in another order, is refused rather than silently paired."""
    from .files import read_data_file

    priv = read_data_file(args.privileged, args.format, label_column=args.label_column)
    if priv.y.shape != train.y.shape or not np.array_equal(priv.y, train.y):
        raise ValueError(f"{priv.path}: the privileged file must have the training file's rows, in its order, with "
                         f"the same labels ({priv.y.size} rows against {train.y.size}"
                         f"{'' if priv.y.size != train.y.size else ', labels differ'})")
    return priv.X.toarray()


def _run_svm_plus(args, train, privileged, test) -> int:
    """``select --privileged``: SVMPlusSearchCV over grid.py's C x gamma grid times the gamma_plus and priv_gamma
    ranges, grid.py's lines with the four log2 values, the test accuracy and the model (pickle + JSON)."""
    from ._grid import svm_plus_param_grid
    from ._memory import AVAILABLE, memory_limit
    from ._svm_plus_search import SVMPlusSearchCV

    grid = svm_plus_param_grid(args.log2c, args.log2g, args.log2gp, args.log2pg)
    search = SVMPlusSearchCV(param_grid=grid, criterion=args.criterion, cv=args.folds,
                             n_jobs=-1 if args.dask else args.jobs,
                             max_memory=AVAILABLE if args.max_memory is None else args.max_memory)
    X = train.X.toarray()
    with _dask_backend(args.dask, workers=args.jobs):
        if not args.quiet:
            _, limit = memory_limit(search.max_memory)
            print(f"[wsvm-span select] memory: about "
                  f"{search.memory_estimate(X, train.y, X_privileged=privileged).summary()} ({limit})",
                  file=sys.stderr)
        t0 = time.perf_counter()
        search.fit(X, train.y, X_privileged=privileged)
        wall = time.perf_counter() - t0

    res = search.cv_results_
    names = ("c", "g", "gp", "pg")
    keys = ("C", "gamma", "gamma_plus", "priv_gamma")
    rates = 100.0 * np.asarray(res["mean_test_score"], dtype=float)
    points = [(*(np.log2(p[k]) for k in keys), r) for p, r in zip(res["params"], rates)]
    best = points[search.best_index_]
    _print_grid(points, names, args.criterion, best)
    out = _target(args.out, f"{train.path.name}.out")
    if out:
        out.write_text(_out_lines(points, names))
    if test is not None:
        _print_accuracy(search.predict(test.X.toarray()), test.y)
    if args.model:
        _save_svm_plus(search, Path(args.model), args)
    if not args.quiet:
        print(f"[wsvm-span select] {len(points)} SVM+ points in {wall:.1f}s", file=sys.stderr)
    return 0


def _save_svm_plus(search, path: Path, args) -> None:
    """The chosen ``SVMPlusClassifier`` pickled at ``path`` and its parameters at ``path``.json."""
    import json
    import pickle

    path.write_bytes(pickle.dumps(search.best_estimator_))
    chosen = {"criterion": args.criterion, args.criterion: 1.0 - search.best_score_,
              "params": search.best_params_, "scaled": bool(args.scale), "data_file": str(args.data_file),
              "privileged_file": str(args.privileged)}
    Path(f"{path}.json").write_text(json.dumps(chosen, indent=2) + "\n")


def _print_grid(points, names, criterion: str, best) -> None:
    """grid.py's lines: each point's log2 values and rate with the best so far, then the best's values and rate."""
    running = None
    for *logs, r in points:
        running = (*logs, r) if running is None or r > running[-1] else running
        so_far = ", ".join(f"{n}={2.0 ** float(v)!r}" for n, v in zip(names, running))
        print(f"[{criterion}] {' '.join(_num(v) for v in logs)} {r:g} (best {so_far}, rate={running[-1]:g})")
    print(" ".join(f"{2.0 ** float(v)!r}" for v in best[:-1]) + f" {best[-1]:g}")


def _out_lines(points, names) -> str:
    """grid.py's .out file: one line of log2 values and rate per point."""
    return "".join(" ".join(f"log2{n}={_num(v)}" for n, v in zip(names, logs)) + f" rate={r:g}\n"
                   for *logs, r in points)


def _print_accuracy(predicted, y) -> None:
    hits = int(np.sum(predicted == y))
    print(f"Accuracy = {100.0 * hits / y.size:g}% ({hits}/{y.size}) (classification)")


def _scaled(train, test, range_path: Path):
    """(train, test) with features mapped to [0, 1] by the training file (the study's MinMaxScaler01:
    svm-scale -l 0 -u 1, constant features to 0); the map is written to ``range_path``."""
    from dataclasses import replace

    import scipy.sparse as sp

    from wsvm_span.data.scaling import MinMaxScaler01

    from .files import write_range_file

    X = train.X.toarray()
    scaler = MinMaxScaler01().fit(X)
    write_range_file(range_path, X.min(axis=0), X.max(axis=0))
    train = replace(train, X=sp.csr_matrix(scaler.transform(X)))
    if test is not None:
        test = replace(test, X=sp.csr_matrix(scaler.transform(test.X.toarray())))
    return train, test


def _num(x: float) -> str:
    """A log2 value as grid.py prints it (an integer without ".0")."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _target(option: str | None, default: str) -> Path | None:
    if option == "null":
        return None
    return Path(option or default)


def _installed(module: str) -> bool:
    try:
        importlib.import_module(module)  # imported now, used later: fail before the grid is trained
    except ModuleNotFoundError:
        return False
    return True


def _png_target(args) -> Path | None:
    """The contour plot's file: drawn with matplotlib (the study extra). Without it, the default plot
    is left out with a note (the core install selects without it); an asked-for one is an error."""
    png = _target(args.png, f"{Path(args.data_file).name}.png")
    if png is None or _installed("matplotlib"):
        return png
    if args.png is not None:
        raise ValueError(f"-png draws with matplotlib, which is not installed (pass -png null, or {STUDY_EXTRA})")
    if not args.quiet:
        print(f"[wsvm-span select] no contour plot: matplotlib is not installed ({STUDY_EXTRA})", file=sys.stderr)
    return None


def _class_weights(pairs, labels):
    if not pairs:
        return None
    weights = {}
    for label, w in pairs:
        matches = [v for v in labels if np.isclose(v, float(label))] if _is_number(label) else []
        if not matches:
            raise ValueError(f"class weight for label {label!r}, but the file's labels are {labels.tolist()}")
        weights[matches[0]] = w
    return weights


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def contour_png(points, best, path, *, title: str, criterion: str) -> None:
    """Contour plot of the rate over (log2 C, log2 gamma), best point marked, like grid.py's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cs = sorted({p[0] for p in points})
    gs = sorted({p[1] for p in points})
    Z = np.full((len(gs), len(cs)), np.nan)
    for c, g, r in points:
        Z[gs.index(g), cs.index(c)] = r
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    if len(cs) > 1 and len(gs) > 1:
        top = np.nanmax(Z)
        levels = np.arange(np.floor(top) - 3.0, top + 0.5, 0.5)  # grid.py: from best - 3 in steps of 0.5
        shown = ax.contour(cs, gs, Z, levels=levels if levels.size > 1 else None)
        ax.clabel(shown, fontsize=7)
    ax.plot(best[0], best[1], "r*", markersize=12)
    ax.set_xlabel("log2(C)")
    ax.set_ylabel("log2(gamma)")
    ax.set_title(f"{title}: {criterion} rate (%)\nbest log2(C) = {_num(best[0])}, log2(gamma) = "
                 f"{_num(best[1])}, rate = {best[2]:.2f}%", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def save_model(search, train, path) -> None:
    """Pickle ``best_estimator_`` (*.pkl, *.pickle) or train and save a LIBSVM model with the selected
    C, gamma and class weights (svm-train's -c -g -wi -e) through libsvm-official."""
    import pickle

    path = Path(path)
    if path.suffix in (".pkl", ".pickle"):
        path.write_bytes(pickle.dumps(search.best_estimator_))
        return
    from libsvm import svmutil

    from ._sklearn_compat import svc_gamma

    svc = search.best_estimator_
    options = f"-s 0 -t 2 -c {svc.C!r} -g {svc_gamma(svc)!r} -e {svc.tol!r} -q"
    for label, weight in (svc.class_weight or {}).items():
        options += f" -w{_num(label)} {weight!r}"
    model = svmutil.svm_train(train.y, train.X, options)
    svmutil.svm_save_model(str(path), model)


def log_mlflow(search, points, args, wall: float) -> None:
    """One parent run for the search, one nested run per grid point with every estimate; both tagged
    with the code version, the hash of the search's settings (this command's config) and the sha256
    of the data file(s), like the study's runs."""
    import mlflow

    from wsvm_span.data.files import content_sha256
    from wsvm_span.study.config import config_hash
    from wsvm_span.study.provenance import code_version, library_versions

    from ._grid import CRITERIA

    res = search.cv_results_
    estimates = [c for c in CRITERIA if c in res]
    settings = {"criterion": args.criterion, "log2c": list(args.log2c), "log2g": list(args.log2g),
                "tol": search.estimator.tol, "folds": args.folds, "class_weight": sorted(args.class_weight),
                "format": args.format, "label_column": args.label_column, "n_features": args.n_features,
                "scale": args.scale}
    tags = {"code_version": code_version(), "config_hash": config_hash(settings),
            "data_sha256": content_sha256(args.data_file)}
    if args.test:
        tags["test_data_sha256"] = content_sha256(args.test)
    mlflow.set_tracking_uri(args.mlflow)
    mlflow.set_experiment(args.mlflow_experiment)
    with mlflow.start_run(run_name=f"select {Path(args.data_file).name}",
                          tags={**tags, **{f"lib.{k}": v for k, v in library_versions().items()}}):
        mlflow.log_params({"data_file": args.data_file, "test_file": args.test, **settings})
        best = points[search.best_index_]
        mlflow.log_metrics({"best_log2c": best[0], "best_log2g": best[1], "best_rate": best[2], "wall_s": wall})
        for i, (c, g, r) in enumerate(points):
            with mlflow.start_run(run_name=f"log2c={_num(c)} log2g={_num(g)}", nested=True, tags=tags):
                mlflow.log_params({"log2c": c, "log2g": g})
                metrics = {"rate": r, "mean_fit_time": float(res["mean_fit_time"][i]),
                           "mean_score_time": float(res["mean_score_time"][i])}
                metrics.update({k: float(res[k][i]) for k in estimates if np.isfinite(res[k][i])})
                mlflow.log_metrics(metrics)
