"""What a config's ``select`` keeps of the jobs it plans: a part of a study (e.g. one of ``reproduced/``, whose
config is ``base: config/paper.yaml`` and the jobs it ran) named by the fields of its jobs, not by a copy of the
study's settings.

``select`` maps an experiment to job fields and the values kept (``{exp8: {dataset: [w_mixture], seed: [0, 1]}}``):
a job is kept where every field named has one of its values; an experiment named without fields (``{}``) is
kept whole, one not named is left out. The fields are those of the experiment's job spec that hold one value
(:func:`selectable_fields`: ``dataset``, ``seed``, ``ratio``, ``n_train``, ``train_fraction``, ``n``, ``size``,
...). A kept job is the study's job as it is, spec hash and all, unless the config says ``renumber``: then
its chunk is counted among the kept jobs (:func:`renumbered`), as a config listing only them would have numbered
it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Iterable, Iterator, Mapping

__all__ = ["kept", "renumbered", "select_jobs", "selectable_fields", "selection_problems"]

#: the values of a job field that a selection can name
_SCALARS = (str, int, float, bool, type(None))


def selectable_fields(job) -> list[str]:
    """The fields of ``job``'s spec that hold one value (not a grid, a list of models or of seeds), but its
    experiment (what ``select`` is keyed by)."""
    return [f.name for f in dataclasses.fields(job)
            if f.name != "experiment" and isinstance(getattr(job, f.name), _SCALARS)]


def _same(value: Any, wanted: Any) -> bool:
    # a config's YAML writes 4096 where a job holds the text "4096" (Experiment 9's sizes, which may be "all")
    return value == wanted or str(value) == str(wanted)


def kept(job, select: Mapping[str, Mapping[str, list]]) -> bool:
    """Whether ``select`` keeps ``job``: its experiment is named, and each field named holds one of its values."""
    fields = select.get(job.experiment)
    return fields is not None and all(any(_same(getattr(job, name), v) for v in values)
                                      for name, values in fields.items())


def renumbered(jobs: Iterable) -> list:
    """``jobs`` with each chunk counted among the given jobs of its data set and variant, in their order.

    Every kind numbers the jobs it plans so (a job's chunk is its place among the planned jobs of its data set
    and variant), so the jobs a selection keeps are numbered as a config that planned only them would number
    them; a study's whole plan is numbered as it is."""
    seen: Counter = Counter()
    out = []
    for job in jobs:
        key = (job.experiment, job.dataset, job.variant)
        out.append(job if job.chunk == seen[key] else dataclasses.replace(job, chunk=seen[key]))
        seen[key] += 1
    return out


def select_jobs(cfg: Mapping[str, Any], jobs: list) -> list:
    """The jobs of ``jobs`` that the config's ``select`` keeps (all of them without one), renumbered where the
    config says ``renumber``."""
    select = cfg.get("select")
    if select is None:
        return jobs
    chosen = [job for job in jobs if kept(job, select)]
    return renumbered(chosen) if cfg.get("renumber") else chosen


def selection_problems(cfg: Mapping[str, Any]) -> Iterator[str]:
    """What is wrong with the config's ``select`` (one message each): an experiment the config does not have, a
    field its jobs do not have, a value no job holds, a selection that keeps no job; ``renumber`` without
    ``select``."""
    from . import plan_jobs  # the package's planner, which plans through this module (imported on use)

    select = cfg.get("select")
    if select is None:
        if "renumber" in cfg:
            yield "renumber: numbers the jobs that select keeps; give select, or leave renumber out"
        return
    for exp, fields in select.items():
        where = f"select.{exp}"
        if exp not in cfg["experiments"]:
            yield f"{where}: the config has no experiment {exp} (it has {', '.join(cfg['experiments'])})"
            continue
        jobs = plan_jobs({**cfg, "select": None}, (exp,))
        names = selectable_fields(jobs[0]) if jobs else []
        wrong = False
        for name, values in fields.items():
            if name not in names:
                wrong = True
                yield f"{where}.{name}: {exp}'s jobs have no field {name!r}; select by {', '.join(names)}"
                continue
            held = list(dict.fromkeys(getattr(job, name) for job in jobs))
            for value in values:
                if not any(_same(h, value) for h in held):
                    wrong = True
                    yield f"{where}.{name}: no job of {exp} has {name} {value!r}; they have {_listed(held)}"
        if not wrong and not any(kept(job, select) for job in jobs):
            yield f"{where}: no job of {exp} has all of the values selected ({_listed(fields.items())})"


def _listed(values, most: int = 12) -> str:
    values = list(values)
    shown = ", ".join(f"{v[0]} {v[1]}" if isinstance(v, tuple) else repr(v) for v in values[:most])
    return shown + (f", ... ({len(values)} in all)" if len(values) > most else "")
