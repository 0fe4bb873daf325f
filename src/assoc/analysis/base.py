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

#: In `Requirement.keys`: every column of the table but ``value`` (the measurement itself), so that two rows
#: alike in everything but their value are one measurement counted twice.
EVERY_COLUMN = "*"

#: Measures whose ``value`` is a code, not a quantity: a number computed on them means nothing, so every
#: analysis refuses them unless it declares it reads them (`Requirement.not_measures`).
CODE_MEASURES: Mapping[str, str] = {
    "listed": "words a chat model listed (value 1 marks a listed word; analyse them with stereotype)",
    "dry_run": "requests a dry run planned (nothing was sent)",
    "pairs_parsed": "replies of chat_word_association (analyse them with word_association)",
    "chosen": "choices of chat_word_association (value 1 marks the label chosen; analyse them with word_association)",
}


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
        scorers' rows are not refused (the checks of ``measures``, ``conventions`` and ``keys`` apply to
        its scorers' rows only).
    keys:
        The columns whose values identify one row: two rows with the same values there are one
        measurement counted twice (a table concatenated with itself, one run read twice), which
        would narrow every interval, and are refused. An entry naming one of the analysis' options
        (``"items"``) stands for the columns that option holds; [`EVERY_COLUMN`][assoc.analysis.base.EVERY_COLUMN]
        (``"*"``, the default) for every column but ``value``; columns the table lacks are left out.
        ``()``: rows need not be unique.
    not_measures:
        Values of ``measure`` the analysis cannot mean anything on, when ``measures`` is ``None``:
        by default the codes of [`CODE_MEASURES`][assoc.analysis.base.CODE_MEASURES] (listed words,
        dry runs, parsed replies and choices), whose ``value`` is no quantity.
    conventions:
        Settings the numbers must have been made with, and the values the analysis can read:
        ``{"reduction": ("sum",)}``. Each is looked up as a column of that name and as an option of
        every scorer run the table's provenance records (a table concatenated from several runs
        records each); a table made otherwise (a ``clm`` table with ``reduction=mean``: mean log
        probabilities per token, not sentence log probabilities) is refused.
    """

    needs: str = ""
    scorers: tuple[str, ...] | None = None
    measures: tuple[str, ...] | None = None
    columns: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    at_least: Mapping[str, int] | None = None
    instead: str = ""
    among_others: bool = False
    keys: tuple[str, ...] = (EVERY_COLUMN,)
    not_measures: tuple[str, ...] = tuple(CODE_MEASURES)
    conventions: Mapping[str, tuple[Any, ...]] | None = None

    def describe(self) -> str:
        """The requirement in one line, for the API reference and ``assoc analyses -v``."""
        parts = [self.needs] if self.needs else []
        if self.scorers is not None:
            parts.append("scorer " + " or ".join(self.scorers))
        if self.measures is not None:
            parts.append("measure " + " or ".join(self.measures))
        elif self.not_measures:
            parts.append("any measure but " + ", ".join(self.not_measures))
        for setting, values in (self.conventions or {}).items():
            parts.append(f"made with {setting} " + " or ".join(map(str, values)))
        if self.columns:
            parts.append("columns " + ", ".join(self.columns))
        if self.roles:
            parts.append("non-empty " + ", ".join(self.roles))
        for key, n in (self.at_least or {}).items():
            parts.append(f"at least {n} distinct {key}")
        if self.keys:
            parts.append("one row per " + _keys_text(self.keys))
        return "; ".join(parts) if parts else "any association table"


def _keys_text(keys: Collection[str]) -> str:
    named = [k for k in keys if k != EVERY_COLUMN]
    if EVERY_COLUMN in keys:
        return "measurement (no two rows alike in every column but value)" + (
            f" and {', '.join(named)}" if named else ""
        )
    return ", ".join(named)


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

    own = table  # the rows the analysis reads: of its scorers only, when it picks them out of a larger table
    if req.scorers is not None and "scorer" in table.columns:
        present = set(table["scorer"].astype(str).unique())
        foreign = {s for s in present if s in installed_scorers} - set(req.scorers)
        if req.among_others:
            if foreign and not present & set(req.scorers):
                refuse(f"has no row of scorer {' or '.join(req.scorers)} (it comes from {_got(foreign)})")
            if foreign:
                own = table[~table["scorer"].astype(str).isin(foreign)]
        elif foreign:
            refuse(f"comes from scorer {_got(foreign)}")
    missing = [c for c in req.columns if c not in table.columns]
    if missing:
        refuse(f"has no column(s) {', '.join(map(repr, missing))} (its columns: {', '.join(map(str, table.columns))})")
    if "measure" in own.columns:
        present_measures = set(own["measure"].astype(str).unique())
        if req.measures is not None:
            other = present_measures - set(req.measures)
            if other:
                refuse(f"holds measure {_got(other)}")
        elif not _reads_another_outcome(analysis, table):
            codes = sorted(present_measures & set(req.not_measures))
            if codes:
                what = CODE_MEASURES.get(codes[0])
                others = sorted(present_measures - set(codes))
                keep = f" (keep the others' rows: --where measure={others[0]})" if others else ""
                refuse(f"holds measure {_got(codes)}" + (f": {what}" if what else "") + keep)
    for setting, accepted in (req.conventions or {}).items():
        found = _settings_found(own, setting)
        wrong = {value: source for value, source in found.items() if value not in {str(v) for v in accepted}}
        if wrong:
            value, source = next(iter(sorted(wrong.items())))
            allowed = " or ".join(map(str, accepted))
            refuse(f"was made with {setting}={value} ({source}); the analysis reads {setting} {allowed}")
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
    check_unique_rows(analysis, own, where=where)


def _reads_another_outcome(analysis: Analysis, table: pd.DataFrame) -> bool:
    """Whether ``analysis`` reads a column of ``table`` other than ``value`` as its outcome (its ``outcome`` option).

    Codes (``listed`` words, parsed replies) are no quantity in ``value``; a column computed from them
    (the ``stereotype`` analysis's ``warmth_direction`` in its ``responses`` shape) is one.
    """
    outcome = analysis.params.get("outcome")
    return isinstance(outcome, str) and outcome != "value" and outcome in table.columns


def key_columns(analysis: Analysis, table: pd.DataFrame) -> list[str]:
    """The columns of ``table`` that identify one of its rows for ``analysis`` (its `Requirement.keys`, resolved).

    An entry naming one of the analysis' options stands for the columns that option holds;
    [`EVERY_COLUMN`][assoc.analysis.base.EVERY_COLUMN] for every column but ``value``; columns the table lacks
    are left out.
    """
    columns: list[str] = []
    for key in type(analysis).requires.keys:
        if key == EVERY_COLUMN:
            columns += [str(c) for c in table.columns if c != "value"]
            continue
        chosen = analysis.params.get(key, key) if key in analysis.params else key
        columns += [chosen] if isinstance(chosen, str) else [str(c) for c in (chosen or [])]
    return [c for c in dict.fromkeys(columns) if c in table.columns]


def check_unique_rows(analysis: Analysis, table: pd.DataFrame, *, where: str = "") -> None:
    """Refuse (one line, [`UnfitTableError`][assoc.errors.UnfitTableError]) rows that repeat another row's key.

    Two rows alike in the analysis' key columns (`key_columns`) are one measurement counted twice: a
    table concatenated with itself, or two files of one run read together. Counted twice, they
    would shrink every standard error and interval by a factor of about sqrt(2), so the table is
    refused before the analysis runs, naming the first repeated key and how many rows repeat one.
    """
    req = type(analysis).requires
    columns = key_columns(analysis, table)
    if not req.keys or not columns or len(table) < 2:
        return
    import numpy as np
    import pandas as pd

    keys = table[columns]
    try:
        hashed = pd.util.hash_pandas_object(keys, index=False)
    except TypeError:  # unhashable cells (lists read from JSON): compare their text
        keys = keys.astype(str)
        hashed = pd.util.hash_pandas_object(keys, index=False)
    # Hashing the rows first keeps a large table cheap; rows whose hashes repeat are then compared exactly.
    codes = hashed.to_numpy()
    candidates = hashed.duplicated(keep=False).to_numpy()
    if not candidates.any():
        return
    repeated = keys[candidates].duplicated(keep="first").to_numpy()
    n_repeated = int(repeated.sum())
    if not n_repeated:
        return
    first_at = int(np.flatnonzero(candidates)[np.argmax(repeated)])  # the position of the first repeat
    first = keys.iloc[first_at]
    alike = int((codes == codes[first_at]).sum())
    shown = [c for c in columns if c in ("model", "scorer", "measure") or table[c].nunique(dropna=False) > 1]
    example = ", ".join(f"{c}={_short(first[c])}" for c in (shown or columns)[:6])
    label = _keys_text(req.keys)
    where = where or f"analysis {type(analysis).name!r}"
    raise UnfitTableError(
        f"{where} needs one row per {label}; the table has {n_repeated:,} of {len(table):,} rows that repeat "
        f"another row's {'values' if EVERY_COLUMN in req.keys else 'key'} (e.g. {alike} rows with {example}): "
        "counted twice they would narrow every interval; drop the repeated rows (a table concatenated with "
        "itself, or one run read twice?) or keep the column that tells them apart"
    )


def _short(value: Any, width: int = 30) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _settings_found(table: pd.DataFrame, setting: str) -> dict[str, str]:
    """The values of ``setting`` behind ``table``: ``{value: where it was found}``.

    From a column of that name, and from the options of every scorer run its provenance records
    (a score table's run, a comparison's runs, the inputs of a concatenation or an analysis).
    """
    from assoc.table.provenance import get_provenance, scorer_runs

    found: dict[str, str] = {}
    if setting in table.columns:
        for value in table[setting].dropna().astype(str).unique():
            found.setdefault(str(value), f"column {setting}")
    for run in scorer_runs(get_provenance(table)):
        options = run.get("options")
        if isinstance(options, Mapping) and setting in options and options[setting] is not None:
            found.setdefault(str(options[setting]), f"scorer {run.get('scorer', '?')}'s option, in the provenance")
    return found


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
