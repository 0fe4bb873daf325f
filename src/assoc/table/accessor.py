"""The ``DataFrame.assoc`` accessor: what produced a table, a printable summary, and what to cite.

Every table that :func:`assoc.score`, :func:`assoc.compare`, :func:`assoc.analyze` or
:func:`assoc.read_table` returns carries its provenance in ``DataFrame.attrs``; the accessor
makes it discoverable::

    table = assoc.score("weat", "caliskan:weat1")
    table.assoc.provenance      # the record: scorer, models and their fingerprints, options, versions
    print(table.assoc.summary())  # what statsmodels users expect of a fitted result
    print(table.assoc.cite())     # the papers behind the scorer and every analysis applied

The accessor is registered once, by ``import assoc``: at once when pandas is already imported,
else the moment pandas finishes importing (:func:`assoc.infra.importhooks.call_after_import`).
``import assoc`` itself imports neither pandas nor this module, and no other code registers anything.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

ACCESSOR = "assoc"
#: Columns an analysis result shows in its summary, when present (after its grouping columns).
_RESULT_COLUMNS = ("estimate", "se", "ci_low", "ci_high", "p_value", "n", "n_x", "n_y", "p_method")
_registered = False


def register() -> None:
    """Register ``DataFrame.assoc`` with pandas (idempotent; imports pandas)."""
    global _registered
    if _registered:
        return
    import pandas as pd

    pd.api.extensions.register_dataframe_accessor(ACCESSOR)(AssocAccessor)
    _registered = True


@dataclass
class Citations:
    """The references to cite for a table: the scorer's, then each analysis applied, in order."""

    entries: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __str__(self) -> str:
        if not self.entries:
            return "(no citation recorded: the table has no assoc provenance)"
        return "\n".join(f"[{i}] {entry}" for i, entry in enumerate(self.entries, 1))

    __repr__ = __str__


@dataclass
class Summary:
    """A printable report of a table (``print(table.assoc.summary())``); ``str()`` gives the text."""

    text: str

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__

    def as_text(self) -> str:
        """The report as plain text."""
        return self.text


_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)", re.IGNORECASE)


def citation_key(text: str) -> str:
    """What identifies the paper a citation names: its DOI (lower case), else its letters and digits (lower case).

    DOIs are case-insensitive (DOI Handbook, section 2.4); a DOI's closing punctuation (``.``, ``)``) is the
    sentence's, not the DOI's.
    """
    doi = _DOI.search(text)
    if doi is not None:
        return "doi:" + doi.group(1).rstrip(".,;)]").lower()
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def citations(provenance: Mapping[str, Any]) -> list[str]:
    """Every citation in a provenance record, innermost first, without repeats.

    Per record: its ``citation`` (the scorer's or the analysis's paper), then the citation of the
    stimuli it measured (``stimuli_meta["citation"]``); inputs and compared runs come before the
    record that used them. One paper cited in two formats (``doi:10.1/x`` and
    ``https://doi.org/10.1/x``, or the same text in other spacing or case) is listed once, as
    first met (:func:`citation_key`).
    """
    found: list[str] = []
    keys: set[str] = set()

    def walk(record: Any) -> None:
        if isinstance(record, Mapping):
            for key in ("input", "runs"):
                if key in record:
                    walk(record[key])
            stimuli_meta = record.get("stimuli_meta")
            stimuli_cited = stimuli_meta.get("citation") if isinstance(stimuli_meta, Mapping) else None
            # The method's paper, then the source of the stimuli it measured (one text or a list).
            for text in [
                record.get("citation"),
                *(stimuli_cited if isinstance(stimuli_cited, list) else [stimuli_cited]),
            ]:
                if isinstance(text, str) and text.strip() and citation_key(text) not in keys:
                    keys.add(citation_key(text))
                    found.append(text.strip())
        elif isinstance(record, list):
            for item in record:
                walk(item)

    walk(provenance)
    return found


