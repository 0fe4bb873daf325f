"""What SEAT and CEAT share: the embedding options, how a text becomes a request, and cosines of vectors.

Every row of both scorers records how its vectors were made (``pooling``, ``layers``,
``special_tokens``, ``lowercase``, ``prefix_space``), so tables of several settings (layers, say) can
be put together and compared (``icc``, ``alpha``, ``convergence`` with ``methods=[..., "layers"]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assoc import Option, OptionError
from assoc.lm import POOLINGS, EmbeddingRequest

if TYPE_CHECKING:
    import numpy as np


def _layers(value: Any) -> list[int]:
    """``check`` of ``layers``: a layer index or a non-empty list of them (integers)."""
    values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if (
        not isinstance(values, (list, tuple))
        or not values
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
    ):
        raise ValueError("must be a layer index or a non-empty list of them (0 = embeddings, -1 = the last layer)")
    return list(values)


def embedding_options(*, pooling_default: str, special_tokens_default: bool, pooling_help: str) -> tuple[Option, ...]:
    """The options of how words and sentences become vectors (each scorer sets its own defaults)."""
    return (
        Option(
            "pooling",
            str,
            pooling_default,
            "which token positions' hidden states make a vector: first / last / mean (of the word's sub-tokens; "
            "for a sentence, of its own tokens), cls (the first position), mean_all (every position, special "
            "tokens included), last_token (a decoder's last token), sentence (a sentence encoder's own "
            f"embedding); {pooling_help}",
            choices=("auto", *POOLINGS),
        ),
        Option(
            "layers",
            list,
            [-1],
            "hidden states averaged: 0 = the embedding layer, 1..L = layers, -1 = the last (e.g. [-4, -3, -2, -1])",
            check=_layers,
        ),
        Option(
            "special_tokens",
            bool,
            special_tokens_default,
            "encode texts with the tokenizer's special tokens ([CLS] ... [SEP]); sent-bias's and ceat.py's BERT "
            "encode without them",
        ),
        Option(
            "lowercase",
            bool,
            False,
            "lower-case every text before encoding (sent-bias's BERT did so, even for cased models: its issue #1)",
        ),
        Option(
            "prefix_space",
            bool,
            False,
            "put a space before every text (ceat.py's GPT-2: add_prefix_space=True, so a first word is read as "
            "' word')",
        ),
    )


@dataclass(frozen=True)
class EmbeddingSettings:
    """How a scorer's texts become :class:`~assoc.lm.EmbeddingRequest` objects (the options, resolved)."""

    pooling: str
    layers: tuple[int, ...]
    special_tokens: bool
    lowercase: bool
    prefix_space: bool

    @classmethod
    def of(cls, params: Mapping[str, Any], pooling: str) -> EmbeddingSettings:
        """The settings of a scorer's ``params``, with ``pooling`` already resolved from ``"auto"``."""
        return cls(
            pooling,
            tuple(int(i) for i in _layers(params["layers"])),
            bool(params["special_tokens"]),
            bool(params["lowercase"]),
            bool(params["prefix_space"]),
        )

    def request(self, text: str, span: tuple[int, int] | None = None) -> EmbeddingRequest:
        """The request for ``text`` (the word at ``span`` in it): lower-cased and prefixed as the options say.

        The span moves with the text: lower-casing is applied to the parts before, in and after it
        (a character whose lower case is longer, such as 'İ', keeps the span on the word).
        """
        if span is None:
            shown = text.lower() if self.lowercase else text
            moved = None
        else:
            before, word, after = text[: span[0]], text[span[0] : span[1]], text[span[1] :]
            if self.lowercase:
                before, word, after = before.lower(), word.lower(), after.lower()
            shown = before + word + after
            moved = (len(before), len(before) + len(word))
        if self.prefix_space:
            shown = " " + shown
            moved = None if moved is None else (moved[0] + 1, moved[1] + 1)
        return EmbeddingRequest(shown, moved, self.pooling, self.layers, self.special_tokens)

    def columns(self) -> dict[str, Any]:
        """What every row records of these settings."""
        return {
            "pooling": self.pooling,
            "layers": ",".join(str(i) for i in self.layers),
            "special_tokens": self.special_tokens,
            "lowercase": self.lowercase,
            "prefix_space": self.prefix_space,
        }


#: The extra columns of the settings (:meth:`EmbeddingSettings.columns`), for a scorer's ``extra_columns``.
SETTINGS_COLUMNS = {
    "pooling": "which token positions' hidden states made the vectors",
    "layers": "the hidden states averaged (comma-separated layer indices; -1 = the last layer)",
    "special_tokens": "whether texts were encoded with the tokenizer's special tokens",
    "lowercase": "whether texts were lower-cased before encoding",
    "prefix_space": "whether a space was put before every text",
}


def resolve_pooling(pooling: str, kind: str, defaults: Mapping[str, str], fallback: str = "mean") -> str:
    """``pooling``, or for ``"auto"`` the scorer's default for the model's kind (``defaults``, else ``fallback``)."""
    if pooling != "auto":
        if pooling == "sentence" and kind != "sentence":
            raise OptionError(
                f"pooling 'sentence' is a sentence encoder's own embedding; a {kind} model pools its hidden states "
                "(first, last, mean, cls, mean_all or last_token)"
            )
        return pooling
    return defaults.get(kind, fallback)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float64 (cosines are then dot products)."""
    import numpy as np  # here: the plugin registers (imports this module) on every command's start-up

    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return matrix / norms


def accepted_embedding_kinds(registered: Mapping[str, Any]) -> list[str]:
    """Every registered kind that serves ``embedding``, the ``sentence`` kind first.

    A sentence-transformers folder holds a ``config.json`` that names a BERT too: the kind that knows
    its ``modules.json`` must be asked first.
    """
    names = [name for name, kind in registered.items() if "embedding" in kind.serves]
    return sorted(names, key=lambda name: name != "sentence")


def check_texts(texts: Sequence[str], where: str) -> None:
    """Refuse an empty text (it has no tokens to pool) before any work."""
    for text in texts:
        if not text.strip():
            raise OptionError(f"{where}: an empty text has nothing to encode")
