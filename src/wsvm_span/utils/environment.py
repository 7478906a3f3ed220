"""Run-time environment: thread limits (Experiment 5 times one processor), library versions
and machine description recorded with every result, and the memory a computation may still take."""
from __future__ import annotations

import contextlib
import os
import platform
import socket
from functools import lru_cache
from importlib import metadata
from pathlib import Path


#: how to install what the study workflow needs beyond the core library (pyproject.toml's extras)
STUDY_EXTRA = "pip install 'wsvm-span[study]'"
#: how to install dask.distributed, for a search spread over a dask cluster (docs/distributed.md)
DASK_EXTRA = "pip install 'wsvm-span[dask]'"
#: the top-level modules of the study extra: a command that imports one of them needs the extra
STUDY_EXTRA_MODULES = frozenset(
    {"jsonschema", "matplotlib", "mlflow", "pandas", "pyarrow", "seaborn", "snakemake", "tabulate", "yaml"})


@contextlib.contextmanager
def single_threaded():
    """Limit BLAS/OpenMP pools to one thread inside the block (LIBSVM itself is serial)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


#: distributions whose versions can change the numbers (core) or the records (workflow)
_DISTRIBUTIONS = (
    "wsvm-span", "numpy", "scipy", "scikit-learn", "libsvm-official", "clarabel", "mosek",
    "threadpoolctl", "pandas", "pyarrow", "mlflow", "snakemake",
)


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """{distribution: version} for Python and the libraries above ("not installed" if absent)."""
    out = {"python": platform.python_version()}
    for dist in _DISTRIBUTIONS:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@lru_cache(maxsize=1)
def machine_info() -> dict[str, str]:
    """Where the computation ran (for the cost table's caption)."""
    return {
        "hostname": socket.gethostname(),
        "cpu": _cpu_model(),
        "cpu_count": str(os.cpu_count()),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


#: a cgroup memory limit at or above this is no limit (cgroup v1 writes "none" as 2^63 rounded down to a page)
_NO_CGROUP_LIMIT = 2**60
#: cgroup v2's and v1's files: (folder of the hierarchy, limit, usage, the memory.stat key of reclaimable page cache)
_CGROUP_FILES = {"v2": ("/sys/fs/cgroup", "memory.max", "memory.current", "inactive_file"),
                 "v1": ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes",
                        "total_inactive_file")}


def available_memory(meminfo: str = "/proc/meminfo", cgroup: str = "/proc/self/cgroup") -> int | None:
    """Bytes this process can still allocate without swapping or being killed for memory.

    The kernel's estimate of the memory available to new work (``MemAvailable`` of ``meminfo``: free memory plus
    the page cache it can reclaim), capped by the headroom of this process's cgroup where one of its folders has
    a memory limit (a container, a SLURM job: their out-of-memory killer acts at that limit, whatever the machine
    has free). Without /proc, the free physical pages (``os.sysconf``); None where nothing can be read.

    Parameters
    ----------
    meminfo, cgroup : str
        The files read (tests point them elsewhere).

    Returns
    -------
    int or None
        Bytes.

    Examples
    --------
    >>> from wsvm_span.utils.environment import available_memory
    >>> available_memory() is None or available_memory() > 0
    True
    """
    machine = None
    try:
        with open(meminfo, encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    machine = int(line.split()[1]) * 1024
    except OSError:
        try:
            machine = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, AttributeError):  # no such sysconf name on this platform
            machine = None
    headroom = cgroup_headroom(cgroup)
    if machine is None or headroom is None:
        return headroom if machine is None else machine
    return min(machine, headroom)


def cgroup_headroom(cgroup: str = "/proc/self/cgroup", roots: dict[str, str] | None = None) -> int | None:
    """Bytes this process's cgroup may still take before its memory limit: the smallest limit minus usage over
    its folder and the folders above it (a limit applies to everything below it), the reclaimable page cache
    (``inactive_file``) not counted as used. None where no folder has a limit (or there are no cgroups).

    Parameters
    ----------
    cgroup : str
        The process's cgroup file (``/proc/self/cgroup``: one ``id:controllers:path`` line per hierarchy).
    roots : dict, optional
        The hierarchies' folders by version ("v2", "v1"); default: where Linux mounts them.

    Returns
    -------
    int or None
        Bytes (0 at or over the limit).
    """
    try:
        lines = Path(cgroup).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    found = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        version = "v2" if controllers == "" else "v1" if "memory" in controllers.split(",") else None
        if version is None:
            continue
        root, limit_file, usage_file, cache_key = _CGROUP_FILES[version]
        root = Path((roots or {}).get(version, root))
        folder = root / path.strip("/")
        # a cgroup namespace shows the process's own folder as the root: its path does not exist under the mount
        folders = [folder, *folder.parents] if folder.is_dir() else [root]
        for f in folders:
            headroom = _folder_headroom(f, limit_file, usage_file, cache_key)
            if headroom is not None:
                found.append(headroom)
            if f == root:
                break
    return min(found) if found else None


def _folder_headroom(folder: Path, limit_file: str, usage_file: str, cache_key: str) -> int | None:
    try:
        limit = (folder / limit_file).read_text(encoding="utf-8").strip()
        usage = int((folder / usage_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if limit == "max" or int(limit) >= _NO_CGROUP_LIMIT:
        return None
    cache = 0
    try:
        for line in (folder / "memory.stat").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(" ")
            if key == cache_key:
                cache = int(value)
    except (OSError, ValueError):
        pass
    return max(0, int(limit) - max(0, usage - cache))
