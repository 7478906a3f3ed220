"""File acquisition: the data directory, mirrors, publishers (through pooch), sha256 checks, atomic writes.

Data directory
--------------
Resolved by :func:`resolve_data_dir`: the ``data_dir=`` argument, else the environment variable
``WSVM_DATA_DIR``, else ``<project root>/resources/data`` where the project root is the directory
holding ``pyproject.toml`` found upward from this package (source checkout), else upward from
the current working directory, else the working directory itself. Its layout is the one of
``shared/data``: ``<folder>/<file>``, e.g. ``splice/splice.txt.gz``.

Sources, in order
-----------------
1. the data directory itself (the file is verified, not trusted: a wrong file raises
   :class:`DataIntegrityError` and is left alone for the user to inspect/delete);
2. a mirror: ``mirror=`` or ``WSVM_DATA_MIRROR``, either a local directory or an
   ``http(s)://`` / ``file://`` URL base with the same layout;
3. the publishers' URLs of the registry (:attr:`FileSpec.urls`), unless ``publishers=False`` or
   ``WSVM_DATA_OFFLINE=1``. A URL ending in ``#member=<path>`` names a member of a zip archive.

Every source is fetched by ``pooch``: its HTTP downloader (no
progress bar) with :data:`DOWNLOAD_RETRIES` further attempts after a connection error, a
timeout, a transfer cut short or an HTTP 5xx (an HTTP 4xx is final), its ``Unzip`` for zip
members; a local mirror is copied through the same path. pooch's own log lines (one per
fetch, on stderr) are turned off; the module's logger records one INFO line per file fetched.

Integrity
---------
Each file's sha256 is pinned in the registry and computed over the *decompressed* content
(gzip is recognised by its magic bytes), so a re-compressed copy validates; pooch, which hashes
the raw bytes, cannot check it, so it is checked here after pooch has fetched the file. A
fetched file lands in a staging folder beside its destination, is verified, re-(de)compressed
if needed to match the name (``.gz`` or not), flushed and only then ``os.replace``-d into
place; the staging folder is removed whatever happened: nothing half-written or unverified is
ever left under the real name. After a full verification a small stamp (size, mtime, ctime,
inode, sha256) is written to ``<data_dir>/.cache/verified/``; a later load trusts the file
without re-hashing it only while all of these are unchanged (any write to the file changes its
ctime), so a file modified after its check is verified again.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import logging
import os
import shutil
import tempfile
import urllib.parse
import urllib.request
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pooch

if TYPE_CHECKING:
    import requests

from ..utils.atomic import atomic_write, move_into_place
from .errors import DataIntegrityError, DataUnavailableError

__all__ = [
    "ENV_DATA_DIR",
    "ENV_MIRROR",
    "ENV_OFFLINE",
    "DOWNLOAD_RETRIES",
    "FileSpec",
    "find_project_root",
    "default_data_dir",
    "resolve_data_dir",
    "resolve_mirror",
    "content_sha256",
    "verify_file",
    "ensure_file",
]

log = logging.getLogger(__name__)
# pooch logs "Downloading file ..." at INFO on every fetch (a copy from a local mirror too) through
# a stderr handler of its own, whatever the application's logging: the data layer says what it
# fetched once, through ``log`` above, at INFO (shown when the application asks for INFO)
pooch.get_logger().setLevel(logging.WARNING)

ENV_DATA_DIR = "WSVM_DATA_DIR"
ENV_MIRROR = "WSVM_DATA_MIRROR"
ENV_OFFLINE = "WSVM_DATA_OFFLINE"
CACHE_DIRNAME = ".cache"
_CHUNK = 1 << 20
_USER_AGENT = "wsvm-span-data/0.1 (+pooch)"
#: further attempts after a failed download (connection error, timeout, a transfer cut short,
#: an HTTP 5xx); pooch waits 1 s, then 2 s, before them. A 4xx answer is final.
DOWNLOAD_RETRIES = 2
_FIRST_SERVER_ERROR = 500
_FIX_HINT = (
    "set WSVM_DATA_MIRROR (or pass mirror=) to a directory or http(s) URL with the same layout "
    "as the data directory (e.g. a copy of shared/data)"
)


@dataclass(frozen=True)
class FileSpec:
    """One data file of the registry.

    Parameters
    ----------
    relpath : str
        POSIX path relative to the data directory, e.g. ``"splice/splice.txt.gz"``.
    sha256 : str
        Pinned sha256 (hex) of the decompressed content (of the raw bytes for non-gzip files).
    urls : tuple of str
        Publisher / stable public sources tried in order after the mirror. They serve the
        uncompressed (or gzip) content; ``<url>#member=<path>`` extracts a zip member.
    note : str
        Provenance and known differences between a source and the pinned copy.

    Examples
    --------
    >>> from wsvm_span.data import DATASETS
    >>> [f.relpath for f in DATASETS["splice"].files]
    ['splice/splice.txt.gz']
    """

    relpath: str
    sha256: str
    urls: tuple[str, ...] = ()
    note: str = field(default="", compare=False)


# ------------------------------------------------------------------------------------------
# locations
# ------------------------------------------------------------------------------------------
def _upward(start: Path) -> Iterator[Path]:
    yield start
    yield from start.parents


def find_project_root() -> Path:
    """Directory holding ``pyproject.toml``, searched upward from this package, then the cwd.

    Upward from the package only a ``pyproject.toml`` that names this project counts (so an
    installed copy does not pick up an unrelated project); upward from the working directory
    any ``pyproject.toml`` counts. Falls back to the working directory.
    """
    for d in _upward(Path(__file__).resolve().parent):
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            with contextlib.suppress(OSError):
                text = candidate.read_text(encoding="utf-8", errors="replace")
                if "wsvm-span" in text or "wsvm_span" in text:
                    return d
    cwd = Path.cwd().resolve()
    for d in _upward(cwd):
        if (d / "pyproject.toml").is_file():
            return d
    return cwd


def default_data_dir() -> Path:
    """``<project root>/resources/data``."""
    return find_project_root() / "resources" / "data"


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The argument, else ``$WSVM_DATA_DIR``, else :func:`default_data_dir` (absolute path)."""
    if data_dir is None:
        data_dir = os.environ.get(ENV_DATA_DIR) or None
    path = Path(data_dir).expanduser() if data_dir is not None else default_data_dir()
    return path.resolve()


