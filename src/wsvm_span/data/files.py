"""File acquisition: the data directory, mirrors, publishers, sha256 checks, atomic writes.

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

Integrity
---------
Each file's sha256 is pinned in the registry and computed over the *decompressed* content
(gzip is recognised by its magic bytes), so a re-compressed copy validates. A fetched file is
written to a temporary file in the destination folder, verified, re-(de)compressed if needed
to match the name (``.gz`` or not), flushed and only then ``os.replace``-d into place: nothing
half-written or unverified is ever left under the real name. After a full verification a small
stamp (size, mtime, ctime, inode, sha256) is written to ``<data_dir>/.cache/verified/``; a later
load trusts the file without re-hashing it only while all of these are unchanged (any write to
the file changes its ctime), so a file modified after its check is verified again.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..utils.atomic import atomic_write, move_into_place, temporary_path
from .errors import DataIntegrityError, DataUnavailableError

__all__ = [
    "ENV_DATA_DIR",
    "ENV_MIRROR",
    "ENV_OFFLINE",
    "FileSpec",
    "find_project_root",
    "default_data_dir",
    "resolve_data_dir",
    "resolve_mirror",
    "content_sha256",
    "verify_file",
    "ensure_file",
]

ENV_DATA_DIR = "WSVM_DATA_DIR"
ENV_MIRROR = "WSVM_DATA_MIRROR"
ENV_OFFLINE = "WSVM_DATA_OFFLINE"
CACHE_DIRNAME = ".cache"
_CHUNK = 1 << 20
_USER_AGENT = "wsvm-span-data/0.1 (+python urllib)"
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


def _raw_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


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
        return _raw_sha256(path)
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
        return None, f"unreadable, {exc.args[0]}; sha256 of the raw bytes: {_raw_sha256(path)}"


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
    """Copy/download ``location`` into ``dest`` atomically after verifying it."""
    url, _, member = location.partition("#member=")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _SourceFailed(f"cannot create {dest.parent}: {exc}") from None
    temps: list[Path] = []

    def new_temp() -> Path:
        temps.append(temporary_path(dest))
        return temps[-1]

    try:
        tmp = new_temp()
        _copy_from(url, tmp, timeout=timeout)
        if member:
            tmp = _extract_member(tmp, member, new_temp())
        actual, actual_text = _describe_actual(tmp)
        if actual != spec.sha256:
            raise _SourceCorrupt(
                f"integrity check failed: expected sha256 {spec.sha256}, actual {actual_text}"
            )
        want_gzip = spec.relpath.endswith(".gz")
        is_gzip = _is_gzip(tmp)
        if want_gzip and not is_gzip:
            tmp = _recompress(tmp, new_temp(), compress=True)
        elif is_gzip and not want_gzip:
            tmp = _recompress(tmp, new_temp(), compress=False)
        move_into_place(tmp, dest)
        temps.remove(tmp)
    finally:
        for t in temps:
            with contextlib.suppress(OSError):
                t.unlink()


def _copy_from(location: str, tmp: Path, *, timeout: float) -> None:
    if not _is_url(location):
        try:
            with open(location, "rb") as src, open(tmp, "wb") as out:
                shutil.copyfileobj(src, out, _CHUNK)
        except FileNotFoundError:
            raise _SourceFailed("no such file") from None
        except OSError as exc:
            raise _SourceFailed(f"cannot read: {exc}") from None
        return
    request = urllib.request.Request(location, headers={"User-Agent": _USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp, open(tmp, "wb") as out:
            shutil.copyfileobj(resp, out, _CHUNK)
    except urllib.error.HTTPError as exc:
        raise _SourceFailed(f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _SourceFailed(f"unreachable ({reason})") from None


def _extract_member(archive: Path, member: str, out_path: Path) -> Path:
    try:
        with zipfile.ZipFile(archive) as zf, zf.open(member) as src, open(out_path, "wb") as out:
            shutil.copyfileobj(src, out, _CHUNK)
    except KeyError:
        raise _SourceFailed(f"the zip archive has no member {member!r}") from None
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
        raise _SourceCorrupt(
            f"not a readable zip archive ({exc}); sha256 of the bytes received: "
            f"{_raw_sha256(archive)}"
        ) from None
    return out_path


def _recompress(src: Path, out_path: Path, *, compress: bool) -> Path:
    if compress:
        with open(src, "rb") as fin, open(out_path, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
                shutil.copyfileobj(fin, gz, _CHUNK)
    else:
        with gzip.open(src, "rb") as fin, open(out_path, "wb") as out:
            shutil.copyfileobj(fin, out, _CHUNK)
    return out_path
