"""What an Experiment 8 (job kind ``lupi``) job of a config costs, by method and by component, on a sample
of its jobs and of their grid points (issue 26: the paper configuration's exp8 was priced "from the training
size alone" by ``check-config --estimate``).

For each chosen job (data set, ratio, training fraction, seed of ``experiments.exp8`` in CONFIG) it runs the
job's own ``prepare`` (kernels, D, CV folds, NW estimate) and then, for every method, the job's own model
evaluation (``lupi.evaluate_grid_point``) on every ``--stride``-th grid point of that method, one BLAS thread, and
records per model the process CPU time (``time.process_time``) and the row's component times (training,
weights, CV, span bound, LOO rule, exact LOO; wall seconds as the rows carry them). A method's CPU time over
its whole grid is projected as (its measured mean per model) x (its grid size); the job's as their sum plus
the set-up.

    python benchmarks/bench_lupi_cost.py --job mammographic 2:1 1.0 0 --stride 4
    python benchmarks/bench_lupi_cost.py --config config/paper.yaml --job spambase 2:1 1.0 0 \
        --methods learned --stride 8 --output benchmarks/out/lupi-cost-spambase.json
    python benchmarks/bench_lupi_cost.py --config config/paper.yaml --job w_mixture 1:2 1.0 0 \
        --methods svm_plus --stride 43 --baseline LOW_RANK_MAX_SHARE=0
    python benchmarks/bench_lupi_cost.py --config config/paper.yaml --job w_mixture 1:2 0.5 0 \
        --methods svm_plus --stride 43 --baseline POLISH_MAX_ITER=0

``--baseline NAME=VALUE`` evaluates every sampled model twice, taking turns, once with the SVM+ solver's
constant NAME (``svm_plus.solver``) set to VALUE and once as the code stands, and reports the CPU ratio and
whether the two rows agree: ``LOW_RANK_MAX_SHARE=0`` is the dense interior point alone (the route before the
low-rank one), ``POLISH_MAX_ITER=0`` the polish without its second try.

Writes a JSON file (default ``benchmarks/out/lupi-cost-<data set>-<ratio>-<fraction>-s<seed>.json``) with the
command, machine, load average, commit and every model's timings.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from wsvm_span.study import config as sc
from wsvm_span.study.grid import grid_point, grid_size
from wsvm_span.study.experiments import lupi
from wsvm_span.svm_plus import ActiveSetFailure, fit_svm_plus
from wsvm_span.svm_plus import solver as svm_plus_solver
from wsvm_span.utils.environment import machine_info, single_threaded

ROOT = Path(__file__).resolve().parents[1]
COMPONENTS = ("t_train", "t_cv", "t_span_bound", "t_loo_rule", "t_loo", "t_val")


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def find_job(jobs, dataset: str, ratio: str, fraction: float, seed: int):
    for job in jobs:
        if (job.dataset, job.ratio, job.seed) == (dataset, ratio, seed) and abs(job.train_fraction - fraction) < 1e-9:
            return job
    raise SystemExit(f"no exp8 job {dataset} {ratio} fraction {fraction} seed {seed} in the config")


def job_arguments(ap: argparse.ArgumentParser, stride: int) -> None:
    """``--config``, ``--job DATASET RATIO FRACTION SEED``, ``--stride`` and ``--output``: the job a benchmark measures."""
    ap.add_argument("--config", default=str(ROOT / "config" / "paper.yaml"))
    ap.add_argument("--job", nargs=4, metavar=("DATASET", "RATIO", "FRACTION", "SEED"), required=True)
    ap.add_argument("--stride", type=int, default=stride, help="every n-th grid point (of each method measured)")
    ap.add_argument("--output", default=None)


def load_job(config: str, job_args, experiment: str = "exp8"):
    """(config, job) of ``--config`` and ``--job DATASET RATIO FRACTION SEED``."""
    with open(config, encoding="utf-8") as fh:
        cfg = sc.validate_config(yaml.safe_load(fh))
    dataset, ratio, fraction, seed = job_args[0], job_args[1], float(job_args[2]), int(job_args[3])
    return cfg, find_job(lupi.plan(cfg, experiment), dataset, ratio, fraction, seed)


def output_path(output: str | None, prefix: str, job) -> Path:
    """``--output``, or ``benchmarks/out/<prefix>-<data set>-<ratio>-<fraction>-s<seed>.json``; its folder made."""
    out = Path(output or ROOT / "benchmarks" / "out" /
               f"{prefix}-{job.dataset}-{lupi.ratio_variant(job.ratio)}-{job.train_fraction:g}-s{job.seed}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def write_result(out: Path, job, result: dict) -> None:
    """The result with the command, the job's slot, the commit and the machine, as JSON."""
    out.write_text(json.dumps({"command": " ".join([Path(sys.executable).name, *sys.argv]), "slot": job.slot,
                               "commit": _commit(), "machine": machine_info(), **result}, indent=1, default=float))