def resolve_mirror(mirror: str | os.PathLike[str] | None = None) -> str | None:
    """The argument, else ``$WSVM_DATA_MIRROR``, else ``None`` (no mirror)."""
    if mirror is None:
        mirror = os.environ.get(ENV_MIRROR) or None
    return None if mirror is None else os.fspath(mirror)


def _publishers_enabled(publishers: bool | None) -> bool:
    if publishers is not None:
        return bool(publishers)
    return os.environ.get(ENV_OFFLINE, "").strip().lower() not in {"1", "true", "yes", "on"}


def _is_url(location: str) -> bool:
    return urllib.parse.urlsplit(location).scheme.lower() in {"http", "https", "file"}


def _mirror_location(mirror: str, relpath: str) -> str:
    if _is_url(mirror):
        return mirror.rstrip("/") + "/" + urllib.parse.quote(relpath)
    return os.fspath(Path(mirror).expanduser() / relpath)


# ------------------------------------------------------------------------------------------
# hashing
# ------------------------------------------------------------------------------------------
class _Unreadable(Exception):
    """The bytes cannot be decompressed (reason in args[0])."""


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def content_sha256(path: str | os.PathLike[str]) -> str:
    """sha256 (hex) of the file's content, gunzipped first when it starts with the gzip magic.

    Raises
    ------
    DataIntegrityError
        The gzip stream is corrupt or truncated.
    """
    path = Path(path)
    try:
        return _content_sha256(path)
    except _Unreadable as exc:
        raise DataIntegrityError(f"{path}: {exc.args[0]}") from None


