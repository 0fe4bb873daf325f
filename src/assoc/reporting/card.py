"""The Markdown bias card: a study's headline numbers as a table for a model card.

One row per analysis, estimate and headline row, one column per model, each cell
``estimate [low, high], n = N`` (the interval on the estimate's scale, as the analysis computed it);
then the convergence of methods, the models with their fingerprints, and the references.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.reporting.svg import fmt, fmt_p

if TYPE_CHECKING:
    from assoc.reporting.contents import Study


def _cell(value: float, low: float, high: float, n: str) -> str:
    if value != value:
        return "–"
    text = fmt(value)
    if low == low and high == high:
        text += f" [{fmt(low)}, {fmt(high)}]"
    if n:
        text += f", n = {n}" if "=" not in n else f", {n}"
    return text


def _escape(text: str) -> str:
    """Text for a Markdown table cell: pipes escaped, line breaks as spaces."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def bias_card(study: Study) -> str:
    """The bias card of ``study`` as Markdown text."""
    from assoc.reporting.bibtex import bibliography
    from assoc.reporting.headlines import headline_table
    from assoc.reporting.records import citation_texts, model_rows, records
    from assoc.version import __version__

    lines = [f"# Bias card: {_escape(study.title)}", ""]
    headlines = study.headlines()
    if len(headlines):
        models = list(dict.fromkeys(headlines["model"]))
        shown_models = [m or "(all models)" for m in models]
        lines += [
            "Each cell: the estimate [its interval, as the analysis computed it], and the count it rests on.",
            "",
            "| method or benchmark | estimate | rows | " + " | ".join(_escape(m) for m in shown_models) + " |",
            "|---|---|---|" + "---|" * len(models),
        ]
        keys = dict.fromkeys(zip(headlines["source"], headlines["analysis"], headlines["estimate"], headlines["row"]))
        cells = {(r.source, r.analysis, r.estimate, r.row, r.model): r for r in headlines.itertuples(index=False)}
        for source, analysis, estimate, row in keys:
            values = []
            for model in models:
                found = cells.get((source, analysis, estimate, row, model))
                values.append("–" if found is None else _cell(found.value, found.low, found.high, found.n))
            lines.append(
                f"| {_escape(analysis or source)} | {_escape(estimate)} | {_escape(row)} | "
                + " | ".join(_escape(v) for v in values)
                + " |"
            )
        lines.append("")
    else:
        lines += ["No analysis result was given: the card has no headline numbers.", ""]
    for item in study.convergence:
        frame = headline_table(item.result.frame, source=item.result.name, analysis="convergence")
        if frame.empty:
            continue
        lines += [
            f"## Convergence of methods ({_escape(item.source or item.result.name)})",
            "",
            "| what | r or ICC [interval] | p | n |",
            "|---|---|---|---|",
        ]
        for r in frame.itertuples(index=False):
            lines.append(f"| {_escape(r.row)} | {_escape(_cell(r.value, r.low, r.high, ''))} | {fmt_p(r.p_value)} | "
                         f"{_escape(r.n)} |")  # fmt: skip
        lines.append("")
    models_seen: dict[str, dict[str, str]] = {}
    for given in study.inputs:
        for record in records(given.provenance):
            for model in model_rows(record):
                models_seen.setdefault(model["label"], model)
    if models_seen:
        lines += ["## Models", ""]
        for label, model in models_seen.items():
            extra = ", ".join(
                f"{k} {model[k]}" for k in ("spec", "kind", "device") if model[k] and (k != "spec" or model[k] != label)
            )
            fingerprint = f" — `{model['fingerprint']}`" if model["fingerprint"] else ""
            lines.append(f"* {_escape(label)}{f' ({extra})' if extra else ''}{fingerprint}")
        lines.append("")
    texts = citation_texts(study.shown)
    if texts:
        lines += ["## References", ""]
        lines += [f"* {t}" for t in texts]
        lines += ["", "```bibtex", "\n\n".join(e.bibtex() for e in bibliography(texts)), "```", ""]
    lines.append(f"Made with assoc {__version__} (`assoc report`) from: {', '.join(i.name for i in study.inputs)}.")
    return "\n".join(lines) + "\n"
