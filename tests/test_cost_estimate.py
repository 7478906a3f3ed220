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
