"""Writing a table: Markdown (``±``), LaTeX (booktabs, ``$\\pm$``) and CSV (a mean and a ``_sd`` column per
quantity), each file atomically (a temporary file in the same folder, then ``os.replace``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...utils.atomic import atomic_write
from .common import LABELS, TableResult

__all__ = ["NO_ROWS", "to_latex", "to_markdown", "write_table", "write_text_atomic"]

#: LaTeX headers of the columns whose label has mathematics
_LATEX_LABELS = {
    "xi_alpha_bound": r"$\xi\alpha$ bound",
    "n_empty_lambda": r"$k$ (empty $\Lambda_p$)",
    "n_inbound": r"$n^*$",
    "n_sv": r"$n$",
}

def _fmt(mean: float, sd: float, decimals: int, pm: str, spec: str | None = None) -> str:
    if mean is None or not np.isfinite(mean):
        return "-"
    spec = spec or f".{decimals}f"
    s = f"{mean:{spec}}"
    if sd is not None and np.isfinite(sd):
        s += f" {pm} {sd:{spec}}"
    return s


#: headers of the key columns (the others show their name)
_KEY_HEADERS = {"dataset": "Data set", "log2_C": "log2 C", "axis": "Varied", "at": "At", "estimator": "Estimator"}


def _display(t: TableResult, pm: str, latex: bool) -> tuple[list[str], list[list[str]]]:
    headers = []
    for k in t.key_columns:
        headers.append(_KEY_HEADERS.get(k, k))
    if "l" not in t.key_columns:
        headers.append("l")
    show_reps = "n_replicates" in t.data.columns
    if show_reps:
        headers.append(LABELS["n_replicates"])
    for c in t.columns:
        text = (_LATEX_LABELS.get(c) if latex else None) or t.labels.get(c) or LABELS.get(c, c)
        headers.append(_latex_escape(text) if latex and c not in _LATEX_LABELS else text)
    rows = []
    for _, r in t.data.iterrows():
        keys = [LABELS.get(r[k], r[k]) if k == "estimator" else r[k] for k in t.key_columns]
        cells = [(_latex_escape(str(v)) if latex else str(v)) for v in keys]
        if "l" not in t.key_columns:
            cells.append(str(r["l"]))
        if show_reps:
            cells.append(str(int(r["n_replicates"])))
        for c in t.columns:
            cells.append(_fmt(r.get(c), r.get(f"{c}_sd"), t.decimals, pm, t.formats.get(c)))
        rows.append(cells)
    return headers, rows


def _latex_escape(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("$", r"\$"), ("{", r"\{"), ("}", r"\}")):
        s = s.replace(a, b)
    return s


#: what a table says where its rows hold none of its models (a part without SVM+, or without a span grid): a
#: header with no line under it reads like a table cut short
NO_ROWS = "No rows: the results this table was built from hold none of its models."


def to_markdown(t: TableResult) -> str:
    from tabulate import tabulate

    headers, rows = _display(t, "±", latex=False)
    body = tabulate(rows, headers=headers, tablefmt="pipe", disable_numparse=True) if rows else f"_{NO_ROWS}_"
    parts = [f"**{t.name}.** {t.caption}", "", body]
    if t.footer:
        parts += [""] + [f"- {line}" for line in t.footer]
    return "\n".join(parts) + "\n"


def to_latex(t: TableResult) -> str:
    headers, rows = _display(t, r"$\pm$", latex=True)
    spec = "l" * len(t.key_columns) + "r" * (len(headers) - len(t.key_columns))
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\caption{" + _latex_escape(t.caption).replace("+-", r"$\pm$") + "}",
        r"\label{tab:" + t.name.replace("_", "-") + "}",
    ]
    if rows:
        lines += [
            r"\begin{tabular}{" + spec + "}",
            r"\toprule",
            " & ".join(headers) + r" \\",
            r"\midrule",
            *[" & ".join(r) + r" \\" for r in rows],
            r"\bottomrule",
            r"\end{tabular}",
        ]
    else:
        lines.append(r"\emph{" + _latex_escape(NO_ROWS) + "}")
    if t.footer:
        lines.append(r"\par\smallskip\footnotesize " + r" \\ ".join(_latex_escape(f) for f in t.footer))
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically: a temporary file in the same folder, fsync, os.replace.
    An interrupted write leaves ``path`` as it was (absent or the previous version) and no temporary."""
    with atomic_write(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


def write_table(t: TableResult, csv: str | Path, md: str | Path, tex: str | Path) -> None:
    """Write the table as CSV, Markdown and LaTeX, each file atomically."""
    texts = {csv: t.data.to_csv(index=False), md: to_markdown(t), tex: to_latex(t)}
    for path, text in texts.items():
        write_text_atomic(path, text)
