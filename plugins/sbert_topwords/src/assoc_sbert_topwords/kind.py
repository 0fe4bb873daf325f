"""The ``sentence`` model kind: a sentence-transformers model (SBERT) as an :class:`assoc.lm.LanguageModel`.

Registered by this plugin through ``register_model_kinds``, so the one loader (``assoc.lm.open_model``)
opens sentence encoders like every other kind: the scorers of this plugin and any scorer that sends
``embedding`` requests (``seat``, ``ceat``). A model is of this kind when its spec is a registered
name (``all-MiniLM-L6-v2``, ``all-mpnet-base-v2`` and their aliases, :mod:`assoc_sbert_topwords.models`),
a folder holding ``modules.json`` or ``config_sentence_transformers.json``, a ``SentenceTransformer``
held in memory, or any spec written ``sentence:<model>``. It serves ``embedding``:

* ``pooling="sentence"``: the model's own sentence embedding (its pooling module, and unit length
  with ``normalize``), as ``SentenceTransformer.encode`` computes it, in batches of ``batch_size`` texts;
  a text longer than the model's ``max_seq_length`` gets no vector (status ``too_long``), where
  ``encode`` would have cut it silently;
* every other pooling: the hidden states of the transformer inside the model (its first module),
  pooled by :func:`assoc.lm.hidden_state_embeddings`, exactly as for a masked or causal LM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import Option, OptionError, positive
from assoc.lm import LanguageModel

if TYPE_CHECKING:
    from assoc.infra import Cache, Namespace
    from assoc.lm import Embedding, EmbeddingRequest

    from .encoding import SentenceEncoder

#: The kind's own options (the sbert scorers declare them; other scorers leave them at their defaults).
SENTENCE_OPTIONS: tuple[Option, ...] = (
    Option("batch_size", int, 64, "texts per forward pass of the encoder", check=positive),
    Option(
        "normalize",
        bool,
        True,
        "unit-length embeddings (sentence-transformers normalize_embeddings); changes "
        "the valence vector (a mean of unit vectors), not cosines",
    ),
)


def strip_kind_prefix(spec: str, prefix: str | None) -> str:
    """``spec`` without ``<prefix>:`` (a folder whose name starts so is kept as it is)."""
    import os

    if prefix and spec.startswith(prefix + ":") and not os.path.exists(spec):
        return spec[len(prefix) + 1 :]
    return spec


def _settings(options: Mapping[str, Any]) -> dict[str, Any]:
    """The model options the kind reads, with the defaults of ``assoc.lm.MODEL_OPTIONS``."""
    return {
        "device": options.get("device") or "auto",
        "dtype": options.get("dtype") or "float32",
        "revision": options.get("revision"),
        "backend": options.get("backend") or "torch",
        "batch_tokens": options.get("batch_tokens"),
    }


class SentenceTransformerModel(LanguageModel):
    """A sentence-transformers model opened for ``embedding`` requests: the ``sentence`` kind (module docstring).

    Attributes
    ----------
    encoder:
        The loaded :class:`~assoc_sbert_topwords.encoding.SentenceEncoder` (the model and the settings that
        change its embeddings).
    """

    kind: ClassVar[str] = "sentence"
    prefix: ClassVar[str | None] = "sentence"
    serves: ClassVar[frozenset[str]] = frozenset({"embedding"})
    options: ClassVar[tuple[Option, ...]] = SENTENCE_OPTIONS
    description: ClassVar[str] = "a sentence-transformers (SBERT) model: all-MiniLM-L6-v2, all-mpnet-base-v2, ..."
    local: ClassVar[bool] = True

    def __init__(self, encoder: SentenceEncoder, *, batch_tokens: int | None = None):
        self.encoder = encoder
        self.name = encoder.name
        self.fingerprint = encoder.fingerprint
        self.batch_tokens = batch_tokens

    # -- the kind, before anything is loaded --------------------------------------------------------
    @classmethod
    def detect(cls, spec: str) -> bool:
        """A registered name, or a folder with ``modules.json`` or ``config_sentence_transformers.json``."""
        import os
        from pathlib import Path

        from .models import ST_MARKERS, named_models

        if spec in named_models() and not os.path.exists(spec):
            return True
        path = Path(spec).expanduser()
        return path.is_dir() and any((path / marker).is_file() for marker in ST_MARKERS)

    @classmethod
    def detect_object(cls, obj: Any) -> bool:
        """A ``SentenceTransformer`` (or any object with ``encode`` and ``state_dict``) held in memory."""
        return not isinstance(obj, tuple) and callable(getattr(obj, "encode", None)) and hasattr(obj, "state_dict")

    @classmethod
    def check(cls, spec: str, options: Mapping[str, Any]) -> None:
        """Before any work: the backend against a model in memory, and the model's name or folder."""
        from assoc import in_memory

        from .models import resolve_model

        model = strip_kind_prefix(spec, cls.prefix)
        backend = _settings(options)["backend"]
        if in_memory(model) is not None:
            if backend != "torch":
                raise OptionError(
                    f"backend {backend!r} applies to models loaded by name or directory; {model!r} is in memory"
                )
            return
        resolve_model(model)

    @classmethod
    def identify(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> str:
        """The model files' identity (a registered name resolves to its folder), without loading it."""
        from .models import fingerprint, resolve_model

        name, directory = resolve_model(strip_kind_prefix(spec, cls.prefix))
        return fingerprint(name, directory, _settings(options)["revision"], cache)

    @classmethod
    def open(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> SentenceTransformerModel:
        """Load the model with the encoder settings (:func:`~assoc_sbert_topwords.encoding.open_encoder`)."""
        from .encoding import open_encoder

        settings = _settings(options)
        encoder = open_encoder(
            strip_kind_prefix(spec, cls.prefix),
            device=settings["device"],
            dtype=settings["dtype"],
            revision=settings["revision"],
            batch_size=int(options.get("batch_size", 64)),
            normalize=bool(options.get("normalize", True)),
            memo=cache,
            backend=settings["backend"],
        )
        return cls(encoder, batch_tokens=settings["batch_tokens"])

    # -- provenance ------------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """Kind, fingerprint, device, dtype, backend and normalisation."""
        encoder = self.encoder
        return {
            "kind": self.kind,
            "fingerprint": self.fingerprint,
            "device": encoder.device,
            "dtype": encoder.dtype,
            "backend": encoder.backend,
            "normalize": encoder.normalize,
        }

    def cache_parts(self) -> dict[str, Any]:
        """What the embeddings depend on besides the requests (the encoder's cache key)."""
        return self.encoder.cache_key()

    # -- the request kinds ----------------------------------------------------------------------------
    def embed(
        self, requests: Sequence[EmbeddingRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[Embedding]:
        """Each request's vector: the model's own sentence embedding, or its transformer's pooled hidden states."""
        from assoc.lm import cached_embeddings, check_layers, n_hidden_layers, requests_of_kind

        requests_of_kind(requests, "embedding")
        own = [r for r in requests if r.pooling == "sentence"]
        for request in own:
            if request.span is not None or tuple(request.layers) != (-1,) or not request.special_tokens:
                raise OptionError(
                    f"pooling 'sentence' is model {self.name!r}'s own embedding of the whole text (its last layer, "
                    "its special tokens): it takes no span, layers or special_tokens=False; pool hidden states "
                    "with first, last, mean, cls, mean_all or last_token instead"
                )
        if len(own) < len(requests):
            if self.encoder.backend != "torch":
                raise OptionError(
                    f"model {self.name!r}: pooling hidden states runs on PyTorch only (backend='torch'); "
                    f"backend {self.encoder.backend!r} gives the sentence pooling only"
                )
            check_layers(
                [r for r in requests if r.pooling != "sentence"], n_hidden_layers(self._transformer()), self.name
            )
        return cached_embeddings(requests, checkpoints, self._compute, progress=progress, desc=f"embedding {self.name}")

    def _transformer(self) -> Any:
        """The Hugging Face model inside the sentence-transformers model (its first module's)."""
        return self.encoder.model[0].auto_model

    def _compute(self, requests: list[EmbeddingRequest]) -> list[Embedding]:
        from assoc.lm import Embedding, hidden_state_embeddings, max_length, shown_text

        out: list[Embedding | None] = [None] * len(requests)
        own = [i for i, r in enumerate(requests) if r.pooling == "sentence"]
        if own:
            model = self.encoder.model
            limit = int(getattr(model, "max_seq_length", 0) or 0)
            texts = [requests[i].text for i in own]
            lengths = [len(ids) for ids in model.tokenizer(texts, add_special_tokens=True)["input_ids"]]
            fits = [i for i, n in zip(own, lengths) if not limit or n <= limit]
            for i, n in zip(own, lengths):
                if limit and n > limit:
                    out[i] = Embedding.missing(
                        "too_long",
                        f"{shown_text(requests[i].text)} has {n} tokens, more than model {self.name!r} reads "
                        f"({limit}, its max_seq_length; encode would cut it)",
                    )
            if fits:
                vectors = self.encoder.encode([requests[i].text for i in fits])
                for i, vector in zip(fits, vectors):
                    out[i] = Embedding(vector, lengths[own.index(i)])
        pooled = [i for i, r in enumerate(requests) if r.pooling != "sentence"]
        if pooled:
            transformer = self._transformer()
            tokenizer = self.encoder.model[0].tokenizer
            answers = hidden_state_embeddings(
                transformer,
                tokenizer,
                [requests[i] for i in pooled],
                name=self.name,
                max_length=max_length(tokenizer, transformer.config),
                device=str(self.encoder.device),
                batch_tokens=self.batch_tokens,
            )
            for i, answer in zip(pooled, answers):
                out[i] = answer
        return [answer for answer in out if answer is not None]

    def close(self) -> None:
        """Drop the model (the executor calls this before the next model)."""
        self.encoder.model = None
