"""``wsvm-span``: the command line of the study workflow (every Snakemake rule calls one subcommand).

Subcommands:
  check-config   validate a config file (schema + semantic checks); print what it plans
  init-tracking  create the MLflow store and the study's experiments (optional: jobs create them too)
  run-chunk      run one grid job (a chunk of models) and write its parquet rows atomically
  collect        concatenate an experiment's chunk files (or collected rows files) into results/<experiment>/rows.parquet
  table          build one table (CSV, Markdown, LaTeX) from rows files
  figure         draw one figure (PNG and PDF) from rows files
  summary        log tables and figures as artifacts of the study's MLflow summary run
  status         how far a study is: jobs and models done, time spent, time left
  calibrate-cost fit the cost model behind `check-config --estimate` to finished results
  export-results copy a finished study's rows, tables and figures, with their provenance, to a kept folder
  select         choose C and gamma for a data file by the span-rule (LIBSVM grid.py's job)
  ui             open the study's MLflow store in the MLflow UI on the models of a data set
  verify         rerun sampled jobs of committed parts (reproduced/<part>) and compare their rows
  run            run the workflow here (`make run`): one run per folder, a killed run's lock cleared, a short log
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import subprocess
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
    only = tuple(args.experiments) if args.experiments else None
    jobs = plan_jobs(cfg, only)
    summary = {
        "config": str(args.config),
        "config_hash": sc.config_hash(cfg),
        "experiments": {},
        "jobs": len(jobs),
        "models": sum(j.n_models for j in jobs),
    }
    for exp in only or catalog.grid_experiments():
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
        summary["estimate"] = estimate(jobs, cal, cores=args.cores, engine=args.engine).as_dict()
        summary["estimate"]["calibration"] = dict(cal.source, engine=cal.engine,
                                                  engine_ratios=[f"{engine}/{kind}" for engine, kind in cal.engines])
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
                  f"alone: {', '.join(e['extrapolated_datasets']) or 'none'}"
                  + (f"; by their job kind's own laws: {', '.join(e['own_law_datasets'])}" if e["own_law_datasets"]
                     else ""))
            _print_engine_pricing(e)
            names = {"t_train": "training", "t_cv": "CV", "t_span_bound": "span bound", "t_loo": "exact LOO",
                     "tracking": "MLflow", "setup": "set-up", "process_start": "process starts",
                     "own_pricing": "kinds priced as a whole"}
            parts = ", ".join(f"{names[k]} {v:.2f}" for k, v in e["per_part_cpu_hours"].items() if v > 0)
            print(f"    CPU-hours by part: {parts}")
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
    from .study.attempts import Attempt, JobFiles, attempt_log, slot_wait_s
    from .study.experiments import job_from_json
    from .study.runner import run_attempt, run_chunk

    spec = Path(args.spec[1:]).read_text() if args.spec.startswith("@") else args.spec
    settings = dataclasses.replace(_runtime(args), memory_mb=args.mem_mb)
    attempt = Attempt.current(args.attempt)
    if args.log is None:  # by hand: no attempt bookkeeping
        res = run_chunk(job_from_json(spec), args.output, settings, attempt=attempt)
        status = 0
    else:
        if args.output is None:
            raise SystemExit("run-chunk --log needs --output (the attempt keeps the finished chunk beside it)")
        files = JobFiles(Path(args.log), Path(args.output))
        with attempt_log(files, attempt):  # the error, too, goes to the attempt's log
            try:
                status, res = run_attempt(spec, args.output, settings, attempt, files,
                                          slot_wait_s(args.time_limit_min))
            except Exception as exc:  # noqa: BLE001 - reported here, in the log Snakemake points to
                from .study.canonical import ConfigError

                if isinstance(exc, ConfigError):
                    print(f"wsvm-span: config error: {exc}", file=sys.stderr)
                    return 2
                log.exception("run-chunk failed (%s)", files.attempt_log(attempt))
                return 1
    if res is not None:
        print(json.dumps({"models": res.n_models, "wall_s": round(res.wall_s, 3),
                          "compute_s": round(res.compute_s, 3), "tracking_s": round(res.tracking_s, 3),
                          "tracking_share": round(res.tracking_share, 4), "parent_run_id": res.parent_run_id,
                          "kept_from_attempt": res.kept_from_attempt}))
    return status


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


def _print_engine_pricing(e: dict) -> None:
    """Which engine's seconds priced each experiment, and where an engine's ratios came from."""
    by: dict[tuple[str, str, str], list[str]] = {}
    for exp, d in e["engines"].items():  # an experiment several engines train is keyed "exp (engine)"
        by.setdefault((d["engine"], d["priced_as"], d["by"]), []).append(exp.removesuffix(f" ({d['engine']})"))
    for (engine, priced_as, how), exps in by.items():
        if how == "own laws":
            how = ("priced by their job kind's own laws" + (f", measured with {priced_as}" if priced_as else "")
                   + (f" (none for {engine})" if priced_as and priced_as != engine else ""))
        elif engine != priced_as:
            how = f"priced as {priced_as} (the calibration has no {engine} ratios for their job kind)"
        elif how == "ratios":
            how = f"priced by {engine}'s measured ratios to the calibration's seconds"
        else:
            how = f"priced by the calibration's seconds ({engine}'s)"
        print(f"    trained by {engine}: {', '.join(exps)}: {how}")
    if e["ratio_basis"]:
        b = e["ratio_basis"]
        print(f"    ratios measured on: {', '.join(b['measured']) or 'none'}; from their family at other training "
              f"sizes: {', '.join(b['family']) or 'none'}; from the training size alone: {', '.join(b['size']) or 'none'}")
    if e["kind_ratios"]:
        print("    times the measured ratio of their engine and job kind on the committed parts: "
              + ", ".join(f"{key} {ratio:.2f}" for key, ratio in e["kind_ratios"].items()))


def cmd_figure(args) -> int:
    from .study import catalog
    from .study.figures import DRAWINGS
    from .study.results_schema import read_rows

    if catalog.figure(args.drawer).per_hyperparameter and not (args.dataset and args.param):
        raise SystemExit(f"figure {args.drawer} needs --dataset and --param")
    DRAWINGS[args.drawer](read_rows(args.rows), args.output, args.dpi, dataset=args.dataset, param=args.param)
    return 0


def cmd_calibrate_cost(args) -> int:
    from .study.collect import write_json_atomic
    from .study.config.estimate import calibrate, committed_error, engine_ratios, fit_kind_ratios, load_calibration
    from .study.results_schema import SchemaError
    from .study.verify import committed_wall_seconds

    if bool(args.rows) == bool(args.base):
        print("wsvm-span calibrate-cost: give either rows files or --base (a calibration to start from)",
              file=sys.stderr)
        return 2
    try:
        cal = calibrate(args.rows, exclude=args.exclude) if args.rows else load_calibration(args.base)
        if args.engine_ratios:
            cal = cal.with_ratios(engine_ratios(json.loads(Path(f).read_text(encoding="utf-8"))
                                                for f in args.engine_ratios))
        if args.parts:
            kept = [Path(part) for part in args.parts if (Path(part) / "rows").is_dir()]
            if len(kept) < len(args.parts):
                log.warning("calibrate-cost: left out the parts that keep no rows: %s",
                            ", ".join(sorted(Path(p).name for p in args.parts if Path(p) not in kept)))
            measured = [(job, wall_s, part.name) for part in kept for job, wall_s in committed_wall_seconds(part)]
            before = committed_error(cal, measured)
            cal = cal.with_kind_ratios(fit_kind_ratios(cal, measured))
            _print_committed_error(before, committed_error(cal, measured), cal)
    except (OSError, SchemaError, ValueError, KeyError) as exc:
        print(f"wsvm-span calibrate-cost: {exc}", file=sys.stderr)
        return 2
    write_json_atomic(cal.as_dict(), args.output)
    log.info("cost calibration of %s from %s models of %d data sets%s%s -> %s", cal.engine,
             cal.source.get("models", "?"), len(cal.datasets),
             "".join(f"; {engine} on {kind} jobs: ratios measured on {len(r.datasets)} data sets"
                     for (engine, kind), r in cal.engines.items()),
             f"; measured ratios of {len(cal.kind_ratios)} (engine, job kind)s" if cal.kind_ratios else "",
             args.output)
    return 0


def _print_committed_error(before: dict, after: dict, cal) -> None:
    """The projection's error on the committed parts per experiment, before and after the measured ratios."""
    print("measured ratio (engine/job kind: measured / projected seconds of its committed jobs):")
    for r in cal.kind_ratios.values():
        print(f"  {r.engine}/{r.kind}: {r.ratio:.3f} ({r.jobs} jobs in {len(r.parts)} part(s), "
              f"{r.measured_s / 3600:.2f} h measured)")
    print("error of the projection on the committed parts (projected / measured - 1, the jobs' own wall seconds):")
    print(f"  {'experiment':10s} {'jobs':>5s} {'measured h':>11s} {'before h':>9s} {'error':>8s} {'after h':>8s} "
          f"{'error':>8s}")
    for exp, b in before.items():
        a = after[exp]
        print(f"  {exp:10s} {b['jobs']:5d} {b['measured_s'] / 3600:11.2f} {b['projected_s'] / 3600:9.2f} "
              f"{100 * b['error']:+7.1f}% {a['projected_s'] / 3600:8.2f} {100 * a['error']:+7.1f}%")


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


