"""Analyses ``mac``, ``rnd``, ``ect``, ``semaxis``, ``ripa``, ``rnsb`` and ``nas``: WEFE's and sweater's metrics.

Each reads the association table the ``weat`` scorer writes: ``mac`` and ``nas`` the pairwise
cosines (measure ``cosine``, like ``weat``), the others the per-word quantities of the extra
measures (``assoc score weat --option measures=[...]``; :mod:`assoc_weat.metrics` gives the
formulas). Where WEFE and sweater define a metric differently, an option chooses; the default
and the reason are in each class's docstring and in ``docs/weat.md``.

Words are the two roles of the table: the words *scored* and the groups they are measured
against. sweater scores target words S against attribute groups A, B; WEFE's RND, ECT and
RIPA score the attribute words against the two *target* groups. ``side`` (``auto``, the
default, picks the only orientation that fits) says which one a result uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from assoc import Analysis, DataError, Option, Requirement, confidence_level, non_negative

from .analyses import WEFATAnalysis

if TYPE_CHECKING:
    import pandas as pd

MANZINI = (
    "Manzini, T., Lim, Y. C., Tsvetkov, Y., & Black, A. W. (2019). Black is to criminal as caucasian is to "
    "police: Detecting and removing multiclass bias in word embeddings. NAACL 2019, 615-621."
)
GARG = (
    "Garg, N., Schiebinger, L., Jurafsky, D., & Zou, J. (2018). Word embeddings quantify 100 years of gender "
    "and ethnic stereotypes. PNAS, 115(16), E3635-E3644. doi:10.1073/pnas.1720347115"
)
DEV = "Dev, S., & Phillips, J. (2019). Attenuating bias in word vectors. AISTATS 2019, PMLR 89, 879-887."
AN = (
    "An, J., Kwak, H., & Ahn, Y.-Y. (2018). SemAxis: A lightweight framework to characterize domain-specific "
    "word semantics beyond sentiment. ACL 2018, 2450-2461."
)
ETHAYARAJH = (
    "Ethayarajh, K., Duvenaud, D., & Hirst, G. (2019). Understanding undesirable word embedding associations. "
    "ACL 2019, 1696-1705."
)
SWEENEY = (
    "Sweeney, C., & Najafian, M. (2019). A transparent framework for evaluating unintended demographic bias "
    "in word embeddings. ACL 2019, 1662-1667."
)
PUJARI = (
    "Pujari, A. K., Mittal, A., Padhi, A., Jain, A., Jadon, M., & Kumar, V. (2019). Debiasing gender biased "
    "Hindi words with word-embedding. ACAI 2019, 450-456; the score as sweater (Chan, 2022) computes it."
)

SIDES = ("auto", "attribute", "target")
_BY_DEFAULT = ("scorer", "model", "design")
_BY = Option("by", list, None, "columns giving one result each (default: scorer, model, design when present)")
_PER_WORD = Option("per_word", bool, False, "one row per scored word (its value) instead of the summary")
_CI_OPTIONS = (
    Option(
        "n_bootstrap",
        int,
        0,
        "bootstrap resamples for a percentile CI of the summary, resampling the scored words (0 = no CI)",
        check=non_negative,
    ),
    Option("confidence", float, 0.95, "confidence level of the bootstrap CI", check=confidence_level),
    Option("seed", int, 0, "seed of the bootstrap", check=non_negative),
)
_SCORED = Option(
    "scored",
    list,
    None,
    "groups whose words are scored (targets for side=attribute, attributes for side=target; default: all)",
)


def _by(table: pd.DataFrame, by: list[str] | None) -> list[str]:
    if by is None:
        return [c for c in _BY_DEFAULT if c in table.columns]
    missing = [c for c in by if c not in table.columns]
    if missing:
        raise DataError(f"'by' names column(s) the table does not have: {', '.join(missing)}")
    return list(by)


def _parts(table: pd.DataFrame, measure: str, by: list[str] | None, what: str) -> Iterator[tuple[dict, pd.DataFrame]]:
    """The rows of ``measure``, one frame per ``by`` group, with the group's key."""
    rows = table[table["measure"] == measure]
    if rows.empty:
        have = ", ".join(sorted(map(str, table["measure"].unique())))
        raise DataError(
            f"{what} reads rows of measure {measure!r}, the table has none (it has: {have}); score with the "
            f"weat scorer's option measures=[..., {measure}] (see docs/weat.md)"
        )
    columns = _by(table, by)
    if not columns:
        yield {}, rows
        return
    for key, part in rows.groupby(columns, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(columns, map(str, key))), part