def _evaluate(job, problem, method, point, setting=None):
    """(``lupi.GridPointResult``, CPU seconds, wall seconds) of one model; ``setting``: (name, value) of an SVM+
    solver constant to evaluate it under (restored after)."""
    name, value = setting or (None, None)
    kept = getattr(svm_plus_solver, name) if name else None
    if name:
        setattr(svm_plus_solver, name, value)
    try:
        c0, w0 = time.process_time(), time.perf_counter()
        with single_threaded():
            result = lupi.evaluate_grid_point(job, problem, method, point)
        return result, time.process_time() - c0, time.perf_counter() - w0
    finally:
        if name:
            setattr(svm_plus_solver, name, kept)


def _baseline(job, problem, method, point, setting) -> dict:
    c0 = time.process_time()
    try:
        result, cpu, _ = _evaluate(job, problem, method, point, setting)
    except RuntimeError as exc:  # e.g. the dense QP not solved (Clarabel: InsufficientProgress), nothing to fall back on
        print(f"    baseline failed: {exc}", flush=True)
        return {"baseline_cpu_s": time.process_time() - c0, "baseline_failed": str(exc)}
    return {"baseline_cpu_s": cpu, "baseline_row": result.evaluation.as_dict()}


def parse_setting(text: str):
    """'NAME=VALUE' -> (NAME, VALUE as the constant's type), NAME a constant of ``svm_plus.solver``."""
    name, sep, value = text.partition("=")
    if not sep or not hasattr(svm_plus_solver, name) or not name.isupper():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE with NAME a constant of wsvm_span.svm_plus.solver, got {text!r}")
    return name, type(getattr(svm_plus_solver, name))(value)


def previous_default(K, K_priv, y, C: float, gamma: float):
    """SVM+ by the default route before issue 42 made the decomposition route the default: the active-set method
    from the plain SVM's sets, the QP route (polished) where it fails. The baseline of the SVM+ route benchmarks."""
    try:
        return fit_svm_plus(K, K_priv, y, C, gamma, solver="active-set", check_input=False)
    except ActiveSetFailure:
        return fit_svm_plus(K, K_priv, y, C, gamma, solver="qp", check_input=False)


def svm_plus_models(job, problem, stride: int):
    """(grid index, grid point, K, K_priv, the SVM+ model) for every ``stride``-th SVM+ grid point of a job, trained
    as the job trains it; one BLAS thread while the caller consumes them."""
    axes = job.grids["svm_plus"]
    with single_threaded():
        for i in range(0, grid_size(axes), stride):
            point = grid_point(axes, i)
            K = problem.kernels[point["log2_kernel_scale"]].K
            K_priv = problem.priv_kernels[point["log2_priv_gamma"]]
            model = fit_svm_plus(K, K_priv, problem.y, 2.0 ** point["log2_C"], 2.0 ** point["log2_gamma_plus"],
                                 check_input=False)
            yield i, point, K, K_priv, model


