"""The catalog of the study: every weighting scheme, experiment, table and figure, declared once.

The config schema (its enums and experiment descriptions), the planner, the CLI (its choices) and the
Snakemake rules (targets, inputs, captions) all read these declarations, so a new experiment, table
or figure is one entry here (plus, for a new table or figure, its builder in the experiment's module of
``study/tables/`` or in ``figures.py``).

Experiments 1, 2 and 6 run jobs ("weight_grid" jobs: one model per grid point of a weighting scheme,
per data set and replicate); Experiments 3-5 are views of the rows of 1 and 2. Experiment 10 runs
"standard_span" jobs: the original span results for the standard SVM (standard-svm-span.md). Experiment 8
runs "lupi" jobs (SVM+ and weighted SVMs, one row per grid point of each method, per data set, ratio,
training size and subsample). Experiment 7 runs "reference_path" jobs: the exact solution path against
LIBSVM re-solving at its breakpoints (solution-path.md, reference experiment). Experiment 9 runs "sampling"
jobs (one per data set and training size: every C and training engine).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

__all__ = [
    "Weighting", "Experiment", "Table", "Figure",
    "WEIGHTINGS", "EXPERIMENTS", "TABLES", "FIGURES",
    "grid_experiments", "selection_experiments", "table", "figure_kind", "tables_for", "figures_for",
]


@dataclass(frozen=True)
class Weighting:
    """A weighting scheme: how a grid point's hyperparameters become the instance weights C_i."""

    name: str
    hyperparameters: tuple[str, ...]  # grid axes, in grid order (the last varies fastest)
    description: str


@dataclass(frozen=True)
class Experiment:
    """One experiment of the study.

    kind : the kind of its jobs (``study.experiments.KINDS``), None for a view of other experiments' rows
    weighting : the weighting of its models (weight-grid experiments)
    datasets : how the config names its data sets: "benchmark" (a ``datasets`` list of the data
        registry), "scored" (the same, restricted to data sets with importance scores) or
        "ringnorm" (``d`` and ``l`` lists of the synthetic family)
    selection : its grid selects hyperparameters per data set (Tables 2-5 and the curves read it)
    """

    name: str
    title: str
    kind: str | None = None
    weighting: str | None = None
    datasets: str | None = None
    selection: bool = False

    @property
    def runs_jobs(self) -> bool:
        return self.kind is not None


@dataclass(frozen=True)
class Table:
    """A table: its ``builder`` (``"<module>.<function>"`` of ``study.tables``: the experiment's builder module
    and the function) applied to the rows of ``reads``. It is built when any experiment it reads is
    configured; this entry is its one registration.

    caption : the report's caption (the table files carry the text their builder writes beside the numbers:
        the tie rule, the fold count, the replicates)
    tie_rule_caption : the report's caption names the config's tie rule (a table of selected models)
    """

    name: str
    builder: str
    reads: tuple[str, ...]
    experiment: str  # the experiment it reports (Tables 4-6 are Experiments 3-5)
    caption: str
    title: str = ""
    tie_rule_caption: bool = False


@dataclass(frozen=True)
class Figure:
    """A figure kind: the drawing ``kind`` of ``figures.py`` applied to the rows of ``reads``.

    stem : file name without extension; "{dataset}" and "{param}" are filled per data set and
        hyperparameter of every selection experiment when ``per_hyperparameter`` is set
    """

    kind: str
    stem: str
    reads: tuple[str, ...]
    caption: str
    per_hyperparameter: bool = False


