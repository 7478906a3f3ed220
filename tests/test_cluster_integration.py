"""The cluster path for real: the test configuration through SLURM (the project's one-node cluster,
``scripts/local-cluster``) with every grid job logging to the MLflow tracking server, against a local run
of the same configuration (``snakemake --cores 2``, SQLite store).

While the cluster run is in flight (at least 8 SLURM jobs at once) one grid job is killed with scancel
after it has logged some of its models, and the tracking server is restarted; Snakemake's retry
resubmits the killed job. Then: the same rows and estimators as the local run, exactly one run per
model on the server, a rerun that does nothing, a lost chunk that a rerun resumes, a job that meets a
database that is down (a clear error, then the retry succeeds), and jobs killed for memory and time
that come back with doubled limits. Marked ``cluster``: ``make test-cluster`` (Debian, root)."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from cluster_support import FAST_STATUS, PROFILE, UNPACKED, active_runs, sacct_states, squeue
from test_workflow_helpers import REPO, SNAKEMAKE, data_mirror, explain, snakemake, workflow_env

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(3600)]

KEY = ["experiment", "dataset", "seed", "realization", "model_index"]
# the row files and tables of the test config (weight grids, and Experiment 10's standard SVMs)
ROW_FILES = (("exp1", "exp2", "exp6"), ("exp10",))
TABLES = ("table2", "table3", "table4", "table5", "table6", "loo_agreement", "exp6_summary", "exp10_selection",
          "exp10_diameters", "exp10_cost")
TIMING = re.compile(r"^t_|_over_")  # timings and their ratios differ from run to run


class Disruptor(threading.Thread):
    """Watches the cluster run: counts SLURM jobs in flight, kills the exp2 grid job (6 models) with
    scancel once the server shows some but not all of its models and the job's log a progress line, then
    restarts the tracking server."""

    def __init__(self, cluster, prefix: str, workdir: Path):
        super().__init__(daemon=True)
        self.cluster, self.prefix, self.workdir = cluster, prefix, workdir
        self.max_running = self.max_in_flight = 0
        self.killed_job = self.killed_slot = None
        self.models_logged_when_killed = 0
        self.restart_down_s = None
        self.running_during_restart = 0
        self.error = None
        self.done = threading.Event()

    def _logs_naming(self, output: str) -> list[str]:
        return [p.stem for p in (self.workdir / "results" / "logs" / "slurm").rglob("*.log")
                if output in p.read_text(errors="replace")]

    def _logged_progress(self, slurm_job: str) -> bool:
        log = self.workdir / "results" / "logs" / "exp2" / "parkinson_speech" / "sigmoid"
        return any("progress" in p.read_text(errors="replace")
                   for p in log.glob(f"chunk-0.attempt-*.slurm-{slurm_job}.log"))

    def run(self):
        try:
            from wsvm_span.study.tracking import KIND, SLOT

            while not self.done.is_set():
                jobs = squeue("i", "T")
                running = sum(state == "RUNNING" for _, state in jobs)
                self.max_running = max(self.max_running, running)
                self.max_in_flight = max(self.max_in_flight, len(jobs))
                if self.killed_job is None:
                    runs = active_runs(self.cluster.tracking_uri, self.prefix)
                    models = [r for r in runs if r.data.tags.get(KIND) == "model"
                              and r.data.tags.get(SLOT, "").startswith("exp2/")]
                    if 0 < len(models) < 6:
                        slot = models[0].data.tags[SLOT]
                        ids = self._logs_naming("results/exp2/parkinson_speech/sigmoid/chunk-0.parquet")
                        live = {i for i, state in jobs if state == "RUNNING"}
                        target = [i for i in ids if i in live]
                        # a model run reaches the server just before the job logs its progress line: wait
                        # for the line, so the killed attempt's log shows it was killed mid-way
                        if target and self._logged_progress(target[0]):
                            subprocess.run(["scancel", target[0]], check=True)
                            self.killed_job, self.killed_slot = target[0], slot
                            self.models_logged_when_killed = len(models)
                elif self.restart_down_s is None and running >= 2:
                    self.running_during_restart = running
                    self.restart_down_s = self.cluster.restart("mlflow")
                time.sleep(0.3)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


def _config(tmp: Path, name: str, tracking_uri: str | None) -> Path:
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    cfg["study"] = name
    mirror = data_mirror()
    cfg["data"]["mirror"] = str(mirror) if mirror else None
    cfg["chunk_size"] = 2                               # exp1: 5 jobs of 2 models (9 in all)
    cfg["experiments"]["exp2"]["chunk_size"] = 6        # exp2: 1 job of 6 models (the one killed)
    cfg["experiments"]["exp6"]["chunk_size"] = 3        # exp6: 3 jobs of 3 models, equal so one pack size
    # exp10: one job per replicate (2)
    cfg["resources"] = {"mem_mb_min": 1000}
    cfg["tracking"] = {"uri": tracking_uri}
    path = tmp / "cluster-test.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


class Runs:
    def __init__(self, cluster_dir: Path, local_dir: Path, config: Path, env: dict, prefix: str, cluster,
                 disruptor: Disruptor, cluster_res, wall_s: float):
        from wsvm_span.study import config as sc
        from wsvm_span.study.experiments import plan_jobs

        self.cluster_dir, self.local_dir, self.config, self.env = cluster_dir, local_dir, config, env
        self.prefix, self.cluster, self.disruptor, self.cluster_res, self.wall_s = (
            prefix, cluster, disruptor, cluster_res, wall_s)
        self.jobs = plan_jobs(sc.load_config(config))
        self.n_models = sum(j.n_models for j in self.jobs)
        self.n_datasets = len({j.dataset_slot for j in self.jobs})

    def slurm(self, *extra: str, timeout: int = 1800):
        return snakemake(["--profile", PROFILE, "--configfile", self.config, *FAST_STATUS, *UNPACKED, *extra],
                         self.cluster_dir, self.env, timeout=timeout)

    def rows(self, workdir: Path, experiments) -> pd.DataFrame:
        df = pd.concat([pd.read_parquet(workdir / "results" / e / "rows.parquet") for e in experiments])
        return df.sort_values(KEY).reset_index(drop=True)

    def server_runs(self, deleted: bool = False) -> list:
        return active_runs(self.cluster.tracking_uri, self.prefix, deleted)


@pytest.fixture(scope="module")
def runs(local_cluster, tmp_path_factory) -> Runs:
    prefix = f"wsvm-span-cluster-{int(time.time())}"  # a fresh set of experiments on the shared server
    cluster_dir = tmp_path_factory.mktemp("cluster")
    local_dir = tmp_path_factory.mktemp("local")
    config = _config(cluster_dir, prefix, local_cluster.tracking_uri)
    env = workflow_env(tmp_path_factory.mktemp("pycache"))

    disruptor = Disruptor(local_cluster, prefix, cluster_dir)
    disruptor.start()
    t0 = time.monotonic()
    res = snakemake(["--profile", PROFILE, "--configfile", config, *FAST_STATUS, *UNPACKED],
                    cluster_dir, env, timeout=1800)
    wall_s = time.monotonic() - t0
    disruptor.done.set()
    disruptor.join(60)
    assert disruptor.error is None, disruptor.error
    assert res.returncode == 0, explain(res)

    local_config = _config(local_dir, prefix, None)  # the same config, logged to a local SQLite store
    res_local = snakemake(["--cores", "2", "--configfile", local_config], local_dir, env, timeout=1800)
    assert res_local.returncode == 0, explain(res_local)
    r = Runs(cluster_dir, local_dir, config, env, prefix, local_cluster, disruptor, res, wall_s)
    print(f"\ncluster start {local_cluster.start_s:.0f} s; SLURM run {wall_s:.0f} s; "
          f"max {disruptor.max_running} running / {disruptor.max_in_flight} in flight; "
          f"killed job {disruptor.killed_job} after {disruptor.models_logged_when_killed} models; "
          f"server down {disruptor.restart_down_s} s with {disruptor.running_during_restart} jobs running")
    return r


def test_at_least_eight_jobs_ran_at_once(runs):
    assert len(runs.jobs) >= 8
    assert runs.disruptor.max_running >= 8


def assert_same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert len(a) == len(b) and list(a.columns) == list(b.columns)
    for col in a.columns:
        if TIMING.search(col):
            continue  # wall-clock timings differ from run to run
        x, y = a[col].to_numpy(), b[col].to_numpy()
        if x.dtype.kind == "f":
            assert np.array_equal(x, y, equal_nan=True), col
        else:
            assert (x == y).all(), col


def test_same_rows_and_estimators_as_the_local_run(runs):
    n = 0
    for experiments in ROW_FILES:
        cluster, local = runs.rows(runs.cluster_dir, experiments), runs.rows(runs.local_dir, experiments)
        assert_same_rows(cluster, local)
        n += len(cluster)
    assert n == runs.n_models
    for name in TABLES:
        ta = pd.read_csv(runs.cluster_dir / "results" / "tables" / f"{name}.csv")
        tb = pd.read_csv(runs.local_dir / "results" / "tables" / f"{name}.csv")
        timings = [c for c in ta.columns if TIMING.search(c)]
        pd.testing.assert_frame_equal(ta.drop(columns=timings), tb.drop(columns=timings), check_exact=True)


def test_server_holds_exactly_the_local_runs(runs):
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    server = runs.server_runs()
    local_client = MlflowClient(f"sqlite:///{runs.local_dir / 'results' / 'mlflow.db'}")
    exps = [e.experiment_id for e in local_client.search_experiments(filter_string=f"name LIKE '{runs.prefix}/%'")]
    local = local_client.search_runs(exps, run_view_type=ViewType.ACTIVE_ONLY, max_results=50000)

    def by_kind(rs, kind):
        return [r for r in rs if r.data.tags.get("wsvm.kind") == kind]

    for kind, n in (("model", runs.n_models), ("job", len(runs.jobs)), ("dataset", runs.n_datasets),
                    ("summary", 1)):
        assert len(by_kind(server, kind)) == len(by_kind(local, kind)) == n, kind
    assert len(server) == runs.n_models + len(runs.jobs) + runs.n_datasets + 1
    assert all(r.info.status == "FINISHED" for r in server)

    def models(rs):
        out = {}
        for r in by_kind(rs, "model"):
            key = (r.data.tags["wsvm.job_slot"], int(r.data.tags["wsvm.model_index"]))
            assert key not in out, f"duplicate model run {key}"
            out[key] = r
        return out

    ms, ml = models(server), models(local)
    assert set(ms) == set(ml) and len(ms) == runs.n_models
    for key, r in ms.items():
        assert r.data.params == ml[key].data.params, key
        metrics = {k: v for k, v in r.data.metrics.items() if not TIMING.search(k)}
        assert metrics == {k: v for k, v in ml[key].data.metrics.items() if not TIMING.search(k)}, key
        assert r.data.tags["mlflow.parentRunId"] in {d.info.run_id for d in by_kind(server, "dataset")}


def test_scancelled_job_was_resubmitted_and_left_one_run_per_model(runs):
    d = runs.disruptor
    assert d.killed_job is not None, "no job was caught mid-run"
    assert 0 < d.models_logged_when_killed < 6
    assert sacct_states([d.killed_job])[d.killed_job].startswith("CANCELLED")
    # the killed attempt's runs were logged, then deleted by the retry, which logged each model once
    deleted = [r for r in runs.server_runs(deleted=True) if r.data.tags.get("wsvm.job_slot") == d.killed_slot]
    assert sum(r.data.tags.get("wsvm.kind") == "model" for r in deleted) >= d.models_logged_when_killed
    live = [r for r in runs.server_runs() if r.data.tags.get("wsvm.job_slot") == d.killed_slot]
    assert sorted(int(r.data.tags["wsvm.model_index"]) for r in live if r.data.tags["wsvm.kind"] == "model") == list(range(6))
    assert sum(r.data.tags["wsvm.kind"] == "job" for r in live) == 1


def test_runs_name_the_slurm_job_and_attempt_that_logged_them(runs):
    """Issue 22: every job and model run carries the SLURM job id and the attempt that logged it; the killed
    job's slot holds the runs of its second attempt (a new SLURM job), and both attempts' logs are kept."""
    from wsvm_span.study.attempts import JobFiles, read_records

    out = runs.cluster_res.stdout + runs.cluster_res.stderr
    submitted = set(re.findall(r"submitted with SLURM jobid (\d+)", out))
    assert runs.disruptor.killed_job in submitted
    server = [r for r in runs.server_runs() if r.data.tags.get("wsvm.kind") in ("job", "model")]
    assert server and all(r.data.tags.get("wsvm.slurm_job_id") in submitted for r in server)
    assert {r.data.tags["wsvm.attempt"] for r in server} == {"1", "2"}
    killed = [r for r in server if r.data.tags["wsvm.job_slot"] == runs.disruptor.killed_slot]
    assert {(r.data.tags["wsvm.attempt"], r.data.tags["wsvm.slurm_job_id"] != runs.disruptor.killed_job)
            for r in killed} == {("2", True)}
    # the same SLURM job id in the parquet provenance of the chunk (rows and runs name one cluster job)
    job = next(j for j in runs.jobs if j.slot == runs.disruptor.killed_slot)
    files = JobFiles.of(job, runs.cluster_dir)
    first = files.log.with_name(f"{files.log.stem}.attempt-1.slurm-{runs.disruptor.killed_job}.log")
    second = files.log.with_name(f"{files.log.stem}.attempt-2.slurm-{killed[0].data.tags['wsvm.slurm_job_id']}.log")
    assert "progress" in first.read_text() and "rows in" in second.read_text()  # killed mid-way, then finished
    assert second.samefile(files.log)
    records = [r for r in files.records.read_text().splitlines()]
    run_id = json.loads(records[-1])["run"]
    ends = {r["attempt"]: r["verdict"] for r in read_records(files, run_id) if r["event"] == "end"}
    assert ends == {2: "ok"}  # attempt 1 never ended: killed by SLURM (its limits doubled)


def test_server_restart_during_the_run_lost_nothing(runs):
    d = runs.disruptor
    assert d.restart_down_s is not None and d.running_during_restart >= 2
    assert len([r for r in runs.server_runs() if r.data.tags.get("wsvm.kind") == "model"]) == runs.n_models


def test_jobs_logged_through_the_credentials_file_and_show_no_password(runs):
    """The SLURM jobs had the credentials file's path, not the password (workflow_env), and the server
    refuses requests without them: every run above came through its basic auth. The password is in none of
    the runs' params or tags, and in no log of the workflow (Snakemake's, SLURM's, the jobs' own)."""
    import configparser
    import os

    from wsvm_span.study.tracking import CREDENTIALS_ENV

    assert "MLFLOW_TRACKING_PASSWORD" not in runs.env and CREDENTIALS_ENV in runs.env
    creds = configparser.ConfigParser()
    creds.read(os.environ[CREDENTIALS_ENV])
    password = creds["mlflow"]["mlflow_tracking_password"]
    server_runs = runs.server_runs()
    assert server_runs
    for r in server_runs:
        assert not any(password in f"{k}={v}" for k, v in {**r.data.params, **r.data.tags}.items()), r.info.run_id
    logs = [p for p in (runs.cluster_dir / "results" / "logs").rglob("*") if p.is_file()]
    logs += list((runs.cluster_dir / ".snakemake" / "log").glob("*.log"))
    assert len(logs) > len(runs.jobs)
    assert not [p for p in logs if password.encode() in p.read_bytes()]
    assert password not in runs.cluster_res.stdout + runs.cluster_res.stderr


def test_slurm_logs_and_benchmarks(runs):
    logs = list((runs.cluster_dir / "results" / "logs" / "slurm").rglob("*.log"))
    assert len(logs) >= len(runs.jobs) + 1  # one per SLURM job, the killed one included
    for job in runs.jobs:
        bench = runs.cluster_dir / "results" / "benchmarks" / Path(job.path).relative_to("results").with_suffix(".tsv")
        table = pd.read_csv(bench, sep="\t")
        assert table["s"].iloc[0] > 0 and table["max_rss"].iloc[0] > 0


def test_rerun_does_nothing(runs):
    before = sorted(r.info.run_id for r in runs.server_runs())
    res = runs.slurm()
    assert res.returncode == 0, explain(res)
    assert "Nothing to be done" in res.stdout + res.stderr
    assert sorted(r.info.run_id for r in runs.server_runs()) == before


def test_tiny_jobs_are_packed_and_a_retried_pack_keeps_its_finished_members(runs):
    """The profile as shipped (packing on): Experiment 6's jobs, lost, come back in one SLURM job per pack.
    That SLURM job is cancelled once some members have finished: Snakemake deletes every member's chunk file
    and submits the pack again; the members that had finished put their rows back (their MLflow runs stay
    those of the first SLURM job), the others are computed by the second. Same rows, one run per model."""
    from wsvm_span.study import scheduling
    from wsvm_span.study.attempts import JobFiles

    exp6 = [j for j in runs.jobs if j.experiment == "exp6"]
    groups = {scheduling.job_group(j) for j in exp6}
    assert None not in groups and len(groups) == 1 and len(exp6) >= 3
    before = runs.rows(runs.cluster_dir, ROW_FILES[0])
    models_before = sorted(r.info.run_id for r in runs.server_runs() if r.data.tags.get("wsvm.kind") == "dataset")
    for job in exp6:
        _drop_chunk(runs, job)
    proc = subprocess.Popen([str(a) for a in [
        SNAKEMAKE, "--snakefile", REPO / "Snakefile", "--directory", runs.cluster_dir, "--profile", PROFILE,
        "--configfile", runs.config, *FAST_STATUS]], cwd=runs.cluster_dir, env=runs.env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout), daemon=True)
    reader.start()
    finished_at_cancel, cancelled = [], None
    deadline = time.monotonic() + 900
    while cancelled is None:
        assert proc.poll() is None and time.monotonic() < deadline, "".join(output)[-4000:]
        done = [j for j in exp6 if (runs.cluster_dir / j.path).is_file()]
        if done:
            running = [i for i, state in squeue("i", "T") if state == "RUNNING"]
            assert len(running) == 1 and len(done) < len(exp6), (running, len(done))
            subprocess.run(["scancel", running[0]], check=True)
            finished_at_cancel, cancelled = done, running[0]
        time.sleep(0.2)
    assert proc.wait(1800) == 0, "".join(output)[-6000:]
    reader.join(10)
    out = "".join(output)
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", out)
    assert len(submitted) == 2 and submitted[0] == cancelled, out[-3000:]
    assert_same_rows(runs.rows(runs.cluster_dir, ROW_FILES[0]), before)
    server = runs.server_runs()
    assert sum(r.data.tags.get("wsvm.kind") == "model" for r in server) == runs.n_models
    assert sorted(r.info.run_id for r in server if r.data.tags.get("wsvm.kind") == "dataset") == models_before
    for job in exp6:
        slot_runs = [r for r in server if r.data.tags.get("wsvm.job_slot") == job.slot]
        assert len(slot_runs) == 1 + job.n_models
        second = JobFiles.of(job, runs.cluster_dir).log.read_text()
        if job in finished_at_cancel:  # kept: not computed again, its runs those of the cancelled SLURM job
            assert "nothing computed again" in second, second[-2000:]
            assert {(r.data.tags["wsvm.slurm_job_id"], r.data.tags["wsvm.attempt"]) for r in slot_runs} == \
                {(cancelled, "1")}
        else:
            assert "nothing computed again" not in second
            assert {(r.data.tags["wsvm.slurm_job_id"], r.data.tags["wsvm.attempt"]) for r in slot_runs} == \
                {(submitted[1], "2")}


def _drop_chunk(runs, job):
    results = runs.cluster_dir / "results"
    for path in [runs.cluster_dir / job.path, results / "mlflow-summary.json", *results.glob("*/rows.parquet")]:
        path.unlink(missing_ok=True)


def test_database_down_at_job_start_fails_clearly_and_the_retry_succeeds(runs):
    job = next(j for j in runs.jobs if j.experiment == "exp1")
    _drop_chunk(runs, job)
    log = runs.cluster_dir / job.log_path
    assert subprocess.run([str(REPO / "scripts" / "local-cluster"), "stop", "postgres"]).returncode == 0
    proc = subprocess.Popen([str(a) for a in [
        SNAKEMAKE, "--snakefile", REPO / "Snakefile", "--directory",
        runs.cluster_dir, "--profile", PROFILE, "--configfile", runs.config, *FAST_STATUS, *UNPACKED]],
        cwd=runs.cluster_dir, env=runs.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 600
        while "did not answer" not in (log.read_text(errors="replace") if log.exists() else ""):
            assert proc.poll() is None and time.monotonic() < deadline, "the job never reported the outage"
            time.sleep(1)
        first_attempt = log.read_text(errors="replace")
    finally:
        res = subprocess.run([str(REPO / "scripts" / "local-cluster"), "start"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out, _ = proc.communicate(timeout=1200)
    assert proc.returncode == 0, out[-6000:]
    assert "TrackingUnavailable" in first_attempt and "scripts/local-cluster status" in first_attempt
    assert "Nothing was computed" in first_attempt
    # the retry: by the main Snakemake (a new SLURM job), or, for a group job, by the Snakemake inside it
    slurm_logs = [Path(p) for p in re.findall(r"SLURM jobid \d+ \(log: ([^)]+)\)", out)]
    assert slurm_logs, out[-4000:]
    assert any("Trying to restart job" in text for text in [out, *(p.read_text() for p in slurm_logs)])
    models = [r for r in runs.server_runs() if r.data.tags.get("wsvm.job_slot") == job.slot
              and r.data.tags.get("wsvm.kind") == "model"]
    assert sorted(int(r.data.tags["wsvm.model_index"]) for r in models) == list(range(job.model_start, job.model_stop))


HOG = "import sys, time\nb = b'x' * (int(sys.argv[1]) * 2**20)\ntime.sleep(float(sys.argv[2]))\n"
# The memory rule holds 600 MB next to the job's own Snakemake (~300 MB): over 600 MB, under 1200 MB.
# The time rule ends 95 s after its SLURM job started (whatever its start-up took): slurmctld checks
# limits every 30 s, so a 1-minute job is killed by 90 s and a 2-minute one is not.
MEMORY_TIME_SNAKEFILE = """
from wsvm_span.study.scheduling import scaled_for_attempt