def cmd_verify(args) -> int:
    from .study.verify import stale_parts, verify_part

    if not args.verbose:  # the jobs' own progress lines would bury the comparison
        for name in ("wsvm_span.study.experiments", "wsvm_span.study.runner", "wsvm_span.study.verify"):
            logging.getLogger(name).setLevel(logging.WARNING)
    stale = stale_parts(Path(args.parts[0]).resolve().parent / "README.md")
    failed = []
    for part in args.parts:
        check = verify_part(part, sample=None if args.all else args.sample, seed=args.seed,
                            max_job_seconds=args.max_job_seconds, slots=args.slot, stale=stale)
        print(check.report(), flush=True)
        if not check.ok and check.stale_reason is None:
            failed.append(check.part)
    if failed:
        print(f"wsvm-span verify: the current code does not give the committed rows of {', '.join(failed)}: rerun "
              "these parts, or mark them stale in reproduced/README.md with the reason", file=sys.stderr)
    return 1 if failed else 0


def cmd_run(args) -> int:
    from .study.local_run import run_workflow

    if not Path(args.config).is_file():
        raise SystemExit(f"wsvm-span run: no config file {args.config} (run it in the project's folder, or name one)")
    return run_workflow(Path.cwd(), ["--cores", str(args.cores), "--configfile", args.config, *args.snakemake_args])


