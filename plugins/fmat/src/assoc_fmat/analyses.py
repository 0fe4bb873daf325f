"""The ``lpr`` analysis: log probability ratios, the R package's ``summary.fmat``.

Bao (2024, Eq. 1): ``LPR = log P(w | context_A) - log P(w | context_B)``, and for two
[MASK] candidates in one context ``LPR = log P(w_1 | c) - log P(w_2 | c)``. This
analysis turns an ``fmat`` table of log probabilities into LPRs with the R
package's switches:

* ``mask_pair`` (default true): contrast the two mask groups, pairing their words by
  position (``man`` with ``woman``, ``boy`` with ``girl``): ``log P(m1_i) - log P(m2_i)``
  in each filled query;
* ``target_pair`` (default true): then contrast the two ``{TARGET}`` groups, pairing
  their words by position (``TARGET[1][i]`` minus ``TARGET[2][i]``);
* ``attrib_pair`` (default true): the same for ``{ATTRIB}`` groups (Study 3A: career
  phrase i minus family phrase i).

A design with one target (attribute) group is not paired on that side (nothing to
contrast); a design with more than two groups on a side that is paired is an error.
Options ``standardize``: ``"z"`` z-scores the LPRs within model x design x query
(Study 1: "z-standardized listwise within each BERT model x query template",
sample SD, n - 1, by :func:`assoc.stats.standardize.zscore_within`), ``"sigma"`` divides by
``sigma`` (Studies 3-4: LPR / sigma with the LPR population SD that Bao derives, sqrt(2), printed
as 1.414; ``sigma`` defaults to the exact :data:`assoc.stats.constants.LPR_POPULATION_SD`, pass
1.414 to reproduce the printed rounding).

The output is again an association table (``measure = "lpr"``): paired groups and
words are written ``"A - B"`` and keep their roles (for a query that fills
``{TARGET}``, the mask contrast is the attribute), so ICC, alpha, effect sizes and
LMMs consume it directly. Column ``contrast`` names the pairings applied.

A ``clm`` table (causal LMs) of one measure is read the same way: with ``sentence``,
``log P(S_1) - log P(S_2)`` of two filled sentences is the causal analogue of the LPR
(docs/clm.md); with ``option``, ``log P(w_1 | prefix) - log P(w_2 | prefix)``.
"""

from __future__ import annotations

from typing import Any

from assoc import Analysis, Option, Requirement
from assoc.stats import LPR_POPULATION_SD

from .citation import CITATION

# The working frame keeps the [MASK] candidate apart from the {TARGET}/{ATTRIB} fillers: "target" and
# "attribute" hold only what fills those placeholders ("" otherwise), "mask_group"/"mask" the candidate.
# The roles of the output table are assigned from them at the end (see the module docstring).
_PLACEHOLDER = {"target": "{TARGET}", "attrib": "{ATTRIB}"}
_WORK = [
    "scorer",
    "model",
    "design",
    "context",
    "mask_group",
    "mask",
    "target_group",
    "target",
    "attribute_group",
    "attribute",
    "value",
    "contrast",
]
_SIDES = {
    "mask": ("mask_group", "mask"),
    "target": ("target_group", "target"),
    "attrib": ("attribute_group", "attribute"),
}


def _check_sigma(value: float) -> float:
    if value <= 0:
        raise ValueError(f"must be > 0, got {value!r}")
    return value


