"""The attempts of a job under a workflow (``wsvm_span.study.attempts``), with real processes and a real
MLflow store (SQLite): the retry policy (bigger limits only for what they can fix; an error is not run
again), the slot lock between two processes, logs per attempt, the rows a finished attempt keeps for a
retried pack, and the tags that say which attempt logged a run. The same on SLURM: test_cluster_integration."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from test_workflow_helpers import REPO, SNAKEMAKE, data_mirror, explain, workflow_env
from wsvm_span.study import attempts, scheduling
from wsvm_span.study import config as sc
from wsvm_span.study.attempts import Attempt, JobFiles, limits_attempt
from wsvm_span.study.experiments import plan_jobs

RUN = "test-run-1"


@pytest.fixture(scope="module")
def cfg():
    return sc.validate_config(yaml.safe_load((REPO / "config" / "test.yaml").read_text()))


@pytest.fixture(scope="module")
def synthetic_job(cfg):
    """Experiment 6's job of the test config: 9 models of generated data (no data files)."""
    return next(j for j in plan_jobs(cfg) if j.experiment == "exp6")


def _records(files: JobFiles, *events):
    attempts.read_records  # the reader under test
    files.records.parent.mkdir(parents=True, exist_ok=True)
    with open(files.records, "a") as fh:
        for run, number, event, verdict in events:
            rec = {"run": run, "attempt": number, "event": event}
            if verdict:
                rec["verdict"] = verdict
            fh.write(json.dumps(rec) + "\n")


# --------------------------------------------------------------------------------------- retry policy
def test_limits_grow_only_for_failures_that_bigger_limits_fix(tmp_path, cfg, synthetic_job):
    def limits(events, attempt):
        files = JobFiles(tmp_path / f"case{len(list(tmp_path.iterdir()))}" / "chunk-0.log")
        _records(files, *events)
        return limits_attempt(files, attempt, RUN)

    # attempt 1 failed with an error (a Python exception, a config error): attempt 2 gets attempt 1's limits
    assert limits([(RUN, 1, "start", None), (RUN, 1, "end", "fatal")], 2) == 1
    # killed by the scheduler (a start, no end: memory, time limit), or never started: twice the limits
    assert limits([(RUN, 1, "start", None)], 2) == 2
    assert limits([], 2) == 2
    # the tracking store was unreachable: retried with the next limits, as the issue asks
    assert limits([(RUN, 1, "start", None), (RUN, 1, "end", "retriable")], 2) == 2
    # a finished member of a pack that failed for another member: its limits do not grow
    assert limits([(RUN, 1, "start", None), (RUN, 1, "end", "ok")], 2) == 1
    # per attempt: killed, then fatal -> attempt 3 has attempt 2's limits
    assert limits([(RUN, 1, "start", None), (RUN, 2, "start", None), (RUN, 2, "end", "fatal")], 3) == 2
    # another workflow run's records (an earlier snakemake) are not this run's
    assert limits([("other", 1, "start", None), ("other", 1, "end", "fatal")], 2) == 2
    # the scheduler limits those attempts get (mem_mb, runtime), as the rule asks for them
    first = scheduling.job_limits(cfg, synthetic_job, 1)
    assert scheduling.job_limits(cfg, synthetic_job, 2) == {k: 2 * v for k, v in first.items()}


def test_failures_are_classified_by_what_can_fix_them():
    from wsvm_span.data.errors import DataIntegrityError
    from wsvm_span.study.config import ConfigError
    from wsvm_span.study.tracking import TrackingUnavailable

    for exc in (MemoryError(), TrackingUnavailable("down"), attempts.SlotBusy("held")):
        assert attempts.classify(exc) == "retriable", exc
    for exc in (ValueError("bad"), ConfigError("bad"), DataIntegrityError("sha256 differs"), KeyError("x")):
        assert attempts.classify(exc) == "fatal", exc


# ------------------------------------------------------------------------------- run-chunk processes
def _env(tmp_path: Path, run: str = RUN, **extra) -> dict:
    env = workflow_env(tmp_path / "pycache")
    env[attempts.RUN_ENV] = run
    env.pop(attempts.SCHEDULER_JOB_ENV, None)
    env.update(extra)
    return env


