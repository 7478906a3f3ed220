"""Figures of the study (seaborn), from the parquet rows alone; each saved as PNG and PDF.

- Experiment 3: for a data set and one hyperparameter, the test error and every estimator against
  that hyperparameter, the others fixed at the minimum-test-error model (values averaged over the
  replicates); each curve's minimum is marked.
- Experiment 6: mean time per model of the span-rule and of K-fold CV vs l (log scale), one panel per
  d; mean n* and n vs l, one panel per d.
- Span-rule vs exact LOO: one point per model with exact LOO; models with n* = 0 are circled.
- Experiment 10 (standard SVM): D, D_SV and S (mean +- sd over replicates) against sigma; the curves of
  the test error, span-rule, span bound and exact LOO against each varied hyperparameter; the ratios S / D_SV
  and S / D (mean +- sd over replicates) against sigma.
- Experiment 7: the solution path's events and time (and LIBSVM's at every breakpoint) against n; the
  alphas and the validation error along one path (traced again: the rows hold no alphas).
- Experiment 8: test error of the selected model against the training size, per data set, ratio and
  selection rule (lines: methods); SVM+'s leave-one-out estimates against its exact LOO error.
- Experiment 9: training time of each engine against l, one panel per data set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .results_schema import ESTIMATORS, HYPERPARAMETERS, STANDARD_SIZES, engines_of, label
from .tables import STANDARD_ESTIMATORS, curve_slice, table_exp10_selection, varied_axes

__all__ = ["DRAWINGS", "exp3_curves", "exp6_time", "exp6_sv", "exp10_curves", "exp10_diameters",
           "exp10_span_ratio", "loo_vs_span_rule",
           "exp8_test_error", "exp8_svm_plus_loo", "exp7_path", "exp7_alpha_paths", "exp9_time", "PARAM_LABELS"]

PARAM_LABELS = {"log2_C_plus": "log2 C+", "log2_C_minus": "log2 C-", "A": "A", "B": "B", "log2_C": "log2 C",
                "sigma": "sigma"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper")
    return plt, sns


def _save(fig, outputs: Sequence[str | Path], dpi: int) -> None:
    for out in outputs:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        kwargs = {"metadata": {"CreationDate": None}} if out.suffix == ".pdf" else {"metadata": {"Software": None}}
        fig.savefig(out, dpi=dpi, bbox_inches="tight", **kwargs)


def _finish(plt, fig, outputs, dpi: int, title: str) -> None:
    """Title, tight layout, save and close a figure of several panels."""
    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, outputs, dpi)
    plt.close(fig)


def exp3_curves(df: pd.DataFrame, dataset: str, param: str, outputs: Sequence[str | Path], dpi: int = 150):
    """Curves of the test error and of each estimator against ``param`` for ``dataset``."""
    plt, sns = _plt()
    sub = df[df["dataset"] == dataset]
    if sub.empty:
        raise ValueError(f"no rows for data set {dataset!r}")
    hp = list(HYPERPARAMETERS[sub["weighting"].iloc[0]])
    if param not in hp:
        raise ValueError(f"{param!r} is not a hyperparameter of {dataset!r} (one of {hp})")
    quantities = ["test_error", *ESTIMATORS]
    agg = sub.groupby(hp, sort=True)[quantities].mean().reset_index()
    best = agg.loc[agg["test_error"].idxmin()]
    mask = np.ones(len(agg), dtype=bool)
    for other in hp:
        if other != param:
            mask &= np.isclose(agg[other].to_numpy(dtype=float), float(best[other]))
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    _curve_panel(ax, sns, agg[mask], param, quantities, {q: label(q, sub) for q in quantities})
    fixed = ", ".join(f"{PARAM_LABELS[o]} = {best[o]:g}" for o in hp if o != param)
    ax.set_title(f"{dataset}: estimators vs {PARAM_LABELS[param]} ({fixed}; stars: minima)")
    _save(fig, outputs, dpi)
    plt.close(fig)


def _curve_panel(ax, sns, curve: pd.DataFrame, param: str, quantities, labels: dict[str, str]) -> None:
    """The curves of ``quantities`` (columns of ``curve``, one row per value of ``param``) on ``ax``, each
    curve's minimum starred; an estimate is drawn only where it is known along the whole curve, and the span
    bound (which can exceed 1 by far) is clipped to the range of the others, saying so."""
    curve = curve.sort_values(param)
    long = curve.melt(id_vars=[param], value_vars=quantities, var_name="quantity", value_name="value")
    long = long[np.isfinite(long["value"].to_numpy(dtype=float))]
    counts = long.groupby("quantity")["value"].size()
    keep = [q for q in quantities if counts.get(q, 0) == len(curve)]
    long = long[long["quantity"].isin(keep)].copy()
    others = long.loc[long["quantity"] != "span_bound", "value"]
    top = min(1.05, max(0.05, 1.1 * float(others.max()) if len(others) else 1.05))
    labels = dict(labels)
    if "span_bound" in keep and float(curve["span_bound"].max()) > top:
        labels["span_bound"] = f"Span bound (clipped at {top:.2f})"
    long["quantity"] = long["quantity"].map(labels)
    palette = dict(zip([labels[q] for q in quantities], sns.color_palette("tab10", len(quantities))))
    sns.lineplot(data=long, x=param, y="value", hue="quantity", style="quantity", markers=True, dashes=False,
                 palette=palette, ax=ax)
    for q in keep:
        vals = curve[q].to_numpy(dtype=float)
        i = int(np.argmin(vals))
        ax.scatter([curve[param].iloc[i]], [min(vals[i], top)], s=120, marker="*", color=palette[labels[q]],
                   edgecolor="black", linewidths=0.6, zorder=5, clip_on=False)
    ax.set_xlabel(PARAM_LABELS[param])
    ax.set_ylabel("error (fraction of l; test error: of the test set)")
    ax.set_ylim(bottom=0, top=top)
    ax.legend(title=None, fontsize="small")


def _exp6_frame(df: pd.DataFrame) -> pd.DataFrame:
    if df.empty:
        raise ValueError("no Experiment 6 rows")
    return df.groupby(["d", "l"], sort=True).agg(
        t_span_rule=("t_span_rule", "mean"), t_cv=("t_cv", "mean"), t_train=("t_train", "mean"),
        n_inbound=("n_inbound", "mean"), n_sv=("n_sv", "mean")).reset_index()


def _panels(plt, n: int):
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.6), squeeze=False, sharey=True)
    return fig, axes[0]


def _exp6_panels(df: pd.DataFrame, outputs, dpi: int, columns, ylabel: str, title: str) -> None:
    """One log-log panel per d of the per-(d, l) means of ``columns`` against l."""
    plt, sns = _plt()
    agg = _exp6_frame(df)
    ds = sorted(agg["d"].unique())
    fig, axes = _panels(plt, len(ds))
    labels = {q: label(q, df) for q in columns}
    for ax, d in zip(axes, ds):
        long = agg[agg["d"] == d].melt(id_vars=["l"], value_vars=list(labels), var_name="what", value_name="y")
        long["what"] = long["what"].map(labels)
        sns.lineplot(data=long, x="l", y="y", hue="what", style="what", markers=True, dashes=False, ax=ax)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"d = {d}")
        ax.set_xlabel("training size l")
        ax.set_ylabel(ylabel)
        ax.legend(title=None, fontsize="small")
    _finish(plt, fig, outputs, dpi, title)


def exp6_time(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """Mean time per model of the span-rule and of K-fold CV (and training) vs l, one panel per d."""
    _exp6_panels(df, outputs, dpi, ("t_span_rule", "t_cv", "t_train"), "mean time per model (s)",
                 f"Experiment 6: span-rule vs {label('t_cv', df)} cost (one thread)")


def exp6_sv(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """Mean n* (in-bound SVs) and n (SVs) vs l, one panel per d."""
    _exp6_panels(df, outputs, dpi, ("n_inbound", "n_sv"), "mean count per model",
                 "Experiment 6: support vectors")


def loo_vs_span_rule(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """Span-rule vs exact LOO error (%), one point per model where exact LOO was computed."""
    plt, sns = _plt()
    sub = df[np.isfinite(df["loo_error"].to_numpy(dtype=float))].copy()
    fig, ax = plt.subplots(figsize=(5.0, 4.6))
    if sub.empty:
        ax.text(0.5, 0.5, "no model with exact LOO\n(loo.fraction = 0 or training sets too large)",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    else:
        x, y = f"{label('loo_error')} (%)", f"{label('span_rule')} (%)"
        sub[x] = 100 * sub["loo_error"]
        sub[y] = 100 * sub["span_rule"]
        sns.scatterplot(data=sub, x=x, y=y, hue="dataset", style="dataset", alpha=0.7, ax=ax)
        # models without an in-bound SV: the span is undefined and every SV counts as an error
        undefined = sub[sub["n_inbound"] == 0]
        if len(undefined):
            ax.scatter(undefined[x], undefined[y], s=90, facecolors="none", edgecolors="black", linewidths=0.9,
                       zorder=4, label=f"n* = 0 ({len(undefined)} models: span undefined)")
        hi = float(max(sub[x].max(), sub[y].max(), 1.0)) * 1.05
        ax.plot([0, hi], [0, hi], color="grey", lw=1, ls="--", zorder=0)
        ax.set_xlim(0, hi)
        ax.set_ylim(0, hi)
        agree = np.mean(np.abs(sub["span_rule"] - sub["loo_error"]) < 0.5 / sub["l"])
        ax.set_title(f"Span-rule vs exact LOO ({len(sub)} models, {100 * agree:.0f}% identical)")
        ax.legend(title=None, fontsize="small")
    _save(fig, outputs, dpi)
    plt.close(fig)


def _no_panels(plt, outputs, dpi, text: str) -> None:
    fig, ax = plt.subplots(figsize=(5.0, 3.0))
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    _save(fig, outputs, dpi)
    plt.close(fig)


def _exp10_sigma_panels(df: pd.DataFrame, outputs, dpi: int, series, ylabel: str, title: str,
                        unit_line: bool = False) -> None:
    """One panel per data set whose grid varies sigma (log2 C fixed at its minimum-mean-test-error value):
    the columns of ``series(line)`` (legend label -> one value per row of the line), mean +- sd over the
    replicates against sigma; NaN values (no in-bound SV) are left out of the mean."""
    plt, sns = _plt()
    datasets = [ds for ds in dict.fromkeys(df["dataset"]) if "sigma" in varied_axes(df[df["dataset"] == ds])]
    if not datasets:
        _no_panels(plt, outputs, dpi, "no data set of Experiment 10 varies sigma")
        return
    fig, axes = _panels(plt, len(datasets))
    for ax, ds in zip(axes, datasets):
        line, fixed = curve_slice(df[df["dataset"] == ds], "sigma")
        values = pd.DataFrame(series(line)).assign(sigma=line["sigma"].to_numpy(dtype=float))
        stats = values.groupby("sigma", sort=True).agg(["mean", "std"])
        texts = [c for c in values.columns if c != "sigma"]
        for color, text in zip(sns.color_palette("tab10", len(texts)), texts):
            ax.errorbar(stats.index, stats[(text, "mean")], yerr=stats[(text, "std")].fillna(0.0), marker="o",
                        capsize=3, color=color, label=text)
        if unit_line:
            ax.axhline(1.0, color="grey", lw=1, ls="--", zorder=0)
        reps = line.groupby(["seed", "realization"]).ngroups
        ax.set_title(f"{ds} ({PARAM_LABELS['log2_C']} = {fixed['log2_C']:g}, {reps} replicates)")
        ax.set_xlabel(PARAM_LABELS["sigma"])
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.legend(title=None, fontsize="small")
    _finish(plt, fig, outputs, dpi, title)


def exp10_diameters(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """D, D_SV and S (mean +- sd over replicates) against sigma, one panel per data set whose grid varies
    sigma (log2 C fixed at its minimum-mean-test-error value)."""
    _exp10_sigma_panels(df, outputs, dpi, lambda line: {label(size): line[size].to_numpy(dtype=float)
                                                        for size in STANDARD_SIZES},
                        "size in feature space",
                        "Experiment 10: span S vs diameters D and D_SV (mean +- sd); MNIST digits, not USPS")


#: the ratios of ``exp10_span_ratio``: (numerator, denominator) -> legend label
SPAN_RATIOS = {("S", "D_SV"): "S / D_SV (in-bound SVs)", ("S", "D"): "S / D (all points)"}


def exp10_span_ratio(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """The span-to-diameter ratios S / D_SV and S / D of each model (mean +- sd over replicates) against
    sigma, one panel per data set whose grid varies sigma (log2 C fixed at its minimum-mean-test-error value);
    S / D_SV <= 1 is a theorem (standard-svm-span.md), the dashed line."""
    _exp10_sigma_panels(df, outputs, dpi, lambda line: {text: line[num].to_numpy(dtype=float)
                                                        / line[den].to_numpy(dtype=float)
                                                        for (num, den), text in SPAN_RATIOS.items()},
                        "span / diameter",
                        "Experiment 10: span-to-diameter ratio (mean +- sd); S <= D_SV is a theorem",
                        unit_line=True)


#: the selection rules drawn by ``exp8_test_error`` (one panel column each)
EXP8_FIGURE_RULES = ("val_error", "cv_error", "span_rule")


def exp8_test_error(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150, tie_rule: str = "worst"):
    """Experiment 8, as seed 003's Figures 6-7: test error of the model each method selects against the
    training size, one row of panels per data set and ratio, one column per selection rule."""
    from .tables import LUPI_METHODS, lupi_selected

    plt, sns = _plt()
    sel = lupi_selected(df, tie_rule)
    sel = sel[sel["rule"].isin(EXP8_FIGURE_RULES) & np.isfinite(sel["test_error"].to_numpy(dtype=float))].copy()
    if sel.empty:
        raise ValueError("no Experiment 8 rows to draw")
    sel["test error (%)"] = 100 * sel["test_error"]
    sel["method"] = sel["method"].map(LUPI_METHODS)
    panels = list(dict.fromkeys(zip(sel["dataset"], sel["ratio"])))
    fig, axes = plt.subplots(len(panels), len(EXP8_FIGURE_RULES), figsize=(4.0 * len(EXP8_FIGURE_RULES),
                             3.0 * len(panels)), squeeze=False, sharey="row")
    palette = dict(zip(LUPI_METHODS.values(), sns.color_palette("tab10", len(LUPI_METHODS))))
    for (ds, ratio), row in zip(panels, axes):
        for rule, ax in zip(EXP8_FIGURE_RULES, row):
            sub = sel[(sel["dataset"] == ds) & (sel["ratio"] == ratio) & (sel["rule"] == rule)]
            sns.lineplot(data=sub, x="l", y="test error (%)", hue="method", style="method", markers=True,
                         dashes=False, errorbar="sd", palette=palette, ax=ax)
            ax.set_title(f"{ds} ({ratio}), selected by {label(rule, df)}", fontsize="small")
            ax.set_xlabel("training size l")
            ax.legend(title=None, fontsize="x-small")
    _finish(plt, fig, outputs, dpi,
            f"Experiment 8: test error of the selected model (tie rule: {tie_rule}; mean +- sd over subsamples)")


def exp10_curves(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """Test error, span-rule, span bound and exact LOO (means over replicates) against each varied
    hyperparameter of each data set, one panel each; titles give the span-rule curve's RMSE to the
    test-error curve and the difference of their minimisers (as in the exp10_selection table)."""
    plt, sns = _plt()
    panels = [(ds, axis) for ds in dict.fromkeys(df["dataset"]) for axis in varied_axes(df[df["dataset"] == ds])]
    if not panels:
        _no_panels(plt, outputs, dpi, "no data set of Experiment 10 varies a hyperparameter")
        return
    agreement = table_exp10_selection(df).data
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.0), squeeze=False)
    quantities = ["test_error", *STANDARD_ESTIMATORS]
    for ax, (ds, axis) in zip(axes[0], panels):
        line, fixed = curve_slice(df[df["dataset"] == ds], axis)
        curve = line.groupby(axis, sort=True)[quantities].mean().reset_index()
        _curve_panel(ax, sns, curve, axis, quantities, {q: label(q) for q in quantities})
        rule = agreement[(agreement["dataset"] == ds) & (agreement["axis"] == axis)
                         & (agreement["estimator"] == "span_rule")]
        at = ", ".join(f"{PARAM_LABELS[h]} = {v:g}" for h, v in fixed.items())
        note = (f"\nspan-rule vs test error: RMSE {rule['rmse_curve'].iloc[0]:.2f} pp, minimiser diff "
                f"{rule['argmin_diff'].iloc[0]:+g}" if len(rule) else "")
        ax.set_title(f"{ds} vs {PARAM_LABELS[axis]} ({at}){note}", fontsize="small")
    fig.tight_layout()
    _save(fig, outputs, dpi)
    plt.close(fig)


def exp8_svm_plus_loo(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """Experiment 8: the span-rule of SVM+'s equivalent weighted SVM and SVM+'s LOO rule against SVM+'s
    exact LOO error, one point per SVM+ model with exact LOO."""
    plt, sns = _plt()
    sub = df[(df["method"] == "svm_plus") & np.isfinite(df["loo_error"].to_numpy(dtype=float))].copy()
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.4), squeeze=False)
    if sub.empty:
        for ax in axes[0]:
            ax.text(0.5, 0.5, "no SVM+ model with exact LOO\n(training samples above loo_max_train_size)",
                    ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
    else:
        x = f"{label('loo_error')} of SVM+ (%)"
        sub[x] = 100 * sub["loo_error"]
        hi = 1.05 * float(max(100 * sub[["loo_error", "span_rule", "loo_rule"]].to_numpy(dtype=float).max(), 1.0))
        for ax, est in zip(axes[0], ("span_rule", "loo_rule")):
            y = f"{label(est)} (%)" if est == "loo_rule" else "Span-rule of the equivalent weighted SVM (%)"
            sub[y] = 100 * sub[est]
            sns.scatterplot(data=sub, x=x, y=y, hue="dataset", style="dataset", alpha=0.7, ax=ax)
            ax.plot([0, hi], [0, hi], color="grey", lw=1, ls="--", zorder=0)
            ax.set_xlim(0, hi)
            ax.set_ylim(0, hi)
            rmse = 100 * float(np.sqrt(np.mean((sub[est] - sub["loo_error"]) ** 2)))
            ax.set_title(f"{len(sub)} SVM+ models, RMSE {rmse:.1f} points", fontsize="small")
            ax.legend(title=None, fontsize="x-small")
    _finish(plt, fig, outputs, dpi, "Experiment 8: leave-one-out estimates of SVM+ against its exact LOO error")


def exp7_path(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """Experiment 7: the path's events (left) and the CPU seconds of the path, of re-solving cold by the rows'
    engine and of re-solving by smo hot-started from the previous breakpoint, at every breakpoint (right, log
    scale) against n, one point per data set, lines through the means (the table's)."""
    plt, sns = _plt()
    if df.empty:
        raise ValueError("no Experiment 7 rows")
    fig, (ax_events, ax_time) = plt.subplots(1, 2, figsize=(9.0, 3.8))
    times = ("t_path", "t_libsvm", "t_smo_hot")
    means = df.groupby("n", sort=True)[["n_events", *times]].mean()
    ax_events.scatter(df["n"], df["n_events"], alpha=0.5, s=14)
    ax_events.plot(means.index, means["n_events"], marker="o")
    ax_events.set_xlabel("n")
    ax_events.set_ylabel("events of the path")
    ax_events.set_ylim(bottom=0)
    palette = sns.color_palette("tab10", len(times))
    for color, col in zip(palette, times):
        ax_time.scatter(df["n"], df[col], alpha=0.5, s=14, color=color)
        ax_time.plot(means.index, means[col], marker="o", color=color, label=label(col, df))
    ax_time.set_yscale("log")
    ax_time.set_xlabel("n")
    ax_time.set_ylabel("CPU seconds (one thread)")
    ax_time.legend(title=None, fontsize="small", loc="upper left")  # the times rise to the right: keep it off them
    _finish(plt, fig, outputs, dpi, f"Experiment 7: exact solution path vs re-solving at every breakpoint by "
            f"{engines_of(df) or 'the engine'} (cold) and smo (hot-started), four Gaussians")


def exp7_alpha_paths(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """Experiment 7's path traced on its smallest data set (n, seed) with a validation sample of n more
    points (``solution_path.trace_reference_path``, recomputed here: the rows hold no alphas): every alpha_i
    against group D1's weight (top, piecewise linear through the breakpoints) and the exact validation error
    along the path (bottom, piecewise constant; star: its minimum)."""
    from wsvm_span.solution_path import trace_reference_path

    plt, sns = _plt()
    if df.empty:
        raise ValueError("no Experiment 7 rows")
    n = int(df["n"].min())
    seed = int(df.loc[df["n"] == n, "seed"].min())
    tr = trace_reference_path(n, seed)
    fig, (ax_alpha, ax_error) = plt.subplots(2, 1, figsize=(7.0, 6.4), sharex=True,
                                             gridspec_kw={"height_ratios": [2, 1]})
    palette = dict(zip((1, 2), sns.color_palette("tab10", 2)))
    for i in range(tr.n):
        ax_alpha.plot(tr.weight_d1, tr.alpha[:, i], color=palette[int(tr.group[i])], lw=0.7, alpha=0.6)
    for g, text in ((1, "group D1 (weight moves)"), (2, "group D2 (weight 10)")):
        ax_alpha.plot([], [], color=palette[g], label=text)
    ax_alpha.set_ylabel("alpha_i")
    ax_alpha.legend(title=None, fontsize="small")
    ax_alpha.set_title(f"four Gaussians, n = {tr.n} (seed {tr.seed}): {tr.theta.size - 2} breakpoints, "
                       f"validation sample of {tr.n_val}", fontsize="small")
    weight = lambda theta: tr.weight_d1[0] + theta * (tr.weight_d1[-1] - tr.weight_d1[0])  # noqa: E731
    x = np.column_stack([weight(tr.error_lo), weight(tr.error_hi)]).ravel()
    y = 100 * np.repeat(tr.validation_error, 2)
    ax_error.plot(x, y, color="black", lw=1.2, label="validation error")
    best = int(np.argmin(tr.validation_error))
    ax_error.scatter([0.5 * (x[2 * best] + x[2 * best + 1])], [y[2 * best]], s=120, marker="*", color="gold",
                     edgecolor="black", linewidths=0.6, zorder=5, label=f"minimum {y[2 * best]:.1f}%")
    ax_error.set_xlabel("weight C_i of group D1 (group D2 at 10)")
    ax_error.set_ylabel("validation error (%)")
    ax_error.legend(title=None, fontsize="small")
    _finish(plt, fig, outputs, dpi, "Experiment 7: the solution path's alphas and the validation error along it")


def exp9_time(df: pd.DataFrame, outputs: Sequence[str | Path], dpi: int = 150):
    """Experiment 9: training time against l (log-log), one panel per data set (a ringnorm family
    ``ringnorm_d<d>`` is one panel over its sizes), one line per engine (colour) and C (marker)."""
    plt, sns = _plt()
    sub = df[df["status"] == "ok"].copy()
    if sub.empty:
        raise ValueError("no Experiment 9 rows with a finished fit")
    sub["panel"] = sub["dataset"].str.replace(r"^(ringnorm_d[0-9]+)_l[0-9]+$", r"\1", regex=True)
    sub["C"] = [f"2^{v:g}" for v in sub["log2_C"]]
    panels = list(dict.fromkeys(sub["panel"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        part = sub[sub["panel"] == panel].sort_values("l")
        sns.lineplot(data=part, x="l", y="t_train", hue="engine", style="C", markers=True, dashes=False, ax=ax)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(panel)
        ax.set_xlabel("training size l")
        ax.set_ylabel("training time (s, wall clock)")
        ax.legend(fontsize="x-small")
    _finish(plt, fig, outputs, dpi, "Experiment 9: sampling trainer vs full LIBSVM")


def _exp3(df, outputs, dpi, dataset=None, param=None):
    if not dataset or not param:
        raise ValueError("the exp3 figure needs a data set and a hyperparameter")
    exp3_curves(df, dataset, param, outputs, dpi=dpi)


#: figure drawer (``catalog.FIGURES``) -> drawing function(rows, outputs, dpi, dataset=None, param=None)
DRAWINGS = {
    "exp3": _exp3,
    "loo": lambda df, outputs, dpi, **_: loo_vs_span_rule(df, outputs, dpi=dpi),
    "exp6-time": lambda df, outputs, dpi, **_: exp6_time(df, outputs, dpi=dpi),
    "exp6-sv": lambda df, outputs, dpi, **_: exp6_sv(df, outputs, dpi=dpi),
    "exp10-diameters": lambda df, outputs, dpi, **_: exp10_diameters(df, outputs, dpi=dpi),
    "exp10-curves": lambda df, outputs, dpi, **_: exp10_curves(df, outputs, dpi=dpi),
    "exp10-span-ratio": lambda df, outputs, dpi, **_: exp10_span_ratio(df, outputs, dpi=dpi),
    "exp8-test-error": lambda df, outputs, dpi, **_: exp8_test_error(df, outputs, dpi=dpi),
    "exp8-svm-plus-loo": lambda df, outputs, dpi, **_: exp8_svm_plus_loo(df, outputs, dpi=dpi),
    "exp7-path": lambda df, outputs, dpi, **_: exp7_path(df, outputs, dpi=dpi),
    "exp7-alpha-paths": lambda df, outputs, dpi, **_: exp7_alpha_paths(df, outputs, dpi=dpi),
    "exp9-time": lambda df, outputs, dpi, **_: exp9_time(df, outputs, dpi=dpi),
}
