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

from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

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
#: Options ``a`` and ``b`` of the analyses of mean vectors (RND, ECT).
_CENTROID_GROUPS = (
    Option("a", str, None, "group A whose mean vector is compared (default: the first of two)"),
    Option("b", str, None, "group B (default: the second)"),
)
_SIDE = Option(
    "side",
    str,
    "auto",
    "which groups' mean vectors: attribute (score targets against A and B, as sweater and Garg et al.), "
    "target (score attribute words against two target groups, as WEFE), auto (the one the table fits)",
    choices=SIDES,
)


# ------------------------------------------------------------------ what the seven metrics share


@dataclass
class ScoredWords:
    """One unit of ``by`` as a word source reads it: the scored words and what they were scored against.

    ``labels`` (``a``, ``b``, ``side``) go into every result row, ``groups`` (the scored groups:
    ``targets``, ``attributes``) into the summary only. ``words``: the source's identity columns,
    then the values read (``a`` and ``b``, else ``value``). ``facts``: what a summary reports
    beyond the words (MAC's numbers of words and words dropped as missing).
    """

    key: dict[str, str]
    labels: dict[str, str]
    words: pd.DataFrame
    groups: dict[str, str] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WordSource:
    """How a metric finds its scored words: a reader of the table and the columns that name a word.

    ``read(table, measure, params, what)`` yields one :class:`ScoredWords` per unit of ``by``,
    after choosing the groups with the analysis' options; ``what`` (the analysis' name) starts
    its error messages.
    """

    identity: tuple[str, ...]
    read: Callable[[pd.DataFrame, str, dict[str, Any], str], Iterator[ScoredWords]]


class MetricAnalysis(Analysis):
    """The shared pattern of ``mac``, ``rnd``, ``ect``, ``semaxis``, ``ripa`` and ``rnsb``, written once.

    A metric declares where its words come from (``source``, one of the four word sources below,
    and ``measure``), what each word's values are (:meth:`per_word_values`) and how they are
    summarised (:meth:`summary`). :meth:`run` does the rest alike for all: one result per unit
    of ``by``; with ``per_word=true`` one row per word (the unit's key, the word, the labels
    ``a``, ``b``, ``side``, its values), else one summary row (the key, the labels, the scored
    groups, then the summary's columns).
    """

    source: ClassVar[WordSource]
    #: The measure whose rows are read (RND: chosen by its option ``distance``).
    measure: ClassVar[str]

    def read_measure(self) -> str:
        """The measure whose rows this run reads."""
        return self.measure

    @abstractmethod
    def per_word_values(self, scored: ScoredWords) -> pd.DataFrame:
        """One row per scored word: the source's identity columns, then the metric's per-word columns."""

    @abstractmethod
    def summary(self, scored: ScoredWords, values: pd.DataFrame) -> dict[str, Any]:
        """The summary row's columns after the key, labels and groups: counts, the estimate, CI, settings."""

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """The metric per unit of ``by`` (or per scored word with ``per_word=true``)."""
        import pandas as pd

        identity = self.source.identity
        rows: list[dict[str, Any]] = []
        for scored in self.source.read(table, self.read_measure(), self.params, self.name):
            values = self.per_word_values(scored)
            if not self.params["per_word"]:
                rows.append({**scored.key, **scored.labels, **scored.groups, **self.summary(scored, values)})
                continue
            for word in values.to_dict("records"):
                named = {column: word.pop(column) for column in identity}
                rows.append({**scored.key, **named, **scored.labels, **word})
        return pd.DataFrame(rows)


def _parts(table: pd.DataFrame, measure: str, by: list[str] | None, what: str) -> Iterator[tuple[dict, pd.DataFrame]]:
    """The rows of ``measure``, one frame per ``by`` group, with the group's key."""
    from .blocks import resolve_by

    rows = table[table["measure"] == measure]
    if rows.empty:
        have = ", ".join(sorted(map(str, table["measure"].unique())))
        raise DataError(
            f"{what} reads rows of measure {measure!r}, the table has none (it has: {have}); score with the "
            f"weat scorer's option measures=[..., {measure}] (see docs/weat.md)"
        )
    columns = resolve_by(table, by, _BY_DEFAULT)
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


