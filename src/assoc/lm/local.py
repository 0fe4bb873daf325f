"""The base of the model kinds whose transformers weights run in this process: ``masked`` and ``causal``.

A shared piece of :mod:`assoc.lm`, beside the engines: :class:`LocalLanguageModel` holds what such a
kind does the same way whatever its engine (recognising its models, checking a folder before any
work, naming its weights, describing itself, closing its handle), so that :mod:`assoc.lm.masked.kind`
and :mod:`assoc.lm.causal.kind` add only what is theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.lm.compute import engine_parts
from assoc.lm.identity import model_fingerprint
from assoc.lm.kinds import ChoiceByLikelihood, LanguageModel
from assoc.lm.loading import auto_class_of, check_model_folder, object_auto_class, read_config
from assoc.lm.options import ModelSettings

if TYPE_CHECKING:
    from assoc.infra.cache import Cache, Namespace
    from assoc.lm.requests import Embedding, EmbeddingRequest


class LocalLanguageModel(ChoiceByLikelihood, LanguageModel):
    """Base of the kinds whose transformers weights run in this process (``masked``, ``causal``).

    What such a kind shares: it is recognised from the model's ``config.json`` (:attr:`auto_class`, the
    transformers class that loads it) or from an object's class, its folder is checked before any work
    (:func:`assoc.lm.loading.check_model_folder`), its identity is its weights' fingerprint, its handle
    wraps a loaded engine (``engine``: a :class:`~assoc.lm.masked.MaskedLM`, a
    :class:`~assoc.lm.causal.CausalLM`) from the process's model cache, and it serves ``continuation``,
    ``sentence``, (through :class:`ChoiceByLikelihood`) ``choice``, and ``embedding`` (its hidden states,
    :mod:`assoc.lm.embedding`: the same code for every local kind). A subclass sets :attr:`auto_class`
    and :attr:`noun`, implements ``open`` and the request methods, and adds its own checks and options.
    """

    local: ClassVar[bool] = True
    serves: ClassVar[frozenset[str]] = frozenset({"continuation", "sentence", "choice", "embedding"})
    #: The transformers auto class that loads the kind (``"AutoModelForMaskedLM"``, ...).
    auto_class: ClassVar[str] = ""
    #: What the kind is called in messages (``"masked LM"``).
    noun: ClassVar[str] = ""

    def __init__(self, engine: Any, *, batch_tokens: int | None = None):
        self.engine = engine
        self.name = str(engine.name)
        self.fingerprint = str(engine.fingerprint)
        self.batch_tokens = batch_tokens

    @classmethod
    def detect(cls, spec: str) -> bool:
        """Whether ``spec``'s ``config.json`` names a class :attr:`auto_class` loads (its ``auto_class_of``)."""
        return auto_class_of(read_config(spec)) == cls.auto_class

    @classmethod
    def detect_object(cls, obj: Any) -> bool:
        """Whether a model held in memory is an instance of a class :attr:`auto_class` loads (by its class name)."""
        return object_auto_class(obj) == cls.auto_class

    @classmethod
    def check(cls, spec: str, options: Mapping[str, Any]) -> None:
        """The folder, its config and its tokenizer (:func:`assoc.lm.loading.check_model_folder`), before any work."""
        from assoc.models.memory import in_memory

        if in_memory(spec) is None:
            check_model_folder(spec, noun=cls.noun, revision=ModelSettings.of(options).revision)

    @classmethod
    def identify(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> str:
        """The weights' identity without loading them: a local folder's SHA-256, else the Hub commit."""
        return model_fingerprint(spec, ModelSettings.of(options).revision, cache)

    def describe(self) -> dict[str, Any]:
        """Kind, fingerprint, device and dtype."""
        return {
            "kind": self.kind,
            "fingerprint": self.fingerprint,
            "device": str(self.engine.device),
            "dtype": str(self.engine.dtype),
        }

    def cache_parts(self) -> dict[str, Any]:
        """The engine's numbers' dependencies: weights' fingerprint, dtype, device type, a backend other than torch."""
        return engine_parts(self.engine)

    def embed(
        self, requests: Sequence[EmbeddingRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[Embedding]:
        """Each request's pooled hidden states (:func:`assoc.lm.embedding.hidden_state_embeddings`).

        Each distinct text is encoded once; PyTorch only (an ONNX export has no hidden states); the
        checkpoints hold finished chunks of vectors.
        """
        from assoc.errors import OptionError
        from assoc.lm.embedding import cached_embeddings, check_layers, hidden_state_embeddings, n_hidden_layers

        engine = self.engine
        if getattr(engine, "backend", "torch") != "torch" or getattr(engine, "model", None) is None:
            raise OptionError(
                f"model {self.name!r}: embedding requests read hidden states, which run on PyTorch only "
                "(backend='torch')"
            )
        check_layers(requests, n_hidden_layers(engine.model), self.name)  # before any work

        def compute(part: list[EmbeddingRequest]) -> list[Embedding]:
            return hidden_state_embeddings(
                engine.model,
                engine.tokenizer,
                part,
                name=self.name,
                max_length=engine.max_length,
                device=str(engine.device),
                batch_tokens=self.batch_tokens,
            )

        return cached_embeddings(requests, checkpoints, compute, progress=progress, desc=f"embedding {self.name}")

    def close(self) -> None:
        """Drop the engine's handle (shared weights stay in the process's model cache)."""
        self.engine.close()