def _content_sha256(path: Path) -> str:
    if not _is_gzip(path):
        return pooch.file_hash(os.fspath(path))
    h = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise _Unreadable(f"corrupt or truncated gzip stream ({exc})") from None
    return h.hexdigest()


def _describe_actual(path: Path) -> tuple[str | None, str]:
    """(content sha256 or None, text for an error message)."""
    try:
        sha = _content_sha256(path)
        return sha, sha
    except _Unreadable as exc:
        raw = pooch.file_hash(os.fspath(path))
        return None, f"unreadable, {exc.args[0]}; sha256 of the raw bytes: {raw}"


# ------------------------------------------------------------------------------------------
# verification stamps
# ------------------------------------------------------------------------------------------
def _stamp_path(data_dir: Path, relpath: str) -> Path:
    return data_dir / CACHE_DIRNAME / "verified" / (relpath + ".json")


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "ino": st.st_ino,
    }


def _stamp_ok(data_dir: Path, spec: FileSpec, path: Path) -> bool:
    try:
        stamp = json.loads(_stamp_path(data_dir, spec.relpath).read_text(encoding="utf-8"))
        return stamp == {"sha256": spec.sha256, **_stat_key(path)}
    except (OSError, ValueError):
        return False


def _write_stamp(data_dir: Path, spec: FileSpec, path: Path) -> None:
    target = _stamp_path(data_dir, spec.relpath)
    with contextlib.suppress(OSError):  # a read-only data dir just means no stamps
        target.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"sha256": spec.sha256, **_stat_key(path)}, sort_keys=True)
        with atomic_write(target) as fh:
            fh.write(payload.encode("utf-8"))


# ------------------------------------------------------------------------------------------
# verification of a file in the data directory
# ------------------------------------------------------------------------------------------
def verify_file(spec: FileSpec, path: str | os.PathLike[str]) -> None:
    """Check ``path`` against ``spec.sha256`` (full hash, no stamp).

    Raises
    ------
    DataIntegrityError
        Message names the file, the expected and actual sha256 and how to fix it.
    """
    path = Path(path)
    actual, actual_text = _describe_actual(path)
    if actual != spec.sha256:
        raise DataIntegrityError(
            f"Data file {spec.relpath!r} at {path} failed its integrity check:\n"
            f"  expected sha256 (of the decompressed content): {spec.sha256}\n"
            f"  actual sha256:                                  {actual_text}\n"
            "The file is corrupt, truncated or a different version. Delete it and run again to "
            f"fetch a fresh, verified copy; if no source is reachable, {_FIX_HINT}."
        )


# ------------------------------------------------------------------------------------------
# fetching
# ------------------------------------------------------------------------------------------
class _SourceFailed(Exception):
    """The source could not provide the file (reason in args[0])."""


class _SourceCorrupt(Exception):
    """The source provided bytes that fail verification (reason in args[0])."""


