"""Sampling trainer vs full LIBSVM on large training sets (issue 12; groundwork of exp9).

Part "training": wall time and peak memory of
  * sampling            fit_sampling (random-sampling.md), LIBSVM on each sample
  * libsvm-rbf          scikit-learn's LIBSVM computing its own RBF, cache_size = 1000 MB
  * libsvm-precomputed  rbf_kernel + fit_svm on the l x l kernel, where it fits (l <= 2^14)
on skin_nonskin (all 245,057 rows, and nested random subsets of 2^12 .. 2^17 rows), the
ringnorm variant of Experiment 6 (d = 20, l = 2^12 .. 2^17) and mnist_2_9 (l = 11,907), for
three values of C (C+ = C-), with rounds, final sample size, n_sv, and the largest difference
of the training decision values from libsvm-rbf's.

Part "span": the span-rule grid on skin_nonskin (all rows) over the same C values: the
span-rule from SV kernel blocks (span_rule_from_svs) on the sampled and on the LIBSVM model,
against 5-fold CV of the grid with LIBSVM, projected from measured fold fits (--cv-folds of
the 5 per grid point are run; all 5 give the real CV time and error).

Every configuration runs in its own process (one thread: BLAS and LIBSVM), under a time
limit (--limit, default 1200 s): "did not finish" is recorded as such, and larger l of the
same data set, C and method are then not tried. Peak memory is the worker's max RSS minus
its RSS before the fit (engines.measure.measure_fit: the function the exp9 job measures with; the
training sets come from the exp9 job's loader). Results accumulate in benchmarks/out/sampling.json (a rerun
skips what is there); the table goes to sampling-table.md and the figure to sampling-time.png.

Usage:
  python benchmarks/bench_sampling.py                                  # everything (hours)
  python benchmarks/bench_sampling.py --datasets skin --log2-sizes 12,13 --C 1,32 --no-skin-all
  python benchmarks/bench_sampling.py --part span --cv-folds 1
  python benchmarks/bench_sampling.py --report                         # table + figure only
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import wsvm_span as ws  # noqa: E402
from wsvm_span.engines.measure import cv_fold, load_average, measure_fit  # noqa: E402
from wsvm_span.span import span_rule_from_svs  # noqa: E402
from wsvm_span.study.experiments.sampling import large_training_set  # noqa: E402
from wsvm_span.utils.atomic import atomic_write  # noqa: E402
from wsvm_span.utils.environment import library_versions, machine_info, single_threaded  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
#: training sets saved by the parent for the workers
DATA_DIR = OUT / "sampling-data"
MIRROR = os.environ.get("WSVM_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
SKIN_ALL = 245_057
METHODS = ("sampling", "libsvm-rbf", "libsvm-precomputed")
#: LIBSVM's kernel row cache for libsvm-rbf and for each sample of the sampling engine
CACHE_MB = 1000
#: largest l given the precomputed kernel (8 l^2 bytes: 2 GiB at 2^14 on a shared 23 GiB machine)
PRECOMPUTED_MAX_L = 2**14


# --------------------------------------------------------------------------------------------
# worker side: one configuration per process
# --------------------------------------------------------------------------------------------
#: the benchmark's method names -> feature engines
ENGINES = {"sampling": "sampling", "libsvm-rbf": "sklearn-rbf", "libsvm-precomputed": "sklearn"}
#: the registry's names of the benchmark's data sets
DATASET_NAMES = {"skin": "skin_nonskin", "mnist": "mnist_2_9"}


def load(dataset: str, l: int, seed: int):
    """(X, y, gamma) of l training points, from the exp9 job's loader (skin: nested seeded subsets of all
    245,057 rows pooled, none held out: the benchmark compares training decision values)."""
    name = f"ringnorm_d20_l{l}" if dataset == "ringnorm" else DATASET_NAMES[dataset]
    size = "all" if dataset == "mnist" or (dataset == "skin" and l == SKIN_ALL) else l
    X, y, _, _, gamma, _ = large_training_set(name, size, seed, test_size=0, mirror=MIRROR)
    return X, y, gamma


def data_file(dataset: str, l: int, seed: int) -> Path:
    """The training set saved once by the parent, so that a worker's memory is its own
    training's, not the parsing of the whole data set."""
    path = DATA_DIR / f"{dataset}-l{l}-seed{seed}.npz"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        X, y, gamma = load(dataset, l, seed)
        with atomic_write(path, "wb") as fh:
            np.savez(fh, X=X, y=y, gamma=gamma)
    return path


def read_data(path: str):
    with np.load(path) as z:
        return np.ascontiguousarray(z["X"]), z["y"].copy(), float(z["gamma"])


