"""SpanSearchCV's memory estimate, its refusal before any kernel is computed, and the progress lines (issue 45).

Ground truths: the resident-set high-water mark (VmHWM) of a real search in a fresh process; the arrays' sizes
counted by hand from the module's list of terms; ``FoldKernels``' own arrays; hand-written /proc and cgroup files;
a clock that the test drives.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC

import wsvm_span as ws
from wsvm_span.cli import main
from wsvm_span.engines import ENGINE_NAMES, get_engine
from wsvm_span.model_selection import SpanSearchCV, SVMPlusSearchCV
from wsvm_span.model_selection import _memory, _search
from wsvm_span.model_selection._memory import MB, SearchMemoryError, search_memory
from wsvm_span.model_selection._progress import SearchProgress, format_duration
from wsvm_span.model_selection._sklearn_compat import has_fit_callbacks
from wsvm_span.utils.environment import available_memory, cgroup_headroom

#: the largest factor by which the estimate may exceed a measured peak on a grid that reaches its worst case (every
#: point in-bound), and the least: the estimate is an upper bound (docs/selecting.md, "Memory and progress")
WORST_CASE_RATIO = (0.6, 1.0)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=200, n_features=5, n_informative=3, flip_y=0.1, random_state=3)
    return X, y


# -------------------------------------------------------------------------------------------- the estimate
def test_estimate_adds_the_arrays_of_the_module_doc_by_hand():
    l, d = 1000, 10
    square = 8 * l * l
    # X's copy, the squared distances, one training kernel, the span-rule's worst case (3.5 l^2 doubles), SMO's row
    # cache (all l rows: below its 200 MB), the models (32 doubles per point)
    by_hand = 8 * l * d + square + square + 3.5 * square + square + 32 * 8 * l + 64 * 2**20
    assert search_memory(l, d, n_kernels=3).nbytes == by_hand
    # held-out rows: their squared distances and kernel block, m x l each
    assert search_memory(l, d, heldout=100).nbytes == by_hand + 2 * 8 * 100 * l
    # the exact LOO's margin system (6.5 l^2 doubles) replaces the span-rule's as the point's largest array
    assert search_memory(l, d, criteria={"loo_error"}).nbytes == by_hand + 3.0 * square
    # two threads across two kernels: each its kernel, its estimates and its cache
    assert search_memory(l, d, n_kernels=2, n_jobs=2).nbytes == by_hand + square + 3.5 * square + square + 32 * 8 * l
    # a grid of one kernel and one walk keeps a second thread idle: nothing more
    assert search_memory(l, d, n_kernels=1, walks=1, n_jobs=2).nbytes == by_hand
    # a callable's Gram block is its own array, beside the buffer of the named kernels
    assert search_memory(l, d, kernels={"rbf", "callable"}, n_kernels=3).nbytes == by_hand + square


def test_cv_term_is_the_fold_kernels_arrays():
    l, folds = 600, ws.stratified_folds(np.repeat([-1.0, 1.0], 300), k=5, seed=0)
    K = ws.rbf_kernel(np.random.default_rng(0).normal(size=(l, 3)), gamma=0.5)
    parts = sum(part.nbytes for *_, part in ws.FoldKernels(K, folds).parts)
    base = search_memory(l, 3, criteria={"xi_alpha_bound"})
    with_cv = search_memory(l, 3, criteria={"xi_alpha_bound", "cv_error"}, cv_folds=folds)
    assert with_cv.nbytes - base.nbytes == parts


def test_multiclass_estimates_scale_with_the_largest_machine():
    # three classes of 1,000: the span-rule's worst case is a machine of 2,000 points, not all 3,000
    three = search_memory(3000, 5, class_sizes=[1000, 1000, 1000])
    two = search_memory(3000, 5)
    assert two.nbytes - three.nbytes == pytest.approx(3.5 * 8 * (3000**2 - 2000**2) + 8 * (3000**2 - 2000**2)
                                                      - 32 * 8 * 3000 * 2, rel=1e-12)


def test_every_engine_has_a_trainer_entry():
    assert {get_engine(name).name for name in ENGINE_NAMES} <= set(_memory.TRAINERS)


def test_memory_estimate_method_reads_the_search(data):
    X, y = data
    search = SpanSearchCV(param_grid={"C": [1.0, 8.0], "gamma": [0.1, 1.0], "kernel": ["rbf", "linear"]},
                          criterion="cv_error", cv=4)
    estimate = search.memory_estimate(X, y, heldout=(X[:30], y[:30]))
    folds = search._folds(search._plan(X, y, None, None, None).prob)
    # the linear kernel's points differ in gamma, which it ignores: its two walks (one per gamma) share it
    expected = search_memory(200, 5, heldout=30, kernels={"rbf", "linear"}, n_kernels=3, walks=2,
                             criteria={"cv_error", "xi_alpha_bound", "sv_count_bound"}, cv_folds=folds)
    assert estimate == expected
    names = [t.name for t in estimate.search if t.nbytes]
    assert "squared distances" in names and "inner products" in names


@pytest.mark.parametrize("classes", [2, 3])
def test_estimate_bounds_the_measured_peak_of_a_real_search(tmp_path, classes):
    """A search in a fresh process (its resident-set high-water mark during fit), on a grid whose largest gamma
    makes every point an in-bound SV: the estimate is above the measured peak, by less than WORST_CASE_RATIO says."""
    script = """