def cmd_ui(args) -> int:
    import signal
    import time
    import urllib.request
    import webbrowser

    from .study import config as sc
    from .study.mlflow_views import save_views, view_urls
    from .study.tracking import Tracker, sqlite_path

    if args.tracking_uri:
        uri, prefix = args.tracking_uri, args.experiment_prefix
    else:
        cfg = sc.load_config(args.config)
        settings = sc.runtime_settings(cfg, Path.cwd())
        uri, prefix = settings.tracking_uri, args.experiment_prefix or settings.experiment_prefix
    if prefix is None:
        raise SystemExit("wsvm-span ui: give --experiment-prefix (the study's name) with --tracking-uri")
    store = sqlite_path(uri)
    if store is not None and not Path(store).is_file():
        raise SystemExit(f"wsvm-span ui: no MLflow store at {store} yet (run the workflow first, or give --tracking-uri)")
    local = not uri.startswith(("http://", "https://"))
    if local:
        import socket

        with socket.socket() as probe:  # another server on the port would answer in the UI's place
            if probe.connect_ex((args.host, args.port)) == 0:
                raise SystemExit(f"wsvm-span ui: something already listens on {args.host}:{args.port}; choose --port")
    tracker = Tracker(uri)
    views = save_views(tracker, prefix)
    if args.experiment:
        views = [v for v in views if v.experiment.endswith(f"/{args.experiment}")]
    if args.dataset:
        views = [v for v in views if v.dataset == args.dataset]
    if not views:
        raise SystemExit(f"wsvm-span ui: no models of study {prefix!r} in {uri}"
                         + (" matching --experiment/--dataset" if args.experiment or args.dataset else
                            " yet (run the workflow first)"))
    server = None
    if not local:
        base = uri  # a tracking server serves its own UI
    else:
        base = f"http://{args.host}:{args.port}"
        # one worker and no server-side job executor (GenAI evaluation jobs: seven processes on a SQLite store)
        env = dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
        server = subprocess.Popen([sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri, "--host", args.host,
                                   "--port", str(args.port), "--workers", "1"], env=env, start_new_session=True)
        deadline = time.monotonic() + args.start_timeout
        while True:
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=5) as res:
                    if res.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                _stop_group(server)
                raise SystemExit(f"wsvm-span ui: the MLflow UI did not start on {base} (is the port taken? --port)")
            time.sleep(0.5)
    landing = views[0].url(base)
    print(f"MLflow UI of study {prefix!r} ({uri}): the models of {views[0].dataset} in {views[0].experiment}:\n"
          f"  {landing}\nevery data set (table: models with hyperparameters and estimators; charts: estimators "
          "against the test error, every model):", flush=True)
    for line in view_urls(views, base):
        print(line, flush=True)
    # a graphical browser only: without a display Python's webbrowser would start a text browser in this terminal
    if not args.no_browser and (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or sys.platform == "darwin"):
        webbrowser.open(landing)
    if server is None:
        return 0
    print("the UI runs until Ctrl-C", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a terminated `wsvm-span ui` ends its UI too
    try:
        return server.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        _stop_group(server)


def _stop_group(proc) -> None:
    """End a process started in a session of its own and every process it started (the server's workers):
    SIGTERM, then SIGKILL for what is left after 10 s."""
    import signal
    import time

    for sig in (signal.SIGTERM, signal.SIGKILL):
        deadline = time.monotonic() + 10
        try:
            os.killpg(proc.pid, sig)
            while time.monotonic() < deadline:
                proc.poll()  # reaps the leader, whose group then empties
                os.killpg(proc.pid, 0)
                time.sleep(0.2)
        except ProcessLookupError:
            return


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
    from .engines import ENGINE_NAMES
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
    p.add_argument("--experiments", nargs="+", choices=list(catalog.grid_experiments()), metavar="EXP",
                   help="plan (and estimate) only these experiments of the config")
    p.add_argument("--engine", choices=list(ENGINE_NAMES),
                   help="price the jobs as trained by this engine instead of the config's svm.engine "
                        "(e.g. auto: LIBSVM)")
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
    p.add_argument("--attempt", type=int, default=1, help="Snakemake's attempt number of the job (1, 2, ...)")
    p.add_argument("--log", help="the rule's log: each attempt writes its own log beside it (a hard link names the "
                                 "latest), records how it ended, and holds the job slot's lock")
    p.add_argument("--time-limit-min", type=float,
                   help="the job's time limit (minutes; Snakemake's runtime): with --log, a process that holds the "
                        "job's slot is waited for up to half of it (default 10 minutes)")
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
    p.add_argument("drawer", choices=[f.drawer for f in catalog.FIGURES],
                   help="the figure's drawer (catalog.FIGURES)")
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
    p.add_argument("--base", help="start from this calibration instead of rows files (its seconds are kept)")
    p.add_argument("--engine-ratios", nargs="+", default=[], metavar="FILE",
                   help="measurement files of another engine against the calibration's "
                        "(benchmarks/bench_smo.py ratios): that engine is then priced by its ratios")
    p.add_argument("--parts", nargs="+", default=[], metavar="PART",
                   help="committed parts of reproduced/ (folders with rows/ and provenance.json): fit the measured "
                        "ratio of each (engine, job kind) of their jobs to the projection, replacing the ones the "
                        "calibration had, and print the projection's error on them per experiment, before and "
                        "after")
    p.add_argument("rows", nargs="*", help="rows files of finished experiments (results/<experiment>/rows.parquet)")
    p.set_defaults(func=cmd_calibrate_cost)

    p = sub.add_parser("export-results", help="copy a finished study's rows, tables and figures with their provenance")
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

    p = sub.add_parser("ui", help="open the study's MLflow store in the MLflow UI on the models of a data set")
    p.add_argument("config", nargs="?", default="config/config.yaml",
                   help="the study's config: its store (tracking.uri, MLFLOW_TRACKING_URI or results/mlflow.db) and name")
    p.add_argument("--tracking-uri", help="the store, instead of the config's (then give --experiment-prefix)")
    p.add_argument("--experiment-prefix", help="the study's name (its MLflow experiments are <prefix>/<experiment>)")
    p.add_argument("--experiment", help="open this study experiment first (e.g. exp2)")
    p.add_argument("--dataset", help="open this data set first")
    p.add_argument("--host", default="127.0.0.1", help="where the UI of a local store listens (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=5000, help="its port (default 5000)")
    p.add_argument("--start-timeout", type=float, default=120.0, help="seconds the UI may take to start")
    p.add_argument("--no-browser", action="store_true", help="print the addresses only")
    p.set_defaults(func=cmd_ui)

    p = sub.add_parser("verify", help="rerun sampled jobs of committed parts and compare their rows")
    p.add_argument("parts", nargs="+", help="committed parts (reproduced/<part>)")
    p.add_argument("--sample", type=int, default=3, help="jobs to rerun per part (default 3)")
    p.add_argument("--all", action="store_true", help="rerun every job of the part")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("--max-job-seconds", type=float, default=None,
                   help="draw only among jobs whose committed wall time is at most this")
    p.add_argument("--slot", action="append", default=[], help="rerun the job at this slot (repeatable)")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("run", help="run the study workflow in this folder (what `make run` does)")
    p.add_argument("config", nargs="?", default="config/config.yaml", help="the study's config")
    p.add_argument("--cores", type=int, default=os.cpu_count() or 1, help="cores for the jobs (default: all)")
    # Snakemake's own options come after `--` (main splits them off: argparse's REMAINDER would also swallow
    # this command's options that follow the config, such as --cores)
    p.set_defaults(snakemake_args=[])
    p.epilog = "Snakemake's own options go after --, e.g. wsvm-span run config/paper.yaml --cores 2 -- --dry-run"
    p.set_defaults(func=cmd_run)

    from .model_selection.select import configure_parser

    configure_parser(sub.add_parser("select", help="choose C and gamma for a data file by the span-rule"))
    return parser


def main(argv: list[str] | None = None) -> int:
    """The `wsvm-span` command: parse ``argv`` (default: the process arguments), run the subcommand and return
    its exit status (2 for a config error, or a study command without the study extra).
    """
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    passed_on = []
    if argv[:1] == ["run"] and "--" in argv:
        argv, passed_on = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    args = parser.parse_args(argv)
    if passed_on:
        args.snakemake_args = passed_on
    _setup_logging(args.verbose)
    from .study.canonical import ConfigError
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
