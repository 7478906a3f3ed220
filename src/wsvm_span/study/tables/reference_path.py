"""The table of Experiment 7 (the exact solution path against re-solving at every breakpoint by the engine,
``reference_path`` rows).
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
    """Experiment 7 per size n (= l): medians over the data sets of the path's and the re-solver's CPU seconds,
    the events, the mean |M|, the re-solved breakpoints and the speed-up; the smallest speed-up, the largest
    |f_path - f_re-solved| at the re-solved breakpoints (units of 1e-6) and the number of fallbacks."""
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
    return TableResult(name, data, cols, key_columns=["l"], footer=_environment_footer(provenance))