class LPRAnalysis(Analysis):
    """Log probability ratios from an fmat table, like the R package's summary.fmat."""

    name = "lpr"
    requires = Requirement(
        needs="an fmat table: log probabilities (measure log_prob) of [MASK] candidates in queries, or a clm "
        "table of one measure (sentence or option)",
        scorers=("fmat", "clm"),
        measures=("log_prob", "sentence", "option"),
        columns=("design", "mask_group", "mask"),
        conventions={"reduction": ("sum",)},  # a log ratio of probabilities: clm's mean per token is none
        instead="score with fmat (assoc score --scorer fmat ...) or clm with one measure",
    )
    description = "Log probability ratios (FMAT summary): pairwise contrasts of mask, target and attribute groups."
    citation = CITATION
    options = (
        Option("mask_pair", bool, True, "contrast the two [MASK] groups, words paired by position"),
        Option("target_pair", bool, True, "contrast the two {TARGET} groups, words paired by position"),
        Option("attrib_pair", bool, True, "contrast the two {ATTRIB} groups, words paired by position"),
        Option(
            "standardize",
            str,
            "none",
            "'none', 'z' (z-score within model x design x query) or 'sigma' (divide by sigma)",
            choices=("none", "z", "sigma"),
        ),
        Option(
            "sigma",
            float,
            LPR_POPULATION_SD,
            "population SD of LPRs used by standardize='sigma' (Bao, 2024: sqrt(2), printed as 1.414)",
            check=_check_sigma,
        ),
    )

    def run(self, table: Any) -> Any:
        """Compute the LPR summaries of an fmat table."""
        return lpr(
            table,
            mask_pair=self.params["mask_pair"],
            target_pair=self.params["target_pair"],
            attrib_pair=self.params["attrib_pair"],
            standardize=self.params["standardize"],
            sigma=self.params["sigma"],
        )


def lpr(
    table: Any,
    *,
    mask_pair: bool = True,
    target_pair: bool = True,
    attrib_pair: bool = True,
    standardize: str = "none",
    sigma: float = LPR_POPULATION_SD,
) -> Any:
    """LPR table from an fmat log-probability table (see the module docstring)."""
    import numpy as np

    from assoc import DataError, from_records

    missing = [c for c in ("design", "mask_group", "mask") if c not in table.columns]
    if missing:
        raise DataError(f"lpr needs a table from a query-based scorer (fmat); it lacks column(s) {', '.join(missing)}")
    measures = sorted(set(table["measure"]))
    if len(measures) != 1 or measures[0] not in ("log_prob", "sentence", "option"):
        raise DataError(
            "lpr needs log probabilities of one kind (measure 'log_prob' of fmat, or one of clm's 'sentence' / "
            f"'option'), got measure(s) {', '.join(measures)}"
        )
    if standardize not in ("none", "z", "sigma"):
        raise DataError(f"standardize must be 'none', 'z' or 'sigma', got {standardize!r}")
    work = _working_frame(table)
    applied = []
    for side, paired in (("mask", mask_pair), ("target", target_pair), ("attrib", attrib_pair)):
        if paired:
            work = _pair(work, side)
            applied.append(side)
    if standardize == "z":
        from assoc.stats import zscore_within

        # R's scale() within model x design x query; NaN where the LPRs are constant (up to rounding)
        work["value"] = zscore_within(work, within=["model", "design", "context"], ddof=1).to_numpy()
    elif standardize == "sigma":
        work["value"] = work["value"] / sigma
    records = []
    for row in work.itertuples(index=False):
        fills_t, fills_a = "{TARGET}" in row.context, "{ATTRIB}" in row.context
        target_group, target, attribute_group, attribute = (
            row.target_group,
            row.target,
            row.attribute_group,
            row.attribute,
        )
        if fills_t and not fills_a:  # the [MASK] candidate is the attribute
            attribute_group, attribute = row.mask_group, row.mask
        elif not fills_t:  # the [MASK] candidate is the target
            target_group, target = row.mask_group, row.mask
        records.append(
            {
                "scorer": row.scorer,
                "model": row.model,
                "context": row.context,
                "target_group": target_group,
                "target": target,
                "attribute_group": attribute_group,
                "attribute": attribute,
                "measure": "lpr",
                "value": float(row.value) if np.isfinite(row.value) else float("nan"),
                "design": row.design,
                "mask_group": row.mask_group,
                "mask": row.mask,
                "contrast": row.contrast or "none",
                "standardize": standardize,
            }
        )
    extra = ["design", "mask_group", "mask", "contrast", "standardize"]
    return from_records(records, scorer="fmat", measure="lpr", extra_columns=extra)