def _chosen(given: list[str] | None, available: list[str], key: dict, kind: str) -> list[str]:
    if given is None:
        return list(available)
    unknown = [g for g in given if g not in available]
    if unknown:
        raise DataError(f"{_where(key)}: no {kind} group {unknown[0]!r} (available: {', '.join(map(repr, available))})")
    return list(given)


def _scored(words: pd.DataFrame, scored: list[str] | None, key: dict) -> pd.DataFrame:
    """The rows of ``words`` (column ``word_group``) in the groups ``scored`` (all when None)."""
    if scored is None:
        return words
    groups = list(dict.fromkeys(words["word_group"]))
    _chosen(scored, groups, key, "scored")
    return words[words["word_group"].isin(scored)].reset_index(drop=True)


def _reads(needs: str, measure: str) -> Requirement:
    """The requirement of a metric of the weat scorer's extra measures: rows of ``measure``, scored as it says."""
    return Requirement(
        needs=needs,
        roles=("attribute_group",),
        instead=f"score with the weat scorer and -o measures=[cosine,{measure}] (docs/weat.md)",
    )


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


# ------------------------------------------------------------------ the four word sources


def _cosine_cells(table: pd.DataFrame, measure: str, p: dict[str, Any], what: str) -> Iterator[ScoredWords]:
    """MAC's words: per unit, each target word's mean ``measure`` value with each chosen attribute group.

    The units, and the words dropped as missing, are those of the WEAT analyses
    (:func:`assoc_weat.blocks.units`); options ``targets`` and ``attributes`` choose the groups.
    """
    import pandas as pd

    from .blocks import resolve_by, units

    cosines = table[table["measure"] == measure]
    if cosines.empty:
        raise DataError(f"{what} reads rows of measure {measure!r} (target-attribute pairs); the table has none")
    for unit in units(cosines, resolve_by(table, p["by"], _BY_DEFAULT)):
        targets = _chosen(p["targets"], unit.target_groups, unit.key, "target")
        attributes = _chosen(p["attributes"], unit.attribute_groups, unit.key, "attribute")
        cells = [
            {"target_group": tg, "target": word, "attribute_group": ag, "value": float(value)}
            for tg in targets
            for ag in attributes
            for word, value in zip(unit.words(tg), unit.block(tg, ag).mean(axis=1))
        ]
        yield ScoredWords(
            unit.key,
            {},
            pd.DataFrame(cells, columns=["target_group", "target", "attribute_group", "value"]),
            groups={"targets": ", ".join(targets), "attributes": ", ".join(attributes)},
            facts={
                "n_targets": sum(unit.count("target", g) for g in targets),
                "n_attributes": sum(unit.count("attribute", g) for g in attributes),
                "dropped": ", ".join(unit.dropped),
            },
        )


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


def _centroid_words(table: pd.DataFrame, measure: str, p: dict[str, Any], what: str) -> Iterator[ScoredWords]:
    """RND's and ECT's words: each scored word's values against the mean vectors of two groups a and b.

    Per unit of ``by``: the rows of ``measure``, the side the mean vectors are on (``side``), the
    two groups (``a``, ``b``, else the unit's two), and the scored words (``scored``) with columns
    ``word_group``, ``word``, ``a``, ``b``.
    """
    for key, part in _parts(table, measure, p["by"], what):
        side, part = _centroid_side(part, p["side"], key, what)
        groups = list(dict.fromkeys(part["attribute_group" if side == "attribute" else "target_group"]))
        a, b = _two(groups, p["a"], p["b"], key, side)
        words = _scored(_centroid_values(part, side, a, b), p["scored"], key)
        yield ScoredWords(key, {"a": a, "b": b, "side": side}, words)


