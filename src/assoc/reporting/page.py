"""The HTML page of a study: every section, figure, style and script inline.

Sections (each an ``<section id=...>``): ``headlines`` (each analysis's headline numbers with their
intervals), ``forests`` (per-model forest plots), ``heatmap`` (analysis x model), ``convergence``
(methods compared), ``tables`` (what each association table holds), ``items`` (every input as a
searchable, sortable, paginated table), ``provenance``, ``warnings``, ``citations`` (with BibTeX).
Numbers are shown to 4 significant digits and carried with every digit in ``data-value``
(``data-low``, ``data-high``) attributes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from html import escape
from typing import TYPE_CHECKING, Any

from assoc.analysis.headline import row_labels, varying_labels
from assoc.reporting import svg
from assoc.reporting.assets import CSS, JS
from assoc.reporting.inputs import TABLE, StudyInput
from assoc.reporting.records import citation_texts, model_rows, unique_records

if TYPE_CHECKING:
    import pandas as pd

    from assoc.reporting.contents import Convergence, Study

#: Most rows of one forest plot and of the heatmap; more are cut, with a note.
MAX_FOREST_ROWS = 60
MAX_HEATMAP_ROWS = 80
#: Longest text cell of an item-level table in the page (the whole cell is in the input file).
MAX_CELL_CHARS = 300
#: Result columns that count what a run could not use (BBQ's refusals, CrowS-Pairs' ties, ...): the warnings list them.
COUNT_COLUMNS = ("n_refusal", "n_unparsed", "n_failed", "n_undecidable", "n_missing", "n_ties")
SECTIONS = (
    ("headlines", "Headline numbers"),
    ("forests", "Forest plots"),
    ("heatmap", "Heatmap"),
    ("convergence", "Convergence"),
    ("tables", "Tables"),
    ("items", "Items"),
    ("provenance", "Provenance"),
    ("warnings", "Warnings"),
    ("citations", "Citations"),
)


def render(study: Study) -> str:
    """The whole page of ``study`` as HTML text."""
    from assoc.version import __version__

    counter = _Counter()
    body = [
        _headlines(study),
        _forests(study),
        _heatmap(study),
        _convergence(study),
        _tables(study),
        _items(study, counter),
        _provenance(study),
        _warnings(study),
        _citations(study),
    ]
    models = _models(study)
    inputs = ", ".join(f"{escape(i.name)} ({_kind(i)})" for i in study.inputs)
    nav = "".join(f'<a href="#{key}">{escape(text)}</a>' for key, text in SECTIONS)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="assoc {escape(__version__)}">'
        # an empty icon: a page opened from disk would otherwise ask for /favicon.ico
        '<link rel="icon" href="data:,">'
        f"<title>{escape(study.title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{escape(study.title)}</h1><p>Made with assoc {escape(__version__)} from {len(study.inputs)} "
        f"input(s): {inputs}.</p>"
        + (f"<p>Models: {', '.join(escape(m) for m in models)}.</p>" if models else "")
        + f"<nav>{nav}</nav></header><main>{''.join(body)}</main>"
        f'<footer><p class="note">Self-contained: every style, script and figure is in this file.</p></footer>'
        f"<script>{JS}</script></body></html>\n"
    )


class _Counter:
    """Numbers for the ids of the item tables' data blocks."""

    def __init__(self) -> None:
        self.value = 0

    def next(self) -> int:
        self.value += 1
        return self.value


def _kind(item: StudyInput) -> str:
    if item.kind == TABLE:
        scorers = ", ".join(item.scorers)
        return f"association table of {scorers}" if scorers else "association table"
    return f"{item.analysis} result" if item.analysis else "result"


def _models(study: Study) -> list[str]:
    found: dict[str, None] = {}
    for item in study.inputs:
        if "model" in item.frame.columns:
            for model in item.frame["model"].dropna().astype(str):
                found.setdefault(model, None)
    return list(found)


def _section(key: str, content: Iterable[str], empty: str) -> str:
    title = dict(SECTIONS)[key]
    parts = [p for p in content if p]
    inner = "".join(parts) if parts else f'<p class="note">{escape(empty)}</p>'
    return f'<section id="{key}"><h2>{escape(title)}</h2>{inner}</section>'


