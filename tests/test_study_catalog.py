"""The catalog is the one declaration of experiments, tables and figures: the schema, the CLI, the
planner and the status summary read it; typed job specs; versioned result files; progress lines."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from wsvm_span.study import catalog
from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study.experiments import weight_grid as wg
from wsvm_span.study.progress import Progress, parse_progress
from wsvm_span.study.results_schema import SchemaError, read_rows, rows_to_table, write_rows_atomic
from wsvm_span.study.status import study_status
from wsvm_span.study.tables import TIE_RULES
from wsvm_span.study.tracking import experiment_name

TINY = {
    "chunk_size": 4,
    "experiments": {
        "exp1": {"datasets": ["breast_cancer"], "grid": {"log2_C_plus": {"values": [0, 2]},
                                                        "log2_C_minus": {"values": [0, 2, 4]}}},
        "exp6": {"d": [2], "l": [40], "grid": {"log2_C_plus": {"values": [0]}, "log2_C_minus": {"values": [0, 1]}}},
    },
}


def test_engine_typo_fails_validation_naming_the_engines():
    with pytest.raises(sc.ConfigError, match=r"svm.engine: 'libsvn' is not one of \['auto', 'sklearn', 'libsvm'"):
        sc.validate_config({**TINY, "svm": {"engine": "libsvn"}})


def test_cli_choices_are_the_catalogs():
    from wsvm_span.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices
    table_arg = next(a for a in sub["table"]._actions if a.dest == "name")
    figure_arg = next(a for a in sub["figure"]._actions if a.dest == "drawer")
    tie_arg = next(a for a in sub["table"]._actions if a.dest == "tie_rule")
    assert list(table_arg.choices) == [t.name for t in catalog.TABLES]
    assert list(figure_arg.choices) == [f.drawer for f in catalog.FIGURES]
    assert list(tie_arg.choices) == list(TIE_RULES)


def test_tables_and_figures_follow_the_configured_experiments():
    assert [t.name for t in catalog.tables_for(["exp6"])] == ["exp6_summary"]
    assert [t.name for t in catalog.tables_for(["exp2"])] == ["table3", "table4", "table5", "table6", "loo_agreement"]
    assert {f.drawer for f in catalog.figures_for(["exp1"])} == {"exp3", "loo"}
    for t in catalog.TABLES:
        assert set(t.reads) <= set(catalog.grid_experiments()) and t.experiment in catalog.EXPERIMENTS


#: the tables that keep the original span-rule study's numbers (headline "Table <N>"), not an experiment's id
_PAPER_TABLE = re.compile(r"table(?P<n>[2-6])")


def _one_experiment(reads):
    return reads[0] if len(reads) == 1 else None


def test_one_name_per_experiment():
    """The naming scheme (docs/development.md, "Names"): the experiment id names what a user sees of one
    experiment (config block, MLflow experiment, result and log paths, tables, figures: drawer and stem); the
    job kind names what a job computes and never appears in those names."""
    kinds = {e.kind for e in catalog.EXPERIMENTS.values() if e.runs_jobs}
    assert kinds == set(ex.KINDS)
    blocks = sc.load_schema()["properties"]["experiments"]["properties"]
    assert list(blocks) == list(catalog.grid_experiments())
    for name, e in catalog.EXPERIMENTS.items():
        assert re.fullmatch(r"exp[0-9]+", name), name
        assert name not in kinds
        assert experiment_name("wsvm-span", name) == f"wsvm-span/{name}"
        assert catalog.mlflow_description(name).startswith(f"{name}: ")
        if e.runs_jobs:
            assert blocks[name]["description"] == e.title
    jobs = ex.plan_jobs(sc.load_config(Path(__file__).parents[1] / "config" / "config.yaml"))
    assert {job.experiment for job in jobs} <= set(catalog.grid_experiments())
    for job in jobs:
        assert job.kind == catalog.EXPERIMENTS[job.experiment].kind
        assert job.path.startswith(f"results/{job.experiment}/")
    for pattern in (ex.CHUNK_PATTERN, ex.CHUNK_LOG_PATTERN, ex.CHUNK_BENCHMARK_PATTERN):
        assert "/{experiment}/{dataset}/{variant}/" in pattern

    for t in catalog.TABLES:
        own = _one_experiment(t.reads)
        paper = _PAPER_TABLE.fullmatch(t.name)
        if paper:
            assert t.headline.startswith(f"Table {paper['n']}"), t.name
        elif own:
            assert t.name.startswith(f"{own}_"), f"table {t.name} reads only {own}: name it {own}_..."
            assert t.builder.split(".")[1].startswith(f"table_{own}"), t.builder
        assert not any(k in t.name for k in kinds), t.name
    from wsvm_span.study.figures import DRAWINGS

    assert list(DRAWINGS) == [f.drawer for f in catalog.FIGURES]
    for f in catalog.FIGURES:
        own = _one_experiment(f.reads)
        if own:
            assert f.drawer.startswith(f"{own}-"), f"figure drawer {f.drawer} reads only {own}: name it {own}-..."
            assert f.stem == f.drawer.replace("-", "_"), f"figure {f.drawer}: one name, stem {f.stem}"
        assert not any(k in name for k in kinds for name in (f.drawer.replace("-", "_"), f.stem)), f.drawer


def test_job_spec_round_trip_and_mismatch():
    job = ex.plan_jobs(sc.validate_config(TINY))[0]
    assert ex.job_from_json(job.to_json()) == job
    with pytest.raises(sc.ConfigError, match=r"missing \['axes'.*unknown \['models'\]"):
        ex.job_from_json('{"kind": "weight_grid", "experiment": "exp1", "models": [0, 4]}')
    with pytest.raises(sc.ConfigError, match="unknown job kind 'nope'"):
        ex.job_from_json('{"kind": "nope"}')


def test_result_files_of_another_schema_version_are_rejected(tmp_path):
    old = pa.table({"cv5": [0.1], "loo_exact": [0.2]})
    pq.write_table(old, tmp_path / "old.parquet")
    with pytest.raises(SchemaError, match="schema version 1.*cv5 -> cv_error.*rerun the workflow"):
        read_rows(tmp_path / "old.parquet")


def test_rows_written_before_the_path_columns_read_as_not_by_path(tmp_path):
    # a chunk file as written before issue 9 (same schema version, no n_path_events / t_path): readable, its
    # models "not reached by a path"; a file lacking any other column is still rejected, naming it
    row = {"experiment": "exp1", "dataset": "banana", "weighting": "class", "seed": 0, "realization": 1,
           "log2_C_plus": 1.0, "log2_C_minus": -2.0, "gamma": 0.5, "engine": "sklearn", "qp_solver": "clarabel",
           "test_error": 0.1, "span_rule": 0.2, "cv_folds": 5, "n_sv": 3, "n_inbound": 2, "n_bounded": 1,
           "n_empty_lambda": 0, "n_qp": 0, "t_train": 0.01, "l": 400, "d": 2, "model_index": 7, "chunk": 0}
    new = rows_to_table([row, dict(row, model_index=8)], provenance={"spec_hash": "x"})
    old = new.drop_columns(["n_path_events", "t_path"]).replace_schema_metadata(new.schema.metadata)
    pq.write_table(old, tmp_path / "old.parquet")
    df = read_rows(tmp_path / "old.parquet")
    assert list(df.columns) == new.schema.names
    assert df["n_path_events"].isna().all() and df["t_path"].isna().all()
    assert df["model_index"].tolist() == [7, 8] and df["span_rule"].tolist() == [0.2, 0.2]
    assert df["t_train"].tolist() == [0.01, 0.01] and df["log2_C_minus"].tolist() == [-2.0, -2.0]

    pq.write_table(old.drop_columns(["t_cv"]).replace_schema_metadata(new.schema.metadata), tmp_path / "bad.parquet")
    with pytest.raises(SchemaError, match="bad.parquet.*missing t_cv"):
        read_rows(tmp_path / "bad.parquet")


def test_progress_lines_are_rate_limited_and_parsed(caplog):
    log = logging.getLogger("test.progress")
    with caplog.at_level(logging.INFO, logger="test.progress"):
        p = Progress("exp1/x/class/s0-r1/chunk-0", 5, log, interval_s=3600)
        for _ in range(5):
            p.model_done()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2  # the first and the last model; the interval holds the others back
    assert lines[0].startswith("progress exp1/x/class/s0-r1/chunk-0: 1/5 models (20%), elapsed")
    assert "remaining ~" in lines[0]
    assert parse_progress("\n".join(lines)) == (5, 5)
    assert parse_progress("nothing here") is None


def test_status_counts_finished_and_running_jobs(tmp_path):
    config = tmp_path / "study.yaml"
    config.write_text(yaml.safe_dump(TINY))
    jobs = ex.plan_jobs(sc.load_config(config))
    results = tmp_path / "results"
    empty = study_status(config, results=results, cores=2)
    assert empty.total("jobs") == len(jobs) and empty.total("models_done") == 0
    assert empty.total("seconds_left") > 0

    done, running = jobs[0], jobs[1]
    row = {"experiment": done.experiment, "dataset": done.dataset, "weighting": done.weighting, "seed": 0,
           "realization": 1, "gamma": 0.1, "engine": "sklearn", "qp_solver": "clarabel", "test_error": 0.1,
           "cv_folds": 5, "n_sv": 1, "n_inbound": 1, "n_bounded": 0, "n_empty_lambda": 0, "n_qp": 0, "l": 100,
           "d": 10, "model_index": 0, "chunk": done.chunk}
    write_rows_atomic(rows_to_table([row] * done.n_models, provenance={
        "spec_hash": done.spec_hash, "wall_s": 8.0, "compute_s": 6.0}), results / done.path[len("results/"):])
    log_file = results / running.log_path[len("results/"):]
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text(f"INFO progress {running.slot}: 1/{running.n_models} models (25%), elapsed 2s\n")

    st = study_status(config, results=results, cores=2)
    exp1 = next(e for e in st.experiments if e.experiment == "exp1")
    assert (exp1.jobs_done, exp1.jobs_running) == (1, 1)
    assert exp1.models_done == done.n_models + 1 and exp1.seconds_spent == 8.0
    # measured on this data set: 6 s of compute for the finished job's models
    left = exp1.models - exp1.models_done
    assert exp1.seconds_left == pytest.approx(left * 6.0 / done.n_models) and exp1.measured
    assert "jobs 1/" in st.text() and st.as_dict()["total"]["jobs_done"] == 1


def test_every_table_is_registered_once_by_its_catalog_entry():
    from wsvm_span.study import tables

    for t in catalog.TABLES:
        module, _, function = t.builder.partition(".")
        assert tables.builder(t) is getattr(getattr(tables, module), function)
    assert not hasattr(tables, "_BUILDERS")  # no second registry of tables beside the catalog
    with pytest.raises(KeyError, match="no builder"):
        tables.builder(catalog.Table("t", "weight_grid.no_such_builder", ("exp1",), "exp1", "caption"))


def test_a_tables_notes_are_those_of_the_data_sets_given_in_catalog_order():
    t = catalog.Table("t", "weight_grid.table_rmse", ("exp2",), "exp3", "caption",
                      notes=(("b", "note on b"), ("a", "note on a")))
    assert t.notes_for({"a", "b", "c"}) == ["note on b", "note on a"]
    assert t.notes_for(["a"]) == ["note on a"]
    assert t.notes_for(["a_stratified"]) == [] and t.notes_for([]) == []
    assert catalog.table("table4").notes_for(["parkinson_speech", "bank_marketing"])[1].startswith("bank_marketing:")
