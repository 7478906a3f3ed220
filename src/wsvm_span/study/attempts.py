"""One attempt of a job under a workflow: its log, its record, its slot's lock, the retry policy, and the
rows an earlier attempt of the same workflow run finished.

Snakemake retries a failed job (``retries:`` in the rule, with limits that grow per attempt) but cannot
be told why it failed (snakemake/snakemake#2441): it retries a Python exception as it retries a job that
SLURM killed for memory. So every attempt says how it ended, in a record beside its log
(``<log>.attempts.jsonl``, one JSON line per event), and the next attempt of the same workflow run reads it:

- **retry policy** (:func:`limits_attempt`): the memory and time limits grow only for the earlier attempts
  that bigger limits can help: killed by the scheduler (out of memory, time limit: a start without an end
  in the record), out of memory in Python, or the tracking store unreachable; never for a config error or
  another exception (``fatal``). The attempt after a fatal one stops at once (:func:`not_retried`),
  repeating the error, without computing or asking for bigger limits.
- **slot lock** (:class:`SlotLock`): two processes never compute one job's slot at once (e.g. an orphan of
  a killed ``snakemake`` and the rerun's job): an exclusive ``flock`` on ``<log>.lock``, which the kernel
  (or the NFS server, when a node dies) releases when its holder dies; the file names its holder. The
  later one waits for it up to a limit, then fails, saying who holds the slot (a retriable failure).
- **logs per attempt**: every attempt writes its own log, ``<log stem>.attempt-<n>.<who>.log`` (``who``:
  the SLURM job id, or the process id); the rule's log (which Snakemake deletes before each attempt) is a
  hard link to the latest one.
- **kept rows** (:func:`restore_kept`): a finished attempt leaves a hard link of its chunk file,
  ``.<chunk>.kept`` beside it, which Snakemake's clean-up of a failed job group does not touch; a later
  attempt of the same workflow run (a retried pack reruns every member) puts it back instead of computing
  again, when its spec and config match and its MLflow runs are complete.

The workflow run is one ``snakemake`` invocation: ``common.smk`` sets :data:`RUN_ENV` in the main process
and passes it to every job (``envvars:``), so records of an earlier invocation are never taken for this one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = [
    "RUN_ENV",
    "SCHEDULER_JOB_ENV",
    "Attempt",
    "JobFiles",
    "SlotBusy",
    "SlotLock",
    "classify",
    "kept_from",
    "limits_attempt",
    "not_retried",
    "read_records",
    "restore_kept",
    "slot_wait_s",
    "workflow_run_id",
]

log = logging.getLogger(__name__)

#: the workflow run (one snakemake invocation): set by common.smk, passed to every job
RUN_ENV = "WSVM_WORKFLOW_RUN"
#: the scheduler's id of the job a process runs in (SLURM sets it in every job)
SCHEDULER_JOB_ENV = "SLURM_JOB_ID"
#: how an attempt ended: "ok"; "retriable" (bigger limits or a later try can help); "fatal" (they cannot)
OK, RETRIABLE, FATAL = "ok", "retriable", "fatal"
#: how often a job waiting for its slot says so in its log, and looks again
LOCK_POLL_S = 2.0
LOCK_REPORT_S = 30.0
#: the exit status of an attempt that was not run because an earlier one failed for good
NOT_RETRIED_STATUS = 3
#: how long a job waits for another holder of its slot: this share of its own time limit (the rest is
#: left for its own work), or DEFAULT_SLOT_WAIT_S without a limit
SLOT_WAIT_SHARE = 0.5
DEFAULT_SLOT_WAIT_S = 600.0


def slot_wait_s(time_limit_min: float | None) -> float:
    return DEFAULT_SLOT_WAIT_S if time_limit_min is None else SLOT_WAIT_SHARE * 60.0 * float(time_limit_min)


class SlotBusy(RuntimeError):
    """Another process holds the job's slot (an earlier attempt still running, e.g. an orphan)."""


def workflow_run_id() -> str:
    """The id of this workflow run: :data:`RUN_ENV` when set (a job of the run), else a new one, set in
    the environment so that every job started from here inherits it."""
    run = os.environ.get(RUN_ENV)
    if not run:
        run = f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"
        os.environ[RUN_ENV] = run
    return run