# -- headline numbers -----------------------------------------------------------------------------


def _headline_rows(frame: pd.DataFrame) -> str:
    """Rows of a headline table (:func:`assoc.reporting.headlines.headline_table`) as HTML."""
    out = []
    for row in frame.itertuples(index=False):
        interval = (
            f"[{svg.fmt(row.low)}, {svg.fmt(row.high)}]" if math.isfinite(row.low) and math.isfinite(row.high) else "–"
        )
        attributes = " ".join(
            f'data-{name}="{escape(str(value))}"'
            for name, value in (
                ("source", row.source),
                ("analysis", row.analysis),
                ("column", row.column),
                ("model", row.model),
                ("row", row.row),
            )
        )
        out.append(
            f"<tr {attributes}><td>{escape(row.model)}</td><td>{escape(row.row)}</td>"
            f"<td>{escape(row.estimate)}</td>"
            f'<td class="value" data-value="{svg.number(row.value)}">{svg.fmt(row.value)}</td>'
            f'<td class="interval" data-low="{svg.number(row.low)}" data-high="{svg.number(row.high)}">{interval}</td>'
            f'<td class="p" data-value="{svg.number(row.p_value)}">{svg.fmt_p(row.p_value)}</td>'
            f'<td class="n">{escape(row.n)}</td>'
            f'<td class="reference" data-value="{svg.number(row.reference)}">'
            f"{'' if row.reference is None or row.reference != row.reference else svg.fmt(row.reference)}</td></tr>"
        )
    return "".join(out)


def _headline_table(frame: pd.DataFrame) -> str:
    return (
        '<table class="headline sortable"><thead><tr><th>model</th><th>rows</th><th>estimate</th><th>value</th>'
        "<th>interval</th><th>p</th><th>n</th><th>reference</th></tr></thead>"
        f"<tbody>{_headline_rows(frame)}</tbody></table>"
    )


def _headlines(study: Study) -> str:
    from assoc.reporting.headlines import headline_table, reading_of

    parts = []
    for result in study.results:
        frame = headline_table(result.frame, source=result.name, analysis=result.analysis)
        if frame.empty:
            continue
        reading = reading_of(result.frame)
        how = "" if reading.declared else " (read generically: the analysis declares no headline)"
        parts.append(
            f'<div class="result" data-source="{escape(result.name)}"><h3>{escape(result.analysis or "result")}: '
            f"{escape(result.name)}</h3>{_headline_table(frame)}"
            f'<p class="note">Intervals and p-values as the analysis computed them; the interval is on the '
            f"estimate's scale{escape(how)}.</p></div>"
        )
    empty = (
        "No analysis result was given: pass the output of assoc analyze."
        if not study.results
        else "The results given have no estimate column the report can read (an analysis that declares its "
        "estimates, Analysis.headline, or an 'estimate' column); they are in the item tables below."
    )
    return _section("headlines", parts, empty)


# -- forest plots ---------------------------------------------------------------------------------


def _forest_figures(result: StudyInput) -> Iterator[str]:
    """One forest plot per headline estimate and model of an analysis result (every row of that model)."""
    import pandas as pd

    from assoc.reporting.headlines import reading_of

    reading = reading_of(result.frame)
    frame = result.frame
    by_model = (
        [(str(m), frame[frame["model"].astype(str) == str(m)]) for m in dict.fromkeys(frame["model"].astype(str))]
        if "model" in frame.columns
        else [("", frame)]
    )
    candidates = [c for c in reading.headline.labels if c != "model"]
    for estimate in reading.headline.leading:
        if estimate.column not in frame.columns:
            continue
        for model, rows in by_model:
            rows = rows[pd.to_numeric(rows[estimate.column], errors="coerce").notna()]
            if rows.empty:
                continue
            cut = len(rows) > MAX_FOREST_ROWS
            rows = rows.head(MAX_FOREST_ROWS)
            labels = row_labels(rows, varying_labels(rows, candidates))
            values = pd.to_numeric(rows[estimate.column], errors="coerce").to_numpy(dtype=float).tolist()
            interval = estimate.interval(rows)
            low, high = (interval[0].tolist(), interval[1].tolist()) if interval is not None else (None, None)
            title = f"{result.analysis or result.name}: {estimate.name}" + (f" — {model}" if model else "")
            figure = svg.forest(labels, values, low, high, reference=estimate.reference, title=title,
                                axis=estimate.name)  # fmt: skip
            caption = f"{escape(result.name)}, column {escape(estimate.column)}" + (
                f"; the first {MAX_FOREST_ROWS} rows" if cut else ""
            )
            yield (
                f'<figure data-source="{escape(result.name)}" data-column="{escape(estimate.column)}" '
                f'data-model="{escape(model)}">{figure}<figcaption>{caption}'
                + (
                    f"; dashed line: {svg.fmt(estimate.reference)}"
                    if estimate.reference is not None and math.isfinite(estimate.reference)
                    else ""
                )
                + "</figcaption></figure>"
            )


