"""The table of Experiment 7 (the exact solution path against LIBSVM re-solving, ``reference_path`` rows).
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from .common import TableResult, _environment_footer

__all__ = ["table_exp7"]


#: Experiment 7's medians over the data sets of a size (the other columns are a minimum, a maximum, a count)
EXP7_MEDIANS = ("t_path", "t_libsvm", "n_events", "mean_margin_size", "n_resolved", "speedup")


def table_exp7(df: pd.DataFrame, provenance: Iterable[Mapping] = (), name: str = "exp7_path") -> TableResult:
    """Experiment 7 per size n (= l): medians over the data sets of the path's and LIBSVM's CPU seconds, the
    events, the mean |M|, the re-solved breakpoints and the speed-up; the smallest speed-up, the largest
    |f_path - f_LIBSVM| at the re-solved breakpoints (units of 1e-6) and the number of fallbacks."""
    out = []
    for n, sub in df.groupby("n", sort=True):
        row = {"dataset": sub["dataset"].iloc[0], "l": int(n), "n_replicates": int(len(sub))}
        for col in EXP7_MEDIANS:
            row[col] = float(np.median(sub[col].to_numpy(dtype=float)))
        row["speedup_min"] = float(sub["speedup"].min())
        row["max_abs_df_e6"] = 1e6 * float(sub["max_abs_df"].max())
        row["n_fallbacks"] = int(sub["fallback"].sum())
        out.append(row)
    cols = [*EXP7_MEDIANS, "speedup_min", "max_abs_df_e6", "n_fallbacks"]
    data = pd.DataFrame(out)
    for col in cols:
        data[f"{col}_sd"] = math.nan  # medians, extremes and counts: no sd
    caption = ("Four Gaussians, cost-weighted path (group D1's weight from ~0 to 10, D2 at 10), per size l = n: "
               "medians over the data sets (column Replicates) of the CPU seconds (one thread) of the exact solution "
               "path and of LIBSVM re-solving (cold) at every breakpoint (scaled from the re-solved breakpoints where "
               "fewer than all were re-solved), of the path's events and mean |M|, of the re-solved breakpoints and "
               "of the speed-up; the smallest speed-up; the largest |f_path - f_LIBSVM| over the training points at "
               "the re-solved breakpoints (units of 1e-6: LIBSVM's accuracy; up to a constant where no SV is free, so "
               "that b is not unique: LIBSVM takes the middle of the optimal interval, the path an end); the paths "
               "that fell back to LIBSVM.")
    return TableResult(name, data, cols, caption, key_columns=["l"], footer=_environment_footer(provenance))
