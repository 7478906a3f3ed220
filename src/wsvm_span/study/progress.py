"""Progress of a running grid job, written to its log at a steady rate and read back by
``wsvm-span status``.

A job logs one line per report, e.g.::

    progress exp1/splice/class/s0-r1/chunk-3: 12/33 models (36%), elapsed 41s, remaining ~1m13s

so that a long job is never silent, and a status summary can tell how far a running job is.
"""

from __future__ import annotations

import logging
import re
import time

__all__ = ["PROGRESS_INTERVAL_S", "Progress", "format_seconds", "parse_progress"]

#: at most one progress line per this many seconds (plus the first and the last model): enough to
#: follow a job of hours, few enough that a log stays readable
PROGRESS_INTERVAL_S = 30.0

_LINE = re.compile(r"progress (?P<slot>\S+): (?P<done>\d+)/(?P<total>\d+) models")


def format_seconds(s: float) -> str:
    """A duration for humans: 41s, 1m13s, 2h05m."""
    s = max(0.0, float(s))
    if s < 60:
        return f"{s:.0f}s"
    if s < 3600:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    return f"{int(s // 3600)}h{int(s % 3600 // 60):02d}m"


class Progress:
    """Counts the models of a job and logs progress lines (count, elapsed, estimated remaining)."""

    def __init__(self, slot: str, total: int, log: logging.Logger, interval_s: float = PROGRESS_INTERVAL_S):
        self.slot, self.total, self.log, self.interval_s = slot, int(total), log, float(interval_s)
        self.done = 0
        self.start = time.perf_counter()
        self._last = -float("inf")

    def model_done(self) -> None:
        self.done += 1
        now = time.perf_counter()
        if self.done in (1, self.total) or now - self._last >= self.interval_s:
            self._last = now
            elapsed = now - self.start
            remaining = elapsed / self.done * (self.total - self.done)
            self.log.info("progress %s: %d/%d models (%.0f%%), elapsed %s, remaining ~%s", self.slot, self.done,
                          self.total, 100.0 * self.done / max(1, self.total), format_seconds(elapsed),
                          format_seconds(remaining))


def parse_progress(text: str) -> tuple[int, int] | None:
    """(models done, models in the job) from the last progress line of a job's log, if any."""
    last = None
    for m in _LINE.finditer(text):
        last = m
    return (int(last["done"]), int(last["total"])) if last else None
