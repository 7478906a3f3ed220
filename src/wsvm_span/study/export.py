"""Exporting a finished study's rows, tables and figures, with their provenance, to a folder that is kept
(``reproduced/<name>/`` in the repository): the reproduced results users can compare against.

The folder gets the rows (Parquet), the tables (CSV, Markdown, LaTeX), the figures (PNG), the config that
produced them, ``provenance.json`` (config hash, code versions, machines, library versions, QP solvers, data
checksums, every job with its wall time) and a ``README.md`` that says what is included and what is not.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from ..utils.atomic import atomic_write
from .collect import rows_provenance, write_json_atomic
from .config import config_hash, load_config
from .experiments import plan_jobs
from .progress import format_seconds

__all__ = ["export_results"]


def export_results(config: str | Path, results: str | Path, output: str | Path) -> dict:
    """Copy the rows, tables and figures of a finished study and write its provenance; every planned
    job must be in the collected rows (``results/<experiment>/rows.parquet``: a job whose chunk is not in
    them is an error that names it). The rows are copied as ``rows/<experiment>.parquet``, from which
    ``wsvm-span table`` rebuilds every table without rerunning."""
    config, results, output = Path(config), Path(results), Path(output)
    cfg = load_config(config)
    jobs = plan_jobs(cfg)
    rows = sorted(results.glob("*/rows.parquet"))
    prov_of = {f: rows_provenance([f]) for f in rows}
    prov = [p for records in prov_of.values() for p in records]
    done = {p.get("slot") for p in prov}
    missing = [j.path for j in jobs if j.slot not in done]
    if missing:
        raise FileNotFoundError(f"{len(missing)} jobs of {config} are not in the collected rows "
                                f"({results}/<experiment>/rows.parquet), e.g. {missing[:3]}; run the study first "
                                "(snakemake --configfile ...)")
    wanted = {j.slot for j in jobs}
    prov = [p for p in prov if p.get("slot") in wanted]
    output.mkdir(parents=True, exist_ok=True)
    (output / "rows").mkdir(exist_ok=True)
    for f, records in prov_of.items():
        if {p.get("slot") for p in records} & wanted:
            shutil.copyfile(f, output / "rows" / f"{f.parent.name}.parquet")
    for sub, pattern in (("tables", "*.*"), ("figures", "*.png")):
        (output / sub).mkdir(exist_ok=True)
        for f in sorted((results / sub).glob(pattern)):
            shutil.copyfile(f, output / sub / f.name)
    if config.resolve() != (output / config.name).resolve():  # a part's config may live in its folder already
        shutil.copyfile(config, output / config.name)
    record = {
        "config": config.name, "config_hash": config_hash(cfg),
        "code_versions": dict(Counter(p.get("code_version", "unknown") for p in prov)),
        "machines": sorted({json.dumps(p.get("machine", {}), sort_keys=True) for p in prov}),
        "library_versions": sorted({json.dumps(p.get("library_versions", {}), sort_keys=True) for p in prov}),
        "qp_solvers": sorted({s for p in prov for s in p.get("qp_solver", [])}),
        "data_sha256": dict(sorted({p["slot"].split("/")[1]: p.get("data_sha256") for p in prov}.items())),
        "jobs": [{"slot": p["slot"], "wall_s": p.get("wall_s"), "n_models": p.get("n_models"),
                  "code_version": p.get("code_version")} for p in sorted(prov, key=lambda p: p["slot"])],
        "wall_s_total": sum(float(p.get("wall_s", 0.0)) for p in prov),
    }
    record["machines"] = [json.loads(m) for m in record["machines"]]
    record["library_versions"] = [json.loads(m) for m in record["library_versions"]]
    write_json_atomic(record, output / "provenance.json")
    per_dataset = Counter((j.experiment, j.dataset) for j in jobs)
    models = Counter((j.experiment, j.dataset) for j in jobs for _ in range(j.n_models))
    lines = [
        f"# Reproduced results: {config.name}",
        "",
        f"Produced by `snakemake --cores <n> --configfile {output / config.name}`, exported by "
        f"`wsvm-span export-results`. Config hash `{record['config_hash']}`; code version(s) "
        + ", ".join(f"`{v}` ({n} jobs)" for v, n in record["code_versions"].items()) + ".",
        "",
        "Machine(s): " + "; ".join(f"{m.get('cpu', '?')}, {m.get('cpu_count', '?')} CPUs, {m.get('platform', '?')}"
                                    for m in record["machines"]) + f". QP solver(s): {', '.join(record['qp_solvers'])}.",
        f"Summed job wall time: {format_seconds(record['wall_s_total'])} (one thread per job).",
        "",
        "Jobs included (experiment, data set: jobs, models):",
        "",
        *[f"- {e}, {ds}: {n} jobs, {models[(e, ds)]} models" for (e, ds), n in per_dataset.items()],
        "",
        "Tables are in `tables/` (CSV with the numbers, Markdown and LaTeX with captions), figures in `figures/`,",
        "the rows they are built from in `rows/` (one Parquet file per experiment, each chunk's provenance in",
        "its metadata), every job's slot, wall time and code version in `provenance.json`.",
        "",
    ]
    with atomic_write(output / "README.md", "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    return record
