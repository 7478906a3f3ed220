"""The table of Experiment 7 (the exact solution path against re-solving at every breakpoint, cold by the engine
and hot-started by SMO; ``reference_path`` rows).
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from .common import TableResult, _environment_footer, _mean_sd

__all__ = ["EXP7_COLUMNS", "EXP7_MAXIMA", "EXP7_MEANS", "EXP7_MINIMA", "table_exp7"]


#: Experiment 7's quantities shown as mean +- sd over the data sets of a size, as the original study's Table 1
#: reports them (mean (sd))
EXP7_MEANS = ("t_path", "t_libsvm", "t_smo_hot", "n_events", "mean_margin_size", "n_resolved", "speedup",
              "speedup_smo_hot")
#: the speed-ups also shown as their smallest over the data sets (column ``<speed-up>_min``)
EXP7_MINIMA = ("speedup", "speedup_smo_hot")
#: the re-solvers' accuracies, shown as their largest over the data sets (the rows' largest over breakpoints)
EXP7_MAXIMA = ("max_abs_df", "max_abs_df_smo_hot")
#: the table's columns, in order: each speed-up's smallest beside its mean
EXP7_COLUMNS = ("t_path", "t_libsvm", "t_smo_hot", "n_events", "mean_margin_size", "n_resolved", "speedup",
                "speedup_min", "speedup_smo_hot", "speedup_smo_hot_min", *EXP7_MAXIMA, "n_fallbacks")
#: how the accuracies print: they span 1e-6 (the cold re-solves at tol 1e-7) to 1e-2 (the hot ones at 1e-3)
ACCURACY_FORMAT = ".1e"
COUNT_FORMAT = ".0f"
#: the times: the path's are hundredths of a second at n = 400, which two decimals would round to 0.02 +- 0.00
TIME_FORMAT = ".3f"
EXP7_TIMES = ("t_path", "t_libsvm", "t_smo_hot")


def table_exp7(df: pd.DataFrame, provenance: Iterable[Mapping] = (), name: str = "exp7_path") -> TableResult:
    """Experiment 7 per size n (= l): mean +- sd over the data sets of the path's and the re-solvers' CPU seconds,
    the events, the mean |M|, the re-solved breakpoints and the speed-up against each re-solver; each speed-up's
    smallest, each re-solver's largest |f_path - f| and the number of fallbacks."""
    out = []
    for n, sub in df.groupby("n", sort=True):
        row = {"dataset": sub["dataset"].iloc[0], "l": int(n), "n_replicates": int(len(sub))}
        for col in EXP7_MEANS:
            row[col], row[f"{col}_sd"] = _mean_sd(sub[col].to_numpy(dtype=float))
        for col in EXP7_MINIMA:
            row[f"{col}_min"] = float(sub[col].min())
        for col in EXP7_MAXIMA:
            row[col] = float(sub[col].max())
        row["n_fallbacks"] = int(sub["fallback"].sum())
        out.append(row)
    tols = ", ".join(f"{t:g}" for t in sorted(set(df["hot_tol"].astype(float)))) if "hot_tol" in df else "-"
    footer = [f"Hot-started smo's tolerance (hot_tol): {tols}", *_environment_footer(provenance)]
    return TableResult(name, pd.DataFrame(out), list(EXP7_COLUMNS), key_columns=["l"], footer=footer,
                       formats={**{c: ACCURACY_FORMAT for c in EXP7_MAXIMA}, **{c: TIME_FORMAT for c in EXP7_TIMES},
                                "n_fallbacks": COUNT_FORMAT})