def _forests(study: Study) -> str:
    parts = [figure for result in study.results for figure in _forest_figures(result)]
    return _section("forests", parts, "No analysis result with estimates was given.")


# -- heatmap --------------------------------------------------------------------------------------


def _heatmap(study: Study) -> str:
    headlines = study.headlines()
    headlines = headlines[headlines["model"] != ""]
    if headlines.empty:
        return _section("heatmap", [], "No result with a model column was given.")
    keys = list(dict.fromkeys(zip(headlines["source"], headlines["analysis"], headlines["estimate"], headlines["row"])))
    cut = len(keys) > MAX_HEATMAP_ROWS
    keys = keys[:MAX_HEATMAP_ROWS]
    models = list(dict.fromkeys(headlines["model"]))
    cells = {
        (r.source, r.analysis, r.estimate, r.row, r.model): (r.value, r.reference)
        for r in headlines.itertuples(index=False)
    }
    rows, values, centres = [], [], []
    for key in keys:
        source, analysis, estimate, row = key
        rows.append(" · ".join(p for p in (analysis or source, estimate, row) if p))
        values.append([cells.get((*key, m), (float("nan"), None))[0] for m in models])
        references = [cells[(*key, m)][1] for m in models if (*key, m) in cells]
        centres.append(references[0] if references else None)
    figure = svg.heatmap(rows, models, values, centres=centres, title="Headline estimates by model")
    note = (
        "Each row is coloured on its own scale, centred at the analysis's reference value (white), so methods "
        "and benchmarks on different scales share one figure; rows without a reference run from their smallest "
        "to their largest value." + (f" Only the first {MAX_HEATMAP_ROWS} rows are shown." if cut else "")
    )
    return _section("heatmap", [f"<figure>{figure}<figcaption>{escape(note)}</figcaption></figure>"], "")


# -- convergence ----------------------------------------------------------------------------------


def _convergence_matrix(result: pd.DataFrame) -> tuple[list[str], list[list[float]], list[list[str]]]:
    """Methods (and criteria), their correlations and the cell texts (r and N) of a convergence result."""
    pairs = result[result["kind"].isin(["correlation", "criterion"])] if "kind" in result.columns else result[:0]
    names = list(dict.fromkeys([*pairs["x"].astype(str), *pairs["y"].astype(str)]))
    index = {n: i for i, n in enumerate(names)}
    values = [[1.0 if i == j else float("nan") for j in range(len(names))] for i in range(len(names))]
    texts = [["1" if i == j else "" for j in range(len(names))] for i in range(len(names))]
    for row in pairs.itertuples(index=False):
        i, j = index[str(row.x)], index[str(row.y)]
        value = float(row.estimate)
        n = "" if row.n != row.n else f" (N {int(row.n)})"
        values[i][j] = values[j][i] = value
        texts[i][j] = texts[j][i] = svg.fmt(value) + n
    return names, values, texts


