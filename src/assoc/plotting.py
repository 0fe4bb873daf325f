"""Figures for association tables and analysis results (matplotlib, imported lazily).

Three pictures cover most reports:

* [`plot_estimates`][assoc.plotting.plot_estimates]: a forest plot of estimates with confidence intervals
  (effect sizes from ``weat``/``effect_size``, fixed effects from ``lmm``, ICCs, ...);
* [`plot_scores`][assoc.plotting.plot_scores]: the distribution of raw values by group (e.g. log
  probabilities by occupation and gender word), one panel per model;
* [`plot_model_agreement`][assoc.plotting.plot_model_agreement]: Pearson correlations between models over the same
  items, the picture behind an ICC across models;
* [`plot_convergence`][assoc.plotting.plot_convergence]: the method x method correlation matrix of a
  ``convergence`` result (with external criteria), the picture behind a method comparison.

Each function returns the matplotlib ``Figure``; [`save_figure`][assoc.plotting.save_figure] writes it
atomically (PNG, PDF or SVG by extension).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.analysis.headline import DEFAULT_LABELS
from assoc.errors import OptionError, TableError
from assoc.infra.io import atomic_path

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from assoc.reporting.headlines import Reading

ESTIMATE_COLUMNS = ("estimate", "effect_size", "icc", "alpha", "r", "d", "posterior", "mean_loglik", "value")
#: Columns that may name a result's rows when its analysis declares none
#: (``assoc.analysis.headline.DEFAULT_LABELS``).
LABEL_CANDIDATES = DEFAULT_LABELS
FIGURE_FORMATS = {".png", ".pdf", ".svg"}


def _new_figure(**kwargs: Any) -> Figure:
    """A figure of matplotlib's object-oriented API.

    It is not registered with pyplot, so the user's backend is never switched (a notebook's
    inline backend keeps working), no window opens, and nothing accumulates in pyplot's
    figure manager; notebooks still display a returned Figure.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # matplotlib is an optional extra
        raise OptionError(
            "plots need matplotlib: pip install matplotlib (the repository's extra: pip install -e '.[plot]')"
        ) from exc
    return Figure(**kwargs)


def _estimate_column(result: pd.DataFrame, estimate: str | None) -> str:
    if estimate is not None:
        if estimate not in result.columns:
            raise TableError(f"column {estimate!r} not in the result (columns: {', '.join(map(str, result.columns))})")
        return estimate
    for column in ESTIMATE_COLUMNS:
        if column in result.columns:
            return column
    raise TableError(f"cannot find an estimate column (tried {', '.join(ESTIMATE_COLUMNS)}); name one with estimate=")


def estimate_labels(result: pd.DataFrame, label: Sequence[str] | str | None = None) -> list[str]:
    """One label per row.

    The given column(s); else the columns the result's analysis declares as naming a row
    (``Analysis.headline.labels``: CrowS-Pairs' bias type, BBQ's category and context, ...) whose
    values differ between rows; else a ``label`` column whose values are unique; else the
    descriptive columns whose values differ between rows. Empty cells are left out of a label.
    """
    from assoc.analysis.headline import row_labels, varying_labels

    if isinstance(label, str):
        label = [label]
    if label is None:
        reading = _reading(result)
        if reading is not None and reading.declared:
            label = varying_labels(result, reading.headline.labels)
    if label is None and "label" in result.columns and result["label"].astype(str).is_unique:
        label = ["label"]  # an analysis's own names for its rows (e.g. ICC(A,1)) say it best
    if label is None:
        label = varying_labels(result, LABEL_CANDIDATES)
    missing = [c for c in label if c not in result.columns]
    if missing:
        raise TableError(f"label column(s) not in the result: {', '.join(missing)}")
    return row_labels(result, label)


def _reading(result: pd.DataFrame) -> Reading | None:
    """How the result's analysis (named in its provenance) reads it, when that analysis is installed."""
    from assoc.reporting.headlines import analysis_class_of, reading_of

    cls = analysis_class_of(result)
    return reading_of(result, cls) if cls is not None else None


