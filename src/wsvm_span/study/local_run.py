"""The workflow on this machine (``make run``, ``wsvm-span run``): one run per folder, a killed run's
leftovers cleared, a log a person can read.

Snakemake locks the outputs of a run under ``.snakemake/locks``. A run killed with SIGKILL (or by a lost
terminal) leaves that lock behind, and the next run stops with a LockException whose hint, ``snakemake
--unlock``, is not on a login shell's PATH (it lives in ``.venv/bin``). Snakemake cannot tell a stale lock
from a live run; this module can, because every run it starts holds an exclusive ``flock`` on
:data:`RUN_LOCK` for its whole life. The kernel drops that lock with the process, however it ends, so:

- the lock is free: no run of ours is alive, and a Snakemake lock left in the folder is stale unless a
  Snakemake started by hand is running here (looked up in ``/proc`` where there is one); the stale lock is
  removed with ``snakemake --unlock``, saying so, and the run goes on, rerunning the killed jobs
  (``--rerun-incomplete``: their outputs are marked incomplete);
- the lock is held: another run is alive; it is named (pid, start, command) and nothing is touched.

Snakemake prints, for every job, its inputs, outputs and the reason it runs, which for an aggregation step
lists every chunk file (lines of thousands of characters, well over a thousand lines for the main job). The
terminal gets one line per job (time, rule, wildcards), the progress lines, warnings and errors in full;
the whole output goes to ``results/logs/run-<start>.log``, named at the start and at the end.
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Iterable, Iterator, Sequence

__all__ = ["RUN_LOCK", "RunAlreadyActive", "TerminalFilter", "acquire_run_lock", "run_workflow",
           "snakemake_processes_in"]

RUN_LOCK = Path(".snakemake") / "wsvm-run.lock"
SNAKEMAKE_LOCKS = Path(".snakemake") / "locks"
LOG_DIR = Path("results") / "logs"
# a kept line is cut here on the terminal (the log file has it whole)
TERMINAL_LINE_CHARS = 160
# what Snakemake prints under each job and the terminal does without: long file lists and the scheduler's
# bookkeeping (the wildcards are kept, joined to the job's line: they say which data set and chunk it is)
_DETAIL_LINE = re.compile(r"^\s+(input|output|log|benchmark|reason|resources|jobid|threads|priority):")
_WILDCARDS = re.compile(r"^\s+wildcards: (.*)$")
_TIMESTAMP = re.compile(r"^\[\w{3} \w{3} +\d+ (\d\d:\d\d:\d\d) \d{4}\]$")
_JOB = re.compile(r"^(?:local)?rule (\S+):$")
# scheduler chatter, and each job's JSON summary on stdout (in the log file)
_DROPPED = re.compile(r"^(Select jobs to execute\.\.\.|Execute \d+ jobs\.\.\.|Finished jobid: .*|\{.*\}|\s*)$")
# an error block (Snakemake's "Error in rule ...", a traceback) is kept whole up to the next blank line
_ERROR_START = re.compile(r"^(Error in rule|Traceback|RuleException|WorkflowError|\w+Exception|\w+Error\b)")


class RunAlreadyActive(RuntimeError):
    """Another run of the workflow is alive in this folder."""


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "a process that has not written its name yet"
    except OSError:
        return "an unknown process"


def acquire_run_lock(workdir: Path, command: Sequence[str]) -> IO[str]:
    """Hold :data:`RUN_LOCK` of ``workdir`` for as long as the returned file stays open; raise
    :class:`RunAlreadyActive` naming the holder when another live process has it."""
    path = workdir / RUN_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise RunAlreadyActive(
            f"another run of the workflow is running in {workdir}: {_holder(path)}. Wait for it to end "
            f"(`.venv/bin/wsvm-span status` shows how far it is), or stop it with `kill -- -<pgid>` (the whole "
            f"process group, so that its jobs end too) and start again.") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} (process group {os.getpgrp()}), started "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S')}: {' '.join(command)}\n")
    handle.flush()
    return handle


def snakemake_processes_in(workdir: Path, exclude: Iterable[int] = ()) -> list[str]:
    """Live processes running Snakemake with ``workdir`` as their working directory ("pid: command"), read
    from /proc; empty where there is no /proc (then a Snakemake started by hand cannot be seen)."""
    found, skip, here = [], set(exclude), workdir.resolve()
    for entry in Path("/proc").glob("[0-9]*"):
        pid = int(entry.name)
        if pid in skip:
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            if not any(a.endswith(b"snakemake") or b"snakemake/__main__" in a for a in args[:3]):
                continue
            if Path(os.readlink(entry / "cwd")).resolve() != here:
                continue
        except OSError:  # ended meanwhile, or not ours to read
            continue
        found.append(f"{pid}: {b' '.join(args).decode(errors='replace').strip()}")
    return found


def clear_stale_snakemake_lock(workdir: Path, snakemake: Sequence[str], out: IO[str]) -> None:
    """With :data:`RUN_LOCK` held: remove a Snakemake lock that no live run holds (see the module docstring)."""
    locks = workdir / SNAKEMAKE_LOCKS
    if not locks.is_dir() or not any(locks.iterdir()):
        return
    live = snakemake_processes_in(workdir, exclude=[os.getpid()])
    if live:
        raise RunAlreadyActive(f"Snakemake is running in {workdir} outside `make run`: " + "; ".join(live)
                               + ". Wait for it to end or stop it, then start again.")
    print(f"wsvm-span run: a lock of an earlier run that is no longer alive (killed?) is in {locks}: "
          "removing it (snakemake --unlock); its unfinished jobs run again", file=out, flush=True)
    res = subprocess.run([*snakemake, "--unlock"], cwd=workdir, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"snakemake --unlock failed ({res.returncode}):\n{res.stdout[-2000:]}{res.stderr[-2000:]}")


class TerminalFilter:
    """Which of Snakemake's lines the terminal shows, and how (see the module docstring): a job's block of
    lines becomes one line (time, rule, wildcards); progress, warnings and anything unknown pass, cut to
    ``width``; an error block passes whole. Stateful: call it on every line, in order, then :meth:`flush`."""

    def __init__(self, width: int = TERMINAL_LINE_CHARS):
        self.width = width
        self.in_error = False
        self.time = ""
        self.job: str | None = None  # a job's line waiting for its wildcards

    def __call__(self, line: str) -> list[str]:
        line = line.rstrip("\n")
        if self.in_error:
            self.in_error = bool(line.strip())
            return [self._cut(line)] if self.in_error else []
        if _ERROR_START.match(line):
            self.in_error = True
            return self.flush() + [self._cut(line)]
        if m := _TIMESTAMP.match(line):
            self.time = m.group(1)
            return []
        if m := _JOB.match(line):
            shown = self.flush()
            self.job = f"{self.time} {m.group(1)}".strip()
            return shown
        if m := _WILDCARDS.match(line):
            shown, self.job = (f"{self.job or ''}: {m.group(1)}", None)
            return [self._cut(shown)]
        if _DETAIL_LINE.match(line) or _DROPPED.match(line):
            return []
        return self.flush() + [self._cut(line)]

    def flush(self) -> list[str]:
        """The job line still waiting for wildcards (a rule without any), if there is one."""
        shown, self.job = ([self._cut(self.job)] if self.job else []), None
        return shown

    def _cut(self, line: str) -> str:
        if len(line) <= self.width:
            return line
        tail = f" ... [{len(line):,} characters: see the log file]"
        return line[:max(self.width - len(tail), 0)] + tail


def _lines(stream: IO[bytes]) -> Iterator[str]:
    for raw in iter(stream.readline, b""):
        yield raw.decode(errors="replace")


def run_workflow(workdir: Path, snakemake_args: Sequence[str], *, python: str = sys.executable,
                 out: IO[str] = sys.stdout) -> int:
    """Run the workflow in ``workdir`` with ``snakemake_args`` (e.g. ``--cores 2 --configfile ...``) and
    return Snakemake's exit status; 1 when another run is alive (named on ``out``)."""
    workdir = workdir.resolve()
    snakemake = [python, "-m", "snakemake", *snakemake_args]
    try:
        lock = acquire_run_lock(workdir, ["wsvm-span run", *snakemake_args])
        clear_stale_snakemake_lock(workdir, snakemake, out)
    except RunAlreadyActive as exc:
        print(f"wsvm-span run: {exc}", file=out, flush=True)
        return 1
    with lock:
        log_path = workdir / LOG_DIR / f"run-{time.strftime('%Y%m%dT%H%M%S')}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        print(f"wsvm-span run: Snakemake's whole output goes to {log_path}", file=out, flush=True)
        keep = TerminalFilter()
        # --rerun-incomplete: outputs of jobs that a kill interrupted are marked incomplete; they are rerun
        proc = subprocess.Popen([*snakemake, "--rerun-incomplete"], cwd=workdir, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        # Ctrl-C reaches Snakemake too (same process group): it stops its jobs, and its last lines are kept
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        forward = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
        try:
            with open(log_path, "w", encoding="utf-8") as log_file:
                for line in _lines(proc.stdout):
                    log_file.write(line)
                    log_file.flush()
                    for shown in keep(line):
                        print(shown, file=out, flush=True)
            status = proc.wait()
            for shown in keep.flush():
                print(shown, file=out, flush=True)
        finally:
            signal.signal(signal.SIGINT, previous)
            signal.signal(signal.SIGTERM, forward)
        print(f"wsvm-span run: Snakemake ended with status {status}; its whole output: {log_path}",
              file=out, flush=True)
        return status
