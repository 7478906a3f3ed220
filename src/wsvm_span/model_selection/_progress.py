"""A search's progress: grid points done, the time since it started and the time left at the rate so far.

One clock and one format for ``SpanSearchCV``'s and ``SVMPlusSearchCV``'s ``verbose`` lines (``finish_point``)
and ``wsvm-span select``'s progress line (import-light: the command line reads it without scikit-learn).
"""
from __future__ import annotations

import threading
import time

__all__ = ["SearchProgress", "format_duration"]

#: at or above this many seconds a duration is shown in minutes and seconds, above an hour in hours and minutes
_MINUTE, _HOUR = 60.0, 3600.0


def format_duration(seconds: float) -> str:
    """A duration as "8.3s", "12m05s" or "2h03m".

    Examples
    --------
    >>> from wsvm_span.model_selection._progress import format_duration
    >>> format_duration(8.25), format_duration(725.0), format_duration(7400.0)
    ('8.2s', '12m05s', '2h03m')
    """
    if seconds < _MINUTE:
        return f"{seconds:.1f}s"
    whole = int(round(seconds))
    if seconds < _HOUR:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class SearchProgress:
    """Grid points done out of ``total``, counted from the threads that finish them.

    The time left is the time so far per point done times the points left: it includes the shared work (kernels)
    done so far and the parallelism at work, and it settles as points finish (the points of a search differ in
    cost: a large C trains longer).

    Parameters
    ----------
    total : int
        Grid points of the search.
    clock : callable, default=time.perf_counter
        Seconds (tests pass their own).

    Examples
    --------
    >>> from wsvm_span.model_selection._progress import SearchProgress
    >>> now = iter([0.0, 2.0, 5.0])
    >>> progress = SearchProgress(4, clock=lambda: next(now))
    >>> progress.tick()
    ('1/4', '2.0s elapsed, ~6.0s left')
    >>> progress.tick()
    ('2/4', '5.0s elapsed, ~5.0s left')
    """

    def __init__(self, total: int, clock=time.perf_counter):
        self.total, self.done = total, 0
        self._clock = clock
        self._lock = threading.Lock()
        self.start = clock()

    def tick(self) -> tuple[str, str]:
        """Count one more point done: ("done/total", "<elapsed> elapsed, ~<left> left")."""
        with self._lock:
            self.done += 1
            done, elapsed = self.done, self._clock() - self.start
        left = elapsed / done * (self.total - done)
        return f"{done}/{self.total}", f"{format_duration(elapsed)} elapsed, ~{format_duration(left)} left"
