"""Fit the per-method cost laws of Experiment 8 (``lupi.METHOD_LAWS``) on the committed paper-size parts' rows, and
say how well they price each part: the fit behind the constants, written down so that a later session refits them
on more parts the same way.

For every ``reproduced/paper-exp8-*`` part with rows: each model's seconds are its rows' timings (everything but
the exact LOO, ``t_loo`` apart), wall seconds scaled to one core by the part's measured CPU over its jobs' wall
(the jobs' own CPU that its README records, over ``provenance.json``'s summed job wall: below 1 where the part
shared the machine). Per (part, data set, l, method) the mean model seconds; per method, least squares in log-log
of a (l / 100)^b over those means, for everything but the exact LOO and for the exact LOO. A (data set, method)
with a law of its own (``lupi.DATASET_METHOD_LAWS``) is left out of its method's fit.

    python benchmarks/fit_lupi_laws.py                      # every part with rows
    python benchmarks/fit_lupi_laws.py --parts a b d e f g h i j k l --json benchmarks/out/lupi-laws.json

``lupi.METHOD_LAWS`` is this fit on the parts ``lupi.METHOD_LAWS_PARTS`` names (``tests/test_study_lupi.py`` checks
it): refit by running it on more parts, then set both.

Prints the laws (as ``METHOD_LAWS`` entries), their in-sample error per group, and per part the models' summed
seconds the laws price against the rows' (scaled) seconds.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from wsvm_span.study.experiments import lupi
from wsvm_span.study.results_schema import read_rows

ROOT = Path(__file__).resolve().parents[1]
REPRODUCED = ROOT / "reproduced"
#: the README's CPU row: "... (the jobs') own CPU 2,276 s ..."
JOBS_CPU = re.compile(r"own CPU ([\d,]+) s")


def part_scale(folder: Path) -> float:
    """The part's measured CPU over its jobs' summed wall seconds, at most 1."""
    found = JOBS_CPU.search((folder / "README.md").read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"{folder}/README.md records no \"own CPU N s\"")
    wall = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))["wall_s_total"]
    return min(1.0, float(found.group(1).replace(",", "")) / float(wall))


def model_seconds(parts: list[str] | None) -> pd.DataFrame:
    """Mean scaled seconds per model (``base``: all but the exact LOO; ``loo``: the exact LOO, NaN where not
    computed) per (part, dataset, l, method)."""
    frames = []
    for folder in sorted(REPRODUCED.glob("paper-exp8-*")):
        part = folder.name.removeprefix("paper-exp8-")
        rows_file = folder / "rows" / "exp8.parquet"
        if not rows_file.is_file() or (parts and part not in parts):
            continue
        rows = read_rows(rows_file)
        scale = part_scale(folder)
        timings = [c for c in rows.columns if c.startswith("t_")]
        frames.append(pd.DataFrame({
            "part": part, "dataset": rows["dataset"], "l": rows["l"], "method": rows["method"],
            "base": rows[[c for c in timings if c != "t_loo"]].sum(axis=1) * scale, "loo": rows["t_loo"] * scale}))
    if not frames:
        raise SystemExit("no committed Experiment 8 part with rows matches")
    every = pd.concat(frames, ignore_index=True)
    return every.groupby(["part", "dataset", "l", "method"], as_index=False).agg(
        base=("base", "mean"), loo=("loo", "mean"), n=("base", "size"))


def _law(sub: pd.DataFrame) -> tuple[tuple[float, float], tuple[float, float]]:
    """((a, b) of everything but the exact LOO, (a, b) of the exact LOO) of these groups: least squares in log-log."""
    pair = []
    for part in ("base", "loo"):
        y = sub.dropna(subset=[part])
        y = y[y[part] > 0]
        A = np.c_[np.ones(len(y)), np.log(y["l"] / 100.0)]
        (log_a, b), *_ = np.linalg.lstsq(A, np.log(y[part].to_numpy()), rcond=None)
        pair.append((float(np.exp(log_a)), float(b)))
    return tuple(pair)


def fit(groups: pd.DataFrame) -> dict[str, tuple[tuple[float, float], tuple[float, float]]]:
    """Per method, its law over every data set without a law of its own (``lupi.DATASET_METHOD_LAWS``)."""
    own = set(lupi.DATASET_METHOD_LAWS)
    return {method: _law(sub[[(d, method) not in own for d in sub["dataset"]]])
            for method, sub in groups.groupby("method")}


def fit_own(groups: pd.DataFrame) -> dict[tuple[str, str], tuple[tuple[float, float], tuple[float, float]]]:
    """Per (data set, method) of ``lupi.DATASET_METHOD_LAWS``, its law over that data set's groups (those the
    parts have)."""
    out = {}
    for dataset, method in lupi.DATASET_METHOD_LAWS:
        sub = groups[(groups["dataset"] == dataset) & (groups["method"] == method)]
        if len(sub):
            out[(dataset, method)] = _law(sub)
    return out


def priced(groups: pd.DataFrame, laws) -> pd.DataFrame:
    """Per part: the models' summed seconds by the laws (a data set's own law where it has one) and by the rows."""
    out = []
    for part, sub in groups.groupby("part"):
        law_s = row_s = 0.0
        for r in sub.itertuples():
            base, loo = lupi.DATASET_METHOD_LAWS.get((r.dataset, r.method), laws[r.method])
            law_s += r.n * base[0] * (r.l / 100.0) ** base[1]
            row_s += r.n * r.base
            if np.isfinite(r.loo):
                law_s += r.n * loo[0] * (r.l / 100.0) ** loo[1]
                row_s += r.n * r.loo
        out.append({"part": part, "priced_s": law_s, "rows_s": row_s, "error": law_s / row_s - 1.0})
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", nargs="*", default=None, help="the parts' letters or names (default: every one)")
    ap.add_argument("--json", default=None, help="also write the laws and the per-part errors here")
    args = ap.parse_args(argv)
    groups = model_seconds(args.parts)
    laws = fit(groups)
    print("METHOD_LAWS = {")
    for method in lupi.METHODS:
        if method in laws:
            (a, b), (a_loo, b_loo) = laws[method]
            print(f'    "{method}": (({a:.4f}, {b:.2f}), ({a_loo:.4f}, {b_loo:.2f})),')
    print("}")
    own = fit_own(groups)
    print("DATASET_METHOD_LAWS = {")
    for (dataset, method), ((a, b), (a_loo, b_loo)) in own.items():
        print(f'    ("{dataset}", "{method}"): (({a:.4f}, {b:.2f}), ({a_loo:.4f}, {b_loo:.2f})),')
    print("}")
    for ours, label in ((laws, "these laws"), (lupi.METHOD_LAWS, "lupi.METHOD_LAWS as shipped")):
        table = priced(groups, ours)
        print(f"\nper part, the models' seconds priced by {label} against the rows':")
        print(table.to_string(index=False, formatters={"priced_s": "{:.0f}".format, "rows_s": "{:.0f}".format,
                                                       "error": "{:+.0%}".format}))
    if args.json:
        Path(args.json).write_text(json.dumps({"parts": sorted(groups["part"].unique()), "laws": laws,
                                               "priced": priced(groups, laws).to_dict("records")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