def svm_plus_main(argv, description: str, prefix: str, stride: int, measure) -> int:
    """The command of a benchmark over a job's sampled SVM+ grid points: ``--config``, ``--job``, ``--stride``,
    ``--output``; ``measure(job, problem, stride)`` returns {"summary": ..., ...}, written as JSON
    (``output_path(..., prefix, job)``) with its summary printed."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    job_arguments(ap, stride=stride)
    args = ap.parse_args(argv)
    cfg, job = load_job(args.config, args.job)
    if "svm_plus" not in job.grids:
        raise SystemExit(f"{job.slot} has no SVM+ grid (its data set has no privileged features)")
    result = measure(job, lupi.prepare(job, sc.runtime_settings(cfg, ROOT)), args.stride)
    write_result(output_path(args.output, prefix, job), job, result)
    print(json.dumps(result["summary"], indent=1))
    return 0


def _same_row(a: dict, b: dict) -> bool:
    """The rows' results agree (timings and the solver's name aside)."""
    keys = [k for k in a if not k.startswith("t_") and k not in ("engine", "solver")]
    return all(a[k] == b[k] or (isinstance(a[k], float) and isinstance(b[k], float)
                                and (np.isnan(a[k]) and np.isnan(b[k]) or abs(a[k] - b[k]) <= 1e-9 * max(1.0, abs(a[k]))))
               for k in keys)


def measure(job, problem, methods, stride: int, save=lambda out: None, baseline=None) -> dict:
    """Every method's sampled models; ``save(out)`` after each method (a run cut short keeps what it measured)."""
    out = {}
    for method, axes in job.grids.items():
        if methods and method not in methods:
            continue
        n = grid_size(axes)
        models = []
        for i in range(0, n, stride):
            point = grid_point(axes, i)
            measured = {}
            if baseline:  # taking turns: the baseline first on even models, second on odd ones
                if len(models) % 2 == 0:
                    measured = _baseline(job, problem, method, point, baseline)
                result, cpu, wall = _evaluate(job, problem, method, point)
                if len(models) % 2 == 1:
                    measured = _baseline(job, problem, method, point, baseline)
                if "baseline_row" in measured:
                    measured["same_row_as_baseline"] = _same_row(result.evaluation.as_dict(),
                                                                 measured.pop("baseline_row"))
            else:
                result, cpu, wall = _evaluate(job, problem, method, point)
            row, t_weights = result.evaluation.as_dict(), result.t_weights
            models.append({"index": i, "point": point, "cpu_s": cpu, "wall_s": wall, "t_weights": t_weights,
                           "n_unconverged_inner": result.n_unconverged_inner,
                           "n_unconverged_fits": result.n_unconverged_fits,
                           **{c: (None if not np.isfinite(row[c]) else row[c]) for c in COMPONENTS},
                           "n_sv": row["n_sv"], "n_inbound": row["n_inbound"], "engine": row["engine"], **measured})
            print(f"  {method} m{i} {point}: cpu {cpu:.3f} s (train {row['t_train']:.3f}, weights {t_weights:.3f}, "
                  f"cv {row['t_cv']:.3f}, loo {row['t_loo']:.3f})", flush=True)
        cpu = np.array([m["cpu_s"] for m in models])
        out[method] = {"grid_size": n, "measured": len(models), "cpu_s_mean": float(cpu.mean()),
                       "cpu_s_max": float(cpu.max()), "cpu_s_projected": float(cpu.mean() * n),
                       "component_share": {c: float(sum(m[c] or 0.0 for m in models) / max(sum(m["wall_s"] for m in models), 1e-12))
                                           for c in (*COMPONENTS, "t_weights")},
                       "models": models}
        print(f"{method}: {len(models)}/{n} models, mean {cpu.mean():.3f} s CPU, projected {cpu.mean() * n:.1f} s",
              flush=True)
        if baseline:
            base = np.array([m["baseline_cpu_s"] for m in models])
            same = sum(m.get("same_row_as_baseline", False) for m in models)
            failed = sum("baseline_failed" in m for m in models)
            out[method]["baseline"] = {"setting": f"{baseline[0]}={baseline[1]}", "cpu_s_mean": float(base.mean()),
                                       "cpu_ratio": float(base.sum() / cpu.sum()), "same_rows": same, "failed": failed}
            print(f"{method}: baseline {baseline[0]}={baseline[1]} mean {base.mean():.3f} s CPU, ratio "
                  f"{base.sum() / cpu.sum():.2f}x, rows agreeing {same}/{len(models)}, baseline failed on {failed}",
                  flush=True)
        save(out)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    job_arguments(ap, stride=1)
    ap.add_argument("--experiment", default="exp8")
    ap.add_argument("--methods", nargs="*", default=None, help="only these methods (default: every one of the job)")
    ap.add_argument("--baseline", type=parse_setting, default=None, metavar="NAME=VALUE",
                    help="also evaluate each model with the SVM+ solver's constant NAME set to VALUE, taking turns "
                         "(LOW_RANK_MAX_SHARE=0: the dense interior point; POLISH_MAX_ITER=0: no second polish)")
    args = ap.parse_args(argv)
    cfg, job = load_job(args.config, args.job, args.experiment)
    settings = sc.runtime_settings(cfg, ROOT)
    print(f"{job.slot}: l={job.n_train} n_val={job.n_val} loo={job.loo} models "
          f"{ {m: grid_size(a) for m, a in job.grids.items()} }", flush=True)
    c0 = time.process_time()
    problem = lupi.prepare(job, settings)
    setup_cpu = time.process_time() - c0
    load0 = os.getloadavg()
    out = output_path(args.output, "lupi-cost", job)

    def save(methods):
        result = {
            "command": " ".join([Path(sys.executable).name, *sys.argv]), "commit": _commit(),
            "machine": machine_info(), "load_average": {"start": load0, "end": os.getloadavg()}, "slot": job.slot,
            "l": job.n_train, "n_val": job.n_val, "loo": job.loo, "setup_cpu_s": setup_cpu, "stride": args.stride,
            "methods": methods, "complete": set(methods) == set(job.grids) if not args.methods else
            set(methods) == set(args.methods) & set(job.grids),
            "job_cpu_s_projected": setup_cpu + sum(m["cpu_s_projected"] for m in methods.values()),
        }
        out.write_text(json.dumps(result, indent=1, default=float))
        return result

    result = save(measure(job, problem, set(args.methods) if args.methods else None, args.stride, save,
                          args.baseline))
    print(f"setup {setup_cpu:.2f} s CPU; methods measured projected to {result['job_cpu_s_projected']:.1f} s CPU -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
