"""The batched masked-LM engine shared by the fmat and pll scorers.

Speed comes from four things, none of which changes a number beyond float32 noise:
rows with identical token sequences run once; rows are sorted by length and packed
into batches of bounded padded size; padding is on the right with an attention mask
(so mask positions keep their indices); and only the requested positions go through
the LM head, which for a BERT-base model is about a fifth of the work per position.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from assoc.errors import ModelError
from assoc.mlm.requests import MaskRequest


class MaskedLM:
    """A loaded fill-mask model plus its tokenizer. Use :func:`load_masked_lm` to build one.

    Attributes: ``name`` (as given by the user), ``tokenizer``, ``model``, ``device``,
    ``dtype``, ``mask_token``, ``mask_token_id``, ``max_length`` (longest sequence the
    model accepts, special tokens included) and ``fingerprint`` (a stable id of the
    weights: the Hub commit hash, or a sha256 of a local directory's files).
    """

    def __init__(self, name: str, tokenizer: Any, model: Any, *, device: str, dtype: str, fingerprint: str):
        self.name = name
        self.tokenizer = tokenizer
        self.model = model
        self.device = device
        self.dtype = dtype
        self.fingerprint = fingerprint
        self.mask_token: str = tokenizer.mask_token
        self.mask_token_id: int = int(tokenizer.mask_token_id)
        self.max_length = _max_length(tokenizer, model.config)
        self.pad_token_id = int(tokenizer.pad_token_id) if tokenizer.pad_token_id is not None else 0
        self.added_tokens: dict[int, tuple[str, tuple[int, ...], float]] = {}
        self._head_only_masks = model.base_model is not model

    # -- life cycle -------------------------------------------------------------------
    def close(self) -> None:
        """Drop the model and release its memory (CPU and GPU)."""
        self.model = None
        gc.collect()
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:  # pragma: no cover
            pass

    def __enter__(self) -> MaskedLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MaskedLM({self.name!r}, device={self.device!r}, dtype={self.dtype!r})"

    # -- vocabulary -------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Number of output classes of the LM head (what the log-softmax runs over)."""
        return int(self._model().get_input_embeddings().weight.shape[0])

    def encode(self, text: str) -> tuple[int, ...]:
        """Token ids of ``text`` with the model's special tokens, exactly as the fill-mask pipeline builds them."""
        return tuple(int(i) for i in self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def token_string(self, token_id: int) -> str:
        """The vocabulary string of ``token_id`` (added temporary tokens are shown as ``<word>``)."""
        if token_id in self.added_tokens:
            return "<" + self.added_tokens[token_id][0] + ">"
        return str(self.tokenizer.convert_ids_to_tokens(int(token_id)))

    def is_cased(self) -> bool:
        """Whether the tokenizer distinguishes case (decided from the tokenizer, not the model name)."""
        return self.tokenizer.tokenize("Hello World THE") != self.tokenizer.tokenize("hello world the")

    def info(self) -> dict[str, Any]:
        """Model information (the R package's ``BERT_info``)."""
        model = self._model()
        config = model.config
        return {
            "model": self.name,
            "model_type": getattr(config, "model_type", ""),
            "vocab_size": int(getattr(config, "vocab_size", 0) or 0),
            "tokenizer_size": len(self.tokenizer),
            "hidden_size": _first_attr(config, "hidden_size", "dim", "d_model"),
            "embedding_size": _first_attr(config, "embedding_size", "hidden_size", "dim", "d_model"),
            "n_layers": _first_attr(config, "num_hidden_layers", "n_layers", "num_layers"),
            "cased": self.is_cased(),
            "mask_token": self.mask_token,
            "n_parameters": int(sum(p.numel() for p in model.parameters())),
            "max_length": self.max_length,
            "device": self.device,
            "dtype": self.dtype,
            "fingerprint": self.fingerprint,
        }

    def add_temporary_tokens(self, words: Sequence[tuple[str, tuple[int, ...]]], weight_decay: float = 1.0) -> list[int]:
        """Add out-of-vocabulary words as new output classes, in memory only (FMAT's ``add.tokens``).

        Each word's input and output embedding rows (and output bias, if any) are the
        weighted mean of its sub-tokens' rows, with raw weight ``weight_decay**i`` for
        the i-th sub-token (i = 0, 1, ...), normalised to sum to 1 (Bao, 2024, FMAT
        manual: decay 0.5 on ``individual`` + ``##ism`` gives 0.667/0.333). The model
        files are never changed; the new ids are returned in input order. Because the
        log-softmax then runs over the enlarged vocabulary, every probability computed
        after this call is conditional on the enlarged vocabulary, as in the R package.
        """
        import torch

        if not words:
            return []
        if weight_decay <= 0:
            raise ValueError("weight_decay must be > 0")
        model = self._model()
        old_n = self.vocab_size
        try:
            model.resize_token_embeddings(old_n + len(words), mean_resizing=False)
        except Exception as exc:  # noqa: BLE001 - any failure here means the architecture is unsupported
            raise ModelError(f"cannot add temporary tokens to {self.name!r}: {exc}") from exc
        emb_in = model.get_input_embeddings().weight
        out = model.get_output_embeddings()
        emb_out = getattr(out, "weight", None)
        bias = getattr(out, "bias", None)
        if emb_out is None or emb_out.shape[0] != old_n + len(words):
            raise ModelError(f"cannot add temporary tokens to {self.name!r}: its LM head is not a vocabulary projection")
        new_ids = []
        with torch.no_grad():
            for k, (word, subtokens) in enumerate(words):
                new_id = old_n + k
                weights = torch.tensor([weight_decay ** i for i in range(len(subtokens))], dtype=torch.float64)
                weights = (weights / weights.sum()).to(emb_in.dtype).to(emb_in.device)
                index = torch.tensor(subtokens, device=emb_in.device)
                emb_in[new_id] = (weights[:, None] * emb_in[index]).sum(0)
                if emb_out.data_ptr() != emb_in.data_ptr():
                    emb_out[new_id] = (weights[:, None] * emb_out[index]).sum(0)
                if bias is not None and bias.shape[0] == old_n + len(words):
                    bias[new_id] = (weights * bias[index]).sum()
                self.added_tokens[new_id] = (word, tuple(subtokens), float(weight_decay))
                new_ids.append(new_id)
        return new_ids

    # -- scoring ----------------------------------------------------------------------
    def log_probs(self, requests: Sequence[MaskRequest], *, max_tokens: int = 4096,
                  progress: bool = False) -> list[np.ndarray]:
        """``log softmax(logits)[token_ids]`` at each request's position, as float64 arrays in request order.

        The log-softmax runs in float64 over the full output vocabulary (including any
        temporary tokens). Requests sharing ``input_ids`` share one forward row. Rows are
        sorted by length and packed into batches whose padded size (rows x longest row)
        stays at or under ``max_tokens`` (a single longer row still runs alone).
        """
        import torch

        from assoc.progress import bar

        model = self._model()
        requests = list(requests)
        if max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        n_vocab = self.vocab_size
        row_of: dict[tuple[int, ...], int] = {}
        targets: dict[tuple[int, int], list[int]] = defaultdict(list)
        for i, req in enumerate(requests):
            if not isinstance(req, MaskRequest):
                raise TypeError(f"log_probs expects MaskRequest objects, got {type(req).__name__}")
            if len(req.input_ids) > self.max_length:
                raise ModelError(f"a sequence of {len(req.input_ids)} tokens is longer than model {self.name!r} "
                                 f"accepts ({self.max_length} tokens including special tokens)")
            if req.token_ids is not None and any(not 0 <= t < n_vocab for t in req.token_ids):
                raise ModelError(f"token id outside the vocabulary of {self.name!r} (size {n_vocab})")
            row = row_of.setdefault(req.input_ids, len(row_of))
            targets[(row, req.position)].append(i)
        rows = list(row_of)
        positions: dict[int, list[int]] = defaultdict(list)
        for row, pos in targets:
            positions[row].append(pos)
        order = sorted(range(len(rows)), key=lambda r: -len(rows[r]))
        results: list[np.ndarray | None] = [None] * len(requests)
        meter = bar(total=len(rows), desc=f"{self.name}", enabled=progress, unit="seq")
        try:
            start = 0
            while start < len(order):
                longest = len(rows[order[start]])
                stop = start + 1
                while stop < len(order) and (stop - start + 1) * longest <= max_tokens:
                    stop += 1
                batch = order[start:stop]
                picks = [(b, row, pos) for b, row in enumerate(batch) for pos in positions[row]]
                log_sm = self._forward(model, [rows[r] for r in batch], [(b, p) for b, _, p in picks], torch)
                for k, (_, row, pos) in enumerate(picks):
                    vector = log_sm[k]
                    for i in targets[(row, pos)]:
                        wanted = requests[i].token_ids
                        results[i] = vector.copy() if wanted is None else vector[list(wanted)]
                meter.update(len(batch))
                start = stop
        finally:
            meter.close()
        return results  # type: ignore[return-value]

    def _forward(self, model: Any, seqs: list[tuple[int, ...]], picks: list[tuple[int, int]], torch: Any) -> np.ndarray:
        """Run one padded batch; return float64 log-softmax rows for the (batch row, position) picks."""
        longest = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), longest), self.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(seqs), longest), dtype=torch.long)
        for b, seq in enumerate(seqs):
            ids[b, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            attention[b, : len(seq)] = 1
        sel_b = torch.tensor([b for b, _ in picks], device=self.device)
        sel_p = torch.tensor([p for _, p in picks], device=self.device)
        handle = None
        fired: list[bool] = []
        if self._head_only_masks:
            def keep_picked_positions(_module: Any, _args: Any, output: Any) -> Any:
                fired.append(True)
                picked = output[0][sel_b, sel_p].unsqueeze(0)
                if isinstance(output, tuple):
                    return (picked,) + tuple(output[1:])
                output["last_hidden_state"] = picked
                return output

            handle = model.base_model.register_forward_hook(keep_picked_positions)
        try:
            with torch.inference_mode():
                logits = model(input_ids=ids.to(self.device), attention_mask=attention.to(self.device)).logits
        finally:
            if handle is not None:
                handle.remove()
        if fired and logits.dim() == 3 and logits.shape[:2] == (1, len(picks)):
            logits = logits[0]
        elif not fired and logits.dim() == 3 and logits.shape[:2] == (len(seqs), longest):
            # No separate encoder to hook: read the positions from the full logits.
            logits = logits[sel_b, sel_p]
        else:
            raise ModelError(f"unexpected logits shape {tuple(logits.shape)} from model {self.name!r}")
        return torch.log_softmax(logits.to(torch.float64), dim=-1).cpu().numpy()

    def _model(self) -> Any:
        if self.model is None:
            raise ModelError(f"model {self.name!r} was closed")
        return self.model


def _first_attr(config: Any, *names: str) -> int | None:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    return None


# Families whose position ids start after the padding index, so the last
# (padding_idx + 1) position embeddings cannot be used.
_OFFSET_POSITION_TYPES = {"roberta", "xlm-roberta", "camembert", "longformer", "data2vec-text", "xmod",
                          "roberta-prelayernorm", "xlm-roberta-xl", "mpnet", "ibert", "luke", "markuplm"}


def _max_length(tokenizer: Any, config: Any) -> int:
    limits = []
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        if getattr(config, "model_type", "") in _OFFSET_POSITION_TYPES and config.pad_token_id is not None:
            positions -= int(config.pad_token_id) + 1
        limits.append(positions)
    tok_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_limit, int) and 0 < tok_limit < 1_000_000:
        limits.append(tok_limit)
    return min(limits) if limits else 512


def load_masked_lm(model: str, *, device: str = "cpu", dtype: str = "float32", revision: str | None = None) -> MaskedLM:
    """Load a fill-mask model from a Hugging Face id or a local directory.

    Respects the usual Hugging Face cache settings (``HF_HOME``, ``HF_HUB_OFFLINE``).
    Raises :class:`assoc.errors.ModelError` with a clear message when the model cannot
    be found or is not a masked language model.
    """
    from assoc.mlm.loading import load_parts

    tokenizer, lm, fingerprint, device = load_parts(model, device=device, dtype=dtype, revision=revision)
    return MaskedLM(model, tokenizer, lm, device=device, dtype=dtype, fingerprint=fingerprint)