def _where(key: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in key.items()) or "table"


def _two(available: list[str], a: str | None, b: str | None, key: dict, kind: str) -> tuple[str, str]:
    if a is None and b is None:
        if len(available) != 2:
            raise DataError(
                f"{_where(key)}: {len(available)} {kind} groups ({', '.join(map(repr, available))}); "
                "name the two with the options a= and b="
            )
        return available[0], available[1]
    if a is None or b is None:
        raise DataError("give both a= and b= (or neither, with exactly two groups)")
    for group in (a, b):
        if group not in available:
            raise DataError(f"{_where(key)}: no {kind} group {group!r} (available: {', '.join(map(repr, available))})")
    if a == b:
        raise DataError(f"{_where(key)}: a and b are the same group {a!r}")
    return a, b


def _centroid_side(part: pd.DataFrame, side: str, key: dict, what: str) -> tuple[str, pd.DataFrame]:
    """The orientation of centroid rows: ``attribute`` (attribute means; words = targets) or ``target``."""
    attribute_means = part[(part["attribute"] == "") & (part["target"] != "")]
    target_means = part[(part["target"] == "") & (part["attribute"] != "")]
    if side == "auto":
        n_attribute = attribute_means["attribute_group"].nunique()
        n_target = target_means["target_group"].nunique()
        if n_attribute == 2 or (n_attribute > 2 and n_target != 2):
            side = "attribute"
        elif n_target == 2:
            side = "target"
        else:
            raise DataError(
                f"{what}, {_where(key)}: side=auto needs exactly two attribute groups (sweater: targets scored "
                "against A and B) or two target groups (WEFE: attribute words scored against two target "
                "groups); name the side with side=attribute or side=target and the groups with a= and b="
            )
    return side, attribute_means if side == "attribute" else target_means


def _word_ci(values, reduce: str, p: dict) -> dict:
    """Columns of a percentile bootstrap CI of the sum or mean of per-word ``values`` (words resampled).

    Uses :func:`assoc.stats.effect_size.bootstrap_interval` (one sample: the scored words, drawn
    with replacement, their number kept); without ``n_bootstrap`` the columns are NaN.
    """
    import math

    import numpy as np

    from assoc.stats import bootstrap_interval

    if not p["n_bootstrap"]:
        return {"ci_low": math.nan, "ci_high": math.nan, "confidence": math.nan, "n_bootstrap": 0}
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        raise DataError("a bootstrap CI needs at least 2 scored words")

    def statistic(xs: np.ndarray, _: np.ndarray) -> np.ndarray:
        return xs.sum(axis=1) if reduce == "sum" else xs.mean(axis=1)

    ci = bootstrap_interval(
        values,
        None,
        statistic,
        confidence=p["confidence"],
        n_resamples=p["n_bootstrap"],
        seed=p["seed"],
        option="n_bootstrap",
    )
    return {"ci_low": ci.low, "ci_high": ci.high, "confidence": p["confidence"], "n_bootstrap": p["n_bootstrap"]}


def _scored(words: pd.DataFrame, scored: list[str] | None, key: dict) -> pd.DataFrame:
    """The rows of ``words`` (column ``word_group``) in the groups ``scored`` (all when None)."""
    if scored is None:
        return words
    groups = list(dict.fromkeys(words["word_group"]))
    _chosen(scored, groups, key, "scored")
    return words[words["word_group"].isin(scored)].reset_index(drop=True)


