"""The 14 data sets of experiments.md, loaded from the shared mirror into a temporary data dir.

Ground truth is independent of the package: counts from shared/data/manifest.json and
experiments.md, reference arrays parsed here with numpy/sklearn/csv/gzip, the scaling formula
written out here.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

from wsvm_span.data import (
    BENCHMARK_NAMES,
    DATASETS,
    Split,
    UnknownDatasetError,
    dataset_checksums,
    list_datasets,
    load_dataset,
)
from wsvm_span.data.splits import balanced_split_indices, stratified_split_indices

# ------------------------------------------------------------------------------ locations
from conftest import LOCAL_MIRROR as LOCAL, require_mirror

MIRROR = os.environ.get("WSVM_DATA_MIRROR") or os.fspath(LOCAL)  # a folder or a URL


@pytest.fixture(autouse=True, scope="module")
def _require_mirror():
    require_mirror()

# experiments.md, "Data sets and splits": name -> (train, test, d)
TABLE1 = {
    "breast_cancer": (100, 583, 10),
    "mushrooms": (200, 7924, 112),
    "waveform": (400, 4600, 21),
    "banana": (400, 4900, 2),
    "skin_nonskin": (500, 244557, 3),
    "splice": (1000, 2175, 60),
    "image": (1300, 1010, 18),
    "adult": (1605, 30956, 123),
    "mnist_2_9": (11907, 2041, 780),
    "mnist_1_7": (13007, 2163, 780),
    "mnist_3_6": (12049, 1968, 780),
    "mnist_0_8": (11774, 1954, 780),
    "parkinson_speech": (520, 520, 26),
    "bank_marketing": (300, 40888, 11),
}
RANDOM_SPLITS = {"breast_cancer": 100, "mushrooms": 200, "skin_nonskin": 500, "bank_marketing": 300}
BALANCED_SPLITS = ("bank_marketing",)


def _manifest_files() -> dict[str, dict]:
    manifest = json.loads((LOCAL / "manifest.json").read_text())
    return {f["path"]: f for ds in manifest["datasets"] for f in ds["files"]}


def _counts(y: np.ndarray) -> tuple[int, int]:
    """(number of +1, number of -1)."""
    return int(np.sum(y == 1)), int(np.sum(y == -1))


def _ref_scale(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The spec's scaling, written out independently: [0,1] by train min/max, constant -> 0."""
    lo, hi = train.min(axis=0), train.max(axis=0)
    rng = hi - lo
    safe = np.where(rng > 0, rng, 1.0)
    return [np.where(rng > 0, (a - lo) / safe, 0.0) for a in (train, test)]


def _read(rel: str) -> bytes:
    data = (LOCAL / rel).read_bytes()
    return gzip.decompress(data) if rel.endswith(".gz") else data


# ------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("wsvm_data")


@pytest.fixture(scope="session")
def splits(data_dir) -> dict[str, Split]:
    return {n: load_dataset(n, data_dir=data_dir, mirror=MIRROR, publishers=False)
            for n in BENCHMARK_NAMES}  # fmt: skip


@pytest.fixture(scope="session")
def manifest() -> dict[str, dict]:
    return _manifest_files()


# ------------------------------------------------------------------------------ registry
def test_list_datasets():
    names = list_datasets()
    assert names[:14] == list(TABLE1)
    # standard-svm-span.md, then bank_marketing's stratified draw (experiments.md)
    extra = ["breast_cancer_wisconsin_200_77", "mnist_0to4_5to9", "bank_marketing_stratified"]
    assert names[14:17] == extra
    lupi = ["spambase", "mammographic", "breast_cancer_wisconsin_351", "w_mixture"]
    assert names[17:21] == lupi  # Experiment 8 (tests/test_data_lupi.py)
    synth = [f"ringnorm_d{d}_l{2**k}" for d in (20, 40, 80) for k in range(7, 15)]
    assert names[21:] == synth
    assert len(DATASETS) == 45 and "ringnorm_d7_l100" in DATASETS
    assert DATASETS["ringnorm_d7_l100"].d == 7
    with pytest.raises(UnknownDatasetError):
        DATASETS["mnist_4_9"]
    with pytest.raises(KeyError):  # UnknownDatasetError is a KeyError
        load_dataset("no_such_set")


