# Views of the rows: Tables 2-6 (+ exact-LOO agreement, Experiment 6 summary), figures, MLflow summary.
# Experiments 3-5 are tables/figures of the rows of Experiments 1 and 2; no model is recomputed.


localrules:
    table,
    figure,
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
        wsvm_span=WSVM_SPAN,
        tie_rule=STUDY["tie_rule"],
        caption=table_caption,
    log:
        "results/logs/tables/{table}.log",
    conda:
        CONDA_ENV
    shell:
        "{params.wsvm_span} table {wildcards.table} --tie-rule {params.tie_rule} --csv {output.csv:q} "
        "--md {output.md:q} --tex {output.tex:q} {input.rows:q} > {log:q} 2>&1"


rule figure:
    # Every figure of the catalog (wsvm_span.study.catalog.FIGURES), one file stem each.
    input:
        rows=figure_rows,
    output:
        png=report(
            "results/figures/{figure}.png",
            caption="../report/figure.rst",
            category="Figures",
            labels={"figure": "{figure}"},
        ),
        pdf="results/figures/{figure}.pdf",
    params:
        wsvm_span=WSVM_SPAN,
        drawer=lambda wildcards: figure_params(wildcards)["drawer"],
        args=lambda wildcards: figure_params(wildcards)["args"],
        caption=lambda wildcards: figure_params(wildcards)["caption"],
        dpi=STUDY["figures"]["dpi"],
    log:
        "results/logs/figures/{figure}.log",
    conda:
        CONDA_ENV
    shell:
        "{params.wsvm_span} figure {params.drawer} {params.args} --dpi {params.dpi} "
        "--output {output.png:q} {output.pdf:q} --rows {input.rows:q} > {log:q} 2>&1"


rule summary:
    # Tables and figures as artifacts of the study's MLflow summary run (replaced on rerun).
    input:
        rows=[rows_file(e) for e in GRID_EXPS],
        artifacts=[*table_files(), *figure_files()],
    output:
        "results/mlflow-summary.json",
    params:
        wsvm_span=WSVM_SPAN,
        runtime=TRACKING_ARGS,
        store=RUNTIME.tracking_uri if RUNTIME.tracking_enabled else "none",
    log:
        "results/logs/summary.log",
    conda:
        CONDA_ENV
    shell:
        "{params.wsvm_span} summary {params.runtime} --output {output:q} --rows {input.rows:q} "
        "--artifacts {input.artifacts:q} > {log:q} 2>&1"