WEIGHTINGS: dict[str, Weighting] = {w.name: w for w in (
    Weighting("class", ("log2_C_plus", "log2_C_minus"), "class weights C+ and C- (LIBSVM -w1 C+ -w-1 C-)"),
    Weighting("sigmoid", ("A", "B", "log2_C"),
              "individual weights C_i = max(C / (1 + exp(-A (q_i - B))), sigma) from importance scores q_i"),
)}

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("exp1", "Class weights C+/C- on benchmark data sets", "weight_grid", "class", "benchmark",
               selection=True),
    Experiment("exp2", "Individual sigmoid weights from importance scores", "weight_grid", "sigmoid", "scored",
               selection=True),
    Experiment("exp3", "Predicting the test error (views of Experiments 1 and 2)"),
    Experiment("exp4", "How often is Lambda_p empty? (views of Experiments 1 and 2)"),
    Experiment("exp5", "Cost per model (views of Experiments 1 and 2)"),
    Experiment("exp6", "Synthetic ringnorm variant: when is the span-rule cheaper than K-fold CV?", "weight_grid",
               "class", "ringnorm"),
    Experiment("exp10", "Standard SVM (every C_i = C): the original span results (span vs diameters, model "
               "selection, cost) over sigma and C", "standard_span"),
    Experiment("exp8", "SVM+ vs weighted SVMs (privileged information, weights A and B, sigmoid scores) vs the "
               "plain SVM, selected by a validation sample, K-fold CV and the span-rule", "lupi", None, "benchmark"),
    Experiment("exp7", "Exact solution path vs LIBSVM re-solving at every breakpoint (four Gaussians, cost-weighted "
               "path)", "reference_path"),
    Experiment("exp9", "Large training sets: the randomized sampling trainer against full LIBSVM (time, memory, "
               "certificate), and span-rule selection against K-fold CV at that scale", "sampling"),
)}

_SELECTION = ("exp1", "exp2")

TABLES: tuple[Table, ...] = (
    Table("table2", "weight_grid.table_selection", ("exp1",), "exp1",
          "**Table 2 (Experiment 1, class weights C+/C-).** Per data set, test error (%) of the model selected "
          "by each estimate (span-rule, span bound, K-fold CV, xi-alpha bound, SV-count bound; exact LOO where "
          "it was computed for every model) and the minimum test error over the grid, under the configured tie "
          "rule (the study's rule is *worst*; *median* is the lower median, an actual model's error). Mean +- sd "
          "over the replicates of each data set.",
          title="Experiment 1 (class weights C+/C-). ", tie_rule_caption=True),
    Table("table3", "weight_grid.table_selection", ("exp2",), "exp2",
          "**Table 3 (Experiment 2, sigmoid weights from importance scores).** As Table 2, for the grid over A, "
          "B and C.",
          title="Experiment 2 (sigmoid weights). ", tie_rule_caption=True),
    Table("table4", "weight_grid.table_rmse", _SELECTION, "exp3",
          "**Table 4 (Experiment 3).** RMSE (percentage points) between each estimate and the test error over "
          "all models of a data set: span-rule, K-fold CV, xi-alpha bound, and exact LOO where computed for "
          "all models."),
    Table("table5", "weight_grid.table_counts", _SELECTION, "exp4",
          "**Table 5 (Experiment 4).** Mean +- sd over all models of the number of in-bound SVs whose Lambda_p "
          "is empty (Lemma 1 fails), the number of in-bound SVs n* and of all SVs n."),
    Table("table6", "weight_grid.table_timings", _SELECTION, "exp5",
          "**Table 6 (Experiment 5).** Mean time per model (ms, one thread) of the span-rule, K-fold CV, "
          "training and the span bound; machine and library versions are in the footer of the table files."),
    Table("loo_agreement", "weight_grid.table_loo", _SELECTION, "exp3",
          "**Span-rule vs exact LOO.** Over the models with exact LOO: how often both count the same number "
          "of errors, and by how much they differ (percentage points)."),
    Table("exp6_summary", "weight_grid.table_exp6", ("exp6",), "exp6",
          "**Experiment 6 summary.** Mean time per model (ms) and mean SV counts per dimension d and training "
          "size l of the synthetic ringnorm variant."),
    Table("exp10_diameters", "standard_span.table_exp10_diameters", ("exp10",), "exp10",
          "**Experiment 10, span vs diameters (standard SVM).** Mean +- sd over the replicates (for "
          "mnist_0to4_5to9: disjoint training subsets of 317 MNIST digits, 0-4 vs 5-9; the original used USPS "
          "digits) of the diameter D of all training points, the diameter D_SV of the in-bound SVs and the span "
          "S, per RBF width sigma and log2 C; with the share of models where S <= D_SV."),
    Table("exp10_selection", "standard_span.table_exp10_selection", ("exp10",), "exp10",
          "**Experiment 10, model selection (standard SVM).** Per data set and varied hyperparameter (the other "
          "at its minimum-mean-test-error value): RMSE between each estimator's curve and the test-error curve "
          "(means over replicates), the difference of their minimisers, and the test error of the model each "
          "estimator selects on the curve."),
    Table("exp10_cost", "standard_span.table_exp10_cost", ("exp10",), "exp10",
          "**Experiment 10, cost (standard SVM).** Mean time per model (ms, one thread) of training, the "
          "span-rule, the span bound and exact leave-one-out by retraining; machine and library versions in "
          "the footer."),
    Table("exp8_selection", "lupi.table_lupi_selection", ("exp8",), "exp8",
          "**Experiment 8 (SVM+ and weighted SVMs).** Per data set, training-to-validation ratio, training size l "
          "and method, test error (%) of the model selected by the validation sample, K-fold CV, the span-rule, "
          "the span bound, SVM+'s LOO rule and the exact LOO error (where computed for every model), and the "
          "minimum test error over the grid. Mean +- sd over the seeded subsamples."),
    Table("exp8_time", "lupi.table_lupi_time", ("exp8",), "exp8",
          "**Experiment 8: selection time.** Seconds (one thread) each selection rule spends over a method's grid: "
          "training and the validation error, K-fold CV, training and the span-rule, training and SVM+'s LOO rule, "
          "training and the exact LOO; every rule also pays for the weights (weight learning, the NW estimate)."),
    Table("exp8_svm_plus_loo", "lupi.table_lupi_loo", ("exp8",), "exp8",
          "**Experiment 8: what estimates SVM+'s leave-one-out error?** Over the SVM+ models with exact LOO: RMSE "
          "(percentage points) of the span-rule of the equivalent weighted SVM and of SVM+'s LOO rule against "
          "SVM+'s exact LOO error, and of the span-rule against the exact LOO of the weighted SVM with its weights "
          "held fixed (what the span-rule estimates); the share of models without in-bound SV and of zero weights."),
    Table("exp7_path", "reference_path.table_exp7", ("exp7",), "exp7",
          "**Experiment 7 (exact solution path, four Gaussians).** Per size n: median CPU seconds (one thread) of "
          "the path from group D1's weight ~0 to 10 (D2 at 10) and of LIBSVM re-solving (cold: scikit-learn's "
          "LIBSVM has no warm start) at every breakpoint (scaled from a seeded sample where not all were "
          "re-solved), median events and mean |M|, the speed-up (median and minimum over the data sets), the "
          "largest |f_path - f_LIBSVM| at the re-solved breakpoints and the number of fallbacks to LIBSVM."),
    Table("exp9_training", "sampling.table_sampling_training", ("exp9",), "exp9",
          "**Experiment 9: training on large l.** Per data set, training size l, C and engine (randomized sampling, "
          "scikit-learn's LIBSVM evaluating the RBF itself, LIBSVM on a precomputed kernel where it fits): seconds "
          "(one thread), the sampling engine's time over the reference's, peak memory, rounds and final sample, SV "
          "counts, the largest KKT violation of the full problem on all l points, and the largest difference of "
          "the test-set decision values from the reference engine's."),
    Table("exp9_span", "sampling.table_sampling_span", ("exp9",), "exp9",
          "**Experiment 9: span-rule selection at scale.** Over the C grid of the span-grid data set: the "
          "span-rule of the sampled model (from its SVs only) and K-fold CV of the same C, the C each selects, "
          "and the time of each (CV projected from the folds run where it says so)."),
)

