"""The results schema, atomic writes, and the tables/figures computed from hand-made rows."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wsvm_span.study import figures
from wsvm_span.study.results_schema import (
    COLUMNS,
    ROW_SCHEMA,
    SchemaError,
    read_provenance,
    read_rows,
    rows_to_table,
    validate_rows,
    write_rows_atomic,
)
from wsvm_span.study.tables import (
    build_table,
    select_test_error,
    to_latex,
    to_markdown,
    write_table,
)


def make_rows(dataset="toy", experiment="exp1", n=3, seed=0, realization=1, l=50, rng=None) -> list[dict]:
    rng = rng or np.random.default_rng(0)
    rows = []
    for i in range(n):
        for j in range(n):
            idx = i * n + j
            base = dict(experiment=experiment, dataset=dataset, weighting="class", seed=seed,
                        realization=realization, log2_C_plus=float(2 * i), log2_C_minus=float(2 * j),
                        gamma=0.1, engine="sklearn", qp_solver="clarabel", l=l, d=10, model_index=idx, chunk=0)
            vals = {k: float(rng.integers(0, 10)) / l for k in
                    ("test_error", "span_rule", "span_bound", "cv_error", "xi_alpha_bound", "sv_count_bound", "loo_error")}
            vals.update(cv_folds=5, n_sv=int(rng.integers(5, 20)), n_inbound=int(rng.integers(0, 5)), n_bounded=3,
                        n_empty_lambda=int(rng.integers(0, 2)), n_qp=1, t_train=0.01, t_span_rule=0.002,
                        t_span_bound=0.003, t_cv=0.05, t_loo=0.2)
            rows.append({**base, **vals})
    return rows


# ------------------------------------------------------------------------------------------ schema
def test_schema_has_the_issue_columns():
    required = ["experiment", "dataset", "weighting", "seed", "realization", "log2_C_plus", "log2_C_minus",
                "A", "B", "log2_C", "gamma", "engine", "qp_solver", "test_error", "span_rule", "span_bound",
                "cv_error", "xi_alpha_bound", "sv_count_bound", "loo_error", "n_sv", "n_inbound", "n_bounded", "n_empty_lambda",
                "t_train", "t_span_rule", "t_span_bound", "t_cv", "l", "d", "model_index", "chunk"]
    assert set(required) <= set(COLUMNS)
    assert ROW_SCHEMA.field("n_sv").type == pa.int64() and ROW_SCHEMA.field("cv_error").type == pa.float64()


def test_rows_roundtrip_and_nan_for_missing(tmp_path):
    rows = make_rows()
    for r in rows:
        del r["loo_error"]  # not computed
    path = write_rows_atomic(rows_to_table(rows, provenance={"k": 1}), tmp_path / "c" / "chunk-0.parquet")
    df = read_rows(path)
    assert list(df.columns) == list(COLUMNS) and len(df) == 9
    assert df["loo_error"].isna().all() and df["A"].isna().all()
    assert read_provenance(path) == {"k": 1}
    assert [p.name for p in path.parent.iterdir()] == ["chunk-0.parquet"]  # no temporary left behind


def test_schema_violations_are_caught(tmp_path):
    rows = make_rows()
    with pytest.raises(SchemaError, match="unknown column"):
        rows_to_table([{**rows[0], "extra": 1}])
    with pytest.raises(SchemaError, match="'dataset' is required"):
        rows_to_table([{k: v for k, v in rows[0].items() if k != "dataset"}])
    bad = pa.table({"experiment": ["exp1"]})
    with pytest.raises(SchemaError):
        validate_rows(bad)
    pq.write_table(bad, tmp_path / "bad.parquet")
    with pytest.raises(SchemaError, match="bad.parquet"):
        read_rows(tmp_path / "bad.parquet")


def test_atomic_write_leaves_nothing_when_interrupted(tmp_path, monkeypatch):
    target = tmp_path / "chunk-0.parquet"

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", boom)
    with pytest.raises(KeyboardInterrupt):
        write_rows_atomic(rows_to_table(make_rows()), target)
    assert not target.exists() and os.listdir(tmp_path) == []


# ------------------------------------------------------------------------------------------ tables
def test_tie_rules():
    values = np.array([0.1, 0.05, 0.05, 0.2, 0.05])
    errors = np.array([0.3, 0.2, 0.4, 0.1, 0.25])
    assert select_test_error(values, errors, "worst") == 0.4
    assert select_test_error(values, errors, "best") == 0.2
    assert select_test_error(values, errors, "median") == 0.25
    assert math.isnan(select_test_error(np.array([0.1, np.nan]), np.array([0.1, 0.2])))
    # an infinite value is a value: it loses the argmin, it does not blank the selection (issue 8)
    assert select_test_error(np.array([np.inf, 0.3, 0.2]), np.array([0.05, 0.4, 0.3])) == 0.3
    assert select_test_error(np.array([np.inf, np.inf]), np.array([0.1, 0.2]), "worst") == 0.2


def test_median_tie_rule_reports_an_actual_models_error():
    # four tied models: the lower median (0.2), not the average of the two middle errors (0.25)
    values = np.array([0.05, 0.05, 0.3, 0.05, 0.05])
    errors = np.array([0.4, 0.1, 0.0, 0.3, 0.2])
    assert select_test_error(values, errors, "median") == 0.2
    assert select_test_error(values[:2], errors[:2], "median") == 0.1  # two tied: the lower one
    tied = errors[np.isclose(values, 0.05)]
    rng = np.random.default_rng(0)
    for _ in range(20):
        e = rng.integers(0, 50, size=rng.integers(1, 9)) / 50
        assert select_test_error(np.zeros_like(e), e, "median") in set(e)
    assert select_test_error(values, errors, "median") in set(tied)
    df = rows_to_table(make_rows("a")).to_pandas()
    t = build_table("table2", df, tie_rule="median")
    assert "tie rule: median" in t.caption and "lower median" in t.caption


def test_selection_table_matches_hand_computation():
    rows = make_rows("a", rng=np.random.default_rng(1)) + make_rows("b", rng=np.random.default_rng(2))
    rows += make_rows("b", seed=1, rng=np.random.default_rng(3))
    df = rows_to_table(rows).to_pandas()
    t = build_table("table2", df, tie_rule="worst")
    assert list(t.data["dataset"]) == ["a", "b"]
    for ds in ("a", "b"):
        sub = df[df.dataset == ds]
        per_rep = []
        for _, rep in sub.groupby(["seed", "realization"]):
            m = rep["cv_error"].min()
            per_rep.append(100 * rep.loc[np.isclose(rep["cv_error"], m), "test_error"].max())
        row = t.data.set_index("dataset").loc[ds]
        assert row["cv_error"] == pytest.approx(np.mean(per_rep))
        assert row["min_error"] == pytest.approx(np.mean([100 * r["test_error"].min() for _, r in sub.groupby("seed")]))
        assert row["tie_rule"] == "worst"
    b = t.data.set_index("dataset").loc["b"]
    assert b["n_replicates"] == 2 and np.isfinite(b["cv_error_sd"])
    a = t.data.set_index("dataset").loc["a"]
    assert a["n_replicates"] == 1 and math.isnan(a["cv_error_sd"])
    assert "tie rule: worst" in t.caption and "replicates" in t.caption
    md, tex = to_markdown(t), to_latex(t)
    assert "±" in md and r"$\pm$" in tex and "Exact LOO" in md and r"\begin{tabular}" in tex
    # each data set's mean +- sd is shown with its number of replicates
    header = next(line for line in md.splitlines() if line.startswith("| Data set"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[:3] == ["Data set", "l", "Replicates"]
    body = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in md.splitlines() if line.startswith("| a ") or line.startswith("| b ")}
    assert body["a"][2] == "1" and body["b"][2] == "2"
    assert "±" in body["b"][3] and "±" not in body["a"][3]
    assert r"\begin{tabular}{l" + "r" * (len(cells) - 1) + "}" in tex


def test_loo_column_only_when_complete():
    rows = make_rows("a")
    rows[0]["loo_error"] = float("nan")
    df = rows_to_table(rows).to_pandas()
    assert math.isnan(build_table("table2", df).data["loo_error"].iloc[0])
    assert math.isnan(build_table("table4", df).data["loo_error"].iloc[0])
    assert build_table("loo_agreement", df).data["n_models"].iloc[0] == 8


def test_infinite_span_bound_does_not_blank_the_selection():
    rows = make_rows("a")
    rows[0]["span_bound"] = float("inf")  # a model with no in-bound SV that Lemma 1 admits
    df = rows_to_table(rows).to_pandas()
    te, sb = df["test_error"].to_numpy(), df["span_bound"].to_numpy()
    finite = np.isfinite(sb)
    expected = 100 * te[finite][np.isclose(sb[finite], sb[finite].min())].max()
    assert build_table("table2", df).data["span_bound"].iloc[0] == pytest.approx(expected)


def test_selection_tables_show_the_study_radius_variant_beside_the_span_bound(tmp_path):
    """Issue 22: the span bound with the diameter selects a one-class model (its value m/l is the lowest),
    the study's radius variant a good one; Tables 2 and 3 show both, the radius labelled as no bound."""
    rows = make_rows("a", n=2)
    # model 0: every point of one class bounded (test error 50%); models 1-3 good ones (10, 20, 30%)
    for r, te, diameter, radius in zip(rows, (0.5, 0.1, 0.2, 0.3), (0.30, 0.35, 0.40, 0.45), (0.30, 0.20, 0.25, 0.28)):
        r.update(test_error=te, span_bound=diameter, span_bound_radius=radius)
    df = rows_to_table(rows).to_pandas()
    for name in ("table2", "table3"):
        t = build_table(name, df)
        row = t.data.iloc[0]
        assert row["span_bound"] == pytest.approx(50.0) and row["span_bound_radius"] == pytest.approx(10.0)
        assert t.columns.index("span_bound_radius") == t.columns.index("span_bound") + 1
        assert "not a bound" in t.caption
        header = next(line for line in to_markdown(t).splitlines() if line.startswith("| Data set"))
        assert "Span bound with D/2 (study's variant, not a bound)" in header
    # rows written before the column existed read as "not computed": an empty cell, not an error
    old = rows_to_table(rows).drop_columns(["span_bound_radius"])
    path = tmp_path / "old.parquet"
    pq.write_table(old, path)
    t = build_table("table2", read_rows(path))
    assert math.isnan(t.data["span_bound_radius"].iloc[0]) and t.data["span_bound"].iloc[0] == pytest.approx(50.0)


