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
    "grid_experiments", "selection_experiments", "table", "figure",  "tables_for", "figures_for",
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
    """A table, declared once: its ``builder`` (``"<module>.<function>"`` of ``study.tables``: the experiment's
    builder module and the function) applied to the rows of ``reads``, and its one ``caption``, which the table
    files (Markdown, LaTeX) and the workflow report both show. It is built when any experiment it reads is
    configured.

    caption : a template: ``{tie_rule}`` and ``{tie_rule_text}`` name the tie rule (a table of selected models),
        ``{cv}`` the K-fold CV with its fold count, ``{engine}`` the engines that trained the rows' models
        (``study.tables.caption`` fills them in)
    headline : the report's bold lead before the caption (the table files lead with the table's name)
    notes : (data set, note) pairs: each note is shown under the table (its footer) when the table has a row
        of that data set
    """

    name: str
    builder: str
    reads: tuple[str, ...]
    experiment: str  # the experiment it reports (Tables 4-6 are Experiments 3-5)
    caption: str
    headline: str = ""
    notes: tuple[tuple[str, str], ...] = ()

    def notes_for(self, datasets) -> list[str]:
        """The notes of the data sets among ``datasets``, in the catalog's order: under the table files (the data
        sets its rows show) and in the workflow report (the data sets the config runs)."""
        datasets = set(datasets)
        return [note for dataset, note in self.notes if dataset in datasets]


@dataclass(frozen=True)
class Figure:
    """A figure: the drawer ``drawer`` (``figures.DRAWINGS``; ``wsvm-span figure <drawer>``) applied to the rows of
    ``reads``. A figure of one experiment's rows is named by that experiment's id (drawer and stem), as its
    tables are; a view of several experiments by what it shows.

    stem : file name without extension; "{dataset}" and "{param}" are filled per data set and
        hyperparameter of every selection experiment when ``per_hyperparameter`` is set
    """

    drawer: str
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
    Experiment("exp7", "Exact solution path vs re-solving at every breakpoint, cold and hot-started (four Gaussians, "
               "cost-weighted path)", "reference_path"),
    Experiment("exp9", "Large training sets: the randomized sampling trainer against full LIBSVM (time, memory, "
               "certificate), and span-rule selection against K-fold CV at that scale", "sampling"),
)}

_SELECTION = ("exp1", "exp2")

#: the replicates of Tables 2-4 (``experiments.replicates``)
_REPLICATES = ("Mean +- sd over the replicates of each data set (column Replicates: one per seed for random splits, "
               "one per realization for the IDA sets, one for a fixed split).")
#: Tables 2 and 3 after the experiment's name
_SELECTED = ("Test error (%) of the model selected by each estimator (tie rule: {tie_rule}, {tie_rule_text}) and the "
             "minimum test error over the grid. " + _REPLICATES + " Exact LOO is shown only where it was computed for "
             "every model. The span bound is Theorem 1 with the enclosing ball's diameter D; the column beside it puts "
             "the radius D/2 in its place, as the original study's selections imply: that value is not a bound of the "
             "LOO error, and it is shown only to compare with the study's table (empty for rows computed before it was "
             "recorded). Where the rows hold the per-class test errors, the columns marked 'balanced' give the balanced "
             "test error (the mean of the two per-class test errors) of the model that the span-rule, CV, the "
             "xi-alpha bound and exact LOO select (ties broken by the same rule on that error), and its minimum "
             "over the grid.")

#: why Parkinson's selections say little about new patients (issue 26)
_PARKINSON_NOTE = ("parkinson_speech: its selections are dominated by subject effects. The split keeps each subject's "
                   "recordings together (subjects 1-10 and 21-30 train, the others test), but LOO and K-fold CV leave "
                   "out single recordings, so every training subject is on both sides of each of their splits: they "
                   "estimate the error on recordings of known subjects, not on new subjects, and select accordingly.")
#: what bank_marketing's estimates estimate (experiments.md, issue 26)
_BANK_NOTE = ("bank_marketing: the training set is drawn class-balanced (150 yes, 150 no) and the test set is 11% "
              "positive: LOO and its estimates estimate the mean of the two per-class error rates, while the test "
              "error weights them 0.89/0.11. The columns 'vs balanced test error' give each estimate's RMSE against "
              "that mean (the balanced test error). bank_marketing_stratified draws its training set with the "
              "file's class ratio instead (34 yes, 266 no).")

