"""The analysis interface: an association table in, a tidy table of estimates out."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.analysis.headline import Headline
from assoc.components.base import Component
from assoc.errors import UnfitTableError

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Requirement:
    """What tables an analysis can read, declared on the class and checked by the core before ``run``.

    Every field is optional; an empty [`Requirement`][assoc.analysis.Requirement] accepts any table that passes the
    association-table contract. [`check_requirement`][assoc.api.check_requirement] applies it in one place (it is called
    by [`assoc.analyze`][assoc.analyze]), so each analysis refuses a table it cannot mean anything on with one line
    saying what it needs, what it got and what to run instead.

    Parameters
    ----------
    needs:
        What the analysis reads, in words (``"an fmat table (measure log_prob)"``); starts the message.
    scorers:
        The scorers whose tables it reads. A table from another *installed* scorer is refused; a
        table whose ``scorer`` names no installed scorer (a table built by hand, human data, an
        analysis' output) is judged by the other fields only.
    measures:
        The values of ``measure`` it reads (every row must have one of them), or ``None`` for any.
    columns:
        Columns the table must have.
    roles:
        Role columns that must hold a word (not ``""``) in some row, e.g. ``attribute_group``.
    at_least:
        Minimum numbers of distinct values: ``{"model": 2}``. A key that names one of the
        analysis' list options (``"raters"``) counts the combinations of the columns that option
        holds, so the requirement follows the user's choice.
    instead:
        What to run instead, shown at the end of the message (``"score a second model"``).
    among_others:
        The analysis picks the rows of its ``scorers`` out of a table that holds others too (an
        [`assoc.compare`][assoc.compare] table): the table needs some rows of those scorers, and other
        scorers' rows are not refused.
    """

    needs: str = ""
    scorers: tuple[str, ...] | None = None
    measures: tuple[str, ...] | None = None
    columns: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    at_least: Mapping[str, int] | None = None
    instead: str = ""
    among_others: bool = False

    def describe(self) -> str:
        """The requirement in one line, for the API reference and ``assoc analyses -v``."""
        parts = [self.needs] if self.needs else []
        if self.scorers is not None:
            parts.append("scorer " + " or ".join(self.scorers))
        if self.measures is not None:
            parts.append("measure " + " or ".join(self.measures))
        if self.columns:
            parts.append("columns " + ", ".join(self.columns))
        if self.roles:
            parts.append("non-empty " + ", ".join(self.roles))
        for key, n in (self.at_least or {}).items():
            parts.append(f"at least {n} distinct {key}")
        return "; ".join(parts) if parts else "any association table"


class Analysis(Component):
    """Base class of every analysis.

    Subclasses set ``name``, ``description``, ``citation``, ``options`` and
    implement [`run`][assoc.analysis.Analysis.run]. When ``requires_association_table`` is true (the
    default), the core validates the input against the association-table
    contract before calling [`run`][assoc.analysis.Analysis.run], so an analysis can trust the columns.

    The output has one row per estimate and columns that state what was used
    (numbers of items and raters, which SD, exact or sampled p, ...).
    """

    kind: ClassVar[str] = "analysis"
    requires_association_table: ClassVar[bool] = True
    #: The output column that holds the main number (``icc``, ``alpha``, ``d``, ``r``, ...). The core
    #: adds a copy of it named ``estimate`` (:func:`with_estimate`), so plots and readers find the
    #: main number of any analysis under one name. ``None``: the output has ``estimate`` already, or is
    #: itself an association table, whose number is ``value``.
    estimate_column: ClassVar[str | None] = None
    #: What tables the analysis reads (:class:`Requirement`); the core refuses any other before ``run``.
    requires: ClassVar[Requirement] = Requirement()
    #: What the result reports and how to read it ([`Headline`][assoc.analysis.headline.Headline]): its estimate
    #: columns with their intervals, scale and reference value, its headline rows and the columns naming a row.
    #: Figures, the study report and the bias card read it; ``None``: the generic reading (``estimate``,
    #: ``ci_low``/``ci_high``, reference 0; [`generic_headline`][assoc.analysis.headline.generic_headline]).
    headline: ClassVar[Headline | None] = None

    @classmethod
    def help_text(cls) -> str:
        """The description, citation and options (see the base class), and what tables the analysis reads."""
        lines = super().help_text().splitlines()
        reads = f"  reads: {cls.requires.describe()}" + (
            f" (otherwise: {cls.requires.instead})" if cls.requires.instead else ""
        )
        return "\n".join([*lines[:1], reads, *lines[1:]])

    @abstractmethod
    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Analyse ``table`` and return a DataFrame of estimates."""


def _got(values: Collection[Any], limit: int = 4) -> str:
    shown = [v if v else '""' for v in sorted(map(str, values))]
    return ", ".join(shown[:limit]) + (f", ... ({len(shown)} in all)" if len(shown) > limit else "")


def check_requirement(
    analysis: Analysis, table: pd.DataFrame, *, installed_scorers: Collection[str] = (), where: str = ""
) -> None:
    """Raise [`UnfitTableError`][assoc.errors.UnfitTableError] unless ``table`` meets ``analysis``'s `Requirement`.

    The message is one line: what the analysis needs, what the table holds, and what to do
    instead. ``installed_scorers`` are the registered scorer names: a table from one of them that
    the requirement does not list is refused, a table from any other producer is not (see
    `Requirement.scorers`).
    """
    req = type(analysis).requires
    name = type(analysis).name
    where = where or f"analysis {name!r}"
    needs = req.needs or req.describe()

    def refuse(got: str) -> None:
        advice = f"; {req.instead}" if req.instead else ""
        raise UnfitTableError(f"{where} needs {needs}; the table {got}{advice}")

    if req.scorers is not None and "scorer" in table.columns:
        present = set(table["scorer"].astype(str).unique())
        foreign = {s for s in present if s in installed_scorers} - set(req.scorers)
        if req.among_others:
            if foreign and not present & set(req.scorers):
                refuse(f"has no row of scorer {' or '.join(req.scorers)} (it comes from {_got(foreign)})")
        elif foreign:
            refuse(f"comes from scorer {_got(foreign)}")
    missing = [c for c in req.columns if c not in table.columns]
    if missing:
        refuse(f"has no column(s) {', '.join(map(repr, missing))} (its columns: {', '.join(map(str, table.columns))})")
    if req.measures is not None and "measure" in table.columns:
        other = set(table["measure"].astype(str).unique()) - set(req.measures)
        if other:
            refuse(f"holds measure {_got(other)}")
    for role in req.roles:
        if role not in table.columns:
            refuse(f"has no column {role}")
        if not (table[role].astype(str) != "").any():
            refuse(f"has no {role} (the column is empty in every row)")
    for key, n in (req.at_least or {}).items():
        chosen = analysis.params.get(key, key)
        columns = [c for c in ([chosen] if isinstance(chosen, str) else list(chosen or [])) if c]
        if not columns:  # the option turns the grouping off (by="", random=[]): nothing to count
            continue
        absent = [c for c in columns if c not in table.columns]
        if absent:
            refuse(
                f"has no column(s) {', '.join(map(repr, absent))} (its columns: {', '.join(map(str, table.columns))})"
            )
        distinct = table[columns].drop_duplicates()
        if len(distinct) < n:
            values = [" ".join(map(str, row)) for row in distinct.itertuples(index=False, name=None)]
            label = key if key == ", ".join(columns) else f"{key} ({', '.join(columns)})"
            refuse(f"has {len(distinct)} {label}: {_got(values) or 'none'}; at least {n} are needed")


ESTIMATE = "estimate"


def with_estimate(result: pd.DataFrame, column: str | None) -> pd.DataFrame:
    """``result`` with the canonical ``estimate`` column: a copy of ``column``, placed just before it.

    Nothing changes when ``result`` has ``estimate`` already, when ``column`` is ``None`` or
    when the result lacks it (an analysis may return other shapes for some options).
    """
    if column is None or ESTIMATE in result.columns or column not in result.columns:
        return result
    result = result.copy()
    result.insert(list(result.columns).index(column), ESTIMATE, result[column])
    return result
