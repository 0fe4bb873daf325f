"""SEAT: WEAT on sentence encodings, with the effect size and p-value of sent-bias (May et al., 2019).

May, C., Wang, A., Bordia, S., Bowman, S. R., & Rudinger, R. (2019). On measuring social biases in
sentence encoders. *NAACL-HLT 2019*, 622-628. doi:10.18653/v1/N19-1063. Their code, sent-bias
(``sentbias/weat.py``, commit e3559fb), computes, for encodings of the sentences of two target sets
X, Y and two attribute sets A, B (each sentence one item, duplicates collapsed by their dict):

* cosine ``cos(u, v) = u·v / sqrt((u·u)(v·v))``, and ``s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b)``;
* effect size ``d = [mean_{x in X} s(x) - mean_{y in Y} s(y)] / sd_{w in X ∪ Y} s(w)``, with the
  *sample* standard deviation (``np.std(..., ddof=1)``): Caliskan et al.'s (2017) effect size;
* the p-value of the one-sided permutation test ("greater") of the statistic
  ``sum_{x in X'} s(x)`` over the partitions (X', Y') of X ∪ Y into halves (it is monotone in
  Caliskan's ``S = sum_X s - sum_Y s``, since ``sum_X' + sum_Y'`` is constant):

  - **exact** when the number of partitions ``C(2|X|, |X|)`` is at most ``n_samples`` (default
    100,000): every partition is enumerated, the observed one included, and
    ``p = #{X' : T(X') >= T(X)} / C(2|X|, |X|)``;
  - **sampled** otherwise: ``n_samples - 1`` partitions are drawn by shuffling the pooled index
    array in place with numpy's global ``RandomState`` (seeded once per run by ``--seed``, 1111 in
    their scripts), and one "hallucinated" extreme partition is added:
    ``p = (1 + #{i : T_i >= T(X)}) / n_samples`` — the +1 of Phipson & Smyth (2010), with
    ``n_samples - 1`` draws;
  - ties count as extreme (``si > s`` or ``si == s``, exact float equality; "conservative test");
  - with ``--parametric``: ``n_samples`` shuffled partitions of S (no +1), and
    ``p = 1 - Phi((S - mean) / sd)`` with their mean and sample SD (``ddof=1``).

  sent-bias asserts ``|X| = |Y|``; the same rules apply unchanged to unequal sizes with
  ``C(|X| + |Y|, |X|)`` partitions, which is what :func:`seat` does.

:func:`seat` computes these on the same machinery as every other permutation test here
(:func:`~assoc.stats.permutation.two_sample_permutation_test` with ``exact_limit = n_samples``,
``n_resamples = n_samples - 1`` and sent-bias's shuffle stream, ``sampler="legacy-shuffle"``), so
with the same seed its sampled p is sent-bias's draw for draw; and beside it assoc's own WEAT p
(:func:`~assoc.stats.association_tests.weat`: exact up to ``exact_limit`` partitions, else
``n_resamples`` uniform random partitions with the +1), with an optional bootstrap interval.
One difference remains, by design: ties. sent-bias counts a permuted statistic as tied with the
observed one only when the two floating-point sums are bit-identical, so of the partitions that tie
mathematically (when encodings repeat) it counts those whose sums happen to round alike, which
depends on the order of summation, on how the cosines were computed and on the BLAS. Here every
partition within ``1e-12`` of the data's scale ties (:mod:`assoc.stats.permutation`): all
mathematical ties count, so with repeated encodings this p can be larger than sent-bias's (never
smaller, up to that rounding). On distinct continuous encodings, SEAT's case, no partition other
than the observed one ties and the two p-values are equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _scipy_stats

from assoc.errors import DataError, OptionError
from assoc.stats.association_tests import WEATResult, cosine_matrix, weat
from assoc.stats.permutation import (
    Alternative,
    Sampler,
    check_sampler,
    permutation_distribution,
    two_sample_permutation_test,
)


@dataclass(frozen=True)
class SEATResult:
    """A SEAT as sent-bias computes it, with assoc's WEAT beside it.

    Attributes
    ----------
        effect_size: Caliskan's d with the sample SD over X ∪ Y (sent-bias's ``effect_size``).
        p_value: sent-bias's one-sided p (see :mod:`assoc.stats.seat_statistics`).
        p_method: ``"exact"``, ``"sampled"`` (``n_samples - 1`` shuffles plus the +1) or
            ``"normal"`` (``parametric=True``).
        n_permutations: partitions enumerated (exact) or drawn (``n_samples - 1`` sampled,
            ``n_samples`` normal).
        statistic: S = sum_X s(x, A, B) - sum_Y s(y, A, B).
        n_samples: sent-bias's ``n_samples``.
        seed: the seed of the sampled test (None: fresh entropy).
        sampler: the stream of random partitions (``"legacy-shuffle"`` is sent-bias's).
        weat: assoc's WEAT on the same cosines (its own p, ``exact_limit``/``n_resamples``, CI).
    """

    effect_size: float
    p_value: float
    p_method: str
    n_permutations: int
    statistic: float
    n_samples: int
    seed: int | None
    sampler: str
    weat: WEATResult


def seat(
    x: np.ndarray,
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    *,
    n_samples: int = 100_000,
    parametric: bool = False,
    seed: int | None = None,
    sampler: Sampler = "legacy-shuffle",
    alternative: Alternative = "greater",
    exact_limit: int = 100_000,
    n_resamples: int = 100_000,
    n_bootstrap: int = 0,
    confidence: float = 0.95,
) -> SEATResult:
    """SEAT effect size and p-value of sent-bias's ``weat.run_test``, and assoc's WEAT p beside them.

    Parameters
    ----------
    x, y, a, b
        Encodings, one row per sentence (or word) of the target sets X, Y and the attribute sets
        A, B; all of one width. A zero row has no direction and is refused.
    n_samples
        sent-bias's ``n_samples``: exact test when ``C(|X|+|Y|, |X|) <= n_samples``, else
        ``n_samples - 1`` shuffled partitions plus one (at least 2 then); with ``parametric``,
        the number of shuffled partitions the normal is fitted to.
    parametric
        sent-bias's ``--parametric``: ``p = 1 - Phi((S - m) / sd)`` with the mean ``m`` and
        sample SD of S over ``n_samples`` shuffled partitions.
    seed
        Seed of the random partitions. With ``sampler="legacy-shuffle"`` and the seed sent-bias
        was given (``np.random.seed(seed)`` just before ``run_test``) the draws are theirs.
    sampler
        The stream of random partitions (:mod:`assoc.stats.permutation`): ``"legacy-shuffle"``
        (sent-bias), ``"shuffle"`` (fairlms's ``permutation_pval``) or ``"uniform"``.
    alternative, exact_limit, n_resamples, n_bootstrap, confidence
        Of assoc's WEAT beside it (:func:`~assoc.stats.association_tests.weat`, sample SD), which
        draws its random partitions with the same ``seed`` (``"uniform"`` sampler).

    Returns
    -------
        :class:`SEATResult`.

    Notes
    -----
    The formulas are in the module docstring. Citations: May et al. (2019) for SEAT; Caliskan,
    Bryson & Narayanan (2017, *Science* 356:183) for the WEAT effect size and test; Phipson &
    Smyth (2010) for the +1 of the sampled p.
    """
    _check_options(n_samples, sampler, seed)
    blocks = {"x": x, "y": y, "a": a, "b": b}
    arrays = {name: _encodings(values, name) for name, values in blocks.items()}
    widths = {arr.shape[1] for arr in arrays.values()}
    if len(widths) != 1:
        shapes = ", ".join(f"{name} {arr.shape}" for name, arr in arrays.items())
        raise DataError(f"the four sets of encodings must have one width, got {shapes}")
    targets = np.concatenate([arrays["x"], arrays["y"]])
    sim_a = cosine_matrix(targets, arrays["a"])
    sim_b = cosine_matrix(targets, arrays["b"])
    n_x = arrays["x"].shape[0]
    return seat_from_similarities(
        sim_a[:n_x],
        sim_b[:n_x],
        sim_a[n_x:],
        sim_b[n_x:],
        n_samples=n_samples,
        parametric=parametric,
        seed=seed,
        sampler=sampler,
        alternative=alternative,
        exact_limit=exact_limit,
        n_resamples=n_resamples,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
    )


def seat_from_similarities(
    x_a: np.ndarray,
    x_b: np.ndarray,
    y_a: np.ndarray,
    y_b: np.ndarray,
    *,
    n_samples: int = 100_000,
    parametric: bool = False,
    seed: int | None = None,
    sampler: Sampler = "legacy-shuffle",
    alternative: Alternative = "greater",
    exact_limit: int = 100_000,
    n_resamples: int = 100_000,
    n_bootstrap: int = 0,
    confidence: float = 0.95,
) -> SEATResult:
    """:func:`seat` from the cosines of the encodings rather than the encodings themselves.

    Parameters
    ----------
    x_a, x_b, y_a, y_b
        ``cos(x, a)`` for every x in X (rows) and a in A (columns), and likewise for X with B, Y with
        A and Y with B: the cosines of an association table's (target, attribute) rows (the ``seat``
        scorer's). ``s(w) = mean_a cos(w, a) - mean_b cos(w, b)`` is computed from them as from the
        encodings, so the numbers are :func:`seat`'s.
    n_samples, parametric, seed, sampler, alternative, exact_limit, n_resamples, n_bootstrap, confidence
        As for :func:`seat`.

    Returns
    -------
        :class:`SEATResult`.
    """
    _check_options(n_samples, sampler, seed)
    blocks = {"x_a": x_a, "x_b": x_b, "y_a": y_a, "y_b": y_b}
    sims = {name: np.asarray(values, dtype=np.float64) for name, values in blocks.items()}
    for name, arr in sims.items():
        if arr.ndim != 2 or 0 in arr.shape:
            raise DataError(f"cosines {name} must be a non-empty 2-D array (targets × attributes), got {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise DataError(f"cosines {name} contain {int(np.sum(~np.isfinite(arr)))} NaN or infinite value(s)")
    if sims["x_a"].shape[0] != sims["x_b"].shape[0] or sims["y_a"].shape[0] != sims["y_b"].shape[0]:
        raise DataError("cosines x_a and x_b (and y_a and y_b) need one row per target word each")
    if sims["x_a"].shape[1] != sims["y_a"].shape[1] or sims["x_b"].shape[1] != sims["y_b"].shape[1]:
        raise DataError("cosines x_a and y_a (and x_b and y_b) need one column per attribute word each")
    sim_a = np.concatenate([sims["x_a"], sims["y_a"]])
    sim_b = np.concatenate([sims["x_b"], sims["y_b"]])
    n_x = sims["x_a"].shape[0]
    assoc_weat = weat(
        sim_a[:n_x],
        sim_b[:n_x],
        sim_a[n_x:],
        sim_b[n_x:],
        ddof=1,
        alternative=alternative,
        exact_limit=exact_limit,
        n_resamples=n_resamples,
        seed=seed,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
    )
    s = sim_a.mean(axis=1) - sim_b.mean(axis=1)
    s_x, s_y = s[:n_x], s[n_x:]
    if parametric:
        values = permutation_distribution(
            s_x, s_y, statistic="sum_difference", n_resamples=int(n_samples), seed=seed, sampler=sampler
        )
        observed = float(s_x.sum() - s_y.sum())
        spread = float(np.std(values, ddof=1)) if values.size > 1 else math.nan
        p_value = float(_scipy_stats.norm.sf(observed, loc=float(np.mean(values)), scale=spread))
        method, n_permutations = "normal", int(n_samples)
    else:
        if n_samples < 2 and math.comb(s.size, n_x) > n_samples:
            raise OptionError(f"a sampled SEAT p needs n_samples >= 2 (one draw plus the +1), not {n_samples}")
        test = two_sample_permutation_test(
            s_x,
            s_y,
            statistic="sum_difference",
            alternative="greater",
            exact_limit=int(n_samples),
            n_resamples=max(int(n_samples) - 1, 1),
            seed=seed,
            sampler=sampler,
        )
        observed, p_value, method, n_permutations = test.statistic, test.p_value, test.method, test.n_permutations
    return SEATResult(
        effect_size=assoc_weat.effect_size,
        p_value=p_value,
        p_method=method,
        n_permutations=n_permutations,
        statistic=observed,
        n_samples=int(n_samples),
        seed=seed,
        sampler=sampler,
        weat=assoc_weat,
    )


def _check_options(n_samples: object, sampler: Sampler, seed: int | None) -> None:
    """Refuse an ``n_samples`` that is not a positive integer, and a sampler that cannot take ``seed``."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise OptionError(f"n_samples must be a positive integer, not {n_samples!r}")
    check_sampler(sampler, seed)


def _encodings(values: object, name: str) -> np.ndarray:
    """A set of encodings as a finite 2-D float array without zero rows, or a DataError naming the set."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or 0 in arr.shape:
        raise DataError(f"encodings {name} must be a non-empty 2-D array (items × dimensions), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"encodings {name} contain {int(np.sum(~np.isfinite(arr)))} NaN or infinite value(s)")
    zero = np.flatnonzero(~np.any(arr != 0.0, axis=1))
    if zero.size:
        raise DataError(f"encodings {name}, row {int(zero[0])}: a zero vector has no cosine with anything")
    return arr