rule all:
    input: "memory.done", "time.done"

rule memory:
    output: "memory.done"
    retries: 1
    resources:
        mem_mb=lambda wc, attempt: scaled_for_attempt({"mem_mb": 600}, attempt)["mem_mb"],
        runtime=5,
    shell: "python hog.py 600 15 && touch {output}"

rule time:
    output: "time.done"
    retries: 1
    resources:
        mem_mb=1000,
        runtime=lambda wc, attempt: scaled_for_attempt({"runtime": 1}, attempt)["runtime"],
    shell: "sleep $(( $(date -d $(squeue -h -j $SLURM_JOB_ID -o %S) +%s) + 95 - $(date +%s) )) && touch {output}"
"""


def test_jobs_killed_for_memory_or_time_come_back_bigger(runs, tmp_path):
    (tmp_path / "Snakefile").write_text(MEMORY_TIME_SNAKEFILE)
    (tmp_path / "hog.py").write_text(HOG)
    res = subprocess.run([str(SNAKEMAKE), "--profile", str(PROFILE), *FAST_STATUS],
                         cwd=tmp_path, env=runs.env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, explain(res)
    assert (tmp_path / "memory.done").is_file() and (tmp_path / "time.done").is_file()
    ids = re.findall(r"submitted with SLURM jobid (\d+)", res.stdout + res.stderr)
    assert len(ids) == 4  # two attempts each
    res = subprocess.run(["sacct", "-n", "-P", "-X", "-o", "JobID,State,ReqMem,Timelimit", "-j", ",".join(ids)],
                         capture_output=True, text=True, check=True)
    states = {(mem, limit): state.split()[0] for _, state, mem, limit in
              (line.split("|") for line in res.stdout.splitlines())}
    # memory: over its 300 MB the job is killed (FAILED with OverMemoryKill, OUT_OF_MEMORY with cgroups)
    assert states[("600M", "00:05:00")] in ("FAILED", "OUT_OF_MEMORY")
    assert states[("1200M", "00:05:00")] == "COMPLETED"
    assert states[("1000M", "00:01:00")] == "TIMEOUT"
    assert states[("1000M", "00:02:00")] == "COMPLETED"
    logs = "".join(p.read_text() for p in (tmp_path / "results" / "logs" / "slurm").rglob("*.log"))
    assert "exceeded memory limit" in logs.lower() or "oom" in logs.lower()