def _centroid_values(part: pd.DataFrame, side: str, a: str, b: str) -> pd.DataFrame:
    """Per scored word: its value against group a's and group b's mean vector (columns ``a``, ``b``)."""
    group_col, word_group, word = (
        ("attribute_group", "target_group", "target")
        if side == "attribute"
        else ("target_group", "attribute_group", "attribute")
    )
    chosen = part[part[group_col].isin([a, b])]
    wide = chosen.pivot_table(index=[word_group, word], columns=group_col, values="value", aggfunc="mean", sort=False)
    wide = wide.dropna(how="any")
    return wide.reset_index().rename(columns={word_group: "word_group", word: "word", a: "a", b: "b"})


#: Options ``a`` and ``b`` of the analyses of mean vectors (RND, ECT).
_CENTROID_GROUPS = (
    Option("a", str, None, "group A whose mean vector is compared (default: the first of two)"),
    Option("b", str, None, "group B (default: the second)"),
)


def _centroid_words(
    table: pd.DataFrame, measure: str, p: dict, what: str
) -> Iterator[tuple[dict, str, str, str, pd.DataFrame]]:
    """Per unit of ``by``: (key, side, a, b, words), each scored word's values against the mean vectors of a and b.

    What RND and ECT share: the rows of ``measure``, the side the mean vectors are on (``side``), the
    two groups (``a``, ``b``, else the unit's two), and the scored words (``scored``) with columns
    ``word_group``, ``word``, ``a``, ``b``.
    """
    for key, part in _parts(table, measure, p["by"], what):
        side, part = _centroid_side(part, p["side"], key, what)
        groups = list(dict.fromkeys(part["attribute_group" if side == "attribute" else "target_group"]))
        a, b = _two(groups, p["a"], p["b"], key, side)
        yield key, side, a, b, _scored(_centroid_values(part, side, a, b), p["scored"], key)


_SIDE = Option(
    "side",
    str,
    "auto",
    "which groups' mean vectors: attribute (score targets against A and B, as sweater and Garg et al.), "
    "target (score attribute words against two target groups, as WEFE), auto (the one the table fits)",
    choices=SIDES,
)


