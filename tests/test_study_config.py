"""Config validation (schema + semantic checks), grid expansion and chunking, through the API and the CLI."""

from __future__ import annotations

import copy
import re
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from wsvm_span.study import config as sc
from wsvm_span.study import experiments as ex
from wsvm_span.study.experiments import weight_grid as wg

REPO = Path(__file__).resolve().parents[1]
WSVM = Path(sys.executable).parent / "wsvm-span"


def base_config() -> dict:
    return {
        "experiments": {
            "exp1": {
                "datasets": ["breast_cancer", "banana"],
                "grid": {"log2_C_plus": {"start": -2, "stop": 6, "step": 4},
                         "log2_C_minus": {"values": [0, 1]}},
            },
            "exp2": {
                "datasets": ["parkinson_speech"],
                "grid": {"A": {"values": [1, 5]}, "B": {"start": 0, "stop": 0.9, "step": 0.3},
                         "log2_C": {"start": -6, "stop": 10, "step": 8}},
            },
            "exp6": {"d": [20, 40], "l": [128], "grid": {"log2_C_plus": {"values": [0]},
                                                         "log2_C_minus": {"values": [0, 2]}}},
        }
    }


def problems(cfg) -> str:
    with pytest.raises(sc.ConfigError) as err:
        sc.validate_config(cfg)
    return str(err.value)


def test_defaults_filled_and_hash_stable():
    cfg = sc.validate_config(base_config())
    assert cfg["tie_rule"] == "worst"
    assert cfg["seeds"] == [0] and cfg["realizations"] == [1]
    assert cfg["cv"] == {"folds": 5, "seed": 0}
    assert cfg["experiments"]["exp2"]["sigma"] == 0.01
    assert cfg["tracking"]["uri"] is None and cfg["tracking"]["enabled"] is True
    h = sc.config_hash(cfg)
    assert len(h) == 64 and h == sc.config_hash(copy.deepcopy(cfg))
    cfg2 = copy.deepcopy(cfg)
    cfg2["tie_rule"] = "best"
    assert sc.config_hash(cfg2) != h


def test_grid_expansion_and_points():
    assert sc.expand_axis({"start": -6, "stop": 10, "step": 0.5}) == [-6 + 0.5 * i for i in range(33)]
    assert sc.expand_axis({"start": 0.0, "stop": 0.9, "step": 0.1}) == [round(0.1 * i, 10) for i in range(10)]
    assert sc.expand_axis({"start": 1, "stop": 10, "step": 3}) == [1, 4, 7, 10]
    assert sc.expand_axis({"values": [3, -0.0]}) == [3.0, 0.0]
    cfg = sc.validate_config(base_config())
    axes = sc.grid_axes(cfg, "exp2")
    assert list(axes) == ["A", "B", "log2_C"]
    assert sc.grid_size(axes) == 2 * 4 * 3
    # row-major, last axis fastest
    assert sc.grid_point(axes, 0) == {"A": 1.0, "B": 0.0, "log2_C": -6.0}
    assert sc.grid_point(axes, 1) == {"A": 1.0, "B": 0.0, "log2_C": 2.0}
    assert sc.grid_point(axes, 3) == {"A": 1.0, "B": 0.3, "log2_C": -6.0}
    assert sc.grid_point(axes, 23) == {"A": 5.0, "B": 0.9, "log2_C": 10.0}
    with pytest.raises(IndexError):
        sc.grid_point(axes, 24)


