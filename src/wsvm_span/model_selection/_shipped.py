"""What a dask.distributed scheduler sends its workers, to check that a search ships no kernel (docs/distributed.md).

For the test of a search on a ``LocalCluster`` and ``benchmarks/bench_dask.py``; it needs the dask extra, and nothing
of the core imports it. ``ShippedBytes`` is a scheduler plugin that records, per task as it is sent to a worker, its
spec as pickled for the worker (the function and every argument the task carries inline) and the arrays it reads from
the cluster's memory (joblib's dask backend scatters an array argument once, and the scheduler knows each one's size).
"""
from __future__ import annotations

from distributed.diagnostics.plugin import SchedulerPlugin
from distributed.protocol.pickle import dumps

__all__ = ["ShippedBytes", "watch_shipped"]


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
