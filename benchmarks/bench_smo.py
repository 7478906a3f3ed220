"""The project's SMO engine ("smo", warm-started) against LIBSVM (scikit-learn's SVC, "sklearn"), baselines
measured in the same run, one BLAS thread, CPU seconds of this process (wall seconds beside) (issue 21).

Subcommands:
  cold    one training from zero, engine against engine: mnist_2_9, ringnorm_d20_l8192, adult and splice at
          a small, a middle and a large C (C+ = C-), the two engines alternating, best of --repeats.
          Goal: smo at most 1.2x LIBSVM. Also: the dual objectives and the maximal violating pair's gap.
  row     one grid job of the study as ``weight_grid.evaluate`` computes it (a row of the paper config's
          33 x 33 grid: C+ fixed, C- from 2^-6 to 2^10, every model with its 5-fold CV on the fold cache),
          ``svm.engine: auto`` (LIBSVM) against ``svm.engine: smo`` (each model from the previous one,
          each fold from the model or its previous fold model): the CPU time of training and CV, the two
          alternating model by model, then the job's whole evaluation by each, every estimator of its rows
          compared. Goal: at least 3x on training + CV.
  loo     exact leave-one-out as Experiment 10 computes it (every SV retrained), from zero (LIBSVM) against
          warm starts from the full model (smo), on the paper config's exp10 tasks. Goal: at least 5x.
  search  ``SpanSearchCV`` (criterion span_rule, cv_error beside) on the 7 x 4 C x gamma grid of splice and
          on mnist_2_9, engine against engine. Goal: at least 2x.
  ratios  the cost model's smo / LIBSVM ratios (``check-config --estimate`` with ``svm.engine: smo``): sample
          rows of one data set's grid in the paper config (a class grid's rows by log2 C+, a sigmoid grid's
          jobs by chunk), each model as ``weight_grid.evaluate`` computes it, the two engines alternating model
          by model: CPU seconds of training (t_train), 5-fold CV (t_cv) and exact LOO (t_loo, the models the
          job gives it), with the load average beside. ``--libsvm-every k`` times LIBSVM on every k-th model
          only (its models start from zero, so a systematic sample prices the row; smo runs the whole chain).
          ``wsvm-span calibrate-cost --engine-ratios`` turns the output files into the calibration's ratios.

Usage:
  python benchmarks/bench_smo.py cold
  python benchmarks/bench_smo.py row --dataset mnist_2_9 --log2-c-plus 2
  python benchmarks/bench_smo.py row --dataset ringnorm_d20_l8192 --log2-c-plus 2
  python benchmarks/bench_smo.py loo
  python benchmarks/bench_smo.py search
  python benchmarks/bench_smo.py ratios --dataset splice --log2-c-plus -4 2 8 --tag splice
  python benchmarks/bench_smo.py ratios --dataset parkinson_speech --chunks 0 8 --tag parkinson_speech
  python benchmarks/bench_smo.py ratios --dataset ringnorm_d20_l16384 --log2-c-plus -4 --libsvm-every 4
Each writes benchmarks/out/smo-<subcommand>[-<tag>].json (--tag).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import wsvm_span as ws  # noqa: E402
from wsvm_span.data import load_dataset  # noqa: E402
from wsvm_span.engines import get_engine  # noqa: E402
from wsvm_span.engines.smo import smo_solve  # noqa: E402
from wsvm_span.solution_path.reference import CpuClock as Clock  # noqa: E402
from wsvm_span.study.provenance import code_version  # noqa: E402
from wsvm_span.utils.environment import machine_info, single_threaded  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MIRROR = os.environ.get("WSVM_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
TOL = 1e-7


def output_name(args) -> str:
    return args.cmd + (f"-{args.tag}" if args.tag else "")


def write(name: str, payload: dict) -> None:
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"smo-{name}.json"
    path.write_text(json.dumps(payload, indent=1, default=float))
    print(f"wrote {path}")


def gap(K, y, C, alpha) -> float:
    v = -y * (y * (K @ (y * alpha)) - 1.0)
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return float(v[up].max() - v[low].min())


def objective(K, y, alpha) -> float:
    coef = y * alpha
    return float(0.5 * coef @ K @ coef - alpha.sum())


# ------------------------------------------------------------------------------------------ cold ---

def run_cold(args) -> dict:
    libsvm = get_engine("sklearn")
    rows = []
    for name in args.datasets:
        split = load_dataset(name, mirror=MIRROR)
        K, y = ws.rbf_kernel(split.X_train, None, 1.0 / split.d), split.y_train
        for log2c in args.log2c:
            C = np.full(y.size, 2.0 ** log2c)
            t_lib, t_smo = [], []
            for _ in range(args.repeats):
                with Clock() as t:
                    a_lib, _ = libsvm.solve(K, y, C, TOL)
                t_lib.append(t.cpu)
                with Clock() as t:
                    a_smo, _, report = smo_solve(K, y, C, TOL)
                t_smo.append(t.cpu)
            f_lib, f_smo = objective(K, y, a_lib), objective(K, y, a_smo)
            row = dict(dataset=name, l=int(y.size), log2_C=float(log2c), libsvm_cpu=min(t_lib), smo_cpu=min(t_smo),
                       ratio=min(t_smo) / min(t_lib), smo_steps=report.n_iter,
                       objective_rel_diff=(f_smo - f_lib) / abs(f_lib), gap_libsvm=gap(K, y, C, a_lib),
                       gap_smo=gap(K, y, C, a_smo))
            rows.append(row)
            print(f"{name:20s} l={y.size:6d} log2 C {log2c:5.1f}: LIBSVM {row['libsvm_cpu']:7.3f}s  smo "
                  f"{row['smo_cpu']:7.3f}s  ratio {row['ratio']:5.2f}  objective (smo - LIBSVM)/|LIBSVM| "
                  f"{row['objective_rel_diff']:+.1e}  gaps {row['gap_libsvm']:.1e} / {row['gap_smo']:.1e}",
                  flush=True)
    worst = max(r["ratio"] for r in rows)
    print(f"worst ratio smo / LIBSVM: {worst:.2f} (goal <= 1.2)")
    return dict(worst_ratio=worst, rows=rows)


# ------------------------------------------------------------------------------------------- row ---

def grid_job(config: str, dataset: str, log2_c_plus: float, engine: str):
    """The paper config's job of ``dataset`` whose row has log2 C+ = log2_c_plus, with svm.engine = engine."""
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import weight_grid

    raw = sc.load_config(config)
    raw["svm"]["engine"] = engine
    cfg = sc.validate_config(raw)
    for experiment in ("exp1", "exp6"):
        if dataset not in weight_grid.experiment_datasets(cfg, experiment):
            continue
        for job in weight_grid.plan(cfg, experiment):
            first = weight_grid.grid_point(job.axes, job.model_start) if job.dataset == dataset else None
            if first is not None and first.get("log2_C_plus") == log2_c_plus:
                return job
    raise SystemExit(f"no job of {dataset} with log2 C+ = {log2_c_plus} in {config}")


