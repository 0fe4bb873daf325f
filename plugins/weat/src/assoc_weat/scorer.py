"""The ``weat`` scorer: cosine similarities in static word embeddings.

The ``weat`` scorer: cosine similarities between target and attribute words in
static word embeddings, one row per (target word, attribute word).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assoc import DataError, Option, OutOfVocabularyWarning, Scorer, non_negative, positive

from .embeddings import CASES, DTYPES, FORMATS, PHRASES

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from assoc import Stimuli

    from .embeddings import Embeddings


#: What the ``measures`` option can add to the pairwise cosines (formulas: :mod:`assoc_weat.metrics`).
MEASURES = ("cosine", "centroid_cosine", "centroid_distance", "axis_cosine", "relation_projection", "logit")


def _measures(value: list) -> list:
    unknown = [m for m in value if m not in MEASURES]
    if unknown or not value:
        raise ValueError(f"must be a non-empty list of {', '.join(MEASURES)}; unknown: {', '.join(map(str, unknown))}")
    return list(dict.fromkeys(value))


def _share(value: float) -> float:
    if not 0.0 <= value < 1.0:
        raise ValueError(f"must be a share between 0 (no word may be missing) and 1 (exclusive), got {value}")
    return value


class WEATScorer(Scorer):
    """Cosine similarity of every (target word, attribute word) pair in static word embeddings."""

    name = "weat"
    description = "Cosine similarity of target and attribute words in static word embeddings (WEAT, WEFAT, ValNorm)."
    citation = (
        "Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Semantics derived automatically from "
        "language corpora contain human-like biases. Science, 356(6334), 183-186. doi:10.1126/science.aal4230"
    )
    measure = "cosine"
    default_models = ("glove-6b-50d",)
    requires_models = True
    needs_queries = False
    extra_columns = {
        "design": "the design (test) name",
        "target_token": (
            "the embedding entry used for the target ('' when out of vocabulary; a+b for an averaged phrase)"
        ),
        "attribute_token": "the embedding entry used for the attribute (as target_token)",
    }
    options = (
        Option(
            "case",
            str,
            "auto",
            "lookup case: auto (lowercase only for an uncased vocabulary), exact, lower",
            choices=CASES,
        ),
        Option(
            "phrases",
            str,
            "reject",
            "a multi-word stimulus not in the vocabulary: reject (error) or average (mean of its word vectors)",
            choices=PHRASES,
        ),
        Option(
            "max_missing",
            float,
            0.2,
            "largest share of a group's words that may be out of vocabulary; more is an error",
            check=_share,
        ),
        Option("format", str, "auto", "embedding file format (auto guesses from the file name)", choices=FORMATS),
        Option("vocabulary", str, None, "vocabulary file for format=numpy (default: found next to the matrix)"),
        Option(
            "limit",
            int,
            None,
            "read only the first N vectors of the file (they are usually the most frequent)",
            check=positive,
        ),
        Option(
            "measures",
            list,
            ["cosine"],
            "what to write: cosine (target-attribute pairs), centroid_cosine, centroid_distance "
            "(to each group's mean vector; ECT, RND), axis_cosine (SemAxis), relation_projection (RIPA), "
            "logit (RNSB's classifier); see docs/weat.md",
            check=_measures,
        ),
        Option("classifier_cost", float, 1.0, "inverse L2 penalty C of the logit measure's classifier", check=positive),
        Option(
            "classifier_holdout",
            float,
            0.0,
            "share of A ∪ B held out from the logit classifier's training (WEFE's default: 0.2)",
            check=_share,
        ),
        Option("seed", int, 0, "seed of the classifier_holdout split", check=non_negative),
        Option(
            "dtype",
            str,
            "float64",
            "precision the vectors are kept in: float64 (every digit of a text file, as sweater and NumPy read "
            "it) or float32 (gensim's; half the memory, same numbers for files stored in float32)",
            choices=DTYPES,
        ),
        Option(
            "normalize",
            bool,
            False,
            "scale every word vector to unit length before everything (WEFE's normalize=True); changes the "
            "mean-vector, projection and classifier measures, not the cosines",
        ),
        Option(
            "semaxis_neighbours",
            int,
            0,
            "axis_cosine (SemAxis): replace each pole word by the mean of its vector and its l nearest "
            "neighbours in the embedding (An et al. 2018; sweater's semaxis(l = ...)); 0 = no augmentation",
            check=non_negative,
        ),
    )

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Require target and attribute groups in every design."""
        super().check_stimuli(stimuli)
        stimuli.require_embedding_groups(self.name)

    def model_fingerprint(self, model: str) -> str:
        """The embedding's identity: the version of the package that ships it, or the sha256 of its file(s)."""
        from .embeddings import embedding_fingerprint

        return embedding_fingerprint(model, self.params.get("vocabulary"))

    def score(self, stimuli: Stimuli, models: Sequence[str], *, progress: bool) -> pd.DataFrame:
        """Score every (target, attribute) pair with every embedding: one cosine row per pair."""
        import numpy as np
        import pandas as pd

        from assoc import normalise, set_run_report
        from assoc.infra import bar
        from assoc.stats import cosine_matrix

        from .embeddings import load_embeddings, lookup_matrix

        frames = []
        stored: dict[str, str] = {}  # model -> the dtype its vectors were kept in
        self._augmented: dict[str, dict[str, dict[str, list[str]]]] = {}  # model -> design -> pole word -> neighbours
        steps = bar(total=len(models) * len(stimuli.designs), desc="weat", enabled=progress, unit="design")
        for model in models:
            embeddings = load_embeddings(
                model,
                format=self.params["format"],
                vocabulary=self.params["vocabulary"],
                limit=self.params["limit"],
                dtype=self.params["dtype"],
            )
            stored[model] = str(embeddings.vectors.vectors.dtype)
            for design in stimuli.designs:
                target_groups, attribute_groups = design.embedding_groups()
                lookups = {}
                for kind, groups in (("target", target_groups), ("attribute", attribute_groups)):
                    for group, words in groups.items():
                        matrix, tokens = lookup_matrix(
                            embeddings, list(words), case=self.params["case"], phrases=self.params["phrases"]
                        )
                        lookups[kind, group] = (list(words), matrix, tokens)
                self._check_vectors(design.name, model, lookups)
                self._check_missing(design.name, model, lookups)
                if self.params["normalize"]:
                    # WEFE's normalize=True: each word vector over its norm (OOV rows stay NaN)
                    for kind_group, (listed, vectors, entries) in lookups.items():
                        lookups[kind_group] = (
                            listed,
                            vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                            entries,
                        )
                targets = [
                    (g, w, t) for g in target_groups for w, t in zip(lookups["target", g][0], lookups["target", g][2])
                ]
                attributes = [
                    (g, w, t)
                    for g in attribute_groups
                    for w, t in zip(lookups["attribute", g][0], lookups["attribute", g][2])
                ]
                target_vectors = np.vstack([lookups["target", g][1] for g in target_groups])
                attribute_vectors = np.vstack([lookups["attribute", g][1] for g in attribute_groups])
                measures = self.params["measures"]
                frames.extend(
                    self._extra_measures(model, design.name, target_groups, attribute_groups, lookups, embeddings)
                )
                if "cosine" not in measures:
                    steps.update(1)
                    continue
                cosines = cosine_matrix(target_vectors, attribute_vectors)  # NaN rows/columns for OOV words
                n_t, n_a = len(targets), len(attributes)
                t_index = np.repeat(np.arange(n_t), n_a)
                a_index = np.tile(np.arange(n_a), n_t)
                frames.append(
                    pd.DataFrame(
                        {
                            "model": model,
                            "context": "",
                            "target_group": [targets[i][0] for i in t_index],
                            "target": [targets[i][1] for i in t_index],
                            "attribute_group": [attributes[j][0] for j in a_index],
                            "attribute": [attributes[j][1] for j in a_index],
                            "value": cosines.reshape(-1),
                            "design": design.name,
                            "target_token": [targets[i][2] for i in t_index],
                            "attribute_token": [attributes[j][2] for j in a_index],
                            "measure": "cosine",
                        }
                    )
                )
                steps.update(1)
        steps.close()
        table = normalise(
            pd.concat(frames, ignore_index=True),
            scorer=self.name,
            measure=self.measure,
            extra_columns=list(self.extra_columns),
        )
        report: dict = {"vector_dtype": stored, "normalize": self.params["normalize"]}
        if self._augmented:
            report["semaxis_neighbours"] = self._augmented
        return set_run_report(table, report)

    def _extra_measures(
        self,
        model: str,
        design: str,
        target_groups: Mapping[str, Sequence[str]],
        attribute_groups: Mapping[str, Sequence[str]],
        lookups: dict,
        embeddings: Embeddings,
    ) -> list[pd.DataFrame]:
        """Rows of the measures other than ``cosine`` (formulas: :mod:`assoc_weat.metrics`).

        A word with an empty counterpart column is a group's mean vector or a relation:
        ``centroid_*`` rows pair each target word with each attribute group's mean vector
        (``attribute`` = "") and each attribute word with each target group's mean vector
        (``target`` = ""), so RND and ECT can average either side (sweater averages the
        attribute groups, WEFE the target groups). ``axis_cosine`` and ``logit`` rows have the
        attribute group ``"A - B"`` for every ordered pair of attribute groups (A before B in
        the design); ``relation_projection`` rows have ``"A - B"`` and attribute ``"a_i - b_i"``
        for equally large attribute groups, and likewise ``"X - Y"``, ``"x_i - y_i"`` in the
        target columns for each attribute word. Out-of-vocabulary words are left out of every
        mean vector, pair and classifier (the scorer has warned about them).

        With ``semaxis_neighbours`` = l > 0, each pole word of the ``axis_cosine`` rows is
        replaced by the mean of its vector and the vectors of its l nearest neighbours (cosine,
        over the whole loaded vocabulary; gensim's ``most_similar``), as An et al. (2018, sec. 3.2)
        and sweater's ``semaxis(l = ...)``: the axis is the difference of the two groups' means
        of these vectors. The neighbours are listed in the run report.
        """
        import pandas as pd

        measures = [m for m in self.params["measures"] if m != "cosine"]
        if not measures:
            return []
        found: dict = {}  # (kind, group) -> (words, tokens, vectors) of the in-vocabulary words
        for (kind, group), (words, matrix, tokens) in lookups.items():
            keep = [i for i, t in enumerate(tokens) if t]
            found[kind, group] = ([words[i] for i in keep], [tokens[i] for i in keep], matrix[keep])
        sides = (
            ("attribute", attribute_groups, "target", target_groups),
            ("target", target_groups, "attribute", attribute_groups),
        )
        rows: list[dict] = []
        for measure in measures:
            if measure in ("centroid_cosine", "centroid_distance"):
                rows += _centroid_rows(measure, found, sides)
            elif measure in ("axis_cosine", "logit"):
                rows += self._attribute_pair_rows(
                    measure, found, target_groups, attribute_groups, (embeddings, model, design)
                )
            else:  # relation_projection
                rows += _relation_rows(measure, lookups, found, sides)
        if not rows:
            return []
        frame = pd.DataFrame(rows)
        frame.insert(0, "model", model)
        frame["context"] = ""
        frame["design"] = design
        return [frame]

    def _attribute_pair_rows(
        self,
        measure: str,
        found: dict,
        target_groups: Mapping[str, Sequence[str]],
        attribute_groups: Mapping[str, Sequence[str]],
        where: tuple[Embeddings, str, str],
    ) -> list[dict]:
        """``axis_cosine`` or ``logit`` rows: each target word against each ordered pair "A - B" of attribute groups."""
        import itertools

        from . import metrics

        rows: list[dict] = []
        for a, b in itertools.combinations(attribute_groups, 2):
            va, vb = found["attribute", a][2], found["attribute", b][2]
            if not len(va) or not len(vb):
                continue
            if measure == "axis_cosine" and self.params["semaxis_neighbours"]:
                va = self._augment(*where, found["attribute", a])
                vb = self._augment(*where, found["attribute", b])
            for group in target_groups:
                words, tokens, vectors = found["target", group]
                if not words:
                    continue
                if measure == "axis_cosine":
                    values = metrics.axis_cosines(vectors, va, vb)
                else:
                    values = metrics.classifier_logits(
                        vectors,
                        va,
                        vb,
                        cost=self.params["classifier_cost"],
                        holdout=self.params["classifier_holdout"],
                        seed=self.params["seed"],
                    )
                empty = [""] * len(words)
                rows += _measure_rows(measure, "target", (group, words, tokens), (f"{a} - {b}", empty, empty), values)
        return rows

    def _augment(self, embeddings: Embeddings, model: str, design: str, group: tuple) -> np.ndarray:
        """SemAxis pole vectors: each word's vector averaged with its l nearest neighbours' (An et al. 2018).

        The neighbours are the l entries of the whole vocabulary with the highest cosine with the
        word's entry, the entry itself left out (so the word and l others are averaged: sweater's
        ``.soften``, which takes the top l + 1 including the word). For an averaged phrase the
        neighbours are those of its vector. With ``normalize`` the neighbours' vectors are scaled
        to unit length too.
        """
        import numpy as np

        n = self.params["semaxis_neighbours"]
        words, tokens, vectors = group
        kept = embeddings.vectors
        out = np.empty_like(vectors)
        listed = self._augmented.setdefault(model, {}).setdefault(design, {})
        for i, (word, token, vector) in enumerate(zip(words, tokens, vectors)):
            query = token if token in kept.key_to_index else np.asarray(vector, dtype=kept.vectors.dtype)
            neighbours = [key for key, _ in kept.most_similar(positive=[query], topn=n)]
            rows = np.asarray(kept.vectors[[kept.key_to_index[k] for k in neighbours]], dtype=np.float64)
            if self.params["normalize"]:
                rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
            out[i] = np.vstack([vector[None, :], rows]).mean(axis=0)
            listed[word] = neighbours
        return out

    def _check_vectors(self, design: str, model: str, lookups: dict) -> None:
        """Reject found words whose vector has no cosine.

        A word found in the embedding whose vector is all zeros or not finite has no cosine: an error
        naming it (dropping it silently, as a NaN cosine would, hides a broken embedding file).
        """
        import numpy as np

        bad = []
        for (kind, group), (words, matrix, tokens) in lookups.items():
            for word, vector, token in zip(words, matrix, tokens):
                if token and (not np.all(np.isfinite(vector)) or not np.any(vector)):
                    problem = "all zeros" if np.all(np.isfinite(vector)) else "NaN or infinite values"
                    bad.append(f"{kind} group {group!r}: {word!r} (entry {token!r}: {problem})")
        if bad:
            raise DataError(
                f"design {design!r}, embedding {model!r}: these vectors have no direction, so no "
                f"cosine: {'; '.join(bad)}. Check the embedding file or remove the words"
            )

    def _check_missing(self, design: str, model: str, lookups: dict) -> None:
        """Warn with every out-of-vocabulary word per group; error when a group loses too many."""
        limit = self.params["max_missing"]
        report, too_many = [], []
        for (kind, group), (words, _, tokens) in lookups.items():
            missing = [w for w, t in zip(words, tokens) if not t]
            if missing:
                report.append(f"{kind} group {group!r}: {len(missing)}/{len(words)} missing ({', '.join(missing)})")
                if len(missing) / len(words) > limit:
                    too_many.append(f"{kind} group {group!r} lost {len(missing)} of {len(words)} words")
        if too_many:
            raise DataError(
                f"design {design!r}, embedding {model!r}: {'; '.join(too_many)}, more than "
                f"max_missing={limit:.0%} (missing: {'; '.join(report)}). A result on what is left "
                "would not measure the stimuli as designed; raise max_missing to accept it"
            )
        if report:
            warnings.warn(
                f"design {design!r}, embedding {model!r}: out-of-vocabulary words are left out: {'; '.join(report)}",
                OutOfVocabularyWarning,
                stacklevel=2,
            )