def _convergence_block(item: Convergence) -> str:
    from assoc.reporting.headlines import headline_table

    result = item.result
    how = (
        f"run by this report with its default options on {item.source}"
        if item.ran
        else (f"given ({result.name}), for {item.source}" if item.source else f"given ({result.name})")
    )
    parts = [f'<div class="convergence" data-source="{escape(result.name)}"><h3>Methods compared: {escape(how)}</h3>']
    names, values, texts = _convergence_matrix(result.frame)
    if names:
        figure = svg.heatmap(names, names, values, texts=texts, fixed=(-1.0, 1.0), title="Correlations of methods")
        parts.append(
            f"<figure>{figure}<figcaption>Each pair of methods' correlation over their shared targets (N targets); "
            "blue negative, red positive, on -1 to 1.</figcaption></figure>"
        )
    frame = headline_table(result.frame, source=result.name, analysis="convergence")
    if not frame.empty:
        parts.append(_headline_table(frame))
    if item.scores is not None and len(item.scores):
        parts.append(_score_figures(item.scores))
    parts.append("</div>")
    return "".join(parts)


def _score_figures(scores: pd.DataFrame) -> str:
    """Each method's score per target on the contrast (convergence ``output="scores"``), one forest plot each."""
    import pandas as pd

    figures = []
    for method, rows in scores.groupby("method", sort=False):
        rows = rows[pd.to_numeric(rows["raw_score"], errors="coerce").notna()].head(MAX_FOREST_ROWS)
        contrast = str(rows["attribute_group"].iloc[0]) if len(rows) else ""
        rule = ", ".join(dict.fromkeys(rows["rule"].astype(str))) if "rule" in rows else ""
        figure = svg.forest(
            rows["target"].astype(str).tolist(),
            pd.to_numeric(rows["raw_score"], errors="coerce").tolist(),
            reference=0.0,
            title=f"{method}: score per target",
            axis=f"{contrast} (rule {rule})" if rule else contrast,
        )
        figures.append(
            f'<figure data-method="{escape(str(method))}">{figure}<figcaption>The score of each target on the '
            f"contrast {escape(contrast)} on the method's own scale, before z-scoring (positive: closer to "
            f"{escape(contrast.split(' - ')[0])}).</figcaption></figure>"
        )
    return "".join(figures)


def _convergence(study: Study) -> str:
    parts = [_convergence_block(item) for item in study.convergence]
    notes = [n for n in study.notes if n.startswith("convergence")]
    parts += [f'<p class="note warning">{escape(n)}</p>' for n in notes]
    return _section(
        "convergence",
        parts,
        "No convergence result was given and no table holds several methods (assoc compare runs several).",
    )


# -- what the tables hold -------------------------------------------------------------------------


