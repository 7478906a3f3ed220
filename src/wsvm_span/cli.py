"""``wsvm-span``: the command line of the study workflow (every Snakemake rule calls one subcommand).

Subcommands:
  check-config   validate a config file (schema + semantic checks); print what it plans
  init-tracking  create the MLflow store and the study's experiments (once, before the fan-out)
  run-chunk      run one grid job (a chunk of models) and write its parquet rows atomically
  collect        concatenate an experiment's chunk files into results/<experiment>/rows.parquet
  table          build one table (CSV, Markdown, LaTeX) from rows files
  figure         draw one figure (PNG and PDF) from rows files
  summary        log tables and figures as artifacts of the study's MLflow summary run
"""

from __future__ import annotations

import argparse
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
    from .study import config as sc

    cfg = sc.load_config(args.config, schema=args.schema)
    jobs = sc.plan_jobs(cfg)
    summary = {
        "config": str(args.config),
        "config_hash": sc.config_hash(cfg),
        "experiments": {},
        "jobs": len(jobs),
        "models": sum(j.n_models for j in jobs),
    }
    for exp in sc.GRID_EXPERIMENTS:
        if exp in cfg["experiments"]:
            ej = [j for j in jobs if j.experiment == exp]
            summary["experiments"][exp] = {
                "datasets": sc.experiment_datasets(cfg, exp),
                "grid": {k: len(v) for k, v in sc.grid_axes(cfg, exp).items()},
                "models_per_replicate": sc.grid_size(sc.grid_axes(cfg, exp)),
                "replicates": {ds: len(sc.replicates(cfg, ds)) for ds in sc.experiment_datasets(cfg, exp)},
                "jobs": len(ej),
                "models": sum(j.n_models for j in ej),
            }
    if args.json:
        out = dict(summary, config_resolved=cfg) if args.show else summary
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        print(f"config OK: {args.config} (hash {summary['config_hash'][:12]})")
        for exp, s in summary["experiments"].items():
            grid = " x ".join(f"{k}({n})" for k, n in s["grid"].items())
            print(f"  {exp}: {len(s['datasets'])} data sets, grid {grid} = {s['models_per_replicate']} models; "
                  f"{s['jobs']} jobs, {s['models']} models")
            reps = ", ".join(f"{ds} {n}" for ds, n in s["replicates"].items())
            print(f"    replicates (seed x realization) per data set: {reps}")
        print(f"  total: {summary['jobs']} grid jobs, {summary['models']} models")
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
        tracker = Tracker(args.tracking_uri, args.artifact_root)
        names = [experiment_name(args.experiment_prefix, e) for e in [*args.experiments, "summary"]]
        ids = tracker.init_store(names, sqlite_wal=args.sqlite_wal)
        info = {"tracking": True, "tracking_uri": args.tracking_uri, "experiments": ids}
        log.info("MLflow store ready at %s: %s", args.tracking_uri, ids)
    if args.output:
        write_json_atomic(info, args.output)
    return 0


def cmd_run_chunk(args) -> int:
    from .study.runner import ChunkOptions, run_chunk

    spec = json.loads(Path(args.spec[1:]).read_text() if args.spec.startswith("@") else args.spec)
    options = ChunkOptions(
        data_dir=args.data_dir, data_mirror=args.data_mirror, tracking_uri=args.tracking_uri,
        experiment_prefix=args.experiment_prefix, artifact_root=args.artifact_root,
        child_runs=not args.no_child_runs, config_hash=args.config_hash,
    )
    res = run_chunk(spec, args.output, options, tracking=not args.no_tracking)
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
    from .study.schema import read_rows
    from .study.tables import build_table, write_table

    df = read_rows(args.rows)
    t = build_table(args.name, df, tie_rule=args.tie_rule, provenance=rows_provenance(args.rows))
    write_table(t, args.csv, args.md, args.tex)
    log.info("%s: %d rows -> %s", args.name, len(t.data), args.csv)
    return 0


def cmd_figure(args) -> int:
    from .study import figures
    from .study.schema import read_rows

    df = read_rows(args.rows)
    outputs = args.output
    if args.kind == "exp3":
        if not args.dataset or not args.param:
            raise SystemExit("figure exp3 needs --dataset and --param")
        figures.exp3_curves(df, args.dataset, args.param, outputs, dpi=args.dpi)
    elif args.kind == "exp6-time":
        figures.exp6_time(df, outputs, dpi=args.dpi)
    elif args.kind == "exp6-sv":
        figures.exp6_sv(df, outputs, dpi=args.dpi)
    else:
        figures.loo_vs_span_rule(df, outputs, dpi=args.dpi)
    return 0


def cmd_summary(args) -> int:
    from .study.collect import log_summary, rows_provenance, tracking_overhead, write_json_atomic

    if args.no_tracking:
        info = {"run_id": None, "tracking": False, "config_hash": args.config_hash,
                **tracking_overhead(rows_provenance(args.rows))}
    else:
        info = log_summary(args.tracking_uri, args.artifact_root, args.experiment_prefix, args.config_hash,
                           args.rows, args.artifacts)
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
    if data:
        g = p.add_argument_group("data")
        g.add_argument("--data-dir", help="local data folder")
        g.add_argument("--data-mirror", help="data mirror folder or URL")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wsvm-span", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("check-config", help="validate a config file and print what it plans")
    p.add_argument("config", nargs="?", default="config/config.yaml")
    p.add_argument("--schema", help="config schema (default: workflow/schemas/config.schema.yaml)")
    p.add_argument("--jobs", action="store_true", help="list every grid job")
    p.add_argument("--show", action="store_true", help="print the config with defaults filled in")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_check_config)

    p = sub.add_parser("init-tracking", help="create the MLflow store and experiments (once)")
    _add_runtime(p)
    p.add_argument("--experiments", nargs="*", default=["exp1", "exp2", "exp6"])
    p.add_argument("--sqlite-wal", action="store_true", help="put a SQLite store in WAL journal mode")
    p.add_argument("--output", help="flag file (JSON) written when done")
    p.set_defaults(func=cmd_init_tracking)

    p = sub.add_parser("run-chunk", help="run one grid job")
    p.add_argument("--spec", required=True, help="job spec as JSON (or @file)")
    p.add_argument("--output", help="chunk parquet file (written atomically)")
    _add_runtime(p, data=True)
    p.set_defaults(func=cmd_run_chunk)

    p = sub.add_parser("collect", help="concatenate chunk files")
    p.add_argument("--output", required=True)
    p.add_argument("chunks", nargs="+")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("table", help="build one table from rows files")
    p.add_argument("name", choices=["table2", "table3", "table4", "table5", "table6", "loo_agreement",
                                    "exp6_summary"])
    p.add_argument("--tie-rule", default="worst", choices=["worst", "best", "median"])
    p.add_argument("--csv", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--tex", required=True)
    p.add_argument("rows", nargs="+")
    p.set_defaults(func=cmd_table)

    p = sub.add_parser("figure", help="draw one figure from rows files")
    p.add_argument("kind", choices=["exp3", "exp6-time", "exp6-sv", "loo"])
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
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _setup_logging(args.verbose)
    from .study.config import ConfigError

    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"wsvm-span: config error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