def test_chunking_covers_each_grid_once_per_replicate():
    raw = base_config()
    raw.update(chunk_size=4, seeds=[0, 1], realizations=[1, 2])
    cfg = sc.validate_config(raw)
    jobs = ex.plan_jobs(cfg)
    # banana is an IDA set (fixed split per realization): realizations only; breast_cancer (random
    # split): seeds only; parkinson_speech (fixed split): one replicate
    for ds, reps in [("banana", 2), ("breast_cancer", 2), ("parkinson_speech", 1)]:
        dj = [j for j in jobs if j.dataset == ds]
        assert {(j.seed, j.realization) for j in dj} == set(ex.replicates(cfg, ds))
        assert len(ex.replicates(cfg, ds)) == reps
        for rep in ex.replicates(cfg, ds):
            idx = sorted(i for j in dj if (j.seed, j.realization) == rep for i in range(j.model_start, j.model_stop))
            assert idx == list(range(sc.grid_size(sc.grid_axes(cfg, dj[0].experiment))))
        chunks = [j.chunk for j in dj]
        assert sorted(chunks) == list(range(len(dj)))  # global chunk ids, unique per data set
    assert len({j.path for j in jobs}) == len(jobs)
    assert all(j.path.startswith(f"results/{j.experiment}/{j.dataset}/{j.weighting}/chunk-") for j in jobs)
    exp6 = [j for j in jobs if j.experiment == "exp6"]
    assert {j.dataset for j in exp6} == {"ringnorm_d20_l128", "ringnorm_d40_l128"}
    # per-experiment chunk size
    raw["experiments"]["exp2"]["chunk_size"] = 100
    cfg = sc.validate_config(raw)
    assert len([j for j in ex.plan_jobs(cfg) if j.experiment == "exp2"]) == 1  # fixed split: 1 replicate x 1 chunk


def test_chunk_size_by_data_set_pattern():
    # each data set takes the size of the one pattern it matches, or the top-level size; every grid is still
    # covered once, whatever its chunking
    raw = base_config()
    raw["chunk_size"] = 4
    raw["experiments"]["exp1"]["grid"]["log2_C_minus"] = {"values": list(range(10))}  # 3 x 10 models
    raw["experiments"]["exp1"]["chunk_size"] = {"banana": 100, "br*": 7}
    raw["experiments"]["exp6"]["grid"]["log2_C_minus"] = {"values": list(range(9))}  # 9 models
    raw["experiments"]["exp6"]["chunk_size"] = {"ringnorm_d40_*": 2}
    cfg = sc.validate_config(raw)
    jobs = ex.plan_jobs(cfg)
    n = {exp: sc.grid_size(sc.grid_axes(cfg, exp)) for exp in ("exp1", "exp6")}
    assert (n["exp1"], n["exp6"]) == (30, 9)
    expected = {("exp1", "banana"): n["exp1"], ("exp1", "breast_cancer"): 7, ("exp6", "ringnorm_d40_l128"): 2,
                ("exp6", "ringnorm_d20_l128"): 4}
    for (exp, ds), size in expected.items():
        dj = [j for j in jobs if (j.experiment, j.dataset) == (exp, ds) and (j.seed, j.realization) ==
              ex.replicates(cfg, ds)[0]]
        assert [j.n_models for j in dj] == [min(size, n[exp] - k) for k in range(0, n[exp], size)]
        assert [i for j in dj for i in range(j.model_start, j.model_stop)] == list(range(n[exp]))
        assert sorted(j.chunk for j in dj) == list(range(len(dj)))


def test_engine_by_data_set_pattern():
    # a data set takes the engine of the one pattern it matches, or svm.engine; a name alone trains them all
    raw = base_config()
    raw["svm"] = {"engine": "smo"}
    raw["experiments"]["exp1"]["engine"] = {"ban*": "auto"}
    raw["experiments"]["exp6"]["engine"] = "libsvm"
    jobs = ex.plan_jobs(sc.validate_config(raw))
    engines = {(j.experiment, j.dataset): j.engine for j in jobs}
    assert engines == {("exp1", "breast_cancer"): "smo", ("exp1", "banana"): "auto",
                       ("exp2", "parkinson_speech"): "smo", ("exp6", "ringnorm_d20_l128"): "libsvm",
                       ("exp6", "ringnorm_d40_l128"): "libsvm"}


def test_replicates_follow_the_data_registry():
    raw = base_config()
    raw.update(seeds=[0, 1, 2], realizations=[1, 2])
    cfg = sc.validate_config(raw)
    # random split: one replicate per seed
    assert ex.replicates(cfg, "breast_cancer") == [(0, 1), (1, 1), (2, 1)]
    assert len(ex.replicates(cfg, "bank_marketing")) == 3
    # fixed splits: exactly one replicate, with the first seed (it offsets the CV folds)
    assert ex.replicates(cfg, "splice") == [(0, 1)]
    assert ex.replicates(cfg, "parkinson_speech") == [(0, 1)]
    # IDA sets: one replicate per realization, not per seed
    assert ex.replicates(cfg, "banana") == [(0, 1), (0, 2)]
    # synthetic sets are drawn from the seed
    assert ex.replicates(cfg, "ringnorm_d20_l128") == [(0, 1), (1, 1), (2, 1)]
    jobs = ex.plan_jobs(cfg)
    exp2 = [j for j in jobs if j.experiment == "exp2"]
    assert {(j.seed, j.realization) for j in exp2} == {(0, 1)}
    assert {(j.seed, j.realization) for j in jobs if j.dataset == "breast_cancer"} == {(0, 1), (1, 1), (2, 1)}
    raw["seeds"] = [5, 0]
    assert ex.replicates(sc.validate_config(raw), "splice") == [(5, 1)]


