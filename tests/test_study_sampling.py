"""Experiment 9 (the sampling trainer at scale) as a job kind: planning and config checks, two real jobs
(skin_nonskin with the span grid, ringnorm with the precomputed kernel over its budget) whose rows are checked
against an independent computation (scikit-learn's SVC with its own RBF trained directly, its KKT conditions
recomputed here with numpy, SV counts recounted from it; the span-rule and K-fold CV from the full precomputed
kernel), the MLflow runs, the row schema, and the table and figure built from the rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from conftest import LOCAL_MIRROR, require_mirror
import wsvm_span as ws
from wsvm_span.engines.random_sampling import fit_sampling
from wsvm_span.model import decision_values
from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study.config import RuntimeSettings
from wsvm_span.study.experiments import sampling as sx
from wsvm_span.study.figures import DRAWINGS
from wsvm_span.study.results_schema import SchemaError, read_rows, rows_to_table
from wsvm_span.study.runner import run_chunk
from wsvm_span.study.tables import build_table

#: LIBSVM at tol 1e-7 against the same LIBSVM run through another path (features vs a fitted SVC, float32
#: kernel cache): decision values agree to ~1e-5 relative to the alphas' size; 1e-4 leaves room, far below
#: a different model (differences of order 0.1-1)
DECISION_ATOL = 1e-4


def exp9(**block):
    base = {"sizes": {"skin_nonskin": [600]}, "log2_C": {"values": [0, 4]}}
    return sc.validate_config({"experiments": {"exp9": {**base, **block}}})


# ------------------------------------------------------------------------------------------- planning
def test_plan_one_job_per_data_set_and_size():
    cfg = exp9(sizes={"skin_nonskin": [512, "all"], "ringnorm_d20": [256, 512], "mnist_2_9": ["all"]},
               engines=["sampling", "sklearn", "sklearn-rbf"],
               span_grid={"dataset": "skin_nonskin", "size": "all"})
    jobs = ex.plan_jobs(cfg)
    assert [(j.dataset, j.size, j.span) for j in jobs] == [
        ("skin_nonskin", "512", False), ("skin_nonskin", "all", True), ("ringnorm_d20_l256", "256", False),
        ("ringnorm_d20_l512", "512", False), ("mnist_2_9", "all", False)]
    job = jobs[1]
    assert job.engines == ("sklearn-rbf", "sampling", "sklearn") and job.reference == "sklearn-rbf"
    assert job.n_models == 6 and [job.point(i) for i in (0, 2, 3)] == [
        (0.0, "sklearn-rbf"), (0.0, "sklearn"), (4.0, "sklearn-rbf")]
    assert (job.cv_folds, job.cv_folds_run) == (5, 1) and jobs[0].cv_folds_run == 0
    assert job.path == "results/exp9/skin_nonskin/lall/chunk-0.parquet"
    assert ex.job_from_json(job.to_json()) == job
    hints = sx.resources(cfg, job)
    assert hints["mem_mb"] >= cfg["resources"]["mem_mb_min"] and hints["runtime"] > sx.resources(cfg, jobs[0])["runtime"]


@pytest.mark.parametrize("block, message", [
    ({"sizes": {"nosuchset": [100]}}, "unknown data set 'nosuchset'"),
    ({"sizes": {"mnist_2_9": [20000]}}, "exceed the 11907 training points"),
    ({"sizes": {"skin_nonskin": [245057]}}, "exceed the 240961 training points"),
    ({"sizes": {"ringnorm_d20": ["all"]}}, "has no 'all'"),
    ({"engines": ["sampling", "bogus"]}, "unknown engine 'bogus'"),
    ({"span_grid": {"dataset": "skin_nonskin", "size": 1024}}, "not among"),
    ({"span_grid": {"dataset": "skin_nonskin", "size": 600, "cv_folds": 3, "cv_folds_run": 4}}, "cv_folds_run"),
    ({"engines": ["sklearn"], "span_grid": {"dataset": "skin_nonskin", "size": 600}}, "needs the sampling engine"),
    ({"sizes": {"skin_nonskin": [8]}}, "exp9"),
    ({"sizes": {"skin_nonskin": ["half"]}}, "exp9"),
    ({"log2_C": {"values": []}}, "empty grid"),
])
def test_config_problems_name_the_key(block, message):
    with pytest.raises(sc.ConfigError, match=message):
        exp9(**block)


def test_shipped_configs_plan_exp9():
    for path, n_jobs in (("config/config.yaml", 3), ("config/paper.yaml", 14)):
        cfg = sc.load_config(path)
        assert len(ex.plan_jobs(cfg, ("exp9",))) == n_jobs
    small = sc.load_config("config/config.yaml")["experiments"]["exp9"]
    assert max(max(int(s) for s in v) for v in small["sizes"].values()) <= 2048  # the default run stays short


# ------------------------------------------------------------------------------------------ real jobs
L_SKIN, L_RING = 600, 1024


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """skin_nonskin at l = 600 (span grid, 3-fold CV, every engine) and ringnorm at l = 1024 (the 8 MiB kernel
    over a 3 MiB budget), with MLflow tracking."""
    require_mirror()
    tmp = tmp_path_factory.mktemp("exp9")
    cfg = exp9(sizes={"skin_nonskin": [L_SKIN], "ringnorm_d20": [L_RING]}, r0=128, precomputed_max_mb=3,
               test_size=1000, span_grid={"dataset": "skin_nonskin", "size": L_SKIN, "cv_folds": 3, "cv_folds_run": 3})
    jobs = ex.plan_jobs(cfg)
    settings = RuntimeSettings(tracking_enabled=True, tracking_uri=f"sqlite:///{tmp / 'mlflow.db'}",
                               data_dir=str(tmp / "data"), data_mirror=str(LOCAL_MIRROR), config_hash="test-hash")
    results = [run_chunk(job, tmp / f"{job.dataset}.parquet", settings) for job in jobs]
    rows = read_rows([tmp / f"{job.dataset}.parquet" for job in jobs])
    data = {job.dataset: sx.large_training_set(job.dataset, job.size, job.seed, job.test_size, tmp / "data",
                                               LOCAL_MIRROR) for job in jobs}
    return jobs, results, rows, settings, data, tmp


def _svc_violation(svc: SVC, X, y, C: float) -> float:
    """Largest KKT violation (in y f) of an SVC solution, recomputed here from its duals and f."""
    alpha = np.zeros(y.size)
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    m = y * svc.decision_function(X)
    bound = alpha >= C * (1 - 1e-9)
    zero = alpha == 0
    inbound = ~zero & ~bound
    return float(max(np.max(1 - m[zero], initial=0), np.max(np.abs(m[inbound] - 1), initial=0),
                     np.max(m[bound] - 1, initial=0), 0.0))


def tmp_data(ran):
    return ran[-1] / "data"


def test_training_sets(ran):
    _, _, rows, _, data, _ = ran
    X, y, X_test, y_test, gamma, checksums = data["skin_nonskin"]
    assert X.shape == (L_SKIN, 3) and X_test.shape == (1000, 3) and gamma == pytest.approx(1 / 3)
    assert checksums and X.min() >= 0 and X.max() <= 1
    assert set(rows["l"]) == {L_SKIN, L_RING}
    # "all" is every pooled row but the test rows; the sizes are nested prefixes of one permutation
    X_all, y_all, X_test_all, *_ = sx.large_training_set("skin_nonskin", "all", 0, 1000, tmp_data(ran), LOCAL_MIRROR)
    assert X_all.shape[0] + X_test_all.shape[0] == 245_057 and np.array_equal(X_test_all, X_test)
    X_small, *_ = sx.large_training_set("skin_nonskin", 300, 0, 1000, tmp_data(ran), LOCAL_MIRROR)
    assert np.array_equal(X_small, X[:300])


def test_rows_match_libsvm_trained_directly(ran):
    """Per C: SVC (scikit-learn's LIBSVM, its own RBF) trained here; every engine's row has its SV count, test
    error and KKT violation; the sampling model retrained from its seed gives SVC's test decision values."""
    jobs, _, rows, _, data, _ = ran
    for job in jobs:
        X, y, X_test, y_test, gamma, _ = data[job.dataset]
        for log2_C in job.log2_C:
            C = 2.0 ** log2_C
            svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-7, cache_size=200).fit(X, y)
            f_svc = svc.decision_function(X_test)
            sub = rows[(rows["dataset"] == job.dataset) & (rows["log2_C"] == log2_C)].set_index("engine")
            assert list(sub.index) == ["sklearn-rbf", "sampling", "sklearn"]
            for engine, row in sub.iterrows():
                if row["status"] != "ok":
                    continue
                assert row["n_sv"] == pytest.approx(svc.support_.size, abs=1)
                assert row["test_error"] == pytest.approx(np.mean(y_test * f_svc <= 0), abs=1.5 / y_test.size)
                assert row["kkt_violation"] <= row["kkt_tol_effective"]
                assert row["n_inbound"] + row["n_bounded"] == row["n_sv"]
                if engine != "sklearn-rbf":
                    assert row["decision_diff"] <= DECISION_ATOL and row["n_sv_diff"] <= 2
            ref = sub.loc["sklearn-rbf"]
            assert math.isnan(ref["decision_diff"])
            assert ref["kkt_violation"] == pytest.approx(_svc_violation(svc, X, y, C), abs=1e-6)
            model, record = fit_sampling(X, y, C, gamma=gamma, r0=job.r0, seed=job.seed, inner_tol=job.tol)
            f = decision_values(model, X, X_test, gamma)
            assert np.max(np.abs(f - f_svc)) <= DECISION_ATOL
            samp = sub.loc["sampling"]
            assert (samp["n_rounds"], samp["final_sample_size"], samp["final_n_distinct"]) == (
                record.n_rounds, record.final_sample_size, record.final_n_distinct)
            assert samp["n_sv"] == np.count_nonzero(model.alpha > 0)