def _tables(study: Study) -> str:
    import pandas as pd

    parts = []
    for table in study.tables:
        frame = table.frame
        keys = [c for c in ("scorer", "model", "measure") if c in frame.columns]
        values = pd.to_numeric(frame["value"], errors="coerce") if "value" in frame.columns else None
        if not keys or values is None:
            continue
        grouped = values.groupby([frame[k].astype(str) for k in keys], sort=False)
        stats = grouped.agg(["size", "count", "mean", "std", "min", "max"]).reset_index()
        head = "".join(f"<th>{escape(k)}</th>" for k in keys) + (
            "<th>rows</th><th>missing</th><th>mean</th><th>SD</th><th>min</th><th>max</th>"
        )
        body = []
        for row in stats.itertuples(index=False):
            cells = "".join(f"<td>{escape(str(getattr(row, k)))}</td>" for k in keys)
            size, count = int(row.size), int(row.count)
            cells += f'<td class="num">{size}</td><td class="num">{size - count}</td>'
            cells += "".join(
                f'<td class="num" data-value="{svg.number(v)}">{svg.fmt(v)}</td>'
                for v in (row.mean, row.std, row.min, row.max)
            )
            body.append(f"<tr>{cells}</tr>")
        parts.append(
            f"<h3>{escape(table.name)}</h3>"
            f'<table class="summary sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        )
    return _section("tables", parts, "No association table was given.")


# -- item-level tables ----------------------------------------------------------------------------


def _cell(value: Any) -> Any:
    """A cell as JSON: numbers as numbers (missing: null), text cut at :data:`MAX_CELL_CHARS`."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    text = str(value)
    if text in ("nan", "<NA>", "NaT", "None"):
        return None
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def data_block(frame: pd.DataFrame, max_rows: int) -> tuple[dict[str, Any], int, bool]:
    """An item table as a JSON-ready dict (columns, rows), the rows it left out, whether it cut a cell."""
    shown = frame.head(max_rows)
    columns = [c for c in shown.columns if not shown[c].isna().all()] if len(shown) else list(shown.columns)
    rows = [[_cell(v) for v in row] for row in shown[columns].itertuples(index=False, name=None)]
    cut = any(isinstance(v, str) and v.endswith("…") and len(v) == MAX_CELL_CHARS for row in rows for v in row)
    return {"columns": [str(c) for c in columns], "rows": rows}, len(frame) - len(shown), cut


def _items(study: Study, counter: _Counter) -> str:
    parts = []
    shown = study.shown
    for item in shown:
        data, left_out, cut = data_block(item.frame, study.max_rows)
        number = counter.next()
        ident = f"assoc-data-{number}"
        # "<" written as \u003c: no text of a cell can close the script element or open a comment in it
        payload = json.dumps(data, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c")
        head = "".join(f"<th>{escape(c)}</th>" for c in data["columns"])
        notes = []
        if left_out:
            notes.append(
                f"The first {study.max_rows:,} of {len(item.frame):,} rows are here; the whole table is the input "
                f"{item.name} (max_rows)."
            )
        if cut:
            notes.append(f"Text cells longer than {MAX_CELL_CHARS} characters are cut here (…).")
        parts.append(
            f'<h3>{escape(item.name)} <span class="note">({escape(_kind(item))})</span></h3>'
            + "".join(f'<p class="note">{escape(n)}</p>' for n in notes)
            + f'<div class="datatable" data-source="{ident}" data-name="{escape(item.name)}" data-page-size="25">'
            f'<div class="controls"><input type="search" placeholder="Search every column" '
            f'aria-label="Search {escape(item.name)}"><button type="button" class="prev">previous</button>'
            f'<button type="button" class="next">next</button><span class="info"></span></div>'
            f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody></tbody></table></div></div>'
            f'<script type="application/json" id="{ident}">{payload}</script>'
        )
    return _section("items", parts, "No input.")


# -- provenance -----------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    """A provenance value as text: a mapping as ``key = value; ...``, other values as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "; ".join(f"{k} = {v if isinstance(v, str) else json.dumps(v, default=str)}" for k, v in value.items())
    return json.dumps(value, ensure_ascii=False, default=str)


def _kv(pairs: Iterable[tuple[str, Any]]) -> str:
    items = []
    for key, value in pairs:
        if value in (None, "", [], {}):
            continue
        shown = _shown(value)
        items.append(f"<dt>{escape(str(key))}</dt><dd>{escape(shown)}</dd>")
    return f'<dl class="kv">{"".join(items)}</dl>' if items else ""


def _record_block(record: Mapping[str, Any]) -> str:
    parts = [f"<h4>{escape(_what(record))}</h4>"]
    models = model_rows(record)
    if models:
        head = "".join(f"<th>{h}</th>" for h in ("model", "spec", "path", "kind", "fingerprint", "device"))
        body = "".join(
            '<tr class="model">'
            + "".join(f"<td>{escape(m[k])}</td>" for k in ("label", "spec", "path", "kind", "fingerprint", "device"))
            + "</tr>"
            for m in models
        )
        parts.append(f'<table class="models"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
    meta = record.get("stimuli_meta") if isinstance(record.get("stimuli_meta"), Mapping) else {}
    parts.append(
        _kv(
            [
                ("stimuli", record.get("stimuli")),
                ("stimuli sha256", record.get("stimuli_sha256")),
                *((f"stimuli {k}", v) for k, v in (meta or {}).items()),
                ("options", record.get("options")),
                ("plugin", f"{record.get('plugin', '')} {record.get('plugin_version', '')}".strip()),
                ("executor", record.get("executor")),
                ("assoc", record.get("assoc_version")),
                ("python", record.get("python")),
                ("platform", record.get("platform")),
                ("libraries", record.get("libraries")),
                ("created", record.get("created")),
            ]
        )
    )
    return "".join(parts)


def _what(record: Mapping[str, Any]) -> str:
    kind = record.get("kind")
    if kind == "score":
        return f"scorer {record.get('scorer')}"
    if kind == "analysis":
        return f"analysis {record.get('analysis')}"
    if kind == "compare":
        return "comparison (assoc compare)"
    return "table without assoc provenance"


def _provenance(study: Study) -> str:
    blocks: dict[str, list[str]] = {}
    items: dict[str, StudyInput] = {}
    for item, record, first in unique_records(study.shown):
        items[item.name] = item
        blocks.setdefault(item.name, []).append(
            f'<p class="note">{escape(_what(record))}: the same run as under {escape(first)}.</p>'
            if first
            else _record_block(record)
        )
    parts = []
    for item in study.shown:
        shown = "".join(blocks.get(item.name, [])) or '<p class="note">No provenance recorded.</p>'
        raw = json.dumps(item.provenance, indent=1, ensure_ascii=False, default=str)
        parts.append(
            f'<details class="provenance" data-source="{escape(item.name)}" open><summary>{escape(item.name)} '
            f"({escape(_kind(item))})</summary>{shown}<details><summary>the whole record (JSON)</summary>"
            f"<pre>{escape(raw)}</pre></details></details>"
        )
    return _section("provenance", parts, "No input.")


# -- warnings -------------------------------------------------------------------------------------


def warning_lines(study: Study) -> list[str]:
    """Every warning, run report and count of unusable answers of the study, one line each."""
    import pandas as pd

    from assoc.reporting.headlines import reading_of

    lines = list(study.notes)
    for item, record, first in unique_records(study.shown):
        if first:
            continue
        who = record.get("analysis") or record.get("scorer") or "run"
        for text in record.get("warnings") or []:
            lines.append(f"{item.name}: {who}: {text}")
        run = record.get("run")
        if isinstance(run, Mapping) and run:
            models = ", ".join(m["label"] for m in model_rows(record))
            lines.append(f"{item.name}: run report of {who}" + (f" on {models}" if models else "") + f": {_shown(run)}")
    for item in study.inputs:
        counts = [c for c in COUNT_COLUMNS if c in item.frame.columns and item.kind != TABLE]
        if counts:
            # the headline rows only: CrowS-Pairs' per-bias-type rows count the pairs of its "all" row again
            selected = reading_of(item.frame).headline.select(item.frame)
            keys = [selected["model"].astype(str)] if "model" in selected.columns else []
            frame = selected[counts].apply(pd.to_numeric, errors="coerce")
            totals = frame.groupby(keys, sort=False).sum() if keys else frame.sum().to_frame().T
            for model, row in totals.iterrows():
                if not any(row[c] > 0 for c in counts):
                    continue
                shown = ", ".join(f"{c} = {int(row[c])}" for c in counts if row[c] == row[c])
                lines.append(f"{item.name}: {'model ' + str(model) + ': ' if keys else ''}{shown}")
    return lines


def _warnings(study: Study) -> str:
    lines = warning_lines(study)
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return _section(
        "warnings",
        [f'<ul class="warnings">{items}</ul>'] if lines else [],
        "No warning, refusal or unparsed reply was recorded.",
    )


# -- citations ------------------------------------------------------------------------------------


def _citations(study: Study) -> str:
    from assoc.reporting.bibtex import bibliography

    texts = citation_texts(study.shown)
    if not texts:
        return _section("citations", [], "No citation was recorded (the inputs carry no assoc provenance).")
    entries = bibliography(texts)
    listed = "".join(f"<li>{escape(t)}</li>" for t in texts)
    bib = "\n\n".join(e.bibtex() for e in entries)
    return _section(
        "citations",
        [
            f'<ol class="citations">{listed}</ol><h3>BibTeX</h3>'
            '<p class="note">Derived from the texts above: author, year, title, DOI, arXiv id and web address where '
            "the text gives them, the rest as a note; every entry is @misc (the texts do not say what kind of "
            "work each is).</p>"
            f'<pre class="bibtex">{escape(bib)}</pre>'
        ],
        "",
    )
