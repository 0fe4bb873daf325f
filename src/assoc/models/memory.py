"""Models given as objects already in memory, under a name that tables and provenance record.

Wherever a model name is accepted (``assoc.score(..., models=...)``, ``assoc.compare``), a loaded
model may be given instead: a transformers masked LM with its tokenizer (a ``(model, tokenizer)``
pair; ``fmat``, ``pll``), a sentence-transformers model (``sbert_*``) or gensim ``KeyedVectors``
(``weat``). The core registers it here under a name (the one given in a ``{name: model}`` dict,
else ``memory:<label>@<weights hash>``); the table's ``model`` column holds that name, provenance
fingerprints the weights (a SHA-256 of every array, as a local directory's files are hashed), and
the scorer's worker takes the object from here instead of loading the name. In-memory models exist
only in this process, so they run with the local executor only.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from assoc.errors import OptionError

#: The prefix of names the core gives to in-memory models that came without a name.
PREFIX = "memory:"

_LOCK = threading.Lock()
_BY_NAME: dict[str, Any] = {}
_FINGERPRINTS: dict[int, tuple[Any, str]] = {}  # id(object) -> (object, fingerprint): the object kept alive


def is_pair(value: Any) -> bool:
    """Whether ``value`` is a ``(model, tokenizer)`` pair (a 2-tuple whose second item is a tokenizer)."""
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and not isinstance(value[0], str)
        and callable(getattr(value[1], "convert_tokens_to_ids", None))
    )


def as_model_list(models: Any) -> list[tuple[str | None, Any]]:
    """``models`` as ``(name or None, model)`` pairs: a name, a list, a ``{name: model}`` dict or one object."""
    if models is None:
        return []
    if isinstance(models, str) or is_pair(models):
        return [(None, models)]
    if isinstance(models, Mapping):
        for name in models:
            if not isinstance(name, str) or not name.strip():
                raise OptionError(f"the names of a models dict must be non-empty text, got {name!r}")
        return [(name, model) for name, model in models.items()]
    if isinstance(models, Sequence):
        return [(None, model) for model in models]
    return [(None, models)]  # one loaded model (KeyedVectors, a SentenceTransformer, ...)


def register_model(model: Any, name: str | None = None) -> str:
    """Register an in-memory ``model`` (under ``name``, or a name built from it) and return the name.

    The same object registered again gets the same name; a name that already stands for another
    object is an :class:`~assoc.errors.OptionError` (two models must not share a ``model`` value).
    """
    if isinstance(model, str):
        raise OptionError(f"register_model takes a loaded model; {model!r} is a name already")
    if name is None:
        name = f"{PREFIX}{_label(model)}@{fingerprint(model).removeprefix('sha256:')[:12]}"
    name = name.strip()
    with _LOCK:
        known = _BY_NAME.get(name)
        if known is not None and known is not model:
            raise OptionError(f"model name {name!r} already stands for another in-memory model; choose another name")
        _BY_NAME[name] = model
    return name


def in_memory(name: str) -> Any | None:
    """The in-memory model registered as ``name``, or ``None``."""
    return _BY_NAME.get(name)


def forget(name: str) -> None:
    """Drop the in-memory model ``name`` (its memory is freed once nothing else holds it)."""
    with _LOCK:
        model = _BY_NAME.pop(name, None)
        if model is not None:
            _FINGERPRINTS.pop(id(model), None)


def fingerprint(model: Any) -> str:
    """``sha256:<hex>`` of an in-memory model's weights (and vocabulary), computed once per object.

    Hashes, in a fixed order, every parameter and buffer of a torch module (sorted by name: the
    text ``name|dtype|shape|`` then the raw bytes; for a ``(model, tokenizer)`` pair, or a model
    with a ``tokenizer``, then the UTF-8 JSON of the sorted vocabulary items), or a
    ``KeyedVectors``'s UTF-8 JSON ``[dtype, shape, words]`` then its vector bytes: equal weights
    give equal fingerprints whichever way they were loaded.
    """
    with _LOCK:
        known = _FINGERPRINTS.get(id(model))
        if known is not None and known[0] is model:
            return known[1]
    digest = hashlib.sha256()
    parts = model if is_pair(model) else (model,)
    for part in parts:
        _hash_part(part, digest)
    value = "sha256:" + digest.hexdigest()
    with _LOCK:
        _FINGERPRINTS[id(model)] = (model, value)
    return value


def _hash_part(part: Any, digest: Any) -> None:
    if callable(getattr(part, "state_dict", None)):  # a torch module (a SentenceTransformer is one)
        for key, tensor in sorted(part.state_dict().items()):
            data = tensor.detach().cpu().contiguous()
            digest.update(f"{key}|{data.dtype}|{tuple(data.shape)}|".encode())
            digest.update(_tensor_bytes(data))
        tokenizer = getattr(part, "tokenizer", None)
        if tokenizer is not None and callable(getattr(tokenizer, "get_vocab", None)):
            _hash_part(tokenizer, digest)
        return
    if callable(getattr(part, "get_vocab", None)):  # a tokenizer: its vocabulary decides the token ids
        digest.update(json.dumps(sorted(part.get_vocab().items()), ensure_ascii=False).encode())
        return
    vectors, words = getattr(part, "vectors", None), getattr(part, "index_to_key", None)
    if vectors is not None and words is not None:  # gensim KeyedVectors
        import numpy as np

        array = np.ascontiguousarray(vectors)
        digest.update(json.dumps([str(array.dtype), list(array.shape), list(words)], ensure_ascii=False).encode())
        digest.update(array.tobytes())
        return
    raise OptionError(
        f"cannot use a {type(part).__module__}.{type(part).__qualname__} as a model: give a name, a "
        "(transformers model, tokenizer) pair, a sentence-transformers model or gensim KeyedVectors"
    )


def _tensor_bytes(tensor: Any) -> bytes:
    """The raw bytes of a CPU tensor of any dtype (bfloat16 has no numpy dtype: read it as bytes)."""
    import torch

    if tensor.numel() == 0:
        return b""
    return tensor.reshape(-1).view(torch.uint8).numpy().tobytes()


def _label(model: Any) -> str:
    """A readable part of an in-memory model's name: what it was loaded from, else its class."""
    first = model[0] if is_pair(model) else model
    config = getattr(first, "config", None)
    source = getattr(config, "_name_or_path", "") or getattr(config, "name_or_path", "")
    if not source:
        card = getattr(first, "model_card_data", None)
        source = getattr(card, "base_model", "") or ""
    return str(source).strip() or type(first).__name__
