"""CEAT (assoc.stats.ceat_statistics) against ceat.py's ceat_meta (frozen output, internals), statsmodels, fairlms."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from assoc.errors import DataError, OptionError
from assoc.stats import (
    CEAT_INTERSECTIONAL_TESTS,
    ceat,
    ceat_draws,
    ceat_effect_sizes,
    random_effects,
)

REFS = Path(__file__).parent / "data" / "refs" / "ceat"
FROZEN = json.loads((REFS / "ceat.json").read_text(encoding="utf-8"))
EMBEDDINGS = dict(np.load(REFS / "embeddings.npz"))
OUTPUTS = dict(np.load(REFS / "ceat_outputs.npz"))


def _contexts(case: str) -> list[list[np.ndarray]]:
    """Each set's words' context embeddings, as ceat_meta read them from its pickle."""
    frozen = FROZEN["cases"][case]
    data = frozen["data"]
    stacked = EMBEDDINGS[f"{data}_contexts"].astype(np.float64)
    bounds = np.cumsum([0, *EMBEDDINGS[f"{data}_counts"]])
    words = FROZEN["data"][data]["words"]
    by_word = {word: stacked[bounds[i] : bounds[i + 1]] for i, word in enumerate(words)}
    return [[by_word[word] for word in words_of_set] for words_of_set in frozen["sets"]]


@pytest.fixture(scope="module", params=sorted(FROZEN["cases"]))
def case(request):
    frozen = FROZEN["cases"][request.param]
    return request.param, frozen, ceat(_contexts(request.param), n_samples=frozen["N"], seed=frozen["seed"])


def test_draws_equal_ceat_meta(case):
    name, frozen, result = case
    assert np.array_equal(np.concatenate(result.draws.indices, axis=1), OUTPUTS[f"{name}_draws"])
    assert result.draws.record()["seed"] == frozen["seed"]


def test_per_sample_effect_sizes_and_variances_equal_ceat_meta(case):
    name, _, result = case
    assert np.max(np.abs(result.samples.effect_sizes - OUTPUTS[f"{name}_effect_sizes"])) <= 1e-10
    assert np.max(np.abs(result.samples.variances - OUTPUTS[f"{name}_variances"])) <= 1e-10


def test_combined_effect_size_p_and_internals_equal_ceat_meta(case):
    _, frozen, result = case
    combined = result.combined
    assert abs(combined.effect_size - frozen["ces"]) <= 1e-10
    assert combined.p_value == pytest.approx(frozen["p_value"], rel=1e-9, abs=1e-12)
    assert abs(combined.variance - frozen["V"]) <= 1e-10
    assert combined.q == pytest.approx(frozen["Q"], rel=1e-10, abs=1e-10)
    assert abs(combined.tau_squared - frozen["tau_squared"]) <= 1e-10
    assert combined.df == frozen["df"] and combined.n_samples == frozen["N"]
    assert combined.z == pytest.approx(frozen["z"], rel=1e-9)
    # ceat.py prints "tao>0" exactly when it estimates a between-sample variance
    assert (frozen["printed"] == "tao>0\n") == (combined.tau_squared > 0)


def test_homogeneous_samples_have_no_between_sample_variance():
    frozen = FROZEN["cases"]["homogeneous"]
    assert frozen["Q"] < frozen["df"]  # what the case is for
    result = random_effects(OUTPUTS["homogeneous_effect_sizes"], OUTPUTS["homogeneous_variances"])
    assert result.tau_squared == 0.0 and result.i_squared == 0.0


def test_random_effects_by_hand():
    # ES = 0.1, 0.5, 0.9 with v = 0.01, 0.02, 0.04: W = 100, 50, 25, sum W = 175, sum W ES = 57.5,
    # sum W ES^2 = 33.75, Q = 33.75 - 57.5^2 / 175 = 104/7, df = 2, c = 175 - 13125/175 = 100,
    # tau^2 = (104/7 - 2) / 100 = 9/70, I^2 = (104/7 - 2) / (104/7) = 45/52
    es = [Fraction(1, 10), Fraction(5, 10), Fraction(9, 10)]
    v = [Fraction(1, 100), Fraction(2, 100), Fraction(4, 100)]
    tau2 = Fraction(9, 70)
    w_star = [1 / (vi + tau2) for vi in v]
    ces = sum(w * e for w, e in zip(w_star, es)) / sum(w_star)
    variance = 1 / sum(w_star)
    result = random_effects([float(e) for e in es], [float(x) for x in v])
    assert result.q == pytest.approx(float(Fraction(104, 7)), abs=1e-12)
    assert result.tau_squared == pytest.approx(float(tau2), abs=1e-12)
    assert result.i_squared == pytest.approx(45 / 52, abs=1e-12)
    assert result.effect_size == pytest.approx(float(ces), abs=1e-12)
    assert result.variance == pytest.approx(float(variance), abs=1e-12)
    assert result.standard_error == pytest.approx(math.sqrt(float(variance)), abs=1e-12)
    z = float(ces) / math.sqrt(float(variance))
    assert result.p_value == pytest.approx(stats.norm.sf(z), rel=1e-12)
    assert random_effects(es, v, alternative="less").p_value == pytest.approx(stats.norm.cdf(z), rel=1e-12)
    two = random_effects(es, v, alternative="two-sided").p_value
    assert two == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-12)


def test_random_effects_equal_statsmodels_dersimonian_laird():
    from statsmodels.stats.meta_analysis import combine_effects

    es, v = OUTPUTS["heterogeneous_effect_sizes"], OUTPUTS["heterogeneous_variances"]
    reference = combine_effects(es, v, method_re="dl")
    ours = random_effects(es, v)
    assert ours.effect_size == pytest.approx(reference.mean_effect_re, rel=1e-10)
    assert ours.standard_error == pytest.approx(reference.sd_eff_w_re, rel=1e-10)
    assert ours.tau_squared == pytest.approx(reference.tau2, rel=1e-10)
    assert ours.q == pytest.approx(reference.q, rel=1e-10)
    assert ours.i_squared == pytest.approx(reference.i2, rel=1e-10)


def test_one_sample_by_hand():
    # X = {x}, Y = {y}, A = {a}, B = {b}: s(x) = cos(x,a) - cos(x,b) = 1 - 0, s(y) = 0.6 - 0.8 (y = (0.6, 0.8));
    # ES = (s_x - s_y) / sd([s_x, s_y]) = sqrt(2) (the SD of two values is their distance / sqrt(2)),
    # v = (s_x - s_y)^2 / 2 = 1.2^2 / 2 = 0.72
    x, y = np.array([[[2.0, 0.0]]]), np.array([[[0.6, 0.8]]])
    a, b = np.array([[[1.0, 0.0]]]), np.array([[[0.0, 3.0]]])
    samples = ceat_effect_sizes(x, y, a, b)
    assert samples.effect_sizes[0] == pytest.approx(math.sqrt(2), abs=1e-12)
    assert samples.variances[0] == pytest.approx(0.72, abs=1e-12)


def test_draws_are_successive_randint_calls_in_ceat_py_order():
    counts = [[3, 5], [2, 7], [4], [1, 6, 2]]
    draws = ceat_draws(counts, n_samples=20, seed=99)
    legacy = np.random.RandomState(99)
    for i in range(20):
        for k, per_word in enumerate(counts):
            for j, count in enumerate(per_word):
                assert draws.indices[k][i, j] == legacy.randint(0, count)
    assert draws.record() == {
        "n_samples": 20,
        "seed": 99,
        "scheme": draws.scheme,
        "context_counts": counts,
    }
    unseeded = ceat_draws(counts, n_samples=3)
    again = ceat_draws(counts, n_samples=3, seed=unseeded.seed)  # recorded seed draws the same samples
    assert all(np.array_equal(p, q) for p, q in zip(unseeded.indices, again.indices))


def test_bad_inputs_are_refused_by_place():
    with pytest.raises(DataError, match=r"set Y, word 2: needs at least one context"):
        ceat_draws([[2], [3, 0], [1], [1]], n_samples=5, seed=1)
    with pytest.raises(DataError, match="X, Y, A, B"):
        ceat_draws([[2], [3]], n_samples=5, seed=1)
    with pytest.raises(OptionError, match="seed"):
        ceat_draws([[2], [3], [1], [1]], n_samples=5, seed=2**32)
    with pytest.raises(OptionError, match="n_samples"):
        ceat_draws([[2], [3], [1], [1]], n_samples=0, seed=1)
    contexts = _contexts("heterogeneous")
    contexts[2][1] = contexts[2][1].copy()
    contexts[2][1][1] = 0.0
    with pytest.raises(DataError, match=r"set A, word 2, context 2: a zero vector"):
        ceat(contexts, n_samples=5, seed=1)
    contexts = _contexts("heterogeneous")
    contexts[3][0] = contexts[3][0][:, :4]
    with pytest.raises(DataError, match="set B, word 1: embeddings have 4 dimensions"):
        ceat(contexts, n_samples=5, seed=1)
    same = [[np.ones((2, 3))], [np.ones((2, 3))], [np.eye(3)[:1]], [np.eye(3)[1:2]]]
    with pytest.raises(DataError, match="association scores are all equal"):
        ceat(same, n_samples=4, seed=1)
    zero = np.ones((2, 3, 4))
    zero[1, 2] = 0.0
    with pytest.raises(DataError, match="set Y, sample 2, word 3: a zero vector"):
        ceat_effect_sizes(np.ones((2, 1, 4)), zero, np.ones((2, 2, 4)), np.ones((2, 2, 4)))
    with pytest.raises(DataError, match="positive variance"):
        random_effects([0.1, 0.2], [0.01, 0.0])
    with pytest.raises(DataError, match="effect_sizes has 2 values but variances has 3"):
        random_effects([0.1, 0.2], [0.01, 0.02, 0.03])


def test_intersectional_tests_are_ceat_py_groups_11_to_14():
    groups = FROZEN["weat_groups"]
    for name, sets in CEAT_INTERSECTIONAL_TESTS.items():
        assert [list(sets.x), list(sets.y), list(sets.a), list(sets.b)] == groups[sets.ceat_py_group - 1], name
    assert [sets.ceat_py_group for sets in CEAT_INTERSECTIONAL_TESTS.values()] == [11, 12, 13, 14]
    # tested like every other CEAT: the frozen I1-I4 runs above used ceat.py's own groups 11-14
    assert [FROZEN["cases"][f"i{k}"]["test"] for k in range(1, 5)] == [11, 12, 13, 14]


# -- fairlms (PyPI, MIT): its CEAT on the same contexts, run live ----------------------------------------------


@pytest.fixture
def table_encoder(monkeypatch):
    """tests/table_encoder.py (as in test_stats_seat.py): a stand-in tokenizer and model with the given encodings."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import table_encoder

    return table_encoder


