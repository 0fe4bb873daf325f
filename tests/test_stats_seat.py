"""SEAT (assoc.stats.seat_statistics) against sent-bias's weat.py (frozen output), by hand, and fairlms (live)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from assoc.errors import DataError, OptionError
from assoc.stats import seat, two_sample_permutation_test

REFS = Path(__file__).parent / "data" / "refs" / "sent_bias"
FROZEN = json.loads((REFS / "sent_bias.json").read_text())
ENCODINGS = dict(np.load(REFS / "encodings.npz"))


def _sets(data: str) -> list[np.ndarray]:
    return [ENCODINGS[f"{data}_{key}"].astype(np.float64) for key in "xyab"]


DISTINCT = sorted(case for case, frozen in FROZEN["cases"].items() if frozen["data"] != "ties")


@pytest.mark.parametrize("case", sorted(FROZEN["cases"]))
def test_effect_size_equals_sent_bias(case):
    frozen = FROZEN["cases"][case]
    result = seat(*_sets(frozen["data"]), n_samples=10, seed=0, n_resamples=10)
    assert abs(result.effect_size - frozen["effect_size"]) <= 1e-10


@pytest.mark.parametrize("case", DISTINCT)
def test_effect_size_and_p_equal_sent_bias(case):
    frozen = FROZEN["cases"][case]
    result = seat(
        *_sets(frozen["data"]),
        n_samples=frozen["n_samples"],
        seed=frozen["seed"],
        parametric=frozen["parametric"],
        n_resamples=1_000,
    )
    assert abs(result.effect_size - frozen["effect_size"]) <= 1e-10
    if frozen["parametric"]:
        # a normal fitted to the same 5000 shuffled partitions: equal up to the rounding of their mean and SD
        assert result.p_method == "normal"
        assert result.p_value == pytest.approx(frozen["p_value"], rel=1e-12, abs=1e-15)
    else:
        # a count over the same partitions (every one, or the same seeded shuffles): equal exactly
        assert result.p_value == frozen["p_value"]


def test_repeated_encodings_tie_mathematically_where_sent_bias_ties_only_bit_equal_sums():
    # X and Y drawn with repetition from a few vectors: many partitions tie with the observed one.
    # sent-bias counts a tie only when the float sums are bit-identical (78 of 252 here); assoc counts
    # every partition whose multiset of vectors gives a sum >= the observed one, ties included.
    frozen = FROZEN["cases"]["ties_exact"]
    x, y, a, b = _sets("ties")
    result = seat(x, y, a, b, n_samples=frozen["n_samples"])
    kinds, label = np.unique(np.concatenate([x, y]), axis=0, return_inverse=True)
    s = {k: float(np.mean(_cos(kinds[k], a)) - np.mean(_cos(kinds[k], b))) for k in range(len(kinds))}
    observed = np.bincount(label[: len(x)], minlength=len(kinds))
    at_least = 0
    for half in itertools.combinations(range(len(label)), len(x)):
        counts = np.bincount(label[list(half)], minlength=len(kinds))
        # the same multiset of vectors is a tie; another multiset has a generically different sum
        at_least += bool(np.array_equal(counts, observed) or counts @ list(s.values()) > observed @ list(s.values()))
    assert result.p_value == pytest.approx(at_least / math.comb(10, 5), abs=1e-15)
    assert frozen["p_value"] * 252 == pytest.approx(78) and result.p_value * 252 == pytest.approx(114)
    assert result.p_value > frozen["p_value"]  # the named difference: never smaller than sent-bias's


def _cos(vector, rows):
    return rows @ vector / (np.linalg.norm(rows, axis=1) * np.linalg.norm(vector))


def test_exact_or_sampled_as_sent_bias_decides():
    small = FROZEN["cases"]["small_exact"]  # C(12, 6) = 924 <= n_samples: every partition
    exact = seat(*_sets("small"), n_samples=small["n_samples"], seed=small["seed"])
    assert (exact.p_method, exact.n_permutations) == ("exact", 924)
    assert exact.p_value * 924 == pytest.approx(round(exact.p_value * 924))
    medium = FROZEN["cases"]["medium_sampled"]  # C(28, 14) > 5000: 4999 shuffles plus the hallucinated one
    sampled = seat(*_sets("medium"), n_samples=medium["n_samples"], seed=medium["seed"])
    assert (sampled.p_method, sampled.n_permutations) == ("sampled", 4999)
    assert sampled.p_value * 5000 == pytest.approx(round(sampled.p_value * 5000))


def test_assoc_exact_p_beside_it_equals_sent_bias_exact_p():
    # assoc's own WEAT test (exact up to exact_limit) on the same data: the same partitions, the same count
    frozen = FROZEN["cases"]["null_exact"]  # C(20, 10) = 184,756 partitions, sent-bias exact
    result = seat(*_sets("null"), n_samples=10, seed=3, exact_limit=200_000)
    assert result.weat.p_method == "exact" and result.weat.n_permutations == math.comb(20, 10)
    assert result.weat.p_value == frozen["p_value"]
    assert result.p_method == "sampled"  # sent-bias with n_samples=10 samples instead
    assert result.weat.effect_size == result.effect_size


def test_by_hand_two_against_two():
    # 2-D unit vectors at known angles: a = (1, 0), b = (0, 1)
    a, b = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    x = np.array([[1.0, 0.0], [1.0, 1.0]])  # s = 1, 0
    y = np.array([[0.0, 1.0], [1.0, 1.0]])  # s = -1, 0
    result = seat(x, y, a, b, n_samples=100)
    # d = (0.5 - (-0.5)) / sd([1, 0, -1, 0], ddof=1) = 1 / sqrt(2/3)
    assert result.effect_size == pytest.approx(1 / math.sqrt(2 / 3), abs=1e-12)
    assert result.statistic == pytest.approx(2.0)
    # sums over the 6 halves of {1, 0, -1, 0}: 1, 0, 1, -1, 0, -1 (x-halves {1,0},{1,-1},{1,0},{0,-1},{0,0},{-1,0});
    # >= 1 (the observed sum of X): 2 of 6
    assert result.p_value == pytest.approx(2 / 6) and result.p_method == "exact"


def test_ties_count_as_extreme():
    # X and Y hold the same two vectors: S = 0; of the 6 partitions four tie at 0 and one is above
    u, v = [1.0, 0.2], [0.1, 1.0]
    a, b = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    result = seat(np.array([u, v]), np.array([u, v]), a, b, n_samples=100)
    assert result.p_value == pytest.approx(5 / 6)


def test_sampler_and_seed_reach_the_permutation_machinery():
    x, y, a, b = _sets("medium")
    s = np.concatenate([x, y]) / np.linalg.norm(np.concatenate([x, y]), axis=1, keepdims=True)
    scores = (s @ (a / np.linalg.norm(a, axis=1, keepdims=True)).T).mean(axis=1) - (
        s @ (b / np.linalg.norm(b, axis=1, keepdims=True)).T
    ).mean(axis=1)
    direct = two_sample_permutation_test(
        scores[:14],
        scores[14:],
        statistic="sum_difference",
        exact_limit=500,
        n_resamples=499,
        seed=9,
        sampler="legacy-shuffle",
    )
    assert seat(x, y, a, b, n_samples=500, seed=9).p_value == direct.p_value
    other = seat(x, y, a, b, n_samples=500, seed=9, sampler="uniform")
    assert other.sampler == "uniform" and other.p_method == "sampled"


def test_bad_inputs_are_refused_by_name():
    x, y, a, b = _sets("small")
    zero = x.copy()
    zero[2] = 0.0
    with pytest.raises(DataError, match=r"encodings x, row 2: a zero vector"):
        seat(zero, y, a, b)
    with pytest.raises(DataError, match="one width"):
        seat(x, y, a[:, :5], b)
    with pytest.raises(OptionError, match="n_samples"):
        seat(x, y, a, b, n_samples=0)
    with pytest.raises(OptionError, match="legacy-shuffle"):
        seat(x, y, a, b, seed=np.random.default_rng(0))  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="sampler"):
        seat(x, y, a, b, sampler="bogus")  # type: ignore[arg-type]


# -- fairlms (PyPI, MIT): its WEAT/SEAT code on the same encodings, run live ---------------------------------


@pytest.fixture(scope="module")
def fairlms_association():
    pytest.importorskip("fairlms")
    import importlib

    # the module, not the function of the same name that fairlms.utils re-exports over it
    return importlib.import_module("fairlms.utils.association")


@pytest.fixture
def table_encoder(monkeypatch):
    """tests/table_encoder.py: the stand-in tokenizer and model that feed peers' code the given encodings."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import table_encoder

    return table_encoder