def test_pinned_checksums_match_the_mirror_files():
    """The registry's literals equal sha256 of the decompressed mirror files (hashlib here)."""
    seen = {}
    for name in BENCHMARK_NAMES:
        seen.update(dataset_checksums(name))
    assert len(seen) == 1 + 1 + 3 * 40 + 1 + 1 + 2 + 4 + 1 + 1
    for rel, sha in seen.items():
        assert hashlib.sha256(_read(rel)).hexdigest() == sha, rel


def test_dataset_checksums_per_realization(splits):
    wf = dataset_checksums("waveform", realization=1)
    assert sorted(wf) == sorted(f"waveform/ida/waveform_{p}_{k}_1.asc.gz"
                                for p in ("train", "test") for k in ("data", "labels"))  # fmt: skip
    assert splits["waveform"].checksums == wf
    assert splits["adult"].checksums == dataset_checksums("adult")
    assert dataset_checksums("ringnorm_d20_l128") == {}


# ------------------------------------------------------------------------------ all 14 sets
@pytest.mark.parametrize("name", list(TABLE1))
def test_shapes_labels_scaling(splits, name):
    s = splits[name]
    n_tr, n_te, d = TABLE1[name]
    p = 784 if name.startswith("mnist") else d
    assert s.name == name and s.d == d and isinstance(s.d, int)
    assert s.X_train.shape == (n_tr, p) and s.X_test.shape == (n_te, p)
    assert s.y_train.shape == (n_tr,) and s.y_test.shape == (n_te,)
    for a in (s.X_train, s.y_train, s.X_test, s.y_test):
        assert a.dtype == np.float64 and a.flags.c_contiguous
    assert set(np.unique(s.y_train)) == {-1.0, 1.0} and set(np.unique(s.y_test)) == {-1.0, 1.0}
    assert s.X_train.min() >= 0.0 and s.X_train.max() <= 1.0
    assert np.all(np.isfinite(s.X_test))
    # every non-constant training feature reaches exactly 0 and 1
    varying = np.ptp(s.X_train, axis=0) > 0
    assert np.all(s.X_train[:, varying].min(axis=0) == 0.0)
    assert np.all(s.X_train[:, varying].max(axis=0) == 1.0)
    assert np.all(s.X_train[:, ~varying] == 0.0) and np.all(s.X_test[:, ~varying] == 0.0)
    assert (s.scores is not None) == (name in ("parkinson_speech", "bank_marketing"))
    assert (s.X_priv is not None) == (name in ("parkinson_speech", "bank_marketing"))
    assert s.X_val is None and s.y_val is None
    assert s.gamma == pytest.approx(1.0 / d)


def test_label_counts_against_manifest(splits, manifest):
    def m(rel: str) -> dict:
        return manifest[rel]["labels"]

    def total(s: Split) -> tuple[int, int]:
        a, b = _counts(s.y_train), _counts(s.y_test)
        return a[0] + b[0], a[1] + b[1]

    bc = m("breast_cancer/breast-cancer_scale")
    assert total(splits["breast_cancer"]) == (bc["1"], bc["-1"])
    mu = m("mushrooms/mushrooms.txt.gz")
    assert total(splits["mushrooms"]) == (mu["1"], mu["2"])
    sk = m("skin_nonskin/Skin_NonSkin.txt.gz")
    assert total(splits["skin_nonskin"]) == (sk["1"], sk["2"])
    sp = manifest["splice/splice.txt.gz"]
    assert _counts(splits["splice"].y_train) == (sp["first_1000_labels"]["+1"], sp["first_1000_labels"]["-1"])
    assert _counts(splits["splice"].y_test) == (sp["last_2175_labels"]["+1"], sp["last_2175_labels"]["-1"])
    for rel, part in (("adult_a1a/a1a", "y_train"), ("adult_a1a/a1a.t.gz", "y_test")):
        assert _counts(getattr(splits["adult"], part)) == (m(rel)["+1"], m(rel)["-1"])
    tr = m("mnist/train-labels-idx1-ubyte.gz")
    te = m("mnist/t10k-labels-idx1-ubyte.gz")
    for a, b in ((2, 9), (1, 7), (3, 6), (0, 8)):
        s = splits[f"mnist_{a}_{b}"]
        assert _counts(s.y_train) == (tr[str(a)], tr[str(b)])  # digit a -> +1, b -> -1
        assert _counts(s.y_test) == (te[str(a)], te[str(b)])
    pk = m("parkinson_speech/train_data.txt")
    assert total(splits["parkinson_speech"]) == (pk["1"], pk["0"])
    assert _counts(splits["parkinson_speech"].y_train) == (260, 260)
    bk = m("bank_marketing/bank-additional-full.csv.gz")
    assert total(splits["bank_marketing"]) == (bk["yes"], bk["no"])