#: bank_marketing under Table 3: which column to read (issue 26)
_BANK_SELECTION_NOTE = ("bank_marketing: the training set is drawn class-balanced (150 yes, 150 no) and the test set "
                        "is 11% positive, so the lowest test errors (near the 11% of always answering no) belong to "
                        "models that rarely answer yes, and LOO, CV and the span-rule, which estimate the mean of the "
                        "two per-class error rates, do not look for them: compare their selections with the columns "
                        "'balanced'. bank_marketing_stratified draws its training set with the file's class ratio "
                        "instead (34 yes, 266 no): there the test error is what they estimate.")

TABLES: tuple[Table, ...] = (
    Table("table2", "weight_grid.table_selection", ("exp1",), "exp1",
          "Experiment 1 (class weights C+/C-). " + _SELECTED,
          headline="Table 2"),
    Table("table3", "weight_grid.table_selection", ("exp2",), "exp2",
          "Experiment 2 (sigmoid weights). " + _SELECTED,
          headline="Table 3", notes=(("parkinson_speech", _PARKINSON_NOTE), ("bank_marketing", _BANK_SELECTION_NOTE))),
    Table("table4", "weight_grid.table_rmse", _SELECTION, "exp3",
          "RMSE (percentage points) between each estimate and the test error over all models of a data set (the span "
          "bound is excluded: it is not bounded by 1), then the share (%) of models with no in-bound SV (n* = 0: the "
          "span is undefined and the span-rule counts every SV as an error) and the RMSE over the models with "
          "n* >= 1. " + _REPLICATES + " Exact LOO only where it was computed for every model.",
          headline="Table 4 (Experiment 3)",
          notes=(("parkinson_speech", _PARKINSON_NOTE), ("bank_marketing", _BANK_NOTE))),
    Table("table5", "weight_grid.table_counts", _SELECTION, "exp4",
          "Mean +- sd over all models (all grid points and replicates) of the number of in-bound SVs with empty "
          "Lambda_p (Lemma 1 fails), of in-bound SVs n* and of all SVs n.",
          headline="Table 5 (Experiment 4)"),
    Table("table6", "weight_grid.table_timings", _SELECTION, "exp5",
          "Mean +- sd time per model (milliseconds, one processor: one thread for LIBSVM, BLAS and the QP solver) to "
          "compute the span-rule (all S_p), to run {cv}, to train, and to compute the span bound; exact LOO over the "
          "models where it was computed. Last column: CV time / span-rule time.",
          headline="Table 6 (Experiment 5)"),
    Table("loo_agreement", "weight_grid.table_loo", _SELECTION, "exp3",
          "Span-rule vs exact leave-one-out error over the models with exact LOO: share of models where both count "
          "the same errors (%), mean and max absolute difference, mean signed difference (span-rule - LOO) and RMSE "
          "(percentage points); then the share (%) of these models with no in-bound SV (n* = 0, span undefined) and "
          "the RMSE over those with n* >= 1.",
          headline="Span-rule vs exact LOO"),
    Table("exp6_summary", "weight_grid.table_exp6", ("exp6",), "exp6",
          "Experiment 6 (synthetic ringnorm variant): mean +- sd over models of the time per model (milliseconds, "
          "one thread) of the span-rule, {cv} and training, and of n* and n, per dimension d and training size l.",
          headline="Experiment 6 summary"),
    Table("exp10_diameters", "standard_span.table_exp10_diameters", ("exp10",), "exp10",
          "Standard SVM (every C_i = C), kernel exp(-||x - x'||^2 / (2 sigma^2)): mean +- sd over the replicates of "
          "the diameter D of the smallest sphere enclosing all training points, the diameter D_SV of the one "
          "enclosing the in-bound SVs and the span S (max of the box-constrained S_p), the mean ratio S / D_SV, the "
          "share of models with S <= D_SV (a theorem), and the mean numbers of in-bound SVs n* and SVs n. Replicates "
          "of mnist_0to4_5to9: disjoint training subsets of 317 MNIST digits, 0-4 vs 5-9 (the original used USPS "
          "digits, which are not available here).",
          headline="Experiment 10, span vs diameters (standard SVM)"),
    Table("exp10_selection", "standard_span.table_exp10_selection", ("exp10",), "exp10",
          "Standard SVM: for each data set and each varied hyperparameter (the other fixed at the grid point of "
          "lowest mean test error, column at), per estimator: the RMSE (percentage points) between its curve and the "
          "test-error curve (curves = means over the replicates), the RMSE over the models (mean +- sd over "
          "replicates), the share (%) of the curve's models with no in-bound SV (n* = 0: the span is undefined and "
          "the span-rule counts every SV as an error) and the curves' RMSE over the points where every replicate has "
          "n* >= 1, the minimisers of its curve and of the test-error curve (the smallest value when several tie) "
          "and their difference, the test error (%) of the model it selects on the curve of each replicate (tie "
          "rule: {tie_rule}, {tie_rule_text}) and the minimum test error on that curve, both mean +- sd over the "
          "replicates (Min. error is the mean of each replicate's own minimum, not the minimum of the mean "
          "test-error curve, which the minimiser columns locate). The span bound is not bounded by 1: no RMSE.",
          headline="Experiment 10, model selection (standard SVM)"),
    Table("exp10_cost", "standard_span.table_exp10_cost", ("exp10",), "exp10",
          "Standard SVM: mean +- sd time per model (milliseconds, one processor: one thread for the trainer, BLAS "
          "and the QP solver) to train, to compute the span-rule (all S_p, closed form), the span bound "
          "(box-constrained spans, D included) and the exact leave-one-out error by retraining without each SV "
          "({engine}); mean n; the ratio of the exact LOO's mean time to the span-rule's and to training's.",
          headline="Experiment 10, cost (standard SVM)"),
    Table("exp8_selection", "lupi.table_exp8_selection", ("exp8",), "exp8",
          "Test error (%) of the model selected by each rule (tie rule: {tie_rule}, {tie_rule_text}): the validation "
          "sample, K-fold CV, the span-rule and span bound (for SVM+: of its equivalent weighted SVM), SVM+'s LOO "
          "rule, the exact LOO error (where computed for every grid point), and the minimum test error over the "
          "grid. Mean +- sd over the seeded subsamples (column Replicates); l: training size, ratio: "
          "training-to-validation.",
          headline="Experiment 8 (SVM+ and weighted SVMs)"),
    Table("exp8_time", "lupi.table_exp8_time", ("exp8",), "exp8",
          "Seconds (one thread) each selection rule spends over a method's grid: training and the validation error; "
          "K-fold CV; training and the span-rule; training and SVM+'s LOO rule; training and the exact LOO. Every "
          "rule also pays for the weights: weight learning (it needs the validation sample) and the Nadaraya-Watson "
          "estimate. Last column: CV time / span-rule time. Mean +- sd over the subsamples.",
          headline="Experiment 8: selection time"),
    Table("exp8_svm_plus_loo", "lupi.table_exp8_svm_plus_loo", ("exp8",), "exp8",
          "Over the SVM+ models with exact LOO (SVM+ retrained without each point): RMSE and mean signed difference "
          "(percentage points) of the span-rule of the equivalent weighted SVM and of SVM+'s LOO rule against SVM+'s "
          "exact LOO error; RMSE of the span-rule against the exact LOO of the equivalent weighted SVM with its "
          "weights held fixed (what the span-rule estimates: leaving a point out of SVM+ moves every weight), over "
          "all of them and over those not kept at the QP solver's unpolished solution (in the study degenerate "
          "models, whose weights-fixed LOO read 1.0); the share (%) of models with no in-bound SV (n* = 0), of zero "
          "weights and of unpolished models.",
          headline="Experiment 8: what estimates SVM+'s leave-one-out error?"),
    Table("exp7_path", "reference_path.table_exp7", ("exp7",), "exp7",
          "Four Gaussians, cost-weighted path (group D1's weight from ~0 to 10, D2 at 10), per size l = n: mean +- sd "
          "over the data sets (column Replicates) of the CPU seconds (one thread) of the exact solution path, of "
          "re-solving cold by {engine} at every breakpoint (scaled from the re-solved breakpoints where fewer than all "
          "were re-solved) and of re-solving by smo at every breakpoint hot-started from its solution at the previous "
          "one (alpha seeding, the original study's baseline; its tolerance under the table), of the path's events "
          "and mean |M|, of the re-solved breakpoints and of the speed-up against each re-solver (per data set: "
          "re-solver's time / path's time), with each speed-up's smallest; the largest |f_path - f| over the training "
          "points at the re-solved breakpoints, f by each re-solver (its accuracy; up to a constant where no SV is "
          "free, so that b is not unique: a re-solver may take any of the optimal interval, the path an end); the "
          "paths that fell back to re-solving.",
          headline="Experiment 7 (exact solution path, four Gaussians)"),
    Table("exp9_training", "sampling.table_exp9_training", ("exp9",), "exp9",
          "Training from the features on one thread, per data set, training size l, C (log2) and engine (the "
          "reference engine first): wall and CPU seconds, the time over the reference engine's, peak memory (MiB: "
          "resident-set high-water mark over the fit minus the size before), the sampling engine's rounds and final "
          "sample (draws and distinct points), SV counts (n, n*, bounded), the largest KKT violation of the FULL "
          "problem on all l points (in y f), the largest |f - f_ref| on the test set and the size of the symmetric "
          "difference of the SV sets against the reference, the test error and the machine's load average when the "
          "fit started (the machine may be shared). A precomputed-kernel engine over the memory budget is not run "
          "(status).",
          headline="Experiment 9: training on large l"),
    Table("exp9_span", "sampling.table_exp9_span", ("exp9",), "exp9",
          "Span-rule selection over C on one large training set: per C, the sampled model's SV counts (n, n*), test "
          "error, span-rule (from its SVs only) and K-fold CV error (LIBSVM evaluating the RBF itself; '-' where only "
          "some folds were run); wall-clock seconds of the sampling trainer (whose model the span-rule reads), of "
          "the span-rule, of LIBSVM's training on all l points at that C (the training table's row) and of LIBSVM's "
          "K-fold CV (measured, or projected as the mean fold time x K: column cv_time), and CV time / (LIBSVM "
          "training + span-rule), LIBSVM against LIBSVM. BLAS limited to one thread.",
          headline="Experiment 9: span-rule selection at scale"),
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
    Figure("exp10-span-ratio", "exp10_span_ratio", ("exp10",),
           "**Experiment 10: span-to-diameter ratio.** S / D_SV and S / D of each model, mean +- sd over the "
           "replicates (models without an in-bound SV, whose span is undefined, left out), against the RBF width sigma (log2 C at its minimum-mean-test-error value), one panel per "
           "data set that varies sigma; the dashed line is 1: S <= D_SV is a theorem, and the original study "
           "found the span much smaller than the diameters."),
    Figure("exp8-test-error", "exp8_test_error", ("exp8",),
           "**Experiment 8: test error against the training size** (in the style of seed 003's Figures 6-7): "
           "test error of the model each method selects, one row of panels per data set and ratio, one column per "
           "selection rule (validation sample, K-fold CV, span-rule); mean +- sd over the seeded subsamples."),
    Figure("exp8-svm-plus-loo", "exp8_svm_plus_loo", ("exp8",),
           "**Experiment 8: SVM+'s leave-one-out estimates against its exact LOO error**, one point per SVM+ model "
           "with exact LOO: the span-rule of the equivalent weighted SVM (left) and SVM+'s LOO rule (right); the "
           "dashed line is equality."),
    Figure("exp7-path", "exp7_path", ("exp7",),
           "**Experiment 7: the solution path against re-solving.** Events of the path (left) and CPU seconds of "
           "the path and of re-solving at every breakpoint by the rows' engine (right, log scale; LIBSVM where "
           "svm.engine is auto) against the size n, one point per data set, lines through the medians."),
    Figure("exp7-alpha-paths", "exp7_alpha_paths", ("exp7",),
           "**Experiment 7: the solution path traced.** On the smallest four-Gaussian data set of the rows (its "
           "first seed) with a validation sample of as many points from the same draw, the cost-weighted path "
           "(group D1's weight from ~0 to 10, D2 at 10) is followed again (the rows hold no alphas): every "
           "alpha_i against D1's weight (top; linear between the path's breakpoints) and the exact validation "
           "error along the path (bottom; piecewise constant, it changes where a validation point's decision "
           "value crosses 0; star: the minimum)."),
    Figure("exp9-time", "exp9_time", ("exp9",),
           "**Experiment 9: training time against the training size l** (log scales; wall-clock seconds, BLAS "
           "limited to one thread: the training table's cpu_train has the CPU time), one panel per "
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


def figure(drawer: str) -> Figure:
    """The catalog's figure drawn by ``drawer``; a KeyError naming the catalog's drawers for any other.
    """
    for f in FIGURES:
        if f.drawer == drawer:
            return f
    raise KeyError(f"unknown figure drawer {drawer!r}; the catalog has {', '.join(f.drawer for f in FIGURES)}")


def tables_for(configured: Iterable[str]) -> list[Table]:
    """The tables a study with these (grid) experiments builds."""
    configured = set(configured)
    return [t for t in TABLES if configured & set(t.reads)]


def figures_for(configured: Iterable[str]) -> list[Figure]:
    """The figures a study with these (grid) experiments draws."""
    configured = set(configured)
    return [f for f in FIGURES if configured & set(f.reads)]
