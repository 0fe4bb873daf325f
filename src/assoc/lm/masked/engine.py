"""The batched masked-LM engine shared by the fmat and pll scorers.

Speed comes from these things, none of which changes a number beyond float32 noise:
rows with identical token sequences run once; rows are sorted by length and split into
batches of bounded padded size so as to waste the least padding (:func:`assoc.lm.batching.plan_batches`);
padding is on the right with an attention mask (so mask positions keep their indices);
only the requested positions go through the LM head, which for a BERT-base model is
about a fifth of the work per position; and, where every encoder layer has the BERT
layer structure, the per-token work (projections, feed-forward, layer norms) runs on the
real tokens only, packed without padding, and the last encoder layer computes queries,
attention output and feed-forward at the requested positions only (keys and values
still come from every real token): :func:`_packed_layers`; on a CPU in float32, the
linear layers' matrix products run on oneDNN, which uses the CPU's widest vector
instructions where MKL may not (:mod:`assoc.lm.masked.kernels`). The packed encoder and
oneDNN are each checked once per model against the model's own forward pass
(:meth:`MaskedLM._fast_paths`).
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from assoc.errors import ModelError
from assoc.lm.batching import check_budget, plan_batches, renamed_budget
from assoc.lm.identity import is_content_fingerprint
from assoc.lm.loading import LoadedLM
from assoc.lm.masked.batch import log_softmax64, padded_batch
from assoc.lm.masked.requests import MaskRequest
from assoc.lm.options import check_backend_settings

if TYPE_CHECKING:
    from assoc.infra.cache import Cache


class MaskedLM(LoadedLM):
    """A loaded fill-mask model plus its tokenizer.

    Build one with :func:`assoc.lm.masked.loading.load_masked_lm` (a private copy) or
    :func:`assoc.lm.masked.loading.cached_masked_lm` (shared in the process).

    Attributes: ``name`` (as given by the user), ``tokenizer``, ``model``, ``device``,
    ``dtype``, ``mask_token``, ``mask_token_id``, ``max_length`` (longest sequence the
    model accepts, special tokens included), ``fingerprint`` (a stable id of the
    weights: the Hub commit hash, or a sha256 of a local directory's files) and ``backend``
    (what runs the forward passes: ``"torch"``, or ONNX Runtime with ``"onnx"`` /
    ``"onnx-int8"``, :mod:`assoc.lm.masked.onnx`).
    """

    def __init__(
        self,
        name: str,
        tokenizer: Any,
        model: Any,
        *,
        device: str,
        dtype: str,
        fingerprint: str,
        base_vocab_size: int | None = None,
        shared: bool = False,
        memo: Cache | None = None,
        backend: str = "torch",
    ):
        check_backend_settings(backend, device=device, dtype=dtype)
        # memo: where checks of these weights are remembered (None: the default cache root)
        super().__init__(
            name, tokenizer, model, device=device, dtype=dtype, fingerprint=fingerprint, shared=shared, memo=memo
        )
        self.backend = backend  # what runs the forward passes: torch, onnx or onnx-int8 (assoc.lm.masked.onnx)
        self.mask_token: str = tokenizer.mask_token
        self.mask_token_id: int = int(tokenizer.mask_token_id)
        self.pad_token_id = int(tokenizer.pad_token_id) if tokenizer.pad_token_id is not None else 0
        self.added_tokens: dict[int, tuple[str, tuple[int, ...], float]] = {}
        self._head_only_masks = model.base_model is not model
        # Output classes before any temporary token (what remove_temporary_tokens restores).
        self._base_vocab_size = (
            int(base_vocab_size) if base_vocab_size is not None else int(model.get_input_embeddings().weight.shape[0])
        )
        self._vocab_tensors: dict[str, Any] = {}
        # Run the encoder packed, last layer at the requested positions only, and the linear layers
        # on oneDNN (None = not decided yet; see _fast_paths). The decisions belong to the weights,
        # so handles sharing a cached model share them.
        self._shortcut: bool | None = None
        self._onednn: bool | None = None

    # -- life cycle -------------------------------------------------------------------
    def close(self) -> None:
        """Drop the model and release its memory (CPU and GPU).

        A handle on a model shared through :func:`assoc.lm.masked.loading.cached_masked_lm`
        (``shared``) removes its temporary tokens and drops only itself; the weights stay
        loaded until :func:`assoc.lm.masked.loading.release_masked_lms`.
        """
        if self.shared and self.model is not None:
            self.remove_temporary_tokens()
        super().close()

    def __repr__(self) -> str:
        backend = "" if self.backend == "torch" else f", backend={self.backend!r}"
        return f"MaskedLM({self.name!r}, device={self.device!r}, dtype={self.dtype!r}{backend})"

    # -- vocabulary -------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Number of output classes of the LM head (what the log-softmax runs over)."""
        return int(self._model().get_input_embeddings().weight.shape[0])

    def encode(self, text: str) -> tuple[int, ...]:
        """Token ids of ``text`` with the model's special tokens, exactly as the fill-mask pipeline builds them."""
        # verbose=False: a text longer than the model accepts is named by the engine (too_long), not by transformers
        return tuple(int(i) for i in self.tokenizer(text, add_special_tokens=True, verbose=False)["input_ids"])

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
            "backend": self.backend,
            "fingerprint": self.fingerprint,
        }

    def add_temporary_tokens(
        self, words: Sequence[tuple[str, tuple[int, ...]]], weight_decay: float = 1.0
    ) -> list[int]:
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
        if old_n == self._base_vocab_size:
            # The loaded tensors themselves, so that removing the tokens restores them bit for bit
            # (copies equal in value but laid out differently in memory change float32 sums).
            # (transformers swaps the parameters' .data in place, so keep the tensors, not the parameters)
            self._vocab_tensors = {
                name: p.data
                for name, p in model.named_parameters(remove_duplicate=False)
                if p.dim() >= 1 and p.shape[0] == old_n
            }
        try:
            model.resize_token_embeddings(old_n + len(words), mean_resizing=False)
        except Exception as exc:  # noqa: BLE001 - any failure here means the architecture is unsupported
            raise ModelError(f"cannot add temporary tokens to {self.name!r}: {exc}") from exc
        emb_in = model.get_input_embeddings().weight
        out = model.get_output_embeddings()
        emb_out = getattr(out, "weight", None)
        bias = getattr(out, "bias", None)
        if emb_out is None or emb_out.shape[0] != old_n + len(words):
            raise ModelError(
                f"cannot add temporary tokens to {self.name!r}: its LM head is not a vocabulary projection"
            )
        new_ids = []
        with torch.no_grad():
            for k, (word, subtokens) in enumerate(words):
                new_id = old_n + k
                weights = torch.tensor([weight_decay**i for i in range(len(subtokens))], dtype=torch.float64)
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

    def remove_temporary_tokens(self) -> None:
        """Undo :meth:`add_temporary_tokens`: the vocabulary and LM head return to the loaded model's.

        The loaded embedding and LM-head tensors are put back (not copies of them), so log
        probabilities afterwards equal those before any token was added, bit for bit. Models shared through
        :func:`assoc.lm.masked.loading.cached_masked_lm` must be restored this way after use.
        """
        model = self._model()
        if int(model.get_input_embeddings().weight.shape[0]) != self._base_vocab_size:
            model.resize_token_embeddings(self._base_vocab_size, mean_resizing=False)
            for name, tensor in self._vocab_tensors.items():
                model.get_parameter(name).data = tensor
        self._vocab_tensors = {}
        self.added_tokens.clear()

    # -- scoring ----------------------------------------------------------------------
    def log_probs(
        self,
        requests: Sequence[MaskRequest],
        *,
        batch_tokens: int | None = None,
        progress: bool = False,
        max_tokens: int | None = None,
    ) -> list[np.ndarray]:
        """``log softmax(logits)[token_ids]`` at each request's position, as float64 arrays in request order.

        The log-softmax runs in float64 over the full output vocabulary (including any
        temporary tokens). Requests sharing ``input_ids`` share one forward row. Rows are
        sorted by length and packed into batches whose padded size (rows x longest row)
        stays at or under ``batch_tokens`` (a single longer row still runs alone), split
        so as to waste the least padding (:func:`assoc.lm.batching.plan_batches`). ``batch_tokens=None``
        is :func:`assoc.lm.batching.default_batch_tokens` of the model's device; ``max_tokens`` is its
        former name (a :class:`DeprecationWarning`).
        """
        from assoc.infra.progress import bar

        requests = list(requests)
        budget = check_budget(renamed_budget(batch_tokens, max_tokens), self.device)
        n_vocab = self.vocab_size
        row_of: dict[tuple[int, ...], int] = {}
        targets: dict[tuple[int, int], list[int]] = defaultdict(list)
        for i, req in enumerate(requests):
            if not isinstance(req, MaskRequest):
                raise TypeError(f"log_probs expects MaskRequest objects, got {type(req).__name__}")
            self._refuse_bad_ids(req.input_ids, req.token_ids, n_vocab)
            row = row_of.setdefault(req.input_ids, len(row_of))
            targets[(row, req.position)].append(i)
        rows = list(row_of)
        positions: dict[int, list[int]] = defaultdict(list)
        for row, pos in targets:
            positions[row].append(pos)
        order = sorted(range(len(rows)), key=lambda r: -len(rows[r]))
        results: list[np.ndarray | None] = [None] * len(requests)
        run_batch = self._batch_runner() if rows else None
        meter = bar(total=len(rows), desc=f"{self.name}", enabled=progress, unit="seq")
        try:
            for start, stop in plan_batches([len(rows[r]) for r in order], budget):
                batch = order[start:stop]
                picks = [(b, row, pos) for b, row in enumerate(batch) for pos in positions[row]]
                seqs, batch_picks = [rows[r] for r in batch], [(b, p) for b, _, p in picks]
                log_sm = run_batch(seqs, batch_picks)  # type: ignore[misc]  # rows: so not None
                # One reduction per batch: NaN or inf anywhere makes the sum non-finite (a finite
                # log-softmax row sums to a finite number), so the hot path allocates nothing.
                if not math.isfinite(float(log_sm.sum())):
                    self._refuse_non_finite(log_sm, [rows[batch[b]] for b, _, _ in picks])
                for k, (_, row, pos) in enumerate(picks):
                    vector = log_sm[k]
                    for i in targets[(row, pos)]:
                        wanted = requests[i].token_ids
                        results[i] = vector.copy() if wanted is None else vector[list(wanted)]
                meter.update(len(batch))
        finally:
            meter.close()
        return results  # type: ignore[return-value]

    def attention_received(
        self, sequences: Sequence[Sequence[int]], *, batch_tokens: int | None = None
    ) -> list[np.ndarray]:
        """The attention each position of each unmasked sequence receives, as float64 arrays.

            a_j = (1 / (N_layers N_heads L)) sum_layers sum_heads sum_{i=1}^{L} A[i, j]

        the attention weights averaged over layers, heads and the L attending positions (the
        weights of Kaneko & Bollegala's AULA, 2022, Eq. 4: ``torch.mean`` over those three axes in
        the authors' ``evaluate.py``). Padded positions neither attend nor count. The model runs
        with eager attention for these calls (SDPA returns no weights); PyTorch backend only.
        """
        import torch

        model = self._model()
        budget = check_budget(batch_tokens, self.device)
        seqs = [tuple(int(i) for i in s) for s in sequences]
        order = sorted(range(len(seqs)), key=lambda k: -len(seqs[k]))
        out: list[np.ndarray | None] = [None] * len(seqs)
        before = getattr(model.config, "_attn_implementation", None)
        switch = before not in (None, "eager") and hasattr(model, "set_attn_implementation")
        if switch:
            model.set_attn_implementation("eager")
        try:
            for start, stop in plan_batches([len(seqs[k]) for k in order], budget):
                batch = order[start:stop]
                ids_np, attention_np = padded_batch([seqs[k] for k in batch], self.pad_token_id)
                ids = torch.from_numpy(ids_np).to(self.device)
                mask = torch.from_numpy(attention_np).to(self.device)
                with torch.inference_mode():
                    attentions = model(input_ids=ids, attention_mask=mask, output_attentions=True).attentions
                if not attentions:
                    raise ModelError(f"model {self.name!r} returns no attention weights")
                # [layers, batch, heads, L, L] -> mean over layers and heads -> [batch, L(attending), L(received)]
                stacked = torch.stack([a.double() for a in attentions]).mean(dim=(0, 2))
                valid = mask.double()
                received = (stacked * valid[:, :, None]).sum(dim=1) / valid.sum(dim=1, keepdim=True)
                for row, k in enumerate(batch):
                    out[k] = received[row, : len(seqs[k])].cpu().numpy()
        finally:
            if switch:
                model.set_attn_implementation(before)
        return out  # type: ignore[return-value]  # every sequence was filled above

    def _batch_runner(self) -> Callable[[list[tuple[int, ...]], list[tuple[int, int]]], np.ndarray]:
        """What computes one batch's float64 log-softmax rows at its (batch row, position) picks.

        PyTorch (:meth:`_forward`) for ``backend="torch"``, else the checked ONNX Runtime session
        (:meth:`_onnx_batch`), opened here. A handle without PyTorch (:mod:`assoc.lm.masked.torch_free`)
        gives its session instead.
        """
        model = self._model()
        if self.backend == "torch":
            import torch

            return lambda seqs, picks: self._forward(model, seqs, picks, torch)
        runner = self._onnx_runner(model)
        return lambda seqs, picks: self._onnx_batch(runner, model, seqs, picks)

    def _onnx_runner(self, model: Any) -> Any:
        """The checked ONNX Runtime session of these weights for :attr:`backend` (:func:`.onnx.onnx_forward`)."""
        from assoc.lm.masked.onnx import onnx_forward

        if self.added_tokens or self.vocab_size != self._base_vocab_size:
            from assoc.errors import OptionError

            raise OptionError(
                f"backend {self.backend!r} runs the model as exported, without temporary tokens "
                "(oov='add_tokens'): use backend='torch'"
            )
        return onnx_forward(self, model, self.backend)

    def _onnx_batch(
        self, runner: Any, model: Any, seqs: list[tuple[int, ...]], picks: list[tuple[int, int]]
    ) -> np.ndarray:
        """One batch on ONNX Runtime; the float32 backend's first batch is compared with the model's own forward."""
        from assoc.lm.masked.onnx import compare_with_model, discard

        ids, attention = padded_batch(seqs, self.pad_token_id)
        log_sm = runner.log_softmax(ids, attention, picks)
        if not runner.checked_on_queries:
            # As for the engine's own fast paths: the first and the last row (different lengths where possible)
            rows = {0, len(seqs) - 1}
            chosen = [k for k, (b, _) in enumerate(picks) if b in rows]
            try:
                compare_with_model(
                    self, model, runner, seqs, [picks[k] for k in chosen], "the first batch of queries", log_sm[chosen]
                )
            except ModelError:
                discard(runner, model)  # never used again, in this process or from the cache
                raise
            runner.checked_on_queries = True
        return log_sm

    def reference_log_softmax(
        self, model: Any, seqs: list[tuple[int, ...]], picks: list[tuple[int, int]]
    ) -> np.ndarray:
        """Float64 log-softmax rows at ``picks`` of the batch ``seqs`` by the model's own forward pass.

        PyTorch's kernels, no packed encoder, no oneDNN: what every faster path is checked against.
        """
        import torch

        return self._forward(model, seqs, picks, torch, shortcut=False, onednn=False)

    def _refuse_non_finite(self, log_sm: np.ndarray, sequences: list[tuple[int, ...]]) -> None:
        """Stop with a :class:`ModelError` naming the model and the first query whose output is not finite.

        Finite logits always give a finite log-softmax, so NaN or inf here means the model itself
        computed them: corrupt weights, or a float16 overflow. Averaging such rows silently would
        publish numbers the model never produced.
        """
        bad = ~np.isfinite(log_sm).all(axis=1)
        first = int(np.flatnonzero(bad)[0])
        text = self.tokenizer.decode(list(sequences[first]), skip_special_tokens=False)
        raise ModelError(
            f"model {self.name!r} returned NaN or infinite logits for {int(bad.sum())} of {len(bad)} masked "
            f"position(s) in one batch, first in {text!r} (dtype {self.dtype}): its weights may be corrupt, "
            "or float16 overflowed (try dtype float32)"
        )

    def _forward(
        self,
        model: Any,
        seqs: list[tuple[int, ...]],
        picks: list[tuple[int, int]],
        torch: Any,
        shortcut: bool | None = None,
        onednn: bool | None = None,
    ) -> np.ndarray:
        """Run one padded batch; return float64 log-softmax rows for the (batch row, position) picks.

        ``shortcut``: run the encoder without padding work and its last layer at the picked
        positions only (see :func:`_packed_layers`); ``onednn``: run the linear layers'
        matrix products on oneDNN (:mod:`assoc.lm.masked.kernels`). None = as decided for this
        model by :meth:`_fast_paths`. Either way, only the picked positions go through the LM head.
        """
        if shortcut is None or onednn is None:
            decided = self._fast_paths(model)
            if decided is None:  # not decided for these weights yet: decide on this batch, keep its result
                result = self._decide_fast_paths(model, seqs, picks, torch)
                if shortcut is None and onednn is None:
                    return result
                decided = (bool(self._shortcut), bool(self._onednn))
            shortcut = decided[0] if shortcut is None else shortcut
            onednn = decided[1] if onednn is None else onednn
        from assoc.lm.masked.kernels import onednn_linear

        ids_np, attention_np = padded_batch(seqs, self.pad_token_id)
        longest = ids_np.shape[1]
        ids = torch.from_numpy(ids_np).to(self.device)
        attention = torch.from_numpy(attention_np).to(self.device)
        sel_b = torch.tensor([b for b, _ in picks], device=self.device)
        sel_p = torch.tensor([p for _, p in picks], device=self.device)
        handle = None
        fired: list[bool] = []
        encoder = _bert_encoder(model) if shortcut else None
        if self._head_only_masks:

            def keep_picked_positions(_module: Any, _args: Any, output: Any) -> Any:
                fired.append(True)
                picked = output[0][sel_b, sel_p].unsqueeze(0)
                if isinstance(output, tuple):
                    return (picked,) + tuple(output[1:])
                output["last_hidden_state"] = picked
                return output

            handle = model.base_model.register_forward_hook(keep_picked_positions)
        if encoder is not None:
            valid = attention.bool()

            def packed_encoder(hidden_states: Any, *_args: Any, **_kwargs: Any) -> Any:
                from transformers.modeling_outputs import BaseModelOutputWithPastAndCrossAttentions as Output

                out = hidden_states.new_zeros(hidden_states.shape)
                out[sel_b, sel_p] = _packed_layers(encoder.layer, hidden_states, valid, sel_b, sel_p, torch)
                return Output(last_hidden_state=out)

            encoder.forward = packed_encoder  # instance attribute: shadows the class's forward for this call
        try:
            with torch.inference_mode(), onednn_linear(bool(onednn)):
                logits = model(input_ids=ids, attention_mask=attention).logits
        finally:
            if handle is not None:
                handle.remove()
            if encoder is not None:
                del encoder.forward
        if fired and logits.dim() == 3 and logits.shape[:2] == (1, len(picks)):
            logits = logits[0]
        elif not fired and logits.dim() == 3 and logits.shape[:2] == (len(seqs), longest):
            # No separate encoder to hook: read the positions from the full logits.
            logits = logits[sel_b, sel_p]
        else:
            raise ModelError(f"unexpected logits shape {tuple(logits.shape)} from model {self.name!r}")
        return log_softmax64(logits)

    def _fast_path_candidates(self, model: Any) -> tuple[bool, bool]:
        """(packed encoder possible, oneDNN wanted) for this model as it is now and the current setting.

        The packed encoder needs an encoder separate from the LM head whose layers all have
        the BERT layer structure (:func:`_bert_encoder`); oneDNN needs float32 on a CPU and
        ``ASSOC_CPU_MATMUL`` not set to ``torch`` (:func:`assoc.lm.masked.kernels.onednn_wanted`).
        """
        from assoc.lm.masked.kernels import onednn_wanted

        return self._head_only_masks and _bert_encoder(model) is not None, onednn_wanted(self.device, self.dtype)

    def _fast_paths(self, model: Any) -> tuple[bool, bool] | None:
        """(packed encoder, oneDNN linear layers) as decided for these weights, or None when not decided yet.

        Looked up for the weights object in this process, then in the memo of earlier
        processes (:meth:`assoc.infra.cache.Cache.recall`) where the weights have a content-based fingerprint.
        """
        packed_possible, want_onednn = self._fast_path_candidates(model)
        verified = _FAST_PATHS_VERIFIED.get(model)
        if verified is None or (want_onednn and verified[1] is None):
            memo_key = self._fast_paths_memo_key(model)
            if memo_key is None:
                return None
            from assoc.infra.cache import Cache

            remembered = (self.memo if self.memo is not None else Cache()).recall("engine-fast-paths", memo_key)
            if not (
                isinstance(remembered, list)
                and len(remembered) == 2
                and isinstance(remembered[0], bool)
                and (isinstance(remembered[1], bool) or (remembered[1] is None and not want_onednn))
            ):
                return None
            verified = _FAST_PATHS_VERIFIED[model] = (remembered[0], remembered[1])
        self._shortcut = bool(verified[0]) and packed_possible
        self._onednn = bool(verified[1]) and want_onednn
        return self._shortcut, self._onednn

    def _decide_fast_paths(
        self, model: Any, seqs: list[tuple[int, ...]], picks: list[tuple[int, int]], torch: Any
    ) -> np.ndarray:
        """Decide the fast paths for these weights on the batch ``seqs``; return the batch's log-softmax rows.

        The batch is computed with every candidate fast path (:meth:`_fast_path_candidates`),
        and two of its rows (the first and the last: different lengths where possible, so
        padding is exercised) are computed again alone with the model's own forward pass and
        PyTorch's kernels; the candidate is kept only if every log probability of those rows
        agrees within 1e-5. Otherwise the packed encoder alone, then oneDNN alone are tried the
        same way, and else the model's own forward runs. The outcome belongs to the weights: it
        is kept per weights object and remembered across processes where the weights have a
        content-based fingerprint.
        """
        packed_possible, want_onednn = self._fast_path_candidates(model)
        rows = sorted({0, len(seqs) - 1})
        checked = [k for r in rows for k, (b, _) in enumerate(picks) if b == r]
        probe_picks = [(rows.index(picks[k][0]), picks[k][1]) for k in checked]
        reference = self.reference_log_softmax(model, [seqs[r] for r in rows], probe_picks)
        candidates = [(packed_possible, want_onednn), (packed_possible, False), (False, want_onednn)]
        outcome: tuple[bool, bool | None] = (False, False if want_onednn else None)
        result = None
        tried: set[tuple[bool, bool]] = set()
        for packed, onednn in candidates:
            if (packed, onednn) in tried or not (packed or onednn):
                continue
            tried.add((packed, onednn))
            try:
                fast = self._forward(model, seqs, picks, torch, shortcut=packed, onednn=onednn)
            except Exception:  # noqa: BLE001 - any failure means: not for this model, try the next candidate
                continue
            if fast.shape[1:] == reference.shape[1:] and np.max(np.abs(fast[checked] - reference)) < 1e-5:
                outcome, result = (packed, onednn if want_onednn else None), fast
                break
        _FAST_PATHS_VERIFIED[model] = outcome
        memo_key = self._fast_paths_memo_key(model)
        if memo_key is not None:
            from assoc.infra.cache import Cache

            (self.memo if self.memo is not None else Cache()).remember("engine-fast-paths", memo_key, list(outcome))
        self._shortcut, self._onednn = bool(outcome[0]), bool(outcome[1])
        if result is None:
            result = self._forward(model, seqs, picks, torch, shortcut=False, onednn=False)
        return result

    def _fast_paths_memo_key(self, model: Any) -> list[Any] | None:
        """What the fast-path checks depend on, when the weights have a content-based fingerprint.

        The weights (sha256 or Hub commit), the architecture, dtype, device type, CPU
        architecture and the torch and transformers versions; None for fingerprints that do
        not identify the weights (a Hub id without a known commit), which are checked every time.
        """
        import platform

        import torch
        import transformers

        if not self.has_content_fingerprint():
            return None
        return [
            str(self.fingerprint),
            type(model).__name__,
            self.dtype,
            str(self.device).split(":")[0],
            platform.machine(),
            torch.__version__,
            transformers.__version__,
        ]

    def has_content_fingerprint(self) -> bool:
        """Whether :attr:`fingerprint` identifies the weights' content: a sha256 of files or a Hub commit.

        A Hub id without a known commit does not: facts about such weights (engine checks, ONNX
        exports) are not kept across processes under it.
        """
        return is_content_fingerprint(self.fingerprint)