FIGURES: tuple[Figure, ...] = (
    Figure("exp3", "exp3_{dataset}_{param}", _SELECTION,
           "**Experiment 3, data set {dataset}**: test error and each estimate against ``{param}``, the other "
           "hyperparameters fixed at the values of the minimum-test-error model (values averaged over the data "
           "set's replicates); stars mark each curve's minimum.",
           per_hyperparameter=True),
    Figure("loo", "loo_vs_span_rule", _SELECTION,
           "**Span-rule vs exact leave-one-out error**, one point per model where exact LOO was computed (a "
           "seeded sample of each data set's grid, see ``loo`` in the config); the dashed line is equality; circled: models "
           "with no in-bound SV (n* = 0), whose span is undefined."),
    Figure("exp6-time", "exp6_time", ("exp6",),
           "**Experiment 6: cost.** Mean time per model of the span-rule and of K-fold CV (and training) "
           "against the training size l (log scales), one panel per dimension d; one thread per job."),
    Figure("exp6-sv", "exp6_sv", ("exp6",),
           "**Experiment 6: support vectors.** Mean number of in-bound SVs n* and of SVs n against the "
           "training size l, one panel per dimension d."),
    Figure("exp10-diameters", "exp10_diameters", ("exp10",),
           "**Experiment 10: span vs diameters.** D (all training points), D_SV (in-bound SVs) and the span S, "
           "mean +- sd over the replicates, against the RBF width sigma, one panel per data set (MNIST digits "
           "0-4 vs 5-9 in disjoint training subsets of 317: the original used USPS digits, not available here)."),
    Figure("exp10-curves", "exp10_curves", ("exp10",),
           "**Experiment 10: model selection.** Test error, span-rule, span bound and exact LOO (means over the "
           "replicates) against each varied hyperparameter, the other at its minimum-mean-test-error value; "
           "stars mark each curve's minimum; the title gives the span-rule curve's RMSE to the test-error curve."),
    Figure("lupi-errors", "exp8_test_error", ("exp8",),
           "**Experiment 8: test error against the training size** (in the style of seed 003's Figures 6-7): "
           "test error of the model each method selects, one row of panels per data set and ratio, one column per "
           "selection rule (validation sample, K-fold CV, span-rule); mean +- sd over the seeded subsamples."),
    Figure("lupi-loo", "exp8_svm_plus_loo", ("exp8",),
           "**Experiment 8: SVM+'s leave-one-out estimates against its exact LOO error**, one point per SVM+ model "
           "with exact LOO: the span-rule of the equivalent weighted SVM (left) and SVM+'s LOO rule (right); the "
           "dashed line is equality."),
    Figure("exp7-path", "exp7_path", ("exp7",),
           "**Experiment 7: the solution path against LIBSVM re-solving.** Events of the path (left) and CPU "
           "seconds of the path and of LIBSVM re-solving at every breakpoint (right, log scale) against the size "
           "n, one point per data set, lines through the medians."),
    Figure("sampling-time", "exp9_time", ("exp9",),
           "**Experiment 9: training time against the training size l** (log scales, one thread), one panel per "
           "data set, one line per engine and C; precomputed-kernel points stop where the l x l kernel exceeds "
           "the memory budget."),
)