def run_fit(cfg: dict) -> dict:
    X, y, gamma = read_data(cfg["data"])
    out = {"l_actual": int(y.size), "load_start": load_average()}
    m = measure_fit(X, y, cfg["C"], gamma=gamma, engine=ENGINES[cfg["method"]], seed=cfg["seed"], cache_mb=CACHE_MB)
    model, cert = m.model, m.certificate
    # CPU seconds beside wall seconds: the machine is shared, and one thread's CPU time is what the fit
    # costs whatever else runs
    out.update(t_fit=m.t_train, cpu_fit=m.cpu_train, peak_mem_mb=m.peak_mem_mb, certified=cert.passed,
               tol_effective=cert.tol_effective, max_violation=max(cert.max_zero, cert.max_inbound, cert.max_bounded))
    if m.record is not None:
        out.update(rounds=m.record.n_rounds, final_r=m.record.final_sample_size,
                   final_distinct=m.record.final_n_distinct,
                   round_log=[[r.sample_size, r.n_distinct, r.n_sv, r.n_violators, r.outcome,
                               round(r.t_solve, 3), round(r.t_check, 3)] for r in m.record.rounds])
    if cfg.get("span"):
        with single_threaded():
            t1 = time.perf_counter()
            out["span_rule"] = span_rule_from_svs(model, X, gamma)
            out["t_span"] = time.perf_counter() - t1
    out.update(n_sv=int(model.support.size), n_inbound=int(model.inbound.size), n_bounded=int(model.bounded.size),
               load_end=load_average())
    np.save(cfg["save"], model.decision_train)
    return out


def run_cv_fold(cfg: dict) -> dict:
    X, y, gamma = read_data(cfg["data"])
    folds = ws.stratified_folds(y, 5, seed=cfg["seed"])
    seconds, errors, n_held = cv_fold(X, y, cfg["C"], gamma=gamma, folds=folds, fold=cfg["fold"], cache_mb=CACHE_MB)
    return {"t_fold": seconds, "errors": errors, "n_held": n_held, "load_start": load_average()}


# --------------------------------------------------------------------------------------------
# parent side: configurations, time limits, the results file, table and figure
# --------------------------------------------------------------------------------------------
def key(cfg: dict) -> str:
    if cfg["task"] == "cvfold":
        return f"cvfold/skin/C={cfg['C']:g}/fold={cfg['fold']}"
    return f"fit/{cfg['dataset']}/l={cfg['l']}/C={cfg['C']:g}/{cfg['method']}"


def run_config(cfg: dict, limit: float) -> dict:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, __file__, "--worker", json.dumps(cfg)],
                              capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"status": "did not finish", "limit_s": limit, "wall_s": time.perf_counter() - t0}
    if proc.returncode != 0:
        return {"status": "failed", "stderr": proc.stderr[-2000:]}
    return {"status": "ok", **json.loads(proc.stdout.strip().splitlines()[-1])}


