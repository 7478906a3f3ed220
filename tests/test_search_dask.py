"""SpanSearchCV across processes: on a real dask.distributed cluster (issue 45, item 4; docs/distributed.md), and in
joblib's loky processes.

A ``LocalCluster`` of two worker processes is started here and the search runs under joblib's dask backend; the
ground truth is the same search run serially in this process. The cluster's scheduler records what it sends its
workers (``_dask_checks.ShippedBytes``): no task carries, and no scattered array is, anything near the size of an l x l
kernel, which is what a task would carry if the search shipped its kernels instead of X (as its threads share them).
"""
from __future__ import annotations

import numpy as np
import pytest
from distributed import Client, LocalCluster
from joblib import parallel_config
from sklearn.datasets import dump_svmlight_file, make_classification
from sklearn.model_selection import StratifiedKFold

from wsvm_span.cli import main
from wsvm_span.model_selection import SpanSearchCV, SVMPlusSearchCV
from wsvm_span.model_selection._dask_checks import differing_results, watch_shipped

@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0") as local, \
            Client(local) as client:
        yield client


@pytest.fixture
def shipped(cluster):
    """A fresh record of what the cluster's scheduler sends; the test reads it back with the function yielded."""
    read, stop = watch_shipped(cluster)
    yield read
    stop()