def run_row(args) -> dict:
    from wsvm_span.engines.warm_start import Solved, rescaled_start
    from wsvm_span.study.config import RuntimeSettings
    from wsvm_span.study.experiments import weight_grid

    settings = RuntimeSettings(data_dir=str(ROOT / "resources" / "data"), data_mirror=MIRROR)
    jobs = {engine: grid_job(args.config, args.dataset, args.log2_c_plus, engine) for engine in ("auto", "smo")}
    problem = weight_grid.prepare(jobs["auto"], settings)  # the same split, kernels and fold cache for both
    K, y = problem.K, problem.split.y_train
    # 1. training and CV, model by model as the job does them, the two engines alternating point by point
    #    (so that load on a shared machine falls on both alike); CPU seconds
    cpu = {"auto": 0.0, "smo": 0.0}
    previous, fold_starts, same_cv = None, ws.FoldStarts(), 0
    for index in range(jobs["auto"].model_start, jobs["auto"].model_stop):
        C = weight_grid.model_weights(jobs["auto"], problem.split, weight_grid.grid_point(jobs["auto"].axes, index))
        with Clock() as t:
            model = ws.fit_svm(K, y, C, tol=TOL, check_input=False)
            cv_lib = ws.kfold_cv_error(K, y, C, folds=problem.folds, tol=TOL, check_input=False,
                                       fold_kernels=problem.fold_kernels)
        cpu["auto"] += t.cpu
        with Clock() as t:
            start = None if previous is None else rescaled_start(Solved.from_model(previous), C, K)
            previous = ws.fit_svm(K, y, C, engine="smo", tol=TOL, check_input=False, alpha0=start)
            cv_smo = ws.kfold_cv_error(K, y, C, folds=problem.folds, engine="smo", tol=TOL, check_input=False,
                                       fold_kernels=problem.fold_kernels, model=previous, fold_starts=fold_starts)
        cpu["smo"] += t.cpu
        same_cv += cv_lib == cv_smo
        print(f"  model {index}: LIBSVM {cpu['auto']:7.1f}s  smo {cpu['smo']:7.1f}s  CV {cv_lib:.4f}/{cv_smo:.4f}",
              flush=True)
    # 2. the job's evaluation, each engine once: every estimator of the rows compared, and the whole job's CPU
    runs = {}
    for engine in ("auto", "smo"):
        with Clock() as t:
            rows = weight_grid.evaluate(jobs[engine], problem)
        runs[engine] = dict(cpu=t.cpu, wall=t.wall, rows=rows)
        print(f"  {engine:5s}: the job's evaluation {t.cpu:7.1f}s cpu ({t.wall:.1f}s wall)", flush=True)
    compared = ("test_error", "span_rule", "span_bound", "cv_error", "xi_alpha_bound", "sv_count_bound", "loo_error")
    differences = {}
    for key in compared:
        a = np.array([r[key] for r in runs["auto"]["rows"]], dtype=float)
        b = np.array([r[key] for r in runs["smo"]["rows"]], dtype=float)
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        differences[key] = dict(identical=int(same.sum()), of=int(a.size),
                                max_abs_diff=float(np.nanmax(np.abs(a - b))) if not same.all() else 0.0,
                                models=[int(r["model_index"]) for r, s in zip(runs["auto"]["rows"], same) if not s])
    summary = dict(dataset=args.dataset, l=problem.l, log2_C_plus=args.log2_c_plus, models=jobs["auto"].n_models,
                   libsvm_train_cv_cpu=cpu["auto"], smo_train_cv_cpu=cpu["smo"], ratio_train_cv=cpu["auto"] / cpu["smo"],
                   identical_cv_errors=same_cv, libsvm_evaluate_cpu=runs["auto"]["cpu"],
                   smo_evaluate_cpu=runs["smo"]["cpu"], ratio_evaluate=runs["auto"]["cpu"] / runs["smo"]["cpu"],
                   fold_cache=problem.fold_kernels is not None, estimators=differences)
    print(json.dumps({k: v for k, v in summary.items() if k != "estimators"}, indent=1))
    for key, d in differences.items():
        print(f"  {key:15s} identical {d['identical']}/{d['of']}  max |diff| {d['max_abs_diff']:.2g}")
    return summary


