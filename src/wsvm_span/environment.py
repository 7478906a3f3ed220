"""Run-time environment: thread limits (Experiment 5 times one processor) and versions."""
from __future__ import annotations

import contextlib
import platform
from importlib import metadata


@contextlib.contextmanager
def single_threaded():
    """Limit BLAS/OpenMP pools to one thread inside the block (LIBSVM itself is serial)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


def library_versions() -> dict[str, str]:
    """Versions of the libraries whose numbers end up in results."""
    names = {
        "python": None, "wsvm-span": "wsvm-span", "numpy": "numpy", "scipy": "scipy",
        "scikit-learn": "scikit-learn", "libsvm-official": "libsvm-official",
        "clarabel": "clarabel", "mosek": "mosek",
    }
    out = {}
    for key, dist in names.items():
        if dist is None:
            out[key] = platform.python_version()
            continue
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = "not installed"
    return out


def machine_info() -> dict[str, str]:
    """Processor and OS, for the cost table."""
    import os

    return {
        "machine": platform.machine(),
        "processor": platform.processor() or "unknown",
        "system": f"{platform.system()} {platform.release()}",
        "cpus": str(os.cpu_count()),
    }