import json, sys
import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import MinMaxScaler
from wsvm_span.engines.measure import peak_rss_reset, peak_rss_since
from wsvm_span.model_selection import SpanSearchCV
X, y = make_classification(n_samples=2500, n_features=20, n_informative=10, n_classes=int(sys.argv[1]),
                           flip_y=0.1, random_state=0)
X = MinMaxScaler().fit_transform(X)
search = SpanSearchCV(param_grid={"C": [8.0], "gamma": [0.03, 32.0]}, n_jobs=1)
estimate = search.memory_estimate(X, y).mb
base = peak_rss_reset()
search.fit(X, y)
print(json.dumps({"estimate": estimate, "peak": peak_rss_since(base),
                  "inbound": int(np.max(search.cv_results_["n_inbound"]))}))
"""
    done = subprocess.run([sys.executable, "-c", script, str(classes)], capture_output=True, text=True, check=True,
                          env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PATH": ""})
    got = json.loads(done.stdout.strip().splitlines()[-1])
    if not np.isfinite(got["peak"]):
        pytest.skip("this kernel does not reset the resident-set high-water mark (/proc/self/clear_refs)")
    assert got["inbound"] > 0.8 * 2500  # the grid reaches (nearly) the worst case the estimate assumes
    low, high = WORST_CASE_RATIO
    assert low * got["estimate"] <= got["peak"] <= high * got["estimate"], got


# ------------------------------------------------------------------------------------------- the refusal
def test_refused_before_any_kernel_is_computed(data, monkeypatch):
    X, y = data

    def computed(*args, **kwargs):
        raise AssertionError("a kernel was computed before the memory check")

    monkeypatch.setattr(_search, "_Kernels", computed)
    limit = _memory.SLACK / MB + 0.5  # half a MB beside the fixed slack: a sample of the 200 points fits
    # span_bound: a search that cannot run on a row cache either (its D needs the whole kernel)
    search = SpanSearchCV(param_grid={"C": [1.0, 8.0], "gamma": [0.1, 1.0]}, criterion="loo_error",
                          extra_criteria=("span_bound",), n_jobs=2, max_memory=limit)
    with pytest.raises(SearchMemoryError) as info:
        search.fit(X, y)
    message = str(info.value)
    estimate = search.memory_estimate(X, y)
    # the estimate, its largest term, the limit and what needs less, each with its own estimate
    assert f"would need about {estimate.summary()}" in message
    assert f"max_memory={limit:.0f} MB" in message and "refused before computing any kernel" in message
    assert f"n_jobs=1 (each of the 2 threads holds its own buffers): " in message
    assert "criterion='span_rule' without ['loo_error', 'span_bound']" in message
    sample = int(re.search(r"a sample of at most ([\d,]+) of the 200 points", message).group(1).replace(",", ""))
    fits = dict(search._memory_settings(search._plan(X, y, None, None, None)), l=sample)
    assert search_memory(**fits).nbytes <= limit * MB < search_memory(**dict(fits, l=sample + 1)).nbytes
    assert isinstance(info.value, MemoryError)


def test_refusal_is_fast_on_a_search_that_would_take_long():
    # 3,000 points and grid.py's 110 points: minutes of work, refused in the time it takes to read the data
    X, y = make_classification(n_samples=3000, n_features=20, random_state=0)
    t0 = time.perf_counter()
    with pytest.raises(SearchMemoryError):
        SpanSearchCV(max_memory=10).fit(X, y)
    assert time.perf_counter() - t0 < 2.0


def test_max_memory_none_and_a_large_limit_search(data):
    X, y = data
    grid = {"C": [1.0], "gamma": [0.5]}
    ref = SpanSearchCV(param_grid=grid, max_memory=None).fit(X, y)
    big = SpanSearchCV(param_grid=grid, max_memory=1e6).fit(X, y)
    assert ref.cv_results_["span_rule"] == big.cv_results_["span_rule"]
    with pytest.raises(ValueError, match="max_memory"):
        SpanSearchCV(param_grid=grid, max_memory=-1).fit(X, y)


# -------------------------------------------------------------------------------------- available memory
def test_available_memory_reads_meminfo_and_a_cgroup_limit(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24684084 kB\nMemFree:         1000 kB\nMemAvailable:   2000000 kB\n")
    no_cgroup = tmp_path / "absent"
    assert available_memory(str(meminfo), str(no_cgroup)) == 2000000 * 1024
    # cgroup v2: the job's folder has a 1 GiB limit and uses 600 MiB, 100 MiB of it reclaimable page cache
    v2 = tmp_path / "v2"
    job = v2 / "slurm" / "job_7"
    job.mkdir(parents=True)
    (job / "memory.max").write_text(f"{2**30}\n")
    (job / "memory.current").write_text(f"{600 * 2**20}\n")
    (job / "memory.stat").write_text(f"anon 1\ninactive_file {100 * 2**20}\n")
    (v2 / "slurm" / "memory.max").write_text("max\n")
    (v2 / "slurm" / "memory.current").write_text("0\n")
    cgroup = tmp_path / "cgroup"
    cgroup.write_text("0::/slurm/job_7\n")
    assert cgroup_headroom(str(cgroup), {"v2": str(v2)}) == 2**30 - 500 * 2**20
    # a parent's tighter limit applies to everything below it
    (v2 / "slurm" / "memory.max").write_text(f"{700 * 2**20}\n")
    (v2 / "slurm" / "memory.current").write_text(f"{650 * 2**20}\n")
    assert cgroup_headroom(str(cgroup), {"v2": str(v2)}) == 50 * 2**20
    # cgroup v1, no limit (2^63 rounded to a page): none
    v1 = tmp_path / "v1"
    v1.mkdir()
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (v1 / "memory.usage_in_bytes").write_text("4545454080\n")
    cgroup.write_text("4:memory:/\n0::/\n")
    assert cgroup_headroom(str(cgroup), {"v1": str(v1), "v2": str(tmp_path / "empty")}) is None


# ------------------------------------------------------------------------------------------------ progress
def test_search_progress_counts_and_projects_the_time_left():
    now = iter([100.0, 104.0, 110.0, 112.5, 2000.0])
    progress = SearchProgress(4, clock=lambda: next(now))
    assert progress.tick() == ("1/4", "4.0s elapsed, ~12.0s left")  # 4 s per point so far, 3 left
    assert progress.tick() == ("2/4", "10.0s elapsed, ~10.0s left")
    assert progress.tick() == ("3/4", "12.5s elapsed, ~4.2s left")
    assert progress.tick() == ("4/4", "31m40s elapsed, ~0.0s left")
    assert [format_duration(s) for s in (59.94, 60.0, 3599.0, 3600.0)] == ["59.9s", "1m00s", "59m59s", "1h00m"]


LINE = re.compile(r"^\[SpanSearchCV (\d+)/4\] END C=[\d.]+, gamma=[\d.]+; span_rule=\d\.\d{4}; fit=\d+\.\d{2}s "
                  r"estimate=\d+\.\d{2}s; (\d+\.\ds|\d+m\d\ds) elapsed, ~(\d+\.\ds|\d+m\d\ds) left$")


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_verbose_prints_every_point_with_the_time_left(data, capsys, n_jobs):
    X, y = data
    SpanSearchCV(param_grid={"C": [1.0, 8.0], "gamma": [0.1, 1.0]}, verbose=1, n_jobs=n_jobs).fit(X, y)
    first, *points = capsys.readouterr().out.strip().splitlines()
    assert first.startswith("Fitting 1 model for each of 4 candidates (span_rule) on 2 kernel matrix(es)")
    assert re.search(r"memory about [\d.,]+ MB: .*\((max_memory=|[\d,]+ MB available|no limit)", first), first
    assert len(points) == 4 and all(LINE.match(p) for p in points), points
    assert [int(LINE.match(p).group(1)) for p in points] == [1, 2, 3, 4]  # points done, in order, from any thread
    assert points[-1].endswith("~0.0s left")


def test_svm_plus_search_prints_the_same_progress(capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1, 0)
    SVMPlusSearchCV(param_grid={"C": [0.5, 2.0]}, verbose=1).fit(X, y, X_privileged=X[:, :1])
    lines = capsys.readouterr().out.strip().splitlines()[1:]
    assert [re.match(r"^\[SVMPlusSearchCV (\d)/2\] END C=[\d.]+; loo_rule=\d\.\d{4}; .* elapsed, ~.* left$", line)
            is not None for line in lines] == [True, True], lines


# ---------------------------------------------------------------------------------------- wsvm-span select
@pytest.fixture
def train_file(tmp_path, data):
    X, y = data
    path = tmp_path / "train.txt"
    path.write_text("".join(f"{int(label) * 2 - 1:+d} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row))
                            + "\n" for row, label in zip(X, y)))
    return path


def test_select_prints_the_memory_estimate_and_the_progress(train_file, capsys, data):
    grid = ["-log2c", "0,3,3", "-log2g", "-3,-1,2", "-png", "null", "-out", "null"]
    assert main(["select", str(train_file), *grid]) == 0
    err = capsys.readouterr().err
    from wsvm_span.model_selection.files import read_data_file

    d = read_data_file(train_file)
    estimate = SpanSearchCV(SVC(tol=1e-5), {"C": [1.0, 8.0], "gamma": [0.125, 0.5]}).memory_estimate(d.X, d.y)
    assert f"[wsvm-span select] memory: about {estimate.summary()} (" in err
    if has_fit_callbacks():
        last = err.split("\r")[-1].splitlines()[0].rstrip()  # padded to the longest line before it
        assert re.match(r"^\[wsvm-span select\] 4/4 grid points; \d+\.\ds elapsed, ~0\.0s left$", last), err


def test_select_refuses_over_max_memory(train_file, capsys):
    rc = main(["select", str(train_file), "-log2c", "0,3,3", "-log2g", "-1,-1,1", "-png", "null", "-out", "null",
               "--max-memory", "1", "--jobs", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "wsvm-span select: error: SpanSearchCV would need about" in err
    assert "more than the max_memory=1.0 MB" in err and "--max-memory MB" in err