def _working_frame(table: Any) -> Any:
    """Separate the [MASK] candidate from the {TARGET}/{ATTRIB} fillers, whatever roles the table gave them."""
    import pandas as pd

    fills_t = table["context"].str.contains("{TARGET}", regex=False)
    fills_a = table["context"].str.contains("{ATTRIB}", regex=False)
    work = pd.DataFrame(
        {
            "scorer": table["scorer"].astype(str),
            "model": table["model"].astype(str),
            "design": table["design"].astype(str),
            "context": table["context"].astype(str),
            "mask_group": table["mask_group"].astype(str),
            "mask": table["mask"].astype(str),
            "target_group": table["target_group"].where(fills_t, "").astype(str),
            "target": table["target"].where(fills_t, "").astype(str),
            "attribute_group": table["attribute_group"].where(fills_a, "").astype(str),
            "attribute": table["attribute"].where(fills_a, "").astype(str),
            "value": table["value"].astype("float64"),
            "contrast": "",
        }
    )
    return work


def _pair(work: Any, side: str) -> Any:
    """Contrast the two groups of one side (mask/target/attrib), words paired by position within design."""
    import pandas as pd

    from assoc import DataError

    gcol, wcol = _SIDES[side]
    if side == "mask":
        applies = pd.Series(True, index=work.index)
    else:
        applies = work["context"].str.contains(_PLACEHOLDER[side], regex=False)
    parts, kept = [], [work[~applies]]
    for design, rows in work[applies].groupby("design", sort=False):
        groups = list(dict.fromkeys(rows[gcol]))
        if len(groups) == 1 and side != "mask":
            kept.append(rows)  # one target/attribute group: nothing to contrast
            continue
        if len(groups) != 2:
            raise DataError(
                f"lpr: {side} pairing needs exactly two {side} groups, design {design!r} has "
                f"{len(groups)} ({', '.join(groups)}); set {side}_pair=false"
            )
        words = {g: list(dict.fromkeys(rows.loc[rows[gcol] == g, wcol])) for g in groups}
        if len(words[groups[0]]) != len(words[groups[1]]):
            raise DataError(
                f"lpr: {side} groups of design {design!r} must have equally many words to be paired "
                f"by position: {groups[0]} has {len(words[groups[0]])}, {groups[1]} has "
                f"{len(words[groups[1]])}; set {side}_pair=false"
            )
        index = {(g, w): i for g in groups for i, w in enumerate(words[g])}
        rows = rows.assign(_i=[index[(g, w)] for g, w in zip(rows[gcol], rows[wcol], strict=True)])
        keys = [
            c
            for c in ("model", "design", "context", *(col for pair in _SIDES.values() for col in pair))
            if c not in (gcol, wcol)
        ]
        left = rows[rows[gcol] == groups[0]]
        right = rows[rows[gcol] == groups[1]]
        try:
            merged = left.merge(right, on=keys + ["_i", "scorer"], suffixes=("", "_2"), validate="one_to_one")
        except pd.errors.MergeError as exc:
            raise DataError(f"lpr: duplicated rows in design {design!r} ({exc})") from None
        if len(merged) != len(left) or len(merged) != len(right):
            raise DataError(f"lpr: design {design!r} lacks some {side} pairs (rows of one group have no partner)")
        merged[gcol] = merged[gcol] + " - " + merged[gcol + "_2"]
        merged[wcol] = merged[wcol] + " - " + merged[wcol + "_2"]
        merged["value"] = merged["value"] - merged["value_2"]
        merged["contrast"] = merged["contrast"].where(merged["contrast"] == "", merged["contrast"] + ",") + side
        parts.append(merged[_WORK])
    out = pd.concat(kept + parts, ignore_index=True) if parts else pd.concat(kept, ignore_index=True)
    return out[_WORK]
