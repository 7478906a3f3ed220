"""Saved views of the study's MLflow experiments: the MLflow UI opened on the models of one data set,
in the "Model training" view, with the hyperparameters and estimators as columns and charts of the
estimators against the test error that plot every model.

MLflow's UI keeps a view (search filter, sort, columns, which runs the charts show, the charts) in the
browser; its "Share" button stores one as an experiment tag ``mlflow.sharedViewState.<key>`` (the JSON of
the view) and opens it from ``#/experiments/<id>/runs?viewStateShareKey=<key>``. :func:`save_views` writes
such a view for every data set of every study experiment in a store, and :func:`view_urls` gives their
addresses; ``wsvm-span ui`` does both and opens the first. ``workflowType=machine_learning`` in the address
selects the Model training view (MLflow 3 opens its GenAI view otherwise), ``compareRunsMode=CHART`` the charts.

The view's fields are those of MLflow's UI state (``selectedColumns``, ``runsHiddenMode``,
``compareRunCharts``, ...), checked against MLflow 3 (``requirements.lock``) by ``tests/test_mlflow_ui.py`` in
a browser. The charts show every model: the UI's default hides all runs but the first 10 in charts
(``runsHiddenMode: FIRST_10_RUNS``); these views show all. The runs list itself loads 100 runs at a time:
a data set with more models shows them all after "Load more" at the bottom of the list.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .results_schema import ESTIMATORS, STUDY_RADIUS_BOUND
from .tracking import DATASET_SLOT, KIND, Tracker

__all__ = ["SHARED_VIEW_TAG", "DatasetView", "model_view", "save_views", "view_key", "view_urls"]

#: MLflow's experiment tag prefix of a shared view, and the address parameter that opens one
SHARED_VIEW_TAG = "mlflow.sharedViewState."
SHARE_KEY_PARAM = "viewStateShareKey"
#: the estimates shown as columns, in this order, where a model run has them (the test error first)
ESTIMATE_COLUMNS = ("test_error", *ESTIMATORS, STUDY_RADIUS_BOUND, "val_error", "loo_rule")
#: scatter charts: each estimator (y) against the test error (x), where a model run has it
CHARTED = ("span_rule", "cv_error", "span_bound", "loo_error")
#: runs a chart plots at most (MLflow's scatter charts default to 100)
CHART_RUNS = 100_000
SECTION_ID = "wsvm-span-estimators"


def _column(kind: str, key: str) -> str:
    """MLflow's UI name of a column: ``params.`log2_C```, ``metrics.`span_rule```."""
    return f"{kind}.`{key}`"


def model_view(dataset: str, hyperparameters: Iterable[str], estimates: Iterable[str]) -> dict[str, Any]:
    """The UI state of one data set's models: filtered to them, sorted by the span-rule (the model it selects
    first), hyperparameters and estimates as columns, every model visible in the charts, scatter charts of the
    estimators against the test error."""
    estimates, hyperparameters = list(estimates), list(hyperparameters)
    columns = [*(_column("params", p) for p in hyperparameters), *(_column("metrics", m) for m in estimates)]
    charts = [{"uuid": f"wsvm-span-{y}-vs-test-error", "type": "SCATTER", "runsCountToCompare": CHART_RUNS,
               "metricSectionId": SECTION_ID, "deleted": False, "isGenerated": False,
               "xaxis": {"key": "test_error", "type": "METRIC"}, "yaxis": {"key": y, "type": "METRIC"}}
              for y in CHARTED if y in estimates and "test_error" in estimates]
    return {
        # search facets
        "searchFilter": f"tags.`{KIND}` = 'model' and tags.dataset = '{dataset}'",
        "orderByKey": _column("metrics", "span_rule") if "span_rule" in estimates else "attributes.start_time",
        "orderByAsc": "span_rule" in estimates,
        "startTime": "ALL",
        "lifecycleFilter": "Active",
        "modelVersionFilter": "All Runs",
        "datasetsFilter": [],
        # UI state
        "selectedColumns": columns,
        "columnOrder": columns,  # within MLflow's groups (metrics, then parameters): the estimates in this order
        "columnWidths": {},
        "runsHiddenMode": "SHOW_ALL",
        "compareRunCharts": charts,
        "compareRunSections": [{"uuid": SECTION_ID, "name": "Estimators against the test error", "display": True,
                                "isReordered": False}],
        "isAccordionReordered": True,
        "viewMaximized": False,
        "runListHidden": False,
        "groupBy": None,
        "groupsExpanded": {},
        "useGroupedValuesInCharts": True,
        "hideEmptyCharts": True,
        "chartsSearchFilter": "",
    }


def view_key(state: Mapping[str, Any]) -> str:
    """The share key of a view: a hash of its JSON (the same view, the same key, whoever writes it)."""
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class DatasetView:
    experiment: str  # MLflow experiment name (<study>/<experiment>)
    experiment_id: str
    dataset: str
    key: str
    n_models: int

    def url(self, base: str, chart: bool = False) -> str:
        mode = "&compareRunsMode=CHART" if chart else ""
        return (f"{base.rstrip('/')}/#/experiments/{self.experiment_id}/runs?workflowType=machine_learning"
                f"&{SHARE_KEY_PARAM}={self.key}{mode}")


def save_views(tracker: Tracker, prefix: str) -> list[DatasetView]:
    """Write the view of every data set of every experiment ``<prefix>/...`` in the store (experiment tags;
    idempotent) and return them: experiments by number (Experiment 1 first, whichever job finished first),
    data sets in the order of their first runs."""
    from mlflow.entities import ViewType

    client = tracker.client
    experiments = tracker.call(client.search_experiments, view_type=ViewType.ACTIVE_ONLY,
                               filter_string=f"name LIKE '{prefix}/%'")

    def numbered(e) -> tuple:  # exp1 < exp2 < exp10 < summary (and any other name, by creation)
        number = e.name.rpartition("/")[2].removeprefix("exp")
        return (int(number) if number.isdigit() else math.inf, e.creation_time or 0, e.name)

    views = []
    for exp in sorted(experiments, key=numbered):
        datasets: dict[str, None] = {}
        for run in sorted(tracker.search(exp.experiment_id, f"tags.`{KIND}` = 'dataset'"),
                          key=lambda r: r.info.start_time or 0):
            datasets.setdefault(run.data.params.get("dataset") or run.data.tags[DATASET_SLOT].split("/")[1])
        for dataset in datasets:
            models = tracker.search(exp.experiment_id, f"tags.`{KIND}` = 'model' and tags.dataset = '{dataset}'")
            if not models:
                continue
            # the hyperparameters: the params of the models (Experiment 8's methods have different ones)
            hyper = sorted(set().union(*(m.data.params for m in models)) - {"model_index"})
            estimates = [m for m in ESTIMATE_COLUMNS if any(m in r.data.metrics for r in models)]
            state = model_view(dataset, hyper, estimates)
            key = view_key(state)
            tag = SHARED_VIEW_TAG + key
            if exp.tags.get(tag) is None:
                tracker.call(client.set_experiment_tag, exp.experiment_id, tag, json.dumps(state))
            views.append(DatasetView(exp.name, exp.experiment_id, dataset, key, len(models)))
    return views


def view_urls(views: Iterable[DatasetView], base: str) -> list[str]:
    """One line per view: experiment, data set, models, the table's and the charts' addresses."""
    return [f"{v.experiment}  {v.dataset} ({v.n_models} models)\n    table:  {v.url(base)}\n"
            f"    charts: {v.url(base, chart=True)}" for v in views]
