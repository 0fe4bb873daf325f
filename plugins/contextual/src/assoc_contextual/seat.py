r"""The ``seat`` scorer: SEAT (May et al., 2019), WEAT on sentence encodings, from any model that serves ``embedding``.

Each test (a design: two target groups X, Y and two attribute groups A, B, as
:func:`assoc.load_seat_tests` reads May et al.'s files) is one work unit per model: every distinct
example (a sentence, or a word in the ``weat*`` files) is encoded once, by an ``embedding`` request
(``assoc.lm``), and each (target example, attribute example) pair is one row, its ``value`` the
cosine of their encodings, ``cos(u, v) = u·v / (|u| |v|)`` (computed in float64 from the model's float32
vectors). That is the ``weat`` scorer's table shape, so the ``weat`` and ``wefat`` analyses, ``icc``,
``alpha`` and ``convergence`` read it as they read any, and the ``seat`` analysis gives the effect
size and p-value as sent-bias's ``weat.py`` computes them (:mod:`assoc_contextual.analyses`).

How an example becomes a vector is an option recorded in every row (:mod:`assoc_contextual.embedding`):
``pooling="auto"`` is a sentence encoder's own embedding (``sentence`` kind), the ``[CLS]`` position
of an encoder (``masked``; with ``special_tokens=True``, the default) and the last token of a decoder
(``causal``; May et al.'s GPT, read by jiant with ``combine_method=last``). sent-bias's BERT is
``pooling="cls", special_tokens=False, lowercase=True``: the first word-piece of the lower-cased
sentence, no ``[CLS]`` (docs/contextual.md has the table of conventions).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import StimuliError
from assoc.lm import MODEL_OPTIONS, LMScorer

from .embedding import (
    SETTINGS_COLUMNS,
    EmbeddingSettings,
    accepted_embedding_kinds,
    embedding_options,
    resolve_pooling,
    unit_rows,
)

if TYPE_CHECKING:
    from assoc import Stimuli
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

MAY = (
    "May, C., Wang, A., Bordia, S., Bowman, S. R., & Rudinger, R. (2019). On measuring social biases in sentence "
    "encoders. Proceedings of NAACL-HLT 2019, 622-628. doi:10.18653/v1/N19-1063"
)
#: ``pooling="auto"`` of each model kind.
SEAT_POOLING = {"sentence": "sentence", "masked": "cls", "causal": "last_token"}

#: The roles of a SEAT test, in the order of the file: targ1, targ2, attr1, attr2.
ROLES = ("X", "Y", "A", "B")


class EmbeddingScorer(LMScorer):
    """What SEAT and CEAT share: every registered kind that serves ``embedding``, the sentence kind first."""

    requests = frozenset({"embedding"})

    def accepted_kinds(self) -> list[str]:
        """Every registered kind that serves ``embedding``; ``sentence`` first (its folders hold a BERT config too)."""
        from assoc.lm import registered_kinds

        return accepted_embedding_kinds(registered_kinds())

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Every design needs exactly two target and two attribute groups (X, Y, A, B)."""
        super().check_stimuli(stimuli)
        stimuli.require_embedding_groups(self.name)
        for design in stimuli.designs:
            target, attribute = design.embedding_groups()
            if len(target) != 2 or len(attribute) != 2:
                raise StimuliError(
                    f"scorer {self.name!r}: design {design.name!r} has {len(target)} target and {len(attribute)} "
                    "attribute groups; a test has two of each (X, Y and A, B)"
                )

    def settings(self, model: LanguageModel) -> EmbeddingSettings:
        """The embedding settings for ``model`` (``pooling="auto"`` resolved by its kind)."""
        raise NotImplementedError

    def decode(self, payload: Any) -> list[Any]:
        """A unit's payload is one design's sets: the item list is that one payload."""
        return [payload]