@pytest.mark.parametrize("name", ["waveform", "banana", "image"])
def test_ida_realizations_against_manifest(data_dir, manifest, name):
    for r in range(1, 11):
        s = load_dataset(name, realization=r, data_dir=data_dir, mirror=MIRROR, publishers=False)
        assert s.realization == r and s.seed is None
        for part in ("train", "test"):
            lab = manifest[f"{name}/ida/{name}_{part}_labels_{r}.asc.gz"]["labels"]
            assert _counts(getattr(s, f"y_{part}")) == (lab["1"], lab["-1"]), (r, part)
    with pytest.raises(ValueError, match="realization 11"):
        load_dataset(name, realization=11, data_dir=data_dir, mirror=MIRROR, publishers=False)


# ------------------------------------------------------------------------------ content
def test_ida_content(splits):
    s = splits["image"]
    rel = "image/ida/image_{}_{}_1.asc.gz"
    tr = np.loadtxt(io.BytesIO(_read(rel.format("train", "data"))))
    te = np.loadtxt(io.BytesIO(_read(rel.format("test", "data"))))
    ytr = np.loadtxt(io.BytesIO(_read(rel.format("train", "labels"))))
    ref_tr, ref_te = _ref_scale(tr, te)
    np.testing.assert_allclose(s.X_train, ref_tr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.X_test, ref_te, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(s.y_train, ytr)


def test_libsvm_content(splits):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(LOCAL / "splice/splice.txt.gz"), n_features=60)
    X = X.toarray()
    ref_tr, ref_te = _ref_scale(X[:1000], X[1000:])
    np.testing.assert_allclose(splits["splice"].X_train, ref_tr, atol=1e-12)
    np.testing.assert_allclose(splits["splice"].X_test, ref_te, atol=1e-12)
    np.testing.assert_array_equal(splits["splice"].y_test, y[1000:])
    Xa, _ = load_svmlight_file(str(LOCAL / "adult_a1a/a1a"), n_features=123)
    Xt, yt = load_svmlight_file(str(LOCAL / "adult_a1a/a1a.t.gz"), n_features=123)
    ref_tr, ref_te = _ref_scale(Xa.toarray(), Xt.toarray())
    np.testing.assert_array_equal(splits["adult"].X_train, ref_tr)
    np.testing.assert_array_equal(splits["adult"].X_test, ref_te)
    np.testing.assert_array_equal(splits["adult"].y_test, yt)


def test_breast_cancer_random_split_content(splits):
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(LOCAL / "breast_cancer/breast-cancer_scale"), n_features=10)
    X = X.toarray()
    tr, te = stratified_split_indices(y, 100, 0)
    ref_tr, ref_te = _ref_scale(X[tr], X[te])
    s = splits["breast_cancer"]
    np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
    np.testing.assert_allclose(s.X_test, ref_te, atol=1e-12)
    np.testing.assert_array_equal(s.y_train, y[tr])  # file's +1 = malignant stays +1


def test_mnist_content(splits):
    def idx(rel: str, header: int) -> np.ndarray:
        return np.frombuffer(_read(rel), dtype=np.uint8, offset=header)

    img = idx("mnist/train-images-idx3-ubyte.gz", 16).reshape(60000, 784)
    lab = idx("mnist/train-labels-idx1-ubyte.gz", 8)
    timg = idx("mnist/t10k-images-idx3-ubyte.gz", 16).reshape(10000, 784)
    tlab = idx("mnist/t10k-labels-idx1-ubyte.gz", 8)
    keep, tkeep = np.isin(lab, (2, 9)), np.isin(tlab, (2, 9))
    ref_tr, ref_te = _ref_scale(img[keep].astype(float), timg[tkeep].astype(float))
    s = splits["mnist_2_9"]
    np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
    np.testing.assert_allclose(s.X_test, ref_te, atol=1e-12)
    np.testing.assert_array_equal(s.y_train, np.where(lab[keep] == 2, 1.0, -1.0))
    assert s.d == 780 and s.X_train.shape[1] == 784


def _parkinson_reference() -> np.ndarray:
    return np.loadtxt(io.BytesIO(_read("parkinson_speech/train_data.txt")), delimiter=",")


