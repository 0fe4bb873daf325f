"""Figures of a report as inline SVG, written by hand: forest plots and heatmaps.

Every mark carries its number in a ``data-`` attribute (``data-value``, ``data-low``, ``data-high``,
``data-reference``) with every digit, so a reader's tools (and the tests) can check what is drawn
against the analysis, and every text is SVG text (searchable, selectable, accessible). No ids are
used, so any number of figures can share one page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

#: Colours of the marks (a colour-blind-safe blue and orange, greys).
POINT = "#1f5fa8"
INTERVAL = "#555555"
REFERENCE = "#999999"
LABEL_CHAR_WIDTH = 6.4  # px per character of a 12 px sans-serif label, for the layout
MAX_LABEL = 48  # characters of a row label shown (the whole label is in its <title>)


def fmt(value: float | None) -> str:
    """A number as the report shows it: 4 significant digits, ``–`` for a missing one."""
    if value is None or not math.isfinite(value):
        return "–"
    if value == 0:
        return "0"
    return f"{value:.4g}"


def fmt_p(value: float | None) -> str:
    """A p-value as the report shows it: 4 significant digits, ``< 0.0001`` below that."""
    if value is None or not math.isfinite(value):
        return "–"
    return "< 0.0001" if value < 1e-4 else fmt(value)


def number(value: float | None) -> str:
    """Every digit of a number, for a ``data-`` attribute (``nan`` when missing)."""
    if value is None or not math.isfinite(value):
        return "nan"
    return repr(float(value))


def _short(text: str, limit: int = MAX_LABEL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick positions covering [low, high]: steps of 1, 2 or 5 times a power of ten."""
    span = high - low
    if not math.isfinite(span) or span <= 0:
        return [low]
    raw = span / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    tick = first
    while tick <= high + step * 1e-9:
        ticks.append(round(tick, 12))
        tick += step
    return ticks


def _domain(numbers: Sequence[float]) -> tuple[float, float]:
    finite = [v for v in numbers if v is not None and math.isfinite(v)]
    if not finite:
        return -1.0, 1.0
    low, high = min(finite), max(finite)
    if low == high:
        pad = abs(low) * 0.1 or 1.0
        return low - pad, high + pad
    pad = (high - low) * 0.06
    return low - pad, high + pad


