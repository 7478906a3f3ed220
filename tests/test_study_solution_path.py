"""Experiment 7 (the solution path's reference experiment, solution-path.md) as a job kind: planning and config
checks, real jobs run with tracking whose rows are recomputed independently (the data drawn again, the kernel
by its formula, LIBSVM through scikit-learn's SVC with sample weights, the path's events by follow_path), and
the table and figure on rows whose numbers are chosen by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from wsvm_span.data.four_gaussians import make_four_gaussians
from wsvm_span.engines import fit_svm
from wsvm_span.solution_path import follow_path
from wsvm_span.study import catalog
from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study.config import RuntimeSettings
from wsvm_span.study.config.estimate import estimate, load_calibration
from wsvm_span.study.experiments import reference_path as sp
from wsvm_span.study.figures import DRAWINGS
from wsvm_span.study.results_schema import ROW_SCHEMAS, read_provenance, read_rows
from wsvm_span.study.runner import run_chunk
from wsvm_span.study.tables import build_table

#: LIBSVM's solutions are tolerance-accurate (it keeps Q in single precision: ~1e-5 in f measured); the
#: path's are exact to rounding, so two computations of the same model agree to this in f
F_ATOL = 1e-4


def exp7(**block):
    return sc.validate_config({"seeds": [3], "experiments": {"exp7": {"sizes": [40], "replicates": 2, **block}}})


# ------------------------------------------------------------------------------------------- planning
def test_plan_one_job_per_size_seeded_from_the_config():
    cfg = exp7(sizes=[40, 80], resolve=5)
    jobs = ex.plan_jobs(cfg)
    assert [(j.n, j.seeds, j.n_models, j.resolve) for j in jobs] == [(40, (3, 4), 2, 5), (80, (3, 4), 2, 5)]
    assert jobs[1].path == "results/exp7/four_gaussians/n80/chunk-0.parquet"
    assert ex.job_from_json(jobs[1].to_json()) == jobs[1]
    assert ex.plan_jobs(exp7())[0].resolve is None and ex.plan_jobs(exp7())[0].d1_start == 0.01
    assert sp.resources(cfg, jobs[1])["mem_mb"] >= cfg["resources"]["mem_mb_min"]
    est = estimate(jobs, load_calibration())
    assert est.per_experiment_cpu_s["exp7"] > 0 and est.peak_job_memory_mb > 0


@pytest.mark.parametrize("block, message", [
    ({"sizes": [40, 42]}, "not multiples of 4"),
    ({"sizes": [40, 40]}, "duplicates"),
    ({"d1_start": 0.0}, "d1_start"),
    ({"d1_start": 12.0}, "d1_start"),
    ({"resolve": 0}, "resolve"),
    ({"replicates": 0}, "replicates"),
    ({"sizes": []}, "sizes"),
    ({"bogus": 1}, "bogus"),
])
def test_config_problems_name_the_key(block, message):
    with pytest.raises(sc.ConfigError, match=message):
        exp7(**block)


def test_config_refuses_the_path_engine():
    with pytest.raises(sc.ConfigError, match="svm.engine"):
        sc.validate_config({"svm": {"engine": "path"}, "experiments": {"exp7": {"sizes": [40], "replicates": 1}}})


def test_default_and_paper_configs_plan_exp7():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    small = [j for j in ex.plan_jobs(sc.load_config(root / "config" / "config.yaml")) if j.experiment == "exp7"]
    assert [(j.n, len(j.seeds)) for j in small] == [(200, 2), (400, 2)] and all(j.resolve for j in small)
    paper = [j for j in ex.plan_jobs(sc.load_config(root / "config" / "paper.yaml")) if j.experiment == "exp7"]
    assert [(j.n, j.seeds, j.resolve) for j in paper] == [(n, tuple(range(10)), None) for n in (400, 800, 1200, 1600)]


# ------------------------------------------------------------------------------------------ real jobs
@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Two jobs with tracking: n = 40 re-solving at every breakpoint, n = 64 at 3 sampled breakpoints."""
    tmp = tmp_path_factory.mktemp("exp7")
    settings = RuntimeSettings(tracking_enabled=True, tracking_uri=f"sqlite:///{tmp / 'mlflow.db'}",
                               config_hash="test-hash")
    jobs = ex.plan_jobs(exp7()) + ex.plan_jobs(exp7(sizes=[64], resolve=3))
    results = [run_chunk(job, tmp / f"{job.variant}.parquet", settings) for job in jobs]
    return jobs, results, [tmp / f"{job.variant}.parquet" for job in jobs], settings


