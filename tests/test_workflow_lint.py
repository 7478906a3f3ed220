"""The Snakefile itself: lint clean, the paper config plans the full study quickly (no data loaded),
and bad configs fail at validation with a clear message."""

from __future__ import annotations

import re
import time

import pytest
import yaml

from test_workflow_helpers import REPO, explain, snakemake, workflow_env

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return workflow_env(tmp_path_factory.mktemp("pycache"))


def test_lint_clean(tmp_path, env):
    res = snakemake(["--lint"], tmp_path, env)
    assert res.returncode == 0, explain(res)
    out = res.stdout + res.stderr
    assert "Congratulations, your workflow is in a good condition!" in out, out


def _job_counts(text: str) -> dict[str, int]:
    block = text.split("Job stats:", 1)[1]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", block, re.M)}


def test_paper_config_dry_run_plans_the_full_study(tmp_path, env):
    t0 = time.monotonic()
    res = snakemake(["-n", "--configfile", REPO / "config" / "paper.yaml"], tmp_path, env)
    elapsed = time.monotonic() - t0
    assert res.returncode == 0, explain(res)
    counts = _job_counts(res.stdout + res.stderr)
    # exp1: 12 data sets x 33 chunks (1089 models / 33); exp2: parkinson_speech once x 17 (1700 / 100), the two bank
    # draws over 10 seeds each, a replicate per job; exp6: 24 data sets x 33; exp10: one
    # job per replicate (23 digit subsets, 100 breast cancer splits); exp8: (5 data sets x 2 ratios + the W toy x
    # 3 ratios) x 4 training sizes x 10 subsamples; exp7: one job per size n (4); exp9: one job per data set and size
    # (skin 7, ringnorm 6, mnist_2_9 1)
    assert counts["grid_chunk"] == 12 * 33 + 17 + 20 + 24 * 33 + 23 + 100 + 13 * 4 * 10 + 4 + 14
    assert counts["collect_rows"] == 7
    assert counts["table"] == 7 + 3 + 3 + 1 + 2
    # exp3 curves (12 x 2 + 3 x 3), the LOO scatter, exp6 time and SV counts, exp10 diameters, curves and span
    # ratio, exp8 errors and LOO, exp7 events and time and the traced path, exp9 time
    assert counts["figure"] == 12 * 2 + 3 * 3 + 1 + 2 + 3 + 2 + 2 + 1
    assert counts["total"] == counts["grid_chunk"] + 7 + 16 + 44 + 1 + 1  # + summary, all
    assert elapsed < 120
    assert not (tmp_path / "results").exists()  # planning touched no data and wrote no results


def test_default_config_used_without_configfile(tmp_path, env):
    res = snakemake(["-n", "--quiet", "rules"], tmp_path, env)
    assert res.returncode == 0, explain(res)
    assert "grid_chunk" in res.stdout + res.stderr


# One error the schema finds and one the checks after it find: that Snakemake stops on each and shows the message
# (every message itself is tested on the validator alone, without a Snakemake process: tests/test_study_config.py).
@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: c["experiments"]["exp1"]["grid"].update(log2_C_plus={"start": 6, "stop": -2, "step": 4}),
         "experiments.exp1.grid.log2_C_plus: empty grid: start (6) is greater than stop (-2)"),
        (lambda c: c.update(svm={"engine": "libsvn"}),
         "svm.engine: 'libsvn' is not one of ['auto', 'sklearn', 'libsvm', 'smo', 'path']"),
    ],
)
def test_bad_config_fails_in_snakemake(tmp_path, env, mutate, message):
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    mutate(cfg)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = snakemake(["-n", "--configfile", path], tmp_path, env)
    assert res.returncode != 0
    assert message in res.stdout + res.stderr, explain(res)
    assert not (tmp_path / "results").exists()