#: The two orientations of the rows against a group: (group kind, its groups, scored kind, the scored groups)
Sides = tuple[tuple[str, Mapping[str, Sequence[str]], str, Mapping[str, Sequence[str]]], ...]


def _measure_rows(
    measure: str, scored_kind: str, scored: tuple[str, list, list], against: tuple[str, list, list], values: Any
) -> list[dict]:
    """Rows of ``measure``: scored words (group, words, entries) against what ``against`` names, one per value.

    ``against`` is a group's mean vector, an attribute contrast or a relation: its group and, per
    row, its word and entry (``""`` for a mean vector or a contrast). ``scored_kind`` puts the scored
    words in the target columns (``"target"``) or the attribute columns, and ``against`` in the others.
    """
    (tg, ts, t_tokens), (ag, as_, a_tokens) = (scored, against) if scored_kind == "target" else (against, scored)
    return [
        {
            "measure": measure,
            "target_group": tg,
            "target": target,
            "attribute_group": ag,
            "attribute": attribute,
            "value": float(value),
            "target_token": tt,
            "attribute_token": at,
        }
        for target, attribute, value, tt, at in zip(ts, as_, values, t_tokens, a_tokens)
    ]


def _centroid_rows(measure: str, found: dict, sides: Sides) -> list[dict]:
    """``centroid_cosine`` or ``centroid_distance`` rows: each word against each mean vector of the other kind."""
    from . import metrics

    function = metrics.centroid_cosines if measure == "centroid_cosine" else metrics.centroid_distances
    rows: list[dict] = []
    for g_kind, groups, w_kind, others in sides:
        for group in groups:
            if not len(found[g_kind, group][2]):
                continue
            for other in others:
                words, tokens, vectors = found[w_kind, other]
                if not words:
                    continue
                empty = [""] * len(words)
                values = function(vectors, found[g_kind, group][2])
                rows += _measure_rows(measure, w_kind, (other, words, tokens), (group, empty, empty), values)
    return rows


