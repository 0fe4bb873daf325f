r"""Embeddings in context, shared by every local kind: the ``embedding`` requests (:class:`~assoc.lm.EmbeddingRequest`).

A shared piece of :mod:`assoc.lm`, beside the engines: the masked kind (encoders: BERT, RoBERTa, ...),
the causal kind (decoders: GPT-2, Llama, ...) and a sentence encoder's own transformer read their
hidden states here, the same way. For a request, with :math:`h_l(p)` the hidden state of layer
:math:`l` at token position :math:`p` (layer 0: the embedding layer's output; the model's
``hidden_states``, whose last entry is the last layer's output, after a decoder's final layer norm)::

    e = (1 / |L|) sum_{l in L} (1 / |P|) sum_{p in P} h_l(p)

with ``L`` the request's ``layers`` and ``P`` the positions its ``pooling`` picks
(:data:`~assoc.lm.requests.POOLINGS`): the span's first, last or every sub-token (a token belongs to
the span when its characters overlap it; special tokens never do), the first position, every
position, or the last position.

Speed and memory, none of which changes a number beyond float32 noise (the tests compare each pooling
with one unpadded forward pass of the model itself): every distinct text is encoded once, whatever
the number of words and poolings asked of it; texts are sorted by length and cut into batches whose
padded size stays under the token budget (:func:`assoc.lm.batching.plan_batches`), padded on the
right with an attention mask; the model's base (no LM head) runs; only the pooled vectors are kept.
:func:`cached_embeddings` is the cache -> chunk -> compute loop: vectors found in a checkpoint
namespace are read from it, the rest computed in chunks, each chunk stored as soon as it is done, so
a killed run resumes from the last finished chunk.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from assoc.errors import ModelError, OptionError
from assoc.infra.cache import digest
from assoc.lm.batching import check_budget, plan_batches
from assoc.lm.requests import SPAN_POOLINGS, Embedding, EmbeddingRequest, requests_of_kind, shown_text

if TYPE_CHECKING:
    from assoc.infra.cache import Namespace

#: Requests per compute call and per checkpoint pack (the grain of resuming).
CHUNK = 2048


def request_key(request: EmbeddingRequest) -> str:
    """The cache key of one request: a digest of its text, span, pooling, layers and special tokens."""
    span = list(request.span) if request.span is not None else None
    return digest([request.text, span, request.pooling, list(request.layers), request.special_tokens])[:40]


def _pack(answer: Embedding) -> dict[str, Any]:
    """A JSON-compatible checkpoint entry (the vector as base64 of its float32 bytes)."""
    if not answer.ok:
        return {"status": answer.status, "reason": answer.reason}
    vector = np.ascontiguousarray(answer.vector, dtype="<f4")
    return {"v": base64.b64encode(vector.tobytes()).decode("ascii"), "n": answer.n_tokens, "t": list(answer.tokens)}


def _unpack(entry: Any) -> Embedding | None:
    """The answer of a checkpoint entry, or None for an entry that cannot be read (recomputed, never trusted)."""
    if not isinstance(entry, dict):
        return None
    if "status" in entry:
        return Embedding.missing(str(entry["status"]), str(entry.get("reason", "")))
    try:
        vector = np.frombuffer(base64.b64decode(entry["v"]), dtype="<f4").astype(np.float32)
        return Embedding(vector, int(entry["n"]), tuple(str(t) for t in entry["t"]))
    except (KeyError, ValueError, TypeError):
        return None


def cached_embeddings(
    requests: Sequence[EmbeddingRequest],
    namespace: Namespace | None,
    compute: Callable[[list[EmbeddingRequest]], list[Embedding]],
    *,
    chunk: int = CHUNK,
    progress: bool = False,
    desc: str = "embedding",
) -> list[Embedding]:
    """The answer to every request, from the checkpoint ``namespace`` or ``compute`` (in chunks, each stored).

    Requests asked twice are computed once. The chunks hold requests of similar text length (sorted),
    so that ``compute`` pads little; ``compute`` takes a list of requests and returns their answers.
    """
    from assoc.infra.progress import bar

    requests_of_kind(requests, "embedding")
    keys = [request_key(r) for r in requests]
    found: dict[str, Embedding] = {}
    if namespace is not None:
        for key, entry in namespace.get_many(list(dict.fromkeys(keys))).items():
            answer = _unpack(entry)
            if answer is not None:
                found[key] = answer
    first: dict[str, EmbeddingRequest] = {}
    for key, request in zip(keys, requests, strict=True):
        if key not in found:
            first.setdefault(key, request)
    todo = sorted(first, key=lambda k: len(first[k].text))
    meter = bar(total=len(todo), desc=desc, enabled=progress, unit="vec")
    try:
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            answers = compute([first[k] for k in part])
            fresh = dict(zip(part, answers, strict=True))
            found.update(fresh)
            if namespace is not None:
                namespace.put_many({k: _pack(a) for k, a in fresh.items()})
            meter.update(len(part))
    finally:
        meter.close()
    return [found[k] for k in keys]


def check_layers(requests: Sequence[EmbeddingRequest], n_layers: int, name: str) -> None:
    """Refuse (one :class:`OptionError` line) a layer the model does not have: ``-(n_layers + 1) .. n_layers``."""
    for request in requests:
        for layer in request.layers:
            if not -(n_layers + 1) <= layer <= n_layers:
                raise OptionError(
                    f"layer {layer}: model {name!r} has {n_layers} layers (hidden states 0 = embeddings .. "
                    f"{n_layers}, or -1 = the last .. -{n_layers + 1})"
                )


def n_hidden_layers(model: Any) -> int:
    """How many layers a transformers model has (its hidden states are one more: the embeddings' output)."""
    config = model.config
    for attribute in ("num_hidden_layers", "n_layer", "num_layers", "n_layers"):
        value = getattr(config, attribute, None)
        if isinstance(value, int) and value > 0:
            return value
    raise OptionError(f"cannot tell how many layers model {type(model).__name__} has (its config names none)")


def _positions(request: EmbeddingRequest, offsets: Sequence[tuple[int, int]], special: Sequence[int]) -> list[int]:
    """The token positions ``request.pooling`` pools in a sequence with these character offsets and special mask."""
    n = len(offsets)
    if request.pooling == "cls":
        return [0] if n else []
    if request.pooling == "last_token":
        return [n - 1] if n else []
    if request.pooling == "mean_all":
        return list(range(n))
    own = [p for p in range(n) if not special[p]]
    if request.span is not None:
        start, end = request.span
        own = [p for p in own if offsets[p][0] < end and offsets[p][1] > start and offsets[p][1] > offsets[p][0]]
    if not own:
        return []
    if request.pooling == "first":
        return own[:1]
    if request.pooling == "last":
        return own[-1:]
    return own


def hidden_state_embeddings(
    model: Any,
    tokenizer: Any,
    requests: Sequence[EmbeddingRequest],
    *,
    name: str,
    max_length: int,
    device: str,
    batch_tokens: int | None = None,
) -> list[Embedding]:
    """The pooled hidden states of every request (module docstring), each distinct text encoded once.

    Parameters
    ----------
    model
        A transformers model; its ``base_model`` (the encoder or decoder without its head) runs.
    tokenizer
        Its fast tokenizer (character offsets locate a span's tokens).
    requests
        ``embedding`` requests; ``pooling="sentence"`` is a sentence encoder's own and is refused here.
    name
        The model's name in messages.
    max_length
        The longest sequence the model accepts, special tokens included: a longer text gets no vector
        (status ``too_long``), never a truncated one.
    device, batch_tokens
        Where the model is, and the padded-token budget of one forward batch (None: the device's default).
    """
    import torch

    requests_of_kind(requests, "embedding")
    for request in requests:
        if request.pooling not in (*SPAN_POOLINGS, "cls", "mean_all", "last_token"):
            raise OptionError(
                f"pooling {request.pooling!r} is a sentence encoder's own embedding; model {name!r} pools its hidden "
                "states: first, last, mean (of the word's sub-tokens), cls, mean_all or last_token"
            )
    if not getattr(tokenizer, "is_fast", False):
        raise OptionError(
            f"model {name!r}: embedding requests need a fast tokenizer (character offsets locate a word's tokens); "
            "save the model with its tokenizer.json"
        )
    check_layers(requests, n_hidden_layers(model), name)
    budget = check_budget(batch_tokens, device)
    base = getattr(model, "base_model", model)
    # Encode every distinct (text, special tokens) once. A text longer than the model accepts gets no
    # vector (status too_long, below): the tokenizer's own warning about it says nothing more.
    warned = getattr(tokenizer, "deprecation_warnings", None)
    if isinstance(warned, dict):
        warned["sequence-length-is-longer-than-the-specified-maximum"] = True
    sequences: dict[tuple[str, bool], int] = {}
    encoded: list[tuple[list[int], list[tuple[int, int]], list[int]]] = []
    for request in requests:
        key = (request.text, request.special_tokens)
        if key not in sequences:
            found = tokenizer(
                request.text,
                add_special_tokens=request.special_tokens,
                return_offsets_mapping=True,
                return_special_tokens_mask=True,
            )
            sequences[key] = len(encoded)
            encoded.append(
                (list(found["input_ids"]), [tuple(o) for o in found["offset_mapping"]], found["special_tokens_mask"])
            )
    out: list[Embedding | None] = [None] * len(requests)
    wanted: dict[int, list[tuple[int, list[int]]]] = {}
    for number, request in enumerate(requests):
        ids, offsets, special = encoded[sequences[(request.text, request.special_tokens)]]
        if len(ids) > max_length:
            out[number] = Embedding.missing(
                "too_long",
                f"{shown_text(request.text)} has {len(ids)} tokens, more than model {name!r} accepts ({max_length})",
            )
            continue
        positions = _positions(request, offsets, special)
        if not positions:
            what = f"the span {request.word!r}" if request.span is not None else "the text"
            out[number] = Embedding.missing("no_tokens", f"{what} of {shown_text(request.text)} has no token")
            continue
        wanted.setdefault(sequences[(request.text, request.special_tokens)], []).append((number, positions))
    order = sorted(wanted, key=lambda s: -len(encoded[s][0]))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    with torch.inference_mode():
        for start, stop in plan_batches([len(encoded[s][0]) for s in order], budget):
            batch = order[start:stop]
            width = len(encoded[batch[0]][0])
            input_ids = torch.full((len(batch), width), int(pad), dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, s in enumerate(batch):
                sequence = encoded[s][0]
                input_ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
                mask[row, : len(sequence)] = 1
            hidden = base(
                input_ids=input_ids.to(device),
                attention_mask=mask.to(device),
                output_hidden_states=True,
                return_dict=True,
            ).hidden_states
            for row, s in enumerate(batch):
                tokens = tokenizer.convert_ids_to_tokens(encoded[s][0])
                for number, positions in wanted[s]:
                    request = requests[number]
                    index = torch.tensor(positions, device=hidden[0].device)
                    stacked = torch.stack(
                        [hidden[layer][row].index_select(0, index).float() for layer in request.layers]
                    )
                    vector = stacked.mean(dim=1).mean(dim=0).cpu().numpy().astype(np.float32)
                    if not np.all(np.isfinite(vector)):
                        raise ModelError(
                            f"model {name!r} gave NaN or infinite hidden states for {shown_text(request.text)} "
                            "(float16 overflow? try dtype=float32)"
                        )
                    out[number] = Embedding(vector, len(positions), tuple(str(tokens[p]) for p in positions))
    return [answer for answer in out if answer is not None]
