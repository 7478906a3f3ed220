"""``svm.engine: path`` in weight-grid jobs (issue 9): the models after a job's first are reached by
solution-path segments, CV and LOO are done by paths, the rows carry the segments' events and seconds; and the
estimators equal those of ``engine: auto`` (LIBSVM) model by model, every difference explained by recomputing
that model with LIBSVM and exactly (``study.engine_comparison``)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import LOCAL_MIRROR, require_mirror
from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study.config import RuntimeSettings
from wsvm_span.study.engine_comparison import COMPARED, compare_row_files, compare_rows
from wsvm_span.study.results_schema import read_rows
from wsvm_span.study.runner import run_chunk


def small_config(engine: str):
    """exp1 on breast_cancer (5 x 5 class weights, two jobs) and exp2 on parkinson_speech (2 x 2 x 3 sigmoid
    weights), exact LOO for every breast_cancer model."""
    return sc.validate_config({
        "svm": {"engine": engine}, "chunk_size": 13, "loo": {"all_up_to": 200, "max_train_size": 200},
        "experiments": {
            "exp1": {"datasets": ["breast_cancer"],
                     "grid": {"log2_C_plus": {"start": -6, "stop": 10, "step": 4},
                              "log2_C_minus": {"start": -6, "stop": 10, "step": 4}}},
            "exp2": {"datasets": ["parkinson_speech"],
                     "grid": {"A": {"values": [2, 8]}, "B": {"values": [0.3, 0.6]}, "log2_C": {"values": [-2, 2, 6]}}},
        }})


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    require_mirror()
    tmp = tmp_path_factory.mktemp("engines")
    settings = RuntimeSettings(data_dir=str(tmp / "data"), data_mirror=str(LOCAL_MIRROR))
    files = {}
    for engine in ("auto", "path"):
        jobs = ex.plan_jobs(small_config(engine))
        files[engine] = [tmp / f"{engine}-{j.experiment}-{j.chunk}.parquet" for j in jobs]
        for job, out in zip(jobs, files[engine]):
            run_chunk(job, out, settings)
    return files, settings


def test_path_rows_carry_the_segments(both):
    files, _ = both
    jobs = ex.plan_jobs(small_config("path"))
    for job, path in zip(jobs, files["path"]):
        rows = read_rows(path).sort_values("model_index")
        first = rows["model_index"] == job.model_start
        # the job's first model is trained (no segment); every other is a segment's end
        assert rows.loc[first, "n_path_events"].isna().all() and rows.loc[first, "t_path"].isna().all()
        assert rows.loc[~first, "n_path_events"].notna().all() and (rows.loc[~first, "n_path_events"] >= 0).all()
        assert (rows.loc[~first, "t_path"] == rows.loc[~first, "t_train"]).all()
        assert (rows["engine"] == "path").all()  # no segment fell back to LIBSVM here
    auto = read_rows(files["auto"])
    assert auto["n_path_events"].isna().all() and auto["t_path"].isna().all()
    assert (read_rows(files["path"]).query("experiment == 'exp1'")["n_path_events"] > 0).any()


def test_estimators_equal_libsvm_or_explained(both):
    files, settings = both
    report = compare_row_files(files["auto"], files["path"], small_config("auto"), data_mirror=settings.data_mirror,
                               data_dir=settings.data_dir)
    counts = report.counts.set_index("estimator")
    assert report.n_models == 25 + 12 and set(counts.index) == set(COMPARED)
    assert (counts["identical"] + counts["within_tol"] + counts["different"] == report.n_models).all()
    # exact LOO on breast_cancer only (parkinson_speech: l = 520 > 200)
    assert counts.loc["loo_error", "not_computed"] == 12
    assert (counts.loc[["test_error", "span_rule", "cv_error"], "identical"] >= report.n_models - 2).all()
    if len(report.differences):
        explained = {"boundary", "sets", "duplicates", "tolerance", "threshold"}
        assert set(report.differences["category"]) <= explained, report.text()


def test_comparison_counts_and_rejects_unmatched_rows(both):
    files, _ = both
    a, b = read_rows(files["auto"]), read_rows(files["path"])
    b = b.copy()
    b.loc[0, "span_rule"] += 0.5
    b.loc[1, "span_bound"] += 1e-7
    counts = compare_rows(a, b).counts.set_index("estimator")
    assert counts.loc["span_rule", "different"] >= 1 and counts.loc["span_bound", "within_tol"] >= 1
    with pytest.raises(ValueError, match="only one of the two"):
        compare_rows(a, b.iloc[1:])
    assert np.isclose(counts.loc["span_rule", "max_abs_diff"], 0.5, atol=0.05)


def test_segment_over_its_event_cap_trains_that_model_afresh(both, tmp_path, monkeypatch, caplog):
    """A chord that exceeds its event cap does not fail the job: the model is trained afresh (LIBSVM, re-solved
    exactly) and the chain goes on from it. With a cap of 1 event, every longer chord is abandoned; the exact
    solution at C is the same model either way, so the rows equal those of the uncapped path run."""
    from wsvm_span.study.experiments import weight_grid

    _, settings = both
    monkeypatch.setattr(weight_grid._PathChain, "max_events", 1)
    job = next(j for j in ex.plan_jobs(small_config("path")) if j.experiment == "exp1")
    out = tmp_path / "capped.parquet"
    with caplog.at_level("WARNING"):
        run_chunk(job, out, settings)
    capped = read_rows(out).sort_values("model_index").reset_index(drop=True)
    files, _ = both
    uncapped = read_rows(files["path"][0]).sort_values("model_index").reset_index(drop=True)
    assert len(capped) == job.n_models == len(uncapped)
    afresh = capped["n_path_events"].isna()
    assert afresh.sum() > 1 and (capped.loc[~afresh, "n_path_events"] <= 1).all()
    assert (uncapped.loc[afresh.to_numpy()[1:].nonzero()[0] + 1, "n_path_events"] > 1).all()
    assert "a path segment was abandoned" in caplog.text
    for col in ("test_error", "cv_error", "n_sv"):
        np.testing.assert_array_equal(capped[col], uncapped[col], err_msg=col)
