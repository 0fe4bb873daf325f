"""Shared statistics: pure functions on numpy arrays and pandas tables.

One of the three service modules of the plugin API (docs/plugin-api.md): a plugin imports these
names from ``assoc.stats`` (``from assoc.stats import weat, cosine_matrix``), never from the
modules below it, which may move. The names below are the stable ones: the permutation tests
(:mod:`assoc.stats.permutation`), effect sizes and bootstrap intervals (:mod:`assoc.stats.effect_size`),
correlations (:mod:`assoc.stats.correlations`), WEAT and WEFAT (:mod:`assoc.stats.association_tests`),
standardisation (:mod:`assoc.stats.standardize`), linear mixed models with random intercepts and slopes
(:mod:`assoc.stats.mixed`), ICC and Cronbach's alpha. Each function's docstring gives its formula and
citation. Nothing is imported until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import public_face as _public_face

# The public names, each declared once by its import (`name as name`: what mypy and IDEs read),
# imported on first use; __all__ lists them (assoc.infra.importhooks.public_face).
if TYPE_CHECKING:  # pragma: no cover
    from assoc.stats.association_tests import SD_NAMES as SD_NAMES
    from assoc.stats.association_tests import WEATResult as WEATResult
    from assoc.stats.association_tests import WEFATResult as WEFATResult
    from assoc.stats.association_tests import association_scores as association_scores
    from assoc.stats.association_tests import cosine_matrix as cosine_matrix
    from assoc.stats.association_tests import weat as weat
    from assoc.stats.association_tests import wefat as wefat
    from assoc.stats.ceat_statistics import CEAT_INTERSECTIONAL_TESTS as CEAT_INTERSECTIONAL_TESTS
    from assoc.stats.ceat_statistics import CEATDraws as CEATDraws
    from assoc.stats.ceat_statistics import CEATResult as CEATResult
    from assoc.stats.ceat_statistics import CEATSamples as CEATSamples
    from assoc.stats.ceat_statistics import CEATWordSets as CEATWordSets
    from assoc.stats.ceat_statistics import RandomEffectsResult as RandomEffectsResult
    from assoc.stats.ceat_statistics import ceat as ceat
    from assoc.stats.ceat_statistics import ceat_draws as ceat_draws
    from assoc.stats.ceat_statistics import ceat_effect_sizes as ceat_effect_sizes
    from assoc.stats.ceat_statistics import random_effects as random_effects
    from assoc.stats.constants import LPR_POPULATION_SD as LPR_POPULATION_SD
    from assoc.stats.correlations import CorrelationResult as CorrelationResult
    from assoc.stats.correlations import WilliamsResult as WilliamsResult
    from assoc.stats.correlations import correlation as correlation
    from assoc.stats.correlations import fisher_interval as fisher_interval
    from assoc.stats.correlations import williams_t as williams_t
    from assoc.stats.correlations import williams_test as williams_test
    from assoc.stats.effect_size import BootstrapInterval as BootstrapInterval
    from assoc.stats.effect_size import bootstrap_interval as bootstrap_interval
    from assoc.stats.effect_size import confidence_argument as confidence_argument
    from assoc.stats.effect_size import d_to_r as d_to_r
    from assoc.stats.effect_size import standardized_mean_difference as standardized_mean_difference
    from assoc.stats.effect_size import standardized_mean_difference_rows as standardized_mean_difference_rows
    from assoc.stats.effect_size import standardizer as standardizer
    from assoc.stats.icc import ICCResult as ICCResult
    from assoc.stats.icc import intraclass_correlations as intraclass_correlations
    from assoc.stats.mixed import MixedFit as MixedFit
    from assoc.stats.mixed import fit_mixed as fit_mixed
    from assoc.stats.permutation import MAX_EXACT_PARTITIONS as MAX_EXACT_PARTITIONS
    from assoc.stats.permutation import PermutationResult as PermutationResult
    from assoc.stats.permutation import RowwisePermutationResult as RowwisePermutationResult
    from assoc.stats.permutation import check_seed as check_seed
    from assoc.stats.permutation import count_partitions as count_partitions
    from assoc.stats.permutation import normal_approximation_test as normal_approximation_test
    from assoc.stats.permutation import permutation_distribution as permutation_distribution
    from assoc.stats.permutation import rowwise_permutation_test as rowwise_permutation_test
    from assoc.stats.permutation import two_sample_permutation_test as two_sample_permutation_test
    from assoc.stats.reliability import AlphaResult as AlphaResult
    from assoc.stats.reliability import cronbach_alpha as cronbach_alpha
    from assoc.stats.seat_statistics import SEATResult as SEATResult
    from assoc.stats.seat_statistics import seat as seat
    from assoc.stats.seat_statistics import seat_from_similarities as seat_from_similarities
    from assoc.stats.standardize import zscore as zscore
    from assoc.stats.standardize import zscore_within as zscore_within

__getattr__, __dir__ = _public_face(globals())
