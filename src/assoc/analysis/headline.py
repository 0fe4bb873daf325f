"""What an analysis reports: its estimates with their intervals and reference values, and its headline rows.

An analysis declares, on its class, which of its result columns are estimates
([`Estimate`][assoc.analysis.headline.Estimate]: the column, its interval columns and their scale, its p-value and
count columns, the value that means "no association") and which rows and columns make its
headline ([`Headline`][assoc.analysis.headline.Headline]: the estimates a report leads with, the rows it keeps,
the columns that name a row). Figures ([`assoc.plotting.plot_estimates`][assoc.plotting.plot_estimates]),
the study report ([`assoc.report`][assoc.reporting.study.report]) and the bias card read these declarations, so a
plugin's analysis is labelled, scaled and referenced by its own author, in one place::

    class CrowsPairsAnalysis(Analysis):
        estimate_column = "metric_score"
        headline = Headline(
            estimates=(Estimate("metric_score", "metric score (%)", low="ci_low", high="ci_high",
                                p_value="p_value", n=("n_pairs",), reference=50.0),),
            rows={"bias_type": ("all",)},
            labels=("model", "crows_metric", "bias_type"),
        )

An analysis that declares nothing gets [`generic_headline`][assoc.analysis.headline.generic_headline]:
its ``estimate`` column with ``ci_low``/``ci_high``, ``p_value`` and ``n`` where the result has them,
reference 0, every row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: Columns that name a result's rows when its analysis declares none (the order they are joined in).
DEFAULT_LABELS = (
    "label",
    "design",
    "test",
    "term",
    "type",
    "model",
    "context",
    "target_group",
    "target",
    "attribute_group",
    "attribute",
    "x",
    "y",
    "a",
    "b",
    "kind",
    "group",
    "formula",
)


@dataclass(frozen=True)
class Estimate:
    """One number an analysis reports per result row, and how to read it.

    Parameters
    ----------
    column:
        The result column holding the number.
    title:
        What it is, for axis labels and table headers (default: the column's name).
    low, high:
        The columns of its interval (``None``: it has none).
    interval_scale:
        The factor that puts ``low`` and ``high`` on the scale of ``column``: 100 when the column is
        a score × 100 (BBQ's ``bias_score_x100``) and the interval is of the score itself.
    p_value:
        The column of its p-value, if any.
    n:
        The columns of the counts it rests on (pairs, examples, targets; two for two groups).
    reference:
        The value that means "no association" (0 for a difference or a correlation, 50 for a
        percentage of pairs where 50 is no preference); ``None``: none (an accuracy).
    headline:
        Whether the report's headline table and the bias card show it (else only figures and
        the full result do).
    """

    column: str
    title: str = ""
    low: str | None = None
    high: str | None = None
    interval_scale: float = 1.0
    p_value: str | None = None
    n: tuple[str, ...] = ()
    reference: float | None = 0.0
    headline: bool = True

    @property
    def name(self) -> str:
        """The title, or the column's name when no title is given."""
        return self.title or self.column

    def interval(self, result: pd.DataFrame) -> tuple[Any, Any] | None:
        """The interval columns of ``result`` as arrays on the column's scale, or ``None`` when it has none."""
        if self.low is None or self.high is None or self.low not in result or self.high not in result:
            return None
        import pandas as pd

        low = pd.to_numeric(result[self.low], errors="coerce").to_numpy(dtype=float) * self.interval_scale
        high = pd.to_numeric(result[self.high], errors="coerce").to_numpy(dtype=float) * self.interval_scale
        return low, high


@dataclass(frozen=True)
class Headline:
    """What a report leads with for one analysis: its estimates, the rows kept, the columns naming a row.

    Parameters
    ----------
    estimates:
        Every estimate column of the result ([`Estimate`][assoc.analysis.headline.Estimate]); those
        with ``headline=True`` make the headline, the others are declared for figures (their intervals,
        scale and reference).
    rows:
        Column -> values: the headline keeps the rows whose column holds one of the values
        (CrowS-Pairs: ``{"bias_type": ("all",)}``, the summary over all pairs); empty: every row.
        A column the result lacks keeps every row.
    labels:
        The columns that name a row, in order (``model`` among them where the result has one).
        A figure joins those whose values differ between its rows.
    """

    estimates: tuple[Estimate, ...]
    rows: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    labels: tuple[str, ...] = ("model",)

    def estimate(self, column: str) -> Estimate | None:
        """The declared estimate of ``column``, if any."""
        for estimate in self.estimates:
            if estimate.column == column:
                return estimate
        return None

    @property
    def leading(self) -> tuple[Estimate, ...]:
        """The estimates the headline shows (``headline=True``)."""
        return tuple(e for e in self.estimates if e.headline)

    def select(self, result: pd.DataFrame) -> pd.DataFrame:
        """The headline rows of ``result`` (see ``rows``)."""
        kept = result
        for column, values in self.rows.items():
            if column in kept.columns:
                kept = kept[kept[column].isin(list(values))]
        return kept


def generic_headline(result: pd.DataFrame, estimate_column: str | None = None) -> Headline:
    """The headline of a result whose analysis declares none.

    Its ``estimate`` column (else ``estimate_column``), with ``ci_low``/``ci_high``, ``p_value``
    and ``n`` where present, reference 0, every row, labelled by ``DEFAULT_LABELS``.
    """
    column = "estimate" if "estimate" in result.columns else (estimate_column or "estimate")
    has_ci = {"ci_low", "ci_high"} <= set(result.columns)
    estimate = Estimate(
        column,
        low="ci_low" if has_ci else None,
        high="ci_high" if has_ci else None,
        p_value="p_value" if "p_value" in result.columns else None,
        n=("n",) if "n" in result.columns else (),
        reference=0.0,
    )
    return Headline(estimates=(estimate,), labels=DEFAULT_LABELS)


def resolve_estimate(headline: Headline, column: str, estimate_column: str | None) -> Estimate | None:
    """The declaration of ``column``: its own, or, for the canonical ``estimate`` copy, that of ``estimate_column``."""
    found = headline.estimate(column)
    if found is None and column == "estimate" and estimate_column:
        found = headline.estimate(estimate_column)
    return found


def varying_labels(result: pd.DataFrame, candidates: Sequence[str]) -> list[str]:
    """The ``candidates`` columns of ``result`` whose values differ between rows.

    With one row (nothing varies) its non-empty candidate columns, at most three, so a lone
    estimate is still named by what it is about.
    """
    present = [c for c in candidates if c in result.columns]
    varying = [c for c in present if result[c].astype(str).nunique() > 1]
    if not varying and len(result) == 1:
        row = result.iloc[0]
        varying = [c for c in present if not _empty(row[c])][:3]
    return varying


def row_labels(result: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """One label per row: the values of ``columns`` joined by `` | ``, empty cells left out (``1..n`` without any)."""
    if not columns:
        return [str(i + 1) for i in range(len(result))]
    labels = []
    for row in result[list(columns)].itertuples(index=False, name=None):
        parts = [str(v) for v in row if not _empty(v)]
        labels.append(" | ".join(parts))
    return labels


def _empty(value: Any) -> bool:
    """A cell with nothing in it: None, NaN or blank text."""
    if value is None:
        return True
    if isinstance(value, float) and value != value:
        return True
    return str(value).strip() in ("", "nan", "None", "<NA>")
