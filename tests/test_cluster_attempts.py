"""The cluster path as users meet it (issue 22), on the project's one-node SLURM cluster and tracking server
(``scripts/local-cluster``):

- docs/cluster.md's rehearsal commands run as written, from a copy of the repository, with no environment on PATH;
- a rerun started while the orphaned SLURM jobs of a killed snakemake still work on the same slots: the
  rerun's jobs wait for the orphans' slots (naming them), no model ever has two active runs, the rerun
  finishes with one run per model;
- a job that fails with an error (corrupt data) is not retried with bigger limits, and its retries stop at
  once.

Marked ``cluster``: ``make test-cluster`` (Debian, root)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from cluster_support import FAST_STATUS, PROFILE, UNPACKED, active_runs, local_cluster_cmd, sacct, squeue
from test_workflow_helpers import REPO, SNAKEMAKE, data_mirror, explain, workflow_env

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1800)]


def docs_block(heading: str) -> list[str]:
    """The command lines of the first ```bash block under a heading of docs/cluster.md (the cluster guide)."""
    text = (REPO / "docs" / "cluster.md").read_text()
    section = text[text.index(heading):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def copy_of_repository(dest: Path) -> Path:
    """The working tree as a fresh clone has it (tracked and not ignored files), beside a ``shared`` folder
    that holds the data mirror (``../shared/data`` in the configs). Its ``.venv`` is this one's (a link):
    ``make install`` finds it up to date, as it does after CI's own install."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                           capture_output=True, check=True).stdout.decode().split("\0")
    repo = dest / "repo"
    for name in filter(None, files):
        src = REPO / name
        if src.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / name)
    (repo / ".venv").symlink_to(REPO / ".venv")
    mirror = data_mirror()
    assert mirror is not None, "the data mirror (../shared/data) is missing"
    (dest / "shared").mkdir()
    (dest / "shared" / "data").symlink_to(mirror)
    return repo


def bare_env() -> dict[str, str]:
    """The environment of a new shell: no virtual environment on PATH, no tracking URI or credentials."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if p and "/.venv/" not in p + "/" and not Path(p, "activate").is_file())
    for key in ("VIRTUAL_ENV", "MLFLOW_TRACKING_URI", "PYTHONPATH", "WSVM_WORKFLOW_RUN", "WSVM_MLFLOW_CREDENTIALS",
                "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        env.pop(key, None)
    return env


def test_docs_cluster_commands_as_written(local_cluster, tmp_path):
    """docs/cluster.md's rehearsal block, line by line in one bash (set -e), in a copy of the repository, from a
    shell without the project's environment on PATH (the issue: every job exited 127)."""
    lines = docs_block("## 1. Rehearsal")
    assert any("snakemake --profile workflow/profiles/slurm" in line for line in lines), lines
    repo = copy_of_repository(tmp_path)
    env = bare_env()
    assert shutil.which("wsvm-span", path=env["PATH"]) is None and shutil.which("snakemake", path=env["PATH"]) is None
    script = "set -euo pipefail\n" + "\n".join(lines) + "\n"
    try:
        res = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True,
                             timeout=1500)
    finally:  # the block ends with `make cluster-stop`: bring the cluster back for the other tests
        back = local_cluster_cmd("start")
    assert back.returncode == 0, back.stderr
    assert res.returncode == 0, explain(res)
    out = res.stdout + res.stderr
    assert "exit code 127" not in out and "command not found" not in out
    assert "(100%) done" in out
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import plan_jobs

    cfg = sc.load_config(repo / "config" / "test.yaml")
    jobs = plan_jobs(cfg)
    assert all((repo / j.path).is_file() for j in jobs)
    assert (repo / "results" / "mlflow-summary.json").is_file() and (repo / "results" / "tables" / "table2.md").is_file()
    submitted = set(re.findall(r"submitted with SLURM jobid (\d+)", out))
    assert submitted
    models = [r for r in active_runs(local_cluster.tracking_uri, cfg["study"])
              if r.data.tags.get("wsvm.kind") == "model" and r.data.tags.get("wsvm.slurm_job_id") in submitted]
    assert len(models) == sum(j.n_models for j in jobs)


def _config(tmp: Path, prefix: str, uri: str, dataset: str = "waveform", mirror: Path | None = None) -> Path:
    """exp1 with exact LOO for every model (on waveform, l = 400, about a second each on a loaded machine): an
    8 x 16 grid in two jobs of 64 models, each long enough to outlast the rerun's start."""
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    cfg["study"] = prefix
    cfg["data"]["mirror"] = str(mirror or data_mirror())
    cfg["chunk_size"] = 64
    cfg["loo"] = {"fraction": 1.0, "all_up_to": 400, "max_train_size": 400, "seed": 0}
    cfg["experiments"] = {"exp1": {"datasets": [dataset],
                                   "grid": {"log2_C_plus": {"start": -2, "stop": 5, "step": 1},
                                            "log2_C_minus": {"start": -2, "stop": 5.5, "step": 0.5}}}}
    cfg["resources"] = {"mem_mb_min": 1000}
    cfg["tracking"] = {"uri": uri}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


class DuplicateWatch(threading.Thread):
    """Polls the server: the most active runs any one model of the study had at once."""

    def __init__(self, uri: str, prefix: str):
        super().__init__(daemon=True)
        self.uri, self.prefix = uri, prefix
        self.max_twins = 0
        self.polls = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            runs = [r for r in active_runs(self.uri, self.prefix) if r.data.tags.get("wsvm.kind") == "model"]
            count = Counter((r.data.tags["wsvm.job_slot"], r.data.tags["wsvm.model_index"]) for r in runs)
            self.max_twins = max(self.max_twins, max(count.values(), default=0))
            self.polls += 1
            time.sleep(0.5)


def test_rerun_beside_orphaned_jobs_waits_for_their_slots(local_cluster, tmp_path):
    """snakemake killed with SIGKILL while its SLURM jobs compute (they become orphans), `--unlock`, and the
    same command again at once: the new jobs wait for the orphans' slots and say whose; no model has two
    active runs at any time; the rerun ends with one run per model."""
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import plan_jobs

    prefix = f"wsvm-span-orphans-{int(time.time())}"
    config = _config(tmp_path, prefix, local_cluster.tracking_uri)
    jobs = plan_jobs(sc.load_config(config))
    assert len(jobs) == 2
    env = workflow_env(tmp_path / "pycache")
    cmd = [str(a) for a in [SNAKEMAKE, "--snakefile", REPO / "Snakefile", "--directory", tmp_path / "work",
                            "--profile", PROFILE, "--configfile", config, *FAST_STATUS, *UNPACKED]]
    (tmp_path / "work").mkdir()
    first = subprocess.Popen(cmd, cwd=tmp_path / "work", env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    from wsvm_span.study.attempts import JobFiles, SlotLock

    deadline = time.monotonic() + 900
    holders: dict[str, str] = {}
    while len(holders) < 2:  # both jobs hold their slots (their SLURM job ids in the lock files)
        assert first.poll() is None and time.monotonic() < deadline, "the first run ended before it was killed"
        for job in jobs:
            holder = SlotLock(JobFiles.of(job, tmp_path / "work"), None).holder()
            if holder.get("slurm_job_id"):
                holders[job.slot] = holder["slurm_job_id"]
        time.sleep(0.3)
    orphans = set(holders.values())
    assert orphans <= {i for i, state in squeue("i", "T") if state == "RUNNING"}
    first.send_signal(signal.SIGKILL)  # only snakemake: its SLURM jobs go on
    first.wait()
    assert {i for i, _ in squeue("i", "T")} >= orphans

    watch = DuplicateWatch(local_cluster.tracking_uri, prefix)
    watch.start()
    unlock = subprocess.run([*cmd, "--unlock"], cwd=tmp_path / "work", env=env, capture_output=True, text=True)
    assert unlock.returncode == 0, explain(unlock)
    rerun = subprocess.run(cmd, cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=1500)
    watch.done.set()
    watch.join(30)
    assert rerun.returncode == 0, explain(rerun)
    assert watch.polls > 10 and watch.max_twins == 1, watch.max_twins
    states = {row[0]: row[1] for row in sacct(orphans)}
    assert all(s == "COMPLETED" for s in states.values()), states  # the orphans finished their work
    waited = 0
    for job in jobs:
        log = (tmp_path / "work" / job.log_path).read_text()
        held = re.findall(r"waiting for the job's slot, held by SLURM job (\d+) on host", log)
        assert set(held) <= orphans
        waited += bool(held)
    assert waited >= 1  # at least one rerun job met its orphan (both, unless one orphan ended first)
    runs = [r for r in active_runs(local_cluster.tracking_uri, prefix) if r.data.tags.get("wsvm.kind") == "model"]
    keys = Counter((r.data.tags["wsvm.job_slot"], r.data.tags["wsvm.model_index"]) for r in runs)
    assert len(keys) == sum(j.n_models for j in jobs) and set(keys.values()) == {1}
    assert all(r.info.status == "FINISHED" for r in runs)
    assert not {r.data.tags["wsvm.slurm_job_id"] for r in runs} & orphans  # the rerun's own runs


def test_an_error_is_not_retried_with_bigger_limits_on_slurm(local_cluster, tmp_path):
    """A grid job whose data fail their checksum: Snakemake submits it three times (it retries every
    failure), but with the first attempt's memory and time limits, and the two retries stop at once."""
    from test_attempts import _corrupt_mirror

    mirror = _corrupt_mirror(tmp_path, "breast_cancer", "breast-cancer_scale")
    config = _config(tmp_path, f"wsvm-span-fatal-{int(time.time())}", local_cluster.tracking_uri, "breast_cancer",
                     mirror)
    env = workflow_env(tmp_path / "pycache")
    (tmp_path / "work").mkdir()
    res = subprocess.run([str(a) for a in [
        SNAKEMAKE, "results/exp1/breast_cancer/class/chunk-0.parquet", "--snakefile", REPO / "Snakefile",
        "--directory", tmp_path / "work", "--profile", PROFILE, "--configfile", config, *FAST_STATUS, *UNPACKED]],
        cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=1500)
    assert res.returncode != 0
    ids = re.findall(r"submitted with SLURM jobid (\d+)", res.stdout + res.stderr)
    assert len(ids) == 3, explain(res)
    rows = {row[0]: row[1:] for row in sacct(ids, "JobID,State,ReqMem,Timelimit,ElapsedRaw")}
    assert len({(rows[i][1], rows[i][2]) for i in ids}) == 1, rows  # the same limits for all three
    assert all(rows[i][0] == "FAILED" for i in ids), rows
    logs = {i: next((tmp_path / "work" / "results" / "logs" / "exp1").rglob(f"chunk-0.attempt-*.slurm-{i}.log"))
            for i in ids}
    assert "DataIntegrityError" in logs[ids[0]].read_text()
    for i in ids[1:]:  # each names the error and the log of the attempt that failed
        text = logs[i].read_text()
        assert "not retried: attempt 1 " in text and "DataIntegrityError" in text, text
        assert f"Its log: {logs[ids[0]].relative_to(tmp_path / 'work')}" in text, text
    print("elapsed per attempt (s):", [rows[i][3] for i in ids])