# ------------------------------------------------------------------------------------------- loo ---

def run_loo(args) -> dict:
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import standard_span

    cfg = sc.validate_config(sc.load_config(args.config))
    rows = []
    totals = {"sklearn": 0.0, "smo": 0.0}
    seen = set()
    for job in standard_span.plan(cfg, "exp10"):
        if job.dataset in seen:  # the first replicate of each task
            continue
        seen.add(job.dataset)
        split = load_dataset(job.dataset, seed=job.seed, realization=job.realization, mirror=MIRROR)
        y = split.y_train
        points = [standard_span.grid_point(job.axes, i) for i in range(job.model_start, job.model_stop)]
        for point in points[:: args.every]:
            K = ws.rbf_kernel(split.X_train, None, standard_span.sigma_gamma(point["sigma"]))
            C = 2.0 ** point["log2_C"]
            out = {}
            for engine in ("sklearn", "smo"):
                model = ws.fit_svm(K, y, C, engine=engine, tol=TOL)
                with Clock() as t:
                    loo = ws.leave_one_out(model, K, check_input=False)
                out[engine] = (t.cpu, loo.loo_error, model.support.size)
                totals[engine] += t.cpu
            rows.append(dict(dataset=job.dataset, seed=job.seed, sigma=point["sigma"], log2_C=point["log2_C"],
                             n_sv=out["smo"][2], libsvm_cpu=out["sklearn"][0], smo_cpu=out["smo"][0],
                             ratio=out["sklearn"][0] / out["smo"][0], loo_libsvm=out["sklearn"][1],
                             loo_smo=out["smo"][1]))
            r = rows[-1]
            print(f"{job.dataset:32s} sigma {r['sigma']:5g} log2 C {r['log2_C']:5.1f} n_sv {r['n_sv']:4d}: "
                  f"LIBSVM {r['libsvm_cpu']:6.2f}s smo {r['smo_cpu']:6.2f}s ratio {r['ratio']:5.1f}  "
                  f"LOO {r['loo_libsvm']:.4f}/{r['loo_smo']:.4f}", flush=True)
    ratio = totals["sklearn"] / totals["smo"]
    same = sum(r["loo_libsvm"] == r["loo_smo"] for r in rows)
    print(f"all: LIBSVM {totals['sklearn']:.1f}s smo {totals['smo']:.1f}s ratio {ratio:.1f} (goal >= 5); "
          f"LOO errors identical on {same} of {len(rows)}")
    return dict(ratio=ratio, libsvm_cpu=totals["sklearn"], smo_cpu=totals["smo"], identical_loo=same, rows=rows)


