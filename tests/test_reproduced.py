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


def test_experiment8_table_gives_each_parts_code_versions():
    """Each Experiment 8 part's lines in *Experiment 8, part by part* name every code version its jobs ran at
    (its provenance.json), so the table cannot drift from what ran."""
    table = [line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    for provenance in sorted(REPO.glob("reproduced/paper-exp8-*/provenance.json")):
        part = provenance.parent.name
        lines = [line for line in table if f"| `{part}` |" in line]
        assert lines, f"no line of reproduced/README.md's Experiment 8 table names {part}"
        for version in json.loads(provenance.read_text(encoding="utf-8"))["code_versions"]:
            assert all(version[:7] in line for line in lines), f"{part}: code version {version[:7]} not in its lines"