def load_results(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def save_results(path: Path, results: dict) -> None:
    with atomic_write(path, "w") as fh:
        json.dump(results, fh, indent=1, sort_keys=True)


def training_configs(args) -> list[dict]:
    sizes = [2**k for k in args.log2_sizes]
    plan = {"skin": sizes + ([SKIN_ALL] if args.skin_all else []), "ringnorm": sizes, "mnist": [11_907]}
    cfgs = []
    for dataset in args.datasets:
        for C in args.C:
            for l in plan[dataset]:
                for method in args.methods:
                    if method == "libsvm-precomputed" and l > PRECOMPUTED_MAX_L:
                        continue
                    span = dataset == "skin" and l == SKIN_ALL and method != "libsvm-precomputed"
                    cfgs.append({"task": "fit", "dataset": dataset, "l": l, "C": C,
                                 "method": method, "seed": args.seed, "span": span})
    return cfgs


def run_all(cfgs: list[dict], results: dict, args, path: Path) -> None:
    tmp = OUT / "sampling-decisions"
    tmp.mkdir(parents=True, exist_ok=True)
    for cfg in cfgs:
        k = key(cfg)
        if k in results:
            continue
        if cfg["task"] == "fit":
            smaller = [v for kk, v in results.items() if kk.startswith(f"fit/{cfg['dataset']}/")
                       and kk.endswith(f"/C={cfg['C']:g}/{cfg['method']}")
                       and v.get("l", 0) < cfg["l"] and v["status"] in ("did not finish", "skipped")]
            if smaller:
                results[k] = {"status": "skipped", "l": cfg["l"],
                              "why": f"l={min(v['l'] for v in smaller)} did not finish"}
                save_results(path, results)
                continue
            cfg["save"] = str(tmp / (k.replace("/", "_") + ".npy"))
        cfg["data"] = str(data_file(cfg.get("dataset", "skin"), cfg.get("l", SKIN_ALL), cfg["seed"]))
        print(f"{k} ...", end=" ", flush=True)
        res = run_config(cfg, args.limit)
        res.update({kk: cfg[kk] for kk in ("task", "dataset", "l", "C", "method", "fold") if kk in cfg})
        results[k] = res
        save_results(path, results)
        seconds = res.get("t_fit", res.get("t_fold", res.get("wall_s", 0.0)))
        print(res["status"], f"{seconds:.1f}s", flush=True)


def compare_decisions(results: dict) -> None:
    """max |f - f_libsvm-rbf| over the training points, for the other methods."""
    tmp = OUT / "sampling-decisions"
    for k, v in results.items():
        if v.get("task") != "fit" or v["status"] != "ok" or v["method"] == "libsvm-rbf":
            continue
        ref = k.rsplit("/", 1)[0] + "/libsvm-rbf"
        if results.get(ref, {}).get("status") != "ok":
            continue
        a = np.load(tmp / (k.replace("/", "_") + ".npy"))
        b = np.load(tmp / (ref.replace("/", "_") + ".npy"))
        v["max_abs_df_vs_libsvm_rbf"] = float(np.abs(a - b).max())
        v["n_sv_libsvm_rbf"] = results[ref]["n_sv"]


def fmt_time(v: dict | None) -> str:
    if v is None:
        return ""
    if v["status"] == "ok":
        return f"{v['t_fit']:.1f}"
    return {"did not finish": f"DNF (>{v.get('limit_s', 0):.0f})", "skipped": "not run"}.get(
        v["status"], v["status"])


def table(results: dict) -> str:
    fits = {}
    for v in results.values():
        if v.get("task") == "fit":
            fits.setdefault((v["dataset"], v["C"], v["l"]), {})[v["method"]] = v
    lines = [
        "| data | C | l | n_sv (n*) | sampling s | rounds | final r (distinct) | peak MiB "
        "| libsvm-rbf s | MiB | precomputed s (kernel included) | MiB | sampling / libsvm-rbf | max abs df "
        "| load |",
        "|" + "---|" * 15,
    ]
    for (dataset, C, l), m in sorted(fits.items()):
        s, r, p = m.get("sampling"), m.get("libsvm-rbf"), m.get("libsvm-precomputed")
        ok = [v for v in (r, s, p) if v and v["status"] == "ok"]
        nsv = f"{ok[0]['n_sv']} ({ok[0]['n_inbound']})" if ok else ""
        mem = lambda v: f"{v['peak_mem_mb']:.0f}" if v and v["status"] == "ok" else ""  # noqa: E731
        ratio = (f"{s['t_fit'] / r['t_fit']:.2f}" if s and r and s["status"] == r["status"] == "ok" else "")
        if s and r and "cpu_fit" in s and "cpu_fit" in r:
            ratio += f" (CPU {s['cpu_fit'] / r['cpu_fit']:.2f})"
        pre = fmt_time(p)
        df = (f"{s['max_abs_df_vs_libsvm_rbf']:.1e}" if s and "max_abs_df_vs_libsvm_rbf" in s else "")
        load = max((v.get("load_start", 0.0) for v in ok), default=0.0)
        lines.append(
            f"| {dataset} | {C:g} | {l} | {nsv} | {fmt_time(s)} | {s.get('rounds', '') if s else ''} "
            f"| {(str(s['final_r']) + ' (' + str(s['final_distinct']) + ')') if s and s['status'] == 'ok' else ''} "
            f"| {mem(s)} | {fmt_time(r)} | {mem(r)} | {pre} | {mem(p)} | {ratio} | {df} | {load:.1f} |")
    return "\n".join(lines)


def span_table(results: dict) -> str:
    lines = ["| C | n_sv (n*) | span-rule | sampling fit + span s | libsvm-rbf fit + span s "
             "| CV folds run | CV fold fit+predict s (mean) | 5-fold CV s (x5 projected or measured) "
             "| CV error |", "|" + "---|" * 9]
    for C in sorted({v["C"] for v in results.values() if v.get("task") == "cvfold"}
                    | {v["C"] for v in results.values() if v.get("dataset") == "skin" and v.get("l") == SKIN_ALL}):
        s = results.get(f"fit/skin/l={SKIN_ALL}/C={C:g}/sampling", {})
        r = results.get(f"fit/skin/l={SKIN_ALL}/C={C:g}/libsvm-rbf", {})
        folds = [v for v in results.values() if v.get("task") == "cvfold" and v["C"] == C and v["status"] == "ok"]
        src = s if s.get("status") == "ok" else r
        t_fold = np.mean([f["t_fold"] for f in folds]) if folds else float("nan")
        cv_err = (f"{sum(f['errors'] for f in folds) / sum(f['n_held'] for f in folds):.5f}"
                  if len(folds) == 5 else "")
        span_t = lambda v: f"{v['t_fit'] + v['t_span']:.1f} ({v['t_span']:.2f} span)" if v.get("status") == "ok" else fmt_time(v or None)  # noqa: E731
        lines.append(
            f"| {C:g} | {src.get('n_sv', '')} ({src.get('n_inbound', '')}) | {src.get('span_rule', float('nan')):.5f} "
            f"| {span_t(s)} | {span_t(r)} | {len(folds)} | {t_fold:.1f} | {5 * t_fold:.1f}"
            f"{'' if len(folds) == 5 else ' (projected)'} | {cv_err} |")
    return "\n".join(lines)


def figure(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = [d for d in ("skin", "ringnorm", "mnist") if any(v.get("dataset") == d for v in results.values())]
    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 4), squeeze=False)
    styles = {"sampling": "o-", "libsvm-rbf": "s--", "libsvm-precomputed": "^:"}
    for ax, dataset in zip(axes[0], datasets):
        Cs = sorted({v["C"] for v in results.values() if v.get("dataset") == dataset})
        for method, style in styles.items():
            for j, C in enumerate(Cs):
                pts = sorted((v["l"], v["t_fit"]) for v in results.values()
                             if v.get("dataset") == dataset and v.get("method") == method
                             and v["C"] == C and v["status"] == "ok" and v.get("task") == "fit")
                if pts:
                    ax.plot(*zip(*pts), style, color=f"C{j}", label=f"{method}, C={C:g}")
        ax.set(xscale="log", yscale="log", xlabel="l (training points)", ylabel="training time (s)",
               title=dataset)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--part", choices=("training", "span", "all"), default="all")
    ap.add_argument("--datasets", type=lambda s: s.split(","), default=["skin", "mnist", "ringnorm"])
    ap.add_argument("--log2-sizes", type=lambda s: [int(x) for x in s.split(",") if x],
                    default=list(range(12, 18)))
    ap.add_argument("--no-skin-all", dest="skin_all", action="store_false",
                    help="leave out skin_nonskin's full 245,057 rows from the training part")
    ap.add_argument("--C", type=lambda s: [float(x) for x in s.split(",")], default=[1.0, 32.0, 1024.0])
    ap.add_argument("--methods", type=lambda s: s.split(","), default=list(METHODS))
    ap.add_argument("--cv-folds", type=int, default=1, help="CV folds run per grid point (1-5)")
    ap.add_argument("--limit", type=float, default=1200.0, help="seconds per configuration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--results", type=Path, default=OUT / "sampling.json")
    ap.add_argument("--report", action="store_true", help="only write the table and figure")
    args = ap.parse_args(argv)

    if args.worker:
        cfg = json.loads(args.worker)
        print(json.dumps(run_fit(cfg) if cfg["task"] == "fit" else run_cv_fold(cfg)))
        return 0

    OUT.mkdir(parents=True, exist_ok=True)
    results = load_results(args.results)
    if not args.report:
        print(f"machine: {machine_info()}; load average {os.getloadavg()}", flush=True)
        cfgs = []
        if args.part in ("training", "all"):
            cfgs += training_configs(args)
        if args.part in ("span", "all"):
            cfgs += [{"task": "fit", "dataset": "skin", "l": SKIN_ALL, "C": C, "method": m,
                      "seed": args.seed, "span": True} for C in args.C for m in ("sampling", "libsvm-rbf")]
            cfgs += [{"task": "cvfold", "C": C, "fold": k, "seed": args.seed}
                     for C in args.C for k in range(args.cv_folds)]
        results.setdefault("_meta", {"machine": machine_info(), "versions": library_versions()})
        unique = {key(c): c for c in cfgs}  # the span part reuses the training part's fits
        run_all(list(unique.values()), results, args, args.results)
    body = {k: v for k, v in results.items() if not k.startswith("_")}
    compare_decisions(body)
    report = (f"Training (seconds, one thread; {results.get('_meta', {}).get('machine', '')})\n\n"
              f"{table(body)}\n\nSpan-rule grid on skin_nonskin, all {SKIN_ALL} rows\n\n{span_table(body)}\n")
    (OUT / "sampling-table.md").write_text(report)
    figure(body, OUT / "sampling-time.png")
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