def test_models_without_inbound_svs_are_reported_apart():
    """Table 4 and the LOO agreement: share of n* = 0 models and the RMSE over n* >= 1 (issue 8)."""
    df = rows_to_table(make_rows("a")).to_pandas()
    some = df["n_inbound"].to_numpy() >= 1
    assert 0 < some.sum() < len(df)  # the fixture has both kinds
    te, rule, loo = (df[c].to_numpy(dtype=float) for c in ("test_error", "span_rule", "loo_error"))
    t4 = build_table("table4", df).data.iloc[0]
    assert t4["no_inbound_pct"] == pytest.approx(100 * np.mean(~some))
    assert t4["span_rule"] == pytest.approx(100 * np.sqrt(np.mean((rule - te) ** 2)))
    assert t4["span_rule_inbound"] == pytest.approx(100 * np.sqrt(np.mean((rule[some] - te[some]) ** 2)))
    agree = build_table("loo_agreement", df).data.iloc[0]
    assert agree["no_inbound_pct"] == pytest.approx(100 * np.mean(~some))
    assert agree["rmse_inbound"] == pytest.approx(100 * np.sqrt(np.mean((rule[some] - loo[some]) ** 2)))


def test_rmse_counts_timings_tables(tmp_path):
    df = rows_to_table(make_rows("a") + make_rows("b", experiment="exp2")).to_pandas()
    t4 = build_table("table4", df)
    sub = df[df.dataset == "a"]
    assert t4.data["span_rule"].iloc[0] == pytest.approx(
        100 * np.sqrt(np.mean((sub.span_rule - sub.test_error) ** 2)))
    t5 = build_table("table5", df)
    assert t5.data["n_sv"].iloc[0] == pytest.approx(sub.n_sv.mean())
    assert t5.data["n_sv_sd"].iloc[0] == pytest.approx(sub.n_sv.std(ddof=1))
    prov = [{"machine": {"cpu": "TestCPU", "cpu_count": "2", "platform": "x", "python": "3.11"},
             "library_versions": {"numpy": "2"}, "qp_solver": ["clarabel"]}]
    t6 = build_table("table6", df, provenance=prov)
    assert t6.data["t_cv"].iloc[0] == pytest.approx(50.0)
    assert any("TestCPU" in f for f in t6.footer) and any("numpy 2" in f for f in t6.footer)
    write_table(t6, tmp_path / "t6.csv", tmp_path / "t6.md", tmp_path / "t6.tex")
    back = pd.read_csv(tmp_path / "t6.csv")
    assert back["t_cv"].iloc[0] == pytest.approx(50.0)
    assert "TestCPU" in (tmp_path / "t6.md").read_text() and "TestCPU" in (tmp_path / "t6.tex").read_text()