def test_dataset_facts_come_from_the_data_registry():
    from wsvm_span.data import BENCHMARK_NAMES, DATASETS
    from wsvm_span.data.synthetic import N_TEST

    assert sc.SCORED_DATASETS == ("parkinson_speech", "bank_marketing", "bank_marketing_stratified")
    assert sc.IDA_DATASETS == ("waveform", "banana", "image")
    assert sc.known_datasets()[: len(BENCHMARK_NAMES)] == list(BENCHMARK_NAMES)
    for name in BENCHMARK_NAMES:
        assert sc.approx_sizes(name) == (DATASETS[name].n_train, DATASETS[name].n_test)
    assert sc.approx_sizes("ringnorm_d20_l4096") == (4096, N_TEST)


def test_job_spec_is_json_and_independent_of_runtime_settings():
    cfg = sc.validate_config(base_config())
    job = ex.plan_jobs(cfg)[0]
    spec = json.loads(job.to_json())
    assert spec["experiment"] == "exp1" and [spec["model_start"], spec["model_stop"]] == [job.model_start, job.model_stop]
    assert ex.job_from_json(job.to_json()) == job
    cfg2 = copy.deepcopy(cfg)
    cfg2["tracking"]["uri"] = "http://elsewhere:5000"
    cfg2["data"]["mirror"] = "https://example.org/mirror"
    assert ex.plan_jobs(cfg2)[0].to_json() == job.to_json()