class MACAnalysis(Analysis):
    """MAC, Mean Average Cosine (Manzini et al., 2019), with per-word values.

    For each scored target word t and attribute group A_j::

        s(t, A_j) = mean_{a in A_j} cos(t, a)             (scale="similarity", the default)
        s(t, A_j) = mean_{a in A_j} (1 - cos(t, a))       (scale="distance")
        MAC = mean over all (t, A_j) of s(t, A_j)

    over the chosen target groups (default: all) and attribute groups (default: all).
    sweater's ``mac(w, S, A)`` is one target group S and one attribute group A with
    ``scale="similarity"``; WEFE's ``MAC`` averages cosine *distances* over every target set
    and every attribute set, as Manzini et al. define it (``scale="distance"``, where it is
    1 - the similarity MAC). The default is the similarity because ``value`` in the table is
    a similarity and every other analysis reads high = more associated.
    """

    name = "mac"
    requires = Requirement(
        needs="cosines of target words with attribute words (measure cosine of a weat or sbert_cosine table)",
        roles=("target", "attribute_group", "attribute"),
        instead="score targets against attribute words (e.g. assoc score --scorer weat)",
    )
    estimate_column = "mac"
    description = "MAC: mean over target words and attribute groups of the mean cosine (or cosine distance)."
    citation = MANZINI
    options = (
        Option("targets", list, None, "target groups whose words are scored (default: all)"),
        Option("attributes", list, None, "attribute groups (default: all)"),
        Option(
            "scale",
            str,
            "similarity",
            "similarity: mean cosine (sweater); distance: mean 1 - cosine (WEFE, Manzini et al.)",
            choices=("similarity", "distance"),
        ),
        *_CI_OPTIONS,
        _BY,
        _PER_WORD,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """MAC per unit (or per word with per_word=true)."""
        import numpy as np
        import pandas as pd

        from .blocks import units

        p = self.params
        cosines = table[table["measure"] == "cosine"]
        if cosines.empty:
            raise DataError("mac reads rows of measure 'cosine' (target-attribute pairs); the table has none")
        rows: list[dict] = []
        for unit in units(cosines, _by(table, p["by"])):
            targets = _chosen(p["targets"], unit.target_groups, unit.key, "target")
            attributes = _chosen(p["attributes"], unit.attribute_groups, unit.key, "attribute")
            cells = []
            for tg in targets:
                for ag in attributes:
                    block = unit.block(tg, ag)
                    means = block.mean(axis=1)
                    if p["scale"] == "distance":
                        means = 1.0 - means
                    for word, value in zip(unit.words(tg), means):
                        cells.append({"target_group": tg, "target": word, "attribute_group": ag, "mac": float(value)})
            key = unit.key
            if p["per_word"]:
                rows.extend({**key, **cell, "scale": p["scale"]} for cell in cells)
                continue
            values = np.array([c["mac"] for c in cells])
            rows.append(
                {
                    **key,
                    "targets": ", ".join(targets),
                    "attributes": ", ".join(attributes),
                    "n_targets": sum(unit.count("target", g) for g in targets),
                    "n_attributes": sum(unit.count("attribute", g) for g in attributes),
                    "mac": float(values.mean()),
                    "scale": p["scale"],
                    # each word has one cell per attribute group: the mean of its cells is resampled
                    **_word_ci(
                        pd.DataFrame(cells).groupby(["target_group", "target"], sort=False)["mac"].mean(), "mean", p
                    ),
                    "dropped": ", ".join(unit.dropped),
                }
            )
        return pd.DataFrame(rows)


def _chosen(given: list[str] | None, available: list[str], key: dict, kind: str) -> list[str]:
    if given is None:
        return list(available)
    unknown = [g for g in given if g not in available]
    if unknown:
        raise DataError(f"{_where(key)}: no {kind} group {unknown[0]!r} (available: {', '.join(map(repr, available))})")
    return list(given)


class RNDAnalysis(Analysis):
    """RND, Relative Norm Distance (Garg et al., 2018, eq. 3).

    For each scored word w (measure ``centroid_distance``)::

        rnd(w) = ||w - m_A|| - ||w - m_B||
        RND    = sum_w rnd(w)         (reduce="sum", the default: Garg et al.'s eq. 3 and sweater)
        RND    = mean_w rnd(w)        (reduce="mean": WEFE)

    Negative: the words are closer to A. sweater scores target words against the mean vectors
    of attribute groups A and B (``side=attribute``); WEFE scores the attribute words against
    the mean vectors of two target groups (``side=target``), and its query may have one
    attribute set (two target sets wrt Family): ``side=auto`` reads that shape as WEFE does. ``distance="cosine"`` uses
    cos(w, m_A) - cos(w, m_B) instead (measure ``centroid_cosine``; WEFE's ``distance="cos"``,
    which despite its name subtracts similarities, so its sign is the opposite of the norm's).
    """

    name = "rnd"
    # two attribute groups (sweater) or two target groups and one attribute group (WEFE's query shape):
    # a requirement cannot say "or", so run() refuses a table with neither (_centroid_side)
    requires = Requirement(
        needs="per-word distances (measure centroid_distance) or cosines (centroid_cosine) to the mean vectors "
        "of two attribute groups or of two target groups",
        roles=("attribute_group",),
        instead="score with the weat scorer and -o measures=[cosine,centroid_distance] (docs/weat.md)",
    )
    estimate_column = "rnd"
    description = "RND: sum (or mean) over words of ||w - mean(A)|| - ||w - mean(B)||."
    citation = GARG
    options = (
        *_CENTROID_GROUPS,
        _SIDE,
        Option("reduce", str, "sum", "sum (Garg et al., sweater) or mean (WEFE) over words", choices=("sum", "mean")),
        Option(
            "distance",
            str,
            "euclidean",
            "euclidean (Garg et al.) or cosine (WEFE's 'cos': cosine similarity)",
            choices=("euclidean", "cosine"),
        ),
        _SCORED,
        *_CI_OPTIONS,
        _BY,
        _PER_WORD,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """RND per unit (or per word)."""
        import pandas as pd

        p = self.params
        measure = "centroid_distance" if p["distance"] == "euclidean" else "centroid_cosine"
        rows: list[dict] = []
        for key, side, a, b, words in _centroid_words(table, measure, p, "rnd"):
            words["rnd"] = words["a"] - words["b"]
            if p["per_word"]:
                for w in words.itertuples():
                    rows.append(
                        {
                            **key,
                            "word_group": w.word_group,
                            "word": w.word,
                            "a": a,
                            "b": b,
                            "side": side,
                            "distance_a": w.a,
                            "distance_b": w.b,
                            "rnd": w.rnd,
                        }
                    )
                continue
            total = float(words["rnd"].sum())
            rows.append(
                {
                    **key,
                    "a": a,
                    "b": b,
                    "side": side,
                    "n_words": len(words),
                    "rnd": total if p["reduce"] == "sum" else total / len(words),
                    **_word_ci(words["rnd"], p["reduce"], p),
                    "reduce": p["reduce"],
                    "distance": p["distance"],
                }
            )
        return pd.DataFrame(rows)


class ECTAnalysis(Analysis):
    """ECT, Embedding Coherence Test (Dev & Phillips, 2019).

    For the scored words w (measure ``centroid_cosine``), u_A(w) = cos(w, m_A) and
    u_B(w) = cos(w, m_B); ECT = Spearman's rho of u_A and u_B over the words (1 = coherent,
    no bias). sweater scores the target words against attribute groups A, B
    (``side=attribute``), WEFE the attribute words against two target groups (``side=target``).
    With ``per_word=true`` each word's row has u_A, u_B and the set's ECT.
    """

    name = "ect"
    # two attribute groups or two target groups (WEFE's query shape): see RNDAnalysis.requires
    requires = Requirement(
        needs="per-word cosines with the mean vectors of two attribute groups or of two target groups "
        "(measure centroid_cosine)",
        roles=("attribute_group",),
        instead="score with the weat scorer and -o measures=[cosine,centroid_cosine] (docs/weat.md)",
    )
    estimate_column = "ect"
    description = "ECT: Spearman correlation over words of cos(w, mean(A)) and cos(w, mean(B))."
    citation = DEV
    options = (
        *_CENTROID_GROUPS,
        _SIDE,
        _SCORED,
        _BY,
        _PER_WORD,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """ECT per unit (or u_A, u_B per word)."""
        import pandas as pd

        from .metrics import spearman

        p = self.params
        rows: list[dict] = []
        for key, side, a, b, words in _centroid_words(table, "centroid_cosine", p, "ect"):
            if len(words) < 2:
                raise DataError(f"ect, {_where(key)}: a rank correlation needs at least 2 scored words")
            if p["per_word"]:
                # ECT is a property of the word set: each word's row repeats it beside u_A, u_B
                ect = spearman(words["a"].to_numpy(), words["b"].to_numpy())
                for w in words.itertuples():
                    rows.append(
                        {
                            **key,
                            "word_group": w.word_group,
                            "word": w.word,
                            "a": a,
                            "b": b,
                            "side": side,
                            "u_a": w.a,
                            "u_b": w.b,
                            "ect": ect,
                        }
                    )
                continue
            rows.append(
                {
                    **key,
                    "a": a,
                    "b": b,
                    "side": side,
                    "n_words": len(words),
                    "ect": spearman(words["a"].to_numpy(), words["b"].to_numpy()),
                }
            )
        return pd.DataFrame(rows)


def _contrast_rows(part: pd.DataFrame, column: str, a: str | None, b: str | None, key: dict, what: str):
    """Rows of one ``"A - B"`` group in ``column``; a ``"B - A"`` group counts negated. Returns (rows, a, b, sign)."""
    labels = [g for g in dict.fromkeys(part[column]) if " - " in g]
    if a is None and b is None:
        if len(labels) != 1:
            raise DataError(
                f"{what}, {_where(key)}: {len(labels)} contrasts ({', '.join(map(repr, labels))}); "
                "name one with a= and b="
            )
        a, b = labels[0].split(" - ", 1)
    elif a is None or b is None:
        raise DataError("give both a= and b= (or neither, with one contrast)")
    for label, sign in ((f"{a} - {b}", 1.0), (f"{b} - {a}", -1.0)):
        if label in labels:
            rows = part[part[column] == label].copy()
            rows["value"] = sign * rows["value"]
            return rows, a, b
    raise DataError(f"{what}, {_where(key)}: no contrast {a!r} - {b!r} (available: {', '.join(map(repr, labels))})")


def _contrast_of_targets(
    table: pd.DataFrame, measure: str, params: dict, what: str
) -> Iterator[tuple[dict, pd.DataFrame, str, str, list[str]]]:
    """Per ``by`` group: the rows of one attribute contrast (see :func:`_contrast_rows`) for the chosen targets.

    Yields (key, rows, a, b, target groups); the target groups are ``params["targets"]`` or all of them.
    """
    for key, part in _parts(table, measure, params["by"], what):
        chosen, a, b = _contrast_rows(part, "attribute_group", params["a"], params["b"], key, what)
        groups = _chosen(params["targets"], list(dict.fromkeys(chosen["target_group"])), key, "target")
        yield key, chosen[chosen["target_group"].isin(groups)], a, b, groups


class SemAxisAnalysis(Analysis):
    """SemAxis (An et al., 2018), as sweater's ``semaxis(l = ...)`` computes it.

    score(w) = cos(w, m_A - m_B) for every target word w (measure ``axis_cosine``); positive =
    closer to pole A. The summary is the mean score over the target words (sweater reports the
    per-word scores only: ``per_word=true``). The pole means m_A, m_B are of the pole words'
    vectors (sweater's default ``l = 0``), or, with the scorer's ``semaxis_neighbours=l``, of each
    pole word's vector averaged with its l nearest neighbours' (An et al.'s augmentation, sec. 3.2).
    """

    name = "semaxis"
    # no at_least: a table of axis_cosine rows alone has one attribute_group, the contrast "A - B"
    requires = Requirement(
        needs="per-word cosines with the axis between two attribute groups (measure axis_cosine)",
        roles=("attribute_group",),
        instead="score with the weat scorer and -o measures=[cosine,axis_cosine] (docs/weat.md)",
    )
    estimate_column = "semaxis"
    description = "SemAxis: per target word, cos(w, mean(A) - mean(B)); summary: the mean over words."
    citation = AN
    options = (
        Option("a", str, None, "pole A (default: the one contrast in the table)"),
        Option("b", str, None, "pole B"),
        Option("targets", list, None, "target groups whose words are scored (default: all)"),
        *_CI_OPTIONS,
        _BY,
        _PER_WORD,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """SemAxis per unit (or per word)."""
        import pandas as pd

        p = self.params
        rows: list[dict] = []
        for key, chosen, a, b, groups in _contrast_of_targets(table, "axis_cosine", p, "semaxis"):
            if p["per_word"]:
                rows.extend(
                    {**key, "target_group": r.target_group, "target": r.target, "a": a, "b": b, "semaxis": r.value}
                    for r in chosen.itertuples()
                )
                continue
            rows.append(
                {
                    **key,
                    "a": a,
                    "b": b,
                    "targets": ", ".join(groups),
                    "n_words": len(chosen),
                    "semaxis": float(chosen["value"].mean()),
                    **_word_ci(chosen["value"], "mean", p),
                }
            )
        return pd.DataFrame(rows)


class RIPAAnalysis(Analysis):
    """RIPA, Relational Inner Product Association (Ethayarajh et al., 2019), as WEFE computes it.

    For each scored word w and the relation vectors b_i = (x_i - y_i) / ||x_i - y_i|| of the
    position-paired words of two groups (measure ``relation_projection``)::

        ripa(w) = mean_i w · b_i,     sd(w) = population SD over i (WEFE's np.std)
        RIPA    = mean_w ripa(w)

    WEFE pairs the two *target* sets and scores the attribute words (``side=target``);
    ``side=attribute`` pairs two attribute groups and scores the target words. Positive =
    w lies towards the first group of the pair.
    """

    name = "ripa"
    requires = Requirement(
        needs="per-word projections on the relation vector of paired words of two groups (measure relation_projection)",
        roles=("attribute_group",),
        instead="score with the weat scorer and -o measures=[cosine,relation_projection] (docs/weat.md)",
    )
    estimate_column = "ripa"
    description = "RIPA: mean over words of the mean inner product with the unit relation vectors of paired words."
    citation = ETHAYARAJH
    options = (
        Option("a", str, None, "first group of the pairs (default: the one contrast in the table)"),
        Option("b", str, None, "second group of the pairs"),
        Option(
            "side",
            str,
            "auto",
            "which groups are paired: target (WEFE: target sets paired, attribute words scored), attribute, "
            "auto (the one the table has)",
            choices=SIDES,
        ),
        _SCORED,
        *_CI_OPTIONS,
        _BY,
        _PER_WORD,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """RIPA per unit (or per word)."""
        import pandas as pd

        p = self.params
        rows: list[dict] = []
        for key, part in _parts(table, "relation_projection", p["by"], "ripa"):
            side = p["side"]
            paired_attributes = part[part["attribute_group"].str.contains(" - ", regex=False)]
            paired_targets = part[part["target_group"].str.contains(" - ", regex=False)]
            if side == "auto":
                if len(paired_targets) and not len(paired_attributes):
                    side = "target"
                elif len(paired_attributes) and not len(paired_targets):
                    side = "attribute"
                else:
                    raise DataError(f"ripa, {_where(key)}: both target and attribute groups are paired; name side=")
            column, word_group, word = (
                ("target_group", "attribute_group", "attribute")
                if side == "target"
                else ("attribute_group", "target_group", "target")
            )
            chosen, a, b = _contrast_rows(
                paired_targets if side == "target" else paired_attributes, column, p["a"], p["b"], key, "ripa"
            )
            if p["scored"] is not None:
                _chosen(p["scored"], list(dict.fromkeys(chosen[word_group])), key, "scored")
                chosen = chosen[chosen[word_group].isin(p["scored"])]
            per_word = chosen.groupby([word_group, word], sort=False)["value"].agg(
                ripa="mean", sd=lambda v: float(v.std(ddof=0)), n_pairs="size"
            )
            if p["per_word"]:
                rows.extend(
                    {
                        **key,
                        "word_group": g,
                        "word": w,
                        "a": a,
                        "b": b,
                        "side": side,
                        "ripa": r.ripa,
                        "sd": r.sd,
                        "n_pairs": r.n_pairs,
                    }
                    for (g, w), r in per_word.iterrows()
                )
                continue
            rows.append(
                {
                    **key,
                    "a": a,
                    "b": b,
                    "side": side,
                    "n_words": len(per_word),
                    "n_pairs": int(per_word["n_pairs"].max()),
                    "ripa": float(per_word["ripa"].mean()),
                    **_word_ci(per_word["ripa"], "mean", p),
                }
            )
        return pd.DataFrame(rows)


class RNSBAnalysis(Analysis):
    """RNSB, Relative Negative Sentiment Bias (Sweeney & Najafian, 2019).

    A logistic classifier is trained on the vectors of attribute groups A (positive) and B
    (negative) by the scorer (measure ``logit``, log P(A | w) / P(B | w); seeded, see
    :func:`assoc_weat.metrics.classifier_logits`). For the target words w_1..w_n::

        p_i = P(B | w_i) = 1 / (1 + exp(logit_i)),    P_i = p_i / sum_j p_j
        RNSB = KL(P || U) = sum_i P_i log(P_i / (1/n))      (natural log)

    0 = every word equally negative. sweater scores one target group S, WEFE all target sets
    together (``targets``: default all groups). With ``per_word=true`` each word's row has p_i
    (``p_negative``), P_i (``share``) and its term P_i ln(n P_i) of the sum (``rnsb``).
    """

    name = "rnsb"
    requires = Requirement(
        needs="per-word log-odds of a classifier of two attribute groups (measure logit)",
        roles=("attribute_group",),
        instead="score with the weat scorer and -o measures=[cosine,logit] (docs/weat.md)",
    )
    estimate_column = "rnsb"
    description = "RNSB: KL divergence from uniform of the normalised P(B | w) of a logistic classifier of A vs B."
    citation = SWEENEY
    options = (
        Option("a", str, None, "positive attribute group A (default: the one contrast in the table)"),
        Option("b", str, None, "negative attribute group B"),
        Option("targets", list, None, "target groups whose words are scored together (default: all)"),
        _BY,
        _PER_WORD,
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """RNSB per unit (or the probabilities per word)."""
        import numpy as np
        import pandas as pd

        from .metrics import kl_from_uniform

        p = self.params
        rows: list[dict] = []
        for key, chosen, a, b, groups in _contrast_of_targets(table, "logit", p, "rnsb"):
            negative = 1.0 / (1.0 + np.exp(chosen["value"].to_numpy()))
            if p["per_word"]:
                # each word's term P_i ln(n P_i) of the KL divergence: the terms sum to RNSB
                share = negative / negative.sum()
                terms = share * np.log(share * len(share))
                rows.extend(
                    {
                        **key,
                        "target_group": r.target_group,
                        "target": r.target,
                        "a": a,
                        "b": b,
                        "p_negative": float(q),
                        "share": float(s),
                        "rnsb": float(term),
                    }
                    for r, q, s, term in zip(chosen.itertuples(), negative, share, terms)
                )
                continue
            rows.append(
                {
                    **key,
                    "a": a,
                    "b": b,
                    "targets": ", ".join(groups),
                    "n_words": len(chosen),
                    "rnsb": kl_from_uniform(negative),
                }
            )
        return pd.DataFrame(rows)


class NASAnalysis(WEFATAnalysis):
    """NAS, Normalized Association Score, as sweater's ``nas()`` computes it (Pujari et al., 2019).

    Per target word: NAS(w) = [mean_a cos(w, a) - mean_b cos(w, b)] / SD_{x in A ∪ B} cos(w, x),
    with the sample SD (R's ``sd``). It is the WEFAT effect size (Caliskan et al., 2017), so it is
    computed by the ``wefat`` analysis (same options, the permutation p over partitions of A ∪ B
    included); ``nas`` only names it and defaults ``ddof`` to 1, as sweater.
    """

    name = "nas"
    estimate_column = "nas"
    description = "NAS: per target word, s(w, A, B) / SD over A ∪ B (sample SD), as sweater; = WEFAT's score."
    citation = PUJARI

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """WEFAT's per-word rows, with the score also named ``nas``."""
        result = super().run(table)
        result.insert(result.columns.get_loc("effect_size"), "nas", result["effect_size"])
        return result