@dataclass(frozen=True)
class Attempt:
    """Which attempt a process is: Snakemake's attempt number, the workflow run, the scheduler job."""

    number: int = 1
    workflow_run: str = ""
    scheduler_job: str | None = None
    host: str = ""
    pid: int = 0

    @classmethod
    def current(cls, number: int = 1) -> "Attempt":
        if number < 1:
            raise ValueError(f"attempt must be >= 1 (got {number})")
        return cls(number=number, workflow_run=workflow_run_id(), scheduler_job=os.environ.get(SCHEDULER_JOB_ENV),
                   host=socket.gethostname(), pid=os.getpid())

    @property
    def who(self) -> str:
        """``slurm-<job id>`` in a SLURM job, else ``pid-<process id>`` (names the attempt's log)."""
        return f"slurm-{self.scheduler_job}" if self.scheduler_job else f"pid-{self.pid}"

    def describe(self) -> str:
        where = f"SLURM job {self.scheduler_job}, " if self.scheduler_job else ""
        return f"attempt {self.number} of workflow run {self.workflow_run} ({where}host {self.host}, pid {self.pid})"

    def tags(self) -> dict[str, str]:
        """MLflow tags of the runs this attempt logs: which cluster job and attempt produced them."""
        tags = {"wsvm.attempt": str(self.number), "wsvm.workflow_run": self.workflow_run}
        if self.scheduler_job:
            tags["wsvm.slurm_job_id"] = self.scheduler_job
        return tags

    def as_record(self) -> dict[str, Any]:
        return {"attempt": self.number, "run": self.workflow_run, "slurm_job_id": self.scheduler_job,
                "host": self.host, "pid": self.pid}


@dataclass(frozen=True)
class JobFiles:
    """Where one job keeps its attempts: beside its log (``results/logs/...``) and its chunk file."""

    log: Path
    output: Path | None = None

    @classmethod
    def of(cls, job, workdir: str | os.PathLike = ".") -> "JobFiles":
        return cls(Path(workdir) / job.log_path, Path(workdir) / job.path)

    @property
    def records(self) -> Path:
        return self.log.with_suffix(".attempts.jsonl")

    @property
    def lock(self) -> Path:
        return self.log.with_suffix(".lock")

    def attempt_log(self, attempt: Attempt) -> Path:
        return self.log.with_name(f"{self.log.stem}.attempt-{attempt.number}.{attempt.who}.log")

    @property
    def kept(self) -> Path | None:
        return None if self.output is None else self.output.with_name(f".{self.output.name}.kept")


# ------------------------------------------------------------------------------------------- records
def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def append_record(files: JobFiles, attempt: Attempt, event: str, **fields: Any) -> None:
    files.records.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({**attempt.as_record(), "event": event, "time": _now(), **fields}, sort_keys=True)
    with open(files.records, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def read_records(files: JobFiles, workflow_run: str) -> list[dict]:
    """The records of one workflow run (unreadable lines, e.g. one cut by a killed writer, are skipped)."""
    try:
        lines = files.records.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and rec.get("run") == workflow_run:
            out.append(rec)
    return out


def verdict(records: list[dict], number: int) -> str:
    """How attempt ``number`` ended: its end record's verdict; "killed" when it started and never ended
    (the scheduler killed it: memory, time limit, cancel) or left no record at all."""
    ends = [r for r in records if r.get("attempt") == number and r.get("event") == "end"]
    return ends[-1]["verdict"] if ends else "killed"


def kept_from(files: JobFiles) -> int | None:
    """The earlier attempt whose rows the job's last finished attempt put back (None: it computed them)."""
    try:
        lines = files.records.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    for line in reversed(lines):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("event") == "end" and rec.get("verdict") == OK:
            return rec.get("kept_from_attempt")
    return None


def limits_attempt(files: JobFiles, attempt: int, workflow_run: str) -> int:
    """The attempt whose limits Snakemake's ``attempt`` gets (1 + the earlier attempts of this run that
    bigger limits can help): the retry policy of the module doc."""
    if attempt <= 1:
        return 1
    records = read_records(files, workflow_run)
    return 1 + sum(verdict(records, k) in ("killed", RETRIABLE) for k in range(1, attempt))


def not_retried(files: JobFiles, attempt: Attempt) -> dict | None:
    """The end record of the previous attempt of this run when it failed for good (then this attempt must
    not run), else None."""
    if attempt.number <= 1:
        return None
    ends = [r for r in read_records(files, attempt.workflow_run)
            if r.get("attempt") == attempt.number - 1 and r.get("event") == "end"]
    return ends[-1] if ends and ends[-1].get("verdict") == FATAL else None


def classify(exc: BaseException) -> str:
    """``retriable`` for failures a later attempt (with bigger limits) can get past: Python out of memory,
    the tracking store unreachable, the slot held by another process; ``fatal`` for the rest (config
    errors, exceptions of the computation)."""
    from .tracking import TrackingUnavailable

    return RETRIABLE if isinstance(exc, (MemoryError, TrackingUnavailable, SlotBusy)) else FATAL


# ---------------------------------------------------------------------------------------------- lock
class SlotLock:
    """An exclusive lock on one job's slot (``flock`` of ``files.lock``), held for the life of the
    attempt; the file says who holds it. :meth:`acquire` waits up to ``wait_s`` for a holder to finish."""

    def __init__(self, files: JobFiles, attempt: Attempt):
        self.files, self.attempt = files, attempt
        self._fh = None

    def holder(self) -> dict:
        try:
            return json.loads(self.files.lock.read_text(encoding="utf-8") or "{}")
        except (OSError, json.JSONDecodeError):
            return {}

    @staticmethod
    def describe(holder: dict) -> str:
        if not holder:
            return "another process"
        where = f"SLURM job {holder['slurm_job_id']} on " if holder.get("slurm_job_id") else ""
        return (f"{where}host {holder.get('host')} (pid {holder.get('pid')}), attempt {holder.get('attempt')} of "
                f"workflow run {holder.get('run')}, since {holder.get('since')}")

    def acquire(self, wait_s: float, say: Callable[[str], None] = log.warning) -> None:
        self.files.lock.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.files.lock, "a+", encoding="utf-8")
        t0 = time.monotonic()
        reported = -LOCK_REPORT_S
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - t0
                holder = self.holder()
                if waited >= wait_s:
                    fh.close()
                    raise SlotBusy(
                        f"the job's slot is still held by {self.describe(holder)} after waiting {waited:.0f} s: an "
                        "earlier attempt of this job (e.g. a job of a snakemake that was killed) still computes it. "
                        "Two jobs on one slot would delete each other's MLflow runs, so this one did not start. Wait "
                        "for it to end (or cancel it: scancel <job id>), then rerun; nothing was computed.") from None
                if waited - reported >= LOCK_REPORT_S:
                    say(f"waiting for the job's slot, held by {self.describe(holder)} (waited {waited:.0f} s, "
                        f"at most {wait_s:.0f} s)")
                    reported = waited
                time.sleep(LOCK_POLL_S)
            except OSError as exc:
                fh.close()
                raise OSError(f"cannot lock {self.files.lock} ({exc}): the results folder must be on a file "
                              "system with POSIX locks (local, NFS with lockd, Lustre mounted with -o flock)") from exc
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({**self.attempt.as_record(), "since": _now()}))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