def _chunk_cmd(job, workdir: Path, attempt: int, *, tracking: bool = True, mirror: Path | None = None,
               time_limit_min: float | None = None, config_hash: str = "cfg-1") -> list[str]:
    args = [sys.executable, "-m", "wsvm_span", "run-chunk", "--spec", job.to_json(), "--attempt", str(attempt),
            "--log", str(workdir / job.log_path), "--output", str(workdir / job.path), "--config-hash", config_hash,
            "--experiment-prefix", "attempts-test", "--data-dir", str(workdir / "data")]
    if mirror is not None:
        args += ["--data-mirror", str(mirror)]
    if time_limit_min is not None:
        args += ["--time-limit-min", str(time_limit_min)]
    if tracking:
        args += ["--tracking-uri", f"sqlite:///{workdir / 'mlflow.db'}", "--artifact-root", str(workdir / "art")]
    else:
        args += ["--no-tracking"]
    return args


def _run(cmd, workdir, env, timeout=600):
    return subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)


def _slot_runs(workdir: Path, job) -> list:
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{workdir / 'mlflow.db'}")
    exp = client.get_experiment_by_name(f"attempts-test/{job.experiment}")
    return client.search_runs([exp.experiment_id], f"tags.`wsvm.job_slot` = '{job.slot}'",
                              run_view_type=ViewType.ACTIVE_ONLY, max_results=1000)


def _corrupt_mirror(tmp_path: Path, dataset_folder: str, filename: str) -> Path:
    """A data mirror like the study's, one of whose files does not match its checksum."""
    real = data_mirror()
    assert real is not None, "the data mirror (../shared/data) is missing"
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for entry in real.iterdir():
        if entry.name != dataset_folder:
            (mirror / entry.name).symlink_to(entry)
    (mirror / dataset_folder).mkdir()
    for entry in (real / dataset_folder).iterdir():
        if entry.name == filename:
            (mirror / dataset_folder / filename).write_text(entry.read_text()[:-200])
        else:
            (mirror / dataset_folder / entry.name).symlink_to(entry)
    return mirror


def test_an_error_is_not_retried_and_each_attempt_keeps_its_log(tmp_path, cfg):
    """A job whose data fail their checksum (no memory or time fixes that): attempt 1 fails with the error in
    its own log; attempt 2 stops at once, repeating it, without computing; both logs stay."""
    job = next(j for j in plan_jobs(cfg) if j.experiment == "exp1")
    mirror = _corrupt_mirror(tmp_path, "breast_cancer", "breast-cancer_scale")
    env = _env(tmp_path)
    files = JobFiles.of(job, tmp_path)

    first = _run(_chunk_cmd(job, tmp_path, 1, mirror=mirror), tmp_path, env)
    assert first.returncode == 1, explain(first)
    log1 = next(files.log.parent.glob(f"{files.log.stem}.attempt-1.pid-*.log"))
    text1 = log1.read_text()
    assert "DataIntegrityError" in text1 and "sha256" in text1, text1[-3000:]
    assert os.path.samefile(files.log, log1)  # the rule's log is the latest attempt's
    ends = [r for r in attempts.read_records(files, RUN) if r["event"] == "end"]
    assert [(r["attempt"], r["verdict"]) for r in ends] == [(1, "fatal")]

    t0 = time.monotonic()
    second = _run(_chunk_cmd(job, tmp_path, 2, mirror=mirror), tmp_path, env)
    took = time.monotonic() - t0
    assert second.returncode == attempts.NOT_RETRIED_STATUS, explain(second)
    log2 = next(files.log.parent.glob(f"{files.log.stem}.attempt-2.pid-*.log"))
    text2 = log2.read_text()
    assert "not retried" in text2 and "DataIntegrityError" in text2 and str(log1) in text2, text2
    assert "progress" not in text2 and not (tmp_path / job.path).exists()
    assert os.path.samefile(files.log, log2) and log1.read_text() == text1  # attempt 1's log is kept
    print(f"attempt 2 of a failed job stopped after {took:.1f} s")
    # the limits Snakemake gives attempts 2 and 3: attempt 1's
    assert limits_attempt(files, 2, RUN) == limits_attempt(files, 3, RUN) == 1


