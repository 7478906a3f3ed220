"""Helpers (no tests) shared by the workflow tests: the venv's snakemake / wsvm-span as subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SNAKEMAKE = BIN / "snakemake"
WSVM = BIN / "wsvm-span"


def data_mirror() -> Path | None:
    """The study's data mirror: $WSVM_DATA_MIRROR, else ../shared/data beside the repository."""
    env = os.environ.get("WSVM_DATA_MIRROR")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    return path if path.is_dir() else None


def workflow_env(pycache: Path | None = None) -> dict[str, str]:
    """Environment for workflow subprocesses: the venv's tools first on PATH, no inherited tracking URI,
    and no tracking password (a job reads it from the file that ``WSVM_MLFLOW_CREDENTIALS`` names).

    Where the environment forbids writing bytecode (PYTHONDONTWRITEBYTECODE), each of the workflow's
    ~30 Python processes would recompile MLflow, scikit-learn, pandas... from source; with a bytecode
    cache outside the source tree (PYTHONPYCACHEPREFIX) only the first one does."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    for key in ("MLFLOW_TRACKING_URI", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
        env.pop(key, None)
    env.pop("WSVM_CONFIG_SCHEMA", None)
    if pycache is not None and env.get("PYTHONDONTWRITEBYTECODE"):
        env.pop("PYTHONDONTWRITEBYTECODE")
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def run(cmd, cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def snakemake(args, workdir: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    return run([SNAKEMAKE, "--snakefile", REPO / "Snakefile", "--directory", workdir, *args], workdir, env,
               timeout)


def explain(res: subprocess.CompletedProcess) -> str:
    return f"rc={res.returncode}\n--- stdout ---\n{res.stdout[-6000:]}\n--- stderr ---\n{res.stderr[-6000:]}"
