"""``wsvm-span``: the command line of the study workflow (every Snakemake rule calls one subcommand).

Subcommands:
  check-config   validate a config file (schema + semantic checks); print what it plans
  init-tracking  create the MLflow store and the study's experiments (optional: jobs create them too)
  run-chunk      run one grid job (a chunk of models) and write its parquet rows atomically
  collect        concatenate an experiment's chunk files into results/<experiment>/rows.parquet
  table          build one table (CSV, Markdown, LaTeX) from rows files
  figure         draw one figure (PNG and PDF) from rows files
  summary        log tables and figures as artifacts of the study's MLflow summary run
  status         how far a study is: jobs and models done, time spent, time left
  calibrate-cost fit the cost model behind `check-config --estimate` to finished results
  export-results copy a finished study's tables and figures, with their provenance, to a kept folder
  select         choose C and gamma for a data file by the span-rule (LIBSVM grid.py's job)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from pathlib import Path

__all__ = ["main"]

log = logging.getLogger("wsvm_span.cli")


def _setup_logging(verbose: bool = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for noisy in ("alembic", "mlflow.store.db.utils", "matplotlib", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


# ----------------------------------------------------------------------------------- subcommands
def cmd_check_config(args) -> int:
    from .study import catalog
    from .study import config as sc
    from .study.experiments import experiment_datasets, plan_jobs

    cfg = sc.load_config(args.config, schema=args.schema)
    jobs = plan_jobs(cfg)
    summary = {
        "config": str(args.config),
        "config_hash": sc.config_hash(cfg),
        "experiments": {},
        "jobs": len(jobs),
        "models": sum(j.n_models for j in jobs),
    }
    for exp in catalog.grid_experiments():
        if exp in cfg["experiments"]:
            ej = [j for j in jobs if j.experiment == exp]
            datasets = experiment_datasets(cfg, exp)
            summary["experiments"][exp] = {
                "kind": catalog.EXPERIMENTS[exp].kind,
                "datasets": datasets,
                # as the experiment's kind plans them (a weight grid: the config's seeds and realizations;
                # exp8: its own block's subsample seeds)
                "replicates": {ds: len({(j.seed, j.realization) for j in ej if j.dataset == ds}) for ds in datasets},
                "jobs": len(ej),
                "models": sum(j.n_models for j in ej),
            }
            if catalog.EXPERIMENTS[exp].weighting:
                axes = sc.grid_axes(cfg, exp)
                summary["experiments"][exp].update(grid={k: len(v) for k, v in axes.items()},
                                                   models_per_replicate=sc.grid_size(axes))
    if args.estimate:
        from .study.config.estimate import estimate, load_calibration

        cal = load_calibration(args.calibration)
        summary["estimate"] = estimate(jobs, cal, cores=args.cores).as_dict()
        summary["estimate"]["calibration"] = cal.source
    if args.json:
        out = dict(summary, config_resolved=cfg) if args.show else summary
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        print(f"config OK: {args.config} (hash {summary['config_hash'][:12]})")
        for exp, s in summary["experiments"].items():
            grid = ""
            if "grid" in s:
                grid = " x ".join(f"{k}({n})" for k, n in s["grid"].items())
                grid = f", grid {grid} = {s['models_per_replicate']} models"
            print(f"  {exp}: {len(s['datasets'])} data sets{grid}; {s['jobs']} jobs, {s['models']} rows")
            reps = ", ".join(f"{ds} {n}" for ds, n in s["replicates"].items())
            print(f"    replicates (seed x realization) per data set: {reps}")
        print(f"  total: {summary['jobs']} grid jobs, {summary['models']} models")
        if args.estimate:
            e = summary["estimate"]
            per = ", ".join(f"{k} {v:.2f}" for k, v in e["per_experiment_cpu_hours"].items())
            print(f"  estimate: {e['cpu_hours']:.2f} CPU-hours ({per}); about {e['wall_hours']:.2f} h on "
                  f"{e['cores']} cores (longest job {e['longest_job_hours']:.2f} h); peak memory "
                  f"{e['peak_job_memory_mb'] / 1024:.1f} GiB per job, {e['peak_memory_mb'] / 1024:.1f} GiB for "
                  f"{e['cores']} jobs at once")
            if e["training_cpu_hours"] > 0:
                fits = ", ".join(f"{k} {v:.2f}" for k, v in e["per_experiment_training_cpu_hours"].items())
                print(f"    of which training the models and their CV folds, in the experiments priced per model: "
                      f"{e['training_cpu_hours']:.2f} CPU-hours ({fits}): the solver's own work, at least "
                      f"{e['training_cpu_hours'] / e['cores']:.2f} h on {e['cores']} cores whatever the overheads")
            print(f"    measured data sets: {', '.join(e['measured_datasets']) or 'none'}; from their family "
                  f"at other training sizes: {', '.join(e['family_datasets']) or 'none'}; from the training size "
                  f"alone: {', '.join(e['extrapolated_datasets']) or 'none'}")
        if args.jobs:
            for j in jobs:
                print(f"  {j.path}\t{j.slot}\tmodels {j.model_start}..{j.model_stop - 1}")
        if args.show:
            import yaml

            print(yaml.safe_dump(cfg, sort_keys=False))
    return 0


def cmd_init_tracking(args) -> int:
    from .study.collect import write_json_atomic
    from .study.tracking import Tracker, experiment_name

    info = {"tracking": False}
    if not args.no_tracking:
        tracker = Tracker(args.tracking_uri, args.artifact_root, sqlite_wal=not args.no_sqlite_wal)
        names = [experiment_name(args.experiment_prefix, e) for e in [*args.experiments, "summary"]]
        ids = tracker.init_store(names)
        info = {"tracking": True, "tracking_uri": args.tracking_uri, "experiments": ids}
        log.info("MLflow store ready at %s: %s", args.tracking_uri, ids)
    if args.output:
        write_json_atomic(info, args.output)
    return 0


def cmd_run_chunk(args) -> int:
    from .study.experiments import job_from_json
    from .study.runner import run_chunk

    job = job_from_json(Path(args.spec[1:]).read_text() if args.spec.startswith("@") else args.spec)
    res = run_chunk(job, args.output, dataclasses.replace(_runtime(args), memory_mb=args.mem_mb))
    print(json.dumps({"models": res.n_models, "wall_s": round(res.wall_s, 3), "compute_s": round(res.compute_s, 3),
                      "tracking_s": round(res.tracking_s, 3), "tracking_share": round(res.tracking_share, 4),
                      "parent_run_id": res.parent_run_id}))
    return 0


def cmd_collect(args) -> int:
    from .study.collect import collect_chunks

    table = collect_chunks(args.chunks, args.output)
    log.info("collected %d rows from %d chunk files into %s", table.num_rows, len(args.chunks), args.output)
    return 0


def cmd_table(args) -> int:
    from .study.collect import rows_provenance
    from .study.results_schema import read_rows
    from .study.tables import build_table, write_table

    df = read_rows(args.rows)
    t = build_table(args.name, df, tie_rule=args.tie_rule, provenance=rows_provenance(args.rows))
    write_table(t, args.csv, args.md, args.tex)
    log.info("%s: %d rows -> %s", args.name, len(t.data), args.csv)
    return 0


def cmd_figure(args) -> int:
    from .study import catalog
    from .study.figures import DRAWINGS
    from .study.results_schema import read_rows

    if catalog.figure_kind(args.kind).per_hyperparameter and not (args.dataset and args.param):
        raise SystemExit(f"figure {args.kind} needs --dataset and --param")
    DRAWINGS[args.kind](read_rows(args.rows), args.output, args.dpi, dataset=args.dataset, param=args.param)
    return 0


def cmd_calibrate_cost(args) -> int:
    from .study.collect import write_json_atomic
    from .study.config.estimate import calibrate

    from .study.results_schema import SchemaError

    try:
        cal = calibrate(args.rows, exclude=args.exclude)
    except (OSError, SchemaError, ValueError) as exc:
        print(f"wsvm-span calibrate-cost: {exc}", file=sys.stderr)
        return 2
    write_json_atomic(cal.as_dict(), args.output)
    log.info("cost calibration from %d models of %d data sets -> %s", cal.source["models"], len(cal.datasets),
             args.output)
    return 0


def cmd_export_results(args) -> int:
    from .study.export import export_results

    record = export_results(args.config, args.results, args.output)
    log.info("exported %d jobs of %s to %s", len(record["jobs"]), args.config, args.output)
    return 0


def cmd_status(args) -> int:
    from .study.status import study_status

    report = study_status(args.config, results=args.results, cores=args.cores, schema=args.schema)
    print(json.dumps(report.as_dict(), indent=2, sort_keys=True) if args.json else report.text())
    return 0


def cmd_summary(args) -> int:
    from .study.collect import log_summary, rows_provenance, tracking_overhead, write_json_atomic

    if args.no_tracking:
        info = {"run_id": None, "tracking": False, "config_hash": args.config_hash,
                **tracking_overhead(rows_provenance(args.rows))}
    else:
        info = log_summary(_runtime(args), args.rows, args.artifacts)
    write_json_atomic(info, args.output)
    return 0


# ------------------------------------------------------------------------------------------ parser
def _add_runtime(p: argparse.ArgumentParser, data: bool = False) -> None:
    g = p.add_argument_group("tracking")
    g.add_argument("--tracking-uri", help="MLflow tracking URI")
    g.add_argument("--artifact-root", help="artifact folder for new experiments of a local store")
    g.add_argument("--experiment-prefix", default="wsvm-span", help="MLflow experiments are <prefix>/<experiment>")
    g.add_argument("--config-hash", default="unknown", help="sha256 of the validated config (a tag)")
    g.add_argument("--no-tracking", action="store_true", help="do not log to MLflow")
    g.add_argument("--no-child-runs", action="store_true", help="log only the job's parent run")
    g.add_argument("--no-sqlite-wal", action="store_true",
                   help="create a new SQLite store in rollback-journal mode (a store on a network file system)")
    if data:
        g = p.add_argument_group("data")
        g.add_argument("--data-dir", help="local data folder")
        g.add_argument("--data-mirror", help="data mirror folder or URL")


def _runtime(args):
    """The run-time settings the Snakefile passed as arguments (``RuntimeSettings.cli_args``)."""
    from .study.config import RuntimeSettings

    return RuntimeSettings(
        tracking_enabled=not args.no_tracking and bool(args.tracking_uri), tracking_uri=args.tracking_uri,
        experiment_prefix=args.experiment_prefix, artifact_root=args.artifact_root,
        child_runs=not args.no_child_runs, sqlite_wal=not args.no_sqlite_wal, data_dir=getattr(args, "data_dir", None),
        data_mirror=getattr(args, "data_mirror", None), config_hash=args.config_hash,
    )


def build_parser() -> argparse.ArgumentParser:
    from .study import catalog
    from .tie_rules import TIE_RULES

    parser = argparse.ArgumentParser(prog="wsvm-span", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("check-config", help="validate a config file and print what it plans")
    p.add_argument("config", nargs="?", default="config/config.yaml")
    p.add_argument("--schema", help="config schema (default: the one shipped with wsvm-span)")
    p.add_argument("--jobs", action="store_true", help="list every grid job")
    p.add_argument("--show", action="store_true", help="print the config with defaults filled in")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--estimate", action="store_true",
                   help="project CPU-hours, wall time and peak memory from the calibrated cost model")
    p.add_argument("--cores", type=int, default=2, help="cores for the wall-time projection (default 2)")
    p.add_argument("--calibration", help="cost calibration JSON (default: the one shipped with wsvm-span)")
    p.set_defaults(func=cmd_check_config)

    p = sub.add_parser("init-tracking", help="create the MLflow store and experiments (optional)")
    _add_runtime(p)
    p.add_argument("--experiments", nargs="*", default=list(catalog.grid_experiments()))
    p.add_argument("--output", help="flag file (JSON) written when done")
    p.set_defaults(func=cmd_init_tracking)

    p = sub.add_parser("run-chunk", help="run one grid job")
    p.add_argument("--spec", required=True, help="job spec as JSON (or @file)")
    p.add_argument("--output", help="chunk parquet file (written atomically)")
    p.add_argument("--mem-mb", type=int, help="the job's memory limit (MB): CV fold kernels are cached if they fit")
    _add_runtime(p, data=True)
    p.set_defaults(func=cmd_run_chunk)

    p = sub.add_parser("collect", help="concatenate chunk files")
    p.add_argument("--output", required=True)
    p.add_argument("chunks", nargs="+")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("table", help="build one table from rows files")
    p.add_argument("name", choices=[t.name for t in catalog.TABLES])
    p.add_argument("--tie-rule", default="worst", choices=list(TIE_RULES))
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--tex", required=True)
    p.add_argument("rows", nargs="+")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("figure", help="draw one figure from rows files")
    p.add_argument("kind", choices=[f.kind for f in catalog.FIGURES])
    p.add_argument("--dataset")
    p.add_argument("--param")
    p.add_argument("--dpi", type=int, default=150)
    p.add_argument("--output", nargs="+", required=True, help="files to write (.png, .pdf)")
    p.add_argument("--rows", nargs="+", required=True)
    p.set_defaults(func=cmd_figure)

    p = sub.add_parser("summary", help="log tables and figures to the MLflow summary run")
    _add_runtime(p)
    p.add_argument("--output", required=True, help="JSON file with the summary run id")
    p.add_argument("--rows", nargs="*", default=[])
    p.add_argument("--artifacts", nargs="*", default=[])
    p.set_defaults(func=cmd_summary)

    p = sub.add_parser("calibrate-cost", help="fit the cost model of check-config --estimate to finished results")
    p.add_argument("--output", required=True, help="calibration JSON to write")
    p.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                   help="leave out the data sets matching this shell pattern (e.g. 'ringnorm_*_l4096': a hold-out "
                        "check); repeatable")
    p.add_argument("rows", nargs="+", help="rows files of finished experiments (results/<experiment>/rows.parquet)")
    p.set_defaults(func=cmd_calibrate_cost)

    p = sub.add_parser("export-results", help="copy a finished study's tables and figures with their provenance")
    p.add_argument("config")
    p.add_argument("--results", default="results")
    p.add_argument("--output", required=True, help="folder to write (e.g. reproduced/<name>)")
    p.set_defaults(func=cmd_export_results)

    p = sub.add_parser("status", help="summarise a running or finished study from its results folder")
    p.add_argument("config", nargs="?", default="config/config.yaml")
    p.add_argument("--results", default="results", help="the study's results folder")
    p.add_argument("--cores", type=int, default=None, help="cores for the wall-time estimate (default: all)")
    p.add_argument("--schema", help="config schema (default: the one shipped with wsvm-span)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_status)

    from .model_selection.select import configure_parser

    configure_parser(sub.add_parser("select", help="choose C and gamma for a data file by the span-rule"))
    return parser


def main(argv: list[str] | None = None) -> int:
    """The `wsvm-span` command: parse ``argv`` (default: the process arguments), run the subcommand and return
    its exit status (2 for a config error, or a study command without the study extra).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    _setup_logging(args.verbose)
    from .study.config import ConfigError
    from .utils.environment import STUDY_EXTRA, STUDY_EXTRA_MODULES

    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"wsvm-span: config error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        # a core install (pip install wsvm-span) has the library and `select`; the workflow's commands
        # need the study extra
        if (exc.name or "").partition(".")[0] not in STUDY_EXTRA_MODULES:
            raise
        print(f"wsvm-span {args.command}: needs {exc.name}, part of the study extra: {STUDY_EXTRA}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
