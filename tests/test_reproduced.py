"""The committed reproduced results rebuild from their committed rows (issue 26): for every part of
``reproduced/`` that keeps its rows (``reproduced/<part>/rows/<experiment>.parquet``), and every folder that
combines parts' rows (``reproduced/<folder>/sources.txt``), each of its tables that those rows feed is built again by the ``wsvm-span table`` command and must equal the committed CSV,
Markdown and LaTeX files byte for byte (no model is retrained: a table is a view of the rows)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wsvm_span.study import catalog

REPO = Path(__file__).resolve().parents[1]
WSVM = [sys.executable, "-m", "wsvm_span"]


def _rebuildable():
    """(part, table name, rows files) for every committed table whose experiments' rows are committed: a part's
    own (``rows/``), or, for a folder that combines parts, those its ``sources.txt`` lists (one rows file of
    another part per line, relative to the repository)."""
    out = []
    folders = {p.parent: sorted(p.glob("*.parquet")) for p in REPO.glob("reproduced/*/rows")}
    for listing in REPO.glob("reproduced/*/sources.txt"):
        folders[listing.parent] = [REPO / line for line in listing.read_text(encoding="utf-8").split()]
    for part, files in sorted(folders.items()):
        for table in catalog.TABLES:
            if (part / "tables" / f"{table.name}.csv").is_file():
                rows = [str(f) for f in files if f.stem in table.reads]
                if rows:
                    out.append((part.name, table.name, rows))
    return out


CASES = _rebuildable()


def test_some_part_keeps_its_rows():
    assert CASES, "no reproduced/<part>/rows/*.parquet with tables to rebuild"


@pytest.mark.parametrize("part,name,rows", CASES, ids=[f"{p}-{n}" for p, n, _ in CASES])
def test_table_rebuilds_from_committed_rows(tmp_path, part, name, rows):
    out = {ext: tmp_path / f"{name}.{ext}" for ext in ("csv", "md", "tex")}
    subprocess.run([*WSVM, "table", name, "--tie-rule", "worst", "--csv", str(out["csv"]), "--md", str(out["md"]),
                    "--tex", str(out["tex"]), *rows], check=True, capture_output=True)
    for ext, path in out.items():
        committed = REPO / "reproduced" / part / "tables" / f"{name}.{ext}"
        assert path.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), f"{committed} differs"


README = REPO / "reproduced" / "README.md"


def test_readme_names_every_folder():
    listed = README.read_text(encoding="utf-8")
    missing = [p.name for p in sorted(REPO.glob("reproduced/*/")) if f"`{p.name}`" not in listed and f"`{p.name}/`" not in listed]
    assert not missing, f"reproduced/README.md does not name {missing}"


def _seeds(seeds) -> str:
    """0-9 for a run of seeds, else the seeds themselves (0, 2, 5)."""
    seeds = sorted(int(s) for s in seeds)
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 1:
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def _experiment8_part_lines(part: Path) -> list[str]:
    """The lines *Experiment 8, part by part* gives a part: one per data set, ratio and training fraction of its
    rows, with the seeds, jobs (seed x realization) and models there, and every code version its provenance.json
    records (a part's jobs do not say which line they fed)."""
    import pandas as pd

    rows = pd.read_parquet(part / "rows" / "exp8.parquet",
                           columns=["dataset", "ratio", "train_fraction", "l", "seed", "realization"])
    versions = ", ".join(sorted({v[:7] for v in json.loads((part / "provenance.json").read_text())["code_versions"]}))
    lines = []
    for (dataset, ratio, fraction), g in rows.groupby(["dataset", "ratio", "train_fraction"], sort=True):
        (l,) = g["l"].unique()
        jobs = len(g[["seed", "realization"]].drop_duplicates())
        lines.append(f"| {dataset} | {ratio} | {l} ({fraction:g}) | {_seeds(g['seed'].unique())} | "
                     f"{jobs}, {len(g):,} | `{part.name}` | {versions} |")
    return lines


def test_experiment8_table_is_rebuilt_from_the_parts():
    """Each line of *Experiment 8, part by part* is what the part's rows and provenance.json say (data set, ratio,
    l and training fraction, seeds, jobs and models, code versions), and every part's every line is there, so the
    table cannot drift from what ran."""
    section = README.read_text(encoding="utf-8").split("## Experiment 8, part by part", 1)[1]
    table = [line for line in section.splitlines() if line.startswith("| ") and "`paper-exp8-" in line]
    rebuilt = [line for part in sorted(REPO.glob("reproduced/paper-exp8-*/")) for line in _experiment8_part_lines(part)]
    assert sorted(table) == sorted(rebuilt), (
        f"in the README only: {sorted(set(table) - set(rebuilt))}; rebuilt only: {sorted(set(rebuilt) - set(table))}")
