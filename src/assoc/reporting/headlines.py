"""The headline numbers of analysis results, read through their analyses' declarations.

[`headline_table`][assoc.reporting.headlines.headline_table] reads each result with its analysis's
[`Headline`][assoc.analysis.headline.Headline] (looked up from the result's provenance in the plugin
registry) and returns the long table every view of a study is drawn from: the report's headline
tables, its heatmap and the bias card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assoc.analysis.headline import Estimate, Headline, generic_headline, row_labels, varying_labels

if TYPE_CHECKING:
    import pandas as pd

    from assoc.analysis.base import Analysis

#: The columns of `headline_table`.
HEADLINE_COLUMNS = (
    "source",
    "analysis",
    "estimate",
    "column",
    "model",
    "row",
    "value",
    "low",
    "high",
    "p_value",
    "n",
    "reference",
)


def analysis_class_of(result: pd.DataFrame) -> type[Analysis] | None:
    """The class of the analysis that produced ``result`` (its provenance names it), if it is installed."""
    from assoc.errors import AssocError
    from assoc.plugins import manager
    from assoc.table.provenance import get_provenance

    name = get_provenance(result).get("analysis")
    if not isinstance(name, str) or not name:
        return None
    try:
        return manager.get_analysis(name)
    except AssocError:  # made by an analysis that is not installed here: read generically
        return None


@dataclass(frozen=True)
class Reading:
    """How to read one result: its headline declaration, whether the analysis declared it, its main column."""

    headline: Headline
    declared: bool
    estimate_column: str | None


def reading_of(result: pd.DataFrame, analysis: type[Analysis] | None = None) -> Reading:
    """How to read ``result``: its analysis's declared headline, else the generic one."""
    cls = analysis if analysis is not None else analysis_class_of(result)
    estimate_column = getattr(cls, "estimate_column", None) if cls is not None else None
    declared = getattr(cls, "headline", None) if cls is not None else None
    if declared is not None:
        return Reading(declared, True, estimate_column)
    return Reading(generic_headline(result, estimate_column), False, estimate_column)


def headline_table(result: pd.DataFrame, *, source: str = "", analysis: str = "") -> pd.DataFrame:
    """The headline numbers of ``result``, one row per headline estimate, model and headline row.

    Columns (``HEADLINE_COLUMNS``): ``source`` (the input), ``analysis``, ``estimate`` (its
    title), ``column``, ``model`` (``""`` when the result has no model column), ``row`` (the row's
    label without the model), ``value``, ``low``/``high`` (on the value's scale), ``p_value``,
    ``n`` (the counts as text, ``n_pairs = 20``), ``reference``. A declared estimate whose column
    the result lacks is left out.
    """
    import numpy as np
    import pandas as pd

    reading = reading_of(result)
    headline = reading.headline
    rows = headline.select(result)
    labels = [c for c in varying_labels(result, headline.labels) if c != "model"]
    if not labels:  # name the rows by every declared label column present, except the model
        labels = [c for c in headline.labels if c in result.columns and c != "model"][:3]
    names = row_labels(rows, labels) if labels else [""] * len(rows)
    models = rows["model"].astype(str).tolist() if "model" in rows.columns else [""] * len(rows)
    out: list[dict[str, Any]] = []
    for estimate in headline.leading:
        if estimate.column not in rows.columns:
            continue
        values = pd.to_numeric(rows[estimate.column], errors="coerce").to_numpy(dtype=float)
        interval = estimate.interval(rows)
        low, high = interval if interval is not None else (np.full(len(rows), np.nan), np.full(len(rows), np.nan))
        p = (
            pd.to_numeric(rows[estimate.p_value], errors="coerce").to_numpy(dtype=float)
            if estimate.p_value and estimate.p_value in rows.columns
            else np.full(len(rows), np.nan)
        )
        counts = _counts(rows, estimate)
        for i in range(len(rows)):
            out.append(
                {
                    "source": source,
                    "analysis": analysis,
                    "estimate": estimate.name,
                    "column": estimate.column,
                    "model": models[i],
                    "row": names[i],
                    "value": float(values[i]),
                    "low": float(low[i]),
                    "high": float(high[i]),
                    "p_value": float(p[i]),
                    "n": counts[i],
                    "reference": estimate.reference,
                }
            )
    return pd.DataFrame(out, columns=list(HEADLINE_COLUMNS))


def _counts(rows: pd.DataFrame, estimate: Estimate) -> list[str]:
    """The counts behind each row's estimate as text: ``20`` for one count column, ``n_x = 8, n_y = 8`` for several."""
    import pandas as pd

    present = [c for c in estimate.n if c in rows.columns]
    if not present:
        return [""] * len(rows)
    columns = {c: pd.to_numeric(rows[c], errors="coerce").tolist() for c in present}
    texts = []
    for i in range(len(rows)):
        parts = []
        for column in present:
            value = columns[column][i]
            shown = "" if value != value else (str(int(value)) if float(value).is_integer() else f"{value:g}")
            parts.append(shown if len(present) == 1 else f"{column} = {shown}")
        texts.append(", ".join(parts))
    return texts