# ------------------------------------------------------------------------------------------- kept rows
def keep(files: JobFiles) -> None:
    """Leave a hard link of the finished chunk file (``files.kept``), replacing an older one."""
    if files.kept is None or files.output is None:
        return
    tmp = files.kept.with_name(files.kept.name + f".{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        os.link(files.output, tmp)
    except OSError:  # a file system without hard links: a copy
        import shutil

        shutil.copyfile(files.output, tmp)
    os.replace(tmp, files.kept)


def forget(files: JobFiles) -> None:
    if files.kept is not None:
        with contextlib.suppress(FileNotFoundError):
            files.kept.unlink()


def restore_kept(files: JobFiles, job, attempt: Attempt, config_hash: str, tracker=None,
                 experiment_id: str | None = None, child_runs: bool = True) -> dict | None:
    """Put back the rows an earlier attempt of this workflow run finished (``files.kept``) when its spec
    and config hash are this job's, it has every row, and (with a tracker) the slot's MLflow runs are that
    attempt's complete job run and (``child_runs``) one run per model. Returns the chunk's provenance, or
    None (compute)."""
    from .results_schema import read_provenance
    from .tracking import COMPLETE, KIND, SLOT

    if attempt.number <= 1 or files.kept is None or not files.kept.is_file():
        return None
    finished = [r for r in read_records(files, attempt.workflow_run)
                if r.get("event") == "end" and r.get("verdict") == OK and r.get("spec_hash") == job.spec_hash]
    if not finished:
        return None
    try:
        prov = read_provenance(files.kept) or {}
        import pyarrow.parquet as pq

        n_rows = pq.read_metadata(files.kept).num_rows
    except Exception:  # noqa: BLE001 - an unreadable kept file is computed again
        return None
    if prov.get("spec_hash") != job.spec_hash or prov.get("config_hash") != config_hash or n_rows != job.n_models:
        return None
    if tracker is not None:
        runs = tracker.search(experiment_id, f"tags.`{SLOT}` = '{job.slot}'")
        job_runs = [r for r in runs if r.data.tags.get(KIND) == "job"]
        models = [r for r in runs if r.data.tags.get(KIND) == "model"]
        if (len(job_runs) != 1 or job_runs[0].info.run_id != prov.get("mlflow_parent_run_id")
                or job_runs[0].data.tags.get(COMPLETE) != "true" or len(models) != (job.n_models if child_runs else 0)):
            return None
    tmp = files.output.with_name(f".{files.output.name}.{os.getpid()}.restore")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        os.link(files.kept, tmp)
    except OSError:
        import shutil

        shutil.copyfile(files.kept, tmp)
    os.replace(tmp, files.output)
    return {**prov, "kept_from_attempt": finished[-1]["attempt"]}


# ------------------------------------------------------------------------------------------ the attempt
@contextlib.contextmanager
def attempt_log(files: JobFiles, attempt: Attempt) -> Iterator[Path]:
    """Send this process's stdout and stderr to the attempt's own log, and make the rule's log a hard link
    to it (Snakemake deletes the rule's log before every attempt; the attempt logs stay)."""
    path = files.attempt_log(attempt)
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    saved = os.dup(1), os.dup(2)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        with contextlib.suppress(FileNotFoundError):
            files.log.unlink()
        try:
            os.link(path, files.log)
        except OSError:
            os.symlink(path.name, files.log)
        yield path
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
