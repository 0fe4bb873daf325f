"""WEAT and WEFAT statistics (Caliskan, Bryson & Narayanan 2017, *Science* 356:183).

Pure NumPy functions on similarity matrices. A "similarity" is usually a cosine
between word vectors, but nothing here assumes so: the same statistics apply to
any association values (e.g. log probabilities of an FMAT table, Bao 2024).

Notation: X, Y target sets, A, B attribute sets, sim(w, a) the association of
target word w with attribute word a.

* association of one word:      s(w, A, B) = mean_{a in A} sim(w, a) - mean_{b in B} sim(w, b)
* WEAT test statistic:          S(X, Y, A, B) = sum_{x in X} s(x, A, B) - sum_{y in Y} s(y, A, B)
* WEAT effect size:             d = [mean_x s(x, A, B) - mean_y s(y, A, B)] / SD_{w in X ∪ Y} s(w, A, B)
  (sample SD, n-1, by default: this reproduces the published values; population SD as an option)
* WEAT p-value: permutation test of S over partitions of X ∪ Y into sets of sizes |X|, |Y|
  (:mod:`assoc.stats.permutation`; ``strict=True`` counts as sweater does).
* d as a correlation: r = d / sqrt(d^2 + (N^2 - 2N) / (|X| |Y|)), N = |X| + |Y|
  (:func:`assoc.stats.effect_size.d_to_r`; McGrath & Meyer 2006; sweater's ``weat_es(r = TRUE)``).
* WEFAT effect size of one word: s(w, A, B) / SD_{x in A ∪ B} sim(w, x);
  p-value: permutation test over partitions of A ∪ B (Toney & Caliskan 2021, ValNorm).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from assoc.errors import DataError, OptionError
from assoc.stats.budget import check_resampling_size, resampling_bar
from assoc.stats.effect_size import BootstrapInterval, confidence_argument, d_to_r, standardized_mean_difference
from assoc.stats.permutation import (
    Alternative,
    PermutationResult,
    check_seed,
    count_partitions,
    rowwise_permutation_test,
    two_sample_permutation_test,
)
from assoc.stats.samples import negligible_spread

SD_NAMES = {1: "sample", 0: "population"}


def cosine_matrix(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """cos(u_i, v_j) = u_i·v_j / (|u_i| |v_j|) for every row u_i of ``left`` and v_j of ``right``.

    A zero vector has no direction: its cosines are NaN rather than a silent 0.
    """
    left = np.asarray(left, dtype=np.float64)
    right = np.asarray(right, dtype=np.float64)
    if left.ndim != 2 or right.ndim != 2 or left.shape[1] != right.shape[1]:
        raise DataError(f"cosine_matrix needs two 2-D arrays with equal widths, got {left.shape} and {right.shape}")
    with np.errstate(divide="ignore", invalid="ignore"):
        left_unit = left / np.linalg.norm(left, axis=1, keepdims=True)
        right_unit = right / np.linalg.norm(right, axis=1, keepdims=True)
    return left_unit @ right_unit.T


def association_scores(sim_a: np.ndarray, sim_b: np.ndarray) -> np.ndarray:
    """s(w, A, B) per row: row mean of ``sim_a`` (words × A) minus row mean of ``sim_b`` (words × B)."""
    sim_a, sim_b = _matrix(sim_a, "sim_a"), _matrix(sim_b, "sim_b")
    if sim_a.shape[0] != sim_b.shape[0]:
        raise DataError(f"sim_a has {sim_a.shape[0]} rows but sim_b has {sim_b.shape[0]}")
    return sim_a.mean(axis=1) - sim_b.mean(axis=1)


@dataclass(frozen=True)
class WEATResult:
    """A WEAT: statistic, effect size, p-value, and what produced them.

    ``sd`` is ``"sample"`` or ``"population"``; ``p_method`` is ``"exact"`` or
    ``"sampled"`` (:class:`~assoc.stats.permutation.PermutationResult`).
    """

    statistic: float
    effect_size: float
    sd: str
    p_value: float
    p_method: str
    n_permutations: int
    alternative: str
    n_x: int
    n_y: int
    mean_x: float
    mean_y: float
    ci: BootstrapInterval | None = None
    effect_size_r: float = math.nan
    strict: bool = False


def weat(
    sim_xa: np.ndarray,
    sim_xb: np.ndarray,
    sim_ya: np.ndarray,
    sim_yb: np.ndarray,
    *,
    ddof: int = 1,
    alternative: Alternative = "greater",
    exact_limit: int = 100_000,
    n_resamples: int = 100_000,
    seed: int | None = None,
    n_bootstrap: int = 0,
    confidence: float = 0.95,
    level: float | None = None,
    strict: bool = False,
) -> WEATResult:
    """The WEAT of Caliskan et al. (2017) from the four similarity blocks.

    Parameters
    ----------
    sim_xa, sim_xb, sim_ya, sim_yb
        Similarities of X (rows) with A, X with B,
        Y with A, Y with B (columns = attribute words).
    ddof
        1 = sample SD (Caliskan's published values), 0 = population SD.
    alternative, exact_limit, n_resamples, seed
        Of the permutation test
        (:func:`~assoc.stats.permutation.two_sample_permutation_test`, statistic S).
    n_bootstrap
        If > 0, a percentile bootstrap CI for d with that many
        resamples, resampling words with replacement within each of X, Y, A
        and B (set sizes kept), so the interval reflects the choice of both
        target and attribute words.
    confidence
        Confidence level of the CI (``level`` is its former name, still accepted with a
        :class:`DeprecationWarning`).
    strict
        Count only strictly greater partitions, without the +1 of the sampled test
        (sweater's p; :mod:`assoc.stats.permutation`). Default: ties count (``>=``).

    The result also carries d as a point-biserial correlation, ``effect_size_r``
    (:func:`~assoc.stats.effect_size.d_to_r`).
    """
    level = confidence_argument(confidence, level, "weat")
    sim_xa, sim_xb = _matrix(sim_xa, "sim_xa"), _matrix(sim_xb, "sim_xb")
    sim_ya, sim_yb = _matrix(sim_ya, "sim_ya"), _matrix(sim_yb, "sim_yb")
    _check_blocks(sim_xa, sim_xb, sim_ya, sim_yb)
    if ddof not in SD_NAMES:
        raise OptionError(f"ddof must be 1 (sample SD) or 0 (population SD), not {ddof!r}")
    check_seed(seed)
    s_x = association_scores(sim_xa, sim_xb)
    s_y = association_scores(sim_ya, sim_yb)
    test: PermutationResult = two_sample_permutation_test(
        s_x,
        s_y,
        statistic="sum_difference",
        alternative=alternative,
        exact_limit=exact_limit,
        n_resamples=n_resamples,
        seed=seed,
        strict=strict,
    )
    d = standardized_mean_difference(s_x, s_y, sd="all", ddof=ddof)
    ci = None
    if n_bootstrap:
        ci = _bootstrap_weat(sim_xa, sim_xb, sim_ya, sim_yb, ddof=ddof, n_resamples=n_bootstrap, level=level, seed=seed)
    return WEATResult(
        statistic=test.statistic,
        effect_size=d,
        sd=SD_NAMES[ddof],
        p_value=test.p_value,
        p_method=test.method,
        n_permutations=test.n_permutations,
        alternative=alternative,
        n_x=s_x.size,
        n_y=s_y.size,
        mean_x=float(s_x.mean()),
        mean_y=float(s_y.mean()),
        ci=ci,
        effect_size_r=d_to_r(d, s_x.size, s_y.size) if s_x.size + s_y.size >= 3 else math.nan,
        strict=strict,
    )


def _bootstrap_weat(sim_xa, sim_xb, sim_ya, sim_yb, *, ddof, n_resamples, level, seed) -> BootstrapInterval:
    if not 0.0 < level < 1.0:
        raise OptionError(f"the confidence level must be between 0 and 1, not {level!r}")
    if n_resamples < 2:
        raise OptionError(f"the bootstrap needs at least 2 resamples, not {n_resamples}")
    per_resample = sum(sim_xa.shape) + sum(sim_yb.shape)
    check_resampling_size(n_resamples, per_resample, option="n_bootstrap", bytes_kept_per_resample=8)
    # A separate stream from the permutation test's, still determined by the seed; a Generator
    # (numpy's convention) is used as it is, continuing after the permutation test's draws.
    rng = (
        seed
        if isinstance(seed, np.random.Generator)
        else np.random.default_rng(None if seed is None else [int(seed), 1])
    )
    n_x, n_a = sim_xa.shape
    n_y, n_b = sim_yb.shape
    block = max(1, 4_000_000 // ((n_x + n_y) * (n_a + n_b)))
    values = []
    remaining = int(n_resamples)
    meter = resampling_bar(n_resamples, per_resample, desc="WEAT bootstrap")
    while remaining > 0:
        k = min(block, remaining)
        ix = rng.integers(0, n_x, (k, n_x))
        iy = rng.integers(0, n_y, (k, n_y))
        ia = rng.integers(0, n_a, (k, n_a))
        ib = rng.integers(0, n_b, (k, n_b))
        # s for resampled target words against resampled attribute words: (k, n_x) and (k, n_y)
        s_x = _resampled_means(sim_xa, ix, ia) - _resampled_means(sim_xb, ix, ib)
        s_y = _resampled_means(sim_ya, iy, ia) - _resampled_means(sim_yb, iy, ib)
        pooled = np.concatenate([s_x, s_y], axis=1)
        sd = pooled.std(axis=1, ddof=ddof)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = (s_x.mean(axis=1) - s_y.mean(axis=1)) / sd
        d[negligible_spread(sd, pooled, axis=1)] = np.nan
        values.append(d)
        remaining -= k
        meter.update(k)
    meter.close()
    all_values = np.concatenate(values)
    defined = all_values[np.isfinite(all_values)]
    if defined.size == 0:
        return BootstrapInterval(math.nan, math.nan, level, int(n_resamples), int(all_values.size))
    low, high = np.quantile(defined, [(1 - level) / 2, (1 + level) / 2])
    return BootstrapInterval(float(low), float(high), level, int(n_resamples), int(all_values.size - defined.size))


def _resampled_means(sim: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """mean_j sim[rows[k, i], cols[k, j]] for each resample k and position i -> (k, n_rows)."""
    # Column resampling as counts: mean over resampled columns = sim[row] · counts / n_cols.
    counts = np.zeros((cols.shape[0], sim.shape[1]))
    np.add.at(counts, (np.arange(cols.shape[0])[:, None], cols), 1.0)
    row_means = np.einsum("kc,rc->kr", counts, sim) / cols.shape[1]  # (k, all rows)
    return np.take_along_axis(row_means, rows, axis=1)


@dataclass(frozen=True)
class WEFATResult:
    """Per-word WEFAT results (arrays aligned with the rows of the input).

    ``association`` is s(w, A, B); ``effect_size`` is s(w, A, B) / SD over A ∪ B.
    ``p_method`` is ``"exact"``, ``"sampled"`` or ``"normal"`` (same for every word).
    """

    association: np.ndarray
    effect_size: np.ndarray
    p_value: np.ndarray
    sd: str
    p_method: str
    n_permutations: int
    alternative: str
    n_a: int
    n_b: int


def wefat(
    sim_a: np.ndarray,
    sim_b: np.ndarray,
    *,
    ddof: int = 1,
    alternative: Alternative = "greater",
    p_method: str = "auto",
    exact_limit: int = 100_000,
    n_resamples: int = 10_000,
    seed: int | None = None,
) -> WEFATResult:
    """WEFAT for each row (word) of ``sim_a`` (words × A) and ``sim_b`` (words × B).

    effect_size(w) = [mean_a sim(w, a) - mean_b sim(w, b)] / SD_{x in A ∪ B} sim(w, x)
    (Caliskan et al. 2017, WEFAT; the score ValNorm correlates with human valence).

    The p-value tests s(w, A, B) against its distribution over partitions of
    A ∪ B into sets of sizes |A|, |B| (Toney & Caliskan 2021, whose WEFAT p is
    one-sided: ``alternative="greater"``, the default, i.e. w closer to A; ValNorm
    calls p <= .05 or p >= .95 significant). ``p_method="exact"`` enumerates the
    partitions, ``"sampled"`` draws ``n_resamples`` of them (+1 correction; all
    words share the same draws), ``"normal"`` uses the normal approximation with
    the exact permutation variance
    (:func:`~assoc.stats.permutation.normal_approximation_test`; Toney & Caliskan
    fit a normal to sampled null values instead), and ``"auto"`` is exact when
    C(|A|+|B|, |A|) <= ``exact_limit``, normal otherwise. Toney & Caliskan permute
    the WEFAT *effect size*; its denominator, the SD over A ∪ B, is the same for
    every partition of A ∪ B, so permuting the effect size, s(w, A, B) or the
    row's mean difference gives the same p-value. Exact and sampled tests run
    through :func:`~assoc.stats.permutation.rowwise_permutation_test`, vectorised
    over words and partitions.
    """
    sim_a, sim_b = _matrix(sim_a, "sim_a"), _matrix(sim_b, "sim_b")
    if sim_a.shape[0] != sim_b.shape[0]:
        raise DataError(f"sim_a has {sim_a.shape[0]} rows but sim_b has {sim_b.shape[0]}")
    if ddof not in SD_NAMES:
        raise OptionError(f"ddof must be 1 (sample SD) or 0 (population SD), not {ddof!r}")
    if p_method not in ("auto", "exact", "sampled", "normal"):
        raise OptionError(f"p_method must be auto, exact, sampled or normal, not {p_method!r}")
    check_seed(seed)
    n_a, n_b = sim_a.shape[1], sim_b.shape[1]
    if n_a + n_b - ddof <= 0:
        raise DataError("WEFAT needs more attribute words for this SD")
    method = p_method
    if method == "auto":
        method = "exact" if count_partitions(n_a, n_b) <= exact_limit else "normal"
    both = np.concatenate([sim_a, sim_b], axis=1)
    association = sim_a.mean(axis=1) - sim_b.mean(axis=1)
    sd = both.std(axis=1, ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        zero = negligible_spread(sd, both, axis=1)
        effect = np.where(zero, np.nan, association / np.where(zero, 1.0, sd))
    if method == "normal":
        p_values = _normal_p_values(association, both, n_a, n_b, alternative)
        return WEFATResult(association, effect, p_values, SD_NAMES[ddof], method, 0, alternative, n_a, n_b)
    if method == "exact" and count_partitions(n_a, n_b) > exact_limit:
        raise OptionError(
            f"exact WEFAT p-values need C({n_a + n_b}, {n_a}) = {count_partitions(n_a, n_b)} partitions, "
            f"more than exact_limit={exact_limit}; use p_method=normal or sampled"
        )
    # All words at once, on shared partitions (vectorised over words and partitions).
    test = rowwise_permutation_test(
        both,
        n_a,
        alternative=alternative,
        exact_limit=exact_limit if method == "exact" else 0,
        n_resamples=n_resamples,
        seed=seed,
    )
    p_values, n_permutations = test.p_value, test.n_permutations
    return WEFATResult(association, effect, p_values, SD_NAMES[ddof], method, n_permutations, alternative, n_a, n_b)


def _normal_p_values(association: np.ndarray, both: np.ndarray, n_a: int, n_b: int, alternative: str) -> np.ndarray:
    """Row-wise :func:`~assoc.stats.permutation.normal_approximation_test` (same formula, all words at once)."""
    from scipy import stats

    if alternative not in ("greater", "less", "two-sided"):
        raise OptionError(f"alternative must be greater, less or two-sided, not {alternative!r}")
    if n_a + n_b < 2:
        raise DataError("the normal approximation needs at least two attribute words in all")
    variance = both.var(axis=1, ddof=1) * (1.0 / n_a + 1.0 / n_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = association / np.sqrt(variance)
    greater, less = stats.norm.sf(z), stats.norm.cdf(z)
    p = {"greater": greater, "less": less}.get(alternative)
    if p is None:
        p = np.minimum(1.0, 2.0 * np.minimum(greater, less))
    # Constant similarities: every partition gives 0 = the observed value.
    return np.where(variance > 0, p, 1.0)


def _matrix(values: np.ndarray, label: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or 0 in arr.shape:
        raise DataError(f"{label} must be a non-empty 2-D array (words × attribute words), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DataError(
            f"{label} contains {int(np.sum(~np.isfinite(arr)))} NaN or infinite value(s); "
            "drop out-of-vocabulary words first"
        )
    return arr


def _check_blocks(sim_xa: np.ndarray, sim_xb: np.ndarray, sim_ya: np.ndarray, sim_yb: np.ndarray) -> None:
    if sim_xa.shape[0] != sim_xb.shape[0] or sim_ya.shape[0] != sim_yb.shape[0]:
        raise DataError("the X blocks (and the Y blocks) must have the same number of rows")
    if sim_xa.shape[1] != sim_ya.shape[1] or sim_xb.shape[1] != sim_yb.shape[1]:
        raise DataError("the A blocks (and the B blocks) must have the same number of columns")
