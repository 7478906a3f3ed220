"""Cluster scheduling and tracking helpers that need no cluster: packing of tiny jobs by expected cost,
doubled limits on retries, log_batch within MLflow's own limits (checked by a real MLflow store), the
data set parent runs (concurrent jobs, real processes), and a store that does not answer."""

from __future__ import annotations

import math
import multiprocessing as mp
import time

import pytest

from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study import scheduling as sched
from wsvm_span.study.config.estimate import job_seconds, load_calibration
from wsvm_span.study.tracking import DATASET_SLOT, KIND, PARENT, Tracker, TrackingUnavailable, log_batches

from test_workflow_helpers import REPO


@pytest.fixture(scope="module")
def paper():
    cfg = sc.load_config(REPO / "config" / "paper.yaml")
    return cfg, ex.plan_jobs(cfg)


def test_every_packed_cluster_job_of_the_paper_config_computes_for_a_minute(paper):
    """A pack of n jobs of a cost class computes for at least TARGET_JOB_S (expected), unless it hits the
    largest pack size; jobs expected over the target run alone."""
    cfg, jobs = paper
    cal = load_calibration()
    by_group: dict[str, list[float]] = {}
    for job in jobs:
        expected = sched.expected_job_seconds(job)
        own_pricing = hasattr(ex.kind_of(job), "calibrated_seconds")
        assert expected == (job_seconds(job, cal) if own_pricing else max(job_seconds(job, cal),
                                                                           sc.estimated_seconds(job)))
        group = sched.job_group(job)
        if group is None:
            assert expected >= sched.TARGET_JOB_S
            continue
        n = int(group.removeprefix("pack"))
        assert n in sched.PACK_SIZES
        assert n * expected >= sched.TARGET_JOB_S or n == sched.PACK_SIZES[-1]
        assert n == 2 or (n // 2) * expected < sched.TARGET_JOB_S  # the smallest pack that is enough
        by_group.setdefault(group, []).append(expected)
    # Experiment 6 at l = 2048 (33 models, some 20 s) is packed; a bank replicate of Experiment 2, its whole grid
    # in one job (the config's chunk_size), runs alone, as MNIST (l ~ 12000) does
    tiny = next(j for j in jobs if j.dataset == "ringnorm_d20_l2048")
    whole = next(j for j in jobs if j.dataset == "bank_marketing")
    big = next(j for j in jobs if j.dataset == "mnist_0_8")
    assert sched.job_group(tiny) is not None and sched.job_group(big) is None
    assert whole.n_models == 1700 and sched.job_group(whole) is None
    # the paper config: 1886 jobs become 1072 cluster jobs (817 alone; 1069 packed into 255, about 4 per pack)
    clusters = sum(math.ceil(len(v) / int(g.removeprefix("pack"))) for g, v in by_group.items())
    packed = sum(len(v) for v in by_group.values())
    assert packed > 0.4 * len(jobs) and clusters < packed / 2.5


def test_packed_jobs_get_short_limits_and_lone_jobs_the_configured_ones(paper):
    cfg, jobs = paper
    tiny = next(j for j in jobs if j.dataset == "ringnorm_d20_l2048")
    big = next(j for j in jobs if j.dataset == "mnist_0_8")
    assert sched.job_limits(cfg, big) == sc.job_resources(cfg, big)
    packed = sched.job_limits(cfg, tiny)
    assert packed["mem_mb"] == sc.job_resources(cfg, tiny)["mem_mb"]
    assert sched.PACKED_MIN_RUNTIME_MIN <= packed["runtime"] <= sc.job_resources(cfg, tiny)["runtime"]
    assert sched.job_limits(cfg, tiny, attempt=2) == {k: 2 * v for k, v in packed.items()}


def test_experiment8_jobs_get_time_for_what_they_measured(paper):
    """A lone Experiment 8 job's time limit comes from its kind's own price, not the grid jobs' time model (which
    knows nothing of SVM+ or the exact LOO): the costliest job measured at paper size, bank_marketing at 2:1,
    l = 200, seed 0 (reproduced/paper-exp8-bank_marketing-2to1-l200-s0-1: 2,579 s of wall on a shared core, 1,886 s
    of CPU), fits its first attempt's limit twice over; before, the config's 60-minute minimum was its limit."""
    cfg, jobs = paper
    job = next(j for j in jobs if j.experiment == "exp8" and (j.dataset, j.ratio, j.n_train, j.seed)
               == ("bank_marketing", "2:1", 200, 0))
    limits = sched.job_limits(cfg, job)
    assert sched.job_group(job) is None and limits["runtime"] * 60 >= 2 * 2579
    assert sc.job_resources(cfg, job)["runtime"] == cfg["resources"]["runtime_min"] < limits["runtime"]


def test_limits_double_on_every_attempt():
    base = {"mem_mb": 1500, "runtime": 7}
    assert sched.scaled_for_attempt(base, 1) == base
    assert sched.scaled_for_attempt(base, 2) == {"mem_mb": 3000, "runtime": 14}
    assert sched.scaled_for_attempt(base, 3) == {"mem_mb": 6000, "runtime": 28}
    with pytest.raises(ValueError, match="attempt must be >= 1"):
        sched.scaled_for_attempt(base, 0)


@pytest.mark.parametrize("n_metrics, n_params, n_tags", [(0, 0, 0), (25, 3, 10), (2500, 250, 130), (999, 1, 0)])
def test_log_batches_respect_mlflows_limits_and_keep_everything(n_metrics, n_params, n_tags):
    metrics, params, tags = list(range(n_metrics)), list(range(n_params)), list(range(n_tags))
    batches = list(log_batches(metrics, params, tags))
    for m, p, t in batches:
        assert len(m) + len(p) + len(t) <= 1000 and len(p) <= 100 and len(t) <= 100
        assert m or p or t
    assert [x for b in batches for x in b[0]] == metrics
    assert [x for b in batches for x in b[1]] == params
    assert [x for b in batches for x in b[2]] == tags
    if n_metrics + n_params + n_tags <= 1000 and n_params <= 100 and n_tags <= 100:
        assert len(batches) == (1 if metrics or params or tags else 0)  # one request when it fits


def test_a_large_run_is_logged_completely_within_mlflows_batch_limits(tmp_path):
    """MLflow's own validation rejects an oversize log_batch: 2500 metrics, 250 params, 130 tags."""
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'm.db'}"
    tracker = Tracker(uri, str(tmp_path / "artifacts"))
    eid = tracker.init_store(["t/exp1"])["t/exp1"]
    run = tracker.create_run(eid, "big", tags={KIND: "job"}, params={f"p{i}": i for i in range(250)},
                             metrics={f"m{i}": i / 7 for i in range(2500)})
    tracker.log_metrics(run, {"late": 1.0}, tags={f"t{i}": i for i in range(130)})
    data = MlflowClient(uri).get_run(run).data
    assert len(data.params) == 250 and len(data.metrics) == 2501
    assert data.metrics["m2499"] == pytest.approx(2499 / 7)
    assert sum(k.startswith("t") and k[1:].isdigit() for k in data.tags) == 130


