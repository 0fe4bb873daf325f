r"""The StereoSet authors' scores of masked LMs: their per-token intrasentence method and next-sentence prediction.

Both are what ``code/eval_discriminative_models.py`` of moinnadeem/StereoSet (commit ``ead7d08``)
computes with ``--intrasentence-model BertLM`` (or ``RoBERTaLM``) and ``--intersentence-model
BertNextSentence``, with its default batch size of 1. They read a masked LM's own parts (its mask
token, its head's probabilities, a next-sentence head), so they run on the ``masked`` kind only.

**Intrasentence, the per-token method** (``BiasEvaluator.evaluate_intrasentence``,
``dataloader.IntrasentenceLoader``). For each sentence, the *template word* ``w`` (the word of the
sentence at the place of the last context word holding ``BLANK``, stripped of punctuation:
``ChoiceItem.derived["template_words"]``) is tokenized without special tokens into
:math:`t_1 \dots t_n`; for each :math:`k`, the context with ``BLANK`` replaced by
``decode(t_1 .. t_{k-1}) + [MASK]`` is tokenized with the special tokens and

.. math::

    \mathrm{score} = \frac{1}{n} \sum_{k=1}^{n} P(t_k \mid \text{context}_k),

the mean of the **probabilities** (not log-probabilities) of the word's tokens at the mask (a softmax
over the vocabulary). Kept as the authors wrote it: every ``BLANK`` of a context takes the mask (six
contexts have two) and, as a batch of one reads it, the first mask's prediction is the one scored; a
byte-level BPE tokenizer (RoBERTa) tokenizes the word without its leading space, so the pieces asked
for are the word's no-space pieces. A word of no tokens, or a context longer than the model takes,
gives no score (``no_tokens``, ``too_long``), never a guessed one.

**Intersentence, next-sentence prediction** (``intersentence_loader.IntersentenceDataset`` with a
``BertTokenizer``, ``BertForNextSentencePrediction``): ``[CLS] context [SEP] sentence [SEP]``
(each part tokenized on its own), segment 0 up to the first ``[SEP]`` and 1 after it, and

.. math::

    \mathrm{score} = \operatorname{softmax}(\text{NSP logits})_0 = P(\text{IsNext}),

the head's probability that the sentence follows the context. It needs a checkpoint whose weights
hold the next-sentence head (:func:`next_sentence_head`): the authors' ``bert-*`` checkpoints do
(they were saved from BERT's pre-training model, whatever class ``config.json`` names), a folder
saved from a ``BertForMaskedLM`` does not, and the authors' heads for RoBERTa, XLNet and GPT-2
(``ModelNSP``, trained by them) are separate ``.pth`` files (``code/models/download_models.sh``) that
assoc does not read. Without the head the scorer reads the
intersentence items as pseudo-log-likelihoods of the sentence given the context (the ``continuation``
request) and says so in the ``measure`` of those rows.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.lm import LogProb, MaskRequest

if TYPE_CHECKING:
    from assoc.infra import Namespace

#: Where the authors' code does this (for messages and provenance).
AUTHORS_CODE = "moinnadeem/StereoSet ead7d08, code/eval_discriminative_models.py"
#: The weights a next-sentence head needs (their names end so in every BERT-family checkpoint).
NSP_WEIGHTS = ("seq_relationship.weight", "pooler.dense.weight")
#: The engine's name of a next-sentence model in the process's model cache.
NSP_ENGINE = "next-sentence"
#: Requests per engine call and per checkpoint pack.
CHUNK = 2048


@dataclass(frozen=True)
class Score:
    """One sentence's score under the authors' method: a value, or none and why (as a :class:`LogProb`'s status)."""

    value: float
    n_tokens: int
    status: str = "ok"
    reason: str = ""

    def as_log_prob(self) -> LogProb:
        """The score in the request kinds' answer shape (``value`` is the score, not a log-probability)."""
        if self.status != "ok":
            return LogProb.missing(self.status, self.reason)
        return LogProb(self.value, self.n_tokens)


# -- intrasentence: the per-token method ---------------------------------------------------------------


def per_token_requests(engine: Any, context: str, template_word: str | None) -> list[MaskRequest] | Score:
    """The masked copies the authors' loader makes of ``context`` for ``template_word``, or why there are none."""
    if template_word is None:
        return Score(math.nan, 0, "no_template_word", "the sentence has no word where the context has BLANK")
    tokenizer = engine.tokenizer
    pieces = list(tokenizer.encode(template_word, add_special_tokens=False))
    if not pieces:
        return Score(math.nan, 0, "no_tokens", f"the template word {template_word!r} has no tokens")
    requests = []
    for k, piece in enumerate(pieces):
        insertion = tokenizer.decode(pieces[:k])
        text = context.replace("BLANK", f"{insertion}{engine.mask_token}")
        input_ids = tuple(int(i) for i in tokenizer.encode(text, add_special_tokens=True))
        if len(input_ids) > engine.max_length:
            return Score(
                math.nan,
                0,
                "too_long",
                f"{text!r} has {len(input_ids)} tokens, more than the model takes ({engine.max_length})",
            )
        if engine.mask_token_id not in input_ids:
            return Score(math.nan, 0, "no_tokens", f"the mask token is lost when {text!r} is tokenized")
        requests.append(MaskRequest(input_ids, input_ids.index(engine.mask_token_id), (int(piece),)))
    return requests


def per_token_scores(
    engine: Any,
    sentences: Sequence[tuple[str, str | None]],
    *,
    checkpoints: Namespace | None,
    batch_tokens: int | None,
) -> list[Score]:
    """The authors' intrasentence score of each ``(context, template word)`` (module docstring)."""
    from assoc.lm import cached_log_probs

    planned = [per_token_requests(engine, context, word) for context, word in sentences]
    flat = [request for plan in planned if isinstance(plan, list) for request in plan]
    values = cached_log_probs(engine, flat, checkpoints, chunk=CHUNK, batch_tokens=batch_tokens)
    out: list[Score] = []
    at = 0
    for plan in planned:
        if isinstance(plan, Score):
            out.append(plan)
            continue
        probabilities = [math.exp(values[at + k][0]) for k in range(len(plan))]
        at += len(plan)
        out.append(Score(math.fsum(probabilities) / len(probabilities), len(plan)))
    return out


# -- intersentence: next-sentence prediction --------------------------------------------------------------


def _safetensors_names(path: Path) -> list[str]:
    """The tensor names of a ``.safetensors`` file, read from its header (8 bytes of length, then JSON)."""
    with open(path, "rb") as handle:
        (size,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(size))
    return [name for name in header if name != "__metadata__"]


def _torch_names(path: Path) -> list[str]:
    """The tensor names of a PyTorch ``.bin`` checkpoint (memory-mapped: the tensors are not read)."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except RuntimeError:  # an old, non-zip checkpoint cannot be memory-mapped
        state = torch.load(path, map_location="cpu", weights_only=True)
    return [str(name) for name in state]


def model_file(spec: str, name: str, revision: str | None = None) -> Path | None:
    """The file ``name`` of a local model folder, or of a Hub model in the local Hugging Face cache (no download)."""
    folder = Path(spec.strip()).expanduser()
    if folder.is_dir():
        return folder / name if (folder / name).is_file() else None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers installs huggingface_hub
        return None
    try:
        cached = try_to_load_from_cache(spec.strip(), name, revision=revision)
    except ValueError:  # not a Hub id
        return None
    return Path(cached) if isinstance(cached, str) else None


#: The files a checkpoint's weights may be in, the index of a sharded checkpoint first.
WEIGHT_FILES = (
    "model.safetensors.index.json",
    "model.safetensors",
    "pytorch_model.bin.index.json",
    "pytorch_model.bin",
)


def checkpoint_names(spec: str, revision: str | None = None) -> list[str] | None:
    """The tensor names of ``spec``'s checkpoint, from the files' headers (``None``: no weights file found here)."""
    for name in WEIGHT_FILES:
        path = model_file(spec, name, revision)
        if path is None:
            continue
        if path.name.endswith(".index.json"):
            weight_map = json.loads(path.read_text(encoding="utf-8")).get("weight_map") or {}
            return [str(tensor) for tensor in weight_map]
        if path.suffix == ".safetensors":
            return _safetensors_names(path)
        return _torch_names(path)
    return None


def next_sentence_head(spec: str, revision: str | None = None) -> bool:
    """Whether ``spec``'s checkpoint holds a next-sentence head that transformers can load (module docstring).

    Its ``config.json`` must name a model type with a next-sentence class in transformers (BERT,
    MobileBERT, MegatronBERT, ERNIE, ...) and its weights (read from the files' headers, never loaded)
    the head's layer and the pooler it reads (:data:`NSP_WEIGHTS`). A model held in memory, or one whose
    files are not here, has none.
    """
    from assoc import in_memory

    if in_memory(spec) is not None:
        return False
    config_file = model_file(spec, "config.json", revision)
    if config_file is None:
        return False
    try:
        from transformers.models.auto import modeling_auto
    except ImportError:  # pragma: no cover - assoc[mlm] installs transformers
        return False
    model_type = json.loads(config_file.read_text(encoding="utf-8")).get("model_type")
    if model_type not in modeling_auto.MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING_NAMES:
        return False
    names = checkpoint_names(spec, revision)
    return names is not None and all(any(name.endswith(weight) for name in names) for weight in NSP_WEIGHTS)


def _load_next_sentence(
    model: str, *, device: str, dtype: str, revision: str | None, memo: Any = None
) -> tuple[Any, Any, str, str]:
    from transformers.utils import logging as hf_logging

    from assoc.lm import load_pretrained

    # the checkpoint's masked-LM head is not loaded here, on purpose: transformers' report of the weights it
    # leaves unused says nothing the user must act on (next_sentence_head checked the head's weights)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        return load_pretrained(
            model,
            "AutoModelForNextSentencePrediction",
            noun="next-sentence model",
            action="load a next-sentence head",
            device=device,
            dtype=dtype,
            revision=revision,
            memo=memo,
        )
    finally:
        hf_logging.set_verbosity(verbosity)


@dataclass
class NextSentenceModel:
    """A next-sentence model (``AutoModelForNextSentencePrediction``) and its tokenizer, from the model cache."""

    name: str
    tokenizer: Any
    model: Any
    device: str
    fingerprint: str

    @classmethod
    def open(cls, spec: str, *, device: str, dtype: str, revision: str | None, memo: Any = None) -> NextSentenceModel:
        """Load ``spec`` once per process (:data:`assoc.lm.model_cache.MODEL_CACHE`, engine ``next-sentence``)."""
        from assoc.lm import MODEL_CACHE

        return MODEL_CACHE.handle(
            NSP_ENGINE,
            spec,
            _load_next_sentence,
            lambda entry, _shared: cls(spec, entry.tokenizer, entry.model, entry.device, entry.fingerprint),
            device=device,
            dtype=dtype,
            revision=revision,
            memo=memo,
        )

    @property
    def max_length(self) -> int:
        """The longest input the model takes (its position embeddings)."""
        return int(getattr(self.model.config, "max_position_embeddings", 512))

    def encode(self, context: str, sentence: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The authors' input of a pair: ``[CLS] context [SEP] sentence [SEP]`` and its segment ids."""
        tokenizer = self.tokenizer
        first = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(context))
        second = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence))
        ids = (tokenizer.cls_token_id, *first, tokenizer.sep_token_id, *second, tokenizer.sep_token_id)
        boundary = ids.index(tokenizer.sep_token_id)
        return tuple(int(i) for i in ids), tuple(1 if k > boundary else 0 for k in range(len(ids)))

    def is_next(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        checkpoints: Namespace | None,
        batch_tokens: int | None,
    ) -> list[Score]:
        """P(IsNext) of each ``(context, sentence)`` pair (module docstring), read from ``checkpoints`` when stored."""
        import torch

        from assoc.infra import digest
        from assoc.lm import default_batch_tokens, plan_batches

        encoded = [self.encode(context, sentence) for context, sentence in pairs]
        keys = [digest(["is-next", list(ids), list(types)])[:40] for ids, types in encoded]
        out: list[Score | None] = [None] * len(pairs)
        stored = checkpoints.get_many(keys) if checkpoints is not None else {}
        todo = []
        for i, ((sequence, _), key) in enumerate(zip(encoded, keys, strict=True)):
            if len(sequence) > self.max_length:
                out[i] = Score(
                    math.nan,
                    0,
                    "too_long",
                    f"the pair has {len(sequence)} tokens, more than the model takes ({self.max_length})",
                )
            elif isinstance(stored.get(key), list) and len(stored[key]) == 1:
                out[i] = Score(float(stored[key][0]), len(sequence))
            else:
                todo.append(i)
        todo.sort(key=lambda i: -len(encoded[i][0]))
        budget = default_batch_tokens(self.device) if batch_tokens is None else int(batch_tokens)
        pad = int(self.tokenizer.pad_token_id or 0)
        for start, stop in plan_batches([len(encoded[i][0]) for i in todo], budget):
            batch = todo[start:stop]
            width = len(encoded[batch[0]][0])
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            types = torch.zeros((len(batch), width), dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                n = len(encoded[i][0])
                ids[row, :n] = torch.tensor(encoded[i][0])
                types[row, :n] = torch.tensor(encoded[i][1])
                mask[row, :n] = 1
            with torch.inference_mode():
                logits = self.model(
                    input_ids=ids.to(self.device),
                    token_type_ids=types.to(self.device),
                    attention_mask=mask.to(self.device),
                ).logits
            # the authors' softmax in float32; float64 here so that the probability keeps every digit it has
            probability = torch.softmax(logits.double(), dim=-1)[:, 0].cpu().tolist()
            fresh = {}
            for i, value in zip(batch, probability, strict=True):
                out[i] = Score(float(value), len(encoded[i][0]))
                fresh[keys[i]] = [float(value)]
            if checkpoints is not None:
                checkpoints.put_many(fresh)
        return [score for score in out if score is not None]