def test_parkinson_split_features_and_scores(splits):
    s = splits["parkinson_speech"]
    T = _parkinson_reference()
    subj = T[:, 0]
    tr = np.isin(subj, list(range(1, 11)) + list(range(21, 31)))
    te = np.isin(subj, list(range(11, 21)) + list(range(31, 41)))
    ref_tr, ref_te = _ref_scale(T[tr, 1:27], T[te, 1:27])
    np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
    np.testing.assert_allclose(s.X_test, ref_te, atol=1e-12)
    np.testing.assert_array_equal(s.y_train, np.where(T[tr, -1] == 1, 1.0, -1.0))
    # scores: healthy -> 1; patients -> UPDRS scaled over the training patients
    q, y, updrs = s.scores, s.y_train, T[tr, -2]
    assert q.shape == (520,) and q.dtype == np.float64
    assert np.all(q[y == -1] == 1.0)
    pat = y == 1
    assert q[pat].min() == 0.0 and q[pat].max() == 1.0
    lo, hi = updrs[pat].min(), updrs[pat].max()
    np.testing.assert_allclose(q[pat], (updrs[pat] - lo) / (hi - lo), atol=1e-15)
    for sid in np.unique(subj[tr]):  # one score per subject
        assert np.ptp(q[subj[tr] == sid]) == 0.0
    # privileged feature (SVM+): the UPDRS of every training row (the file has 1 for every healthy
    # subject, below every patient's), scaled to [0, 1] by its training min and max
    assert s.X_priv.shape == (520, 1) and np.ptp(updrs[~pat]) == 0 and updrs[~pat].max() < updrs[pat].min()
    np.testing.assert_allclose(s.X_priv[:, 0], (updrs - updrs.min()) / np.ptp(updrs), atol=1e-15)