def test_write_table_is_atomic(tmp_path, monkeypatch):
    t = build_table("table5", rows_to_table(make_rows("a")).to_pandas())
    paths = [tmp_path / "out" / f"t5.{ext}" for ext in ("csv", "md", "tex")]
    write_table(t, *paths)
    old = {p: p.read_bytes() for p in paths}
    assert sorted(os.listdir(tmp_path / "out")) == ["t5.csv", "t5.md", "t5.tex"]  # no temporary left behind
    # every file goes through a temporary in the same folder and os.replace
    replaced = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (replaced.append((src, dst)), real_replace(src, dst)))
    write_table(t, *paths)
    assert [Path(d) for _, d in replaced] == paths
    assert all(Path(s).parent == Path(d).parent and Path(s).name.startswith(".") for s, d in replaced)
    monkeypatch.setattr(os, "replace", real_replace)

    # a write interrupted after the data reached the temporary file: the old file stays, nothing else
    def boom(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", boom)
    t2 = build_table("table5", rows_to_table(make_rows("zzz")).to_pandas())
    with pytest.raises(KeyboardInterrupt):
        write_table(t2, *paths)
    assert {p: p.read_bytes() for p in paths} == old
    assert sorted(os.listdir(tmp_path / "out")) == ["t5.csv", "t5.md", "t5.tex"]


def test_figures_from_rows(tmp_path, drawn):
    """The figures plot the numbers of the rows, computed here: Experiment 3's curves (each quantity's mean
    along log2 C- at the best log2 C+), Experiment 6's per-(d, l) means, span-rule against exact LOO per model."""
    from figure_data import curves, points

    a_rows = make_rows("a")
    for r in a_rows:  # the lowest test error at log2 C+ = 4, log2 C- = 2: the curve is the row log2 C+ = 4
        r["test_error"] = 0.30 - 0.05 * r["log2_C_plus"] / 2 + 0.02 * abs(r["log2_C_minus"] - 2)
    df = rows_to_table(a_rows + make_rows("ringnorm_d20_l128", experiment="exp6", l=128)
                       + make_rows("ringnorm_d20_l256", experiment="exp6", l=256)).to_pandas()
    out = [tmp_path / "f.png", tmp_path / "f.pdf"]
    figures.exp3_curves(df, "a", "log2_C_minus", out)
    assert all(p.stat().st_size > 1000 for p in out)
    a = df[df.dataset == "a"]
    line = a[a["log2_C_plus"] == 4.0].sort_values("log2_C_minus")
    drawn_curves = curves(drawn[-1].axes[0])
    for column, text in (("test_error", "Test error"), ("span_rule", "Span-rule"), ("cv_error", "5-fold CV"),
                         ("loo_error", "Exact LOO")):
        x, y = drawn_curves[text]
        np.testing.assert_array_equal(x, line["log2_C_minus"].to_numpy())
        np.testing.assert_allclose(y, line[column].to_numpy(), rtol=1e-12)
    e6 = df[df.experiment == "exp6"].copy()
    e6["d"] = 20
    figures.exp6_time(e6, [tmp_path / "t.png"])
    figures.exp6_sv(e6, [tmp_path / "s.png"])
    for fig, columns in ((drawn[-2], ("t_span_rule", "t_cv")), (fig_sv := drawn[-1], ("n_inbound", "n_sv"))):
        by_l = e6.groupby("l")[list(columns)].mean()
        lines = list(curves(fig.axes[0]).values())
        for (x, y), column in zip(lines, columns):
            np.testing.assert_array_equal(x, [128, 256])
            np.testing.assert_allclose(y, by_l[column].to_numpy(), rtol=1e-12)
    assert fig_sv.axes[0].get_title() == "d = 20"
    figures.loo_vs_span_rule(df, [tmp_path / "l.png"])
    with_loo = df[np.isfinite(df["loo_error"])]
    drawn_points = points(drawn[-1].axes[0])
    expected = 100 * with_loo[["loo_error", "span_rule"]].to_numpy()
    assert sorted(map(tuple, drawn_points[:len(with_loo)])) == sorted(map(tuple, expected))
    none = df.assign(loo_error=np.nan)
    figures.loo_vs_span_rule(none, [tmp_path / "l0.png"])
    assert "no model with exact LOO" in drawn[-1].axes[0].texts[0].get_text()
    with pytest.raises(ValueError, match="not a hyperparameter"):
        figures.exp3_curves(df, "a", "A", out)


def test_table4_rmse_against_the_balanced_test_error_over_seeds():
    """Issue 26: with per-class test errors in the rows, Table 4 gives each estimate's RMSE against their mean
    (computed here per seed, then mean +- sd over the seeds), labelled; rows without them (written before) give
    the table without those columns; the catalog's notes name bank's balanced draw and Parkinson's subjects."""
    rng = np.random.default_rng(7)
    rows = []
    for seed in (0, 1, 2):
        for r in make_rows("bank_marketing", experiment="exp2", seed=seed, rng=rng):
            r.update(test_error_positive=float(rng.integers(0, 10)) / 20, test_error_negative=float(rng.integers(0, 10)) / 20)
            rows.append(r)
    rows += make_rows("parkinson_speech", experiment="exp2", rng=rng)  # no per-class errors: NaN
    df = rows_to_table(rows).to_pandas()
    t = build_table("table4", df)
    bank = t.data.set_index("dataset").loc["bank_marketing"]
    per_seed = {col: [] for col in ("span_rule", "cv_error", "xi_alpha_bound")}
    for seed in (0, 1, 2):
        sub = df[(df.dataset == "bank_marketing") & (df.seed == seed)]
        balanced = (sub.test_error_positive.to_numpy() + sub.test_error_negative.to_numpy()) / 2
        for col in per_seed:
            per_seed[col].append(100 * np.sqrt(np.mean((sub[col].to_numpy() - balanced) ** 2)))
    for col, vals in per_seed.items():
        assert bank[f"{col}_vs_balanced"] == pytest.approx(np.mean(vals))
        assert bank[f"{col}_vs_balanced_sd"] == pytest.approx(np.std(vals, ddof=1))
    assert bank["n_replicates"] == 3 and bank["span_rule_vs_balanced"] != pytest.approx(bank["span_rule"])
    assert np.isnan(t.data.set_index("dataset").loc["parkinson_speech", "span_rule_vs_balanced"])
    md = to_markdown(t)
    assert "Span-rule vs balanced test error" in md and "Span-rule (n* >= 1)" in md
    assert any(f.startswith("bank_marketing: the training set is drawn class-balanced") for f in t.footer)
    assert any(f.startswith("parkinson_speech: its selections are dominated by subject effects") for f in t.footer)
    assert any("subject effects" in f for f in build_table("table3", df).footer)
    # rows without per-class test errors: no balanced columns, no note for data sets the table does not show
    old = build_table("table4", rows_to_table(make_rows("a")).to_pandas())
    assert not any("balanced" in c for c in old.data.columns) and "balanced" not in to_markdown(old)
    assert old.footer == []


def test_a_table_without_rows_says_so(tmp_path):
    """A table its rows hold none of (Experiment 9's span table of a part without a span grid): Markdown and LaTeX
    say so under the caption instead of a header with nothing under it; the CSV keeps its header alone."""
    from wsvm_span.study.tables import TableResult, write_table
    from wsvm_span.study.tables.writer import NO_ROWS

    t = TableResult("empty", pd.DataFrame(columns=["dataset", "l", "span_rule", "span_rule_sd"]), ["span_rule"],
                    caption="A caption.")
    out = [tmp_path / f"t.{ext}" for ext in ("csv", "md", "tex")]
    write_table(t, *out)
    assert out[0].read_text() == "dataset,l,span_rule,span_rule_sd\n"
    assert out[1].read_text() == f"**empty.** A caption.\n\n_{NO_ROWS}_\n"
    tex = out[2].read_text()
    assert NO_ROWS in tex and "tabular" not in tex and tex.endswith("\\end{table}\n")
    full = TableResult("full", pd.DataFrame({"dataset": ["a"], "l": [3], "span_rule": [0.5], "span_rule_sd": [0.1]}),
                       ["span_rule"])
    write_table(full, *out)
    assert NO_ROWS not in out[1].read_text() and "| a " in out[1].read_text() and "tabular" in out[2].read_text()


@pytest.mark.parametrize("folds,text", [([5, 5], "5-fold CV"), ([0, 5], "5-fold CV"), ([0, 0], "K-fold CV"),
                                        ([3, 5], "K-fold CV"), ([], "K-fold CV")])
def test_the_cv_label_names_the_fold_count_of_the_rows_that_ran_cv(folds, text):
    from wsvm_span.study.results_schema import label

    rows = pd.DataFrame({"cv_folds": pd.array(folds, dtype="Int64")})
    assert label("cv_error", rows) == text
    assert label("cv_error", None) == "K-fold CV"


def test_table3_balanced_test_error_of_each_selection():
    """With per-class test errors in the rows, Table 3 gives the balanced test error (their mean) of the model each
    of span-rule, CV, xi-alpha and exact LOO selects, the worst among an estimator's tied minimisers (computed
    here per seed with numpy, then mean +- sd), and the grid's minimum balanced error; NaN for a data set without
    per-class errors; no such columns for rows that have none."""
    rng = np.random.default_rng(11)
    rows = []
    for seed in (0, 1, 2):
        for r in make_rows("bank_marketing", experiment="exp2", n=4, seed=seed, rng=rng):
            r.update(test_error_positive=float(rng.integers(0, 6)) / 10, test_error_negative=float(rng.integers(0, 6)) / 10,
                     span_rule=float(rng.integers(0, 3)) / 10, loo_error=float(rng.integers(0, 3)) / 10)
            rows.append(r)
    rows += make_rows("parkinson_speech", experiment="exp2", rng=rng)
    df = rows_to_table(rows).to_pandas()
    t = build_table("table3", df)
    bank = t.data.set_index("dataset").loc["bank_marketing"]
    per_seed = {col: [] for col in ("span_rule", "cv_error", "xi_alpha_bound", "loo_error", "min_error")}
    for seed in (0, 1, 2):
        sub = df[(df.dataset == "bank_marketing") & (df.seed == seed)]
        balanced = (sub.test_error_positive.to_numpy() + sub.test_error_negative.to_numpy()) / 2
        for col in per_seed:
            if col == "min_error":
                per_seed[col].append(100 * balanced.min())
                continue
            v = sub[col].to_numpy()
            per_seed[col].append(100 * balanced[v == v.min()].max())
    for col, vals in per_seed.items():
        assert bank[f"{col}_balanced"] == pytest.approx(np.mean(vals)), col
        assert bank[f"{col}_balanced_sd"] == pytest.approx(np.std(vals, ddof=1)), col
    assert np.isnan(t.data.set_index("dataset").loc["parkinson_speech", "span_rule_balanced"])
    md = to_markdown(t)
    assert "Span-rule, balanced" in md and "Min. balanced error" in md
    assert any(f.startswith("bank_marketing: the training set is drawn class-balanced") for f in t.footer)
    old = build_table("table3", rows_to_table(make_rows("a", experiment="exp2")).to_pandas())
    assert not any("balanced" in c for c in old.data.columns) and "balanced" not in "".join(
        h for h in to_markdown(old).splitlines()[2:3])