def test_a_second_process_on_the_slot_waits_for_the_first_and_says_who_holds_it(tmp_path, synthetic_job):
    """Two run-chunk processes on one slot (an orphan and a rerun's job): the second waits for the lock,
    naming the holder, then runs alone; the store holds one job run and one run per model. A holder killed
    with SIGKILL releases the slot at once; a holder that outlasts the wait makes the other fail, saying so."""
    job = synthetic_job
    env = _env(tmp_path)
    files = JobFiles.of(job, tmp_path)
    first = subprocess.Popen(_chunk_cmd(job, tmp_path, 1), cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not (files.lock.is_file() and '"pid"' in files.lock.read_text()):
        assert first.poll() is None and time.monotonic() < deadline, first.stdout.read()
        time.sleep(0.2)
    second = _run(_chunk_cmd(job, tmp_path, 1), tmp_path, _env(tmp_path, run="test-run-2"))
    assert first.wait(300) == 0
    assert second.returncode == 0, explain(second)
    text = next(files.log.parent.glob(f"{files.log.stem}.attempt-1.pid-{_pid_of(second, files)}.log")).read_text()
    assert f"waiting for the job's slot, held by host" in text and f"(pid {first.pid})" in text, text
    runs = _slot_runs(tmp_path, job)
    assert sum(r.data.tags["wsvm.kind"] == "job" for r in runs) == 1
    assert sorted(int(r.data.tags["wsvm.model_index"]) for r in runs if r.data.tags["wsvm.kind"] == "model") == \
        list(range(job.model_start, job.model_stop))

    # a holder killed with SIGKILL: the kernel releases its lock, the next process does not wait
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(files.log), str(tmp_path / job.path)], env=env,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    slow = _run(_chunk_cmd(job, tmp_path, 1, tracking=False, time_limit_min=0.05), tmp_path, env)
    assert slow.returncode == 1
    busy = next(p for p in files.log.parent.glob(f"{files.log.stem}.attempt-1.pid-*.log")
                if "SlotBusy" in p.read_text()).read_text()
    assert f"still held by host" in busy and f"(pid {holder.pid})" in busy and "nothing was computed" in busy
    assert attempts.read_records(files, RUN)[-1]["verdict"] == "retriable"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    t0 = time.monotonic()
    after = _run(_chunk_cmd(job, tmp_path, 1, tracking=False, time_limit_min=0.05), tmp_path, env)
    assert after.returncode == 0, explain(after)
    assert time.monotonic() - t0 < 120


_HOLD = """
import sys, time
from pathlib import Path
from wsvm_span.study.attempts import Attempt, JobFiles, SlotLock
lock = SlotLock(JobFiles(Path(sys.argv[1]), Path(sys.argv[2])), Attempt.current(1))
lock.acquire(10)
print("locked", flush=True)
time.sleep(600)
"""


def _pid_of(res: subprocess.CompletedProcess, files: JobFiles) -> int:
    """The process id of a finished run-chunk, from its attempt log (the one that waited)."""
    for path in files.log.parent.glob(f"{files.log.stem}.attempt-1.pid-*.log"):
        if "waiting for the job's slot" in path.read_text():
            return int(re.search(r"pid-(\d+)\.log$", path.name).group(1))
    raise AssertionError(res.stdout + res.stderr)


def test_a_retried_attempt_keeps_what_an_earlier_attempt_of_the_run_finished(tmp_path, synthetic_job):
    """A pack's SLURM job failed for one member: Snakemake deletes every member's chunk file and reruns them
    all. A member that had finished puts its rows back (same bytes, same MLflow runs), and only within the
    workflow run that computed them, with the same config, and with its MLflow runs complete."""
    job = synthetic_job
    env = _env(tmp_path)
    out = tmp_path / job.path
    res = _run(_chunk_cmd(job, tmp_path, 1), tmp_path, env)
    assert res.returncode == 0, explain(res)
    data = out.read_bytes()
    runs = sorted(r.info.run_id for r in _slot_runs(tmp_path, job))
    for run in _slot_runs(tmp_path, job):
        assert run.data.tags["wsvm.attempt"] == "1" and run.data.tags["wsvm.workflow_run"] == RUN
        assert "wsvm.slurm_job_id" not in run.data.tags  # not in a SLURM job

    out.unlink()  # Snakemake's clean-up of the failed group
    res = _run(_chunk_cmd(job, tmp_path, 2), tmp_path, env)
    assert res.returncode == 0, explain(res)
    assert json.loads(res.stdout.splitlines()[-1])["kept_from_attempt"] == 1
    assert out.read_bytes() == data and sorted(r.info.run_id for r in _slot_runs(tmp_path, job)) == runs
    assert "nothing computed again" in JobFiles.of(job, tmp_path).log.read_text()

    # not across workflow runs, nor for another config: computed again, the slot's runs replaced
    for run, config_hash in (("test-run-2", "cfg-1"), (RUN, "cfg-2")):
        out.unlink()
        res = _run(_chunk_cmd(job, tmp_path, 2, config_hash=config_hash), tmp_path, _env(tmp_path, run=run))
        assert res.returncode == 0, explain(res)
        assert json.loads(res.stdout.splitlines()[-1])["kept_from_attempt"] is None
        assert not set(runs) & {r.info.run_id for r in _slot_runs(tmp_path, job)}
        runs = sorted(r.info.run_id for r in _slot_runs(tmp_path, job))

    # not when the store lost one of its runs: computed again
    from mlflow.tracking import MlflowClient

    model = next(r for r in _slot_runs(tmp_path, job) if r.data.tags["wsvm.kind"] == "model")
    MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").delete_run(model.info.run_id)
    out.unlink()
    res = _run(_chunk_cmd(job, tmp_path, 3, config_hash="cfg-2"), tmp_path, env)
    assert res.returncode == 0, explain(res)
    assert json.loads(res.stdout.splitlines()[-1])["kept_from_attempt"] is None
    assert len(_slot_runs(tmp_path, job)) == 1 + job.n_models