#: how the study's MLflow experiments are laid out (the second part of each experiment's description)
_MLFLOW_LAYOUT = ("One parent run per data set, variant and replicate; its children are the models (params: "
                  "the hyperparameters; metrics: the estimators and the test error) and the jobs' own runs "
                  "(tag wsvm.kind = job: provenance, timings). Compare the models of one data set in the "
                  "table or chart view (e.g. span_rule and cv_error against test_error).")


def mlflow_description(name: str) -> str:
    """The description of the MLflow experiment of ``name`` (an experiment, or "summary")."""
    if name == "summary":
        return "The study's tables and figures (artifacts of the summary run) and the tracking overhead of its jobs."
    return f"{name}: {EXPERIMENTS[name].title}. {_MLFLOW_LAYOUT}"


def grid_experiments() -> tuple[str, ...]:
    """The experiments that run jobs (the others are views of their rows), in catalog order."""
    return tuple(name for name, e in EXPERIMENTS.items() if e.runs_jobs)


def selection_experiments() -> tuple[str, ...]:
    """The experiments whose rows select hyperparameters (the tables of each estimator's selection read them).
    """
    return tuple(name for name, e in EXPERIMENTS.items() if e.selection)


def table(name: str) -> Table:
    """The catalog's table ``name``; a KeyError naming the catalog's tables for any other name.
    """
    for t in TABLES:
        if t.name == name:
            return t
    raise KeyError(f"unknown table {name!r}; the catalog has {', '.join(t.name for t in TABLES)}")


def figure_kind(kind: str) -> Figure:
    """The catalog's figure kind ``kind``; a KeyError naming the catalog's kinds for any other.
    """
    for f in FIGURES:
        if f.kind == kind:
            return f
    raise KeyError(f"unknown figure kind {kind!r}; the catalog has {', '.join(f.kind for f in FIGURES)}")


def tables_for(configured: Iterable[str]) -> list[Table]:
    """The tables a study with these (grid) experiments builds."""
    configured = set(configured)
    return [t for t in TABLES if configured & set(t.reads)]


def figures_for(configured: Iterable[str]) -> list[Figure]:
    """The figure kinds a study with these (grid) experiments draws."""
    configured = set(configured)
    return [f for f in FIGURES if configured & set(f.reads)]
