# Configuration and planning: everything is derived from the config alone (no data set is loaded),
# so `snakemake -n` plans the full study quickly. No rules in this file.
import copy
import shlex
import sys
from pathlib import Path

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import update_config
from snakemake_interface_executor_plugins.settings import DeploymentMethod

from wsvm_span.study import attempts
from wsvm_span.study import catalog
from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study import scheduling
from wsvm_span.study import tables as study_tables

CONDA_ENV = "../../envs/wsvm-span.yaml"


def _wsvm_span_command():
    """The project's command as the rules call it, with the Python that runs this Snakefile (it imported
    wsvm_span above, so it has the package), never a `wsvm-span` looked up on the caller's PATH, which
    holds the project's environment only after `source .venv/bin/activate` (a SLURM job inherits the
    submitting shell's PATH). Under --use-conda the rules run in envs/wsvm-span.yaml, whose own
    `wsvm-span` (installed by its post-deploy script) is the one to call."""
    if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method:
        return ShellArgs(["wsvm-span"])
    return ShellArgs([sys.executable, "-m", "wsvm_span"])

# One id per snakemake invocation, handed to every job (also inside cluster jobs: `envvars:` in the
# Snakefile): a job's attempts are told apart from those of an earlier invocation (study.attempts).
WORKFLOW_RUN = attempts.workflow_run_id()


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
    STUDY = sc.validate_config(config)  # the package's schema (wsvm_span/study/config/config.schema.yaml)
except sc.ConfigError as _exc:
    raise WorkflowError(f"wsvm-span: {_exc}")

RUNTIME = sc.runtime_settings(STUDY, Path.cwd())
JOBS = ex.plan_jobs(STUDY)
JOB_BY_PATH = {job.path: job for job in JOBS}
GRID_EXPS = [e for e in catalog.grid_experiments() if e in STUDY["experiments"]]
TABLES = catalog.tables_for(GRID_EXPS)


def _figure_targets():
    """{file stem: (figure, data set, hyperparameter)} of every figure the config draws."""
    out = {}
    for fig in catalog.figures_for(GRID_EXPS):
        if not fig.per_hyperparameter:
            out[fig.stem] = (fig, None, None)
            continue
        for e in fig.reads:
            if e not in STUDY["experiments"]:
                continue
            for ds in ex.experiment_datasets(STUDY, e):
                for param in sc.grid_axes(STUDY, e):
                    out[fig.stem.format(dataset=ds, param=param)] = (fig, ds, param)
    return out


FIGURE_TARGETS = _figure_targets()


class ShellArgs:
    """Command-line arguments that do not change results (the command itself, where data come from,
    where runs are logged, the config hash tag). Snakemake compares only params of builtin types when deciding
    whether a job must rerun, so editing these never invalidates finished chunks."""

    def __init__(self, args):
        self.args = list(args)

    def __str__(self):
        return " ".join(shlex.quote(str(a)) for a in self.args)


WSVM_SPAN = _wsvm_span_command()
TRACKING_ARGS = ShellArgs(RUNTIME.cli_args(data=False))
CHUNK_ARGS = ShellArgs(RUNTIME.cli_args())


def job_of(wildcards):
    path = ex.chunk_path(wildcards.experiment, wildcards.dataset, wildcards.variant, int(wildcards.chunk))
    try:
        return JOB_BY_PATH[path]
    except KeyError:
        raise WorkflowError(f"{path} is not a grid job of this config")


def job_limits(wildcards, attempt):
    """The job's scheduler limits for this attempt: doubled for every earlier attempt of this workflow
    run that bigger limits can help (killed for memory or time, tracking store unreachable), never for
    one that failed with an error (wsvm_span.study.attempts.limits_attempt)."""
    job = job_of(wildcards)
    return scheduling.job_limits(STUDY, job, attempts.limits_attempt(attempts.JobFiles.of(job), attempt, WORKFLOW_RUN))


def job_group(wildcards):
    """pack<n> for a job too small for a cluster job of its own (a local run ignores groups)."""
    return scheduling.job_group(job_of(wildcards))


def chunk_files(experiment):
    return [job.path for job in JOBS if job.experiment == experiment]


def rows_file(experiment):
    return f"results/{experiment}/rows.parquet"


def table_rows(wildcards):
    return [rows_file(e) for e in catalog.table(wildcards.table).reads if e in STUDY["experiments"]]


def table_caption(wildcards):
    """The report's caption: the catalog's one caption of the table (the one its files carry) under its headline,
    then the catalog's notes of the data sets the config runs in the experiments it reads (as under its files)."""
    t = catalog.table(wildcards.table)
    datasets = {ds for e in t.reads if e in STUDY["experiments"] for ds in ex.experiment_datasets(STUDY, e)}
    return "\n\n".join([f"**{t.headline}.** {study_tables.caption(t, STUDY['tie_rule'])}", *t.notes_for(datasets)])


def figure_rows(wildcards):
    fig = FIGURE_TARGETS[wildcards.figure][0]
    return [rows_file(e) for e in fig.reads if e in STUDY["experiments"]]


def figure_params(wildcards):
    """The figure's drawer and data set / hyperparameter arguments, and its report caption."""
    fig, dataset, param = FIGURE_TARGETS[wildcards.figure]
    args = f"--dataset {dataset} --param {param}" if fig.per_hyperparameter else ""
    return {"drawer": fig.drawer, "args": args, "caption": fig.caption.format(dataset=dataset, param=param)}


def table_files():
    return [f"results/tables/{t.name}.{ext}" for t in TABLES for ext in ("csv", "md", "tex")]


def figure_files():
    return [f"results/figures/{stem}.{ext}" for stem in FIGURE_TARGETS for ext in ("png", "pdf")]


def final_targets():
    return [*table_files(), *figure_files(), "results/mlflow-summary.json"]


def _alternatives(names):
    return "|".join(sorted(names, key=len, reverse=True)) or "(?!)"


wildcard_constraints:
    experiment=_alternatives(GRID_EXPS),
    variant=_alternatives({j.variant for j in JOBS}),
    chunk=r"\d+",
    dataset=r"[A-Za-z0-9_]+",
    table=_alternatives([t.name for t in TABLES]),
    figure=_alternatives(FIGURE_TARGETS),