# Outcome of MaskedLM._fast_paths per weights object, for the life of those weights:
# (packed encoder reproduces the model, oneDNN reproduces it; None = oneDNN not tried).
_FAST_PATHS_VERIFIED: weakref.WeakKeyDictionary[Any, tuple[bool, bool | None]] = weakref.WeakKeyDictionary()


def _bert_layer_ok(layer: Any, torch: Any) -> bool:
    """Whether ``layer`` has the BERT layer structure :func:`_packed_layers` reproduces.

    ``attention.self.{query,key,value}`` linear maps with absolute positions only,
    ``attention.output`` (projection, residual, layer norm) and ``feed_forward_chunk``;
    no cross-attention, not a decoder, not already wrapped per instance.
    """
    if "forward" in vars(layer):  # already wrapped per instance (e.g. accelerate's device hooks): leave it alone
        return False
    attention = getattr(layer, "attention", None)
    core = getattr(attention, "self", None)
    if core is None or not all(isinstance(getattr(core, n, None), torch.nn.Linear) for n in ("query", "key", "value")):
        return False
    if not isinstance(getattr(attention, "output", None), torch.nn.Module) or not callable(
        getattr(layer, "feed_forward_chunk", None)
    ):
        return False
    if (
        getattr(layer, "is_decoder", False)
        or getattr(layer, "add_cross_attention", False)
        or getattr(core, "is_causal", False)
    ):
        return False
    if not isinstance(getattr(core, "num_attention_heads", None), int) or not isinstance(
        getattr(core, "attention_head_size", None), int
    ):
        return False
    if any(isinstance(m, torch.nn.Embedding) for m in core.modules()):  # relative position embeddings
        return False
    return getattr(core, "position_embedding_type", "absolute") == "absolute"