@pytest.mark.slow  # importing fairlms imports torch, transformers and datasets
def test_fairlms_ceat_equals_assoc_where_conventions_match(table_encoder):
    pytest.importorskip("fairlms")
    from fairlms.definition.encoder_only.intrinsic_bias.similarity_based.ceat.ceat import (
        compute_ceat,
        dersimonian_laird,
    )

    contexts = _contexts("heterogeneous")
    texts, rows, per_set = [], [], []
    for k, words in enumerate(contexts):
        sentences = {}
        for j, embeddings in enumerate(words):
            sentences[f"w{k}_{j}"] = [f"w{k}_{j} context {c}" for c in range(len(embeddings))]
            texts += sentences[f"w{k}_{j}"]
            rows.append(embeddings)
        per_set.append(sentences)
    n_trials, seed = 150, 4
    # sample_size=1: one context per word per trial, as ceat.py draws (fairlms's default averages 10)
    result = compute_ceat(
        table_encoder.TableModel(np.concatenate(rows)),
        table_encoder.TableTokenizer(texts),
        *per_set,
        pooling="cls",
        sample_size=1,
        n_trials=n_trials,
        seed=seed,
        device="cpu",
    )
    # fairlms's draws: default_rng(seed).integers(0, n, size=1) per word of T1, T2, A1, A2, per trial
    rng = np.random.default_rng(seed)
    drawn = [[[] for _ in words] for words in contexts]
    for _ in range(n_trials):
        for k, words in enumerate(contexts):
            for j, embeddings in enumerate(words):
                drawn[k][j].append(int(rng.integers(0, len(embeddings), size=1)[0]))
    gathered = [
        np.stack([embeddings[drawn[k][j]] for j, embeddings in enumerate(words)], axis=1)
        for k, words in enumerate(contexts)
    ]
    samples = ceat_effect_sizes(*gathered)
    # fairlms adds 1e-10 to every variance and reports the two-sided p of the paper's supplement
    ours = random_effects(samples.effect_sizes, samples.variances + 1e-10, alternative="two-sided")
    assert ours.effect_size == pytest.approx(result["CES"], rel=1e-12, abs=1e-13)
    assert ours.standard_error == pytest.approx(result["se"], rel=1e-12)
    assert ours.tau_squared == pytest.approx(result["tau2"], rel=1e-10)
    assert ours.q == pytest.approx(result["Q"], rel=1e-10)
    assert ours.p_value == pytest.approx(result["p"], rel=1e-9, abs=1e-300)
    # its DerSimonian-Laird on ceat.py's own samples: the same combination, up to the 1e-10 and the two-sided p
    frozen = FROZEN["cases"]["heterogeneous"]
    theirs = dersimonian_laird(OUTPUTS["heterogeneous_effect_sizes"], OUTPUTS["heterogeneous_variances"])
    assert theirs["CES"] == pytest.approx(frozen["ces"], rel=1e-12)
    assert theirs["tau2"] == pytest.approx(frozen["tau_squared"], rel=1e-12)
    assert theirs["Q"] == pytest.approx(frozen["Q"], rel=1e-10)
    assert theirs["p"] == pytest.approx(2 * min(frozen["p_value"], 1 - frozen["p_value"]), rel=1e-6)
