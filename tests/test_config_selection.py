"""A config that is a part of another (``base`` + ``select``, study/experiments/selection.py): its jobs are the
base's, byte for byte, or with ``renumber`` those a config listing only them plans; and what it may not say."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study.experiments.selection import renumbered

REPO = Path(__file__).resolve().parents[1]
PAPER = "config/paper.yaml"


def study() -> dict:
    """A small full config: two data sets of exp1 over three seeds, exp6 at two d."""
    return {
        "seeds": [0, 1, 2],
        "chunk_size": 2,
        "experiments": {
            "exp1": {"datasets": ["breast_cancer", "banana"],
                     "grid": {"log2_C_plus": {"values": [0, 1]}, "log2_C_minus": {"values": [0, 1]}}},
            "exp6": {"d": [20, 40], "l": [128], "grid": {"log2_C_plus": {"values": [0]},
                                                         "log2_C_minus": {"values": [0, 2]}}},
        },
    }


def write(path: Path, cfg: dict) -> Path:
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def part(tmp_path: Path, body: dict, base: dict | None = None) -> dict:
    """``body`` loaded as a config file beside ``base`` (written as base.yaml; ``body`` names it), from tmp_path."""
    if base is not None:
        write(tmp_path / "base.yaml", base)
    return sc.load_config(write(tmp_path / "part.yaml", body), workdir=tmp_path)


def hashes(cfg: dict) -> list[str]:
    return [job.spec_hash for job in ex.plan_jobs(cfg)]


def test_a_selection_keeps_the_base_jobs_as_they_are(tmp_path):
    base = sc.validate_config(study())
    cfg = part(tmp_path, {"base": "base.yaml", "select": {"exp1": {"dataset": ["breast_cancer"], "seed": [1, 2]},
                                                          "exp6": {}}}, study())
    jobs = ex.plan_jobs(cfg)
    expected = [j for j in ex.plan_jobs(base) if j.experiment == "exp6"
                or (j.experiment, j.dataset) == ("exp1", "breast_cancer") and j.seed in (1, 2)]
    assert [j.spec_hash for j in jobs] == [j.spec_hash for j in expected]
    assert len(jobs) == 2 * 2 + 2 * 3  # exp6's synthetic data: a replicate per seed
    # only the experiments it selects (their tables and figures); the base's settings otherwise
    assert list(cfg["experiments"]) == ["exp1", "exp6"] and cfg["seeds"] == [0, 1, 2]
    assert ex.experiment_datasets(cfg, "exp1") == ["breast_cancer"]
    assert sc.validate_config(cfg) == cfg  # a resolved config validates as it is (the Snakefile validates again)


def test_an_experiment_left_out_of_select_is_left_out(tmp_path):
    cfg = part(tmp_path, {"base": "base.yaml", "select": {"exp6": {"dataset": ["ringnorm_d40_l128"]}}}, study())
    assert list(cfg["experiments"]) == ["exp6"]
    assert {(j.experiment, j.dataset) for j in ex.plan_jobs(cfg)} == {("exp6", "ringnorm_d40_l128")}


def test_renumber_numbers_as_a_config_listing_only_the_selection(tmp_path):
    # ground truth: the config that lists only the selected seeds, planned as it is
    narrowed = study()
    narrowed["seeds"] = [1, 2]
    del narrowed["experiments"]["exp6"]
    body = {"base": "base.yaml", "select": {"exp1": {"dataset": ["breast_cancer"], "seed": [1, 2]}}}
    kept = part(tmp_path, body, study())
    own = part(tmp_path, {**body, "renumber": True})
    narrowed_jobs = [j for j in ex.plan_jobs(sc.validate_config(narrowed)) if j.dataset == "breast_cancer"]
    assert hashes(own) == [j.spec_hash for j in narrowed_jobs]
    # without renumber the same models, at the base's chunk numbers
    assert [j.chunk for j in ex.plan_jobs(kept)] == [2, 3, 4, 5]
    assert [j.chunk for j in ex.plan_jobs(own)] == [0, 1, 2, 3]


def test_renumber_gives_experiment8_parts_the_jobs_of_their_own_configs(monkeypatch):
    """As the committed Experiment 8 parts ran: paper.yaml narrowed to one data set, ratio, training size and
    five seeds, planned as a config of its own (what each part's copy of paper.yaml was)."""
    monkeypatch.chdir(REPO)
    raw = yaml.safe_load((REPO / PAPER).read_text(encoding="utf-8"))
    narrowed = copy.deepcopy(raw)
    exp8 = narrowed["experiments"]["exp8"]
    exp8.update(datasets=["w_mixture"], ratios_by_dataset={"w_mixture": ["1:2"]}, train_fractions=[0.5],
                seeds=[5, 6, 7, 8, 9])
    narrowed["experiments"] = {"exp8": exp8}
    select = {"exp8": {"dataset": ["w_mixture"], "ratio": ["1:2"], "train_fraction": [0.5], "seed": [5, 6, 7, 8, 9]}}
    own = sc.validate_config({"base": PAPER, "select": select, "renumber": True})
    assert hashes(own) == hashes(sc.validate_config(narrowed))
    kept = ex.plan_jobs(sc.validate_config({"base": PAPER, "select": select}))
    assert [j.chunk for j in kept] == [4 * s + 1 for s in range(5, 10)]  # paper.yaml's: 4 sizes per seed


def test_every_kind_numbers_its_chunks_by_place_so_renumbering_a_whole_plan_changes_nothing(monkeypatch):
    monkeypatch.chdir(REPO)
    jobs = ex.plan_jobs(sc.load_config(REPO / PAPER))
    assert {j.experiment for j in jobs} == {"exp1", "exp2", "exp6", "exp7", "exp8", "exp9", "exp10"}
    assert renumbered(jobs) == jobs


def test_a_part_sets_only_what_no_job_holds(tmp_path):
    cfg = part(tmp_path, {"base": "base.yaml", "study": "a-part", "tracking": {"uri": "sqlite:///part.db"},
                          "select": {"exp6": {}}}, study())
    base = sc.validate_config(study())
    assert cfg["study"] == "a-part"
    assert cfg["tracking"] == {**base["tracking"], "uri": "sqlite:///part.db"}  # merged into the base's
    assert hashes(cfg) == [j.spec_hash for j in ex.plan_jobs(base) if j.experiment == "exp6"]


@pytest.mark.parametrize(
    "body,message",
    [
        ({"base": "base.yaml", "seeds": [4], "select": {"exp1": {}}},
         "seeds: a config with base takes these from its base (base.yaml), so that its jobs are the base's; it "
         "sets only study, data, tracking, figures, resources, select and renumber"),
        ({"base": "nowhere.yaml", "select": {"exp1": {}}}, "base: config file not found: "),
        ({"base": "part.yaml", "select": {"exp1": {}}},
         "base: part.yaml has base, select itself; a base is a full config"),
        ({"base": "base.yaml", "select": {"exp2": {}}},
         "select.exp2: the config has no experiment exp2 (it has exp1, exp6)"),
        ({"base": "base.yaml", "select": {"exp1": {"datasets": ["banana"]}}},
         "select.exp1.datasets: exp1's jobs have no field 'datasets'; select by dataset, seed, realization, chunk"),
        ({"base": "base.yaml", "select": {"exp1": {"dataset": ["mushrooms"]}}},
         "select.exp1.dataset: no job of exp1 has dataset 'mushrooms'; they have 'breast_cancer', 'banana'"),
        ({"base": "base.yaml", "select": {"exp1": {"dataset": ["banana"], "seed": [2]}}},
         "select.exp1: no job of exp1 has all of the values selected (dataset ['banana'], seed [2])"),
        ({"base": "base.yaml", "select": {"exp1": {"seed": []}}}, "select.exp1.seed: [] should be non-empty"),
        ({"base": "base.yaml", "renumber": True},
         "renumber: numbers the jobs that select keeps; give select, or leave renumber out"),
    ],
)
def test_bad_selections_have_clear_messages(tmp_path, body, message):
    write(tmp_path / "base.yaml", study())
    with pytest.raises(sc.ConfigError) as err:
        part(tmp_path, body)
    assert message in str(err.value)


def test_a_bad_base_is_named(tmp_path):
    broken = study()
    broken["experiments"]["exp1"]["datasets"] = ["nosuchset"]
    write(tmp_path / "base.yaml", broken)
    with pytest.raises(sc.ConfigError) as err:
        part(tmp_path, {"base": "base.yaml", "select": {"exp6": {}}})
    assert str(err.value).startswith("base base.yaml: invalid config") and "nosuchset" in str(err.value)
