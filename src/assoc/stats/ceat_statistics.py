"""CEAT: WEAT on sampled contextual embeddings, combined by a random-effects meta-analysis (Guo & Caliskan, 2021).

Guo, W., & Caliskan, A. (2021). Detecting emergent intersectional biases: Contextualized word
embeddings contain a distribution of human-like biases. *AIES '21*, 122-133.
doi:10.1145/3461702.3462536. The statistics follow the authors' ``code/ceat.py`` (repository
weiguowilliam/CEAT, commit 497e295), whose function ``ceat_meta`` computes, for N samples:

**Sampling** (:func:`ceat_draws`). Each word w has ``n_w`` contextual embeddings (one per
context it occurs in). Sample i (i = 1..N) draws one context per word, with replacement across
samples: for the words of X in order, then Y, then A, then B, ``np.random.randint(0, n_w)`` from
numpy's global ``RandomState`` (``ceat.py`` never seeds it; here it is ``RandomState(seed)``, the
stream ``np.random.seed(seed)`` gives, so the draws equal ``ceat_meta``'s after that call). A word
listed in two sets is drawn once for each.

**One sample's WEAT** (:func:`ceat_effect_sizes`), on the drawn embeddings:
``s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b)`` for w in X ∪ Y, and

    ES_i = [mean_{x in X} s(x) - mean_{y in Y} s(y)] / sd_{w in X ∪ Y} s(w),
    v_i  = sd_{w in X ∪ Y} s(w) ** 2,

with the sample SD (``ddof=1``): the "in-sample variance" v_i is the variance of the association
scores, not the sampling variance of ES_i.

**Random-effects combination** (:func:`random_effects`; DerSimonian & Laird, 1986), with
``W_i = 1 / v_i`` and ``df = N - 1``:

    Q     = sum W_i ES_i^2 - (sum W_i ES_i)^2 / sum W_i
    c     = sum W_i - sum W_i^2 / sum W_i
    tau^2 = (Q - df) / c   if Q > df, else 0
    W*_i  = 1 / (v_i + tau^2)
    CES   = sum W*_i ES_i / sum W*_i,     V = 1 / sum W*_i,     SE = sqrt(V)
    p     = 1 - Phi(CES / SE)             (one-sided, ``scipy.stats.norm.sf``, as ceat.py)

The paper's supplement (§8.3) writes the two-sided ``2 [1 - Phi(|CES / SE|)]``; ``ceat.py`` computes
the one-sided p above, which is the default here (``alternative="two-sided"`` gives the paper's).
``ceat.py`` does not compute I^2; here ``I^2 = (Q - df) / Q`` when ``Q > df``, else 0 (Higgins &
Thompson, 2002), the share of the spread of the ES_i beyond what the v_i explain.

The intersectional tests of ``ceat.py`` (its WEAT groups 11-14; I1-I4 of the paper) are
:data:`CEAT_INTERSECTIONAL_TESTS`: word sets, tested exactly like C1-C10 (``ceat_meta`` on the
four sets, X and Y the two intersectional groups).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import stats as _scipy_stats

from assoc.errors import DataError, OptionError
from assoc.stats.permutation import ALTERNATIVES, Alternative

#: The four sets of a WEAT, in ``ceat.py``'s order of drawing.
SET_NAMES = ("X", "Y", "A", "B")
#: The generator and order of :func:`ceat_draws`, as recorded in provenance.
DRAW_SCHEME = (
    "numpy.random.RandomState(seed) (MT19937); per sample, per word of X, Y, A, B in order: randint(0, n_contexts)"
)
# Bound the memory of one block of samples: samples * words * dimensions stays below this.
_BLOCK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class CEATDraws:
    """Which context of each word every CEAT sample uses (:func:`ceat_draws`).

    Attributes
    ----------
        indices: one integer array per set (X, Y, A, B), shape (n_samples, words in the set):
            ``indices[k][i, j]`` is the context of word j of set k in sample i (0-based).
        context_counts: the number of contexts of each word, per set.
        n_samples: N.
        seed: the seed of ``RandomState`` (drawn from fresh entropy and recorded when none was given).
        scheme: the generator and the order of drawing (:data:`DRAW_SCHEME`).
    """

    indices: tuple[np.ndarray, ...]
    context_counts: tuple[tuple[int, ...], ...]
    n_samples: int
    seed: int
    scheme: str = DRAW_SCHEME

    def record(self) -> dict[str, Any]:
        """What provenance keeps: enough to draw the same samples again (not the indices themselves)."""
        return {
            "n_samples": self.n_samples,
            "seed": self.seed,
            "scheme": self.scheme,
            "context_counts": [list(counts) for counts in self.context_counts],
        }


def ceat_draws(context_counts: Sequence[Sequence[int]], n_samples: int, seed: int | None = None) -> CEATDraws:
    """Draw CEAT's samples: one context per word per sample, in the order ``ceat.py`` draws them.

    Parameters
    ----------
    context_counts
        For each of the four sets X, Y, A, B (in this order), the number of contexts of each of
        its words, in the order of the words.
    n_samples
        N, the number of samples (``ceat.py``'s ``N``; 10,000 in the paper, 1,000 in its supplement).
    seed
        Seed of ``numpy.random.RandomState`` (0 <= seed < 2**32). None draws one from fresh
        entropy; it is recorded in the result either way.

    Returns
    -------
        :class:`CEATDraws`. Sample i draws, for every word of X, then Y, then A, then B,
        ``randint(0, n_contexts)``: row-major, the stream of successive scalar calls.
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise OptionError(f"n_samples must be a positive integer, not {n_samples!r}")
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise OptionError(f"seed must be an integer from 0 to 2**32 - 1 (numpy.random.RandomState), not {seed!r}")
    if isinstance(context_counts, (str, bytes)) or len(context_counts) != len(SET_NAMES):
        raise DataError("context_counts needs one sequence of counts per set: X, Y, A, B")
    counts: list[tuple[int, ...]] = []
    for name, per_word in zip(SET_NAMES, context_counts):
        if isinstance(per_word, (str, bytes)) or len(per_word) == 0:
            raise DataError(f"set {name} has no words")
        checked = []
        for position, count in enumerate(per_word, 1):
            if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
                raise DataError(f"set {name}, word {position}: needs at least one context, has {count!r}")
            checked.append(int(count))
        counts.append(tuple(checked))
    flat = np.array([c for per_word in counts for c in per_word], dtype=np.int64)
    # One vectorised call draws exactly what successive randint(0, n) calls would: numpy fills the
    # array element by element from the same MT19937 stream (checked against ceat.py's own draws).
    drawn = np.random.RandomState(int(seed)).randint(0, flat, size=(int(n_samples), flat.size))
    bounds = np.cumsum([0] + [len(c) for c in counts])
    indices = tuple(drawn[:, bounds[k] : bounds[k + 1]] for k in range(len(SET_NAMES)))
    return CEATDraws(indices, tuple(counts), int(n_samples), int(seed))


@dataclass(frozen=True)
class CEATSamples:
    """Per-sample WEAT effect sizes ES_i and in-sample variances v_i (:func:`ceat_effect_sizes`)."""

    effect_sizes: np.ndarray
    variances: np.ndarray


def ceat_effect_sizes(x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> CEATSamples:
    """One WEAT effect size and in-sample variance per CEAT sample (``ceat.py``'s ``effect_size``).

    Parameters
    ----------
    x, y, a, b
        The drawn embeddings, shape (samples, words in the set, dimensions): row i holds the
        embedding each word has in sample i.

    Returns
    -------
        :class:`CEATSamples` with, per sample, ``ES = [mean_X s - mean_Y s] / sd_{X ∪ Y} s`` and
        ``v = sd_{X ∪ Y} s ** 2`` (sample SD), ``s(w) = mean_A cos(w, a) - mean_B cos(w, b)``
        (Guo & Caliskan, 2021; Caliskan et al., 2017).
    """
    sets = {name: _samples_array(values, name) for name, values in zip(SET_NAMES, (x, y, a, b))}
    shapes = {(arr.shape[0], arr.shape[2]) for arr in sets.values()}
    if len(shapes) != 1:
        described = ", ".join(f"{name} {arr.shape}" for name, arr in sets.items())
        raise DataError(f"the four sets need the same number of samples and dimensions, got {described}")
    if sets["X"].shape[1] + sets["Y"].shape[1] < 2:
        raise DataError("X and Y need at least two words in all for a standard deviation")
    units = {name: _unit_rows(arr, f"set {name}") for name, arr in sets.items()}
    return _effect_sizes_of_units(units["X"], units["Y"], units["A"], units["B"])


def _effect_sizes_of_units(x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> CEATSamples:
    """:func:`ceat_effect_sizes` on unit vectors, shape (samples, words, dimensions)."""
    targets = np.concatenate([x, y], axis=1)
    # cos(w, a) for every sample, target word and attribute word: (samples, |X|+|Y|, |A|)
    s = np.einsum("kwd,kad->kwa", targets, a).mean(axis=2) - np.einsum("kwd,kbd->kwb", targets, b).mean(axis=2)
    n_x = x.shape[1]
    difference = s[:, :n_x].mean(axis=1) - s[:, n_x:].mean(axis=1)
    sd = s.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return CEATSamples(difference / sd, sd**2)


@dataclass(frozen=True)
class RandomEffectsResult:
    """The random-effects combination of CEAT's samples (:func:`random_effects`).

    Attributes
    ----------
        effect_size: the combined effect size CES.
        standard_error: SE = sqrt(V).
        variance: V = 1 / sum W*_i, the variance of CES.
        z: CES / SE.
        p_value: for ``alternative`` (``"greater"``: ``ceat.py``'s one-sided p).
        alternative: ``"greater"``, ``"less"`` or ``"two-sided"``.
        q: Cochran's Q.
        df: N - 1.
        tau_squared: the between-sample variance (DerSimonian-Laird), 0 when Q <= df.
        i_squared: (Q - df) / Q when Q > df, else 0.
        n_samples: N.
    """

    effect_size: float
    standard_error: float
    variance: float
    z: float
    p_value: float
    alternative: str
    q: float
    df: int
    tau_squared: float
    i_squared: float
    n_samples: int


def random_effects(
    effect_sizes: np.ndarray | Sequence[float],
    variances: np.ndarray | Sequence[float],
    *,
    alternative: Alternative = "greater",
) -> RandomEffectsResult:
    """Combine per-sample effect sizes by DerSimonian-Laird random effects, as ``ceat.py``'s ``ceat_meta``.

    Parameters
    ----------
    effect_sizes, variances
        ES_i and v_i of the N samples (finite; variances positive).
    alternative
        ``"greater"`` (``ceat.py``: ``p = 1 - Phi(CES / SE)``), ``"less"``, or ``"two-sided"``
        (the paper's supplement and fairlms: ``2 [1 - Phi(|CES / SE|)]``).

    Returns
    -------
        :class:`RandomEffectsResult`.

    Notes
    -----
    With ``W_i = 1 / v_i`` and ``df = N - 1`` (computed in ``ceat.py``'s order, so the numbers are
    its numbers to rounding):

    ``Q = sum W_i ES_i^2 - (sum W_i ES_i)^2 / sum W_i``; ``c = sum W_i - sum W_i^2 / sum W_i``;
    ``tau^2 = (Q - df) / c`` if ``Q > df`` else 0; ``W*_i = 1 / (v_i + tau^2)``;
    ``CES = sum W*_i ES_i / sum W*_i``; ``V = 1 / sum W*_i``; ``SE = sqrt(V)``; ``z = CES / SE``;
    ``I^2 = (Q - df) / Q`` if ``Q > df`` else 0.

    References: DerSimonian, R., & Laird, N. (1986). Meta-analysis in clinical trials.
    *Controlled Clinical Trials*, 7(3), 177-188. Higgins, J. P. T., & Thompson, S. G. (2002).
    Quantifying heterogeneity in a meta-analysis. *Statistics in Medicine*, 21(11), 1539-1558.
    Guo & Caliskan (2021), supplement §8.3.
    """
    if alternative not in ALTERNATIVES:
        raise OptionError(f"alternative must be one of {', '.join(ALTERNATIVES)}, not {alternative!r}")
    es = _vector(effect_sizes, "effect_sizes")
    v = _vector(variances, "variances")
    if es.size != v.size:
        raise DataError(f"effect_sizes has {es.size} values but variances has {v.size}")
    bad = np.flatnonzero(v <= 0.0)
    if bad.size:
        raise DataError(
            f"variance {int(bad[0])} is {v[bad[0]]!r}; every sample needs a positive variance "
            "(a sample whose association scores are all equal has none)"
        )
    w = 1.0 / v
    q = float(np.sum(w * (es**2)) - ((np.sum(es * w)) ** 2) / np.sum(w))
    df = es.size - 1
    if q > df:
        c = np.sum(w) - np.sum(w**2) / np.sum(w)
        tau_squared = float((q - df) / c)
    else:
        tau_squared = 0.0
    w_star = 1.0 / (v + tau_squared)
    combined = float(np.sum(w_star * es) / np.sum(w_star))
    variance = float(1.0 / np.sum(w_star))
    z = combined / math.sqrt(variance)
    greater, less = float(_scipy_stats.norm.sf(z)), float(_scipy_stats.norm.cdf(z))
    if alternative == "greater":
        p_value = greater
    elif alternative == "less":
        p_value = less
    else:
        p_value = float(2.0 * _scipy_stats.norm.sf(abs(z)))
    i_squared = (q - df) / q if q > df else 0.0
    return RandomEffectsResult(
        effect_size=combined,
        standard_error=math.sqrt(variance),
        variance=variance,
        z=z,
        p_value=p_value,
        alternative=alternative,
        q=q,
        df=df,
        tau_squared=tau_squared,
        i_squared=i_squared,
        n_samples=int(es.size),
    )


@dataclass(frozen=True)
class CEATResult:
    """A CEAT: the combination, the per-sample effect sizes and variances, and the draws behind them."""

    combined: RandomEffectsResult
    samples: CEATSamples
    draws: CEATDraws

    @property
    def effect_size(self) -> float:
        """The combined effect size CES."""
        return self.combined.effect_size

    @property
    def p_value(self) -> float:
        """The combined p-value (``ceat.py``'s one-sided p by default)."""
        return self.combined.p_value


def ceat(
    contexts: Sequence[Sequence[np.ndarray]],
    *,
    n_samples: int = 10_000,
    seed: int | None = None,
    alternative: Alternative = "greater",
) -> CEATResult:
    """CEAT from each word's contextual embeddings: draw N samples, one WEAT each, combine (``ceat_meta``).

    Parameters
    ----------
    contexts
        For each set X, Y, A, B (in this order), one array per word: its embeddings in its
        contexts, shape (contexts, dimensions), in a fixed order (the draws index it).
    n_samples
        N (``ceat.py``'s default 10,000).
    seed
        Seed of the draws (:func:`ceat_draws`); None draws one and records it.
    alternative
        Of the combined p (:func:`random_effects`; ``"greater"`` is ``ceat.py``'s).

    Returns
    -------
        :class:`CEATResult`. Equal to ``ceat_meta`` run after ``np.random.seed(seed)`` on a
        pickle mapping each word to the same list of embeddings, to rounding (Guo & Caliskan, 2021).
    """
    if isinstance(contexts, (str, bytes, Mapping)) or len(contexts) != len(SET_NAMES):
        raise DataError("contexts needs one sequence of per-word embedding arrays per set: X, Y, A, B")
    units: list[list[np.ndarray]] = []
    width: int | None = None
    for name, words in zip(SET_NAMES, contexts):
        if len(words) == 0:
            raise DataError(f"set {name} has no words")
        per_set = []
        for position, values in enumerate(words, 1):
            where = f"set {name}, word {position}"
            arr = np.asarray(values, dtype=np.float64)
            if arr.ndim != 2 or 0 in arr.shape:
                raise DataError(f"{where}: embeddings must be a non-empty 2-D array (contexts × dims), got {arr.shape}")
            if width is None:
                width = arr.shape[1]
            elif arr.shape[1] != width:
                raise DataError(f"{where}: embeddings have {arr.shape[1]} dimensions, the first word has {width}")
            per_set.append(_unit_rows(arr, where))
        units.append(per_set)
    if len(units[0]) + len(units[1]) < 2:
        raise DataError("X and Y need at least two words in all for a standard deviation")
    draws = ceat_draws([[u.shape[0] for u in per_set] for per_set in units], n_samples, seed)
    assert width is not None
    block = max(1, _BLOCK_ELEMENTS // (sum(len(per_set) for per_set in units) * width))
    effect_sizes, variances = [], []
    for start in range(0, draws.n_samples, block):
        stop = min(start + block, draws.n_samples)
        gathered = [
            np.stack([per_set[j][draws.indices[k][start:stop, j]] for j in range(len(per_set))], axis=1)
            for k, per_set in enumerate(units)
        ]
        part = _effect_sizes_of_units(*gathered)
        effect_sizes.append(part.effect_sizes)
        variances.append(part.variances)
    samples = CEATSamples(np.concatenate(effect_sizes), np.concatenate(variances))
    _check_defined(samples)
    return CEATResult(random_effects(samples.effect_sizes, samples.variances, alternative=alternative), samples, draws)


def _check_defined(samples: CEATSamples) -> None:
    undefined = np.flatnonzero(~np.isfinite(samples.effect_sizes) | (samples.variances <= 0.0))
    if undefined.size:
        raise DataError(
            f"CEAT sample {int(undefined[0])} has no effect size: its association scores are all equal "
            "(identical embeddings across the target words)"
        )


def _samples_array(values: object, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 3 or 0 in arr.shape:
        raise DataError(f"set {name} must be a non-empty 3-D array (samples × words × dimensions), got {arr.shape}")
    return arr


def _unit_rows(arr: np.ndarray, where: str) -> np.ndarray:
    """Rows scaled to unit length (the last axis), refusing NaN and zero vectors by place (1-based)."""
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{where}: embeddings contain {int(np.sum(~np.isfinite(arr)))} NaN or infinite value(s)")
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    zero = np.argwhere(norms[..., 0] == 0.0)
    if zero.size:
        labels = ("context",) if arr.ndim == 2 else ("sample", "word")
        place = ", ".join(f"{label} {int(i) + 1}" for label, i in zip(labels, zero[0]))
        raise DataError(f"{where}, {place}: a zero vector has no cosine with anything")
    return arr / norms


def _vector(values: object, label: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise DataError(f"{label} must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{label} contain {int(np.sum(~np.isfinite(arr)))} NaN or infinite value(s)")
    return arr


@dataclass(frozen=True)
class CEATWordSets:
    """The four word sets of one CEAT, with their labels and where they come from."""

    name: str
    description: str
    labels: tuple[str, str, str, str]
    x: tuple[str, ...]
    y: tuple[str, ...]
    a: tuple[str, ...]
    b: tuple[str, ...]
    ceat_py_group: int


_AF: tuple[str, ...] = ("Yvette", "Aisha", "Malika", "Latisha", "Keisha", "Tanisha", "Tamika", "Yolanda")
_AF += ("Nichelle", "Latoya", "Lakisha", "Shereen")
_EM: tuple[str, ...] = ("Frank", "Roger", "Neil", "Geoffrey", "Brad", "Stephen", "Peter", "Josh", "Andrew", "Jack")
_EM += ("Matthew", "Jonathan")
_MF: tuple[str, ...] = ("Maria", "Yesenia", "Adriana", "Liset", "Mayra", "Alma", "Carolina", "Iliana", "Sonia")
_MF += ("Karina", "Alejandra", "Brenda")

#: The intersectional CEATs I1-I4 of Guo & Caliskan (2021, supplement §9.1-9.4), ``ceat.py``'s WEAT
#: groups 11-14, in its order and spelling: single tokens where the paper writes ``fried-chicken``
#: (``chicken``), ``all-American`` (``American``) and ``high-status`` (``status``). Each is tested
#: like C1-C10 (:func:`ceat`: X, Y the names of the two intersectional groups, A, B the attributes).
#: European American males are the second target group throughout, to follow stereotype congruity.
CEAT_INTERSECTIONAL_TESTS: Mapping[str, CEATWordSets] = MappingProxyType(
    {
        "I1": CEATWordSets(
            "I1",
            "African American females vs European American males; their intersectional biases",
            (
                "African American females",
                "European American males",
                "AF intersectional biases",
                "EM intersectional biases",
            ),
            _AF,
            _EM,
            ("loud", "ghetto", "unrefined", "athletic", "unintelligent", "bigbutt", "overweight", "confident")
            + ("darkskinned", "promiscuous", "unfeminine", "aggressive", "chicken"),
            ("rich", "intelligent", "arrogant", "status", "blond", "racist", "American", "leader", "privileged")
            + ("attractive", "tall", "sexist", "successful"),
            11,
        ),
        "I2": CEATWordSets(
            "I2",
            "African American females vs European American males; AF emergent intersectional biases",
            ("African American females", "European American males", "AF emergent biases", "EM intersectional biases"),
            _AF,
            _EM,
            ("bigbutt", "overweight", "confident", "darkskinned", "promiscuous", "unfeminine", "aggressive", "chicken"),
            ("rich", "tall", "intelligent", "arrogant", "successful", "status", "blond", "racist"),
            12,
        ),
        "I3": CEATWordSets(
            "I3",
            "Mexican American females vs European American males; their intersectional biases",
            (
                "Mexican American females",
                "European American males",
                "MF intersectional biases",
                "EM intersectional biases",
            ),
            _MF,
            _EM,
            ("feisty", "curvy", "loud", "cook", "darkskinned", "uneducated", "hardworker", "promiscuous")
            + ("unintelligent", "short", "sexy", "maids"),
            ("rich", "intelligent", "arrogant", "status", "blond", "racist", "American", "leader", "privileged")
            + ("tall", "sexist", "successful"),
            13,
        ),
        "I4": CEATWordSets(
            "I4",
            "Mexican American females vs European American males; MF emergent intersectional biases",
            ("Mexican American females", "European American males", "MF emergent biases", "EM intersectional biases"),
            _MF,
            _EM,
            ("feisty", "curvy", "cook", "promiscuous", "sexy", "maids"),
            ("rich", "tall", "intelligent", "assertive", "arrogant", "successful"),
            14,
        ),
    }
)