def _relation_rows(measure: str, lookups: dict, found: dict, sides: Sides) -> list[dict]:
    """``relation_projection`` rows: each word against the relations of the position-paired words of two groups.

    The pairs are over the *listed* words, so a pair with an out-of-vocabulary word is left out,
    and only groups of equal size are paired.
    """
    import itertools

    import numpy as np

    from . import metrics

    rows: list[dict] = []
    for g_kind, groups, w_kind, others in sides:
        for a, b in itertools.combinations(groups, 2):
            words_a, matrix_a, tokens_a = lookups[g_kind, a]
            words_b, matrix_b, tokens_b = lookups[g_kind, b]
            if len(words_a) != len(words_b):
                continue
            keep = [i for i in range(len(words_a)) if tokens_a[i] and tokens_b[i]]
            if not keep:
                continue
            labels = [f"{words_a[i]} - {words_b[i]}" for i in keep]
            pair_tokens = [f"{tokens_a[i]} - {tokens_b[i]}" for i in keep]
            for other in others:
                words, tokens, vectors = found[w_kind, other]
                if not words:
                    continue
                values = metrics.relation_projections(vectors, matrix_a[keep], matrix_b[keep])
                n_w, n_p = values.shape
                w_index, p_index = np.repeat(np.arange(n_w), n_p), np.tile(np.arange(n_p), n_w)
                scored = (other, [words[i] for i in w_index], [tokens[i] for i in w_index])
                relation = (f"{a} - {b}", [labels[j] for j in p_index], [pair_tokens[j] for j in p_index])
                rows += _measure_rows(measure, w_kind, scored, relation, values.reshape(-1))
    return rows
