"""SVM+ hyperparameter selection: ``SVMPlusSearchCV`` (each pair of kernel widths' kernels computed once, walks along
C warm-started, CV folds from each point's model) against what a user would run instead, scikit-learn's
``GridSearchCV`` over ``SVMPlusClassifier`` (metadata routing for the privileged features; the LOO rule through
``make_loo_scorer`` and ``WholeTrainingSet``), on docs/svm_plus.md's worked example (bank_marketing, the call's
duration privileged), one thread, the two taking turns, process CPU time.

    .venv/bin/python benchmarks/bench_svm_plus_search.py --repeats 3
    .venv/bin/python benchmarks/bench_svm_plus_search.py --l 3000 --repeats 1   # K-fold CV only, on kernel rows

With ``--l``, a stratified draw of l training points (``bench_svm_plus_large.bank_split``) over a 3 x 1 x 1 grid
(C = 0.25, 1, 4), K-fold CV only: above ``SMO_POLISH_MAX_L`` points the classifier trains on kernel rows, where
its ``loo`` is refused, and the search's walks and folds start from their neighbours on rows.

Prints and writes (``--out``, default ``benchmarks/out/svm-plus-search.json``) each criterion's CPU seconds by
search, their ratio and whether both chose the same point with the same criterion values.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import sys

import numpy as np
import sklearn
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from wsvm_span.data import load_dataset
from wsvm_span.model_selection import SVMPlusSearchCV, WholeTrainingSet
from wsvm_span.svm_plus import SVMPlusClassifier, make_loo_scorer
from wsvm_span.utils.environment import single_threaded

SEARCHES = ("GridSearchCV", "SVMPlusSearchCV")
#: docs/svm_plus.md's grid with grid.py's C steps (2^-2 .. 2^8) and both SVM+ gammas
GRID = {"C": [0.25, 1.0, 4.0, 16.0, 64.0, 256.0], "gamma_plus": [0.25, 4.0], "priv_gamma": [1.0, 16.0]}
#: the grid of ``--l``
LARGE_GRID = {"C": [0.25, 1.0, 4.0], "gamma_plus": [1.0], "priv_gamma": [1.0]}


def search(way: str, criterion: str, X, y, X_priv, gamma: float, cv, grid, tol: float):
    if way == "SVMPlusSearchCV":
        return SVMPlusSearchCV(SVMPlusClassifier(gamma=gamma, tol=tol), grid, criterion=criterion, cv=cv,
                               refit=False).fit(X, y, X_privileged=X_priv)
    with sklearn.config_context(enable_metadata_routing=True):
        if criterion == "cv_error":
            estimator, scoring, splits = SVMPlusClassifier(gamma=gamma, tol=tol), None, cv
        else:
            estimator, scoring, splits = SVMPlusClassifier(gamma=gamma, tol=tol, loo="rule"), make_loo_scorer(), \
                WholeTrainingSet()
        return GridSearchCV(estimator.set_fit_request(X_privileged=True), grid, scoring=scoring, cv=splits,
                            refit=False).fit(X, y, X_privileged=X_priv)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0, help="bank_marketing's draw")
    parser.add_argument("--l", type=int, default=None, help="a stratified draw of l points (K-fold CV only)")
    parser.add_argument("--tol", type=float, default=1e-3,
                        help="the classifier's tol (the solutions kept unpolished on rows are at it: on bank_marketing "
                             "many points' f is within 1e-3 of 0 there, so CV errors at 1e-3 move with the start)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/svm-plus-search.json"))
    args = parser.parse_args(argv)
    if args.l is None:
        split = load_dataset("bank_marketing", seed=args.seed)
        X, y, X_priv = split.X_train, split.y_train, split.X_priv
        grid, criteria = GRID, ("loo_rule", "cv_error")
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_svm_plus_large import ROOT, bank_split

        mirror = os.environ.get("WSVM_DATA_MIRROR") or str(ROOT.parent / "shared" / "data")
        X, y, X_priv, _, _ = bank_split(args.l, args.seed, mirror)
        grid, criteria = LARGE_GRID, ("cv_error",)
    gamma = 1.0 / X.shape[1]
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    report = {"l": int(X.shape[0]), "grid": grid, "tol": args.tol, "repeats": args.repeats, "criteria": {}}
    with single_threaded():
        for criterion in criteria:
            cpu = {w: [] for w in SEARCHES}
            scores = {}
            for r in range(args.repeats):
                for way in (SEARCHES if r % 2 == 0 else SEARCHES[::-1]):  # taking turns
                    c0 = time.process_time()
                    fitted = search(way, criterion, X, y, X_priv, gamma, cv, grid, args.tol)
                    cpu[way].append(time.process_time() - c0)
                    scores[way] = np.asarray(fitted.cv_results_["mean_test_score"])
            median = {w: statistics.median(v) for w, v in cpu.items()}
            entry = {"cpu_s": cpu, "median_cpu_s": median,
                     "ratio_gridsearch_over_svmplussearch": median["GridSearchCV"] / median["SVMPlusSearchCV"],
                     "same_choice": int(np.argmax(scores["GridSearchCV"])) == int(np.argmax(scores["SVMPlusSearchCV"])),
                     "largest_score_difference": float(np.max(np.abs(scores["GridSearchCV"]
                                                                     - scores["SVMPlusSearchCV"])))}
            report["criteria"][criterion] = entry
            print(f"{criterion}: GridSearchCV {median['GridSearchCV']:.2f} s, SVMPlusSearchCV "
                  f"{median['SVMPlusSearchCV']:.2f} s (median CPU of {args.repeats}), ratio "
                  f"{entry['ratio_gridsearch_over_svmplussearch']:.2f}, same choice {entry['same_choice']}, largest "
                  f"score difference {entry['largest_score_difference']:.3g}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