def plot_estimates(
    result: pd.DataFrame,
    *,
    estimate: str | None = None,
    label: Sequence[str] | str | None = None,
    reference: float | str | None = "auto",
    title: str | None = None,
    max_rows: int = 100,
    compare: Sequence[str] | str | None = None,
) -> Figure:
    """Forest plot: one row per estimate, with its interval.

    ``estimate`` names the column (default: the first of ``estimate``, ``effect_size``,
    ``icc``, ``alpha``, ``r``, ``d``, ``posterior``, ``mean_loglik``, ``value``); ``label``
    names the column(s) that identify a row (default: see `estimate_labels`). What the
    analysis that made the result declares about the column (``Analysis.headline``,
    [`Estimate`][assoc.analysis.headline.Estimate]) decides the rest: the interval drawn (its
    columns, on the estimate's scale: BBQ's ``bias_score_x100`` gets its interval × 100), the
    reference line (``reference="auto"``: 50 for CrowS-Pairs' metric score, 0 for most) and the
    axis title; a column the analysis does not declare gets no interval. A result whose
    analysis declares nothing gets ``ci_low``–``ci_high`` when present and reference 0.
    ``reference`` as a number draws the line there, ``None`` draws none. A result with more than
    ``max_rows`` rows is an error (filter it first): such a figure is too tall to read.
    ``compare`` names columns of reference values drawn as open markers beside each estimate
    (e.g. published effect sizes), with a legend.
    """
    import numpy as np

    if len(result) > max_rows:
        raise TableError(
            f"{len(result)} estimates are too many for one forest plot (max_rows={max_rows}); "
            "keep some rows first (e.g. --where model=NAME; assoc.table.select_rows in Python), or raise max_rows"
        )
    column = _estimate_column(result, estimate)
    compare = [compare] if isinstance(compare, str) else list(compare or [])
    missing = [c for c in compare if c not in result.columns]
    if missing:
        raise TableError(f"compare column(s) not in the result: {', '.join(missing)}")
    values = result[column].to_numpy(dtype=float)
    labels = estimate_labels(result, label)
    reading = _reading(result)
    declared = None
    if reading is not None and reading.declared:
        from assoc.analysis.headline import resolve_estimate

        declared = resolve_estimate(reading.headline, column, reading.estimate_column)
        interval = declared.interval(result) if declared is not None else None
    elif {"ci_low", "ci_high"} <= set(result.columns):
        interval = (result["ci_low"].to_numpy(dtype=float), result["ci_high"].to_numpy(dtype=float))
    else:
        interval = None
    if isinstance(reference, str):
        if reference != "auto":
            raise OptionError(f"reference must be a number, None or 'auto', got {reference!r}")
        reference = declared.reference if declared is not None else 0.0
    positions = np.arange(len(values))[::-1]
    fig = _new_figure(figsize=(7, 0.45 * len(values) + 1.4))
    ax = fig.subplots()
    if interval is not None:
        low, high = interval
        has_ci = ~(np.isnan(low) | np.isnan(high))
        ax.hlines(positions[has_ci], low[has_ci], high[has_ci], color="0.35", linewidth=1.6)
    ax.plot(values, positions, "o", color="C0", label=column)
    markers = "sD^v<>p*"
    for i, other in enumerate(compare):
        ax.plot(
            result[other].to_numpy(dtype=float),
            positions,
            markers[i % len(markers)],
            mfc="none",
            color=f"C{i + 1}",
            label=other,
        )
    if compare:
        ax.legend(loc="best", fontsize="small")
    ax.set_yticks(positions, labels)
    ax.set_xlabel(declared.name if declared is not None else column)
    if reference is not None:
        ax.axvline(reference, color="0.6", linestyle="--", linewidth=1)
    title = title if title is not None else _default_title(result, column)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def _default_title(result: pd.DataFrame, column: str) -> str:
    """The analysis that produced ``result`` (from its provenance) and the estimate drawn, e.g. ``icc: icc``."""
    from assoc.table.provenance import get_provenance

    analysis = get_provenance(result).get("analysis")
    return f"{analysis}: {column}" if analysis else (column if len(result) == 1 else "")


