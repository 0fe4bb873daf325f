"""The static-embedding bias metrics of WEFE and sweater, as plain NumPy functions.

Two kinds of function live here:

* **per-word quantities** computed from word vectors, which the ``weat`` scorer writes into
  the association table as extra ``measure`` values (so every analysis reads one table):

  =====================  =====================================================================
  measure                value of a row
  =====================  =====================================================================
  ``centroid_cosine``    cos(w, m_G), m_G = mean vector of the other role's group G
  ``centroid_distance``  ||w - m_G||, Euclidean
  ``axis_cosine``        cos(w, m_A - m_B), group ``"A - B"`` (SemAxis)
  ``relation_projection``  w · (a_i - b_i) / ||a_i - b_i||, one row per pair i (RIPA)
  ``logit``              log P(A | w) / P(B | w) of a logistic classifier trained on A vs B (RNSB)
  =====================  =====================================================================

* **summaries** of those per-word values: the metric each paper defines.

Formulas and sources are given with each function. Notation: S the words scored (targets),
A and B the attribute groups, m_G = (1/|G|) sum_{g in G} g the mean vector of group G.

References
----------
    An, J., Kwak, H., & Ahn, Y.-Y. (2018). SemAxis: A lightweight framework to characterize
        domain-specific word semantics beyond sentiment. ACL 2018, 2450-2461.
    Dev, S., & Phillips, J. (2019). Attenuating bias in word vectors. AISTATS 2019, 879-887.
    Ethayarajh, K., Duvenaud, D., & Hirst, G. (2019). Understanding undesirable word embedding
        associations. ACL 2019, 1696-1705.
    Garg, N., Schiebinger, L., Jurafsky, D., & Zou, J. (2018). Word embeddings quantify 100 years
        of gender and ethnic stereotypes. PNAS, 115(16), E3635-E3644.
    Manzini, T., Lim, Y. C., Tsvetkov, Y., & Black, A. W. (2019). Black is to criminal as
        caucasian is to police: Detecting and removing multiclass bias in word embeddings.
        NAACL 2019, 615-621.
    Sweeney, C., & Najafian, M. (2019). A transparent framework for evaluating unintended
        demographic bias in word embeddings. ACL 2019, 1662-1667.
"""

from __future__ import annotations

import numpy as np

from assoc import DataError