def test_snakemake_retries_an_error_without_bigger_limits(tmp_path, cfg):
    """The workflow itself (local executor): a job that fails with an error is retried by Snakemake (it cannot
    be told not to), but each retry asks for the first attempt's limits and stops at once."""
    mirror = _corrupt_mirror(tmp_path, "breast_cancer", "breast-cancer_scale")
    raw = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    raw["data"]["mirror"] = str(mirror)
    raw["experiments"] = {"exp1": raw["experiments"]["exp1"]}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    env = workflow_env(tmp_path / "pycache")
    env.pop(attempts.RUN_ENV, None)
    res = subprocess.run([str(SNAKEMAKE), "results/exp1/breast_cancer/class/chunk-0.parquet", "--snakefile",
                          str(REPO / "Snakefile"), "--directory", str(tmp_path), "--cores", "1", "--configfile", str(config)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    mem = re.findall(r"mem_mb=(\d+)", out)
    runtime = re.findall(r"runtime=(\d+)", out)
    assert len(mem) == len(runtime) == 3, out[-4000:]  # attempt 1 and Snakemake's two retries
    assert len(set(mem)) == 1 and len(set(runtime)) == 1, (mem, runtime)
    job = next(j for j in plan_jobs(sc.load_config(config)) if j.slot.endswith("chunk-0") and j.experiment == "exp1")
    files = JobFiles.of(job, tmp_path)
    logs = sorted(files.log.parent.glob(f"{files.log.stem}.attempt-*.log"))
    assert [re.search(r"attempt-(\d)", p.name).group(1) for p in logs] == ["1", "2", "3"]
    assert "DataIntegrityError" in logs[0].read_text()
    assert all("not retried: attempt 1 " in p.read_text() and logs[0].name in p.read_text() for p in logs[1:])


def test_cost_calibration_skips_a_job_whose_rows_were_put_back(tmp_path):
    """The process start the cost model reads (benchmark seconds minus the job's own wall time) is not taken
    from a job whose last attempt put back an earlier attempt's rows: its benchmark timed only that."""
    from wsvm_span.study.config.estimate import process_start_seconds
    from wsvm_span.study.experiments import benchmark_path, log_path

    chunks = ["results/exp1/a/class/chunk-0.parquet", "results/exp1/a/class/chunk-1.parquet"]
    for chunk, kept in zip(chunks, (None, 1)):
        bench = tmp_path / benchmark_path(chunk)
        bench.parent.mkdir(parents=True, exist_ok=True)
        bench.write_text("s\th:m:s\n12.5\t0:00:12\n")
        files = JobFiles(tmp_path / log_path(chunk))
        _records(files, (RUN, 1, "start", None))
        with open(files.records, "a") as fh:
            fh.write(json.dumps({"run": RUN, "attempt": 2, "event": "end", "verdict": "ok",
                                 "kept_from_attempt": kept}) + "\n")
    provenance = [{"file": c, "wall_s": 10.0} for c in chunks]
    assert process_start_seconds(tmp_path / "results" / "exp1" / "rows.parquet", provenance) == [2.5]