def ensure_file(
    spec: FileSpec,
    data_dir: str | os.PathLike[str] | None = None,
    mirror: str | os.PathLike[str] | None = None,
    *,
    publishers: bool | None = None,
    timeout: float = 60.0,
) -> Path:
    """Return the path of a verified copy of ``spec`` in the data directory, fetching it if absent.

    Parameters
    ----------
    spec : FileSpec
    data_dir : path, optional
        See :func:`resolve_data_dir`.
    mirror : str or path, optional
        Local directory or URL base; see :func:`resolve_mirror`.
    publishers : bool, optional
        Try ``spec.urls`` after the mirror. Default: yes unless ``WSVM_DATA_OFFLINE`` is set.
    timeout : float
        Seconds for each network connection/read.

    Raises
    ------
    DataIntegrityError
        The file in the data directory is wrong (it is left in place), or every source that
        answered served wrong bytes (nothing is written).
    DataUnavailableError
        The file is absent and no source could provide it; the message lists the places tried.
    """
    root = resolve_data_dir(data_dir)
    dest = root / spec.relpath
    if dest.exists():
        if not _stamp_ok(root, spec, dest):
            verify_file(spec, dest)
            _write_stamp(root, spec, dest)
        return dest

    sources: list[tuple[str, str]] = []  # (kind, location)
    mirror = resolve_mirror(mirror)
    if mirror is not None:
        sources.append(("mirror", _mirror_location(mirror, spec.relpath)))
    use_publishers = _publishers_enabled(publishers)
    if use_publishers:
        sources.extend(("publisher", url) for url in spec.urls)

    failures: list[str] = []
    corrupt: list[str] = []
    for kind, location in sources:
        try:
            _fetch(spec, location, dest, timeout=timeout)
        except _SourceCorrupt as exc:
            corrupt.append(f"  - {kind} {location}: {exc.args[0]}")
            continue
        except _SourceFailed as exc:
            failures.append(f"  - {kind} {location}: {exc.args[0]}")
            continue
        if corrupt:
            warnings.warn(
                f"{spec.relpath}: bad copies skipped:\n" + "\n".join(corrupt)
                + f"\nused the verified copy from {location}",
                stacklevel=2,
            )
        _write_stamp(root, spec, dest)
        log.info("%s: fetched from the %s %s", spec.relpath, kind, location)
        return dest

    not_tried = []
    if mirror is None:
        not_tried.append(f"  - no mirror configured (mirror= / {ENV_MIRROR})")
    if not use_publishers:
        not_tried.append(f"  - publisher URLs: disabled (publishers=False or {ENV_OFFLINE}=1)")
    elif not spec.urls:
        not_tried.append("  - publisher URLs: the registry lists none for this file")
    skipped = ("\nNot tried:\n" + "\n".join(not_tried)) if not_tried else ""
    if corrupt:
        raise DataIntegrityError(
            f"Data file {spec.relpath!r}: every copy found failed its integrity check "
            f"(expected sha256 of the decompressed content: {spec.sha256}):\n"
            + "\n".join(corrupt + failures)
            + skipped
            + f"\nNothing was written to {root}. Replace the bad mirror copy or {_FIX_HINT}, "
            "then run again."
        )
    tried = ("Places tried:\n" + "\n".join(failures)) if failures else "No source was tried."
    raise DataUnavailableError(
        f"Data file {spec.relpath!r} is not in the data directory {root} and no source "
        f"could provide it. {tried}{skipped}\n"
        f"Put a verified copy at {dest}, or {_FIX_HINT}."
    )