CASES = {
    # three kernels for two workers: a task per kernel
    "two classes, a task per kernel": dict(
        classes=2, grid={"C": [0.5, 4.0, 32.0, 256.0], "gamma": [0.02, 0.1, 0.5]},
        extra_criteria=("span_bound", "cv_error"), heldout=True),
    # one kernel, two walks (class_weight): each of two tasks computes that kernel itself
    "two classes, one kernel's walks in two tasks": dict(
        classes=2, grid={"C": [1.0, 8.0, 64.0], "gamma": [0.1], "class_weight": [None, "balanced"]},
        extra_criteria=("loo_error",), heldout=False),
    # the one-vs-one machines on every kernel, linear and rbf
    "three classes, two kernel families": dict(
        classes=3, grid=[{"kernel": ["rbf"], "C": [1.0, 16.0], "gamma": [0.05, 0.5]},
                         {"kernel": ["linear"], "C": [0.25, 2.0]}],
        extra_criteria=("cv_error",), heldout=True),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", list(CASES))
def test_a_search_on_a_dask_cluster_equals_the_serial_one_and_ships_no_kernel(shipped, case, capsys):
    spec = CASES[case]
    l, d = 400, 6
    X, y = make_classification(n_samples=l + 100, n_features=d, n_informative=4, n_classes=spec["classes"],
                               n_clusters_per_class=1, random_state=3)
    X_held, y_held = X[l:], y[l:]
    X, y = X[:l], y[:l]
    fit = dict(heldout=(X_held, y_held)) if spec["heldout"] else {}

    def search(**kwargs):
        return SpanSearchCV(param_grid=spec["grid"], extra_criteria=spec["extra_criteria"],
                            cv=StratifiedKFold(5, shuffle=True, random_state=0), **kwargs)

    serial = search(n_jobs=1).fit(X, y, **fit)
    capsys.readouterr()
    with parallel_config(backend="dask"):
        spread = search(n_jobs=-1, verbose=1).fit(X, y, **fit)
    # every key the same, exactly, but the clocks (the walks depend on the grid only, and every task computes its
    # kernel from the same X with the same code)
    assert differing_results(serial.cv_results_, spread.cv_results_) == []
    assert spread.best_params_ == serial.best_params_
    # the progress lines are printed here, one per point, as the tasks' results arrive (a worker's stdout is its own)
    ends = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[SpanSearchCV ")]
    assert len(ends) == len(serial.cv_results_["params"]) and ends[-1].startswith(f"[SpanSearchCV {len(ends)}/")

    tasks, scattered = shipped()
    kernel = l * l * 8  # one training kernel, float64
    assert tasks, "the search sent no task to the cluster"
    # the instrument sees the arrays that travel: X itself was scattered
    assert X.astype(np.float64).nbytes in scattered.values(), scattered
    # each task carries its points' C_i inline (l doubles each, at most 12 points a task here) and reads X, y and the
    # folds from the cluster's memory: all well under one kernel, which a shipped kernel (or the squared distances
    # the search computes once per search in one process) would exceed on its own
    assert max(tasks) < kernel / 4, (max(tasks), kernel)
    assert max(scattered.values()) < kernel / 10, (scattered, kernel)
    assert sum(tasks) + sum(scattered.values()) < kernel, (sum(tasks), sum(scattered.values()), kernel)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("privileged", [False, True])
def test_select_on_a_local_dask_cluster_prints_what_it_prints_in_one_process(tmp_path, capsys, privileged):
    """`wsvm-span select --dask local --jobs 2` starts a LocalCluster of two worker processes: the same grid lines and
    .out file as without --dask, and its progress line (fit callbacks, run in this process) counts every point; with
    --privileged (SVMPlusSearchCV) the same grid lines and .out file."""
    X, y = make_classification(n_samples=200, n_features=5, n_informative=3, random_state=5)
    dump_svmlight_file(X, y, str(tmp_path / "train.txt"), zero_based=False)
    grid = ["-log2c", "-1,5,2", "-log2g", "-5,1,2", "-png", "null"]
    if privileged:
        (tmp_path / "priv.csv").write_text("".join(f"{label},{v:.6g}\n" for label, v in zip(y, X[:, 0] + 0.1)))
        grid = [*grid[:-2], "-log2gp", "0,0,1", "-log2pg", "0,0,1", "--privileged", str(tmp_path / "priv.csv")]
    printed = {}
    for name, more in {"threads": [], "dask": ["--dask", "local", "--jobs", "2"]}.items():
        assert main(["select", str(tmp_path / "train.txt"), *grid, "-out", str(tmp_path / f"{name}.out"), *more]) == 0
        printed[name] = capsys.readouterr()
    assert printed["dask"].out == printed["threads"].out
    assert (tmp_path / "dask.out").read_text() == (tmp_path / "threads.out").read_text()
    if privileged:  # SVM+'s lines: its LOO rule at each of the 16 points
        assert sum(line.startswith("[loo_rule] ") for line in printed["dask"].out.splitlines()) == 16
    else:
        assert "[wsvm-span select] 16/16 grid points" in printed["dask"].err


@pytest.mark.timeout(120)
def test_a_search_in_loky_processes_equals_the_serial_one():
    """joblib's loky backend ships tasks to processes as dask does (it shares no memory): the same results."""
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3, random_state=4)
    grid = {"C": [1.0, 8.0], "gamma": [0.05, 0.5], "class_weight": [None, "balanced"]}
    serial = SpanSearchCV(param_grid=grid, extra_criteria=("cv_error",)).fit(X, y)
    with parallel_config(backend="loky"):
        spread = SpanSearchCV(param_grid=grid, extra_criteria=("cv_error",), n_jobs=2).fit(X, y)
    assert differing_results(serial.cv_results_, spread.cv_results_) == []


@pytest.mark.timeout(120)
def test_an_svm_plus_search_on_a_dask_cluster_equals_the_serial_one(cluster, capsys):
    """SVMPlusSearchCV's tasks (each trains its point from X and X_privileged) on the cluster: the same results, and
    the progress lines printed here."""
    X, y = make_classification(n_samples=120, n_features=6, n_informative=4, random_state=2)
    X_priv = X[:, :2] + 0.1
    grid = {"C": [1.0, 8.0], "gamma": [0.1, 0.5], "gamma_plus": [1.0]}
    serial = SVMPlusSearchCV(param_grid=grid).fit(X, y, X_privileged=X_priv)
    capsys.readouterr()
    with parallel_config(backend="dask"):
        spread = SVMPlusSearchCV(param_grid=grid, n_jobs=-1, verbose=1).fit(X, y, X_privileged=X_priv)
    assert differing_results(serial.cv_results_, spread.cv_results_) == []
    assert "[SVMPlusSearchCV 4/4] END" in capsys.readouterr().out