def plot_scores(
    table: pd.DataFrame,
    *,
    by: str = "target_group",
    hue: str | None = "attribute_group",
    facet: str = "model",
    title: str | None = None,
) -> Figure:
    """Box plots of ``value`` by ``by`` (x axis) and ``hue`` (colour), one panel per ``facet`` value."""
    import numpy as np

    for column in (by, hue, facet):
        if column is not None and column not in table.columns:
            raise TableError(f"column {column!r} not in the table")
    panels = list(dict.fromkeys(table[facet])) if facet else [None]
    fig = _new_figure(figsize=(max(5.0, 4.5 * len(panels)), 4.2))
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)
    groups = list(dict.fromkeys(table[by]))
    hues = list(dict.fromkeys(table[hue])) if hue else [None]
    width = 0.8 / len(hues)
    for ax, panel in zip(axes[0], panels):
        part = table if panel is None else table[table[facet] == panel]
        for j, level in enumerate(hues):
            subset = part if level is None else part[part[hue] == level]
            data = [subset.loc[subset[by] == g, "value"].dropna().to_numpy(dtype=float) for g in groups]
            positions = np.arange(len(groups)) + (j - (len(hues) - 1) / 2) * width
            kept = [(p, d) for p, d in zip(positions, data) if len(d)]
            if kept:
                box = ax.boxplot(
                    [d for _, d in kept],
                    positions=[p for p, _ in kept],
                    widths=width * 0.9,
                    patch_artist=True,
                    manage_ticks=False,
                )
                for patch in box["boxes"]:
                    patch.set_facecolor(f"C{j}")
                    patch.set_alpha(0.6)
                ax.plot([], [], "s", color=f"C{j}", alpha=0.6, label=str(level) if level is not None else None)
        ax.set_xticks(np.arange(len(groups)), [str(g) for g in groups], rotation=30, ha="right")
        ax.set_title(str(panel) if panel is not None else "")
        measures = sorted(set(part["measure"])) if "measure" in part else []
        ax.set_ylabel(", ".join(measures) or "value")
    if hue:
        axes[0][-1].legend(title=hue, fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def model_agreement(
    table: pd.DataFrame, *, items: Sequence[str] = ("context", "target", "attribute"), raters: str = "model"
) -> pd.DataFrame:
    """Pearson correlations between raters (models) over the items all of them measured.

    Items are the unique combinations of the ``items`` columns (the ICC's default);
    items with a missing value for any model are dropped.
    """
    for column in (*items, raters):
        if column not in table.columns:
            raise TableError(f"column {column!r} not in the table")
    wide = table.pivot_table(index=list(items), columns=raters, values="value", aggfunc="mean").dropna()
    if wide.shape[1] < 2:
        raise TableError(f"model agreement needs at least two distinct {raters!r} values")
    if wide.shape[0] < 3:
        raise TableError("model agreement needs at least three items measured by every model")
    return wide.corr(method="pearson")


def plot_model_agreement(
    table: pd.DataFrame,
    *,
    items: Sequence[str] = ("context", "target", "attribute"),
    raters: str = "model",
    title: str | None = None,
) -> Figure:
    """Heatmap of `model_agreement`, with the correlations written in the cells."""
    corr = model_agreement(table, items=items, raters=raters)
    return _correlation_heatmap(corr, title=title or f"Agreement between {raters}s", colorbar="Pearson r")


def convergence_matrix(result: pd.DataFrame, *, criteria: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The method x method correlation matrix of a ``convergence`` result, and its N per cell.

    ``criteria``: add the criterion columns as further rows and columns (their correlations
    with each method; criterion x criterion cells are empty unless on the diagonal).
    """
    import numpy as np
    import pandas as pd

    if "kind" not in result.columns or not (result["kind"] == "correlation").any():
        raise TableError(
            "not a convergence result: it has no rows of kind 'correlation' "
            "(make it with assoc.analyze('convergence', table))"
        )
    kinds = ["correlation", "criterion"] if criteria else ["correlation"]
    pairs = result[result["kind"].isin(kinds)]
    names = list(
        dict.fromkeys(
            [*pairs.loc[pairs["kind"] == "correlation", "x"], *pairs.loc[pairs["kind"] == "correlation", "y"]]
        )
    )
    names += [c for c in dict.fromkeys(pairs.loc[pairs["kind"] == "criterion", "y"]) if c not in names]
    corr = pd.DataFrame(np.nan, index=names, columns=names)
    counts = pd.DataFrame(np.nan, index=names, columns=names)
    for row in pairs.itertuples(index=False):
        corr.loc[row.x, row.y] = corr.loc[row.y, row.x] = row.estimate
        counts.loc[row.x, row.y] = counts.loc[row.y, row.x] = row.n
    for name in names:
        corr.loc[name, name] = 1.0
    return corr, counts


def plot_convergence(result: pd.DataFrame, *, criteria: bool = True, title: str | None = None) -> Figure:
    """Heatmap of the method x method correlations of a ``convergence`` result (r and N in each cell).

    With ``criteria`` (default) the external criteria appear as further rows and columns.
    """
    corr, counts = convergence_matrix(result, criteria=criteria)
    kind = str(result["correlation"].dropna().iloc[0]) if "correlation" in result.columns else "pearson"
    contrast = str(result["contrast"].iloc[0]) if "contrast" in result.columns else ""
    label = "Spearman rho" if kind == "spearman" else "Pearson r"
    return _correlation_heatmap(
        corr,
        counts=counts,
        colorbar=label,
        title=title or f"Convergence of methods{f' ({contrast})' if contrast else ''}",
    )


def _correlation_heatmap(
    corr: pd.DataFrame, *, title: str, colorbar: str, counts: pd.DataFrame | None = None
) -> Figure:
    """A correlation matrix as a heatmap on [-1, 1], each cell written (with its N when given)."""
    import numpy as np

    size = 1.0 + 0.8 * len(corr)
    fig = _new_figure(figsize=(size + 1.5, size))
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(corr.to_numpy(dtype=float)), vmin=-1, vmax=1, cmap="RdBu_r")
    names = [str(c) for c in corr.columns]
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            value = corr.iat[i, j]
            if np.isnan(value):
                continue
            text = f"{value:.2f}"
            if counts is not None and i != j and not np.isnan(counts.iat[i, j]):
                text += f"\nN={int(counts.iat[i, j])}"
            ax.text(
                j, i, text, ha="center", va="center", fontsize="small", color="white" if abs(value) > 0.6 else "black"
            )  # legible on the dark ends of the scale
    fig.colorbar(image, ax=ax, label=colorbar)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def save_figure(fig: Figure, path: str | Path, *, dpi: int = 150) -> Path:
    """Write ``fig`` atomically; the format comes from the extension (.png, .pdf, .svg)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FIGURE_FORMATS:
        raise OptionError(f"cannot save a figure as {path.name!r}: use .png, .pdf or .svg")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=suffix[1:], dpi=dpi, bbox_inches="tight")
    return path