class AssocAccessor:
    """``table.assoc``: provenance, summary and citations of a table produced by assoc."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    @property
    def provenance(self) -> dict[str, Any]:
        """The provenance record (a deep copy; empty when the table did not come from assoc)."""
        import copy

        from assoc.table.provenance import get_provenance

        return copy.deepcopy(get_provenance(self._frame))

    def cite(self) -> Citations:
        """The references to cite: the scorer's, then each analysis's that produced the table."""
        return Citations(citations(self.provenance))

    def summary(self, max_rows: int = 30) -> Summary:
        """A report: what produced the table, then its numbers.

        An association table shows its values per model and measure (n, missing, mean, SD,
        min, max); an analysis result shows its estimates with intervals and p-values, like a
        fitted model's summary in statsmodels.
        """
        provenance = self.provenance
        lines = _header(self._frame, provenance)
        body = (
            _values_by_model(self._frame) if _is_association_table(self._frame) else _estimates(self._frame, max_rows)
        )
        width = max([len(line) for line in lines + body.splitlines()] + [40])
        rule = "=" * min(width, 120)
        parts = [rule, *lines, rule.replace("=", "-"), body, rule]
        warnings = provenance.get("warnings") or []
        if warnings:
            parts += [
                "Warnings:",
                *(textwrap.fill(str(w), 116, initial_indent="  - ", subsequent_indent="    ") for w in warnings),
            ]
        return Summary("\n".join(parts))


def _is_association_table(frame: pd.DataFrame) -> bool:
    from assoc.table.schema import COLUMNS

    return all(column in frame.columns for column in COLUMNS)


def _header(frame: pd.DataFrame, provenance: Mapping[str, Any]) -> list[str]:
    kind = provenance.get("kind", "")
    rows = f"{len(frame):,} rows"
    if kind == "score":
        title = f"assoc association table: scorer {provenance.get('scorer')!r}, {rows}"
    elif kind == "analysis":
        title = f"assoc analysis result: {provenance.get('analysis')!r}, {rows}"
    elif kind == "compare":
        scorers = ", ".join(str(run.get("scorer")) for run in provenance.get("runs", []))
        title = f"assoc comparison of scorers {scorers}: {rows}"
    elif kind == "combined":
        title = f"assoc tables combined ({len(provenance.get('runs') or [])} inputs): {rows}"
    else:
        title = f"table without assoc provenance: {rows}"
    lines = [title]

    def add(label: str, value: Any) -> None:
        if value not in (None, "", [], {}):
            lines.append(f"{label + ':':<13}{value}")

    models = provenance.get("models") or []
    fingerprints = provenance.get("model_fingerprints") or {}
    add("Models", ", ".join(f"{m} [{fingerprints[m]}]" if fingerprints.get(m, m) != m else str(m) for m in models))
    stimuli = provenance.get("stimuli")
    if stimuli is not None or provenance.get("stimuli_sha256"):
        add("Stimuli", f"{stimuli or '(unnamed)'} (sha256 {str(provenance.get('stimuli_sha256', ''))[:12]})")
    options = provenance.get("options") or {}
    add("Options", ", ".join(f"{k}={v!r}" for k, v in options.items()))
    if kind == "compare":
        add("Compared", _compared(provenance))
    if kind == "combined":
        add("Inputs", "; ".join(str(f.get("path")) for f in provenance.get("files") or [] if isinstance(f, Mapping)))
        add("Runs", _compared(provenance))
    inner = provenance.get("input") or {}
    if inner.get("kind") == "compare":
        add("Input", f"comparison of {_compared(inner)}")
    elif inner:
        add(
            "Input",
            f"{inner.get('kind', '')} by {inner.get('scorer') or inner.get('analysis') or '?'}"
            f" on {', '.join(map(str, inner.get('models') or [])) or '?'}",
        )
    plugin = provenance.get("plugin")
    if plugin:
        add("Plugin", f"{plugin} {provenance.get('plugin_version', '')}".strip())
    versions = {
        "assoc": provenance.get("assoc_version"),
        "python": provenance.get("python"),
        **(provenance.get("libraries") or {}),
    }
    add("Versions", ", ".join(f"{k} {v}" for k, v in versions.items() if v))
    add("Created", provenance.get("created"))
    return [textwrap.fill(line, 118, subsequent_indent=" " * 13, break_on_hyphens=False) for line in lines]


def _compared(provenance: Mapping[str, Any]) -> str:
    """The runs of a comparison (``assoc.compare``): each scorer and its models (options: ``.assoc.provenance``)."""
    described = []
    for run in provenance.get("runs") or []:
        if isinstance(run, Mapping):
            models = ", ".join(map(str, run.get("models") or [])) or "(no model)"
            described.append(f"{run.get('scorer')} on {models}")
    return "; ".join(described)


def _values_by_model(frame: pd.DataFrame) -> str:
    grouped = frame.groupby(["model", "measure"], sort=False)["value"]
    stats = grouped.agg(n="size", missing=lambda v: int(v.isna().sum()), mean="mean", sd="std", min="min", max="max")
    return "value by model and measure:\n" + stats.to_string(float_format=lambda v: f"{v:.4g}")


def _estimates(frame: pd.DataFrame, max_rows: int) -> str:
    from pandas.api import types as ptypes

    numbers = [c for c in _RESULT_COLUMNS if c in frame.columns]
    if not numbers:
        numbers = [c for c in frame.columns if ptypes.is_numeric_dtype(frame[c])][:6]
    keys = [
        c
        for c in frame.columns
        if c not in numbers and not ptypes.is_numeric_dtype(frame[c]) and frame[c].nunique(dropna=False) > 1
    ][:5]
    shown = frame[keys + numbers]
    text = shown.head(max_rows).to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="")
    if len(frame) > max_rows:
        text += f"\n... {len(frame) - max_rows} more rows (summary(max_rows=...))"
    return text