def _contrast_rows(
    part: pd.DataFrame, column: str, a: str | None, b: str | None, key: dict, what: str
) -> tuple[pd.DataFrame, str, str]:
    """Rows of one ``"A - B"`` group in ``column``; a ``"B - A"`` group counts negated. Returns (rows, a, b)."""
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


def _contrast_words(table: pd.DataFrame, measure: str, p: dict[str, Any], what: str) -> Iterator[ScoredWords]:
    """SemAxis' and RNSB's words: the target words' rows of one attribute contrast (see :func:`_contrast_rows`).

    Per unit of ``by``; the target groups are the option ``targets``, or all of them.
    """
    for key, part in _parts(table, measure, p["by"], what):
        chosen, a, b = _contrast_rows(part, "attribute_group", p["a"], p["b"], key, what)
        groups = _chosen(p["targets"], list(dict.fromkeys(chosen["target_group"])), key, "target")
        words = chosen[chosen["target_group"].isin(groups)]
        yield ScoredWords(key, {"a": a, "b": b}, words, groups={"targets": ", ".join(groups)})


def _relation_side(part: pd.DataFrame, side: str, key: dict, what: str) -> tuple[str, pd.DataFrame]:
    """The orientation of relation rows: ``target`` (target groups paired; attribute words scored) or ``attribute``."""
    paired_attributes = part[part["attribute_group"].str.contains(" - ", regex=False)]
    paired_targets = part[part["target_group"].str.contains(" - ", regex=False)]
    if side == "auto":
        if len(paired_targets) and not len(paired_attributes):
            side = "target"
        elif len(paired_attributes) and not len(paired_targets):
            side = "attribute"
        else:
            raise DataError(f"{what}, {_where(key)}: both target and attribute groups are paired; name side=")
    return side, paired_targets if side == "target" else paired_attributes


def _relation_words(table: pd.DataFrame, measure: str, p: dict[str, Any], what: str) -> Iterator[ScoredWords]:
    """RIPA's words: each scored word's projections on the relation vectors of the pairs of a and b.

    One row per scored word and pair (column ``value``); the pairs are of target groups
    (``side=target``, the attribute words scored) or of attribute groups.
    """
    for key, part in _parts(table, measure, p["by"], what):
        side, paired = _relation_side(part, p["side"], key, what)
        column, word_group, word = (
            ("target_group", "attribute_group", "attribute")
            if side == "target"
            else ("attribute_group", "target_group", "target")
        )
        chosen, a, b = _contrast_rows(paired, column, p["a"], p["b"], key, what)
        words = chosen.rename(columns={word_group: "word_group", word: "word"})[["word_group", "word", "value"]]
        yield ScoredWords(key, {"a": a, "b": b, "side": side}, _scored(words, p["scored"], key))


#: MAC's cells: (target word, attribute group) mean values.
COSINE_CELLS = WordSource(("target_group", "target", "attribute_group"), _cosine_cells)
#: RND's and ECT's words: values against two groups' mean vectors, on either side.
CENTROID_WORDS = WordSource(("word_group", "word"), _centroid_words)
#: SemAxis' and RNSB's words: target words' values for one attribute contrast.
CONTRAST_WORDS = WordSource(("target_group", "target"), _contrast_words)
#: RIPA's words: projections on the relation vectors of paired words, on either side.
RELATION_WORDS = WordSource(("word_group", "word"), _relation_words)


# ------------------------------------------------------------------ the metrics: each its specifics


