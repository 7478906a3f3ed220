"""Solution-path benchmark: the path against LIBSVM re-solving, with baselines measured in the
same run (single-threaded BLAS; CPU seconds of this process, wall seconds reported beside).

Subcommands:
  exp7   the reference experiment of solution-path.md: four Gaussians, n = 400..1600, weight
         of group D1 from 0.01 to 10 (D2 at 10), RBF exp(-(1/2)||x - x'||^2). Path time vs
         LIBSVM re-solving at every breakpoint (cold: scikit-learn's LIBSVM has no warm
         start), estimated as (mean LIBSVM time over --resolve-sample breakpoints) x events;
         beside it smo hot-started from the previous breakpoint at tol 1e-3 at every breakpoint.
  loo    exact LOO by path vs LOO by retraining (ws.leave_one_out) over the 9 x 9 grid of
         log2 C+/C- in -6..10 step 2 on the exp1 data sets with l <= 1300. --sv-sample N
         retrains only N random SVs per grid point (time extrapolated to all SVs, signs of
         f^p(x_p) compared on those); 0 retrains every SV and compares the LOO errors.
  cv     5-fold CV by path vs ws.kfold_cv_error on the same grid.
  sweep  the 33 x 33 class-weight grid of splice by path (snake order) vs 1089 LIBSVM
         trainings: ratio and the largest difference of every estimator (the span bound,
         which solves QPs, on every --bound-every-th node of each axis; the others on all).
  row    one grid job of the study at large l (a row of the 33 x 33 grid: C+ fixed, C- from 2^-6
         to 2^10) as each engine computes it: LIBSVM (every model, and its 5-fold CV retrained on
         fold kernels sliced once) vs ``svm.engine: path`` (the first model by LIBSVM, each next
         one by the path from its predecessor, CV by paths from each model). Issue 8's lever
         check for the large data sets.

Usage:
  python benchmarks/bench_solution_path.py exp7 --sizes 400 800 1200 1600 --datasets 10
  python benchmarks/bench_solution_path.py loo --datasets breast_cancer waveform --sv-sample 0
  python benchmarks/bench_solution_path.py loo --datasets splice image --log2 -6 2 10
  python benchmarks/bench_solution_path.py cv
  python benchmarks/bench_solution_path.py sweep --dataset splice --grid 33
  python benchmarks/bench_solution_path.py row --dataset ringnorm_d20_l4096 --log2-c-plus 2
Each writes benchmarks/out/solution-path-<subcommand>[-<tag>].json (--tag).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import wsvm_span as ws  # noqa: E402
from wsvm_span.data import load_dataset  # noqa: E402
from wsvm_span.utils.environment import machine_info, single_threaded  # noqa: E402
from wsvm_span.solution_path import (  # noqa: E402
    PathEventLimitError,
    follow_path,
    kfold_cv_by_path,
    loo_by_path,
    sweep_class_grid,
)
from wsvm_span.solution_path.reference import CpuClock, measure_reference_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXP1_SMALL = ("breast_cancer", "mushrooms", "waveform", "banana", "skin_nonskin", "splice", "image")
GRID9 = np.arange(-6.0, 10.1, 2.0)


def load_split(name: str, seed: int = 0):
    mirror = os.environ.get("WSVM_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
    return load_dataset(name, seed=seed, mirror=mirror)


def write(name: str, payload: dict) -> None:
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"solution-path-{name}.json").write_text(json.dumps(payload, indent=1, default=float))
    print(f"wrote {out / f'solution-path-{name}.json'}")


def median(rows, key):
    return float(np.median([r[key] for r in rows])) if rows else float("nan")


# ------------------------------------------------------------------------------ exp7 ---

def run_exp7(args) -> dict:
    rows = []
    for n in args.sizes:
        for seed in range(args.datasets):
            run = measure_reference_path(n, seed, d1_start=args.d1_start,
                                         resolve=args.resolve_sample if args.resolve_sample > 0 else None)
            row = dataclasses.asdict(run)
            rows.append(row)
            print(f"  n={n:5d} seed={seed} events={run.n_events:5d} mean|M|={run.mean_margin_size:6.1f} "
                  f"path {run.t_path:6.2f}s cpu ({run.t_path_wall:6.2f}s wall)  LIBSVM/solve {run.t_resolve:.4f}s cpu "
                  f"x {run.n_events} = {run.t_libsvm:8.1f}s  speed-up {run.speedup:7.1f}  |df| {run.max_abs_df:.1e}"
                  f"  end |df| {run.end_max_abs_df:.1e}  smo hot-started {run.t_smo_hot:6.2f}s "
                  f"speed-up {run.speedup_smo_hot:6.1f}  fallback={run.fallback}", flush=True)
    summary = []
    for n in args.sizes:
        r = [x for x in rows if x["n"] == n]
        summary.append(dict(n=n, events=median(r, "n_events"), events_per_n=median(r, "n_events") / n,
                            mean_margin=median(r, "mean_margin_size"), t_path_cpu=median(r, "t_path"),
                            libsvm_all_breakpoints_cpu=median(r, "t_libsvm"),
                            speedup=median(r, "speedup"), t_smo_hot=median(r, "t_smo_hot"),
                            speedup_smo_hot=median(r, "speedup_smo_hot")))
        s = summary[-1]
        print(f"n={n}: median events {s['events']:.0f} ({s['events_per_n']:.2f} per point), mean|M| "
              f"{s['mean_margin']:.1f}, path {s['t_path_cpu']:.2f}s, LIBSVM at every breakpoint "
              f"{s['libsvm_all_breakpoints_cpu']:.1f}s, speed-up {s['speedup']:.1f}x; smo hot-started "
              f"{s['t_smo_hot']:.2f}s, speed-up {s['speedup_smo_hot']:.1f}x")
    return dict(summary=summary, rows=rows)


# ----------------------------------------------------------------------- loo and cv ---

def grid_models(name: str, logs):
    split = load_split(name)
    K = ws.KernelCache(split.X_train, 1.0 / split.d).train
    y = split.y_train
    for lp in logs:
        for lm in logs:
            C = ws.class_weights(y, 2.0 ** lp, 2.0 ** lm)
            yield lp, lm, K, y, C, ws.fit_svm(K, y, C, check_input=False)


def over_grid(datasets, logs, measure, summarize) -> list:
    """measure(name, lp, lm, K, y, C, model) -> (row, line) at every grid point of every data
    set; summarize(name, rows of that data set) -> line."""
    rows = []
    for name in datasets:
        mine = []
        for lp, lm, K, y, C, model in grid_models(name, logs):
            row, line = measure(name, lp, lm, K, y, C, model)
            mine.append(row)
            print(f"  {name:14s} {lp:5.1f} {lm:5.1f} {line}", flush=True)
        print(f"{name}: {summarize(mine)}", flush=True)
        rows += mine
    return rows


def run_loo(args) -> dict:
    def measure(name, lp, lm, K, y, C, model):
        with CpuClock() as t_path:
            got = loo_by_path(model, K, check_input=False)
        sv = model.support
        full = args.sv_sample <= 0 or args.sv_sample >= sv.size
        pick = np.arange(sv.size) if full else np.sort(
            np.random.default_rng(0).choice(sv.size, args.sv_sample, replace=False))
        with CpuClock() as t_ret:
            ref = ws.leave_one_out(dataclasses.replace(model, support=sv[pick]), K, check_input=False)
        scale = sv.size / max(pick.size, 1)
        err_path = got.decision_loo[pick] * y[sv[pick]] <= 0
        row = dict(dataset=name, l=y.size, log2_C_plus=lp, log2_C_minus=lm, n_sv=int(sv.size),
                   n_inbound=int(model.inbound.size), retrained=int(pick.size), full=full,
                   t_path_cpu=t_path.cpu, t_path_wall=t_path.wall,
                   t_retrain_cpu=t_ret.cpu * scale, t_retrain_wall=t_ret.wall * scale,
                   speedup=t_ret.cpu * scale / t_path.cpu,
                   events_mean=float(got.n_events.mean()) if sv.size else 0.0,
                   fallbacks=got.n_fallbacks, loo_path=got.loo_error, loo_retrain=ref.loo_error if full else None,
                   sign_agreement=float(np.mean(err_path == (ref.decision_loo * y[sv[pick]] <= 0))) if pick.size else 1.0,
                   max_abs_df=float(np.abs(ref.decision_loo - got.decision_loo[pick]).max(initial=0.0)))
        return row, (f"n={row['n_sv']:5d} n*={row['n_inbound']:5d} path {t_path.cpu:7.2f}s retrain "
                     f"{row['t_retrain_cpu']:8.2f}s ({'all' if full else pick.size}) x{row['speedup']:6.1f} "
                     f"events/SV {row['events_mean']:5.1f} fb {row['fallbacks']} LOO {got.loo_error:.4f}/"
                     f"{row['loo_retrain']} signs {row['sign_agreement']:.3f} |df| {row['max_abs_df']:.1e}")

    def summarize(r):
        return (f"median speed-up {median(r, 'speedup'):.1f}x, identical LOO errors "
                f"{sum(x['loo_path'] == x['loo_retrain'] for x in r if x['full'])}/{sum(x['full'] for x in r)}, "
                f"sign agreement min {min(x['sign_agreement'] for x in r):.3f}, "
                f"fallbacks {sum(x['fallbacks'] for x in r)}")

    rows = over_grid(args.datasets, args.log2, measure, summarize)
    print(f"all: median speed-up {median(rows, 'speedup'):.1f}x")
    return dict(median_speedup=median(rows, "speedup"), rows=rows)


def run_cv(args) -> dict:
    def measure(name, lp, lm, K, y, C, model):
        folds = ws.stratified_folds(y, 5, seed=0)
        with CpuClock() as t_path:
            got = kfold_cv_by_path(model, K, folds, check_input=False)
        with CpuClock() as t_ret:
            ref = ws.kfold_cv_error(K, y, C, folds=folds, check_input=False)
        row = dict(dataset=name, log2_C_plus=lp, log2_C_minus=lm, t_path_cpu=t_path.cpu,
                   t_retrain_cpu=t_ret.cpu, ratio=t_ret.cpu / t_path.cpu, events=int(got.n_events.sum()),
                   cv_path=got.cv_error, cv_retrain=ref, fallbacks=sum(f is not None for f in got.fallbacks))
        return row, (f"path {t_path.cpu:6.2f}s retrain {t_ret.cpu:6.2f}s ratio {row['ratio']:5.2f} "
                     f"events {row['events']:5d} CV {got.cv_error:.4f}/{ref:.4f} fb {row['fallbacks']}")

    def summarize(r):
        return (f"median ratio (retrain / path) {median(r, 'ratio'):.2f}, path slower at "
                f"{sum(x['ratio'] < 1 for x in r)}/{len(r)} grid points, identical CV errors "
                f"{sum(x['cv_path'] == x['cv_retrain'] for x in r)}/{len(r)}")

    rows = over_grid(args.datasets, args.log2, measure, summarize)
    print(f"all: median ratio {median(rows, 'ratio'):.2f}")
    return dict(median_ratio=median(rows, "ratio"), rows=rows)


# ----------------------------------------------------------------------------- sweep ---

def estimators(model, K, K_test, y_test, D, R2, with_bound: bool) -> dict:
    values = dict(test_error=ws.test_error(model, K_test, y_test, check_input=False),
                  span_rule=ws.span_rule(model, K), xi_alpha_bound=ws.xi_alpha_bound(model, R2=R2),
                  sv_count_bound=ws.sv_count_bound(model))
    if with_bound:
        values["span_bound"] = ws.span_bound(model, K, D=D)
    return values


def run_sweep(args) -> dict:
    split = load_split(args.dataset)
    cache = ws.KernelCache(split.X_train, 1.0 / split.d, split.X_test)
    K, K_test, y, y_test = cache.train, cache.test, split.y_train, split.y_test
    D, R2 = cache.diameter, cache.radius2
    logs = np.linspace(-6.0, 10.0, args.grid)
    with CpuClock() as t_path:
        grid = sweep_class_grid(K, y, logs, logs, check_input=False)
    print(f"path sweep: {t_path.cpu:.1f}s cpu ({t_path.wall:.1f}s wall), {grid.sweep.n_events} events, "
          f"{grid.sweep.n_fallbacks} fallbacks", flush=True)
    t_lib_cpu = t_lib_wall = 0.0
    worst = {}
    max_df = 0.0
    for i, lp in enumerate(logs):
        for j, lm in enumerate(logs):
            C = ws.class_weights(y, 2.0 ** lp, 2.0 ** lm)
            with CpuClock() as t:
                ref = ws.fit_svm(K, y, C, check_input=False)
            t_lib_cpu += t.cpu
            t_lib_wall += t.wall
            got = grid.models[i][j]
            max_df = max(max_df, float(np.abs(got.decision_train - ref.decision_train).max()))
            with_bound = i % args.bound_every == 0 and j % args.bound_every == 0
            a = estimators(got, K, K_test, y_test, D, R2, with_bound)
            b = estimators(ref, K, K_test, y_test, D, R2, with_bound)
            for key in a:
                diff = abs(a[key] - b[key])
                if diff > worst.get(key, (-1.0,))[0]:
                    worst[key] = (diff, float(lp), float(lm))
        print(f"  row {i + 1}/{args.grid}: LIBSVM so far {t_lib_cpu:.1f}s cpu", flush=True)
    summary = dict(dataset=args.dataset, grid=f"{args.grid}x{args.grid}", bound_every=args.bound_every,
                   t_path_cpu=t_path.cpu,
                   t_path_wall=t_path.wall, t_libsvm_cpu=t_lib_cpu, t_libsvm_wall=t_lib_wall,
                   ratio=t_lib_cpu / t_path.cpu, events=grid.sweep.n_events,
                   fallbacks=grid.sweep.n_fallbacks, max_abs_decision_diff=max_df,
                   max_estimator_diff={k: dict(diff=v[0], log2_C_plus=v[1], log2_C_minus=v[2])
                                       for k, v in worst.items()})
    print(json.dumps(summary, indent=1))
    return summary


# ------------------------------------------------------------------------------- row ---

def run_row(args) -> dict:
    split = load_split(args.dataset)
    K, y = ws.KernelCache(split.X_train, 1.0 / split.d).train, split.y_train
    folds = ws.stratified_folds(y, 5, seed=0)
    fold_kernels = ws.FoldKernels(K, folds)
    lib = dict(train=0.0, cv=0.0)
    path = dict(train=0.0, cv=0.0)
    events, same_cv, restarts, rows = 0, 0, 0, []
    model = start = None
    for lm in np.arange(-6.0, 10.01, 0.5)[: args.models]:
        C = ws.class_weights(y, 2.0 ** args.log2_c_plus, 2.0 ** lm)
        with CpuClock() as t_fit:
            ref = ws.fit_svm(K, y, C, check_input=False)
        lib["train"] += t_fit.cpu
        with CpuClock() as t:
            cv_lib = ws.kfold_cv_error(K, y, C, folds=folds, fold_kernels=fold_kernels, check_input=False)
        lib["cv"] += t.cpu
        if model is not None:
            try:
                with CpuClock() as t:
                    res = follow_path(model, K, C, start=start, check_input=False)
                model, start = res.model, res.next_start
                path["train"] += t.cpu
                events += res.n_events
            except PathEventLimitError:  # as a grid job does: this model is trained afresh
                path["train"] += t.cpu
                model = None
                restarts += 1
        if model is None:  # the chain's first model (or a restart) is LIBSVM's, as in a grid job
            model, start = ref, None
            path["train"] += t_fit.cpu
        with CpuClock() as t:
            cv_path = kfold_cv_by_path(model, K, folds, check_input=False).cv_error
        path["cv"] += t.cpu
        same_cv += cv_path == cv_lib
        rows.append(dict(log2_C_minus=float(lm), cv_libsvm=cv_lib, cv_path=cv_path, events_so_far=events,
                         libsvm_s=lib["train"] + lib["cv"], path_s=path["train"] + path["cv"]))
        print(f"  log2 C- {lm:5.1f}: LIBSVM {rows[-1]['libsvm_s']:7.2f}s  path {rows[-1]['path_s']:7.2f}s "
              f"(events {events})  CV {cv_lib:.4f}/{cv_path:.4f}", flush=True)
    summary = dict(dataset=args.dataset, l=int(y.size), log2_C_plus=args.log2_c_plus, models=len(rows),
                   libsvm_train_cpu=lib["train"], libsvm_cv_cpu=lib["cv"], path_train_cpu=path["train"],
                   path_cv_cpu=path["cv"], ratio=sum(lib.values()) / sum(path.values()), events=events,
                   path_restarts=restarts, identical_cv_errors=same_cv)
    print(json.dumps(summary, indent=1))
    return dict(summary, rows=rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("exp7")
    p.add_argument("--sizes", type=int, nargs="+", default=[400, 800, 1200, 1600])
    p.add_argument("--datasets", type=int, default=10, help="data sets (seeds) per size")
    p.add_argument("--resolve-sample", type=int, default=30,
                   help="breakpoints re-solved by LIBSVM per data set (0: all)")
    p.add_argument("--d1-start", type=float, default=0.01, help="starting weight of group D1")
    for name in ("loo", "cv"):
        p = sub.add_parser(name)
        p.add_argument("--datasets", nargs="+", default=list(EXP1_SMALL))
        p.add_argument("--log2", type=float, nargs="+", default=list(GRID9),
                       help="log2 C+ = log2 C- values of the grid (default -6..10 step 2)")
        if name == "loo":
            p.add_argument("--sv-sample", type=int, default=0, help="SVs retrained per grid point (0: all)")
    p = sub.add_parser("sweep")
    p.add_argument("--dataset", default="splice")
    p.add_argument("--grid", type=int, default=33)
    p.add_argument("--bound-every", type=int, default=4, help="span bound on every k-th node per axis")
    p = sub.add_parser("row")
    p.add_argument("--dataset", default="ringnorm_d20_l4096")
    p.add_argument("--log2-c-plus", type=float, default=2.0, help="the row's log2 C+")
    p.add_argument("--models", type=int, default=33, help="the row's first N models (log2 C- = -6, -5.5, ...)")
    for p in sub.choices.values():
        p.add_argument("--tag", default="", help="suffix of the output file name")
    args = ap.parse_args(argv)
    run = dict(exp7=run_exp7, loo=run_loo, cv=run_cv, sweep=run_sweep, row=run_row)[args.cmd]
    with single_threaded():
        payload = run(args)
    payload["machine"] = machine_info()
    write(args.cmd + (f"-{args.tag}" if args.tag else ""), payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
