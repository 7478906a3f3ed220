# Configuration and planning: everything is derived from the config alone (no data set is loaded),
# so `snakemake -n` plans the full study quickly. No rules in this file.
import copy
import shlex
from pathlib import Path

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import update_config

from wsvm_span.study import config as sc

SCHEMA = Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"
CONDA_ENV = "../../envs/wsvm-span.yaml"


def _default_config_file():
    for base in (Path.cwd(), Path(workflow.basedir)):
        candidate = base / "config" / "config.yaml"
        if candidate.is_file():
            return candidate
    raise WorkflowError("no config given and config/config.yaml not found; pass --configfile")


# The default config is read only when no --configfile is given: Snakemake's `configfile:` directive
# would deep-merge it with the one given on the command line and mix their experiments.
if not workflow.overwrite_configfiles:
    _overrides = copy.deepcopy(config)
    config.clear()
    with open(_default_config_file(), encoding="utf-8") as _fh:
        config.update(yaml.safe_load(_fh))
    update_config(config, _overrides)

try:
    STUDY = sc.validate_config(config, schema=SCHEMA)
except sc.ConfigError as _exc:
    raise WorkflowError(f"wsvm-span: {_exc}")

RUNTIME = sc.runtime_settings(STUDY, Path.cwd())
JOBS = sc.plan_jobs(STUDY)
JOB_BY_PATH = {job.path: job for job in JOBS}
GRID_EXPS = [e for e in sc.GRID_EXPERIMENTS if e in STUDY["experiments"]]
SELECTION_EXPS = [e for e in ("exp1", "exp2") if e in STUDY["experiments"]]
EXP_OF_DATASET = {ds: e for e in SELECTION_EXPS for ds in sc.experiment_datasets(STUDY, e)}
EXP3_FIGURES = [
    (ds, param)
    for e in SELECTION_EXPS
    for ds in sc.experiment_datasets(STUDY, e)
    for param in sc.grid_axes(STUDY, e)
]


class ShellArgs:
    """Command-line arguments that do not change results (where data come from, where runs are
    logged, the config hash tag). Snakemake compares only params of builtin types when deciding
    whether a job must rerun, so editing these never invalidates finished chunks."""

    def __init__(self, args):
        self.args = list(args)

    def __str__(self):
        return " ".join(shlex.quote(str(a)) for a in self.args)


def _tracking_args():
    r = RUNTIME
    if not r.tracking_enabled:
        return ["--no-tracking", "--config-hash", r.config_hash]
    args = ["--tracking-uri", r.tracking_uri, "--experiment-prefix", r.experiment_prefix,
            "--config-hash", r.config_hash]
    if r.artifact_root:
        args += ["--artifact-root", r.artifact_root]
    return args


TRACKING_ARGS = ShellArgs(_tracking_args())
INIT_ARGS = ShellArgs(_tracking_args() + (["--sqlite-wal"] if RUNTIME.sqlite_wal else []))
CHUNK_ARGS = ShellArgs(RUNTIME.cli_args())


def job_of(wildcards):
    path = sc.chunk_path(wildcards.experiment, wildcards.dataset, wildcards.weighting, int(wildcards.chunk))
    try:
        return JOB_BY_PATH[path]
    except KeyError:
        raise WorkflowError(f"{path} is not a grid job of this config")


def chunk_files(experiment):
    return [job.path for job in JOBS if job.experiment == experiment]


def rows_file(experiment):
    return f"results/{experiment}/rows.parquet"


def table_names():
    names = []
    if "exp1" in STUDY["experiments"]:
        names.append("table2")
    if "exp2" in STUDY["experiments"]:
        names.append("table3")
    if SELECTION_EXPS:
        names += ["table4", "table5", "table6", "loo_agreement"]
    if "exp6" in STUDY["experiments"]:
        names.append("exp6_summary")
    return names


def table_rows(wildcards):
    from wsvm_span.study.tables import TABLES

    return [rows_file(e) for e in TABLES[wildcards.table][1] if e in STUDY["experiments"]]


def table_files():
    return [f"results/tables/{t}.{ext}" for t in table_names() for ext in ("csv", "md", "tex")]


def figure_files():
    files = [f"results/figures/exp3_{ds}_{param}.{ext}" for ds, param in EXP3_FIGURES for ext in ("png", "pdf")]
    if SELECTION_EXPS:
        files += [f"results/figures/loo_vs_span_rule.{ext}" for ext in ("png", "pdf")]
    if "exp6" in STUDY["experiments"]:
        files += [f"results/figures/exp6_{kind}.{ext}" for kind in ("time", "sv") for ext in ("png", "pdf")]
    return files


def final_targets():
    return [*table_files(), *figure_files(), "results/mlflow-summary.json"]


def _alternatives(names):
    return "|".join(sorted(names, key=len, reverse=True)) or "(?!)"


wildcard_constraints:
    experiment=_alternatives(GRID_EXPS),
    weighting="class|sigmoid",
    chunk=r"\d+",
    dataset=r"[A-Za-z0-9_]+",
    table=_alternatives(["table2", "table3", "table4", "table5", "table6", "loo_agreement", "exp6_summary"]),