def test_precomputed_kernel_memory_and_budget(ran):
    _, _, rows, _, _, _ = ran
    pre = rows[rows["engine"] == "sklearn"]
    ran_rows, skipped = pre[pre["l"] == L_SKIN], pre[pre["l"] == L_RING]
    kernel = 8 * L_SKIN**2 / 2**20
    assert np.allclose(ran_rows["kernel_mb"], kernel) and (ran_rows["status"] == "ok").all()
    # the l x l kernel is held while LIBSVM trains: the measured peak is at least its size
    assert (ran_rows["peak_mem_mb"] >= 0.9 * kernel).all()
    assert (skipped["status"].str.startswith("skipped: the l x l kernel needs 8 MiB > precomputed_max_mb = 3")).all()
    assert skipped[["t_train", "n_sv", "peak_mem_mb", "test_error"]].isna().all().all()
    others = rows[(rows["engine"] != "sklearn") & (rows["status"] == "ok")]
    assert len(others) == 8 and (others["t_train"] > 0).all() and (others["peak_mem_mb"] >= 0).all()
    assert others[others["engine"] == "sampling"]["n_rounds"].ge(1).all()
    assert others[others["engine"] == "sklearn-rbf"]["n_rounds"].isna().all()


def test_span_rule_and_cv_match_the_precomputed_kernel(ran):
    """The span grid's span-rule (from the SVs only) and its 3-fold CV against the library's span_rule and
    kfold_cv_error on the full l x l kernel."""
    jobs, _, rows, _, data, _ = ran
    X, y, *_ , gamma, _ = data["skin_nonskin"]
    K = ws.rbf_kernel(X, None, gamma)
    span = rows[np.isfinite(rows["span_rule"].to_numpy(dtype=float))]
    assert set(span["engine"]) == {"sampling"} and set(span["dataset"]) == {"skin_nonskin"} and len(span) == 2
    for _, row in span.iterrows():
        C = 2.0 ** row["log2_C"]
        model = ws.fit_svm(K, y, C)
        assert row["span_rule"] == pytest.approx(ws.span_rule(model, K), abs=1.5 / L_SKIN)
        assert row["cv_error"] == pytest.approx(ws.kfold_cv_error(K, y, C, k=3, seed=jobs[0].seed), abs=1.5 / L_SKIN)
        assert (row["cv_folds"], row["cv_folds_run"]) == (3, 3) and row["t_cv"] > 0 and row["t_span_rule"] > 0
    assert (rows[rows["engine"] != "sampling"]["cv_folds"] == 0).all()


