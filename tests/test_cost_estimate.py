"""The cost model behind `check-config --estimate` (study/config/estimate.py), against values worked out by
hand: a power law recovered exactly from points on it, a data set priced from its own means, from its family
at other training sizes, or from the all-data-set laws, and a job's seconds as the documented sum."""

from __future__ import annotations

import math

import pytest

from wsvm_span.data import DATASETS
from wsvm_span.study.config.estimate import (Calibration, _power_law, estimate, family, job_seconds,
                                              job_training_seconds)

COMPONENTS = ("t_train", "t_span_bound", "t_cv", "t_loo")


def _l(name):
    return DATASETS[name].n_train


def _calibration(datasets, laws=None, setup=(0.0, 0.0), job_s=0.0, model_s=0.0, start_s=0.0):
    laws = laws or {c: (1e-3, 1.0) for c in COMPONENTS}
    return Calibration(datasets=datasets, laws=laws, setup_law=setup, job_overhead_s=job_s, model_overhead_s=model_s,
                       process_start_s=start_s)


def test_power_law_recovered_from_points_on_it():
    import numpy as np

    l = np.array([128.0, 512.0, 4096.0])
    a, b = _power_law(l, 3e-7 * l ** 1.8)
    assert a == pytest.approx(3e-7, rel=1e-9) and b == pytest.approx(1.8, rel=1e-9)
    # one size: exponent 2 through the point
    a, b = _power_law(np.array([100.0, 100.0]), np.array([2.0, 2.0]))
    assert (a, b) == (pytest.approx(2e-4), 2.0)


def test_family_of_a_sized_data_set():
    assert family("ringnorm_d20_l16384") == "ringnorm_d20"
    assert family("ringnorm_d80_l128") == "ringnorm_d80"
    assert family("mnist_2_9") is None and family("breast_cancer_wisconsin_200_77") is None


def test_measured_data_set_uses_its_own_mean():
    cal = _calibration({"banana": {"l": 400.0, "t_train": 0.25, "t_span_bound": 0.5, "t_cv": 1.0, "t_loo": 9.0}})
    assert cal.per_model("banana", "t_cv") == 1.0
    assert cal.basis("banana") == "measured"


def test_unmeasured_size_priced_from_its_family_largest_sizes():
    # t = 2e-6 l^1.7 on the three largest measured sizes of ringnorm_d20; a smaller size off the law must
    # not count (only FAMILY_POINTS = 3 largest are fitted); another family and the all-data-set law must not
    # count either
    pts = {f"ringnorm_d20_l{l}": l for l in (512, 1024, 2048, 4096)}
    datasets = {name: {"l": float(l), "t_train": 2e-6 * l ** 1.7, "t_span_bound": 1.0, "t_cv": 1.0,
                       "t_loo": math.nan} for name, l in pts.items()}
    datasets["ringnorm_d20_l512"]["t_train"] = 100.0
    datasets["ringnorm_d40_l8192"] = {"l": 8192.0, "t_train": 1e6, "t_span_bound": 1.0, "t_cv": 1.0, "t_loo": 1.0}
    cal = _calibration(datasets, laws={c: (1.0, 3.0) for c in COMPONENTS})
    l = _l("ringnorm_d20_l16384")
    assert cal.per_model("ringnorm_d20_l16384", "t_train") == pytest.approx(2e-6 * l ** 1.7, rel=1e-9)
    assert cal.basis("ringnorm_d20_l16384") == "family"
    # no finite t_loo in the family: the all-data-set law
    assert cal.per_model("ringnorm_d20_l16384", "t_loo") == pytest.approx(1.0 * l ** 3.0)