def test_loo_selection_is_seeded_and_chunk_independent():
    raw = base_config()
    raw["loo"] = {"fraction": 0.25, "seed": 3}
    cfg = sc.validate_config(raw)
    sel = wg.loo_selection(cfg, "exp2", "parkinson_speech", 24)
    assert len(sel) == 6 and sel == wg.loo_selection(cfg, "exp2", "parkinson_speech", 24)
    raw["chunk_size"] = 5
    cfg5 = sc.validate_config(raw)
    from_chunks = {i for j in ex.plan_jobs(cfg5) if j.experiment == "exp2" for i in j.loo_models}
    assert from_chunks == set(sel)
    raw["experiments"]["exp2"]["loo_fraction"] = 0
    cfg0 = sc.validate_config(raw)
    assert wg.loo_selection(cfg0, "exp2", "parkinson_speech", 24) == frozenset()
    assert all(j.loo_models == () for j in ex.plan_jobs(cfg0) if j.experiment == "exp2")


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: c["experiments"]["exp1"].update(datasets=["breast_cancer", "nosuchset"]),
         "unknown data set 'nosuchset'; valid names: breast_cancer, mushrooms"),
        (lambda c: c["experiments"]["exp1"]["grid"].update(log2_C_plus={"start": -6, "stop": 10, "step": -2}),
         "experiments.exp1.grid.log2_C_plus: step must be positive (got -2)"),
        (lambda c: c["experiments"]["exp1"]["grid"].update(log2_C_plus={"start": -6, "stop": 10, "step": 0}),
         "step must be positive (got 0)"),
        (lambda c: c["experiments"]["exp1"]["grid"].update(log2_C_minus={"start": 4, "stop": 1, "step": 1}),
         "experiments.exp1.grid.log2_C_minus: empty grid: start (4) is greater than stop (1)"),
        (lambda c: c["experiments"]["exp1"]["grid"].update(log2_C_minus={"values": []}),
         "experiments.exp1.grid.log2_C_minus: empty grid"),
        (lambda c: c["experiments"]["exp1"].update(datasets=[]), "experiments.exp1.datasets: empty"),
        (lambda c: c["experiments"]["exp6"].update(l=[]), "experiments.exp6.l: empty grid"),
        (lambda c: c["experiments"]["exp2"].update(datasets=["banana"]), "'banana' has no importance scores"),
        (lambda c: c.update(tie_rule="random"), "tie_rule: 'random' is not one of ['worst', 'best', 'median']"),
        (lambda c: c.update(chunk_size=0), "chunk_size: 0 is less than the minimum of 1"),
        (lambda c: c["experiments"]["exp6"].update(chunk_size={"ringnorm_*_l218": 1089}),
         "experiments.exp6.chunk_size: pattern 'ringnorm_*_l218' matches none of the experiment's data sets"),
        (lambda c: c["experiments"]["exp1"].update(chunk_size={"banana": 0}),
         "experiments.exp1.chunk_size.banana: 0 is less than the minimum of 1"),
        (lambda c: c["experiments"]["exp1"].update(chunk_size={}), "experiments.exp1.chunk_size: {} should be non-empty"),
        (lambda c: c["experiments"]["exp1"].update(chunk_size={"b*": 2, "banana": 10}),
         "experiments.exp1.chunk_size: data set 'banana' matches several patterns ('b*', 'banana')"),
        (lambda c: c["experiments"]["exp1"].update(chunk_size={128: 5}),
         "experiments.exp1.chunk_size: the key 128 must be a string (quote it)"),
        (lambda c: c["experiments"]["exp1"].update(chunk_size={"banana": "x"}),
         "experiments.exp1.chunk_size.banana: 'x' is not of type 'integer'"),
        (lambda c: c["experiments"]["exp1"].update(engine={"bann*": "auto"}),
         "experiments.exp1.engine: pattern 'bann*' matches none of the experiment's data sets"),
        (lambda c: c["experiments"]["exp1"].update(engine={"banana": "svmlight"}),
         "experiments.exp1.engine.banana: 'svmlight' is not one of ['auto', 'sklearn', 'libsvm', 'smo', 'path']"),
        (lambda c: c["experiments"]["exp1"].update(engine={"b*": "smo", "banana": "auto"}),
         "experiments.exp1.engine: data set 'banana' matches several patterns ('b*', 'banana')"),
        (lambda c: c["experiments"].update(exp9={"sizes": {"skin_nonskin": [8]}, "log2_C": {"values": [0]}}),
         "experiments.exp9.sizes.skin_nonskin[0]: 8 is less than the minimum of 16"),
        (lambda c: c.update(nonsense=1), "Additional properties are not allowed ('nonsense' was unexpected)"),
        (lambda c: c["experiments"]["exp1"]["grid"].update(log2_C_plus={"start": 1, "values": [1]}),
         "a grid axis needs either start, stop and step, or values"),
        (lambda c: c.update(experiments={}), "experiments: {} should be non-empty"),
        (lambda c: c.update(seeds=[]), "seeds: needs at least one seed"),
        (lambda c: c.update(realizations=[1, 11]), "realizations: 'banana' has realizations 1-10, not 11"),
        (lambda c: c["experiments"]["exp1"].update(datasets=["ringnorm_d0_l5"]), "unknown data set 'ringnorm_d0_l5'"),
    ],
)
def test_bad_configs_have_clear_messages(mutate, message):
    cfg = base_config()
    mutate(cfg)
    assert message in problems(cfg)


def test_all_problems_reported_at_once():
    cfg = base_config()
    cfg["experiments"]["exp1"]["datasets"] = ["foo"]
    cfg["experiments"]["exp1"]["grid"]["log2_C_plus"]["step"] = -1
    text = problems(cfg)
    assert "unknown data set 'foo'" in text and "step must be positive" in text


def test_synthetic_names_accepted():
    cfg = base_config()
    cfg["experiments"]["exp1"]["datasets"] = ["ringnorm_d7_l100"]
    sc.validate_config(cfg)


