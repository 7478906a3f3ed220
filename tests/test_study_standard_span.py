"""Experiment 10 (standard SVM, standard-svm-span.md) as a job kind: planning and config checks, one real
job on the breast cancer data against an independent computation (scikit-learn's SVC with its own RBF
kernel on the raw features, brute-force leave-one-out by retraining it, a full QP for D_SV), and the
tables and figures on rows whose numbers are worked out by hand here."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from conftest import LOCAL_MIRROR, require_mirror
from wsvm_span.solvers import qp
from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study.config import RuntimeSettings
from wsvm_span.study.experiments import standard_span as ss
from wsvm_span.study.figures import DRAWINGS
from wsvm_span.study.results_schema import STANDARD_ROW_SCHEMA, read_provenance, read_rows
from wsvm_span.study.runner import run_chunk
from wsvm_span.study.tables import build_table

BCW = "breast_cancer_wisconsin_200_77"


def exp10(tasks, **block):
    return sc.validate_config({"chunk_size": 4, "experiments": {"exp10": {"tasks": tasks, **block}}})


# ------------------------------------------------------------------------------------------- planning
def test_plan_one_job_per_replicate_and_chunk():
    cfg = exp10({
        "mnist_0to4_5to9": {"replicates": 3, "first_seed": 5, "sigma": {"values": [3, 5]}, "log2_C": {"values": [10]}},
        BCW: {"replicates": 2, "sigma": {"values": [2]}, "log2_C": {"start": -2, "stop": 6, "step": 2}},
    })
    jobs = ex.plan_jobs(cfg)
    digits = [j for j in jobs if j.dataset == "mnist_0to4_5to9"]
    bcw = [j for j in jobs if j.dataset == BCW]
    assert [j.seed for j in digits] == [5, 6, 7] and all(j.n_models == 2 for j in digits)
    # 5 grid points in chunks of 4: two jobs per replicate, chunk numbers unique per data set
    assert [(j.seed, j.model_start, j.model_stop, j.chunk) for j in bcw] == [
        (0, 0, 4, 0), (0, 4, 5, 1), (1, 0, 4, 2), (1, 4, 5, 3)]
    job = bcw[1]
    assert job.path == f"results/exp10/{BCW}/standard/chunk-1.parquet"
    assert job.axes == {"sigma": [2.0], "log2_C": [-2.0, 0.0, 2.0, 4.0, 6.0]}
    assert job.loo_models == (4,)
    assert ex.job_from_json(job.to_json()) == job
    assert sc.grid_point(job.axes, 3) == {"sigma": 2.0, "log2_C": 4.0}
    none = ex.plan_jobs(exp10({BCW: {"replicates": 1, "sigma": {"values": [2]}, "log2_C": {"values": [0]}}},
                              loo_method="none"))
    assert none[0].loo_models == ()


@pytest.mark.parametrize("task, block, message", [
    ({"splice": {"replicates": 2, "sigma": {"values": [1]}, "log2_C": {"values": [0]}}}, {}, "one fixed split"),
    ({"nosuchset": {"replicates": 1, "sigma": {"values": [1]}, "log2_C": {"values": [0]}}}, {},
     "unknown data set 'nosuchset'"),
    ({BCW: {"replicates": 1, "sigma": {"values": [0, 1]}, "log2_C": {"values": [0]}}}, {}, "sigma must be positive"),
    ({BCW: {"replicates": 1, "sigma": {"values": [1]}, "log2_C": {"values": []}}}, {}, "empty grid"),
    ({BCW: {"replicates": 1, "sigma": {"values": [1]}, "log2_C": {"start": 2, "stop": 0, "step": 1}}}, {},
     "start"),
    ({BCW: {"replicates": 1, "sigma": {"values": [1]}, "log2_C": {"values": [0]}}}, {"loo_method": "bogus"},
     "bogus"),
    ({BCW: {"replicates": 0, "sigma": {"values": [1]}, "log2_C": {"values": [0]}}}, {}, "replicates"),
    ({BCW: {"sigma": {"values": [1]}, "log2_C": {"values": [0]}}}, {}, "replicates"),
])
def test_config_problems_name_the_key(task, block, message):
    with pytest.raises(sc.ConfigError, match=message):
        exp10(task, **block)


def test_scheduler_hints_count_the_exact_loo():
    cfg = exp10({BCW: {"replicates": 1, "sigma": {"values": [2]}, "log2_C": {"values": [0, 2]}}})
    with_loo = ss.resources(cfg, ex.plan_jobs(cfg)[0])
    cfg_none = exp10({BCW: {"replicates": 1, "sigma": {"values": [2]}, "log2_C": {"values": [0, 2]}}},
                     loo_method="none")
    without = ss.resources(cfg_none, ex.plan_jobs(cfg_none)[0])
    assert with_loo["mem_mb"] >= cfg["resources"]["mem_mb_min"]
    assert with_loo["runtime"] >= without["runtime"] >= cfg["resources"]["runtime_min"]


# ------------------------------------------------------------------------------------------ one real job
@pytest.fixture(scope="module")
def bcw_job(tmp_path_factory):
    require_mirror()
    tmp = tmp_path_factory.mktemp("exp10")
    cfg = exp10({BCW: {"replicates": 1, "first_seed": 3, "sigma": {"values": [2]},
                       "log2_C": {"values": [-2, 4, 20]}}})
    job = ex.plan_jobs(cfg)[0]
    out = tmp / "chunk.parquet"
    settings = RuntimeSettings(data_dir=str(tmp / "data"), data_mirror=str(LOCAL_MIRROR))
    result = run_chunk(job, out, settings)
    from wsvm_span.data import load_dataset

    split = load_dataset(BCW, seed=3, data_dir=tmp / "data", mirror=LOCAL_MIRROR, publishers=False)
    return job, out, result, split


def test_job_rows_match_an_independent_svm(bcw_job):
    """Test error and exact LOO of every row against scikit-learn's SVC with its own RBF kernel
    (gamma = 1 / (2 sigma^2)) on the raw features, LOO by retraining it without each point."""
    job, out, result, split = bcw_job
    df = read_rows(out)
    assert len(df) == 3 and list(df["model_index"]) == [0, 1, 2]
    X, y = split.X_train, split.y_train
    for _, row in df.iterrows():
        gamma = 1.0 / (2 * row["sigma"] ** 2)
        assert row["gamma"] == pytest.approx(gamma)
        svc = SVC(C=2.0 ** row["log2_C"], kernel="rbf", gamma=gamma, tol=1e-7).fit(X, y)
        assert row["test_error"] == pytest.approx(np.mean(svc.predict(split.X_test) != split.y_test), abs=1.5 / 77)
        assert row["n_sv"] == pytest.approx(len(svc.support_), abs=2)
        errors = 0
        for p in svc.support_:  # a non-SV is never a LOO error
            keep = np.arange(len(y)) != p
            fp = SVC(C=2.0 ** row["log2_C"], kernel="rbf", gamma=gamma, tol=1e-7).fit(X[keep], y[keep])
            errors += y[p] * fp.decision_function(X[p:p + 1])[0] <= 0
        assert row["loo_error"] == pytest.approx(errors / len(y), abs=1.5 / len(y))


def test_loo_by_path_gives_the_retrained_rows(bcw_job, tmp_path):
    """loo_method "path" (issue 9's exact solution path): the same job's rows equal the retrained ones in
    every estimator; only t_loo differs."""
    job, out, _, _ = bcw_job
    cfg = exp10({BCW: {"replicates": 1, "first_seed": 3, "sigma": {"values": [2]},
                       "log2_C": {"values": [-2, 4, 20]}}}, loo_method="path")
    path_job = ex.plan_jobs(cfg)[0]
    path_out = tmp_path / "chunk.parquet"
    run_chunk(path_job, path_out, RuntimeSettings(data_dir=str(tmp_path / "data"), data_mirror=str(LOCAL_MIRROR)))
    retrained, by_path = read_rows(out), read_rows(path_out)
    assert by_path["t_loo"].notna().all()
    for col in ("loo_error", "test_error", "span_rule", "span_bound", "n_sv", "n_inbound"):
        assert list(by_path[col]) == list(retrained[col]), col


def test_job_rows_sizes_and_bounds(bcw_job):
    """k = 0; S <= D_SV <= D; D_SV by one full QP on the in-bound SVs; the bound dominates the exact LOO;
    the separable form only for models without bounded SVs (here log2 C = 20)."""
    job, out, _, split = bcw_job
    df = read_rows(out)
    assert (df["n_empty_lambda"] == 0).all()
    assert (df["S"] <= df["D_SV"] * (1 + 1e-9)).all() and (df["D_SV"] <= df["D"] * (1 + 1e-9)).all()
    assert (df["span_bound"] >= df["loo_error"]).all()
    assert np.isnan(df["span_bound_separable"].to_numpy()[df["n_bounded"].to_numpy() > 0]).all()
    hard = df[df["log2_C"] == 20].iloc[0]
    assert hard["n_bounded"] == 0
    assert hard["span_bound_separable"] == pytest.approx(hard["span_bound"], rel=1e-9)  # D >= 1/sqrt(C), m = 0
    # D_SV of the hard-margin model from the rows vs one QP over all of its in-bound SVs
    import wsvm_span as ws

    K = np.exp(-((split.X_train[:, None, :] - split.X_train[None, :, :]) ** 2).sum(-1) / (2 * hard["sigma"] ** 2))
    model = ws.fit_svm(K, split.y_train, 2.0 ** 20)
    M = model.inbound
    n = M.size
    res = qp.solve_qp(2 * K[np.ix_(M, M)], -np.ones(n), np.ones((1, n)), [1.0], lb=np.zeros(n), solver="clarabel")
    assert hard["D_SV"] == pytest.approx(2 * math.sqrt(-res.objective), rel=1e-5)
    assert (df[["t_train", "t_span_rule", "t_span_bound", "t_loo"]] > 0).all().all()


def test_job_file_schema_and_provenance(bcw_job):
    job, out, result, split = bcw_job
    import pyarrow.parquet as pq

    assert pq.read_schema(out).remove_metadata().equals(STANDARD_ROW_SCHEMA)
    prov = read_provenance(out)
    assert prov["kind"] == "standard_span" and prov["loo_method"] == "retrain"
    assert prov["data_files"] == {"breast_cancer/breast-cancer-wisconsin.data":
                                  "402c585309c399237740f635ef9919dc512cca12cbeb20de5e563a4593f22b64"}
    assert prov["spec_hash"] == job.spec_hash
    params = ss.run_params(job, ss.StandardProblem(split=split, qp_solver="clarabel"))
    assert (params["dataset"], params["seed"], params["l"], params["d"]) == (BCW, 3, 200, 9)
    assert params["loo_method"] == "retrain" and params["grid.log2_C"] == "-2.0:20.0:3"
    assert set(ss.row_params(job, result.rows[0])) == {"sigma", "log2_C", "model_index"}


# ------------------------------------------------------------------------------------ tables, figures
def hand_rows() -> pd.DataFrame:
    """Two replicates of a 3-sigma x 1-C digits grid and of a 1-sigma x 3-C grid, numbers chosen by hand."""
    rows = []
    digits = {  # sigma: (test_error per replicate, span_rule per replicate, S, D_SV, D)
        2.0: ((0.30, 0.20), (0.40, 0.30), (0.9, 1.0), (1.8, 2.0), (2.0, 2.0)),
        4.0: ((0.10, 0.12), (0.10, 0.14), (0.6, 0.8), (1.6, 1.6), (1.9, 1.9)),
        8.0: ((0.20, 0.16), (0.08, 0.10), (0.4, 0.4), (1.0, 1.2), (1.5, 1.5)),
    }
    for i, (sigma, (te, rule, S, d_sv, D)) in enumerate(digits.items()):
        for r in range(2):
            rows.append(dict(dataset="mnist_0to4_5to9", seed=r, sigma=sigma, log2_C=10.0, test_error=te[r],
                             span_rule=rule[r], span_bound=1.5, loo_error=rule[r], S=S[r], D_SV=d_sv[r], D=D[r],
                             n_inbound=50, n_sv=50, n_bounded=0, model_index=i))
    bcw = {-2.0: (0.05, 0.60, 0), 2.0: (0.02, 0.03, 5), 6.0: (0.04, 0.05, 8)}  # log2_C: (test, rule, n*)
    for i, (log2_C, (te, rule, n_in)) in enumerate(bcw.items()):
        for r in range(2):
            rows.append(dict(dataset=BCW, seed=r, sigma=2.0, log2_C=log2_C, test_error=te, span_rule=rule,
                             span_bound=0.5, loo_error=te, S=0.5, D_SV=0.8, D=1.2, n_inbound=n_in, n_sv=30,
                             n_bounded=30 - n_in, model_index=i))
    df = pd.DataFrame(rows)
    df["experiment"], df["realization"], df["l"], df["d"], df["chunk"] = "exp10", 1, 317, 784, 0
    df.loc[df["dataset"] == BCW, "l"] = 200
    for c in ("t_train", "t_span_rule", "t_span_bound", "t_loo"):
        df[c] = {"t_train": 0.01, "t_span_rule": 0.002, "t_span_bound": 0.004, "t_loo": 0.5}[c]
    return df


def test_selection_table_by_hand():
    t = build_table("exp10_selection", hand_rows()).data.set_index(["dataset", "estimator"])
    rule = t.loc[("mnist_0to4_5to9", "span_rule")]
    # mean curves: test (0.25, 0.11, 0.18), span-rule (0.35, 0.12, 0.09)
    assert rule["axis"] == "sigma" and rule["at"] == "log2_C = 10"
    assert rule["rmse_curve"] == pytest.approx(100 * math.sqrt((0.1 ** 2 + 0.01 ** 2 + 0.09 ** 2) / 3))
    assert (rule["argmin"], rule["argmin_test"], rule["argmin_diff"]) == (8.0, 4.0, 4.0)
    # per replicate: span-rule selects sigma 8 (test 0.20 and 0.16); the minimum is at sigma 4 (0.10, 0.12)
    assert rule["selected_test_error"] == pytest.approx(18.0) and rule["min_error"] == pytest.approx(11.0)
    rmse_models = [100 * math.sqrt(np.mean((np.array(r) - np.array(e)) ** 2))
                   for r, e in (((0.40, 0.10, 0.08), (0.30, 0.10, 0.20)), ((0.30, 0.14, 0.10), (0.20, 0.12, 0.16)))]
    assert rule["rmse_models"] == pytest.approx(np.mean(rmse_models))
    assert rule["rmse_models_sd"] == pytest.approx(np.std(rmse_models, ddof=1))
    assert math.isnan(t.loc[("mnist_0to4_5to9", "span_bound"), "rmse_curve"])
    # breast cancer: the span-rule's 0.60 at log2 C = -2 is a model without in-bound SV; the RMSE over the
    # points with n* >= 1 leaves it out
    b = t.loc[(BCW, "span_rule")]
    assert b["axis"] == "log2_C" and b["no_inbound_pct"] == pytest.approx(100 / 3)
    assert b["rmse_curve"] == pytest.approx(100 * math.sqrt((0.55 ** 2 + 0.01 ** 2 + 0.01 ** 2) / 3))
    assert b["rmse_curve_inbound"] == pytest.approx(100 * math.sqrt((0.01 ** 2 + 0.01 ** 2) / 2))
    assert b["argmin_diff"] == 0.0


def test_diameters_and_cost_tables_by_hand():
    t = build_table("exp10_diameters", hand_rows()).data
    row = t[(t["dataset"] == "mnist_0to4_5to9") & (t["sigma"] == 2.0)].iloc[0]
    assert row["S"] == pytest.approx(0.95) and row["S_sd"] == pytest.approx(np.std([0.9, 1.0], ddof=1))
    assert row["D_SV"] == pytest.approx(1.9) and row["D"] == pytest.approx(2.0)
    assert row["s_over_d_sv"] == pytest.approx(np.mean([0.9 / 1.8, 1.0 / 2.0]))
    assert row["s_within_d_sv_pct"] == 100.0 and row["n_replicates"] == 2
    bad = hand_rows()
    bad.loc[0, "S"] = 2.5  # S > D_SV: the table shows it
    row = build_table("exp10_diameters", bad).data.iloc[0]
    assert row["s_within_d_sv_pct"] == pytest.approx(50.0)
    cost = build_table("exp10_cost", hand_rows()).data.set_index("dataset")
    assert cost.loc[BCW, "t_loo"] == pytest.approx(500.0)
    assert cost.loc[BCW, "loo_over_span_rule"] == pytest.approx(250.0)
    assert cost.loc[BCW, "loo_over_train"] == pytest.approx(50.0)


def test_cost_caption_names_the_engines_of_the_rows():
    """The exact LOO retrains with the rows' engine, and the caption says which (it once said LIBSVM whatever
    had trained)."""
    rows = hand_rows()
    rows["engine"] = "smo"
    assert "retraining without each SV (engine smo)" in build_table("exp10_cost", rows).caption
    rows.loc[rows.index[0], "engine"] = "sklearn"
    assert "(engines sklearn and smo)" in build_table("exp10_cost", rows).caption
    assert "(the configured engine)" in build_table("exp10_cost", rows.drop(columns="engine")).caption


def test_figures_draw(tmp_path, drawn):
    """The plotted numbers, from hand_rows by hand: the digits grid varies sigma (log2 C = 10), S, D_SV and D
    are the means of its two replicates; the breast-cancer grid varies log2 C, its curves the rows' values."""
    from figure_data import curves

    for kind in ("exp10-diameters", "exp10-curves"):
        outputs = [tmp_path / f"{kind}.png", tmp_path / f"{kind}.pdf"]
        DRAWINGS[kind](hand_rows(), outputs, 60)
        assert all(p.stat().st_size > 1000 for p in outputs)
    diameters, curve_fig = drawn[-2], drawn[-1]
    (ax,) = diameters.axes
    sizes = curves(ax)
    np.testing.assert_allclose(sizes["S (span)"][1], [0.95, 0.7, 0.4])
    np.testing.assert_allclose(sizes["D_SV (in-bound SVs)"][1], [1.9, 1.6, 1.1])
    np.testing.assert_allclose(sizes["D (all points)"][1], [2.0, 1.9, 1.5])
    np.testing.assert_array_equal(sizes["S (span)"][0], [2.0, 4.0, 8.0])
    digits, bcw = curve_fig.axes[:2]
    np.testing.assert_allclose(curves(digits)["Test error"][1], [0.25, 0.11, 0.18])
    np.testing.assert_allclose(curves(digits)["Span-rule"][1], [0.35, 0.12, 0.09])
    np.testing.assert_array_equal(curves(bcw)["Test error"][0], [-2.0, 2.0, 6.0])
    np.testing.assert_allclose(curves(bcw)["Test error"][1], [0.05, 0.02, 0.04])


