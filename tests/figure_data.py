"""Helpers (no tests): what a figure of ``wsvm_span.study.figures`` plots, read back from matplotlib's artists,
so that figure tests check the plotted numbers against values computed from the rows in the test."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def drawn(monkeypatch) -> list:
    """The figures the drawing functions save, in order (recorded by wrapping ``figures._save``; a closed
    figure keeps its artists)."""
    from wsvm_span.study import figures

    saved = []
    real = figures._save

    def save(fig, outputs, dpi):
        saved.append(fig)
        real(fig, outputs, dpi)

    monkeypatch.setattr(figures, "_save", save)
    return saved


def curves(ax) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Legend label -> (x, y) of the line drawn in that label's colour (seaborn's legend entries are proxies;
    an errorbar's entry is its own data line)."""
    from matplotlib.container import ErrorbarContainer

    out = {}
    handles, labels = ax.get_legend_handles_labels()
    for handle, text in zip(handles, labels):
        if isinstance(handle, ErrorbarContainer):  # errorbar's legend entry is its own artists: the data line
            line = handle.lines[0]
            out[text] = (np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float))
            continue
        color = getattr(handle, "get_color", lambda: None)()
        for line in ax.lines:
            if len(line.get_xdata()) and line.get_color() == color and text not in out:
                out[text] = (np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float))
    return out


def points(ax) -> np.ndarray:
    """Every scatter point of the axes, (n, 2), in drawing order."""
    parts = [np.asarray(c.get_offsets(), dtype=float) for c in ax.collections if len(c.get_offsets())]
    return np.vstack(parts) if parts else np.empty((0, 2))