def test_runtime_settings(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    (tmp_path / "mirror").mkdir()
    raw = base_config()
    raw["data"] = {"mirror": "mirror"}
    rt = sc.runtime_settings(sc.validate_config(raw), tmp_path)
    assert rt.tracking_uri == f"sqlite:///{tmp_path.resolve() / 'results' / 'mlflow.db'}"
    assert rt.artifact_root == str(tmp_path.resolve() / "results" / "mlartifacts")
    assert rt.data_mirror == str(tmp_path.resolve() / "mirror")
    assert rt.data_dir == str(tmp_path.resolve() / "resources" / "data")
    raw["data"] = {"mirror": "does-not-exist"}
    assert sc.runtime_settings(sc.validate_config(raw), tmp_path).data_mirror is None
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://tracking.example:5000")
    rt = sc.runtime_settings(sc.validate_config(raw), tmp_path)
    assert rt.tracking_uri == "http://tracking.example:5000" and rt.artifact_root is None
    raw["tracking"] = {"uri": "sqlite:///store/m.db"}
    rt = sc.runtime_settings(sc.validate_config(raw), tmp_path)
    assert rt.tracking_uri == f"sqlite:///{tmp_path.resolve() / 'store' / 'm.db'}"


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml", "test.yaml"])  # the parts': test_paper_config.py
def test_shipped_configs_validate(name):
    cfg = sc.load_config(REPO / "config" / name)
    assert ex.plan_jobs(cfg)


def test_paper_config_plans_the_full_study():
    cfg = sc.load_config(REPO / "config" / "paper.yaml")
    jobs = ex.plan_jobs(cfg)
    assert len(ex.experiment_datasets(cfg, "exp1")) == 12
    assert ex.experiment_datasets(cfg, "exp2") == ["parkinson_speech", "bank_marketing", "bank_marketing_stratified"]
    assert len(ex.experiment_datasets(cfg, "exp6")) == 24
    assert sc.grid_size(sc.grid_axes(cfg, "exp1")) == 33 * 33
    assert sc.grid_size(sc.grid_axes(cfg, "exp2")) == 10 * 10 * 17
    # exp10 (standard-svm-span.md): 23 digit subsets x 17 sigmas (2 to 100: past the span-to-diameter ratio's
    # extreme), 100 breast cancer splits x 3 sigmas x 17 C, one job per replicate
    grid = [j for j in jobs if j.experiment not in ("exp8", "exp7", "exp9")]
    # exp2: parkinson_speech once (a fixed split), both bank draws over seeds 0-9 (seeds_by_dataset)
    assert sum(j.n_models for j in grid) == 12 * 1089 + 21 * 1700 + 24 * 1089 + 23 * 17 + 100 * 3 * 17
    # one replicate each otherwise (seeds [0], realizations [1]); as the committed parts ran: exp1 33 jobs per data
    # set, exp2 17 for parkinson_speech and one per bank replicate, exp6 33 jobs per data set at every l; exp10 one
    # job per replicate of its tasks
    assert len(grid) == 12 * 33 + 17 + 20 * 1 + 24 * 33 + 23 + 100
    assert sorted({j.seed for j in grid if j.dataset == "bank_marketing_stratified"}) == list(range(10))
    assert {j.seed for j in grid if j.dataset in ("parkinson_speech", "breast_cancer", "mushrooms")} == {0}
    assert {j.n_models for j in grid if j.experiment == "exp6"} == {33}
    # trained by smo but where LIBSVM trained the committed rows: exp1 but MNIST, parkinson_speech (Experiment 6 is
    # smo's at every l since its rerun for issue 43)
    libsvm = {(j.experiment, j.dataset) for j in grid if j.engine == "auto"}
    assert {j.engine for j in jobs if hasattr(j, "engine")} == {"auto", "smo"}
    assert libsvm == ({("exp1", ds) for ds in ex.experiment_datasets(cfg, "exp1") if not ds.startswith("mnist")}
                      | {("exp2", "parkinson_speech")})
    # exp8: (5 data sets x 2 ratios + the W toy x 3: 1:2, 2:1 and 1:40) x 4 training sizes x 10 subsamples
    lupi = [j for j in jobs if j.experiment == "exp8"]
    assert len(lupi) == (5 * 2 + 3) * 4 * 10
    assert sorted({j.ratio for j in lupi if j.dataset == "w_mixture"}) == ["1:2", "1:40", "2:1"]
    # exp7 (solution-path.md's reference experiment): one job per size n, 10 data sets each
    assert [(j.n, j.n_models) for j in jobs if j.experiment == "exp7"] == [(n, 10) for n in (400, 800, 1200, 1600)]
    # exp9: skin_nonskin 7 sizes, ringnorm 6, mnist_2_9 1; 3 C x 3 engines each
    sampling = [j for j in jobs if j.experiment == "exp9"]
    assert len(sampling) == 14 and {j.n_models for j in sampling} == {9}
    # models per job: svm 5 x 8, nw 5 x 8 x 4, learned 5 x 8; sigmoid 5 x 3 x 3 x 8 and svm_plus 5 x 3 x 8 x 5
    # where the data set has scores and privileged features (parkinson, bank, the W toy)
    assert {j.dataset: j.n_models for j in lupi} == {
        "parkinson_speech": 1200, "bank_marketing": 1200, "w_mixture": 1200, "breast_cancer_wisconsin_351": 240,
        "mammographic": 240, "spambase": 240}


# --------------------------------------------------------------------------------------------- CLI
def _cli(*args, cwd=None):
    return subprocess.run([str(WSVM), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_cli_check_config_ok():
    res = _cli("check-config", REPO / "config" / "test.yaml", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["jobs"] == len(ex.plan_jobs(sc.load_config(REPO / "config" / "test.yaml")))
    assert set(out["experiments"]) == {"exp1", "exp2", "exp6", "exp10"}
    assert out["experiments"]["exp1"]["replicates"] == {"breast_cancer": 1}
    assert out["experiments"]["exp10"]["replicates"] == {"breast_cancer_wisconsin_200_77": 2}


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: c["experiments"]["exp1"].update(datasets=["nosuchset"]), "unknown data set 'nosuchset'"),
        (lambda c: c["experiments"]["exp1"]["grid"].update(log2_C_plus={"values": []}), "empty grid"),
        (lambda c: c["experiments"]["exp1"]["grid"]["log2_C_plus"].update(step=-1), "step must be positive"),
    ],
)
def test_cli_rejects_bad_config(tmp_path, mutate, message):
    cfg = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    mutate(cfg)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = _cli("check-config", path)
    assert res.returncode == 2
    assert "config error" in res.stderr and message in res.stderr
    assert "Traceback" not in res.stderr


def test_seeds_by_dataset_replaces_the_seeds_of_those_data_sets_only():
    raw = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    raw["seeds"] = [0, 1]
    raw["seeds_by_dataset"] = {"breast_cancer": [3, 4, 5]}
    cfg = sc.validate_config(raw)
    assert [s for s, _ in ex.replicates(cfg, "breast_cancer")] == [3, 4, 5]
    assert [s for s, _ in ex.replicates(cfg, "mushrooms")] == [0, 1]
    assert [s for s, _ in ex.replicates(cfg, "parkinson_speech")] == [0]  # a fixed split: once, the first seed
    assert sorted({j.seed for j in ex.plan_jobs(cfg) if j.dataset == "breast_cancer"}) == [3, 4, 5]


@pytest.mark.parametrize("entry,message", [
    ({"no_such_data": [1]}, "seeds_by_dataset.no_such_data: unknown data set"),
    ({"parkinson_speech": [1, 2]}, "seeds_by_dataset.parkinson_speech: parkinson_speech's split does not depend"),
    ({"breast_cancer": []}, "seeds_by_dataset.breast_cancer: needs at least one seed"),
    ({"breast_cancer": [1, 1]}, "seeds_by_dataset.breast_cancer: has duplicates"),
    ({"breast_cancer": ["1"]}, "seeds_by_dataset"),
])
def test_bad_seeds_by_dataset_is_rejected_by_name(entry, message):
    raw = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    raw["seeds_by_dataset"] = entry
    with pytest.raises(sc.ConfigError, match=re.escape(message)):
        sc.validate_config(raw)


def test_a_config_without_seeds_by_dataset_keeps_its_hash():
    """No schema default: the key is absent unless given, so the hashes of configs written before it stay (the
    hash pinned here moved twice since, on purpose: exp7's hot-started baseline, ``hot_tol`` with its default, and
    exp8's pinned SVM+ route, ``svm_plus_solver`` with its default)."""
    cfg = sc.load_config(REPO / "config" / "config.yaml")
    assert "seeds_by_dataset" not in cfg
    assert sc.config_hash(cfg).startswith("e93ff080f036")
