"""Reduce one method's rows to one association score per target for one contrast, A versus B.

Every method measures on its own scale and in its own shape; to compare methods, each
method's rows become one number per target (the *unit*) that says how much more the
target goes with attribute group A than with group B. The rule depends on what the
rows hold, so one rule serves every scorer that emits that shape:

``contrast``
    Rows whose groups include A and B (a WEAT/SEAT cosine to each attribute word, an FMAT
    log probability of each ``[MASK]`` candidate, a PLL of each filled variant). Within each
    context ``c`` (design x query, plus the other filler for queries that fill both
    ``{TARGET}`` and ``{ATTRIB}``)::

        s_c(t) = mean_{a in A} v(t, a, c) - mean_{b in B} v(t, b, c)
        s(t)   = mean_c s_c(t)

    For cosines this is WEFAT's s(w, A, B) (Caliskan et al., 2017); for FMAT log
    probabilities the mean log probability ratio (LPR) of the A candidates over the B candidates
    (Bao, 2024; with equally many candidates per group, the mean of the position-paired LPRs
    ``log P(a_i) - log P(b_i)``); for PLLs the PLL difference of the A and B variants.
    Which column holds A and B follows the table's role rule: ``attribute_group`` (the
    target is the unit), else ``target_group`` (the attribute is the unit: queries that
    fill ``{ATTRIB}`` only), else ``mask_group`` (queries that fill both; the target is
    the unit). NaN values are left out of the means.
``difference``
    Rows already contrasted, with group ``"A - B"`` (the ``lpr`` analysis's output):
    ``s(t) = mean_c v(t, A - B, c)``; a ``"B - A"`` group counts with the opposite sign.
``direct``
    Rows whose measure is a score of the target on the contrast itself (default: a chat
    model's ``rating`` on a prompt that asks the same question, high = A):
    ``s(t) = mean of v(t)`` over samples and prompts.
``share``
    Lists of words associated with a target (a chat model's listing, an encoder's top
    words: ``attribute_group`` one of the list groups): with L(t) the listed words (over
    all samples), W_A and W_B the words of groups A and B (compared lower-cased)::

        s(t) = (|L(t) ∩ W_A| - |L(t) ∩ W_B|) / |L(t)|

A method uses the first rule its rows allow, in the order above.

References
----------
    Bao, H.-W.-S. (2024). The Fill-Mask Association Test (FMAT). Journal of Personality and
        Social Psychology. doi:10.1037/pspa0000396
    Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Semantics derived automatically from
        language corpora contain human-like biases. Science, 356(6334), 183-186.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assoc.errors import DataError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: Columns that hold A and B, tried in this order, with the unit's columns and the
#: columns that then also separate contexts.
_SIDES = (
    (("attribute_group", "attribute"), ("target_group", "target"), ()),
    (("target_group", "target"), ("attribute_group", "attribute"), ()),
    (
        ("mask_group", "mask"),
        ("target_group", "target"),
        ("attribute_group", "attribute"),
    ),
)
_CONTEXT_COLUMNS = ("design", "context")
#: Columns of a reduced table (one row per unit).
SCORE_COLUMNS = (
    "target_group",
    "target",
    "score",
    "rule",
    "source_measure",
    "n_values",
    "n_contexts",
)


@dataclass(frozen=True)
class Contrast:
    """The two groups a score contrasts, and their words for the ``share`` rule (lower-cased)."""

    a: str
    b: str
    words_a: frozenset[str] = field(default_factory=frozenset)
    words_b: frozenset[str] = field(default_factory=frozenset)

    @property
    def label(self) -> str:
        """The contrast as written in tables, ``"A - B"``."""
        return f"{self.a} - {self.b}"


def reduce_method(
    rows: pd.DataFrame,
    contrast: Contrast,
    *,
    method: str,
    direct: Sequence[str],
    list_groups: Sequence[str],
) -> pd.DataFrame:
    """One score per unit for the rows of one method (see the module docstring).

    Returns a frame with :data:`SCORE_COLUMNS` (``score`` unstandardised), one row per unit.
    Raises :class:`DataError` naming the method and what it would need when no rule applies.
    """
    for rule, select, reduce in (
        ("contrast", _contrast_rows, _reduce_contrast),
        ("difference", _difference_rows, _reduce_difference),
        ("direct", lambda r, c: r[r["measure"].isin(list(direct))], _reduce_direct),
        (
            "share",
            lambda r, c: r[r["attribute_group"].isin(list(list_groups))],
            _reduce_share,
        ),
    ):
        chosen = select(rows, contrast)
        if len(chosen):
            measures = sorted(chosen["measure"].unique())
            if len(measures) > 1:
                raise DataError(
                    f"convergence: method {method!r} has {rule!r} rows of several measures "
                    f"({', '.join(measures)}); keep one measure per method (--where measure={measures[0]}; "
                    "assoc.table.select_rows in Python)"
                )
            scores = reduce(chosen, contrast, method)
            scores["rule"] = rule
            scores["source_measure"] = measures[0]
            return scores[list(SCORE_COLUMNS)].reset_index(drop=True)
    raise DataError(_cannot_score(rows, contrast, method, direct, list_groups))


def _cannot_score(
    rows: pd.DataFrame,
    contrast: Contrast,
    method: str,
    direct: Sequence[str],
    list_groups: Sequence[str],
) -> str:
    groups = sorted(
        {
            g
            for c in ("target_group", "attribute_group", "mask_group")
            if c in rows.columns
            for g in rows[c].astype(str).unique()
            if g
        }
    )
    return (
        f"convergence: method {method!r} cannot be scored on the contrast {contrast.a!r} vs {contrast.b!r}: "
        f"none of its rows has group {contrast.a!r} or {contrast.b!r} (its groups: {', '.join(groups) or 'none'}; "
        f"measures: {', '.join(sorted(rows['measure'].unique()))}). It needs one of: [MASK] candidates or attribute "
        f"words in groups {contrast.a!r} and {contrast.b!r} (fmat, pll, weat, sbert_cosine), rows "
        f"of measure {' or '.join(map(repr, direct)) or '(none set)'} (a chat rating on a prompt that asks the "
        f"same question), or listed words (attribute_group {' or '.join(map(repr, list_groups))}) with the "
        "words of both groups"
    )


def _contrast_rows(rows: pd.DataFrame, contrast: Contrast) -> pd.DataFrame:
    """Rows with A or B in a side column, tagged with their side, unit and context."""
    return _tagged(rows, {contrast.a: 1.0, contrast.b: 1.0}, _SIDES)


def _tagged(rows: pd.DataFrame, signs: dict[str, float], sides: tuple) -> pd.DataFrame:
    """The rows whose group (in the first side column that has one) is a key of ``signs``.

    Columns: ``_side`` (that group), ``_group``/``_unit`` (the scored unit), ``_context`` (the
    context columns joined), ``measure`` and ``value`` (times the group's sign).
    """
    import pandas as pd

    parts, taken = [], pd.Series(False, index=rows.index)
    for (side_group, _side_word), (unit_group, unit_word), extra in sides:
        if side_group not in rows.columns:
            continue
        hit = rows[side_group].isin(list(signs)) & ~taken
        if not hit.any():
            continue
        taken |= hit
        part = rows[hit]
        context = [c for c in (*_CONTEXT_COLUMNS, *extra) if c in part.columns]
        parts.append(
            pd.DataFrame(
                {
                    "_side": part[side_group].astype(str),
                    "_group": part[unit_group].astype(str),
                    "_unit": part[unit_word].astype(str),
                    "_context": joined_text(part, context),
                    "measure": part["measure"],
                    "value": part["value"].astype(float) * _signs(part[side_group], signs),
                },
                index=part.index,
            )
        )
    if not parts:
        return rows.iloc[0:0]
    return pd.concat(parts)


def _signs(groups: pd.Series, signs: dict[str, float]) -> np.ndarray:
    """The sign of each row's group (vectorised: ``Series.map`` iterates over Arrow strings)."""
    import numpy as np

    out = np.ones(len(groups))
    for group, sign in signs.items():
        if sign != 1.0:
            out[(groups == group).to_numpy()] = sign
    return out


def joined_text(frame: pd.DataFrame, columns: list[str]) -> pd.Series | str:
    """The values of ``columns`` joined per row by a separator no text contains (``""`` for no columns)."""
    if not columns:
        return ""
    text = frame[columns[0]].astype(str)
    return text.str.cat([frame[c].astype(str) for c in columns[1:]], sep="\x1f") if len(columns) > 1 else text


def _reduce_contrast(tagged: pd.DataFrame, contrast: Contrast, method: str) -> pd.DataFrame:
    import pandas as pd

    sides = set(tagged["_side"].unique())
    for group in (contrast.a, contrast.b):
        if group not in sides:
            other = contrast.b if group == contrast.a else contrast.a
            raise DataError(
                f"convergence: method {method!r} has rows for group {other!r} but none for {group!r}; "
                "a contrast needs both groups"
            )
    keys = ["_group", "_unit", "_context"]
    means = tagged.groupby([*keys, "_side"], sort=False)["value"].agg(mean="mean", count="count")
    side_a = means.xs(contrast.a, level="_side")
    side_b = means.xs(contrast.b, level="_side")
    both = side_a.add_suffix("_a").join(side_b.add_suffix("_b"), how="outer")
    per_context = pd.DataFrame(
        {
            "s": both["mean_a"] - both["mean_b"],
            "n": both["count_a"].fillna(0) + both["count_b"].fillna(0),
        }
    ).reset_index()
    return _per_unit(per_context, tagged)


def _per_unit(per_context: pd.DataFrame, tagged: pd.DataFrame) -> pd.DataFrame:
    """Average the per-context scores of each unit (NaN contexts left out), units in order of appearance."""
    import pandas as pd

    out = per_context.groupby(["_group", "_unit"], sort=False).agg(
        score=("s", "mean"), n_values=("n", "sum"), n_contexts=("s", "count")
    )
    order = tagged[["_group", "_unit"]].drop_duplicates()
    out = out.reindex(pd.MultiIndex.from_frame(order)).reset_index()
    out["n_values"] = out["n_values"].fillna(0).astype(int)
    out["n_contexts"] = out["n_contexts"].fillna(0).astype(int)
    return out.rename(columns={"_group": "target_group", "_unit": "target"})


def _difference_rows(rows: pd.DataFrame, contrast: Contrast) -> pd.DataFrame:
    """Rows already contrasted (group ``"A - B"``, or ``"B - A"`` with the opposite sign), tagged."""
    return _tagged(rows, {f"{contrast.a} - {contrast.b}": 1.0, f"{contrast.b} - {contrast.a}": -1.0}, _SIDES[:2])


def _reduce_difference(tagged: pd.DataFrame, contrast: Contrast, method: str) -> pd.DataFrame:
    per_context = (
        tagged.groupby(["_group", "_unit", "_context"], sort=False)["value"].agg(s="mean", n="count").reset_index()
    )
    return _per_unit(per_context, tagged)


def _reduce_direct(rows: pd.DataFrame, contrast: Contrast, method: str) -> pd.DataFrame:
    out = (
        rows.groupby(["target_group", "target"], sort=False)["value"].agg(score="mean", n_values="count").reset_index()
    )
    out["n_contexts"] = rows.groupby(["target_group", "target"], sort=False)["context"].nunique().to_numpy()
    return out


def _reduce_share(rows: pd.DataFrame, contrast: Contrast, method: str) -> pd.DataFrame:
    if not contrast.words_a or not contrast.words_b:
        empty = [g for g, w in ((contrast.a, contrast.words_a), (contrast.b, contrast.words_b)) if not w]
        raise DataError(
            f"convergence: method {method!r} lists words, scored as the share of its words in groups "
            f"{contrast.a!r} and {contrast.b!r}, but the words of {', '.join(map(repr, empty))} are "
            "unknown: pass words={group: [word, ...]} (or include a method whose rows hold them)"
        )
    words = rows["attribute"].astype(str).str.strip().str.lower()
    flagged = rows.assign(
        _a=words.isin(contrast.words_a).astype(float),
        _b=words.isin(contrast.words_b).astype(float),
    )
    grouped = flagged.groupby(["target_group", "target"], sort=False)
    out = grouped.agg(n_a=("_a", "sum"), n_b=("_b", "sum"), n_values=("attribute", "size")).reset_index()
    out["score"] = (out["n_a"] - out["n_b"]) / out["n_values"]
    out["n_contexts"] = grouped["context"].nunique().to_numpy()
    return out
