"""Short views of tables for the terminal: an analysis result's main numbers, and what a table file holds.

`short_view` is what ``assoc analyze`` prints (the full result goes to ``--out``); `overview` is
``assoc show TABLE``: the table's provenance and a summary of its rows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: Columns of a count, most telling first: the first one a result has is its ``n`` in the short view.
COUNT_COLUMNS = (
    "n",
    "n_pairs",
    "n_examples",
    "n_items",
    "n_targets",
    "n_terms",
    "n_replies",
    "n_used",
    "n_scored",
    "n_x",
    "n_raters",
)
#: Columns that say what a row of a result is about, shown when no text column tells its rows apart.
NAMING_COLUMNS = (
    "model",
    "design",
    "label",
    "term",
    "kind",
    "category",
    "bias_type",
    "crows_metric",
    "x",
    "y",
    "a",
    "b",
)
#: Longest text shown in a cell of a short view.
CELL_WIDTH = 28
#: Most label columns a short view shows (those that tell its rows apart, in table order).
MAX_LABELS = 4


def short_view(result: pd.DataFrame) -> pd.DataFrame:
    """A few readable columns of an analysis result: what each row is, its estimate, interval, p and n.

    The label columns are the text columns that differ between rows (at most :data:`MAX_LABELS`,
    cells cut to :data:`CELL_WIDTH` characters); then ``estimate`` (or ``value`` for a result that
    is itself an association table), ``interval`` (``[ci_low, ci_high]``), ``p`` (``p_value``) and
    ``n`` (the first of :data:`COUNT_COLUMNS` the result has). Numbers keep four significant digits.
    """
    import pandas as pd
    from pandas.api import types as ptypes

    if result.empty:
        return result
    main = next((c for c in ("estimate", "value") if c in result.columns), None)
    numbers = {c for c in result.columns if ptypes.is_numeric_dtype(result[c]) or ptypes.is_bool_dtype(result[c])}
    texts = [c for c in result.columns if c not in numbers and not str(c).startswith("raw")]
    labels = [c for c in texts if result[c].astype(str).nunique(dropna=False) > 1][:MAX_LABELS]
    if not labels:  # one row (or rows alike in every text): what it is about
        labels = [c for c in NAMING_COLUMNS if c in texts][:MAX_LABELS]
    view = pd.DataFrame(index=result.index)
    for column in labels:
        view[column] = result[column].map(_cut)
    if main is None:  # no main number: the first few numeric columns
        for column in [c for c in result.columns if c in numbers][:4]:
            view[column] = result[column].map(_number)
        return view.reset_index(drop=True)
    view[main] = result[main].map(_number)
    low, high = _interval_columns(result)
    if low and high and not (result[low].isna() & result[high].isna()).all():
        view["interval"] = [
            "" if pd.isna(a) or pd.isna(b) else f"[{_number(a)}, {_number(b)}]"
            for a, b in zip(result[low], result[high])
        ]
    if "p_value" in result.columns:
        view["p"] = result["p_value"].map(_p)
    count = next((c for c in COUNT_COLUMNS if c in result.columns), None)
    if count is not None:
        view["n"] = result[count].map(lambda v: "" if pd.isna(v) else f"{int(v):,}")
    return view.reset_index(drop=True)


def _interval_columns(result: pd.DataFrame) -> tuple[str | None, str | None]:
    for low, high in (("ci_low", "ci_high"), ("lower", "upper"), ("ci_lower", "ci_upper")):
        if low in result.columns and high in result.columns:
            return low, high
    return None, None


def _cut(value: Any) -> str:
    text = "" if value is None else str(value).replace("\n", " ")
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


def _number(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return _cut(value)
    if number != number:
        return ""
    return f"{number:.4g}"


def _p(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return _cut(value)
    if number != number:
        return ""
    return "<.001" if number < 0.001 else f"{number:.3f}"


# -- assoc show --------------------------------------------------------------------------------------

#: Keys of a run report that count problems: warnings, refusals, unparsed or unanswered replies, ...
_PROBLEM_KEY = re.compile(
    r"warn|refus|unparsed|unanswered|ambiguous|failed|missing|dropped|nan_values|off_count|hedged"
)


def overview(table: pd.DataFrame, name: str = "") -> list[str]:
    """What ``assoc show`` prints: the table's provenance, then its rows by model, measure and design.

    The provenance: what made the table (score, comparison, analysis, concatenation), the scorer
    or analysis with its options, the models (labels where given), the stimuli and versions; the
    run reports' counts of warnings, refusals, unparsed replies and other problems. The rows: how
    many, per model, per measure and per design (or group), and the ``status`` column's counts.
    """
    from assoc.table.provenance import get_provenance

    provenance = get_provenance(table)
    lines = [f"{name or 'table'}: {len(table):,} rows, {len(table.columns)} columns"]
    lines += _made_by(provenance, indent="")
    for column in ("model", "measure", "design", "status"):
        if column in table.columns:
            lines.append(f"rows by {column}: {_counts(table[column])}")
    if "design" not in table.columns and "target_group" in table.columns:
        lines.append(f"rows by target_group: {_counts(table['target_group'])}")
    if "value" in table.columns:
        missing = int(table["value"].isna().sum())
        lines.append(f"values: {len(table) - missing:,} numbers, {missing:,} NaN")
    return lines


def _made_by(provenance: Mapping[str, Any], indent: str) -> list[str]:
    kind = provenance.get("kind")
    if not kind:
        return [f"{indent}provenance: none (a table not written by assoc, or its sidecar is missing or stale)"]
    lines = []
    if kind == "score":
        lines.append(f"{indent}made by: scorer {provenance.get('scorer')} ({_plugin(provenance)})")
        lines.append(f"{indent}models: {_models(provenance)}")
        stimuli = provenance.get("stimuli")
        if stimuli is not None:
            lines.append(f"{indent}stimuli: {stimuli} (sha256 {str(provenance.get('stimuli_sha256', ''))[:12]})")
        lines.append(f"{indent}options: {_options(provenance)}")
        lines.append(f"{indent}run report: {_problems(provenance.get('run'))}")
    elif kind == "analysis":
        lines.append(f"{indent}made by: analysis {provenance.get('analysis')} ({_plugin(provenance)})")
        lines.append(f"{indent}options: {_options(provenance)}")
        warnings = provenance.get("warnings") or []
        lines.append(f"{indent}warnings: {len(warnings)}")
        inner = provenance.get("input")
        if isinstance(inner, Mapping) and inner:
            lines.append(f"{indent}input:")
            lines += _made_by(inner, indent + "  ")
    elif kind in ("compare", "combined"):
        runs = [r for r in provenance.get("runs") or [] if isinstance(r, Mapping)]
        what = "comparison of" if kind == "compare" else "concatenation of"
        lines.append(f"{indent}made by: {what} {len(runs)} tables")
        files = [f for f in provenance.get("files") or [] if isinstance(f, Mapping)]
        for number, run in enumerate(runs):
            where = f" {files[number].get('path')}" if number < len(files) else ""
            lines.append(f"{indent}- input {number + 1}{where}:")
            lines += _made_by(run, indent + "    ")
    else:
        lines.append(f"{indent}made by: {kind}")
    versions = [f"assoc {provenance.get('assoc_version')}"] if provenance.get("assoc_version") else []
    if provenance.get("created"):
        versions.append(f"on {provenance.get('created')}")
    if versions and not indent.strip():
        lines.append(f"{indent}written by: {' '.join(versions)}")
    return lines


def _plugin(provenance: Mapping[str, Any]) -> str:
    return f"plugin {provenance.get('plugin', '?')} {provenance.get('plugin_version', '')}".strip()


def _models(provenance: Mapping[str, Any]) -> str:
    """A score table's models: ``LABEL=SPEC (kind, device) [fingerprint]`` from ``model_names``, else ``models``."""
    fingerprints = provenance.get("model_fingerprints") or {}
    shown = []
    records = provenance.get("model_names")
    for model in records if isinstance(records, list) and records else provenance.get("models") or []:
        if isinstance(model, Mapping):  # {label, spec, fingerprint, ...}
            label, spec = model.get("label"), model.get("spec") or model.get("path")
            text = f"{label}={spec}" if label and label != spec else str(spec)
            how = [str(model[k]) for k in ("kind", "device") if model.get(k)]
            text += f" ({', '.join(how)})" if how else ""
            print_ = model.get("fingerprint")
        else:
            text, print_ = str(model), fingerprints.get(str(model))
        if print_ and print_ != text:
            text += f" [{_cut(str(print_)) if str(print_).startswith('sha256:') else print_}]"
        shown.append(text)
    return ", ".join(shown) or "none"


def _options(provenance: Mapping[str, Any]) -> str:
    options = provenance.get("options") or {}
    return ", ".join(f"{k}={_cut(repr(v))}" for k, v in options.items()) or "none"


def _problems(run: Any) -> str:
    """Counts of the run report's problem keys (warnings, refusals, unparsed, ...): ``none`` when it has none."""
    if not isinstance(run, Mapping):
        return "none recorded"
    counts = []
    for key, value in run.items():
        if not _PROBLEM_KEY.search(str(key)) or key == "incomplete":
            continue
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            count = int(value)
        elif isinstance(value, (list, tuple)):
            count = len(value)
        elif isinstance(value, Mapping) and all(isinstance(v, (int, float)) for v in value.values()):
            count = int(sum(value.values()))
        else:
            continue
        counts.append(f"{key} {count:,}")
    return ", ".join(counts) if counts else "no warnings, refusals or unparsed replies counted"


def _counts(column: pd.Series, limit: int = 6) -> str:
    counts = column.astype(str).value_counts(sort=False)
    shown = [f"{_cut(value) or chr(34) * 2} ({n:,})" for value, n in counts.head(limit).items()]
    more = f", ... ({len(counts)} in all)" if len(counts) > limit else ""
    return ", ".join(shown) + more
