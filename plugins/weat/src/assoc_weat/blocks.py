"""From an association table to the similarity matrices the WEAT statistics need.

Any association table works (cosines from the ``weat`` scorer, log
probabilities from ``fmat``, ...): ``value`` is read as sim(target, attribute).

* Rows are split into *units* by the ``by`` columns (default: those of
  ``scorer``, ``model``, ``measure``, ``design`` present in the table), one
  result per unit.
* Within a unit, rows with the same (target group, target, attribute group,
  attribute) are averaged, e.g. over the queries (``context``) of an FMAT table;
  add ``context`` to ``by`` for one result per query.
* Target groups give X and Y, attribute groups give A and B. Unless named by
  options, a unit must have exactly two target groups (X = the first one in the
  table, Y = the second) and two attribute groups (A first, B second).
* Rows of the ``weat`` scorer's vector measures (:data:`VECTOR_MEASURES`) are left out.
* Missing values (NaN: out-of-vocabulary words) drop the whole word: a target
  word is dropped when all its values are missing, an attribute word likewise;
  values missing in any other pattern are an error, since dropping them would
  silently change the design.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from assoc import DataError

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_BY = ("scorer", "model", "measure", "design")
#: Measures of the ``weat`` scorer that are not a (target, attribute) similarity: rows against a
#: group's mean vector, an axis, a relation or a classifier (:mod:`assoc_weat.metrics`). Only their
#: own analyses (rnd, ect, semaxis, ripa, rnsb) read them; the WEAT-type analyses leave them out.
VECTOR_MEASURES = ("centroid_cosine", "centroid_distance", "axis_cosine", "relation_projection", "logit")


@dataclass
class Unit:
    """One unit of analysis: its key and a targets × attributes value matrix."""

    key: dict[str, str]
    matrix: pd.DataFrame  # index (target_group, target), columns (attribute_group, attribute)
    target_groups: list[str]
    attribute_groups: list[str]
    dropped: list[str] = field(default_factory=list)

    def rows(self, group: str) -> np.ndarray:
        """Boolean mask of the matrix rows of target group ``group``."""
        return np.asarray(self.matrix.index.get_level_values(0) == group)

    def columns(self, group: str) -> np.ndarray:
        """Boolean mask of the matrix columns of attribute group ``group``."""
        return np.asarray(self.matrix.columns.get_level_values(0) == group)

    def block(self, target_group: str, attribute_group: str) -> np.ndarray:
        """The cosines of one target group (rows) with one attribute group (columns)."""
        return self.matrix.to_numpy()[np.ix_(self.rows(target_group), self.columns(attribute_group))]

    def words(self, target_group: str) -> list[str]:
        """The target words of ``target_group``, in matrix order."""
        return list(self.matrix.index.get_level_values(1)[self.rows(target_group)])

    def count(self, kind: str, group: str) -> int:
        """The number of words of a ``target`` or ``attribute`` group."""
        return int(self.rows(group).sum() if kind == "target" else self.columns(group).sum())


def resolve_by(table: pd.DataFrame, by: Sequence[str] | None, default: Sequence[str] = DEFAULT_BY) -> list[str]:
    """The grouping columns: ``by`` checked against ``table``, or those of ``default`` it has."""
    if by is None:
        return [c for c in default if c in table.columns]
    missing = [c for c in by if c not in table.columns]
    if missing:
        raise DataError(f"'by' names column(s) the table does not have: {', '.join(missing)}")
    return list(by)


def units(table: pd.DataFrame, by: Sequence[str] | None) -> list[Unit]:
    """Split ``table`` into units and pivot each into a target × attribute matrix (see module docstring)."""
    import pandas as pd

    columns = resolve_by(table, by)
    if table.empty:
        raise DataError("the table is empty")
    if "measure" in table.columns and table["measure"].isin(VECTOR_MEASURES).any():
        table = table[~table["measure"].isin(VECTOR_MEASURES)]
        if table.empty:
            raise DataError(
                f"the table holds only rows of {', '.join(VECTOR_MEASURES)} (read by rnd, ect, semaxis, ripa, "
                "rnsb); this analysis needs (target, attribute) similarities: score with measures=[cosine, ...]"
            )
    if (table["attribute_group"] == "").all():
        raise DataError(
            "the table has no attribute groups (column attribute_group is empty); "
            "WEAT-type analyses need target and attribute groups"
        )
    out = []
    grouped = table.groupby(columns, sort=False, dropna=False) if columns else [((), table)]
    for key, rows in grouped:
        key = key if isinstance(key, tuple) else (key,)
        rows = rows[(rows["target_group"] != "") & (rows["attribute_group"] != "")]
        if rows.empty:
            continue
        target_groups = list(dict.fromkeys(rows["target_group"]))
        attribute_groups = list(dict.fromkeys(rows["attribute_group"]))
        matrix = rows.pivot_table(
            index=["target_group", "target"],
            columns=["attribute_group", "attribute"],
            values="value",
            aggfunc="mean",
            dropna=False,
            sort=False,
        )
        # pivot_table drops all-NaN combinations; reindex to keep every word visible to the NaN check.
        index = pd.MultiIndex.from_frame(rows[["target_group", "target"]].drop_duplicates())
        cols = pd.MultiIndex.from_frame(rows[["attribute_group", "attribute"]].drop_duplicates())
        matrix = matrix.reindex(index=index, columns=cols)
        matrix, dropped = _drop_missing(matrix, dict(zip(columns, map(str, key))))
        out.append(Unit(dict(zip(columns, map(str, key))), matrix, target_groups, attribute_groups, dropped))
    if not out:
        raise DataError("no rows with both a target group and an attribute group")
    return out


def _drop_missing(matrix: pd.DataFrame, key: dict[str, str]) -> tuple[pd.DataFrame, list[str]]:
    values = matrix.to_numpy()
    missing = np.isnan(values)
    if not missing.any():
        return matrix, []
    empty_rows = missing.all(axis=1)
    empty_cols = missing.all(axis=0)
    kept = matrix.loc[~empty_rows, ~empty_cols]
    if np.isnan(kept.to_numpy()).any():
        where = ", ".join(f"{k}={v}" for k, v in key.items())
        raise DataError(
            f"{where}: some (target, attribute) values are missing although both words have other "
            "values; fill or remove them (only whole out-of-vocabulary words are dropped)"
        )
    dropped = [f"{g}:{w}" for g, w in matrix.index[empty_rows]] + [f"{g}:{w}" for g, w in matrix.columns[empty_cols]]
    return kept, dropped


def pick_groups(unit: Unit, kind: str, first: str | None, second: str | None) -> tuple[str, str]:
    """The two groups playing X/Y (``kind="target"``) or A/B (``"attribute"``)."""
    available = unit.target_groups if kind == "target" else unit.attribute_groups
    labels = ("x", "y") if kind == "target" else ("a", "b")
    where = ", ".join(f"{k}={v}" for k, v in unit.key.items()) or "table"
    if first is None and second is None:
        if len(available) != 2:
            raise DataError(
                f"{where}: {len(available)} {kind} groups ({', '.join(map(repr, available))}); "
                f"name the two to compare with the options {labels[0]}= and {labels[1]}="
            )
        chosen = (available[0], available[1])
    elif first is None or second is None:
        raise DataError(f"give both {labels[0]}= and {labels[1]}= (or neither, with exactly two {kind} groups)")
    else:
        chosen = (first, second)
    for group in chosen:
        if group not in available:
            raise DataError(f"{where}: no {kind} group {group!r} (available: {', '.join(map(repr, available))})")
        if unit.count(kind, group) == 0:
            raise DataError(f"{where}: every word of {kind} group {group!r} is missing")
    if chosen[0] == chosen[1]:
        raise DataError(f"{where}: {labels[0]} and {labels[1]} are the same group {chosen[0]!r}")
    return chosen