def forest(
    labels: Sequence[str],
    values: Sequence[float],
    low: Sequence[float] | None = None,
    high: Sequence[float] | None = None,
    *,
    reference: float | None = 0.0,
    title: str = "",
    axis: str = "",
    width: int = 680,
) -> str:
    """A forest plot: one row per label, its point and interval, a dashed reference line.

    ``low``/``high`` are on the values' scale (``None``: no intervals); a missing value draws no
    point (its row says ``n/a``), a missing bound no interval.
    """
    n = len(values)
    label_width = min(max((len(_short(str(s))) for s in labels), default=1) * LABEL_CHAR_WIDTH + 14, 320)
    left, right, top, row_height = label_width, width - 24, 30 if title else 10, 22
    height = top + n * row_height + 46
    bounds = [*values, *(low or []), *(high or []), *([reference] if reference is not None else [])]
    lo, hi = _domain(bounds)

    def x(value: float) -> float:
        return left + (value - lo) / (hi - lo) * (right - left)

    parts = [
        f'<svg class="figure forest" data-figure="forest" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} '
        f'{height}" width="{width}" height="{height}" role="img" aria-label="{escape(title or axis)}" '
        'font-family="sans-serif" font-size="12">'
    ]
    if title:
        parts.append(f'<text class="title" x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="14">'
                     f"{escape(title)}</text>")  # fmt: skip
    bottom = top + n * row_height
    for tick in nice_ticks(lo, hi):
        parts.append(
            f'<g class="tick"><line x1="{x(tick):.2f}" x2="{x(tick):.2f}" y1="{top}" y2="{bottom + 4}" '
            f'stroke="#e4e4e4"/><text x="{x(tick):.2f}" y="{bottom + 17}" text-anchor="middle">{fmt(tick)}</text></g>'
        )
    parts.append(f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#333"/>')
    if axis:
        parts.append(f'<text class="axis" x="{(left + right) / 2:.1f}" y="{bottom + 36}" text-anchor="middle">'
                     f"{escape(axis)}</text>")  # fmt: skip
    if reference is not None and math.isfinite(reference):
        parts.append(
            f'<line class="reference" data-reference="{number(reference)}" x1="{x(reference):.2f}" '
            f'x2="{x(reference):.2f}" y1="{top - 4}" y2="{bottom}" stroke="{REFERENCE}" stroke-dasharray="4 3"/>'
        )
    for i, (label, value) in enumerate(zip(labels, values)):
        y = top + (i + 0.5) * row_height
        a = low[i] if low is not None else None
        b = high[i] if high is not None else None
        shown = f"{label}: {fmt(value)}" + (f" [{fmt(a)}, {fmt(b)}]" if a is not None and b is not None else "")
        parts.append(f'<g class="row" data-label="{escape(str(label))}"><title>{escape(shown)}</title>')
        parts.append(f'<text class="label" x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">'
                     f"{escape(_short(str(label)))}</text>")  # fmt: skip
        if a is not None and b is not None and math.isfinite(a) and math.isfinite(b):
            parts.append(
                f'<line class="interval" data-low="{number(a)}" data-high="{number(b)}" x1="{x(a):.2f}" '
                f'x2="{x(b):.2f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{INTERVAL}" stroke-width="1.6"/>'
            )
        if value is not None and math.isfinite(value):
            parts.append(f'<circle class="point" data-value="{number(value)}" cx="{x(value):.2f}" cy="{y:.1f}" '
                         f'r="4" fill="{POINT}"/>')  # fmt: skip
        else:
            parts.append(f'<text class="missing" x="{left + 4}" y="{y + 4:.1f}" fill="#888">n/a</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _diverging(t: float) -> str:
    """A colour for t in [-1, 1]: blue (negative) through white to red (positive)."""
    t = max(-1.0, min(1.0, t))
    blue, white, red = (33, 102, 172), (247, 247, 247), (178, 24, 43)
    end = red if t > 0 else blue
    s = abs(t)
    rgb = tuple(round(w + (e - w) * s) for w, e in zip(white, end))
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def heatmap(
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float]],
    *,
    texts: Sequence[Sequence[str]] | None = None,
    centres: Sequence[float | None] | None = None,
    fixed: tuple[float, float] | None = None,
    title: str = "",
) -> str:
    """A heatmap with each cell's number written in it.

    Colours: with ``fixed`` = (low, high) one diverging scale for every cell (a correlation
    matrix: -1 to 1); else each row on its own scale, centred at its ``centres`` value (the
    analysis's reference) and stretched to the row's largest distance from it, so methods on
    different scales share one figure; a row without a centre runs from its smallest to its
    largest value.
    """
    cell_w, cell_h = 96, 28
    label_width = min(max((len(_short(str(r))) for r in rows), default=1) * LABEL_CHAR_WIDTH + 14, 360)
    column_height = min(max((len(_short(str(c), 28)) for c in columns), default=1) * LABEL_CHAR_WIDTH * 0.75 + 24, 150)
    top = (26 if title else 6) + column_height
    # the last column's label is written up and to the right of its cell, at 35 degrees
    overhang = min(max((len(_short(str(c), 28)) for c in columns), default=1) * LABEL_CHAR_WIDTH * 0.82, 180)
    width = int(label_width + cell_w * len(columns) + overhang)
    height = int(top + cell_h * len(rows) + 12)
    parts = [
        f'<svg class="figure heatmap" data-figure="heatmap" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} '
        f'{height}" width="{width}" height="{height}" role="img" aria-label="{escape(title)}" '
        'font-family="sans-serif" font-size="12">'
    ]
    if title:
        parts.append(f'<text class="title" x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="14">'
                     f"{escape(title)}</text>")  # fmt: skip
    for j, column in enumerate(columns):
        cx = label_width + (j + 0.5) * cell_w
        parts.append(
            f'<text class="column" x="{cx:.1f}" y="{top - 8}" transform="rotate(-35 {cx:.1f} {top - 8})">'
            f"<title>{escape(str(column))}</title>{escape(_short(str(column), 28))}</text>"
        )
    for i, row in enumerate(rows):
        y = top + i * cell_h
        parts.append(
            f'<text class="label" x="{label_width - 8}" y="{y + cell_h / 2 + 4:.1f}" text-anchor="end">'
            f"<title>{escape(str(row))}</title>{escape(_short(str(row)))}</text>"
        )
        finite = [v for v in values[i] if v is not None and math.isfinite(v)]
        centre = centres[i] if centres is not None else None
        for j, value in enumerate(values[i]):
            x = label_width + j * cell_w
            t: float | None
            if value is None or not math.isfinite(value):
                t = None
            elif fixed is not None:
                mid, half = (fixed[0] + fixed[1]) / 2, (fixed[1] - fixed[0]) / 2
                t = (value - mid) / half
            elif centre is not None and math.isfinite(centre):
                spread = max((abs(v - centre) for v in finite), default=0.0) or 1.0
                t = (value - centre) / spread
            else:
                low, high = min(finite), max(finite)
                t = 0.8 * (value - low) / (high - low) if high > low else 0.0
            colour = "#ffffff" if t is None else _diverging(t)
            ink = "#ffffff" if t is not None and abs(t) > 0.65 else "#111111"  # legible on the dark ends
            text = texts[i][j] if texts is not None else fmt(value)
            parts.append(
                f'<g class="cell" data-row="{escape(str(row))}" data-column="{escape(str(columns[j]))}" '
                f'data-value="{number(value)}"><title>{escape(str(row))} / {escape(str(columns[j]))}: '
                f'{escape(text)}</title><rect x="{x + 1}" y="{y + 1}" width="{cell_w - 2}" height="{cell_h - 2}" '
                f'fill="{colour}" stroke="#dddddd"/><text x="{x + cell_w / 2:.1f}" y="{y + cell_h / 2 + 4:.1f}" '
                f'text-anchor="middle" fill="{ink}">{escape(text)}</text></g>'
            )
    parts.append("</svg>")
    return "".join(parts)