def test_rising_exponent_extrapolated_along_the_parabola_in_log_log():
    # log t = -12 + 0.5 log l + 0.1 (log l)^2 on the three largest sizes (a rising exponent): exact at l = 16384;
    # an older, smaller size off the curve does not count
    def t(l):
        return math.exp(-12 + 0.5 * math.log(l) + 0.1 * math.log(l) ** 2)

    datasets = {f"ringnorm_d40_l{l}": {"l": float(l), "t_train": t(l), "t_span_bound": 1.0, "t_cv": 1.0,
                                      "t_loo": math.nan} for l in (1024, 2048, 4096, 8192)}
    datasets["ringnorm_d40_l1024"]["t_train"] = 1e3
    cal = _calibration(datasets)
    assert cal.per_model("ringnorm_d40_l16384", "t_train") == pytest.approx(t(_l("ringnorm_d40_l16384")), rel=1e-9)


def test_one_sibling_scaled_by_the_law_exponent_and_no_family_by_the_law():
    cal = _calibration({"ringnorm_d80_l1024": {"l": 1024.0, "t_train": 0.3, "t_span_bound": 1.0, "t_cv": 2.0,
                                               "t_loo": math.nan}},
                       laws={c: (5e-7, 2.0) for c in COMPONENTS})
    l = _l("ringnorm_d80_l4096")
    assert cal.per_model("ringnorm_d80_l4096", "t_cv") == pytest.approx(2.0 * (l / 1024) ** 2.0)
    assert cal.per_model("mnist_2_9", "t_cv") == pytest.approx(5e-7 * _l("mnist_2_9") ** 2.0)
    assert cal.basis("mnist_2_9") == "size"


def test_job_seconds_is_the_documented_sum():
    from wsvm_span.study import config as sc
    from wsvm_span.study import experiments as ex
    from test_workflow_helpers import REPO

    cfg = sc.load_config(REPO / "config" / "test.yaml")
    job = next(j for j in ex.plan_jobs(cfg) if j.experiment == "exp1" and j.loo_models)
    per = {"t_train": 0.5, "t_span_bound": 0.25, "t_cv": 2.0, "t_loo": 7.0}
    cal = _calibration({job.dataset: {"l": float(_l(job.dataset)), **per}}, setup=(0.01, 1.0), job_s=3.0,
                       model_s=0.125, start_s=4.5)
    expected = (job.n_models * (0.5 + 0.25 + 2.0 + 0.125) + len(job.loo_models) * 7.0
                + 0.01 * _l(job.dataset) + 3.0 + 4.5)
    assert job_seconds(job, cal) == pytest.approx(expected)
    est = estimate([job, job], cal, cores=2)
    assert est.cpu_s == pytest.approx(2 * expected) and est.wall_s == pytest.approx(expected)
    assert est.measured_datasets == [job.dataset] and est.family_datasets == est.extrapolated_datasets == []
    # the floor: training each model and its CV folds, nothing of the overheads, the span bound or LOO
    assert est.per_experiment_training_cpu_s == {"exp1": pytest.approx(2 * job.n_models * (0.5 + 2.0))}


def test_training_floor_leaves_out_kinds_that_price_their_own_jobs():
    from wsvm_span.study import config as sc
    from wsvm_span.study import experiments as ex
    from test_workflow_helpers import REPO

    cfg = sc.load_config(REPO / "config" / "config.yaml")
    jobs = ex.plan_jobs(cfg)
    own = [j for j in jobs if getattr(ex.kind_of(j), "calibrated_seconds", None) is not None]
    assert own, "config/config.yaml plans no job of a kind that prices its own jobs"
    per = {"t_train": 0.5, "t_span_bound": 0.25, "t_cv": 2.0, "t_loo": 7.0}
    cal = _calibration({j.dataset: {"l": 100.0, **per} for j in jobs})
    assert all(job_training_seconds(j, cal) == 0.0 for j in own)
    est = estimate(own, cal)
    assert est.training_cpu_s == 0.0 and est.cpu_s > 0


def test_calibration_without_process_start_reads_as_zero():
    d = _calibration({}).as_dict()
    del d["process_start_s"]  # a calibration file written before the field existed
    assert Calibration.from_dict(d).process_start_s == 0.0


