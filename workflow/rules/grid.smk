# Fan-out: one job per (experiment, data set, weighting, replicate x grid chunk).


localrules:
    init_tracking,
    collect_rows,


rule init_tracking:
    # Creates the MLflow store (schema migrations) and the experiments ONCE, before any grid job:
    # concurrent migrations would corrupt a SQLite store.
    output:
        "results/.tracking-initialized.json",
    params:
        runtime=INIT_ARGS,
        experiments=GRID_EXPS,
        store=RUNTIME.tracking_uri if RUNTIME.tracking_enabled else "none",  # a new store re-initialises
    log:
        "results/logs/init_tracking.log",
    conda:
        CONDA_ENV
    shell:
        "wsvm-span init-tracking {params.runtime} --experiments {params.experiments} "
        "--output {output:q} > {log:q} 2>&1"


rule grid_chunk:
    # Kernel cache once, then every model of the chunk; rows written atomically at the end.
    input:
        tracking=ancient("results/.tracking-initialized.json"),
    output:
        sc.CHUNK_PATTERN,
    params:
        spec=lambda wildcards: job_of(wildcards).to_json(),
        runtime=CHUNK_ARGS,
    threads: 1
    resources:
        mem_mb=lambda wildcards: sc.job_resources(STUDY, job_of(wildcards))["mem_mb"],
        runtime=lambda wildcards: sc.job_resources(STUDY, job_of(wildcards))["runtime"],
    log:
        sc.CHUNK_LOG_PATTERN,
    conda:
        CONDA_ENV
    shell:
        "wsvm-span run-chunk --spec {params.spec:q} {params.runtime} --output {output:q} > {log:q} 2>&1"


rule collect_rows:
    input:
        chunks=lambda wildcards: chunk_files(wildcards.experiment),
    output:
        "results/{experiment}/rows.parquet",
    log:
        "results/logs/{experiment}/collect.log",
    conda:
        CONDA_ENV
    shell:
        "wsvm-span collect --output {output:q} {input.chunks:q} > {log:q} 2>&1"