def _vectors(vectors: np.ndarray, label: str) -> np.ndarray:
    arr = np.asarray(vectors, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise DataError(f"{label} must be a non-empty 2-D array (words × dimensions), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"{label} holds NaN or infinite values; leave out-of-vocabulary words out first")
    return arr


def centroid(vectors: np.ndarray) -> np.ndarray:
    """m_G = the mean of the rows of ``vectors`` (a group's word vectors)."""
    return _vectors(vectors, "group vectors").mean(axis=0)


def centroid_cosines(words: np.ndarray, group: np.ndarray) -> np.ndarray:
    """cos(w, m_G) for every row w of ``words`` (Dev & Phillips 2019, ECT's u_A, u_B)."""
    words = _vectors(words, "words")
    m = centroid(group)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (words @ m) / (np.linalg.norm(words, axis=1) * np.linalg.norm(m))


def centroid_distances(words: np.ndarray, group: np.ndarray) -> np.ndarray:
    """||w - m_G|| (Euclidean) for every row w of ``words`` (Garg et al. 2018, RND's terms)."""
    words = _vectors(words, "words")
    return np.linalg.norm(words - centroid(group), axis=1)


def axis_cosines(words: np.ndarray, group_a: np.ndarray, group_b: np.ndarray) -> np.ndarray:
    """SemAxis score cos(w, m_A - m_B) for every row w of ``words`` (An et al. 2018, eq. 1-2).

    The axis joins the mean vectors of the rows of ``group_a`` and ``group_b``: the pole words'
    vectors (sweater's ``semaxis(l = 0)``), or, for An et al.'s optional augmentation (sweater's
    ``l`` > 0), each pole word's vector already averaged with its l nearest neighbours' (the
    ``weat`` scorer's ``semaxis_neighbours``, which needs the whole vocabulary).
    """
    words = _vectors(words, "words")
    axis = centroid(group_a) - centroid(group_b)
    norm = np.linalg.norm(axis)
    if norm == 0.0:
        raise DataError("the SemAxis axis m_A - m_B is the zero vector: the two groups have the same mean vector")
    with np.errstate(divide="ignore", invalid="ignore"):
        return (words @ axis) / (np.linalg.norm(words, axis=1) * norm)


def relation_projections(words: np.ndarray, group_a: np.ndarray, group_b: np.ndarray) -> np.ndarray:
    """RIPA terms w · b_i, b_i = (a_i - b_i) / ||a_i - b_i||, words × pairs (Ethayarajh et al. 2019, eq. 4).

    The i-th word of A is paired with the i-th word of B (as WEFE pairs its two target sets),
    so both groups must have the same number of words.
    """
    words = _vectors(words, "words")
    a, b = _vectors(group_a, "group A"), _vectors(group_b, "group B")
    if a.shape[0] != b.shape[0]:
        raise DataError(f"RIPA pairs the i-th words of two groups; they have {a.shape[0]} and {b.shape[0]} words")
    relation = a - b
    norms = np.linalg.norm(relation, axis=1)
    if np.any(norms == 0.0):
        raise DataError("a RIPA pair has two identical vectors: its relation vector has no direction")
    return words @ (relation / norms[:, None]).T


def classifier_logits(
    words: np.ndarray,
    group_a: np.ndarray,
    group_b: np.ndarray,
    *,
    cost: float = 1.0,
    holdout: float = 0.0,
    seed: int = 0,
) -> np.ndarray:
    """The log-odds log P(A | w) / P(B | w) from an L2-regularised logistic regression of A vs B (RNSB's classifier).

    The classifier is liblinear's primal L2-regularised logistic regression (the solver both
    sweater, through LiblineaR ``type = 0``, and WEFE, through scikit-learn
    ``solver="liblinear"``, use): minimise 0.5 ||beta||^2 + C sum_i log(1 + exp(-y_i beta·x_i)),
    x_i = (word vector, 1) (the intercept is a regularised feature), tolerance 1e-4. It is
    deterministic. ``holdout`` > 0 trains on a random share 1 - holdout of A ∪ B, stratified by group and drawn
    with ``seed`` (WEFE's default: 0.2, with scikit-learn's ``train_test_split``); 0 (the default,
    as sweater and WEFE's ``holdout=False``) trains on all attribute words.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    words = _vectors(words, "words")
    a, b = _vectors(group_a, "group A"), _vectors(group_b, "group B")
    features = np.concatenate([a, b])
    # +1 = A, -1 = B: WEFE's labels (its first attribute set is the positive class)
    labels = np.concatenate([np.ones(a.shape[0]), -np.ones(b.shape[0])])
    if holdout > 0.0:
        # WEFE 1.0.1's split: shuffled, stratified by group, seeded
        features, _, labels, _ = train_test_split(
            features, labels, shuffle=True, random_state=seed, test_size=holdout, stratify=labels
        )
        if len(set(labels.tolist())) < 2:
            raise DataError(f"after the holdout split (holdout={holdout}, seed={seed}) one group has no training word")
    model = LogisticRegression(solver="liblinear", C=cost, tol=1e-4, max_iter=10_000, random_state=seed)
    model.fit(features, labels)
    sign = 1.0 if model.classes_[1] == 1.0 else -1.0  # decision_function is the log-odds of classes_[1]
    return sign * model.decision_function(words)


# ---------------------------------------------------------------------------------- summaries


def kl_from_uniform(probabilities: np.ndarray) -> float:
    """RNSB: KL(P || U) = sum_i P_i log(P_i / (1/n)), P = p / sum(p) (Sweeney & Najafian 2019, eq. 2).

    ``probabilities`` are the classifier's probabilities of the negative group B for the n
    target words; natural logarithm, as sweater (``rnsb_es``) and WEFE (``scipy.stats.entropy``).
    """
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise DataError("RNSB needs a non-empty vector of probabilities with a positive sum")
    share = p / p.sum()
    uniform = 1.0 / p.size
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(share > 0, share * np.log(share / uniform), 0.0)
    return float(terms.sum())


def spearman(u: np.ndarray, v: np.ndarray) -> float:
    """ECT: Spearman's rank correlation of u_A and u_B over the scored words (Dev & Phillips 2019)."""
    from scipy import stats

    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.shape != v.shape or u.ndim != 1 or u.size < 2:
        raise DataError(f"ECT needs two equally long vectors of at least 2 values, got {u.shape} and {v.shape}")
    return float(stats.spearmanr(u, v).statistic)
