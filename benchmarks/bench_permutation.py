"""Benchmark of the vectorised permutation test against a plain per-permutation loop.

    python benchmarks/bench_permutation.py [--resamples 100000] [--threads 2]

Cases (the WEAT statistic S = sum(x) - sum(y) on random s-values):
  * exact test, 8 vs 8 (C(16, 8) = 12,870 partitions), as in Caliskan's weat6-weat10;
  * sampled test, 25 vs 25, 100,000 random partitions, as in weat1-weat2;
  * WEFAT: 1,000 words, each tested exactly over the partitions of 8 + 8 attribute
    words, all at once (assoc.stats.permutation.rowwise_permutation_test) vs. one
    test per word.

For each case it prints the time of assoc.stats.permutation.two_sample_permutation_test,
the time of a straightforward loop computing the same permutations one by one, their
ratio, and the largest difference between the two sets of permuted statistics and
p-values. The loop consumes exactly the same random partitions (it replays the
generator), so the sampled p-values must agree exactly, not just statistically.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import time


def loop_exact(x, y):
    pooled = list(x) + list(y)
    total = sum(pooled)
    observed = sum(x) - sum(y)
    tolerance = 1e-12 * max(abs(observed), sum(abs(v) for v in pooled) / len(pooled))
    stats, extreme = [], 0
    for chosen in itertools.combinations(range(len(pooled)), len(x)):
        sum_x = sum(pooled[i] for i in chosen)
        value = 2 * sum_x - total
        stats.append(value)
        extreme += value >= observed - tolerance
    return extreme / len(stats), stats


def loop_sampled(x, y, n_resamples, seed, block_rows):
    import numpy as np

    pooled = np.concatenate([x, y])
    n, n_x = pooled.size, len(x)
    rng = np.random.default_rng(seed)
    observed = float(2 * pooled[:n_x].sum() - pooled.sum())
    tolerance = 1e-12 * max(abs(observed), float(np.mean(np.abs(pooled))))
    stats, extreme, remaining = [], 0, n_resamples
    while remaining:
        k = min(block_rows, remaining)
        draws = rng.random((k, n))  # same draws as the vectorised code, one block at a time
        for row in draws:  # ... but one permutation at a time from here on
            order = sorted(range(n), key=row.__getitem__)
            sum_x = sum(pooled[i] for i in order[:n_x])
            value = 2 * sum_x - pooled.sum()
            stats.append(value)
            extreme += value >= observed - tolerance
        remaining -= k
    return (1 + extreme) / (1 + n_resamples), stats


def timed(function, repeats=3):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, str(args.threads))

    import numpy as np

    from assoc.stats import permutation
    from assoc.stats.permutation import two_sample_permutation_test

    rng = np.random.default_rng(2017)

    # exact, 8 vs 8
    x, y = rng.normal(0.1, 0.1, 8), rng.normal(0.0, 0.1, 8)
    fast_time, fast = timed(lambda: two_sample_permutation_test(x, y, statistic="sum_difference"))
    slow_time, (slow_p, slow_stats) = timed(lambda: loop_exact(x, y), repeats=1)
    blocks = permutation._exact_blocks(16, 8)
    fast_stats = np.concatenate(
        [2 * np.concatenate([x, y])[xi].sum(axis=1) - np.concatenate([x, y]).sum() for xi, _ in blocks]
    )
    print(
        f"exact 8 vs 8 ({fast.n_permutations} partitions): vectorised {fast_time * 1000:.1f} ms, "
        f"loop {slow_time * 1000:.1f} ms, speed-up {slow_time / fast_time:.0f}x; "
        f"max |stat diff| {np.max(np.abs(fast_stats - np.array(slow_stats))):.2e}, "
        f"p {fast.p_value:.6f} vs {slow_p:.6f} (diff {abs(fast.p_value - slow_p):.1e})"
    )

    # sampled, 25 vs 25
    x, y = rng.normal(0.05, 0.1, 25), rng.normal(0.0, 0.1, 25)
    n = args.resamples
    fast_time, fast = timed(
        lambda: two_sample_permutation_test(x, y, statistic="sum_difference", exact_limit=0, n_resamples=n, seed=1)
    )
    rows = permutation._block_rows(50)
    slow_time, (slow_p, slow_stats) = timed(lambda: loop_sampled(x, y, n, 1, rows), repeats=1)
    pooled = np.concatenate([x, y])
    replay = permutation._sampled_blocks(50, 25, n, np.random.default_rng(1))
    fast_stats = np.concatenate([2 * pooled[xi].sum(axis=1) - pooled.sum() for xi, _ in replay])
    print(
        f"sampled 25 vs 25 ({n} partitions): vectorised {fast_time * 1000:.1f} ms, "
        f"loop {slow_time * 1000:.1f} ms, speed-up {slow_time / fast_time:.0f}x; "
        f"max |stat diff| {np.max(np.abs(fast_stats - np.array(slow_stats))):.2e}, "
        f"p {fast.p_value:.6f} vs {slow_p:.6f} (diff {abs(fast.p_value - slow_p):.1e})"
    )

    # WEFAT: 1,000 words, exact over the 12,870 partitions of 8 + 8 attribute words, all words at once
    # (rowwise_permutation_test) vs. one vectorised test per word.
    from assoc.stats.permutation import rowwise_permutation_test

    sims = rng.normal(0.0, 0.2, (1000, 16))
    fast_time, fast = timed(lambda: rowwise_permutation_test(sims, 8))
    slow_time, slow = timed(
        lambda: np.array([two_sample_permutation_test(row[:8], row[8:]).p_value for row in sims]), repeats=1
    )
    print(
        f"WEFAT exact, 1000 words x 8 vs 8 ({fast.n_permutations} partitions each): all words at once "
        f"{fast_time * 1000:.1f} ms, one test per word {slow_time * 1000:.1f} ms, speed-up "
        f"{slow_time / fast_time:.0f}x; max |p diff| {np.max(np.abs(fast.p_value - slow)):.1e}"
    )


if __name__ == "__main__":
    main()