def _fetch(spec: FileSpec, location: str, dest: Path, *, timeout: float) -> None:
    """Fetch ``location``, verify it, match the name's compression, move it to ``dest``.

    Everything happens in a private staging folder beside ``dest`` (same file system, so the
    final rename is atomic) that is removed afterwards whatever happened: a failed or corrupt
    download leaves nothing under the real name, and no temporary either.
    """
    url, _, member = location.partition("#member=")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part"))
    except OSError as exc:
        raise _SourceFailed(f"cannot create {dest.parent}: {exc}") from None
    try:
        got = _download(url, staging, dest.name, timeout=timeout)
        if member:
            got = _extract_member(got, member)
        actual, actual_text = _describe_actual(got)
        if actual != spec.sha256:
            raise _SourceCorrupt(
                f"integrity check failed: expected sha256 {spec.sha256}, actual {actual_text}"
            )
        want_gzip = spec.relpath.endswith(".gz")
        if want_gzip != _is_gzip(got):
            got = _recompress(got, staging / f"{dest.name}.recoded", compress=want_gzip)
        move_into_place(got, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _download(location: str, staging: Path, name: str, *, timeout: float) -> Path:
    """The bytes at ``location`` (URL or local path) as ``staging/name``, fetched by pooch.

    pooch streams into a temporary file and renames it when complete; over HTTP it retries
    :data:`DOWNLOAD_RETRIES` times. Its ``known_hash`` stays ``None``: pooch hashes the raw
    bytes, the registry pins the decompressed content (so that a re-compressed copy validates),
    which :func:`_fetch` checks once the bytes are here.
    """
    # imported here, not at the top: requests takes a noticeable time to import and only a
    # download needs it (pooch defers it the same way)
    import requests

    local = _local_path(location)
    fetcher = pooch.Pooch(
        path=staging,
        base_url="",
        registry={name: None},
        urls={name: location if local is None else local},
        retry_if_failed=DOWNLOAD_RETRIES,
    )
    downloader = _copy_local if local is not None else _HTTPDownloader(timeout)
    attempts = f"{1 + DOWNLOAD_RETRIES} attempts"
    try:
        return Path(fetcher.fetch(name, downloader=downloader))
    except requests.HTTPError as exc:  # a server error (5xx) on every attempt
        raise _SourceFailed(f"{_http_status(exc)} ({attempts})") from None
    except requests.RequestException as exc:  # before OSError: requests' exceptions are OSErrors
        raise _SourceFailed(f"unreachable ({exc}; {attempts})") from None
    except FileNotFoundError:
        raise _SourceFailed("no such file") from None
    except OSError as exc:
        raise _SourceFailed(f"cannot read: {exc}") from None


def _local_path(location: str) -> str | None:
    """The file system path of a local location (a path or a ``file://`` URL); None for http(s)."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme.lower() == "file":
        return urllib.request.url2pathname(parts.path)
    return None if _is_url(location) else location


def _copy_local(path: str, output_file: str, _pooch: pooch.Pooch) -> None:
    """pooch downloader for a mirror on the local file system (pooch's own are for the network)."""
    shutil.copyfile(path, output_file)


class _HTTPDownloader:
    """pooch's HTTP downloader (no progress bar), for which an HTTP 4xx answer is final.

    pooch retries a download that raises any requests exception; a missing file (404) or a
    refusal (403) answers the same every time, so it leaves pooch's retry loop at once.
    """

    def __init__(self, timeout: float) -> None:
        self._http = pooch.HTTPDownloader(
            progressbar=False, timeout=timeout, headers={"User-Agent": _USER_AGENT}
        )

    def __call__(self, url: str, output_file: str, fetcher: pooch.Pooch) -> None:
        import requests  # see _download

        try:
            self._http(url, output_file, fetcher)
        except requests.HTTPError as exc:
            if exc.response is not None and exc.response.status_code < _FIRST_SERVER_ERROR:
                raise _SourceFailed(_http_status(exc)) from None
            raise


def _http_status(exc: requests.HTTPError) -> str:
    """``"HTTP 404 Not Found"`` for a ``requests.HTTPError``."""
    response = exc.response
    return "HTTP error" if response is None else f"HTTP {response.status_code} {response.reason}"


def _extract_member(archive: Path, member: str) -> Path:
    """``member`` of the zip ``archive``, extracted beside it with pooch's ``Unzip``."""
    out_dir = archive.with_name(archive.name + ".members")
    try:
        pooch.Unzip(members=[member], extract_dir=os.fspath(out_dir))(
            os.fspath(archive), "download", None
        )
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
        raise _SourceCorrupt(
            f"not a readable zip archive ({exc}); sha256 of the bytes received: "
            f"{pooch.file_hash(os.fspath(archive))}"
        ) from None
    # Unzip extracts every entry that starts with the name and is silent when none does
    extracted = out_dir / member
    if not extracted.is_file():
        raise _SourceFailed(f"the zip archive has no member {member!r}")
    return extracted


def _recompress(src: Path, out_path: Path, *, compress: bool) -> Path:
    if compress:
        with open(src, "rb") as fin, open(out_path, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
                shutil.copyfileobj(fin, gz, _CHUNK)
    else:
        with gzip.open(src, "rb") as fin, open(out_path, "wb") as out:
            shutil.copyfileobj(fin, out, _CHUNK)
    return out_path
