"""Checks of a search on a dask.distributed cluster (docs/distributed.md): what the scheduler sent its workers, and
whether its ``cv_results_`` are those of the search in one process.

For the test of a search on a ``LocalCluster`` and ``benchmarks/bench_dask.py``; it needs the dask extra, and nothing
of the core imports it. ``ShippedBytes`` is a scheduler plugin that records, per task as it is sent to a worker, its
spec as pickled for the worker (the function and every argument the task carries inline) and the arrays it reads from
the cluster's memory (joblib's dask backend scatters an array argument once, and the scheduler knows each one's size).
"""
from __future__ import annotations

import numpy as np
from distributed.diagnostics.plugin import SchedulerPlugin
from distributed.protocol.pickle import dumps

__all__ = ["CLOCKS", "ShippedBytes", "differing_results", "watch_shipped"]

#: cv_results_ keys that are clocks: the one part of a search that differs from run to run
CLOCKS = frozenset({"mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time", "kernel_time"})


def differing_results(expected: dict, got: dict) -> list[str]:
    """The keys of two ``cv_results_`` whose values differ (exactly: values, masks, dtypes), the clocks aside, and
    those only one of them has."""
    differ = sorted(set(expected) ^ set(got))
    for key in sorted((set(expected) & set(got)) - CLOCKS):
        a, b = expected[key], got[key]
        if isinstance(a, list) or a.dtype == object:
            same = list(a) == list(b)
        else:
            same = (a.dtype == b.dtype and np.array_equal(np.ma.getdata(a), np.ma.getdata(b))
                    and np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b)))
        if not same:
            differ.append(key)
    return differ


class ShippedBytes(SchedulerPlugin):
    """The bytes of each task sent to a worker (``tasks``) and of each scattered array a task read (``scattered``,
    by key)."""

    name = "wsvm-span-shipped-bytes"

    def __init__(self):
        self.tasks: list[int] = []
        self.scattered: dict[str, int] = {}

    async def start(self, scheduler):
        self.scheduler = scheduler

    def transition(self, key, start, finish, *args, **kwargs):
        ts = self.scheduler.tasks.get(key)
        if finish == "processing" and ts is not None:
            self.tasks.append(len(dumps(ts.run_spec)))
            # a dependency without a spec of its own is data put into the cluster (scattered), not a task's result
            self.scattered.update({str(dep.key): dep.nbytes for dep in ts.dependencies if dep.run_spec is None})


def watch_shipped(client):
    """Start a fresh record on ``client``'s scheduler; returns a function that reads it back (the plugin lives on the
    scheduler) as (bytes of each task, {scattered key: bytes}) and one that stops it."""
    client.register_plugin(ShippedBytes())

    def read() -> tuple[list[int], dict[str, int]]:
        def on_scheduler(dask_scheduler):
            plugin = dask_scheduler.plugins[ShippedBytes.name]
            return plugin.tasks, plugin.scattered

        return client.run_on_scheduler(on_scheduler)

    def stop() -> None:
        client.unregister_scheduler_plugin(ShippedBytes.name)

    return read, stop
