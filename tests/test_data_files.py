"""File acquisition: mirror directory, HTTP mirror (local http.server), publisher fallback,
zip members, sha256 verification over decompressed content, atomic writes, clear errors."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.server
import io
import logging
import os
import shutil
import sys
import threading
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from wsvm_span.data import (
    DataIntegrityError,
    DataUnavailableError,
    FileSpec,
    dataset_checksums,
    load_dataset,
)
from wsvm_span.data.files import default_data_dir, ensure_file, find_project_root, resolve_data_dir

from conftest import LOCAL_MIRROR as LOCAL, require_mirror


@pytest.fixture(autouse=True, scope="module")
def _require_mirror():
    require_mirror()

BC = "breast_cancer/breast-cancer_scale"
SPLICE = "splice/splice.txt.gz"


def _files_under(root: Path) -> list[str]:
    """Regular files under root (including hidden ones and temporaries)."""
    return sorted(os.fspath(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _entries_under(root: Path) -> list[str]:
    """Everything under root, folders too (a download's staging folder is one)."""
    return sorted(os.fspath(p.relative_to(root)) for p in root.rglob("*"))


def _copy(rel: str, dst_root: Path, content: bytes | None = None) -> Path:
    dst = dst_root / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        shutil.copyfile(LOCAL / rel, dst)
    else:
        dst.write_bytes(content)
    return dst


# ------------------------------------------------------------------------------ HTTP server
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


class _FailingFirstHandler(_QuietHandler):
    """Answers the first GET with ``failure`` ("503": a server error; "cut": the promised length,
    then only part of the bytes and a closed connection; None: no failure), every later one as a
    file server; ``requests`` records the paths asked for."""

    failure: str | None = None
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 - name of the base class's hook
        type(self).requests.append(self.path)
        if self.failure is None or len(type(self).requests) > 1:
            return super().do_GET()
        if self.failure == "503":
            return self.send_error(503)
        content = Path(self.translate_path(self.path)).read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content[: len(content) // 2])
        self.close_connection = True


@contextlib.contextmanager
def serve(directory: Path, max_seconds: float = 60.0, handler_class=_QuietHandler):
    """Serve ``directory`` on 127.0.0.1 (random port) in a thread; yields the base URL.

    Bounded: the server stops when the block exits and, at the latest, after max_seconds.
    """
    handler = lambda *a, **k: handler_class(*a, directory=os.fspath(directory), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    watchdog = threading.Timer(max_seconds, server.shutdown)
    watchdog.daemon = True
    thread.start()
    watchdog.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        watchdog.cancel()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    return root


# ------------------------------------------------------------------------------ success paths
def test_http_mirror_with_recompressed_gzip(tmp_path, served):
    raw = gzip.decompress((LOCAL / SPLICE).read_bytes())
    recompressed = gzip.compress(raw, compresslevel=1, mtime=12345)
    assert recompressed != (LOCAL / SPLICE).read_bytes()  # different bytes, same content
    _copy(SPLICE, served, recompressed)
    data_dir = tmp_path / "data"
    with serve(served) as url:
        s = load_dataset("splice", data_dir=data_dir, mirror=url, publishers=False)
    ref = load_dataset("splice", data_dir=tmp_path / "ref", mirror=LOCAL, publishers=False)
    np.testing.assert_array_equal(s.X_train, ref.X_train)
    np.testing.assert_array_equal(s.y_test, ref.y_test)
    stored = (data_dir / SPLICE).read_bytes()
    assert stored == recompressed
    assert hashlib.sha256(gzip.decompress(stored)).hexdigest() == dataset_checksums("splice")[SPLICE]
    assert not [f for f in _files_under(data_dir) if f.endswith(".part")]


def test_http_mirror_serving_uncompressed_content_under_gz_name(tmp_path, served):
    """A mirror may hold the plain bytes: they validate and are stored gzip-compressed."""
    raw = gzip.decompress((LOCAL / SPLICE).read_bytes())
    _copy(SPLICE, served, raw)
    data_dir = tmp_path / "data"
    with serve(served) as url:
        load_dataset("splice", data_dir=data_dir, mirror=url + "/", publishers=False)
    stored = (data_dir / SPLICE).read_bytes()
    assert stored[:2] == b"\x1f\x8b" and gzip.decompress(stored) == raw


@pytest.mark.parametrize("failure", ["503", "cut"])
def test_http_download_is_retried_after_a_failing_first_attempt(tmp_path, served, failure):
    """pooch tries again after a server error or a transfer cut short; the second copy is verified."""
    good = (LOCAL / BC).read_bytes()
    _copy(BC, served, good)
    handler = type("Handler", (_FailingFirstHandler,), {"failure": failure, "requests": []})
    data_dir = tmp_path / "data"
    with serve(served, handler_class=handler) as url:
        load_dataset("breast_cancer", data_dir=data_dir, mirror=url, publishers=False)
    assert handler.requests == [f"/{BC}", f"/{BC}"]
    assert (data_dir / BC).read_bytes() == good
    assert _entries_under(data_dir / "breast_cancer") == ["breast-cancer_scale"]  # no staging folder


def test_http_404_is_final_not_retried(tmp_path, served):
    handler = type("Handler", (_FailingFirstHandler,), {"requests": []})
    with serve(served, handler_class=handler) as url:
        with pytest.raises(DataUnavailableError, match="HTTP 404"):
            load_dataset("breast_cancer", data_dir=tmp_path / "data", mirror=url, publishers=False)
    assert handler.requests == [f"/{BC}"]  # one request, no retry


def test_file_url_mirror(tmp_path):
    data_dir = tmp_path / "data"
    load_dataset("breast_cancer", data_dir=data_dir, mirror=LOCAL.resolve().as_uri(), publishers=False)
    assert (data_dir / BC).read_bytes() == (LOCAL / BC).read_bytes()


def test_local_directory_mirror_and_env_vars(tmp_path, monkeypatch):
    data_dir = tmp_path / "env_data"
    monkeypatch.setenv("WSVM_DATA_DIR", os.fspath(data_dir))
    monkeypatch.setenv("WSVM_DATA_MIRROR", os.fspath(LOCAL))
    monkeypatch.setenv("WSVM_DATA_OFFLINE", "1")
    s = load_dataset("banana", realization=2)
    assert s.realization == 2
    assert sorted(f for f in _files_under(data_dir) if not f.startswith(".cache")) == sorted(
        dataset_checksums("banana", realization=2)
    )
    assert resolve_data_dir() == data_dir.resolve()


def test_a_fetch_writes_nothing_to_stderr_at_default_logging(tmp_path, capfd, monkeypatch, caplog):
    """pooch logs "Downloading file ..." at INFO through a handler of its own; the data layer quiets it
    (the project logs one line per fetch through its own logger, which the application configures)."""
    import pooch

    # pooch's handler holds the sys.stderr of import time (pytest's collection capture), which capfd
    # does not see: point it at this test's stderr, or the check would pass whatever pooch logs
    for handler in pooch.get_logger().handlers:
        if isinstance(handler, logging.StreamHandler):
            monkeypatch.setattr(handler, "stream", sys.stderr)
    capfd.readouterr()
    spec = FileSpec(BC, dataset_checksums("breast_cancer")[BC])
    path = ensure_file(spec, tmp_path / "data", mirror=LOCAL, publishers=False)
    assert path.read_bytes() == (LOCAL / BC).read_bytes()
    assert capfd.readouterr() == ("", "")
    with caplog.at_level(logging.INFO):  # an application that asks for INFO gets one line per fetch
        ensure_file(spec, tmp_path / "data2", mirror=LOCAL, publishers=False)
        ensure_file(spec, tmp_path / "data2", mirror=LOCAL, publishers=False)  # already there: no fetch
    assert [r.getMessage() for r in caplog.records] == [f"{BC}: fetched from the mirror {LOCAL / BC}"]
    assert capfd.readouterr() == ("", "")


def test_default_data_dir_is_under_project_root(monkeypatch):
    monkeypatch.delenv("WSVM_DATA_DIR", raising=False)
    root = find_project_root()
    assert (root / "pyproject.toml").is_file()
    assert default_data_dir() == root / "resources" / "data"
    assert resolve_data_dir() == (root / "resources" / "data").resolve()
    assert resolve_data_dir("~/x") == Path("~/x").expanduser().resolve()


def test_publisher_fallback_and_zip_member(tmp_path, served):
    """Publisher URLs are tried in order after the mirror; '#member=' extracts a zip member."""
    raw = gzip.decompress((LOCAL / SPLICE).read_bytes())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("inner/readme.txt", "x")
        zf.writestr("inner/splice.txt", raw)
    (served / "archive.zip").write_bytes(buf.getvalue())
    data_dir = tmp_path / "data"
    with serve(served) as url:
        spec = FileSpec(
            relpath=SPLICE,
            sha256=dataset_checksums("splice")[SPLICE],
            urls=(url + "/missing.txt", url + "/archive.zip#member=inner/nope",
                  url + "/archive.zip#member=inner/splice.txt"),
        )  # fmt: skip
        path = ensure_file(spec, data_dir, mirror=tmp_path / "empty_mirror", publishers=True)
    assert gzip.decompress(path.read_bytes()) == raw
    assert _files_under(data_dir / "splice") == ["splice.txt.gz"]


def test_corrupt_mirror_copy_skipped_when_a_publisher_has_a_good_one(tmp_path, served):
    good = (LOCAL / BC).read_bytes()
    _copy("bad/" + BC, served, b"garbage")
    _copy("good/" + BC, served, good)
    with serve(served) as url:
        spec = FileSpec(BC, dataset_checksums("breast_cancer")[BC], urls=(f"{url}/good/{BC}",))
        with pytest.warns(UserWarning, match="bad copies skipped"):
            path = ensure_file(spec, tmp_path / "data", mirror=url + "/bad", publishers=True)
    assert path.read_bytes() == good


# ------------------------------------------------------------------------------ failures
def test_http_mirror_corrupted_file(tmp_path, served):
    good = (LOCAL / BC).read_bytes()
    bad = bytearray(good)
    bad[100] ^= 0x01  # one flipped bit
    _copy(BC, served, bytes(bad))
    data_dir = tmp_path / "data"
    with serve(served) as url:
        with pytest.raises(DataIntegrityError) as info:
            load_dataset("breast_cancer", data_dir=data_dir, mirror=url, publishers=False)
    msg = str(info.value)
    assert BC in msg
    assert dataset_checksums("breast_cancer")[BC] in msg  # expected
    assert hashlib.sha256(bytes(bad)).hexdigest() in msg  # actual
    assert "WSVM_DATA_MIRROR" in msg and "Nothing was written" in msg
    assert isinstance(info.value, ValueError)
    assert _files_under(data_dir) == []  # nothing half-written, no temporaries
    assert _entries_under(data_dir) == ["breast_cancer"]  # no staging folder either


def test_http_mirror_truncated_gzip(tmp_path, served):
    whole = (LOCAL / SPLICE).read_bytes()
    _copy(SPLICE, served, whole[: len(whole) // 2])
    data_dir = tmp_path / "data"
    with serve(served) as url:
        with pytest.raises(DataIntegrityError, match="truncated") as info:
            load_dataset("splice", data_dir=data_dir, mirror=url, publishers=False)
    assert SPLICE in str(info.value)
    assert hashlib.sha256(whole[: len(whole) // 2]).hexdigest() in str(info.value)
    assert _files_under(data_dir) == []


def test_http_mirror_missing_file(tmp_path, served):
    data_dir = tmp_path / "data"
    with serve(served) as url:
        with pytest.raises(DataUnavailableError) as info:
            load_dataset("breast_cancer", data_dir=data_dir, mirror=url, publishers=False)
    msg = str(info.value)
    assert BC in msg and f"{url}/{BC}" in msg and "HTTP 404" in msg
    assert "WSVM_DATA_MIRROR" in msg
    assert isinstance(info.value, FileNotFoundError)
    assert _files_under(data_dir) == []


def test_no_source_configured(tmp_path, monkeypatch):
    monkeypatch.delenv("WSVM_DATA_MIRROR", raising=False)
    with pytest.raises(DataUnavailableError, match="no mirror configured"):
        load_dataset("breast_cancer", data_dir=tmp_path, publishers=False)


def test_corrupt_file_already_in_data_dir(tmp_path):
    data_dir = tmp_path / "data"
    truncated = (LOCAL / BC).read_bytes()[:-500]
    dst = _copy(BC, data_dir, truncated)
    with pytest.raises(DataIntegrityError) as info:
        load_dataset("breast_cancer", data_dir=data_dir, mirror=LOCAL, publishers=False)
    msg = str(info.value)
    assert BC in msg and os.fspath(dst) in msg
    assert dataset_checksums("breast_cancer")[BC] in msg
    assert hashlib.sha256(truncated).hexdigest() in msg
    assert "Delete it and run again" in msg
    assert dst.read_bytes() == truncated  # the user's file is left for inspection
    dst.unlink()  # the advertised fix works
    load_dataset("breast_cancer", data_dir=data_dir, mirror=LOCAL, publishers=False)


def test_file_modified_after_a_successful_load_is_detected(tmp_path):
    data_dir = tmp_path / "data"
    load_dataset("breast_cancer", data_dir=data_dir, mirror=LOCAL, publishers=False)
    target = data_dir / BC
    content = target.read_bytes()
    target.write_bytes(content.replace(b"1:-0.860107", b"1:-0.860108", 1))  # same size
    with pytest.raises(DataIntegrityError, match="failed its integrity check"):
        load_dataset("breast_cancer", data_dir=data_dir, mirror=LOCAL, publishers=False)


def test_corrupt_gzip_already_in_data_dir(tmp_path):
    data_dir = tmp_path / "data"
    whole = (LOCAL / SPLICE).read_bytes()
    _copy(SPLICE, data_dir, whole[:-20])
    with pytest.raises(DataIntegrityError, match="gzip"):
        load_dataset("splice", data_dir=data_dir, mirror=LOCAL, publishers=False)


def test_unreadable_cache_entry_is_rebuilt(tmp_path):
    data_dir = tmp_path / "data"
    first = load_dataset("banana", data_dir=data_dir, mirror=LOCAL, publishers=False)
    entries = list((data_dir / ".cache" / "arrays").glob("*.npz"))
    assert len(entries) == 1
    entries[0].write_bytes(b"not an npz")
    again = load_dataset("banana", data_dir=data_dir, mirror=LOCAL, publishers=False)
    np.testing.assert_array_equal(first.X_test, again.X_test)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        third = load_dataset("banana", data_dir=data_dir, mirror=LOCAL, publishers=False)
    np.testing.assert_array_equal(first.X_train, third.X_train)


def test_array_cache_keys_and_stale_entries(tmp_path):
    from wsvm_span.data.cache import ArrayCache

    cache = ArrayCache(tmp_path / "arrays")
    calls = []

    def compute(value):
        def f():
            calls.append(value)
            return {"a": np.full(3, value)}

        return f

    assert cache.get("a1a", ["sha-1"], compute(1))["a"][0] == 1
    assert cache.get("a1a", ["sha-1"], compute(9))["a"][0] == 1  # hit
    assert cache.get("a1a.t.gz", ["sha-t"], compute(2))["a"][0] == 2
    assert cache.get("a1a", ["sha-2"], compute(3))["a"][0] == 3  # new source checksum: miss
    assert calls == [1, 2, 3]
    entries = sorted(p.name.rsplit(".", 2)[0] for p in (tmp_path / "arrays").glob("*.npz"))
    assert entries == ["a1a", "a1a.t.gz"]  # the stale a1a entry is gone, a1a.t.gz is kept
    assert cache.get("a1a.t.gz", ["sha-t"], compute(8))["a"][0] == 2
    assert not list((tmp_path / "arrays").glob("*.part"))


def test_every_registry_file_has_a_download_source():
    from wsvm_span.data import BENCHMARK_NAMES, DATASETS

    for name in BENCHMARK_NAMES:
        for spec in DATASETS[name].files:
            assert spec.urls and all(u.startswith(("https://", "http://")) for u in spec.urls)
            assert len(spec.sha256) == 64


def test_fetched_files_get_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        data_dir = tmp_path / "data"
        load_dataset("breast_cancer", data_dir=data_dir, mirror=LOCAL, publishers=False)
    finally:
        os.umask(old)
    for rel in (BC, *(os.fspath(p.relative_to(data_dir)) for p in data_dir.rglob("*.npz"))):
        assert (data_dir / rel).stat().st_mode & 0o777 == 0o644, rel