def test_mlflow_runs_one_child_per_row(ran):
    from mlflow.tracking import MlflowClient

    jobs, results, rows, settings, _, _ = ran
    client = MlflowClient(settings.tracking_uri)
    for job, res in zip(jobs, results):
        parent = client.get_run(res.parent_run_id)
        assert parent.data.tags["config_hash"] == "test-hash" and parent.data.tags["code_version"]
        assert parent.data.tags["wsvm.complete"] == "true" and parent.data.params["reference"] == "sklearn-rbf"
        assert parent.data.params["memory_method"] == "rss"
        children = client.search_runs([parent.info.experiment_id],
                                      f"tags.`wsvm.job_run` = '{res.parent_run_id}'")
        assert len(children) == job.n_models
        for child in children:
            row = rows[(rows["dataset"] == job.dataset)
                       & (rows["model_index"] == int(child.data.params["model_index"]))].iloc[0]
            assert child.data.params["engine"] == row["engine"] and child.data.params["status"] == row["status"]
            if row["status"] == "ok":
                assert child.data.metrics["t_train"] == pytest.approx(row["t_train"])
                assert child.data.metrics["n_sv"] == row["n_sv"]
            else:
                assert "t_train" not in child.data.metrics  # NaN: not logged


# ------------------------------------------------------------------------------------ schema, tables, figure
def test_schema_accepts_rows_and_rejects_bad_ones(ran):
    _, _, rows, _, _, _ = ran
    good = rows.to_dict("records")
    assert rows_to_table(good, kind="sampling").num_rows == len(good)
    with pytest.raises(SchemaError, match="status"):
        rows_to_table([{k: v for k, v in good[0].items() if k != "status"}], kind="sampling")
    with pytest.raises(SchemaError, match="unknown column"):
        rows_to_table([{**good[0], "t_fit": 1.0}], kind="sampling")
    with pytest.raises(SchemaError):
        rows_to_table(good, kind="model")