def independent_problem(n: int, seed: int):
    """The data set drawn again, the kernel by its formula exp(-(1/2)||x - x'||^2), the path's weights."""
    X, y, group = make_four_gaussians(n, seed)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    return K, y, np.where(group == 1, 0.01, 10.0), np.full(n, 10.0)


def svc_decision(K, y, c):
    """LIBSVM through scikit-learn's SVC: per-instance weights as sample weights on C = 1."""
    svc = SVC(C=1.0, kernel="precomputed", tol=1e-10).fit(K, y, sample_weight=c)
    return svc.decision_function(K) * (1.0 if svc.classes_[1] == 1 else -1.0)


def test_rows_match_an_independent_recomputation(ran):
    jobs, _, paths, _ = ran
    for job, path in zip(jobs, paths):
        df = read_rows(path)
        assert list(df.columns) == ROW_SCHEMAS["reference_path"].names
        assert list(df["seed"]) == list(job.seeds) and (df["n"] == job.n).all() and (df["l"] == job.n).all()
        for _, row in df.iterrows():
            K, y, c_old, c_new = independent_problem(job.n, int(row["seed"]))
            res = follow_path(fit_svm(K, y, c_old), K, c_new)
            # the events and |M| of the path from this (independently built) problem
            assert row["n_events"] == res.n_events and row["max_margin_size"] == res.margin_sizes.max()
            assert row["mean_margin_size"] == pytest.approx(res.mean_margin_size)
            # the path's end is LIBSVM trained from scratch at c_new
            assert np.abs(res.model.decision_train - svc_decision(K, y, c_new)).max() < F_ATOL
            assert row["end_max_abs_df"] < F_ATOL and row["fallback"] == 0
            # at every breakpoint the exact model (a path from the start straight to c(theta)) is LIBSVM's
            worst = max(np.abs(follow_path(fit_svm(K, y, c_old), K, c_old + t * (c_new - c_old)).model.decision_train
                               - svc_decision(K, y, c_old + t * (c_new - c_old))).max()
                        for t in np.unique(res.events["theta"])[:: max(1, res.n_events // 8)])
            assert worst < F_ATOL and row["max_abs_df"] < F_ATOL
            assert 0 <= row["n_nonunique_b"] <= row["n_resolved"]
            # the timing columns: LIBSVM at every breakpoint, measured or scaled from the sample
            expected = res.n_events if job.resolve is None else min(job.resolve, res.n_events)
            assert row["n_resolved"] == expected
            assert row["t_libsvm"] == pytest.approx(row["t_resolve"] * row["n_events"])
            assert row["speedup"] == pytest.approx(row["t_libsvm"] / row["t_path"])
            assert row["t_path"] > 0 and row["t_resolve"] > 0
            assert (row["gamma"], row["d1_start"], row["d1_end"], row["d2_weight"]) == (0.5, 0.01, 10.0, 10.0)


def test_events_grow_with_n(ran):
    _, _, paths, _ = ran
    small, large = (read_rows(p) for p in paths)
    assert small["n_events"].median() < large["n_events"].median()


def test_mlflow_parent_per_job_child_per_row(ran):
    from mlflow.tracking import MlflowClient

    jobs, results, paths, settings = ran
    client = MlflowClient(settings.tracking_uri)
    for job, res, path in zip(jobs, results, paths):
        rows = read_rows(path)
        parent = client.get_run(res.parent_run_id)
        tags, params = parent.data.tags, parent.data.params
        assert tags["config_hash"] == "test-hash" and tags["code_version"] and tags["wsvm.complete"] == "true"
        assert "data_sha256" in tags and params["n"] == str(job.n)
        assert params["resolve"] == ("all" if job.resolve is None else str(job.resolve))
        children = client.search_runs([parent.info.experiment_id],
                                      f"tags.`wsvm.job_run` = '{res.parent_run_id}'")
        assert len(children) == job.n_models
        for child in children:
            row = rows[rows["model_index"] == int(child.data.params["model_index"])].iloc[0]
            assert int(child.data.params["seed"]) == row["seed"]
            for metric in ("n_events", "t_path", "t_libsvm", "speedup", "max_abs_df"):
                assert child.data.metrics[metric] == pytest.approx(row[metric])
    prov = read_provenance(paths[1])
    assert prov["kind"] == "reference_path" and prov["resolve"] == 3 and prov["spec_hash"] == jobs[1].spec_hash


def test_table_and_figure_from_the_job_rows(ran, tmp_path, drawn):
    from figure_data import points

    _, _, paths, _ = ran
    rows = read_rows(paths)
    t = build_table("exp7_path", rows).data.set_index("l")
    assert list(t.index) == [40, 64]
    assert t.loc[40, "n_events"] == rows[rows["n"] == 40]["n_events"].median()
    figs = {}
    for fig in catalog.figures_for(["exp7"]):
        DRAWINGS[fig.drawer](rows, [tmp_path / f"{fig.stem}.png", tmp_path / f"{fig.stem}.pdf"], 60)
        assert (tmp_path / f"{fig.stem}.png").stat().st_size > 5000
        figs[fig.drawer] = drawn[-1]
    assert list(figs) == ["exp7-path", "exp7-alpha-paths"]
    # the plotted numbers: one point per data set (n, events), and the medians per n through them
    events, seconds = figs["exp7-path"].axes
    np.testing.assert_array_equal(points(events), rows[["n", "n_events"]].to_numpy(dtype=float))
    (median_line,) = events.lines
    np.testing.assert_array_equal(median_line.get_xdata(), [40, 64])
    np.testing.assert_array_equal(median_line.get_ydata(), [rows[rows["n"] == n]["n_events"].median() for n in (40, 64)])
    np.testing.assert_array_equal(points(seconds)[:len(rows)], rows[["n", "t_path"]].to_numpy(dtype=float))
    assert [t.name for t in catalog.tables_for(["exp7"])] == ["exp7_path"]


def test_alpha_paths_figure_against_libsvm(tmp_path, drawn):
    """The traced path of the smallest data set of the rows (n = 40, seed 1) with 40 validation points from the
    same draw: every plotted alpha at every breakpoint against scikit-learn's SVC (LIBSVM) trained at those
    weights, and the plotted validation error on every piece against SVC's errors at the piece's midpoint."""
    rows = pd.DataFrame({"n": [80, 40, 40], "seed": [0, 2, 1], "n_events": [1, 1, 1]})
    DRAWINGS["exp7-alpha-paths"](rows, [tmp_path / "a.png", tmp_path / "a.pdf"], 60)
    ax_alpha, ax_error = drawn[-1].axes
    # the data drawn again: 80 four-Gaussian points, the first 10 of each Gaussian for training
    X_all, y_all, group_all = make_four_gaussians(80, 1)
    train = np.arange(80) % 20 < 10
    sq = ((X_all[:, None, :] - X_all[None, train, :]) ** 2).sum(-1)
    K_all = np.exp(-0.5 * sq)
    K, K_val = K_all[train], K_all[~train]
    y, y_val, d1 = y_all[train], y_all[~train], group_all[train] == 1
    lines = ax_alpha.lines[:40]  # one line per training point, in order (then the legend's empty proxies)
    weights = lines[0].get_xdata()
    assert weights[0] == pytest.approx(0.01) and weights[-1] == pytest.approx(10.0) and weights.size > 10
    for k, w in enumerate(weights):
        c = np.where(d1, w, 10.0)
        svc = SVC(C=1.0, kernel="precomputed", tol=1e-10).fit(K, y, sample_weight=c)
        alpha = np.zeros(40)
        alpha[svc.support_] = np.abs(svc.dual_coef_[0])
        plotted = np.array([line.get_ydata()[k] for line in lines])
        np.testing.assert_allclose(plotted, alpha, atol=ALPHA_ATOL * 10.0, err_msg=f"breakpoint {k}, weight {w}")
    # the validation error: a step line (lo, hi) per piece of the path
    (steps,) = [line for line in ax_error.lines if line.get_label() == "validation error"]
    x, err = steps.get_xdata().reshape(-1, 2), steps.get_ydata().reshape(-1, 2)[:, 0]
    assert x[0, 0] == pytest.approx(0.01) and x[-1, 1] == pytest.approx(10.0)
    np.testing.assert_allclose(x[1:, 0], x[:-1, 1])  # the pieces cover the path
    checked = 0
    for (lo, hi), e in zip(x, err):
        if hi - lo < 1e-6:
            continue  # too short for LIBSVM's tolerance to tell
        c = np.where(d1, 0.5 * (lo + hi), 10.0)
        svc = SVC(C=1.0, kernel="precomputed", tol=1e-10).fit(K, y, sample_weight=c)
        f = svc.decision_function(K_val) * (1.0 if svc.classes_[1] == 1 else -1.0)
        if np.min(np.abs(f)) < F_ATOL:
            continue  # a validation point on the boundary within LIBSVM's accuracy
        assert e == pytest.approx(100 * np.mean(y_val * f <= 0)), (lo, hi)
        checked += 1
    assert checked >= 0.8 * len(err)


#: LIBSVM's alpha is tolerance-accurate and the path solves the problem with a tiny ridge on Q's diagonal:
#: the two agree to this, relative to the largest weight (10)
ALPHA_ATOL = 1e-4


# ------------------------------------------------------------------------------------ table by hand
def hand_rows() -> pd.DataFrame:
    """Three data sets of n = 400 and two of n = 800, numbers chosen by hand."""
    rows = []
    for n, t_path, t_libsvm, events, margin, df, fb in (
            (400, 0.1, 2.0, 300, 3.0, 2e-6, 0), (400, 0.2, 3.0, 340, 4.0, 5e-6, 0), (400, 0.4, 5.0, 320, 5.0, 1e-6, 1),
            (800, 0.5, 20.0, 700, 4.0, 3e-6, 0), (800, 0.7, 21.0, 720, 6.0, 4e-6, 0)):
        rows.append(dict(n=n, t_path=t_path, t_libsvm=t_libsvm, speedup=t_libsvm / t_path, n_events=events,
                         mean_margin_size=margin, n_resolved=10, max_abs_df=df, fallback=fb))
    df = pd.DataFrame(rows)
    df["dataset"], df["experiment"] = "four_gaussians", "exp7"
    return df


def test_table_by_hand():
    t = build_table("exp7_path", hand_rows()).data.set_index("l")
    a = t.loc[400]
    assert (a["t_path"], a["t_libsvm"], a["n_events"], a["mean_margin_size"]) == (0.2, 3.0, 320, 4.0)
    assert a["speedup"] == pytest.approx(15.0) and a["speedup_min"] == pytest.approx(12.5)
    assert a["max_abs_df_e6"] == pytest.approx(5.0) and a["n_fallbacks"] == 1 and a["n_replicates"] == 3
    b = t.loc[800]
    assert b["t_path"] == pytest.approx(0.6) and b["speedup_min"] == pytest.approx(30.0) and b["n_fallbacks"] == 0
    assert math.isnan(a["speedup_sd"])