class MACAnalysis(MetricAnalysis):
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
    source = COSINE_CELLS
    measure = "cosine"
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

    def per_word_values(self, scored: ScoredWords) -> pd.DataFrame:
        """Each (target word, attribute group): its mean cosine, or 1 - it with ``scale="distance"``."""
        cells = scored.words
        mac = 1.0 - cells["value"] if self.params["scale"] == "distance" else cells["value"]
        return cells[["target_group", "target", "attribute_group"]].assign(mac=mac, scale=self.params["scale"])

    def summary(self, scored: ScoredWords, values: pd.DataFrame) -> dict[str, Any]:
        """MAC over all cells; the CI resamples target words (each word's mean over its cells)."""
        per_target = values.groupby(["target_group", "target"], sort=False)["mac"].mean()
        return {
            "n_targets": scored.facts["n_targets"],
            "n_attributes": scored.facts["n_attributes"],
            "mac": float(values["mac"].to_numpy().mean()),
            "scale": self.params["scale"],
            **_word_ci(per_target, "mean", self.params),
            "dropped": scored.facts["dropped"],
        }


class RNDAnalysis(MetricAnalysis):
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
    source = CENTROID_WORDS
    measure = "centroid_distance"
    # two attribute groups (sweater) or two target groups and one attribute group (WEFE's query shape):
    # a requirement cannot say "or", so run() refuses a table with neither (_centroid_side)
    requires = _reads(
        "per-word distances (measure centroid_distance) or cosines (centroid_cosine) to the mean vectors "
        "of two attribute groups or of two target groups",
        measure,
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

    def read_measure(self) -> str:
        """``centroid_distance``, or ``centroid_cosine`` with ``distance="cosine"``."""
        return self.measure if self.params["distance"] == "euclidean" else "centroid_cosine"

    def per_word_values(self, scored: ScoredWords) -> pd.DataFrame:
        """rnd(w) = d(w, m_A) - d(w, m_B), beside the two distances (or cosines)."""
        words = scored.words[["word_group", "word", "a", "b"]]
        return words.rename(columns={"a": "distance_a", "b": "distance_b"}).assign(rnd=words["a"] - words["b"])

    def summary(self, scored: ScoredWords, values: pd.DataFrame) -> dict[str, Any]:
        """The sum (or mean) over words, with the bootstrap CI of the same reduction."""
        p = self.params
        total = float(values["rnd"].sum())
        return {
            "n_words": len(values),
            "rnd": total if p["reduce"] == "sum" else total / len(values),
            **_word_ci(values["rnd"], p["reduce"], p),
            "reduce": p["reduce"],
            "distance": p["distance"],
        }


class ECTAnalysis(MetricAnalysis):
    """ECT, Embedding Coherence Test (Dev & Phillips, 2019).

    For the scored words w (measure ``centroid_cosine``), u_A(w) = cos(w, m_A) and
    u_B(w) = cos(w, m_B); ECT = Spearman's rho of u_A and u_B over the words (1 = coherent,
    no bias). sweater scores the target words against attribute groups A, B
    (``side=attribute``), WEFE the attribute words against two target groups (``side=target``).
    With ``per_word=true`` each word's row has u_A, u_B and the set's ECT.
    """

    name = "ect"
    source = CENTROID_WORDS
    measure = "centroid_cosine"
    # two attribute groups or two target groups (WEFE's query shape): see RNDAnalysis.requires
    requires = _reads(
        "per-word cosines with the mean vectors of two attribute groups or of two target groups "
        "(measure centroid_cosine)",
        measure,
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

    def per_word_values(self, scored: ScoredWords) -> pd.DataFrame:
        """u_A(w), u_B(w) and the set's ECT: a property of the word set, repeated in each word's row."""
        from .metrics import spearman

        words = scored.words[["word_group", "word", "a", "b"]]
        if len(words) < 2:
            raise DataError(f"ect, {_where(scored.key)}: a rank correlation needs at least 2 scored words")
        ect = spearman(words["a"].to_numpy(), words["b"].to_numpy())
        return words.rename(columns={"a": "u_a", "b": "u_b"}).assign(ect=ect)

    def summary(self, scored: ScoredWords, values: pd.DataFrame) -> dict[str, Any]:
        """Spearman's rho of u_A and u_B over the words."""
        return {"n_words": len(values), "ect": float(values["ect"].iloc[0])}


class SemAxisAnalysis(MetricAnalysis):
    """SemAxis (An et al., 2018), as sweater's ``semaxis(l = ...)`` computes it.

    score(w) = cos(w, m_A - m_B) for every target word w (measure ``axis_cosine``); positive =
    closer to pole A. The summary is the mean score over the target words (sweater reports the
    per-word scores only: ``per_word=true``). The pole means m_A, m_B are of the pole words'
    vectors (sweater's default ``l = 0``), or, with the scorer's ``semaxis_neighbours=l``, of each
    pole word's vector averaged with its l nearest neighbours' (An et al.'s augmentation, sec. 3.2).
    """

    name = "semaxis"
    source = CONTRAST_WORDS
    measure = "axis_cosine"
    # no at_least: a table of axis_cosine rows alone has one attribute_group, the contrast "A - B"
    requires = _reads("per-word cosines with the axis between two attribute groups (measure axis_cosine)", measure)
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

    def per_word_values(self, scored: ScoredWords) -> pd.DataFrame:
        """score(w) = cos(w, m_A - m_B)."""
        words = scored.words
        return words[["target_group", "target"]].assign(semaxis=words["value"])

    def summary(self, scored: ScoredWords, values: pd.DataFrame) -> dict[str, Any]:
        """The mean score over the words, with its bootstrap CI."""
        return {
            "n_words": len(values),
            "semaxis": float(values["semaxis"].mean()),
            **_word_ci(values["semaxis"], "mean", self.params),
        }


class RIPAAnalysis(MetricAnalysis):
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
    source = RELATION_WORDS
    measure = "relation_projection"
    requires = _reads(
        "per-word projections on the relation vector of paired words of two groups (measure relation_projection)",
        measure,
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

    def per_word_values(self, scored: ScoredWords) -> pd.DataFrame:
        """ripa(w), the mean over the pairs of w · b_i, their population SD and the number of pairs."""
        projections = scored.words.groupby(["word_group", "word"], sort=False)["value"]
        return projections.agg(ripa="mean", sd=lambda v: float(v.std(ddof=0)), n_pairs="size").reset_index()

    def summary(self, scored: ScoredWords, values: pd.DataFrame) -> dict[str, Any]:
        """The mean of ripa(w) over the words, with its bootstrap CI."""
        return {
            "n_words": len(values),
            "n_pairs": int(values["n_pairs"].max()),
            "ripa": float(values["ripa"].mean()),
            **_word_ci(values["ripa"], "mean", self.params),
        }


class RNSBAnalysis(MetricAnalysis):
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
    source = CONTRAST_WORDS
    measure = "logit"
    requires = _reads("per-word log-odds of a classifier of two attribute groups (measure logit)", measure)
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

    def per_word_values(self, scored: ScoredWords) -> pd.DataFrame:
        """p_i = P(B | w_i), P_i = p_i / sum_j p_j and each word's term P_i ln(n P_i) of the KL divergence."""
        import numpy as np

        words = scored.words
        negative = 1.0 / (1.0 + np.exp(words["value"].to_numpy()))
        share = negative / negative.sum()
        with np.errstate(divide="ignore", invalid="ignore"):  # P_i = 0 (an overflowed logit): a NaN term
            terms = share * np.log(share * len(share))
        return words[["target_group", "target"]].assign(p_negative=negative, share=share, rnsb=terms)

    def summary(self, scored: ScoredWords, values: pd.DataFrame) -> dict[str, Any]:
        """KL(P || U) over the words: the sum of their terms."""
        from .metrics import kl_from_uniform

        return {"n_words": len(values), "rnsb": kl_from_uniform(values["p_negative"].to_numpy())}


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