def test_tables_and_figure(ran, tmp_path, drawn):
    _, _, rows, _, _, _ = ran
    t = build_table("exp9_training", rows)
    assert len(t.data) == len(rows)
    for _, r in t.data.iterrows():
        ref = rows[(rows["dataset"] == r["dataset"]) & (rows["log2_C"] == r["log2_C"])
                   & (rows["engine"] == "sklearn-rbf")].iloc[0]
        own = rows[(rows["dataset"] == r["dataset"]) & (rows["log2_C"] == r["log2_C"])
                   & (rows["engine"] == r["engine"])].iloc[0]
        expected = math.nan if r["engine"] == "sklearn-rbf" else own["t_train"] / ref["t_train"]
        assert r["time_over_reference"] == pytest.approx(expected, nan_ok=True)
    md = __import__("wsvm_span.study.tables", fromlist=["to_markdown"]).to_markdown(t)
    assert "skipped: the l x l kernel" in md and "e-0" in md  # tiny violations in scientific notation

    span = build_table("exp9_span", rows)
    assert list(span.data["log2_C"]) == [0.0, 4.0] and set(span.data["cv_time"]) == {"measured (3 folds)"}
    picked = rows[np.isfinite(rows["span_rule"].to_numpy(dtype=float))].sort_values("log2_C")
    best = picked.iloc[int(np.argmin(picked["span_rule"].to_numpy()))]
    assert f"Span-rule selects log2 C = {best['log2_C']:g}" in span.footer[0]
    # each time named for its trainer: the span-rule's model is the sampling trainer's; CV and the LIBSVM column
    # are LIBSVM's rows (engine sklearn-rbf) at the same C
    assert span.data["seconds_train_sampling"].to_numpy() == pytest.approx(picked["t_train"].to_numpy())
    libsvm = [rows[(rows["engine"] == "sklearn-rbf") & (rows["log2_C"] == c)]["t_train"].iloc[0]
              for c in picked["log2_C"]]
    assert span.data["seconds_train_libsvm"].to_numpy() == pytest.approx(libsvm)
    assert span.data["cv_over_libsvm_span_rule"].to_numpy() == pytest.approx(
        picked["t_cv"].to_numpy() / (np.array(libsvm) + picked["t_span_rule"].to_numpy()))

    out = tmp_path / "exp9_time.png"
    DRAWINGS["exp9-time"](rows, [out], dpi=60)
    assert out.stat().st_size > 1000
    # the plotted numbers: every finished fit's (l, training time), on the lines of its data set's panel
    ok = rows[rows["status"] == "ok"]
    panels = drawn[-1].axes
    plotted = {(ax.get_title(), float(x), float(y)) for ax in panels for line in ax.lines
               for x, y in zip(line.get_xdata(), line.get_ydata()) if np.isfinite(y)}
    panel = ok["dataset"].str.replace(r"^(ringnorm_d[0-9]+)_l[0-9]+$", r"\1", regex=True)
    assert plotted == set(zip(panel, ok["l"].astype(float), ok["t_train"].astype(float)))
    with pytest.raises(ValueError, match="no Experiment 9 rows"):
        DRAWINGS["exp9-time"](rows[rows["status"] != "ok"], [out], dpi=60)


