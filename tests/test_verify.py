"""`wsvm-span verify` (study/verify.py): committed jobs of reproduced/ rerun at the current code give their
committed rows (a sample drawn from several experiments, cheap enough for every CI run); and the checker is
shown able to fail: a copy of a part with one committed value changed is reported by column and model and
fails the command, unless the part is marked stale with a reason."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wsvm_span.study.verify import (
    STALE_HEADING,
    VERIFY_RTOL,
    committed_jobs,
    compare_rows,
    is_measured,
    stale_parts,
    stale_reason,
    verify_part,
)

REPO = Path(__file__).resolve().parents[1]
WSVM = [sys.executable, "-m", "wsvm_span"]
# one cheap committed job per experiment whose parts keep rows and rerun in seconds: (part, slot)
# (banana's chunk 13 is the one that found planned jobs numbering their models otherwise than the workflow's)
CI_SAMPLE = [
    ("paper-exp1-exp2", "exp1/banana/class/s0-r1/chunk-13"),
    ("paper-exp6-d20", "exp6/ringnorm_d20_l512/class/s0-r1/chunk-32"),
    ("paper-exp7", "exp7/four_gaussians/n400/s0-r1/chunk-0"),
    ("paper-exp8-a", "exp8/breast_cancer_wisconsin_351/1to2/s7-r1/chunk-30"),
    ("paper-exp9-a", "exp9/ringnorm_d20_l4096/l4096/s0-r1/chunk-0"),
    ("paper-exp10", "exp10/breast_cancer_wisconsin_200_77/standard/s57-r1/chunk-57"),
]
EXP10 = REPO / "reproduced" / "paper-exp10"
EXP10_SLOT = CI_SAMPLE[-1][1]


@pytest.mark.parametrize("part,slot", CI_SAMPLE, ids=[p for p, _ in CI_SAMPLE])
def test_committed_job_reruns_to_its_committed_rows(part, slot, monkeypatch):
    monkeypatch.chdir(REPO)  # the part's config reads the data relative to the repository
    check = verify_part(REPO / "reproduced" / part, slots=[slot])
    assert [j.slot for j in check.jobs] == [slot]
    assert check.ok, check.report()


def test_a_part_marked_stale_by_pattern_is_reported_stale_not_failed(monkeypatch):
    """Experiment 8's parts not yet rerun are stale (``paper-exp8-[b-z]`` and the data sets' patterns in
    reproduced/README.md: issue 42 moved the nw weights' sample and SVM+'s route, and issue 43 pinned the route in
    every job's spec): a job of one is no longer planned as it ran (its spec moved), which verify names, and it
    reports the part's reason instead of failing; the rerun part ``paper-exp8-a`` is not stale."""
    monkeypatch.chdir(REPO)
    stale = stale_parts(REPO / "reproduced" / "README.md")
    part = REPO / "reproduced" / "paper-exp8-x"
    slot = "exp8/mammographic/1to2/s8-r1/chunk-17"
    check = verify_part(part, slots=[slot], stale=stale)
    assert not check.ok
    [job] = check.jobs
    assert job.problem is not None and "spec moved" in job.problem and not job.differences
    assert check.stale_reason is not None and "issue 42" in check.stale_reason and "svm_plus_solver" in check.stale_reason
    assert "not a failure" in check.report()
    assert stale_reason(stale, "paper-exp8-a") is None and stale_reason(stale, "paper-exp10") is None
    assert stale_reason(stale, "paper-exp8-bank_marketing-2to1-l50") is not None


def _tampered_copy(tmp_path: Path, column: str, model_index: int, new_value) -> Path:
    """A copy of paper-exp10 whose committed rows have one value changed (metadata kept)."""
    part = tmp_path / "reproduced" / EXP10.name
    shutil.copytree(EXP10, part, ignore=shutil.ignore_patterns("figures", "tables"))
    rows_file = part / "rows" / "exp10.parquet"
    table = pq.read_table(rows_file)
    [rows] = [r for c, r in committed_jobs(rows_file) if c["slot"] == EXP10_SLOT]
    values = table.column(column).to_pylist()
    indices = table.column("model_index").to_pylist()
    [i] = [i for i in range(rows.start, rows.stop) if indices[i] == model_index]
    values[i] = new_value
    table = table.set_column(table.schema.get_field_index(column), table.schema.field(column),
                             pa.array(values, table.schema.field(column).type))
    pq.write_table(table, rows_file)
    assert pq.read_schema(rows_file).metadata == pq.read_schema(EXP10 / "rows" / "exp10.parquet").metadata
    return part


def test_a_changed_committed_value_is_named_and_fails_the_command(tmp_path):
    part = _tampered_copy(tmp_path, "n_sv", model_index=7, new_value=9999)
    res = subprocess.run([*WSVM, "verify", str(part), "--slot", EXP10_SLOT], cwd=REPO, capture_output=True,
                         text=True)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "DIFFERENT" in res.stdout and "n_sv: 1 model(s)" in res.stdout and "models 7;" in res.stdout
    assert "paper-exp10" in res.stderr and "mark them stale" in res.stderr


def test_a_part_marked_stale_is_reported_not_failed(tmp_path):
    part = _tampered_copy(tmp_path, "span_rule", model_index=3, new_value=0.987)
    (part.parent / "README.md").write_text(f"# Reproduced\n\n## {STALE_HEADING}\n\n"
                                           f"- `{part.name}`: the span-rule's new tie rule moves it\n\n## Other\n")
    res = subprocess.run([*WSVM, "verify", str(part), "--slot", EXP10_SLOT], cwd=REPO, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "span_rule: 1 model(s)" in res.stdout and "stale" in res.stdout and "tie rule" in res.stdout


def test_compare_rows_tolerance_pairing_and_measured_columns():
    old = [{"model_index": 0, "log2_C": 1.0, "span_rule": 0.25, "n_sv": 10, "t_train": 1.0, "engine": "smo"},
           {"model_index": 1, "log2_C": 2.0, "span_rule": float("nan"), "n_sv": 12, "t_train": 2.0, "engine": "smo"}]
    # the rerun numbers its models the other way round: pairing is by hyperparameters
    new = [{"model_index": 0, "log2_C": 2.0, "span_rule": float("nan"), "n_sv": 12, "t_train": 9.0, "engine": "smo"},
           {"model_index": 1, "log2_C": 1.0, "span_rule": 0.25 * (1 + VERIFY_RTOL / 2), "n_sv": 10, "t_train": 9.0,
            "engine": "smo"}]
    key = lambda r: r["log2_C"]  # noqa: E731
    assert compare_rows(old, new, key) == []
    new[1]["span_rule"] = 0.25 * (1 + 10 * VERIFY_RTOL)
    new[0]["engine"] = "libsvm"
    diffs = {d.column: d for d in compare_rows(old, new, key)}
    assert set(diffs) == {"span_rule", "engine"}
    assert diffs["span_rule"].models == (0,) and diffs["engine"].models == (1,)
    assert is_measured("t_train") and is_measured("cpu_train") and not is_measured("test_error")
    with pytest.raises(ValueError, match="committed rows against"):
        compare_rows(old, new[:1], key)


def test_stale_parts_reads_only_its_section(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# R\n- `a`: not here\n## {STALE_HEADING}\n- `b`: solver changed\n- `c`: NW sample\n"
                      "### Next\n- `d`: not here either\n")
    assert stale_parts(readme) == {"b": "solver changed", "c": "NW sample"}
    assert stale_parts(tmp_path / "missing.md") == {}