def test_experiments_are_model_training_experiments_with_a_description(tmp_path):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'm.db'}"
    ids = Tracker(uri, str(tmp_path / "a")).init_store(["s/exp1", "s/summary"], descriptions={"s/exp1": "grid"})
    client = MlflowClient(uri)
    exp1, summary = client.get_experiment(ids["s/exp1"]), client.get_experiment(ids["s/summary"])
    assert exp1.tags["mlflow.experimentKind"] == summary.tags["mlflow.experimentKind"] == "custom_model_development"
    assert exp1.tags["mlflow.note.content"] == "grid" and "mlflow.note.content" not in summary.tags


def test_dataset_run_is_created_once_and_found_again(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    tracker = Tracker(uri, str(tmp_path / "a"))
    eid = tracker.init_store(["s/exp1"])["s/exp1"]
    slot = "exp1/banana/class/s0-r3"
    params = {"dataset": "banana", "seed": 0}
    first = tracker.dataset_run(eid, slot, params)
    assert tracker.dataset_run(eid, slot, params) == first
    runs = tracker.search(eid, f"tags.`{DATASET_SLOT}` = '{slot}'")
    assert [r.info.run_id for r in runs] == [first]
    assert runs[0].data.params == {"dataset": "banana", "seed": "0"}
    assert runs[0].info.run_name == "banana/class/s0-r3" and runs[0].info.status == "FINISHED"


def _race_for_dataset_run(args):
    """One job of a data set: wait for the others, find or create the data set's run, log a child."""
    uri, slot, barrier, worker = args
    tracker = Tracker(uri)
    eid = tracker.experiment_id("s/exp1")
    barrier.wait(60)
    parent = tracker.dataset_run(eid, slot, {"worker_started": worker})
    tracker.create_run(eid, f"m{worker}", tags={KIND: "model"}, parent_id=parent, finished=True)
    return parent


def test_jobs_starting_together_end_with_one_dataset_run_after_the_summary_merge(tmp_path):
    """8 processes ask for the same data set's run at the same moment, without a step before them: after
    the summary step's merge there is one data set run and every job's child hangs under it."""
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    eid = Tracker(uri).init_store(["s/exp1"])["s/exp1"]
    slot, n = "exp1/banana/class/s0-r1", 8
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(n)
        with ctx.Pool(n) as pool:
            parents = pool.map(_race_for_dataset_run, [(uri, slot, barrier, w) for w in range(n)])
    tracker = Tracker(uri)
    tracker.merge_dataset_twins(eid)
    datasets = tracker.search(eid, f"tags.`{KIND}` = 'dataset'")
    assert len(datasets) == 1
    children = tracker.search(eid, f"tags.`{KIND}` = 'model'")
    assert len(children) == n
    assert {c.data.tags[PARENT] for c in children} == {datasets[0].info.run_id}
    assert datasets[0].info.run_id in parents
    assert tracker.merge_dataset_twins(eid) == 0  # nothing left to merge


def test_a_twin_that_another_job_adopted_is_never_deleted(tmp_path):
    """The interleaving that left a model under a deleted parent on the tracking server: job B creates its
    data set run; before B looks again, job A starts, sees B's run as the oldest and logs a model under it,
    and a third job's run appears with an older start time (its create request was held back by a busy
    server). B must not delete its own run then: A's model hangs under it. After the summary merge every
    model hangs under the one data set run that is left."""
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'm.db'}"
    eid = Tracker(uri).init_store(["s/exp1"])["s/exp1"]
    slot = "exp1/banana/class/s0-r1"
    job_b = Tracker(uri)
    search, looks = job_b.search, []

    def search_then_let_the_others_in(experiment_id, filter_string):
        looks.append(filter_string)
        if len(looks) == 2:  # B has created its run and looks again: A and the held-back job C come first
            job_a = Tracker(uri)
            adopted = job_a.dataset_run(eid, slot, {"job": "a"})  # finds B's run
            job_a.create_run(eid, "a m0", tags={KIND: "model"}, parent_id=adopted, finished=True)
            MlflowClient(uri).create_run(eid, start_time=1, run_name="held back",
                                         tags={KIND: "dataset", DATASET_SLOT: slot})
        return search(experiment_id, filter_string)

    job_b.search = search_then_let_the_others_in
    parent_b = job_b.dataset_run(eid, slot, {"job": "b"})
    job_b.create_run(eid, "b m0", tags={KIND: "model"}, parent_id=parent_b, finished=True)
    tracker = Tracker(uri)
    models = tracker.search(eid, f"tags.`{KIND}` = 'model'")
    datasets = {r.info.run_id for r in tracker.search(eid, f"tags.`{KIND}` = 'dataset'")}
    assert {m.data.tags[PARENT] for m in models} <= datasets  # no model under a deleted parent
    assert tracker.merge_dataset_twins(eid) == 1  # B's run, with both models, into the held-back one
    (kept,) = tracker.search(eid, f"tags.`{KIND}` = 'dataset'")
    assert kept.info.run_name == "held back" and kept.info.run_id == parent_b
    assert {m.data.tags[PARENT] for m in tracker.search(eid, f"tags.`{KIND}` = 'model'")} == {kept.info.run_id}


def test_a_store_that_does_not_answer_fails_fast_with_a_clear_error(monkeypatch):
    from wsvm_span.study import tracking

    monkeypatch.setattr(tracking, "PREFLIGHT_DEADLINE_S", 6)
    # nothing listens on port 9 (discard) of the loopback interface: connection refused
    t0 = time.monotonic()
    with pytest.raises(TrackingUnavailable) as err:
        Tracker("http://127.0.0.1:9")
    assert time.monotonic() - t0 < 30
    message = str(err.value)
    assert "http://127.0.0.1:9 did not answer for 6 s" in message
    assert "scripts/local-cluster status" in message and "Nothing was computed" in message
