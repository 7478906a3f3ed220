"""End to end: the real workflow (`snakemake --cores 2`) on the tiny config/test.yaml in a temporary
working directory, with the real data mirror, real MLflow (SQLite) and no mocks.

Checks: every expected file, the parquet schema, the tables' numbers recomputed here from the parquet
rows, the MLflow runs read back with MlflowClient, a rerun that does nothing and adds no runs, a killed
job (chunk file gone, half-finished runs left) and a chunk run twice that duplicate nothing, and the
HTML report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from test_workflow_helpers import REPO, WSVM, data_mirror, explain, run, snakemake, workflow_env

pytestmark = pytest.mark.timeout(600)

# the results schema, spelled out independently of wsvm_span.study.results_schema
EXPECTED_COLUMNS = {
    "experiment": pa.string(), "dataset": pa.string(), "weighting": pa.string(), "seed": pa.int64(),
    "realization": pa.int64(), "log2_C_plus": pa.float64(), "log2_C_minus": pa.float64(), "A": pa.float64(),
    "B": pa.float64(), "log2_C": pa.float64(), "gamma": pa.float64(), "engine": pa.string(),
    "qp_solver": pa.string(), "test_error": pa.float64(),
    "test_error_positive": pa.float64(), "test_error_negative": pa.float64(), "span_rule": pa.float64(),
    "span_bound": pa.float64(), "cv_error": pa.float64(), "xi_alpha_bound": pa.float64(), "sv_count_bound": pa.float64(),
    "loo_error": pa.float64(), "span_bound_radius": pa.float64(), "cv_folds": pa.int64(), "n_sv": pa.int64(), "n_inbound": pa.int64(), "n_bounded": pa.int64(),
    "n_empty_lambda": pa.int64(), "n_qp": pa.int64(), "t_train": pa.float64(), "t_span_rule": pa.float64(),
    "t_span_bound": pa.float64(), "t_cv": pa.float64(), "t_loo": pa.float64(),
    "n_path_events": pa.int64(), "t_path": pa.float64(),  # null unless svm.engine is path
    "l": pa.int64(), "d": pa.int64(),
    "model_index": pa.int64(), "chunk": pa.int64(),
}
# Experiment 10's rows (standard SVM, standard-svm-span.md), spelled out the same way
EXPECTED_STANDARD_COLUMNS = {
    "experiment": pa.string(), "dataset": pa.string(), "seed": pa.int64(), "realization": pa.int64(),
    "sigma": pa.float64(), "log2_C": pa.float64(), "gamma": pa.float64(), "engine": pa.string(),
    "qp_solver": pa.string(), "test_error": pa.float64(), "span_rule": pa.float64(), "span_bound": pa.float64(),
    "span_bound_separable": pa.float64(), "loo_error": pa.float64(), "S": pa.float64(), "D": pa.float64(),
    "D_SV": pa.float64(), "n_sv": pa.int64(), "n_inbound": pa.int64(), "n_bounded": pa.int64(),
    "n_empty_lambda": pa.int64(), "n_qp": pa.int64(), "t_train": pa.float64(), "t_span_rule": pa.float64(),
    "t_span_bound": pa.float64(), "t_loo": pa.float64(), "l": pa.int64(), "d": pa.int64(),
    "model_index": pa.int64(), "chunk": pa.int64(),
}
SELECTION = ["span_rule", "span_bound", "cv_error", "xi_alpha_bound", "sv_count_bound"]
WEIGHT_GRIDS = ("exp1", "exp2", "exp6")


class Study:
    def __init__(self, workdir: Path, config: Path, env: dict, first: object):
        from wsvm_span.study import config as sc
        from wsvm_span.study import experiments as ex

        self.workdir, self.config, self.env, self.first = workdir, config, env, first
        self.cfg = sc.load_config(config)
        self.jobs = ex.plan_jobs(self.cfg)
        self.n_models = sum(j.n_models for j in self.jobs)
        self.uri = f"sqlite:///{workdir / 'results' / 'mlflow.db'}"
        self.prefix = self.cfg["study"]

    def rows(self, experiment: str) -> pd.DataFrame:
        return pd.read_parquet(self.workdir / "results" / experiment / "rows.parquet")

    def active_runs(self) -> list:
        from mlflow.entities import ViewType
        from mlflow.tracking import MlflowClient

        client = MlflowClient(self.uri)
        exps = [e for e in client.search_experiments() if e.name.startswith(self.prefix + "/")]
        return client.search_runs([e.experiment_id for e in exps], run_view_type=ViewType.ACTIVE_ONLY,
                                  max_results=50000)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Study:
    workdir = tmp_path_factory.mktemp("study")
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    mirror = data_mirror()
    cfg["data"]["mirror"] = str(mirror) if mirror else None
    config = workdir / "test.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    env = workflow_env(tmp_path_factory.mktemp("pycache"))
    res = snakemake(["--cores", "2", "--configfile", config], workdir, env)
    assert res.returncode == 0, explain(res)
    return Study(workdir, config, env, res)


def test_every_expected_file_exists(study):
    res = study.workdir / "results"
    expected = [study.workdir / j.path for j in study.jobs]
    expected += [res / e / "rows.parquet" for e in (*WEIGHT_GRIDS, "exp10")]
    tables = ["table2", "table3", "table4", "table5", "table6", "loo_agreement", "exp6_summary", "exp10_diameters",
              "exp10_selection", "exp10_cost"]
    expected += [res / "tables" / f"{t}.{ext}" for t in tables for ext in ("csv", "md", "tex")]
    figs = ["exp3_breast_cancer_log2_C_plus", "exp3_breast_cancer_log2_C_minus", "exp3_parkinson_speech_A",
            "exp3_parkinson_speech_B", "exp3_parkinson_speech_log2_C", "exp6_time", "exp6_sv", "loo_vs_span_rule",
            "exp10_diameters", "exp10_curves", "exp10_span_ratio"]
    expected += [res / "figures" / f"{f}.{ext}" for f in figs for ext in ("png", "pdf")]
    expected += [res / "mlflow.db", res / "mlflow-summary.json"]
    # one Snakemake benchmark record (wall time, max RSS) per job
    expected += [res / "benchmarks" / Path(j.path).relative_to("results").with_suffix(".tsv") for j in study.jobs]
    missing = [str(p) for p in expected if not p.is_file() or p.stat().st_size == 0]
    assert not missing
    assert len(study.jobs) == 7  # exp1: 9 models in chunks of 5; exp2: 6 in chunks of 5; exp6: 1; exp10: 2
    assert not list((res).rglob("*.tmp"))


def test_parquet_schema(study):
    for job in study.jobs:
        if job.experiment == "exp10":
            continue  # test_standard_rows
        schema = pq.read_schema(study.workdir / job.path)
        assert schema.names == list(EXPECTED_COLUMNS)
        for name, typ in EXPECTED_COLUMNS.items():
            assert schema.field(name).type == typ, name
        df = pd.read_parquet(study.workdir / job.path)
        assert len(df) == job.n_models
        assert list(df["model_index"]) == list(range(job.model_start, job.model_stop))
        assert (df["chunk"] == job.chunk).all() and (df["experiment"] == job.experiment).all()
        assert df[["test_error", "span_rule", "span_bound", "cv_error", "xi_alpha_bound", "sv_count_bound"]].notna().all().all()
        # the per-class test errors (issue 26): the test error lies between them (a weighted mean of the two)
        low = df[["test_error_positive", "test_error_negative"]].min(axis=1)
        high = df[["test_error_positive", "test_error_negative"]].max(axis=1)
        assert ((low - 1e-12 <= df["test_error"]) & (df["test_error"] <= high + 1e-12)).all()
        # the study's radius variant: D/2 in place of D in each max(D, 1/sqrt(C_p)), so never above the bound
        assert df["span_bound_radius"].notna().all() and (df["span_bound_radius"] <= df["span_bound"]).all()
        assert (df["gamma"] == 1.0 / df["d"]).all()
        if job.weighting == "class":
            assert df[["A", "B", "log2_C"]].isna().all().all()
            assert df[["log2_C_plus", "log2_C_minus"]].notna().all().all()
        else:
            assert df[["log2_C_plus", "log2_C_minus"]].isna().all().all()
            assert df[["A", "B", "log2_C"]].notna().all().all()
    e1 = study.rows("exp1")
    assert e1["loo_error"].notna().all()  # breast_cancer (l = 100 <= all_up_to): exact LOO everywhere
    assert set(e1["l"]) == {100} and set(e1["d"]) == {10}
    e6 = study.rows("exp6")
    assert e6["loo_error"].isna().all() and set(e6["l"]) == {128}  # no LOO in exp6


def test_standard_rows(study):
    """Experiment 10: its own schema, one replicate per job, k = 0, S <= D_SV <= D, bound >= exact LOO."""
    jobs = [j for j in study.jobs if j.experiment == "exp10"]
    assert [j.seed for j in jobs] == [0, 1]
    for job in jobs:
        schema = pq.read_schema(study.workdir / job.path)
        assert {n: schema.field(n).type for n in schema.names} == EXPECTED_STANDARD_COLUMNS
        assert list(schema.names) == list(EXPECTED_STANDARD_COLUMNS)
    df = study.rows("exp10")
    assert len(df) == 6 and (df["dataset"] == "breast_cancer_wisconsin_200_77").all()
    assert (df["gamma"] == 1 / (2 * df["sigma"] ** 2)).all() and sorted(set(df["log2_C"])) == [-2.0, 2.0, 6.0]
    assert df[["test_error", "span_rule", "span_bound", "loo_error", "D"]].notna().all().all()
    assert (df["n_empty_lambda"] == 0).all() and (df["span_bound"] >= df["loo_error"]).all()
    some = df["n_inbound"] >= 2
    assert (df.loc[some, "S"] <= df.loc[some, "D_SV"] * (1 + 1e-9)).all() and (df["D_SV"] <= df["D"] + 1e-9).all()
    sel = pd.read_csv(study.workdir / "results" / "tables" / "exp10_selection.csv")
    rule = sel[sel["estimator"] == "span_rule"].iloc[0]
    curve = df.groupby("log2_C")[["test_error", "span_rule"]].mean()
    assert rule["rmse_curve"] == pytest.approx(100 * np.sqrt(np.mean((curve["span_rule"] - curve["test_error"]) ** 2)))


def _selected(rep: pd.DataFrame, col: str) -> float:
    v = rep[col].to_numpy(float)
    m = v.min()
    return 100 * rep["test_error"].to_numpy(float)[np.isclose(v, m, rtol=1e-9, atol=1e-12)].max()  # worst


def test_tables_recomputed_from_rows(study):
    tables = study.workdir / "results" / "tables"
    for name, exp in (("table2", "exp1"), ("table3", "exp2")):
        t = pd.read_csv(tables / f"{name}.csv").set_index("dataset")
        df = study.rows(exp)
        for ds, sub in df.groupby("dataset"):
            for col in SELECTION:
                assert t.loc[ds, col] == pytest.approx(_selected(sub, col), abs=1e-9), (name, ds, col)
            assert t.loc[ds, "min_error"] == pytest.approx(100 * sub["test_error"].min(), abs=1e-9)
            if sub["loo_error"].notna().all():
                assert t.loc[ds, "loo_error"] == pytest.approx(_selected(sub, "loo_error"), abs=1e-9)
            else:
                assert np.isnan(t.loc[ds, "loo_error"])
            assert t.loc[ds, "tie_rule"] == "worst"
    both = pd.concat([study.rows("exp1"), study.rows("exp2")])
    t4 = pd.read_csv(tables / "table4.csv").set_index("dataset")
    t5 = pd.read_csv(tables / "table5.csv").set_index("dataset")
    t6 = pd.read_csv(tables / "table6.csv").set_index("dataset")
    for ds, sub in both.groupby("dataset"):
        for col in ("span_rule", "cv_error", "xi_alpha_bound"):
            rmse = 100 * np.sqrt(np.mean((sub[col] - sub["test_error"]) ** 2))
            assert t4.loc[ds, col] == pytest.approx(rmse, abs=1e-9)
        for col in ("n_empty_lambda", "n_inbound", "n_sv"):
            assert t5.loc[ds, col] == pytest.approx(sub[col].mean())
            assert t5.loc[ds, f"{col}_sd"] == pytest.approx(sub[col].std(ddof=1))
        for col in ("t_span_rule", "t_cv", "t_train", "t_span_bound"):
            assert t6.loc[ds, col] == pytest.approx(1000 * sub[col].mean(), rel=1e-6)
    md = (tables / "table6.md").read_text()
    assert "Machine:" in md and "Libraries:" in md and "numpy" in md
    assert "tie rule: worst" in (tables / "table2.md").read_text()
    assert r"\begin{tabular}" in (tables / "table3.tex").read_text()


def test_mlflow_runs(study):
    from wsvm_span.study.config import config_hash

    runs = study.active_runs()
    kinds = [r.data.tags.get("wsvm.kind") for r in runs]
    assert kinds.count("job") == len(study.jobs)
    assert kinds.count("model") == study.n_models
    assert kinds.count("summary") == 1
    dataset_slots = {job.dataset_slot for job in study.jobs}
    assert kinds.count("dataset") == len(dataset_slots)
    assert len(runs) == len(study.jobs) + study.n_models + len(dataset_slots) + 1
    assert all(r.info.status == "FINISHED" for r in runs)
    datasets = {r.data.tags["wsvm.dataset_slot"]: r.info.run_id for r in runs if r.data.tags.get("wsvm.kind") == "dataset"}
    assert set(datasets) == dataset_slots
    # experiments open in MLflow 3's training view, with a description
    from mlflow.tracking import MlflowClient

    for exp in MlflowClient(study.uri).search_experiments(filter_string=f"name LIKE '{study.prefix}/%'"):
        assert exp.tags["mlflow.experimentKind"] == "custom_model_development", exp.name
        assert exp.tags["mlflow.note.content"], exp.name

    parents = {r.info.run_id: r for r in runs if r.data.tags.get("wsvm.kind") == "job"}
    chash = config_hash(study.cfg)
    for p in parents.values():
        tags = p.data.tags
        assert tags["config_hash"] == chash
        assert tags["code_version"] and tags["wsvm.complete"] == "true"
        assert tags["qp_solver"] in ("clarabel", "mosek") and tags["engine"]
        assert "lib.numpy" in tags and "lib.scikit-learn" in tags
        assert len(tags["data_sha256"]) == 64 or tags["data_sha256"] == "none"
        assert {"dataset", "seed", "realization", "chunk", "gamma", "l", "d"} <= set(p.data.params)
        assert p.data.metrics["tracking_s"] > 0
        # a job's run and its models' runs are children of their data set's run (the UI's grouping)
        assert tags["mlflow.parentRunId"] == datasets[tags["wsvm.job_slot"].rsplit("/", 1)[0]]
    # children: params = hyperparameters, metrics = the parquet row
    rows = pd.concat([study.rows(e) for e in WEIGHT_GRIDS])
    standard = study.rows("exp10")
    for child in (r for r in runs if r.data.tags.get("wsvm.kind") == "model"):
        parent = parents[child.data.tags["wsvm.job_run"]]
        assert child.data.tags["mlflow.parentRunId"] == parent.data.tags["mlflow.parentRunId"]
        if parent.data.params["experiment"] == "exp10":
            sel = standard[(standard.seed == int(parent.data.params["seed"]))
                           & (standard.model_index == int(child.data.params["model_index"]))]
            assert len(sel) == 1
            row = sel.iloc[0]
            for h in ("sigma", "log2_C"):
                assert float(child.data.params[h]) == pytest.approx(row[h])
            for m in ("test_error", "span_rule", "span_bound", "loo_error", "D", "n_sv", "n_empty_lambda", "t_loo"):
                assert child.data.metrics[m] == pytest.approx(float(row[m])), m
            continue
        sel = rows[(rows.experiment == parent.data.params["experiment"])
                   & (rows.dataset == parent.data.params["dataset"])
                   & (rows.model_index == int(child.data.params["model_index"]))]
        assert len(sel) == 1
        row = sel.iloc[0]
        hp = ["log2_C_plus", "log2_C_minus"] if row.weighting == "class" else ["A", "B", "log2_C"]
        for h in hp:
            assert float(child.data.params[h]) == pytest.approx(row[h])
        for m in ("test_error", "span_rule", "span_bound", "cv_error", "xi_alpha_bound", "sv_count_bound", "n_sv", "n_inbound",
                  "n_empty_lambda", "t_train", "t_span_rule", "t_cv"):
            assert child.data.metrics[m] == pytest.approx(float(row[m])), m
        assert ("loo_error" in child.data.metrics) == bool(np.isfinite(row["loo_error"]))
    summary = next(r for r in runs if r.data.tags.get("wsvm.kind") == "summary")
    from mlflow.tracking import MlflowClient

    arts = {a.path for a in MlflowClient(study.uri).list_artifacts(summary.info.run_id, "tables")}
    assert "tables/table2.csv" in arts and "tables/table6.tex" in arts
    figs = {a.path for a in MlflowClient(study.uri).list_artifacts(summary.info.run_id, "figures")}
    assert "figures/exp6_time.png" in figs and "figures/exp10_curves.png" in figs
    info = json.loads((study.workdir / "results" / "mlflow-summary.json").read_text())
    assert info["run_id"] == summary.info.run_id and info["n_jobs"] == len(study.jobs)
    assert 0 < info["tracking_share"] < 1


def test_rerun_does_nothing(study):
    before = sorted(r.info.run_id for r in study.active_runs())
    res = snakemake(["--cores", "2", "--configfile", study.config], study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    assert "Nothing to be done" in res.stdout + res.stderr
    assert sorted(r.info.run_id for r in study.active_runs()) == before


def test_report(study):
    report = study.workdir / "report.html"
    res = snakemake(["--configfile", study.config, "--report", report], study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    html = report.read_text(errors="replace")
    assert report.stat().st_size > 10000 and "table2" in html and "exp6_time" in html
    # the catalog's note on parkinson_speech (the config's exp2 data set) sits under Tables 3 and 4 there too
    assert "dominated by subject effects" in html


def test_killed_job_and_repeated_chunk_do_not_duplicate_runs(study):
    from wsvm_span.study.config import runtime_settings
    from wsvm_span.study.tracking import KIND, MODEL_INDEX, SLOT, Tracker, experiment_name

    expected = len(study.jobs) + study.n_models + len({j.dataset_slot for j in study.jobs}) + 1
    job = study.jobs[0]
    # a workflow killed while this job ran: no chunk file (written last, atomically), nothing downstream
    # of it, and a RUNNING parent run with some children left in the store
    results = study.workdir / "results"
    for path in [study.workdir / job.path, results / "mlflow-summary.json",
                 *results.glob("*/rows.parquet"), *results.glob("tables/*"), *results.glob("figures/*")]:
        path.unlink()
    tracker = Tracker(study.uri)
    eid = tracker.experiment_id(experiment_name(study.prefix, job.experiment))
    dead = tracker.create_run(eid, job.slot, tags={KIND: "job", SLOT: job.slot})
    for i in range(2):
        tracker.create_run(eid, "half", tags={KIND: "model", SLOT: job.slot, MODEL_INDEX: i}, parent_id=dead)
    assert len(study.active_runs()) == expected + 3

    res = snakemake(["--cores", "2", "--configfile", study.config], study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    assert (study.workdir / job.path).is_file()
    runs = study.active_runs()
    assert len(runs) == expected
    assert dead not in {r.info.run_id for r in runs}

    # the same chunk run twice through the CLI: still one parent and one child per model
    rt = runtime_settings(study.cfg, study.workdir)
    out = study.workdir / "results" / "extra" / "chunk.parquet"
    for _ in range(2):
        res = run([WSVM, "run-chunk", "--spec", job.to_json(), *rt.cli_args(), "--output", out],
                  study.workdir, study.env)
        assert res.returncode == 0, explain(res)
    runs = study.active_runs()
    assert len(runs) == expected
    slot_runs = [r for r in runs if r.data.tags.get(SLOT) == job.slot]
    assert len(slot_runs) == 1 + job.n_models
    assert pd.read_parquet(out).shape[0] == job.n_models


def test_status_summarises_the_finished_study(study):
    res = run([WSVM, "status", study.config, "--results", study.workdir / "results", "--json"], study.workdir,
              study.env)
    assert res.returncode == 0, explain(res)
    total = json.loads(res.stdout)["total"]
    assert total["jobs_done"] == total["jobs"] == len(study.jobs)
    assert total["models_done"] == total["models"] == study.n_models and total["seconds_left"] == 0
    log = (study.workdir / study.jobs[0].log_path).read_text()
    assert f"progress {study.jobs[0].slot}: {study.jobs[0].n_models}/{study.jobs[0].n_models} models" in log


def test_export_results_with_provenance(study):
    out = study.workdir / "reproduced" / "test"
    res = run([WSVM, "export-results", study.config, "--results", study.workdir / "results", "--output", out],
              study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    record = json.loads((out / "provenance.json").read_text())
    assert len(record["jobs"]) == len(study.jobs) and record["config_hash"]
    assert {j["slot"] for j in record["jobs"]} == {j.slot for j in study.jobs}
    assert (out / "tables" / "table2.md").is_file() and (out / "figures" / "exp6_time.png").is_file()
    assert "breast_cancer" in (out / "README.md").read_text()
    # the rows are kept beside the tables, and rebuild them byte for byte
    assert sorted(p.name for p in (out / "rows").iterdir()) == sorted(
        f"{p.parent.name}.parquet" for p in (study.workdir / "results").glob("*/rows.parquet"))
    rebuilt = study.workdir / "rebuilt"
    res = run([WSVM, "table", "table2", "--csv", rebuilt.with_suffix(".csv"), "--md", rebuilt.with_suffix(".md"),
               "--tex", rebuilt.with_suffix(".tex"), out / "rows" / "exp1.parquet"], study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    assert rebuilt.with_suffix(".csv").read_bytes() == (out / "tables" / "table2.csv").read_bytes()


def test_changed_tracking_settings_still_produce_the_requested_chunk(study):
    """Issue 8, defect 3: after a change of the tracking settings, asking for one chunk must produce it
    in the same call (it used to rerun a store-initialisation step only and report success)."""
    cfg = yaml.safe_load(study.config.read_text())
    cfg["tracking"] = {"enabled": False}
    untracked = study.workdir / "untracked.yaml"
    untracked.write_text(yaml.safe_dump(cfg, sort_keys=False))
    job = study.jobs[-1]
    (study.workdir / job.path).unlink()
    res = snakemake(["--cores", "2", job.path, "--configfile", untracked], study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    assert (study.workdir / job.path).is_file(), explain(res)


def test_cost_calibration_from_the_finished_study(study, tmp_path):
    """`calibrate-cost` on the study's rows: per-data-set means of the timing columns as pandas computes them
    here, and `check-config --estimate` with that calibration prices every data set as measured."""
    rows = [study.workdir / "results" / e / "rows.parquet" for e in WEIGHT_GRIDS]
    cal_file = tmp_path / "cal.json"
    res = run([WSVM, "calibrate-cost", "--output", cal_file, *rows], study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    cal = json.loads(cal_file.read_text())
    df = pd.concat([pd.read_parquet(p) for p in rows])
    for ds, sub in df.groupby("dataset"):
        for col in ("t_train", "t_span_bound", "t_cv"):
            assert cal["datasets"][ds][col] == pytest.approx(sub[col].mean(), rel=1e-12), (ds, col)
        assert cal["datasets"][ds]["l"] == sub["l"].iloc[0]
    assert cal["source"]["models"] == len(df) and cal["source"]["jobs"] == sum(
        1 for j in study.jobs if j.experiment in WEIGHT_GRIDS)
    # the process's start: Snakemake's benchmark wall seconds minus the job's own, median over the jobs
    starts = []
    for j in (j for j in study.jobs if j.experiment in WEIGHT_GRIDS):
        bench = pd.read_csv(study.workdir / j.path.replace("results/", "results/benchmarks/", 1).replace(
            ".parquet", ".tsv"), sep="\t")
        own = json.loads(pq.read_schema(study.workdir / j.path).metadata[b"wsvm_span.provenance"])["wall_s"]
        starts.append(max(0.0, bench["s"].iloc[-1] - own))
    assert cal["process_start_s"] == pytest.approx(float(np.median(starts)), abs=1e-9) and cal["process_start_s"] > 0
    res = run([WSVM, "check-config", study.config, "--estimate", "--calibration", cal_file, "--json"],
              study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    est = json.loads(res.stdout)["estimate"]
    assert set(est["measured_datasets"]) >= set(df["dataset"]) and est["cpu_hours"] > 0
    # a hold-out calibration: the excluded data sets are priced from their family or the training size
    held_out = sorted(df["dataset"].unique())[0]
    res = run([WSVM, "calibrate-cost", "--output", cal_file, "--exclude", held_out, *rows], study.workdir, study.env)
    assert res.returncode == 0, explain(res)
    cal = json.loads(cal_file.read_text())
    assert held_out not in cal["datasets"] and cal["source"]["excluded"] == [held_out]
    assert cal["source"]["models"] == int((df["dataset"] != held_out).sum())
    # nothing left to calibrate on: a message, no traceback, and the calibration file is not rewritten
    before = cal_file.read_bytes()
    res = run([WSVM, "calibrate-cost", "--output", cal_file, "--exclude", "*", *rows], study.workdir, study.env)
    assert res.returncode == 2 and "no rows to calibrate" in res.stderr and "Traceback" not in res.stderr
    assert cal_file.read_bytes() == before
