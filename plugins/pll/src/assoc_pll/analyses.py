"""Analyses of ``pll`` tables: the Bayes-rule posterior over variants and its fit to human choices."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc import REQUIRED, Analysis, Option, Requirement, positive

from .posterior import AVERAGEABLE, loglik_table, posterior_table, read_choices
from .prior import DEFAULT_FLOOR, PRIOR_SOURCES

if TYPE_CHECKING:
    import pandas as pd

WATSON = (
    "Watson, J., Beekhuizen, B., & Stevenson, S. (2023). What social attitudes about gender does BERT "
    "encode? Leveraging insights from psycholinguistics. Proceedings of the 61st Annual Meeting of the "
    "Association for Computational Linguistics (ACL 2023)"
)


def _counts_source(value: Any) -> Any:
    if value is None or isinstance(value, (str, Path, Mapping)):
        return value
    raise ValueError(f"must be a CSV path or a mapping of variant to count, got {type(value).__name__}")


def _roles(value: list) -> list:
    for role in value:
        if role not in AVERAGEABLE:
            raise ValueError(f"takes 'target', 'attribute' and/or 'context', got {role!r}")
    return value


def _choices_source(value: Any) -> Any:
    import pandas as pd

    if isinstance(value, (str, Path, pd.DataFrame)):
        return value
    raise ValueError(f"must be a CSV path or a data frame, got {type(value).__name__}")


PRIOR_OPTIONS = (
    Option(
        "prior",
        str,
        "wordfreq",
        "where P(V) comes from: 'wordfreq' (offline word frequencies), 'counts' (option counts) or 'uniform'",
        choices=PRIOR_SOURCES,
    ),
    Option(
        "counts",
        object,
        None,
        "with prior='counts': a CSV with columns variant,count or a mapping variant -> count",
        check=_counts_source,
    ),
    Option("lang", str, "en", "language of the wordfreq frequencies"),
    Option(
        "floor",
        float,
        DEFAULT_FLOOR,
        "frequency given to variants wordfreq does not list (frequency 0)",
        check=positive,
    ),
    Option(
        "average_over",
        list,
        [],
        "what P(V|C) is averaged over: the fillers of 'attribute' and/or "
        "'target' (Watson et al.: attribute, the 50 states), and/or the query frames ('context')",
        check=_roles,
    ),
)


def posterior_from_options(table: pd.DataFrame, params: Mapping[str, Any]) -> pd.DataFrame:
    """P(V|C) of a ``pll`` table with the prior that ``params`` (the :data:`PRIOR_OPTIONS`) describe."""
    return posterior_table(
        table,
        prior=params["prior"],
        counts=params["counts"],
        lang=params["lang"],
        floor=params["floor"],
        average_over=params["average_over"],
    )


class PosteriorAnalysis(Analysis):
    """Posterior probability of each variant given its context (Bayes' rule).

    P(V|C) = P(C|V) P(V) / sum_V' P(C|V') P(V') over the variants of each design
    (Watson et al., 2023, Eq. 1), with log P(C|V) the context PLL of a ``pll`` table
    (``tokens_scored=context``) and P(V) = f(V) / sum_V' f(V') a frequency prior; optionally
    averaged over fillers (Watson et al. average over the 50 states).
    """

    name = "posterior"
    requires = Requirement(
        needs="a pll table (measure pll) or a clm table (measure sentence) of the [MASK] variants of each design",
        scorers=("pll", "clm"),
        measures=("pll", "sentence"),
        conventions={"reduction": ("sum",)},  # Bayes' rule needs log P(C|V): clm's mean per token is none
        instead="score with pll (assoc score --scorer pll --option tokens_scored=context ...) or, for a causal "
        "LM, clm (measure sentence) and use prior=uniform",
    )
    estimate_column = "posterior"
    description = (
        "Bayes-rule choice probabilities P(V|C) of the [MASK] variants of each design, from a pll "
        "table (tokens_scored=context) and a frequency prior (Watson et al. 2023)"
    )
    citation = WATSON
    options = PRIOR_OPTIONS

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Compute P(V|C) for each variant of each design and condition."""
        return posterior_from_options(table, self.params)


class LoglikAnalysis(Analysis):
    """Average log-likelihood of observed human choices under the model's P(V|C).

        LL = sum_k w_k log P(v_k | C_k) / sum_k w_k

    over the observed choices k (variant v_k in condition C_k, weight w_k = count or
    proportion), per participant group (Watson et al., 2023, Tables 1 and 5); with
    ``baseline``, the same for the prior P(V) alone. Natural logarithms.
    """

    name = "loglik"
    requires = Requirement(
        needs="a pll table (measure pll) or a clm table (measure sentence) of the [MASK] variants of each design",
        scorers=("pll", "clm"),
        measures=("pll", "sentence"),
        conventions={"reduction": ("sum",)},  # Bayes' rule needs log P(C|V): clm's mean per token is none
        instead="score with pll (assoc score --scorer pll --option tokens_scored=context ...) or, for a causal "
        "LM, clm (measure sentence) and use prior=uniform",
    )
    estimate_column = "mean_loglik"
    description = (
        "Average log-likelihood of human choices (CSV of counts or proportions per variant and "
        "condition) under P(V|C), per participant group (Watson et al. 2023, Tables 1 and 5)"
    )
    citation = WATSON
    options = PRIOR_OPTIONS + (
        Option(
            "choices",
            object,
            REQUIRED,
            "CSV (or data frame) of human choices: design, mask, optional "
            "group and condition columns (target_group, target, ...), count or proportion",
            check=_choices_source,
        ),
        Option(
            "by",
            list,
            [],
            "condition columns to break the fit down by (e.g. target_group); an 'all' row is always included",
        ),
        Option("baseline", bool, True, "also report the fit of the frequency prior alone (predictor 'prior')"),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Compute the weighted mean log-likelihood of the observed human choices."""
        p = self.params
        posterior = posterior_from_options(table, p)
        return loglik_table(posterior, read_choices(p["choices"]), by=p["by"], baseline=p["baseline"])