def test_span_table_projects_cv_from_some_folds():
    span = [{"dataset": "skin_nonskin", "l": 100, "log2_C": c, "engine": "sampling", "n_sv": 10.0, "n_inbound": 2.0,
             "test_error": 0.1, "span_rule": s, "cv_error": math.nan, "t_train": 2.0, "t_span_rule": 0.5,
             "t_cv": 10.0, "cv_folds": 5, "cv_folds_run": 1} for c, s in ((0.0, 0.2), (5.0, 0.1))]
    # LIBSVM's own training rows: 1.5 s at C = 2^0, 3.5 s at 2^5 (no span-rule on them)
    libsvm = [{"dataset": "skin_nonskin", "l": 100, "log2_C": c, "engine": "sklearn-rbf", "span_rule": math.nan,
               "t_train": t} for c, t in ((0.0, 1.5), (5.0, 3.5))]
    t = build_table("exp9_span", pd.DataFrame(span + libsvm))
    assert set(t.data["cv_time"]) == {"projected from 1 of 5 folds"}
    assert t.data["seconds_train_libsvm"].tolist() == [1.5, 3.5]
    assert t.data["cv_over_libsvm_span_rule"].tolist() == pytest.approx([10.0 / 2.0, 10.0 / 4.0])
    assert "selects log2 C = 5" in t.footer[0] and "not every fold was run" in t.footer[1]


def test_estimate_prices_exp9_by_its_own_laws():
    """The estimate takes the kind's time and memory (no l x l kernel above the budget), not the grid job's."""
    from wsvm_span.study.config.estimate import Calibration, estimate

    cal = Calibration(datasets={}, laws={c: (1e-3, 1.0) for c in ("t_train", "t_span_rule", "t_span_bound", "t_cv",
                                                                  "t_loo")},
                      setup_law=(0.0, 1.0), job_overhead_s=2.0, model_overhead_s=0.0)
    job = ex.plan_jobs(exp9(sizes={"ringnorm_d20": [2**17]}))[0]
    est = estimate([job], cal)
    # 2 C x (sampling + sklearn-rbf); the precomputed engine (sklearn) is skipped at l = 2^17, so not priced
    law = {e: a * 32.0**b for e, (a, b) in sx.ENGINE_LAWS.items()}
    assert est.cpu_s == pytest.approx(sx.rough_seconds(job)) and est.cpu_s == pytest.approx(
        2 * (law["sampling"] + law["sklearn-rbf"]))
    # 2 GiB kernel budget: the 128 GiB kernel of l = 2^17 is not counted
    assert est.peak_job_memory_mb == pytest.approx(sx.job_memory_mb(job)) and est.peak_job_memory_mb < 8000


def test_exp9_prices_the_precomputed_kernel_where_it_runs_and_the_span_grids_folds():
    """At l = 2^14 the precomputed engine runs (its 2 GiB kernel fits the budget): its fits and its kernel are
    priced; the span grid adds its CV folds (LIBSVM on the RBF at (K - 1) / K of the points)."""
    job = ex.plan_jobs(exp9(sizes={"ringnorm_d20": [2**14]}))[0]
    law = {e: a * 4.0**b for e, (a, b) in sx.ENGINE_LAWS.items()}
    assert sx.rough_seconds(job) == pytest.approx(2 * sum(law[e] for e in ("sampling", "sklearn-rbf", "sklearn")))
    assert sx.job_memory_mb(job) == pytest.approx(sx.BASE_MEMORY_MB + (1024 + 2048 + 64 * 2**14 * 8 / 2**20) * 1.5)
    span = ex.plan_jobs(exp9(sizes={"skin_nonskin": [2**14]}, engines=["sampling", "sklearn-rbf"],
                             span_grid={"dataset": "skin_nonskin", "size": 2**14, "cv_folds": 5, "cv_folds_run": 2}))[0]
    a, b = sx.ENGINE_LAWS["sklearn-rbf"]
    folds = 2 * a * (0.8 * 4.0) ** b
    assert span.span and sx.rough_seconds(span) == pytest.approx(2 * (law["sampling"] + law["sklearn-rbf"] + folds))
    # no precomputed engine configured: no kernel in memory
    assert sx.job_memory_mb(span) == pytest.approx(sx.BASE_MEMORY_MB + (1024 + 64 * 2**14 * 8 / 2**20) * 1.5)