# ---------------------------------------------------------------------------------------- search ---

def run_search(args) -> dict:
    from wsvm_span.model_selection import SpanSearchCV

    results = []
    for name in args.datasets:
        split = load_dataset(name, mirror=MIRROR)
        X, y = split.X_train, split.y_train
        grid = {"C": list(2.0 ** np.arange(-1, 12, 2)), "gamma": list(2.0 ** np.arange(-7, 1, 2) / split.d)}
        out = {}
        for _ in range(args.repeats):
            for engine in ("sklearn", "smo"):
                search = SpanSearchCV(param_grid=grid, engine=engine, extra_criteria=tuple(args.extra), refit=False)
                with Clock() as t:
                    search.fit(X, y)
                best = out.get(engine)
                if best is None or t.cpu < best[0]:
                    out[engine] = (t.cpu, search.cv_results_)
        res_lib, res_smo = out["sklearn"][1], out["smo"][1]
        row = dict(dataset=name, l=int(y.size), points=len(res_lib["params"]), libsvm_cpu=out["sklearn"][0],
                   smo_cpu=out["smo"][0], ratio=out["sklearn"][0] / out["smo"][0],
                   # the trainings alone (wall seconds of the points' fits, as cv_results_ records them)
                   libsvm_fit_wall=float(np.sum(res_lib["mean_fit_time"])),
                   smo_fit_wall=float(np.sum(res_smo["mean_fit_time"])),
                   fit_ratio=float(np.sum(res_lib["mean_fit_time"]) / np.sum(res_smo["mean_fit_time"])),
                   same_span_rule=int(np.sum(res_lib["span_rule"] == res_smo["span_rule"])),
                   **{f"same_{c}": int(np.sum(res_lib[c] == res_smo[c])) for c in args.extra},
                   same_selection=bool(np.argmin(res_lib["span_rule"]) == np.argmin(res_smo["span_rule"])))
        results.append(row)
        print(json.dumps(row), flush=True)
    return dict(rows=results)


# ---------------------------------------------------------------------------------------- ratios ---

#: the components the ratios are measured for: the solver's own work (``config.estimate.SOLVER``)
RATIO_COMPONENTS = ("t_train", "t_cv", "t_loo")


def planned_jobs(config: str, dataset: str, engine: str) -> list:
    """The first replicate's weight-grid jobs of ``dataset`` in ``config`` with svm.engine = engine."""
    from wsvm_span.study import config as sc
    from wsvm_span.study.experiments import weight_grid

    raw = sc.load_config(config)
    raw["svm"]["engine"] = engine
    cfg = sc.validate_config(raw)
    for experiment in ("exp1", "exp2", "exp6"):
        if dataset in weight_grid.experiment_datasets(cfg, experiment):
            jobs = [j for j in weight_grid.plan(cfg, experiment) if j.dataset == dataset]
            return [j for j in jobs if (j.seed, j.realization) == (jobs[0].seed, jobs[0].realization)]
    raise SystemExit(f"{dataset} is in none of the weight-grid experiments of {config}")


