# Fan-out: one job per (experiment, data set, weighting, replicate x grid chunk). The first job that
# logs to a new SQLite store creates it, under a file lock (no job has to run before the fan-out).


localrules:
    collect_rows,


rule grid_chunk:
    # Kernel cache once, then every model of the chunk; rows written atomically at the end.
    # On a cluster: a job killed for memory or time is resubmitted with doubled limits (attempt), and
    # jobs of under a minute of compute share one cluster job (group pack<n>, wsvm_span.study.scheduling).
    output:
        ex.CHUNK_PATTERN,
    params:
        spec=lambda wildcards: job_of(wildcards).to_json(),
        runtime=CHUNK_ARGS,
    threads: 1
    retries: 2
    group:
        job_group
    resources:
        mem_mb=lambda wildcards, attempt: job_limits(wildcards, attempt)["mem_mb"],
        runtime=lambda wildcards, attempt: job_limits(wildcards, attempt)["runtime"],
    benchmark:
        ex.CHUNK_BENCHMARK_PATTERN
    log:
        ex.CHUNK_LOG_PATTERN,
    conda:
        CONDA_ENV
    shell:
        "wsvm-span run-chunk --spec {params.spec:q} {params.runtime} --mem-mb {resources.mem_mb} "
        "--output {output:q} > {log:q} 2>&1"


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