def test_span_ratio_figure_by_hand(tmp_path, drawn):
    """S / D_SV and S / D per model, mean +- sd over the two digits replicates, worked out by hand from
    hand_rows (sigma 2, 4, 8); the breast-cancer grid does not vary sigma: no panel."""
    from figure_data import curves

    outputs = [tmp_path / "ratio.png", tmp_path / "ratio.pdf"]
    DRAWINGS["exp10-span-ratio"](hand_rows(), outputs, 60)
    assert all(p.stat().st_size > 1000 for p in outputs)
    (ax,) = drawn[-1].axes
    ratios = curves(ax)
    per_model = {  # label: per sigma, the two replicates' S / D_SV or S / D
        "S / D_SV (in-bound SVs)": [(0.9 / 1.8, 1.0 / 2.0), (0.6 / 1.6, 0.8 / 1.6), (0.4 / 1.0, 0.4 / 1.2)],
        "S / D (all points)": [(0.9 / 2.0, 1.0 / 2.0), (0.6 / 1.9, 0.8 / 1.9), (0.4 / 1.5, 0.4 / 1.5)],
    }
    assert set(ratios) == set(per_model)
    for text, reps in per_model.items():
        np.testing.assert_array_equal(ratios[text][0], [2.0, 4.0, 8.0])
        np.testing.assert_allclose(ratios[text][1], [np.mean(r) for r in reps])
    # the error bars: mean +- sample sd of the two replicates
    container = next(c for c in ax.containers if c.get_label() == "S / D_SV (in-bound SVs)")
    (bars,) = container.lines[2]
    spans = np.array([seg[:, 1] for seg in bars.get_segments()])
    sd = [np.std(r, ddof=1) for r in per_model["S / D_SV (in-bound SVs)"]]
    np.testing.assert_allclose(spans[:, 1] - spans[:, 0], 2 * np.array(sd), atol=1e-12)
    # no data set varies sigma: a figure saying so
    DRAWINGS["exp10-span-ratio"](hand_rows().query("dataset == @BCW"), outputs, 60)
    assert "varies sigma" in drawn[-1].axes[0].texts[0].get_text()