def sample_ranges(jobs, log2_c_plus, chunks) -> list[tuple[str, int, int]]:
    """(label, first model, stop) of each sample: a class grid's row log2 C+ = v (its C- axis, which may be
    part of a larger job), or a planned job by its chunk index."""
    axes = jobs[0].axes
    if chunks:
        by_chunk = {j.chunk: j for j in jobs}
        return [(f"chunk {c}", by_chunk[c].model_start, by_chunk[c].model_stop) for c in chunks]
    if "log2_C_plus" not in axes:
        raise SystemExit(f"{jobs[0].dataset}: not a class grid; choose its jobs by --chunks")
    width = len(axes["log2_C_minus"])
    return [(f"log2_C_plus {v:g}", axes["log2_C_plus"].index(v) * width, (axes["log2_C_plus"].index(v) + 1) * width)
            for v in log2_c_plus]


def run_ratios(args) -> dict:
    from wsvm_span.study.config import RuntimeSettings
    from wsvm_span.study.experiments import weight_grid

    settings = RuntimeSettings(data_dir=str(ROOT / "resources" / "data"), data_mirror=MIRROR)
    jobs = {engine: planned_jobs(args.config, args.dataset, engine) for engine in ("auto", "smo")}
    samples = sample_ranges(jobs["auto"], args.log2_c_plus, args.chunks)
    job_of = {engine: (lambda i, js=js: next(j for j in js if j.model_start <= i < j.model_stop))
              for engine, js in jobs.items()}
    # the job's own set-up (the split, kernels, folds and their cached kernels, a warm-up), once for all samples
    problem = weight_grid.prepare(job_of["auto"](samples[0][1]), settings)
    K, y = problem.K, problem.split.y_train
    measured = []
    for label, start, stop in samples:
        job = job_of["smo"](start)
        if job is not job_of["smo"](stop - 1):
            raise SystemExit(f"{label} spans two jobs of {args.dataset}")
        loo = [i for i in job.loo_models if start <= i < stop]
        if loo and args.libsvm_every > 1:
            raise SystemExit(f"{label} has models with exact LOO: time LIBSVM on every model (--libsvm-every 1)")
        cpu = {e: dict.fromkeys(RATIO_COMPONENTS, 0.0) for e in ("sklearn", "smo")}
        wall = {e: dict.fromkeys(RATIO_COMPONENTS, 0.0) for e in ("sklearn", "smo")}
        counts = {"sklearn": 0, "smo": 0}
        loads, same_cv, same_loo = [], 0, 0
        warm = weight_grid._WarmChain()  # the job's chain: the models of a chunk, each from the previous one
        for index in range(start, stop):
            loads.append(os.getloadavg()[0])
            C = weight_grid.model_weights(job, problem.split, weight_grid.grid_point(job.axes, index))
            errors = {}
            for engine in ("sklearn", "smo"):
                if engine == "sklearn" and (index - start) % args.libsvm_every:
                    continue
                with Clock() as t:  # as weight_grid.evaluate: the start is part of the model's training
                    alpha0 = warm.start(K, C) if engine == "smo" else None
                    model = ws.fit_svm(K, y, C, engine=engine, tol=job.tol, check_input=False, alpha0=alpha0)
                cpu[engine]["t_train"] += t.cpu
                wall[engine]["t_train"] += t.wall
                if engine == "smo":
                    warm.previous = model
                with Clock() as t:  # as evaluation.evaluate_fitted
                    cv = ws.kfold_cv_error(K, y, model.C, folds=problem.folds, engine=engine, tol=job.tol,
                                           check_input=False, fold_kernels=problem.fold_kernels, model=model,
                                           fold_starts=warm.fold_starts if engine == "smo" else None)
                cpu[engine]["t_cv"] += t.cpu
                wall[engine]["t_cv"] += t.wall
                loo_error = None
                if index in loo:
                    with Clock() as t:
                        loo_error = ws.leave_one_out(model, K, check_input=False).loo_error
                    cpu[engine]["t_loo"] += t.cpu
                    wall[engine]["t_loo"] += t.wall
                counts[engine] += 1
                errors[engine] = (cv, loo_error)
            if "sklearn" in errors:
                same_cv += errors["sklearn"][0] == errors["smo"][0]
                same_loo += index in loo and errors["sklearn"][1] == errors["smo"][1]
        loads.append(os.getloadavg()[0])
        row = dict(dataset=args.dataset, experiment=job.experiment, l=problem.l, sample=label, model_start=start,
                   model_stop=stop, libsvm_every=args.libsvm_every, models=counts, loo_models=len(loo),
                   cpu=cpu, wall=wall, identical_cv_errors=int(same_cv), identical_loo_errors=int(same_loo),
                   load=dict(min=min(loads), mean=float(np.mean(loads)), max=max(loads)))
        measured.append(row)
        write(f"{output_name(args)}.partial", dict(measurements=measured))  # what a run cut short leaves
        per = {c: (cpu["smo"][c] / counts["smo"]) / (cpu["sklearn"][c] / counts["sklearn"])
               for c in RATIO_COMPONENTS if cpu["sklearn"][c] > 0}
        print(f"{args.dataset} {label} (models {start}..{stop - 1}, LIBSVM on {counts['sklearn']}, "
              f"LOO on {len(loo)}): CPU s per model LIBSVM / smo "
              + ", ".join(f"{c} {cpu['sklearn'][c] / counts['sklearn']:.3f}/{cpu['smo'][c] / counts['smo']:.3f}"
                          for c in RATIO_COMPONENTS)
              + "; smo/LIBSVM " + ", ".join(f"{c} {r:.3f}" for c, r in per.items())
              + f"; CV errors identical on {same_cv} of {counts['sklearn']}; load {row['load']['min']:.1f}-"
                f"{row['load']['max']:.1f}", flush=True)
    return dict(engine="smo", baseline="sklearn", kind=weight_grid.KIND, config=str(args.config), tol=TOL,
                clock="process CPU seconds, one BLAS thread", measurements=measured)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("cold")
    p.add_argument("--datasets", nargs="+", default=["mnist_2_9", "ringnorm_d20_l8192", "adult", "splice"])
    p.add_argument("--log2c", type=float, nargs="+", default=[-6.0, 2.0, 10.0],
                   help="log2 C+ = log2 C- (default: the study grid's ends and its middle)")
    p.add_argument("--repeats", type=int, default=3)
    p = sub.add_parser("row")
    p.add_argument("--config", default=str(ROOT / "config" / "paper.yaml"))
    p.add_argument("--dataset", default="mnist_2_9")
    p.add_argument("--log2-c-plus", type=float, default=2.0)
    p = sub.add_parser("loo")
    p.add_argument("--config", default=str(ROOT / "config" / "paper.yaml"))
    p.add_argument("--every", type=int, default=4, help="every k-th grid point of the first replicate of each task")
    p = sub.add_parser("search")
    p.add_argument("--datasets", nargs="+", default=["splice", "mnist_2_9"])
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--extra", nargs="*", default=["cv_error"], help="extra_criteria of the searches (default cv_error)")
    p = sub.add_parser("ratios")
    p.add_argument("--config", default=str(ROOT / "config" / "paper.yaml"))
    p.add_argument("--dataset", required=True)
    p.add_argument("--log2-c-plus", type=float, nargs="+", default=[-4.0, 2.0, 8.0],
                   help="the class grid's rows (default: a small, a middle and a large C+)")
    p.add_argument("--chunks", type=int, nargs="+", help="the planned jobs, by chunk index (any grid)")
    p.add_argument("--libsvm-every", type=int, default=1, help="time LIBSVM on every k-th model of a sample")
    for p in sub.choices.values():
        p.add_argument("--tag", default="", help="suffix of the output file name")
    args = ap.parse_args(argv)
    run = dict(cold=run_cold, row=run_row, loo=run_loo, search=run_search, ratios=run_ratios)[args.cmd]
    started, load_before = time.strftime("%Y-%m-%dT%H:%M:%S%z"), os.getloadavg()
    with single_threaded():
        payload = run(args)
    payload["machine"] = machine_info()
    payload["command"] = " ".join(["python", "benchmarks/bench_smo.py", *(sys.argv[1:] if argv is None else argv)])
    payload["started"] = started
    payload["load_average"] = dict(before=list(load_before), after=list(os.getloadavg()))
    payload["code_version"] = code_version()
    write(output_name(args), payload)
    (ROOT / "benchmarks" / "out" / f"smo-{output_name(args)}.partial.json").unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
