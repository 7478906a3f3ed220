"""Run-time environment: thread limits (Experiment 5 times one processor), library versions
and machine description recorded with every result."""
from __future__ import annotations

import contextlib
import os
import platform
import socket
from functools import lru_cache
from importlib import metadata


#: how to install what the study workflow needs beyond the core library (pyproject.toml's extras)
STUDY_EXTRA = "pip install 'wsvm-span[study]'"
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