def _bert_encoder(model: Any) -> Any:
    """The encoder if every layer has the BERT layer structure (:func:`_bert_layer_ok`), else None.

    Decided by module structure, not model names. BERT, RoBERTa, ELECTRA, XLM-R,
    CamemBERT and their relatives have it; ALBERT (shared layer groups), DistilBERT
    (other module names), DeBERTa (relative positions) and ModernBERT do not and run the
    model's own forward.
    """
    import torch

    encoder = getattr(model.base_model, "encoder", None)
    layers = getattr(encoder, "layer", None)
    if encoder is None or not isinstance(layers, torch.nn.ModuleList) or len(layers) == 0 or "forward" in vars(encoder):
        return None
    if any(name != "layer" and any(True for _ in child.parameters()) for name, child in encoder.named_children()):
        return None  # the encoder does more than run its layers (e.g. a final layer norm): not replaced
    if not all(_bert_layer_ok(layer, torch) for layer in layers):
        return None
    return encoder


def _attend(core: Any, query: Any, key: Any, value: Any, mask: Any, torch: Any) -> Any:
    """Scaled dot-product attention of (n, heads, q, size) queries; ``mask`` (n, 1, 1, T) marks real keys."""
    scale = getattr(core, "scaling", core.attention_head_size**-0.5)
    return torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=scale)