@pytest.mark.slow  # importing fairlms imports torch, transformers and datasets
@pytest.mark.parametrize(("data", "n_samples", "seed"), [("small", 100_000, 0), ("medium", 3_000, 5), ("null", 400, 8)])
def test_fairlms_seat_equals_assoc_where_conventions_match(fairlms_association, table_encoder, data, n_samples, seed):
    from fairlms.definition.encoder_only.intrinsic_bias.similarity_based.seat.seat import compute_seat

    x, y, a, b = _sets(data)
    terms = [[f"{key}{i}" for i in range(len(values))] for key, values in zip("xyab", (x, y, a, b))]
    texts = sum(terms, [])
    table = np.concatenate([x, y, a, b])
    # one template "{}" (the term itself): fairlms averages a term's templates into one vector, so with one
    # template each term's vector is its encoding, as in May et al.'s files where each sentence is an item
    effect, p_value = compute_seat(
        table_encoder.TableModel(table),
        table_encoder.TableTokenizer(texts),
        *terms,
        templates=["{}"],
        pooling="mean",
        n_samples=n_samples,
        device="cpu",
        seed=seed,
    )
    ours = seat(x, y, a, b, n_samples=n_samples, seed=seed, sampler="shuffle")
    assert abs(ours.effect_size - effect) <= 1e-10
    assert ours.p_value == p_value  # exact: the same count; sampled: the same default_rng(seed) shuffles
    if data != "small":
        assert ours.p_method == "sampled"
        assert p_value == fairlms_association.permutation_pval(*_scores(x, y, a, b), n_samples=n_samples, seed=seed)


def _scores(x, y, a, b):
    def unit(m):
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    s = (unit(np.concatenate([x, y])) @ unit(a).T).mean(axis=1) - (unit(np.concatenate([x, y])) @ unit(b).T).mean(
        axis=1
    )
    return s[: len(x)], s[len(x) :]
