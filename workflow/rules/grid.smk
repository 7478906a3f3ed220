# Fan-out: one job per (experiment, data set, variant, replicate x grid chunk); the variant is the job
# kind's (a weight grid's weighting scheme, Experiment 8's ratio, ...). The first job that logs to a new
# SQLite store creates it, under a file lock (no job has to run before the fan-out).


localrules:
    collect_rows,


rule grid_chunk:
    # Kernel cache once, then every model of the chunk; rows written atomically at the end.
    # On a cluster: a job killed for memory or time is resubmitted with doubled limits (attempt); a job
    # that failed with an error is not run again (its next attempts stop at once: study.attempts); jobs
    # of under a minute of compute share one cluster job (group pack<n>, wsvm_span.study.scheduling).
    # Each attempt writes its own log beside {log} (a hard link to the latest) and holds the job's slot.
    output:
        ex.CHUNK_PATTERN,
    params:
        wsvm_span=WSVM_SPAN,
        spec=lambda wildcards: job_of(wildcards).to_json(),
        runtime=CHUNK_ARGS,
    threads: 1
    # retried by the main snakemake only: the snakemake inside a cluster job would retry a failed member
    # of a pack within the same (too small) cluster job, and number its attempts again
    retries: 0 if workflow.remote_exec else 2
    group:
        job_group
    resources:
        mem_mb=lambda wildcards, attempt: job_limits(wildcards, attempt)["mem_mb"],
        runtime=lambda wildcards, attempt: job_limits(wildcards, attempt)["runtime"],
        attempt=lambda wildcards, attempt: attempt,
    benchmark:
        ex.CHUNK_BENCHMARK_PATTERN
    log:
        ex.CHUNK_LOG_PATTERN,
    conda:
        CONDA_ENV
    shell:
        "{params.wsvm_span} run-chunk --spec {params.spec:q} {params.runtime} --mem-mb {resources.mem_mb} "
        "--attempt {resources.attempt} --time-limit-min {resources.runtime} --log {log:q} --output {output:q}"


rule collect_rows:
    input:
        chunks=lambda wildcards: chunk_files(wildcards.experiment),
    output:
        "results/{experiment}/rows.parquet",
    params:
        wsvm_span=WSVM_SPAN,
    log:
        "results/logs/{experiment}/collect.log",
    conda:
        CONDA_ENV
    shell:
        "{params.wsvm_span} collect --output {output:q} {input.chunks:q} > {log:q} 2>&1"