def design_sets(stimuli: Stimuli) -> list[dict[str, Any]]:
    """Each design as ``{"design": name, "sets": [[role, group, [words]], ...]}`` in the order X, Y, A, B."""
    out = []
    for design in stimuli.designs:
        target, attribute = design.embedding_groups()
        groups = list(target.items()) + list(attribute.items())
        out.append(
            {"design": design.name, "sets": [[role, group, list(words)] for role, (group, words) in zip(ROLES, groups)]}
        )
    return out


class SEATScorer(EmbeddingScorer):
    """SEAT cosines of every target example with every attribute example (module docstring)."""

    name = "seat"
    description = (
        "SEAT (May et al. 2019): cosines of the encodings of every target and attribute sentence of a test, from "
        "any encoder, decoder or sentence encoder; the seat analysis gives sent-bias's effect size and p."
    )
    citation = MAY
    measure = "cosine"
    extra_columns: ClassVar[dict[str, str]] = {
        "design": "the test (a SEAT file's name)",
        "target_text": "the text encoded for the target example (after lower-casing and the prefix space)",
        "attribute_text": "the text encoded for the attribute example",
        **SETTINGS_COLUMNS,
    }
    options = (
        *embedding_options(
            pooling_default="auto",
            special_tokens_default=True,
            pooling_help="auto: sentence for a sentence encoder, cls for an encoder, last_token for a decoder",
        ),
        *MODEL_OPTIONS,
    )

    def settings(self, model: LanguageModel) -> EmbeddingSettings:
        """The settings of this run for ``model``."""
        return EmbeddingSettings.of(self.params, resolve_pooling(self.params["pooling"], model.kind, SEAT_POOLING))

    def unit_blocks(self, stimuli: Stimuli, models: Sequence[str]) -> list[tuple[Any, int]]:
        """One unit per test (design): its four sets; its size is the number of examples."""
        return [(sets, sum(len(words) for _, _, words in sets["sets"])) for sets in design_sets(stimuli)]

    def score_items(
        self, model: LanguageModel, items: list[Any], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """Encode the test's distinct examples once, then the cosine of every (target, attribute) pair."""
        import numpy as np

        (payload,) = items
        settings = self.settings(model)
        sets = [(role, group, list(words)) for role, group, words in payload["sets"]]
        texts = list(dict.fromkeys(word for _, _, words in sets for word in words))
        requests = [settings.request(text) for text in texts]
        answers = model.embed(requests, checkpoints=checkpoints)
        width = next((a.vector.shape[0] for a in answers if a.ok), 0)
        vectors = np.full((len(texts), width), np.nan)
        missing = []
        for row, answer in enumerate(answers):
            if answer.ok:
                vectors[row] = answer.vector
            else:
                missing.append(f"{texts[row]!r} ({answer.reason})")
        if missing:
            warnings.warn(
                f"seat: model {model.name!r}, test {payload['design']!r}: {len(missing)} example(s) have no encoding "
                f"and no cosines (first: {missing[0]})",
                stacklevel=2,
            )
        units = unit_rows(vectors)
        at = {text: i for i, text in enumerate(texts)}
        targets = [(group, word) for role, group, words in sets if role in ("X", "Y") for word in words]
        attributes = [(group, word) for role, group, words in sets if role in ("A", "B") for word in words]
        cosines = units[[at[w] for _, w in targets]] @ units[[at[w] for _, w in attributes]].T
        shown = {text: request.text for text, request in zip(texts, requests)}
        common = settings.columns()
        return [
            {
                "context": "",
                "target_group": tg,
                "target": tw,
                "attribute_group": ag,
                "attribute": aw,
                "value": float(cosines[i, j]),
                "design": payload["design"],
                "target_text": shown[tw],
                "attribute_text": shown[aw],
                **common,
            }
            for i, (tg, tw) in enumerate(targets)
            for j, (ag, aw) in enumerate(attributes)
        ]

    def checkpoint_name(self) -> str:
        """Where a unit's vectors are checkpointed while it is computed."""
        return f"{self.name}-embedding"