def _packed_layers(layers: Any, hidden: Any, valid: Any, sel_b: Any, sel_p: Any, torch: Any) -> Any:
    """Output of BERT-structured encoder ``layers`` at positions (sel_b, sel_p), without padding work.

    ``hidden`` (B, T, H) is the embedding output of a right-padded batch and ``valid``
    (B, T) marks its real tokens. Every per-token operation (query/key/value and output
    projections, residuals, layer norms, feed-forward) runs on the N real tokens only,
    packed into an (N, H) matrix; only the attention product sees the padded (B, T)
    layout, with padded keys masked out. In the last layer, queries, attention output
    and feed-forward run at the picked positions only (keys and values still come from
    every real token). The model's own modules do all but the attention product, so the
    result equals the padded forward pass up to float32 rounding.
    """
    batch, length, _ = hidden.shape
    mask = valid.view(batch, 1, 1, length)
    where = valid.reshape(-1).nonzero().squeeze(1)  # packed row -> b * T + p
    flat = hidden.reshape(batch * length, -1).index_select(0, where)  # (N, H)
    # index of (b, p) in the packed matrix: rows are right-padded, so real tokens are a prefix
    lengths = valid.sum(1)
    picked_at = (torch.cumsum(lengths, 0) - lengths)[sel_b] + sel_p
    buffers: dict[str, Any] = {}

    def padded(name: str, x: Any, heads: int, size: int) -> Any:
        # One zero-initialised (B * T, width) buffer per role, reused by every layer: only real
        # positions are ever written, so padded keys and values stay 0 (and are masked anyway).
        if name not in buffers or buffers[name].shape[1] != x.shape[1]:
            buffers[name] = x.new_zeros(batch * length, x.shape[1])
        out = buffers[name].index_copy_(0, where, x)
        return out.view(batch, length, heads, size).transpose(1, 2)  # (B, heads, T, size)

    for i, layer in enumerate(layers):
        core = layer.attention.self
        heads, size = core.num_attention_heads, core.attention_head_size
        key = padded("key", core.key(flat), heads, size)
        value = padded("value", core.value(flat), heads, size)
        if i < len(layers) - 1:
            query = padded("query", core.query(flat), heads, size)
            context = _attend(core, query, key, value, mask, torch)  # (B, heads, T, size)
            context = context.transpose(1, 2).reshape(batch * length, heads * size).index_select(0, where)
            flat = layer.feed_forward_chunk(layer.attention.output(context, flat))
        else:
            picked = flat[picked_at]  # (n, H)
            n = picked.shape[0]
            query = core.query(picked).view(n, heads, 1, size)
            context = _attend(core, query, key[sel_b], value[sel_b], mask[sel_b], torch).reshape(n, heads * size)
            return layer.feed_forward_chunk(layer.attention.output(context, picked))
    raise ValueError("no encoder layers")  # pragma: no cover - _bert_encoder requires at least one


def _first_attr(config: Any, *names: str) -> int | None:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    return None
