"""Shared statistics: pure functions on numpy arrays and pandas tables.

One of the three service modules of the plugin API (docs/plugin-api.md): a plugin imports these
names from ``assoc.stats`` (``from assoc.stats import weat, cosine_matrix``), never from the
modules below it, which may move. The names below are the stable ones: the permutation tests
(:mod:`assoc.stats.permutation`), effect sizes and bootstrap intervals (:mod:`assoc.stats.effect_size`),
correlations (:mod:`assoc.stats.correlations`), WEAT and WEFAT (:mod:`assoc.stats.association_tests`),
standardisation (:mod:`assoc.stats.standardize`), linear mixed models with random intercepts and slopes
(:mod:`assoc.stats.mixed`), ICC and Cronbach's alpha, SEAT as sent-bias computes it
(:mod:`assoc.stats.seat_statistics`), CEAT's sampling and random-effects combination
(:mod:`assoc.stats.ceat_statistics`). Each function's docstring gives its formula and citation. Nothing is
imported until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import lazy_names as _lazy_names

#: public name -> the module that defines it
_LAZY = {
    "AlphaResult": "assoc.stats.reliability",
    "BootstrapInterval": "assoc.stats.effect_size",
    "CEATDraws": "assoc.stats.ceat_statistics",
    "CEATResult": "assoc.stats.ceat_statistics",
    "CEATSamples": "assoc.stats.ceat_statistics",
    "CEATWordSets": "assoc.stats.ceat_statistics",
    "CEAT_INTERSECTIONAL_TESTS": "assoc.stats.ceat_statistics",
    "CorrelationResult": "assoc.stats.correlations",
    "ICCResult": "assoc.stats.icc",
    "LPR_POPULATION_SD": "assoc.stats.constants",
    "MAX_EXACT_PARTITIONS": "assoc.stats.permutation",
    "MixedFit": "assoc.stats.mixed",
    "PermutationResult": "assoc.stats.permutation",
    "RandomEffectsResult": "assoc.stats.ceat_statistics",
    "RowwisePermutationResult": "assoc.stats.permutation",
    "SD_NAMES": "assoc.stats.association_tests",
    "SEATResult": "assoc.stats.seat_statistics",
    "WEATResult": "assoc.stats.association_tests",
    "WEFATResult": "assoc.stats.association_tests",
    "WilliamsResult": "assoc.stats.correlations",
    "association_scores": "assoc.stats.association_tests",
    "bootstrap_interval": "assoc.stats.effect_size",
    "ceat": "assoc.stats.ceat_statistics",
    "ceat_draws": "assoc.stats.ceat_statistics",
    "ceat_effect_sizes": "assoc.stats.ceat_statistics",
    "check_seed": "assoc.stats.permutation",
    "confidence_argument": "assoc.stats.effect_size",
    "correlation": "assoc.stats.correlations",
    "cosine_matrix": "assoc.stats.association_tests",
    "count_partitions": "assoc.stats.permutation",
    "cronbach_alpha": "assoc.stats.reliability",
    "d_to_r": "assoc.stats.effect_size",
    "fisher_interval": "assoc.stats.correlations",
    "fit_mixed": "assoc.stats.mixed",
    "intraclass_correlations": "assoc.stats.icc",
    "normal_approximation_test": "assoc.stats.permutation",
    "permutation_distribution": "assoc.stats.permutation",
    "random_effects": "assoc.stats.ceat_statistics",
    "rowwise_permutation_test": "assoc.stats.permutation",
    "seat": "assoc.stats.seat_statistics",
    "standardized_mean_difference": "assoc.stats.effect_size",
    "standardized_mean_difference_rows": "assoc.stats.effect_size",
    "standardizer": "assoc.stats.effect_size",
    "two_sample_permutation_test": "assoc.stats.permutation",
    "weat": "assoc.stats.association_tests",
    "wefat": "assoc.stats.association_tests",
    "williams_t": "assoc.stats.correlations",
    "williams_test": "assoc.stats.correlations",
    "zscore": "assoc.stats.standardize",
    "zscore_within": "assoc.stats.standardize",
}

__all__ = [
    "AlphaResult",
    "BootstrapInterval",
    "CEATDraws",
    "CEATResult",
    "CEATSamples",
    "CEATWordSets",
    "CEAT_INTERSECTIONAL_TESTS",
    "CorrelationResult",
    "ICCResult",
    "LPR_POPULATION_SD",
    "MAX_EXACT_PARTITIONS",
    "MixedFit",
    "PermutationResult",
    "RandomEffectsResult",
    "RowwisePermutationResult",
    "SD_NAMES",
    "SEATResult",
    "WEATResult",
    "WEFATResult",
    "WilliamsResult",
    "association_scores",
    "bootstrap_interval",
    "ceat",
    "ceat_draws",
    "ceat_effect_sizes",
    "check_seed",
    "confidence_argument",
    "correlation",
    "cosine_matrix",
    "count_partitions",
    "cronbach_alpha",
    "d_to_r",
    "fisher_interval",
    "fit_mixed",
    "intraclass_correlations",
    "normal_approximation_test",
    "permutation_distribution",
    "random_effects",
    "rowwise_permutation_test",
    "seat",
    "standardized_mean_difference",
    "standardized_mean_difference_rows",
    "standardizer",
    "two_sample_permutation_test",
    "weat",
    "wefat",
    "williams_t",
    "williams_test",
    "zscore",
    "zscore_within",
]


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover
    from assoc.stats.association_tests import (
        SD_NAMES,
        WEATResult,
        WEFATResult,
        association_scores,
        cosine_matrix,
        weat,
        wefat,
    )
    from assoc.stats.ceat_statistics import (
        CEAT_INTERSECTIONAL_TESTS,
        CEATDraws,
        CEATResult,
        CEATSamples,
        CEATWordSets,
        RandomEffectsResult,
        ceat,
        ceat_draws,
        ceat_effect_sizes,
        random_effects,
    )
    from assoc.stats.constants import LPR_POPULATION_SD
    from assoc.stats.correlations import (
        CorrelationResult,
        WilliamsResult,
        correlation,
        fisher_interval,
        williams_t,
        williams_test,
    )
    from assoc.stats.effect_size import (
        BootstrapInterval,
        bootstrap_interval,
        confidence_argument,
        d_to_r,
        standardized_mean_difference,
        standardized_mean_difference_rows,
        standardizer,
    )
    from assoc.stats.icc import ICCResult, intraclass_correlations
    from assoc.stats.mixed import MixedFit, fit_mixed
    from assoc.stats.permutation import (
        MAX_EXACT_PARTITIONS,
        PermutationResult,
        RowwisePermutationResult,
        check_seed,
        count_partitions,
        normal_approximation_test,
        permutation_distribution,
        rowwise_permutation_test,
        two_sample_permutation_test,
    )
    from assoc.stats.reliability import AlphaResult, cronbach_alpha
    from assoc.stats.seat_statistics import SEATResult, seat
    from assoc.stats.standardize import zscore, zscore_within
