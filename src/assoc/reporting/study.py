"""``assoc.report``: one self-contained HTML file for a study, and its Markdown bias card.

The inputs (association tables and analysis results) are read and classified
(`assoc.reporting.inputs`); association tables that hold several methods
(an ``assoc compare`` table, or tables of several scorers on one stimuli file) get the
``convergence`` analysis when no convergence result is given for them; every result is read through
its analysis's [`Headline`][assoc.analysis.headline.Headline]
(`assoc.reporting.headlines`).
The page (`assoc.reporting.page`) and the card (`assoc.reporting.card`)
are drawn from the same [`Study`][assoc.reporting.study.Study].
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.errors import AssocError, OptionError
from assoc.reporting.contents import MAX_ITEM_ROWS, Convergence, Study
from assoc.reporting.inputs import RESULT, TABLE, StudyInput, load_inputs, study_groups

if TYPE_CHECKING:
    import pandas as pd

HTML_SUFFIXES = (".html", ".htm")
CARD_SUFFIXES = (".md", ".markdown")


@dataclass
class Report:
    """A study's report: the HTML page and the Markdown bias card, as text.

    ``save(path)`` writes the page, ``save_card(path)`` the card (atomically); ``headlines`` is the
    table both are drawn from.
    """

    html: str
    card: str
    study: Study

    @property
    def headlines(self) -> pd.DataFrame:
        """The headline numbers (one row per analysis, estimate, model and headline row)."""
        return self.study.headlines()

    def save(self, path: str | Path) -> Path:
        """Write the HTML page to ``path`` (atomically)."""
        from assoc.infra.io import atomic_write

        with atomic_write(path, encoding="utf-8") as handle:
            handle.write(self.html)
        return Path(path)

    def save_card(self, path: str | Path) -> Path:
        """Write the Markdown bias card to ``path`` (atomically)."""
        from assoc.infra.io import atomic_write

        with atomic_write(path, encoding="utf-8") as handle:
            handle.write(self.card)
        return Path(path)


def report(
    inputs: Any,
    out: str | Path | None = None,
    *,
    title: str | None = None,
    card: str | Path | None = None,
    max_rows: int = MAX_ITEM_ROWS,
    convergence: bool = True,
) -> Report:
    """One self-contained HTML report of a study, and its Markdown bias card.

    Parameters
    ----------
    inputs:
        Association tables and analysis results: paths of files written by ``assoc score``,
        ``assoc compare`` or ``assoc analyze`` (their provenance is read with them), DataFrames, a
        list of them, or a mapping name -> path or DataFrame (the names head the report's sections).
    out:
        Write the page there (``.html``); checked before any work.
    title:
        The page's title (default: ``"assoc study"`` and the stimuli's names).
    card:
        Also write the Markdown bias card there (``.md``).
    max_rows:
        Rows of each item-level table written into the page (the rest is counted in a note).
    convergence:
        Run the ``convergence`` analysis on tables that hold several methods when no convergence
        result is given for them (``docs/compare.md``).

    Returns
    -------
    Report
        ``html`` (the page: scripts, styles and figures inline, no request leaves it), ``card``
        (Markdown), ``headlines`` (the numbers both show), ``save``/``save_card``.
    """
    from assoc.infra.io import check_output_file
    from assoc.reporting.card import bias_card
    from assoc.reporting.page import render

    for path, what, suffixes in ((out, "report", HTML_SUFFIXES), (card, "bias card", CARD_SUFFIXES)):
        if path is not None:
            if Path(path).suffix.lower() not in suffixes:
                raise OptionError(f"{what} {str(path)!r}: the file name must end in {' or '.join(suffixes)}")
            check_output_file(path, what)
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise OptionError(f"max_rows must be a positive integer, got {max_rows!r}")
    study = build_study(load_inputs(inputs), title=title, run_convergence=convergence, max_rows=max_rows)
    made = Report(render(study), bias_card(study), study)
    if out is not None:
        made.save(out)
    if card is not None:
        made.save_card(card)
    return made


def build_study(
    inputs: list[StudyInput], *, title: str | None = None, run_convergence: bool = True, max_rows: int = MAX_ITEM_ROWS
) -> Study:
    """The `Study` of loaded inputs, with the convergence found or run for each table of several methods."""
    study = Study(title or _default_title(inputs), list(inputs), max_rows=max_rows)
    given = [i for i in inputs if i.kind == RESULT and i.analysis == "convergence"]
    used: set[int] = set()
    for group in study_groups([i for i in inputs if i.kind == TABLE]):
        match = next(
            (
                g
                for g in given
                if id(g) not in used and _input_sha(g.provenance) == group.provenance.get("stimuli_sha256")
            ),
            None,
        )
        if match is not None:
            used.add(id(match))
            options = {k: v for k, v in (match.provenance.get("options") or {}).items() if k != "output"}
            scores = _analyze(study, "convergence", group.frame, {**options, "output": "scores"}, group.name)
            study.convergence.append(Convergence(match, scores, group.name, ran=False))
        elif run_convergence:
            result = _analyze(study, "convergence", group.frame, {}, group.name)
            if result is not None:
                scores = _analyze(study, "convergence", group.frame, {"output": "scores"}, group.name)
                made = StudyInput(
                    f"convergence of {group.name}",
                    result,
                    RESULT,
                    dict(result.attrs.get("assoc", {})),
                    "convergence",
                    derived=True,
                )
                study.convergence.append(Convergence(made, scores, group.name, ran=True))
    for result in given:
        if id(result) not in used:
            study.convergence.append(Convergence(result, None, "", ran=False))
    return study


def _analyze(study: Study, name: str, table: pd.DataFrame, options: dict[str, Any], source: str) -> Any:
    """Run an analysis for the report; a refusal becomes a note of the report (the report still comes)."""
    from assoc import api

    try:
        with warnings.catch_warnings(record=True):  # kept in the result's provenance, shown in Warnings
            warnings.simplefilter("always")
            return api.analyze(name, table, **options)
    except AssocError as exc:
        study.notes.append(f"{name} was not run on {source}: {exc}")
        return None


def _input_sha(provenance: dict[str, Any]) -> Any:
    inner = provenance.get("input")
    return inner.get("stimuli_sha256") if isinstance(inner, dict) else None


def _default_title(inputs: list[StudyInput]) -> str:
    names: list[str] = []
    for item in inputs:
        for record in (item.provenance, item.provenance.get("input") or {}):
            name = record.get("stimuli") if isinstance(record, dict) else None
            if isinstance(name, str) and name and name not in names:
                names.append(name)
    return "assoc study" + (f": {', '.join(names[:4])}" if names else "")
