# Views of the rows: Tables 2-6 (+ exact-LOO agreement, Experiment 6 summary), figures, MLflow summary.
# Experiments 3-5 are tables/figures of the rows of Experiments 1 and 2; no model is recomputed.


localrules:
    table,
    figure_exp3,
    figure_exp6,
    figure_loo,
    summary,


rule table:
    input:
        rows=table_rows,
    output:
        csv=report(
            "results/tables/{table}.csv",
            caption="../report/table.rst",
            category="Tables",
            labels={"table": "{table}"},
        ),
        md="results/tables/{table}.md",
        tex="results/tables/{table}.tex",
    params:
        tie_rule=STUDY["tie_rule"],
    log:
        "results/logs/tables/{table}.log",
    conda:
        CONDA_ENV
    shell:
        "wsvm-span table {wildcards.table} --tie-rule {params.tie_rule} --csv {output.csv:q} "
        "--md {output.md:q} --tex {output.tex:q} {input.rows:q} > {log:q} 2>&1"


rule figure_exp3:
    input:
        rows=lambda wildcards: rows_file(EXP_OF_DATASET[wildcards.dataset]),
    output:
        png=report(
            "results/figures/exp3_{dataset}_{param}.png",
            caption="../report/exp3.rst",
            category="Figures",
            subcategory="Experiment 3: estimators vs one hyperparameter",
            labels={"data set": "{dataset}", "hyperparameter": "{param}"},
        ),
        pdf="results/figures/exp3_{dataset}_{param}.pdf",
    params:
        dpi=STUDY["figures"]["dpi"],
    wildcard_constraints:
        dataset=_alternatives(EXP_OF_DATASET),
        param="log2_C_plus|log2_C_minus|log2_C|A|B",
    log:
        "results/logs/figures/exp3_{dataset}_{param}.log",
    conda:
        CONDA_ENV
    shell:
        "wsvm-span figure exp3 --dataset {wildcards.dataset} --param {wildcards.param} --dpi {params.dpi} "
        "--output {output.png:q} {output.pdf:q} --rows {input.rows:q} > {log:q} 2>&1"


rule figure_exp6:
    input:
        rows=rows_file("exp6"),
    output:
        png=report(
            "results/figures/exp6_{kind}.png",
            caption="../report/exp6.rst",
            category="Figures",
            subcategory="Experiment 6: cost vs training size",
            labels={"figure": "{kind}"},
        ),
        pdf="results/figures/exp6_{kind}.pdf",
    params:
        dpi=STUDY["figures"]["dpi"],
    wildcard_constraints:
        kind="time|sv",
    log:
        "results/logs/figures/exp6_{kind}.log",
    conda:
        CONDA_ENV
    shell:
        "wsvm-span figure exp6-{wildcards.kind} --dpi {params.dpi} --output {output.png:q} {output.pdf:q} "
        "--rows {input.rows:q} > {log:q} 2>&1"


rule figure_loo:
    input:
        rows=[rows_file(e) for e in SELECTION_EXPS],
    output:
        png=report(
            "results/figures/loo_vs_span_rule.png",
            caption="../report/loo.rst",
            category="Figures",
            subcategory="Span-rule vs exact LOO",
        ),
        pdf="results/figures/loo_vs_span_rule.pdf",
    params:
        dpi=STUDY["figures"]["dpi"],
    log:
        "results/logs/figures/loo_vs_span_rule.log",
    conda:
        CONDA_ENV
    shell:
        "wsvm-span figure loo --dpi {params.dpi} --output {output.png:q} {output.pdf:q} "
        "--rows {input.rows:q} > {log:q} 2>&1"


rule summary:
    # Tables and figures as artifacts of the study's MLflow summary run (replaced on rerun).
    input:
        tracking=ancient("results/.tracking-initialized.json"),
        rows=[rows_file(e) for e in GRID_EXPS],
        artifacts=[*table_files(), *figure_files()],
    output:
        "results/mlflow-summary.json",
    params:
        runtime=TRACKING_ARGS,
        store=RUNTIME.tracking_uri if RUNTIME.tracking_enabled else "none",
    log:
        "results/logs/summary.log",
    conda:
        CONDA_ENV
    shell:
        "wsvm-span summary {params.runtime} --output {output:q} --rows {input.rows:q} "
        "--artifacts {input.artifacts:q} > {log:q} 2>&1"
