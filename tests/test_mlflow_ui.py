"""The MLflow UI as a user meets it, in a real browser (Debian's chromium, headless): grid models logged
by the runner to the tracking server (scripts/local-cluster), then scripts/mlflow_ui_screenshots.py
opens the experiment, lists one data set's models with their hyperparameters and estimators as columns
and plots span-rule and CV against the test error. The test reads the screenshots back: the page text
the browser rendered, and the pixels themselves, by OCR (tesseract) of the header row, the run names and
the chart titles. Marked ``cluster`` (needs the server, chromium, chromium-driver, tesseract-ocr)."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from test_workflow_helpers import REPO, data_mirror

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(900)]

DATASET = "breast_cancer"
METRIC_COLUMNS = ["test_error", "span_rule", "span_bound", "cv_error", "loo_error"]
PARAM_COLUMNS = ["log2_C_plus", "log2_C_minus"]
CHARTS = ["test_error vs. span_rule", "test_error vs. cv_error"]
# OCR of UI text (13 px sans-serif, upscaled): a run name may lose a character or two
OCR_UPSCALE = 3
OCR_MIN_SIMILARITY = 0.8


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def ocr(png: Path, box) -> str:
    """Text of one region of a screenshot, read by tesseract (upscaled: UI fonts are small)."""
    from PIL import Image

    x0, y0, x1, y1 = box
    crop = Image.open(png).convert("L").crop((x0, y0, x1, y1))
    crop = crop.resize((crop.width * OCR_UPSCALE, crop.height * OCR_UPSCALE), Image.LANCZOS)
    tmp = png.with_name(f"{png.stem}-ocr-{x0}-{y0}.png")
    crop.save(tmp)
    res = subprocess.run(["tesseract", str(tmp), "-", "--psm", "6"], capture_output=True, text=True, check=True)
    return res.stdout


def union(boxes):
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


@pytest.fixture(scope="module")
def shots(local_cluster, tmp_path_factory):
    for tool in ("chromium", "chromedriver", "tesseract"):
        assert shutil.which(tool), f"{tool} missing: apt-get install chromium chromium-driver tesseract-ocr"
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import plan_jobs
    from wsvm_span.study.runner import run_chunk
    from wsvm_span.study.tracking import experiment_name

    cfg = sc.validate_config(yaml.safe_load((REPO / "config" / "test.yaml").read_text()))
    prefix = f"wsvm-span-ui-{int(time.time())}"
    jobs = [j for j in plan_jobs(cfg) if j.experiment == "exp1" and j.dataset == DATASET]
    name = experiment_name(prefix, "exp1")
    mirror = data_mirror()
    tmp = tmp_path_factory.mktemp("ui")
    settings = sc.RuntimeSettings(tracking_enabled=True, data_dir=str(tmp / "data"),
                                  data_mirror=str(mirror) if mirror else None, tracking_uri=local_cluster.tracking_uri,
                                  experiment_prefix=prefix, config_hash=sc.config_hash(cfg))
    for job in jobs:  # as the workflow's jobs log them: experiment, data set run, job runs, model runs
        run_chunk(job, None, settings)
    out = tmp / "screenshots"
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "mlflow_ui_screenshots.py"), "--uri",
                          local_cluster.tracking_uri, "--experiment", name, "--dataset", DATASET, "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    n_models = sum(j.n_models for j in jobs)
    return out, n_models


def _view(out: Path, name: str):
    png = out / f"{name}.png"
    text = (out / f"{name}.txt").read_text(encoding="utf-8")
    regions = json.loads((out / f"{name}.json").read_text())["regions"]
    return png, text, regions


def test_screenshots_are_real_pages(shots):
    from PIL import Image

    out, _ = shots
    for name in ("runs_table", "charts"):
        image = np.asarray(Image.open(out / f"{name}.png").convert("L"), dtype=float)
        assert image.shape[1] >= 1600 and image.shape[0] >= 900
        assert image.std() > 10  # not a blank or single-colour page


def test_runs_table_shows_the_models_of_the_data_set_with_their_columns(shots):
    out, n_models = shots
    png, text, regions = _view(out, "runs_table")
    # the page: the model-training view of the experiment, its description, the data set's parent run
    assert "Model training" in text and "Class weights C+/C- on benchmark data sets" in text
    assert f"{DATASET}/class/s0-r1" in text
    names = [f"{DATASET} m{i}" for i in range(n_models)]
    assert all(n in text for n in names), text
    assert text.count(f"{DATASET} m") == n_models
    # the pixels: the header row shows every wanted column, the run-name cells the model names
    header = _normal(ocr(png, union(regions["headers"])))
    for column in [*METRIC_COLUMNS, *PARAM_COLUMNS]:
        assert _normal(column) in header, (column, header)
    read = [_normal(ocr(png, box)) for box in regions["run_names"]]
    for n in names:
        best = max(difflib.SequenceMatcher(None, _normal(n), r).ratio() for r in read)
        assert best >= OCR_MIN_SIMILARITY, (n, read)


def test_chart_view_plots_span_rule_and_cv_against_test_error(shots):
    out, n_models = shots
    png, text, regions = _view(out, "charts")
    for chart in CHARTS:
        assert chart in text
    titles = _normal(" ".join(ocr(png, box) for box in regions["chart_titles"]))
    for chart in CHARTS:
        assert _normal(chart) in titles, (chart, titles)