@pytest.fixture(scope="module")
def bank_file() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, duration) of bank-additional-full.csv, parsed here with csv."""
    with gzip.open(LOCAL / "bank_marketing/bank-additional-full.csv.gz", "rt", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter=";"))
    numeric = ["age", "previous", "emp.var.rate", "cons.price.idx", "cons.conf.idx", "euribor3m",
               "nr.employed"]  # fmt: skip
    X = np.array([[float(r[c]) for c in numeric]
                  + [r["default"] == "yes", r["housing"] == "yes", r["loan"] == "yes",
                     r["marital"] == "married"] for r in rows], dtype=float)  # fmt: skip
    y = np.array([1.0 if r["y"] == "yes" else -1.0 for r in rows])
    dur = np.array([float(r["duration"]) for r in rows])
    return X, y, dur


def test_bank_features_and_scores(splits, bank_file):
    X, y, dur = bank_file
    tr, te = balanced_split_indices(y, 300, 0)
    ref_tr, ref_te = _ref_scale(X[tr], X[te])
    s = splits["bank_marketing"]
    assert s.X_train.shape[1] == 11
    assert _counts(s.y_train) == (150, 150)  # class-balanced (experiments.md)
    np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
    np.testing.assert_allclose(s.X_test, ref_te, atol=1e-12)
    np.testing.assert_array_equal(s.y_train, y[tr])
    d = dur[tr]
    np.testing.assert_allclose(s.scores, (d - d.min()) / (d.max() - d.min()), atol=1e-15)
    assert s.scores.min() == 0.0 and s.scores.max() == 1.0
    # privileged feature (SVM+): the call duration, known only after the call
    np.testing.assert_allclose(s.X_priv[:, 0], (d - d.min()) / (d.max() - d.min()), atol=1e-15)


@pytest.mark.parametrize("seed", [0, 3])
def test_bank_stratified_draw(splits, data_dir, bank_file, seed):
    """bank_marketing_stratified: bank_marketing's file, features and scores, a training set with the file's
    class ratio (34 of 300 subscribed: 300 x 4640 / 41188 = 33.8), and the same pinned file."""
    X, y, dur = bank_file
    s = load_dataset("bank_marketing_stratified", seed=seed, data_dir=data_dir, mirror=MIRROR, publishers=False)
    n_yes = int(round(300 * np.mean(y == 1)))
    assert n_yes == 34 and _counts(s.y_train) == (n_yes, 300 - n_yes)
    assert tuple(a + b for a, b in zip(_counts(s.y_train), _counts(s.y_test))) == _counts(y)
    tr, te = stratified_split_indices(y, 300, seed)
    ref_tr, ref_te = _ref_scale(X[tr], X[te])
    np.testing.assert_allclose(s.X_train, ref_tr, atol=1e-12)
    np.testing.assert_allclose(s.X_test, ref_te, atol=1e-12)
    np.testing.assert_array_equal(s.y_test, y[te])
    d = dur[tr]
    np.testing.assert_allclose(s.scores, (d - d.min()) / (d.max() - d.min()), atol=1e-15)
    np.testing.assert_allclose(s.X_priv[:, 0], s.scores, atol=0)
    spec = DATASETS["bank_marketing_stratified"]
    assert (spec.n_train, spec.n_test, spec.d, spec.uses_seed, spec.has_scores) == (300, 40888, 11, True, True)
    assert s.checksums == dataset_checksums("bank_marketing") == dataset_checksums("bank_marketing_stratified")
    assert s.seed == seed and not np.array_equal(s.y_train, splits["bank_marketing"].y_train)


# ------------------------------------------------------------------------------ random splits
@pytest.mark.parametrize("name", list(RANDOM_SPLITS))
def test_random_split_determinism_and_stratification(splits, data_dir, name):
    s0 = splits[name]
    again = load_dataset(name, seed=0, data_dir=data_dir, mirror=MIRROR, publishers=False)
    nocache = load_dataset(name, seed=0, data_dir=data_dir, mirror=MIRROR, publishers=False,
                           cache=False)  # fmt: skip
    other = load_dataset(name, seed=1, data_dir=data_dir, mirror=MIRROR, publishers=False)
    for s in (again, nocache):
        for f in ("X_train", "y_train", "X_test", "y_test"):
            np.testing.assert_array_equal(getattr(s, f), getattr(s0, f))
        if s0.scores is not None:
            np.testing.assert_array_equal(s.scores, s0.scores)
    assert s0.seed == 0 and other.seed == 1 and s0.realization is None
    assert other.X_train.shape == s0.X_train.shape
    assert not np.array_equal(other.X_train, s0.X_train) or not np.array_equal(other.y_train, s0.y_train)
    # stratification: class shares in train equal the full set's up to rounding (<= 1 point); bank_marketing
    # is drawn class-balanced instead (experiments.md): half of each class
    for s in (s0, other):
        y_all = np.concatenate([s.y_train, s.y_test])
        n_train = RANDOM_SPLITS[name]
        for c in (-1.0, 1.0):
            expected = n_train / 2 if name in BALANCED_SPLITS else n_train * np.mean(y_all == c)
            assert abs(np.sum(s.y_train == c) - expected) < 1.0


def test_fixed_splits_ignore_seed(data_dir, splits):
    s = load_dataset("splice", seed=5, data_dir=data_dir, mirror=MIRROR, publishers=False)
    assert s.seed is None and s.realization is None
    np.testing.assert_array_equal(s.X_train, splits["splice"].X_train)


def test_balanced_split_indices_properties():
    y = np.array([1] * 30 + [-1] * 70)
    tr, te = balanced_split_indices(y, 20, seed=3)
    assert np.sum(y[tr] == 1) == 10 and np.sum(y[tr] == -1) == 10
    assert np.array_equal(np.sort(np.concatenate([tr, te])), np.arange(100))
    np.testing.assert_array_equal(tr, balanced_split_indices(y, 20, seed=3)[0])
    assert not np.array_equal(tr, balanced_split_indices(y, 20, seed=4)[0])
    for bad in (21, 60):  # odd, or more than the smaller class holds
        with pytest.raises(ValueError, match="balanced split"):
            balanced_split_indices(y, bad, seed=0)


def test_stratified_split_indices_properties():
    y = np.array([1] * 30 + [-1] * 70)
    tr, te = stratified_split_indices(y, 10, seed=3)
    assert np.sum(y[tr] == 1) == 3 and np.sum(y[tr] == -1) == 7
    assert np.all(np.diff(tr) > 0) and np.all(np.diff(te) > 0)
    assert np.array_equal(np.sort(np.concatenate([tr, te])), np.arange(100))
    tr2, _ = stratified_split_indices(y, 10, seed=3)
    np.testing.assert_array_equal(tr, tr2)
    with pytest.raises(ValueError):
        stratified_split_indices(y, 100, seed=0)


def test_bad_seed_rejected(data_dir):
    with pytest.raises(ValueError, match="seed"):
        load_dataset("breast_cancer", seed=-1, data_dir=data_dir, mirror=MIRROR, publishers=False)
