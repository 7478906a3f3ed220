"""`make run`'s wrapper (`wsvm-span run`, study/local_run.py) with a real Snakemake on a small workflow: a run
killed with SIGKILL leaves Snakemake's lock behind and the next run clears it and finishes; a second run
beside a live one is refused and names it; a Snakemake started by hand is not mistaken for a stale lock; the
terminal's log is short while the log file has every line."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from wsvm_span.study.local_run import SNAKEMAKE_LOCKS, TERMINAL_LINE_CHARS, TerminalFilter

# a job sleeps until the test lets it go (a file appears), so that a kill lands mid-run, deterministically
SNAKEFILE = textwrap.dedent("""
    rule all:
        input: expand("out/{i}.txt", i=range(3))

    rule step:
        output: "out/{i}.txt"
        params: long="x" * 500
        shell: "while [ ! -e go ]; do sleep 0.1; done; echo {wildcards.i} {params.long} > {output}"
""")
WAIT_S = 60


def _start(workdir: Path) -> subprocess.Popen:
    code = ("import sys; from pathlib import Path; from wsvm_span.study.local_run import run_workflow; "
            "sys.exit(run_workflow(Path('.'), ['--cores', '1', '--snakefile', 'Snakefile']))")
    return subprocess.Popen([sys.executable, "-c", code], cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _job_running(workdir: Path) -> bool:
    return (workdir / ".snakemake" / "incomplete").is_dir() and any((workdir / ".snakemake" / "incomplete").iterdir())


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    return tmp_path


def test_a_killed_run_leaves_a_stale_lock_that_the_next_run_clears(workdir):
    first = _start(workdir)
    _wait_for(lambda: _job_running(workdir), "the first job to start")
    os.killpg(first.pid, signal.SIGKILL)  # the whole group: wrapper, Snakemake, the job
    first.wait(timeout=WAIT_S)
    assert any((workdir / SNAKEMAKE_LOCKS).iterdir()), "a SIGKILLed Snakemake leaves its lock"

    (workdir / "go").touch()
    second = _start(workdir)
    out, _ = second.communicate(timeout=WAIT_S * 3)
    assert second.returncode == 0, out
    assert "no longer alive" in out and "removing it" in out
    assert sorted(p.name for p in (workdir / "out").iterdir()) == ["0.txt", "1.txt", "2.txt"]
    locks = workdir / SNAKEMAKE_LOCKS
    assert not locks.is_dir() or not any(locks.iterdir())


def test_a_second_run_beside_a_live_one_is_refused_and_names_it(workdir):
    first = _start(workdir)
    try:
        _wait_for(lambda: _job_running(workdir), "the first job to start")
        second = _start(workdir)
        out, _ = second.communicate(timeout=WAIT_S)
        assert second.returncode == 1
        assert "another run of the workflow is running" in out and f"pid {first.pid}" in out
        assert first.poll() is None, "the live run is left alone"
    finally:
        (workdir / "go").touch()
        out, _ = first.communicate(timeout=WAIT_S * 3)
    assert first.returncode == 0, out


def test_a_snakemake_started_by_hand_is_not_taken_for_a_stale_lock(workdir):
    by_hand = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1"], cwd=workdir,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_for(lambda: _job_running(workdir), "the hand-started job")
        run = _start(workdir)
        out, _ = run.communicate(timeout=WAIT_S)
        assert run.returncode == 1
        assert "outside `make run`" in out and str(by_hand.pid) in out
    finally:
        (workdir / "go").touch()
        by_hand.wait(timeout=WAIT_S * 3)
    assert by_hand.returncode == 0


def test_the_terminal_gets_a_short_log_and_the_file_all_of_it(workdir):
    (workdir / "go").touch()
    run = _start(workdir)
    out, _ = run.communicate(timeout=WAIT_S * 3)
    assert run.returncode == 0, out
    [log_file] = (workdir / "results" / "logs").glob("run-*.log")
    whole = log_file.read_text()
    assert str(log_file) in out
    assert "reason:" in whole and "reason:" not in out
    assert re.search(r"^\d\d:\d\d:\d\d step: i=1$", out, re.M) and "4 of 4 steps (100%) done" in out
    snakemakes = [line for line in out.splitlines() if not line.startswith("wsvm-span run:")]
    assert max(map(len, snakemakes)) <= TERMINAL_LINE_CHARS
    assert len(out.splitlines()) < len(whole.splitlines())


def test_terminal_filter_makes_a_job_one_line_keeps_errors_whole_and_cuts_long_lines():
    keep = TerminalFilter(width=60)
    job = ["[Sat Nov 28 18:34:34 2026]", "localrule grid_chunk:", "    input: " + "results/x.parquet, " * 100,
           "    output: results/y.parquet", "    jobid: 44", "    reason: Missing output files: results/y.parquet",
           "    wildcards: experiment=exp1, dataset=banana", "    resources: tmpdir=/tmp", "Select jobs to execute...",
           '{"models": 30, "wall_s": 4.456}', "Finished jobid: 44 (Rule: grid_chunk)", "1 of 98 steps (1%) done", ""]
    assert [shown for line in job for shown in keep(line)] == [
        "18:34:34 grid_chunk: experiment=exp1, dataset=banana", "1 of 98 steps (1%) done"]
    # a rule without wildcards is shown when the next line comes
    assert keep("[Sat Nov 28 18:40:01 2026]") == [] and keep("localrule all:") == []
    assert keep("    jobid: 0") == [] and keep("98 of 98 steps (100%) done") == ["18:40:01 all",
                                                                             "98 of 98 steps (100%) done"]
    cut = keep("x" * 500)
    assert len(cut[0]) <= 60 and "500 characters" in cut[0]
    assert keep("Error in rule grid_chunk:") == ["Error in rule grid_chunk:"]
    # inside an error block even the job's attributes are kept: they name the log to read
    assert keep("    log: results/logs/chunk.log (check log file(s) for error details)") != []
    assert keep("") == []
    assert keep("    reason: after the block") == []


def test_the_command_passes_its_options_and_snakemakes_after_the_double_dash(workdir):
    (workdir / "go").touch()
    (workdir / "study.yaml").write_text("{}\n")
    res = subprocess.run([sys.executable, "-m", "wsvm_span", "run", "study.yaml", "--cores", "1", "--", "--dry-run"],
                         cwd=workdir, capture_output=True, text=True, timeout=WAIT_S * 3)
    assert res.returncode == 0, res.stdout + res.stderr
    [log_file] = (workdir / "results" / "logs").glob("run-*.log")
    assert re.search(r"Command: .*snakemake\S* --cores 1 --configfile study.yaml --dry-run --rerun-incomplete$",
                     log_file.read_text(), re.M)
    assert not (workdir / "out").exists(), "a dry run computes nothing"
    missing = subprocess.run([sys.executable, "-m", "wsvm_span", "run", "nowhere.yaml"], cwd=workdir,
                             capture_output=True, text=True, timeout=WAIT_S)
    assert missing.returncode == 1 and "no config file nowhere.yaml" in missing.stderr