def test_benchmark_file_of_a_chunk_file():
    from wsvm_span.study.experiments import benchmark_path

    assert (benchmark_path("results/exp6/ringnorm_d20_l128/class/chunk-3.parquet")
            == "results/benchmarks/exp6/ringnorm_d20_l128/class/chunk-3.tsv")
    assert benchmark_path("results/exp6/rows.parquet") is None and benchmark_path("") is None


# ---------------------------------------------------------------------------------------- engines ---

def _measurement(dataset, l, start, stop, lib, own, every=1, loo_models=0):
    """One sample row of ``bench_smo.py ratios``: CPU seconds per engine and component (sums over the models
    each engine was timed on: LIBSVM on every ``every``-th model, smo on all)."""
    n = stop - start
    return {"dataset": dataset, "l": l, "model_start": start, "model_stop": stop, "libsvm_every": every,
            "models": {"sklearn": -(-n // every), "smo": n}, "loo_models": loo_models,
            "cpu": {"sklearn": dict(zip(("t_train", "t_cv", "t_loo"), lib)),
                    "smo": dict(zip(("t_train", "t_cv", "t_loo"), own))}}


def _payload(*measurements, kind="weight_grid"):
    return {"engine": "smo", "baseline": "sklearn", "kind": kind, "measurements": list(measurements),
            "command": "python benchmarks/bench_smo.py ratios ...", "machine": {"cpu_count": "2"}}


def test_engine_ratios_are_ratios_of_totals_over_the_sample_rows():
    from wsvm_span.study.config.estimate import engine_ratios

    # banana: a full row (33 models) and a row whose LIBSVM was timed on every 4th model (8 of 32); LOO
    # compared over the models that had it. By hand: t_train smo 2 + 1 = 3 against LIBSVM 10 + 2/8 * 32 = 18
    rows = [_measurement("banana", 400, 0, 33, (10.0, 40.0, 8.0), (2.0, 8.0, 1.0), loo_models=3),
            _measurement("banana", 400, 33, 65, (2.0, 9.0, 0.0), (1.0, 4.0, 0.0), every=4)]
    (key, r), = engine_ratios([_payload(*rows)]).items()
    assert key == ("smo", "weight_grid") and r.baseline == "sklearn" and r.kind == "weight_grid"
    assert r.datasets["banana"]["t_train"] == pytest.approx(3.0 / 18.0)
    assert r.datasets["banana"]["t_cv"] == pytest.approx(12.0 / (40.0 + 9.0 / 8 * 32))
    assert r.datasets["banana"]["t_loo"] == pytest.approx(1.0 / 8.0)
    assert r.ratio("banana", "t_cv") == r.datasets["banana"]["t_cv"] and r.basis("banana") == "measured"
    assert r.measurements == [_payload(*rows)]


def test_engine_ratio_laws_and_families():
    import numpy as np

    from wsvm_span.study.config.estimate import engine_ratios

    # ratio = 3 l^-0.25 on every measured data set: the all-data-set law is recovered exactly and prices a
    # data set with no family; ringnorm_d40 at l = 16384 follows its family's power law through its largest
    # sizes (0.5 (l/2048)^-0.5 there, and l = 512 off the law does not count)
    law = {l: 3.0 * l ** -0.25 for l in (100, 400, 1000)}
    rows = [_measurement(ds, l, 0, 10, (1.0, 1.0, 0.0), (law[l], law[l], 0.0))
            for ds, l in (("breast_cancer", 100), ("banana", 400), ("splice", 1000))]
    r = engine_ratios([_payload(*rows)])["smo", "weight_grid"]
    a, b = r.laws["t_train"]
    assert a == pytest.approx(3.0) and b == pytest.approx(-0.25)
    assert r.ratio("mnist_2_9", "t_cv") == pytest.approx(3.0 * _l("mnist_2_9") ** -0.25)
    assert r.basis("mnist_2_9") == "size"
    fam = {l: 0.5 * (l / 2048) ** -0.5 for l in (2048, 4096, 8192)}
    fam[512] = 5.0
    rows = [_measurement(f"ringnorm_d40_l{l}", l, 0, 10, (1.0, 1.0, 0.0), (v, v, 0.0)) for l, v in fam.items()]
    r = engine_ratios([_payload(*rows)])["smo", "weight_grid"]
    assert r.ratio("ringnorm_d40_l16384", "t_train") == pytest.approx(0.5 * (16384 / 2048) ** -0.5)
    assert r.basis("ringnorm_d40_l16384") == "family"
    assert np.isnan(r.datasets["ringnorm_d40_l2048"]["t_loo"])  # no LOO measured: no ratio


def test_engine_ratios_refuse_mixed_baselines_and_a_calibration_of_another_engine():
    from wsvm_span.study.config.estimate import engine_ratios

    row = _measurement("banana", 400, 0, 33, (1.0, 1.0, 0.0), (1.0, 1.0, 0.0))
    with pytest.raises(ValueError, match="several baselines"):
        engine_ratios([_payload(row), dict(_payload(row), baseline="libsvm")])
    ratios = engine_ratios([_payload(row)])
    cal = _calibration({})
    cal.engine = "libsvm"
    with pytest.raises(ValueError, match="measured against 'sklearn'"):
        cal.with_ratios(ratios)


def _smo_calibration(per, ratio, kind="weight_grid", **kw):
    """A calibration of LIBSVM seconds ``per`` on every data set, smo at ``ratio[c]`` of them."""
    from wsvm_span.study.config.estimate import EngineRatios

    cal = _calibration({}, **kw)
    datasets = {}
    for name, entry in per.items():
        cal.datasets[name] = dict(entry)
        datasets[name] = {"l": entry["l"], **ratio}
    smo = EngineRatios(engine="smo", baseline="sklearn", kind=kind, datasets=datasets,
                       laws={c: (1.0, 0.0) for c in ("t_train", "t_cv", "t_loo")})
    return cal.with_ratios({("smo", kind): smo})


def test_job_priced_by_its_engine():
    import dataclasses

    from wsvm_span.study import config as sc
    from wsvm_span.study import experiments as ex
    from test_workflow_helpers import REPO

    cfg = sc.load_config(REPO / "config" / "test.yaml")
    lib = next(j for j in ex.plan_jobs(cfg) if j.experiment == "exp1" and j.loo_models)
    lib = dataclasses.replace(lib, engine="auto")
    smo = dataclasses.replace(lib, engine="smo")
    per = {"t_train": 0.5, "t_span_bound": 0.25, "t_cv": 2.0, "t_loo": 7.0}
    cal = _smo_calibration({lib.dataset: {"l": float(_l(lib.dataset)), **per}},
                           {"t_train": 0.5, "t_cv": 0.25, "t_loo": 0.125}, setup=(0.01, 1.0), job_s=3.0,
                           model_s=0.125, start_s=4.5)
    fixed = 0.01 * _l(lib.dataset) + 3.0 + 4.5
    by_libsvm = lib.n_models * (0.5 + 0.25 + 2.0 + 0.125) + len(lib.loo_models) * 7.0 + fixed
    # smo: training x 0.5, CV x 0.25, LOO x 0.125; the span bound, tracking, set-up and start unchanged
    by_smo = lib.n_models * (0.25 + 0.25 + 0.5 + 0.125) + len(lib.loo_models) * 0.875 + fixed
    assert job_seconds(lib, cal) == pytest.approx(by_libsvm)
    assert job_seconds(smo, cal) == pytest.approx(by_smo)
    assert job_training_seconds(smo, cal) == pytest.approx(lib.n_models * (0.25 + 0.5))
    # the engine of the estimate overrides the jobs' ("auto" is LIBSVM, the calibration's own engine)
    assert job_seconds(smo, cal, engine="auto") == pytest.approx(by_libsvm)
    assert job_seconds(lib, cal, engine="smo") == pytest.approx(by_smo)
    est = estimate([smo, smo], cal)
    assert est.cpu_s == pytest.approx(2 * by_smo)
    n, n_loo = lib.n_models, len(lib.loo_models)
    assert est.per_part_cpu_s == pytest.approx(
        {"t_train": 2 * n * 0.25, "t_span_bound": 2 * n * 0.25, "t_cv": 2 * n * 0.5, "t_loo": 2 * n_loo * 0.875,
         "tracking": 2 * (n * 0.125 + 3.0), "setup": 2 * 0.01 * _l(lib.dataset), "process_start": 2 * 4.5,
         "own_pricing": 0.0})
    assert est.engines == {"exp1": {"engine": "smo", "priced_as": "smo", "by": "ratios"}}
    assert est.ratio_basis == {"measured": [lib.dataset], "family": [], "size": []}
    est = estimate([smo], cal, engine="auto")
    assert est.cpu_s == pytest.approx(by_libsvm) and est.ratio_basis == {}
    assert est.engines == {"exp1": {"engine": "sklearn", "priced_as": "sklearn", "by": "calibration"}}
    # an experiment whose data sets two engines train (experiments.<exp>.engine) is named once per engine
    assert estimate([smo, lib], cal).engines == {
        "exp1 (smo)": {"engine": "smo", "priced_as": "smo", "by": "ratios"},
        "exp1 (sklearn)": {"engine": "sklearn", "priced_as": "sklearn", "by": "calibration"}}


def test_engine_without_ratios_for_the_job_kind_is_priced_as_the_calibration():
    import dataclasses

    from wsvm_span.study import config as sc
    from wsvm_span.study import experiments as ex
    from test_workflow_helpers import REPO

    cfg = sc.load_config(REPO / "config" / "test.yaml")
    job = dataclasses.replace(next(j for j in ex.plan_jobs(cfg) if j.experiment == "exp1"), engine="smo")
    per = {"t_train": 0.5, "t_span_bound": 0.25, "t_cv": 2.0, "t_loo": 7.0}
    cal = _smo_calibration({job.dataset: {"l": 100.0, **per}}, {"t_train": 0.5, "t_cv": 0.5, "t_loo": 0.5},
                           kind="standard_span")
    assert cal.pricing(job) == "sklearn"
    assert job_seconds(job, cal) == pytest.approx(job_seconds(job, cal, engine="auto"))
    assert estimate([job], cal).engines == {"exp1": {"engine": "smo", "priced_as": "sklearn", "by": "calibration"}}
    # a path job (no ratios for that engine) likewise
    assert cal.pricing(dataclasses.replace(job, engine="path")) == "sklearn"


def test_calibration_with_engines_round_trips_and_old_files_read_as_libsvm():
    from wsvm_span.study.config.estimate import engine_ratios

    row = _measurement("banana", 400, 0, 33, (1.0, 2.0, 0.0), (0.5, 0.5, 0.0))
    cal = _calibration({"banana": {"l": 400.0, "t_train": 1.0, "t_span_bound": 1.0, "t_cv": 1.0, "t_loo": 1.0}})
    cal = cal.with_ratios(engine_ratios([_payload(row)]))
    back = Calibration.from_dict(cal.as_dict())
    assert back.as_dict() == cal.as_dict() and back.engines["smo", "weight_grid"].ratio("banana", "t_cv") == 0.25
    old = _calibration({}).as_dict()
    del old["engine"], old["engines"], old["kind_ratios"]  # a calibration file written before engines were priced
    old = Calibration.from_dict(old)
    assert old.engine == "sklearn" and old.engines == {} and old.kind_ratios == {}
    # a file written before the ratios were keyed by job kind: the engine's name maps to its ratios
    keyed_by_engine = dict(cal.as_dict(), engines={"smo": cal.engines["smo", "weight_grid"].as_dict()})
    assert Calibration.from_dict(keyed_by_engine).as_dict() == cal.as_dict()


def test_shipped_smo_ratios_rebuild_from_their_measurements():
    """calibrate-cost reproduces the shipped engine ratios from the measurement files they keep."""
    import json

    from wsvm_span.study.config.estimate import engine_ratios, load_calibration

    cal = load_calibration()
    smo = cal.engines["smo", "weight_grid"]
    assert cal.engine == smo.baseline == "sklearn" and list(cal.engines) == [("smo", "weight_grid")]
    rebuilt = engine_ratios(smo.measurements)["smo", "weight_grid"].as_dict()
    assert json.dumps(rebuilt, sort_keys=True) == json.dumps(smo.as_dict(), sort_keys=True)  # NaN: no LOO there
    # every data set of Experiments 1, 2 and 6 in the paper config is measured but one l = 16384 set
    for name, r in smo.datasets.items():
        assert 0 < r["t_train"] < 2 and 0 < r["t_cv"] < 2, name
    assert "ringnorm_d20_l16384" in smo.datasets and smo.basis("ringnorm_d40_l16384") == "family"


def test_calibrate_cost_cli_adds_ratios_to_a_base(tmp_path):
    import json

    from wsvm_span.cli import main

    base = _calibration({"banana": {"l": 400.0, "t_train": 1.0, "t_span_bound": 1.0, "t_cv": 1.0, "t_loo": 1.0}})
    (tmp_path / "base.json").write_text(json.dumps(base.as_dict()))
    row = _measurement("banana", 400, 0, 33, (1.0, 2.0, 0.0), (0.5, 0.5, 0.0))
    (tmp_path / "smo.json").write_text(json.dumps(_payload(row)))
    out = tmp_path / "cal.json"
    assert main(["calibrate-cost", "--base", str(tmp_path / "base.json"), "--engine-ratios",
                 str(tmp_path / "smo.json"), "--output", str(out)]) == 0
    cal = Calibration.from_dict(json.loads(out.read_text()))
    assert cal.datasets == base.datasets and cal.engines["smo", "weight_grid"].datasets["banana"]["t_cv"] == 0.25
    # again from its own output: the same file (the ratios are replaced, not added twice)
    again = tmp_path / "again.json"
    assert main(["calibrate-cost", "--base", str(out), "--engine-ratios", str(tmp_path / "smo.json"),
                 "--output", str(again)]) == 0
    assert json.loads(again.read_text()) == json.loads(out.read_text())
    assert main(["calibrate-cost", "--output", str(out)]) == 2  # neither rows nor a base


def test_check_config_estimates_the_chosen_experiments_by_the_chosen_engine(tmp_path, capsys):
    import dataclasses
    import json

    from wsvm_span.cli import main
    from wsvm_span.study import config as sc
    from wsvm_span.study import experiments as ex
    from test_workflow_helpers import REPO

    config = REPO / "config" / "test.yaml"
    jobs = [j for j in ex.plan_jobs(sc.load_config(config)) if j.experiment == "exp1"]
    per = {"t_train": 0.5, "t_span_bound": 0.25, "t_cv": 2.0, "t_loo": 7.0}
    cal = _smo_calibration({j.dataset: {"l": 100.0, **per} for j in jobs},
                           {"t_train": 0.5, "t_cv": 0.25, "t_loo": 0.125})
    (tmp_path / "cal.json").write_text(json.dumps(cal.as_dict()))
    hours = {}
    for engine in ("smo", "auto"):
        assert main(["check-config", str(config), "--estimate", "--json", "--calibration", str(tmp_path / "cal.json"),
                     "--experiments", "exp1", "--engine", engine]) == 0
        out = json.loads(capsys.readouterr().out)
        assert list(out["experiments"]) == ["exp1"] and out["jobs"] == len(jobs)
        hours[engine] = out["estimate"]["cpu_hours"]
        expected = sum(job_seconds(dataclasses.replace(j, engine=engine), cal) for j in jobs) / 3600
        assert hours[engine] == pytest.approx(expected)
    assert hours["smo"] < hours["auto"]


# ------------------------------------------------------------------------ measured ratios per (engine, kind) ---

def _one_job_per_kind():
    """A job of each kind of config/config.yaml (weight grid, standard span, SVM+, reference path, sampling)."""
    from wsvm_span.study import config as sc
    from wsvm_span.study import experiments as ex
    from test_workflow_helpers import REPO

    jobs = {}
    for job in ex.plan_jobs(sc.load_config(REPO / "config" / "config.yaml")):
        jobs.setdefault(job.kind, job)
    assert set(jobs) == {"weight_grid", "standard_span", "lupi", "reference_path", "sampling"}
    return jobs


def _kind_ratios(cal, ratios):
    from wsvm_span.study.config.estimate import KindRatio

    return cal.with_kind_ratios([KindRatio(engine, kind, r, jobs=1, measured_s=r, projected_s=1.0)
                                 for (engine, kind), r in ratios.items()])


def test_measured_ratios_are_keyed_by_engine_and_job_kind():
    """One engine's jobs of two kinds, and one kind's jobs of two engines, each take their own measured ratio: a
    ratio keyed by the engine alone (or the kind alone) would price one of each pair by the other's."""
    import dataclasses

    jobs = _one_job_per_kind()
    per = {"t_train": 0.5, "t_span_bound": 0.25, "t_cv": 2.0, "t_loo": 7.0}
    base = _calibration({j.dataset: {"l": 100.0, **per} for j in jobs.values()}, setup=(0.01, 1.0), job_s=3.0,
                        model_s=0.125, start_s=4.5)
    ratios = {("smo", "weight_grid"): 0.5, ("smo", "standard_span"): 2.0, ("sklearn", "weight_grid"): 3.0,
              ("smo", "lupi"): 5.0, ("smo", "reference_path"): 0.25, ("own", "sampling"): 4.0}
    cal = _kind_ratios(base, ratios)
    smo = {kind: dataclasses.replace(job, engine="smo") if hasattr(job, "engine") else job
           for kind, job in jobs.items()}
    for kind, job in smo.items():
        engine = "own" if kind == "sampling" else "smo"
        # every part but the process's start, which the jobs' clocks that measured the ratios do not see
        assert job_seconds(job, cal) - 4.5 == pytest.approx(ratios[engine, kind] * (job_seconds(job, base) - 4.5))
    grid = smo["weight_grid"]
    assert job_seconds(grid, cal, engine="auto") - 4.5 == pytest.approx(3.0 * (job_seconds(grid, base, "auto") - 4.5))
    assert estimate([grid, smo["standard_span"]], cal).kind_ratios == {"smo/standard_span": 2.0,
                                                                       "smo/weight_grid": 0.5}
    # a kind without a measured ratio for its engine is priced as before
    path_job = dataclasses.replace(grid, engine="path")
    assert job_seconds(path_job, cal) == pytest.approx(job_seconds(path_job, base))


def test_fitted_ratio_of_each_engine_and_kind_is_its_measured_over_its_projected_seconds():
    """Jobs measured at 2x, 0.5x and 3x their projection (by their own clocks) give those ratios, each to its
    (engine, kind), and the projection then matches every experiment's measured seconds."""
    import dataclasses

    from wsvm_span.study.config.estimate import committed_error, fit_kind_ratios

    jobs = _one_job_per_kind()
    per = {"t_train": 0.5, "t_span_bound": 0.25, "t_cv": 2.0, "t_loo": 7.0}
    cal = _calibration({j.dataset: {"l": 100.0, **per} for j in jobs.values()}, job_s=3.0, start_s=4.5)
    grid_smo = dataclasses.replace(jobs["weight_grid"], engine="smo")
    grid_lib = dataclasses.replace(jobs["weight_grid"], engine="auto", experiment="exp2")
    span_smo = dataclasses.replace(jobs["standard_span"], engine="smo")
    own = {j: job_seconds(j, cal) - 4.5 for j in (grid_smo, grid_lib, span_smo)}
    measured = [(grid_smo, 2.0 * own[grid_smo], "a"), (grid_smo, 2.0 * own[grid_smo], "b"),
                (span_smo, 0.5 * own[span_smo], "a"), (grid_lib, 3.0 * own[grid_lib], "c")]
    fitted = {r.key: r for r in fit_kind_ratios(cal, measured)}
    assert {k: r.ratio for k, r in fitted.items()} == pytest.approx(
        {("smo", "weight_grid"): 2.0, ("smo", "standard_span"): 0.5, ("sklearn", "weight_grid"): 3.0})
    assert fitted["smo", "weight_grid"].jobs == 2 and fitted["smo", "weight_grid"].parts == ["a", "b"]
    before = committed_error(cal, measured)
    assert {e: v["error"] for e, v in before.items()} == pytest.approx(
        {"exp1": 1 / 2 - 1, "exp2": 1 / 3 - 1, "exp10": 1 / 0.5 - 1})
    after = committed_error(cal.with_kind_ratios(fitted.values()), measured)
    assert {e: v["error"] for e, v in after.items()} == pytest.approx({"exp1": 0, "exp2": 0, "exp10": 0}, abs=1e-12)
    # fitted again on a calibration that has them: the same ratios (they are fitted on the projection without)
    again = fit_kind_ratios(cal.with_kind_ratios(fitted.values()), measured)
    assert [r.as_dict() for r in again] == [r.as_dict() for r in fitted.values()]


#: the shipped measured ratios price the committed parts of each experiment within this, in-sample: the
#: experiments of one (engine, kind) by construction (Experiments 7, 8, 9, 10), those that share the weight grid's
#: ratios (1, 2 and 6) by how their data sets' seconds sit against the calibration's. Measured: Experiment 1
#: -21.4%, 2 +7.1%, 6 +10.6% since Experiment 6's parts at l <= 4096 are smo's (issue 43), which left LIBSVM's
#: ratio to Experiment 1's and parkinson_speech's jobs alone (it was -15.2%, +14.1%, +4.8%)
COMMITTED_TOL = 0.25


def test_shipped_measured_ratios_rebuild_from_the_committed_parts():
    """`calibrate-cost --parts reproduced/paper-*/` reproduces the shipped calibration's measured ratios from the
    committed parts (their rows' chunks and configs), and with them the projection is within COMMITTED_TOL of
    every experiment's measured seconds; without them Experiments 7 and 10, priced as LIBSVM, are 2.4-2.9x too high
    (5-9x against their first runs, on a machine of their own; their reruns for issue 43 shared a loaded one, and
    Experiment 7's added the hot-started baseline)."""
    from pathlib import Path

    from wsvm_span.study.config.estimate import committed_error, fit_kind_ratios, load_calibration
    from wsvm_span.study.verify import committed_wall_seconds
    from test_workflow_helpers import REPO

    parts = sorted(p.parent for p in (REPO / "reproduced").glob("paper-*/rows"))
    measured = [(job, wall_s, Path(part).name) for part in parts for job, wall_s in committed_wall_seconds(part)]
    cal = load_calibration()
    assert [r.as_dict() for r in fit_kind_ratios(cal, measured)] == [r.as_dict() for r in cal.kind_ratios.values()]
    assert {key for key in cal.kind_ratios} == {("sklearn", "weight_grid"), ("smo", "weight_grid"),
                                                ("smo", "standard_span"), ("smo", "reference_path"),
                                                ("smo", "lupi"), ("own", "sampling")}
    after = committed_error(cal, measured)
    assert set(after) == {"exp1", "exp2", "exp6", "exp7", "exp8", "exp9", "exp10"}
    assert all(abs(e["error"]) <= COMMITTED_TOL for e in after.values()), after
    before = committed_error(cal.with_kind_ratios([]), measured)
    assert before["exp7"]["error"] > 1 and before["exp10"]["error"] > 1
