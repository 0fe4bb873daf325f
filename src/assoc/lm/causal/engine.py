"""The batched causal-LM engine: log P(continuation | context) under any ``AutoModelForCausalLM``.

A request (:class:`~assoc.lm.causal.CausalRequest`) asks for the log probability of each token of a
continuation given everything before it. The engine computes, for token ``x_j`` of the whole
sequence ``x``,

    log P(x_j | x_<j) = z_j[x_j] - log sum_v exp(z_j[v]),   z_j = the logits the model emits at j - 1,

with the log-sum-exp in float64 over the full vocabulary (so a 50k-class normalisation adds no
float32 rounding of its own), which is what lm-evaluation-harness and minicons compute from the
same logits (they normalise in the model's dtype; the difference is float32 rounding).

Speed, none of which changes a number beyond float32 noise (checked, see below):

* **shared prefix**: requests with the same context (the options of one fill-mask query, for
  example) run their context once; its keys and values are kept (the model's own key/value
  cache) and every continuation runs on top of them, so six options of a query do not cost six
  passes over the query. The first continuation token is read from the context pass, so a
  one-token continuation costs no pass of its own;
* **token-budget batching**: contexts and continuations are sorted by length and cut into
  batches whose padded size stays under ``batch_tokens`` (:func:`assoc.lm.batching.plan_batches`,
  every engine's planner), with padding on the right and an attention mask, so memory is
  bounded whatever the number of options;
* **LM head at scored positions only**: the vocabulary projection (for GPT-2 small about a third
  of the work per token) runs only where a token is scored, in chunks, so the logits of a batch
  are never held at once.

The shared-prefix path and the head-only path are each checked once per loaded model against
the model's own forward pass over whole, unpadded sequences (:meth:`CausalLM._decide_paths`): a
path is used only if every log probability of the probe agrees within 1e-5 (float32; 5e-2 in
half precision; relative to the value's size where it exceeds 1), otherwise the engine falls
back to running whole sequences through the model's own forward, so an architecture whose cache
or head behaves differently (logit soft-capping, a scaled head) still gets exact numbers. Results
are therefore equal at any batch size and padding (tests check 1e-5 in float32). NaN or infinite
log probabilities stop the run with the model and the text named, as the masked engine does.
"""

from __future__ import annotations

import inspect
import math
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from assoc.errors import ModelError
from assoc.lm.batching import check_budget, plan_batches, renamed_budget
from assoc.lm.causal.requests import CausalRequest
from assoc.lm.loading import LoadedLM

if TYPE_CHECKING:
    pass

#: Picked positions per LM-head call: bounds the float64 logits held at once (rows x vocabulary).
HEAD_CHUNK = 128
#: A continuation batch holds its rows' copies of the context keys and values: at most this many
#: times ``batch_tokens`` context tokens, so memory stays bounded by the budget.
KV_FACTOR = 8
#: Agreement a fast path must reach with the model's own forward pass, by dtype.
TOLERANCE = {"float64": 1e-9, "float32": 1e-5, "float16": 5e-2, "bfloat16": 5e-2}

# Outcome of CausalLM._decide_paths per weights object, for the life of those weights:
# (shared prefix through the key/value cache, LM head at the scored positions only).
_PATHS_VERIFIED: weakref.WeakKeyDictionary[Any, tuple[bool, bool]] = weakref.WeakKeyDictionary()


class CausalLM(LoadedLM):
    """A loaded causal (left-to-right) language model plus its tokenizer.

    Build one with :func:`assoc.lm.causal.load_causal_lm` (a private copy) or
    :func:`assoc.lm.causal.cached_causal_lm` (shared in the process). Attributes: ``name`` (as the user
    wrote it), ``tokenizer``, ``model``, ``device``, ``dtype``, ``fingerprint`` (the weights'
    identity, as for masked LMs), ``backend`` (always ``"torch"``), ``max_length`` (longest sequence
    the model accepts).
    """

    backend = "torch"
    #: (shared prefix, head only) as decided for this handle's weights; None = not decided yet
    paths: tuple[bool, bool] | None = None

    @property
    def pad_token_id(self) -> int:
        """What pads a batch on the right (never read: masked out): the pad token, else EOS, else 0."""
        tokenizer = self.tokenizer
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        return int(pad) if pad is not None else 0

    # -- life cycle (close, with: LoadedLM's) -------------------------------------------
    def __repr__(self) -> str:
        return f"CausalLM({self.name!r}, device={self.device!r}, dtype={self.dtype!r})"

    # -- vocabulary -------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Number of output classes of the LM head (what the log-softmax runs over)."""
        return int(self._model().get_output_embeddings().weight.shape[0])

    def info(self) -> dict[str, Any]:
        """Model information: type, sizes, special tokens, device, dtype, fingerprint."""
        model = self._model()
        config = model.config
        tok = self.tokenizer
        return {
            "model": self.name,
            "model_type": getattr(config, "model_type", ""),
            "vocab_size": self.vocab_size,
            "tokenizer_size": len(tok),
            "bos_token": tok.bos_token,
            "eos_token": tok.eos_token,
            "n_parameters": int(sum(p.numel() for p in model.parameters())),
            "max_length": self.max_length,
            "device": self.device,
            "dtype": self.dtype,
            "fingerprint": self.fingerprint,
        }

    # -- scoring ----------------------------------------------------------------------
    def log_probs(
        self,
        requests: Sequence[CausalRequest],
        *,
        batch_tokens: int | None = None,
        progress: bool = False,
        max_tokens: int | None = None,
    ) -> list[np.ndarray]:
        """``log P(continuation[j] | context, continuation[:j])`` for each request, float64 arrays in order.

        Requests with the same context share one context pass; equal requests are computed once.
        Batches stay at or under ``batch_tokens`` padded tokens (a single longer sequence runs alone);
        ``None`` is :func:`assoc.lm.batching.default_batch_tokens` of the model's device (``max_tokens``:
        its former name, with a :class:`DeprecationWarning`). ``progress`` shows a bar over the distinct
        requests.
        """
        from assoc.infra.progress import bar

        model = self._model()
        budget = check_budget(renamed_budget(batch_tokens, max_tokens), self.device)
        requests = list(requests)
        n_vocab = self.vocab_size
        index: dict[CausalRequest, int] = {}
        for req in requests:
            if not isinstance(req, CausalRequest):
                raise TypeError(f"log_probs expects CausalRequest objects, got {type(req).__name__}")
            self._refuse_bad_ids(req.input_ids, req.input_ids, n_vocab)
            index.setdefault(req, len(index))
        unique = list(index)
        meter = bar(total=len(unique), desc=self.name, enabled=progress, unit="seq")
        try:
            if self.paths is None and any(r.continuation for r in unique):
                self.paths = self._decide_paths(model, unique)
            shared, head_only = self.paths or (True, True)
            values = self._compute(model, unique, budget, shared=shared, head_only=head_only, meter=meter)
        finally:
            meter.close()
        return [values[index[req]] for req in requests]

    def _compute(
        self,
        model: Any,
        requests: list[CausalRequest],
        batch_tokens: int,
        *,
        shared: bool,
        head_only: bool,
        meter: Any = None,
    ) -> list[np.ndarray]:
        """The log probabilities of distinct ``requests`` along the chosen paths (see the module docstring)."""
        import torch

        out: list[np.ndarray] = [np.zeros(len(r.continuation), dtype=np.float64) for r in requests]
        todo = [i for i, r in enumerate(requests) if r.continuation]
        with torch.inference_mode():
            if shared:
                self._shared_prefix(model, requests, todo, out, batch_tokens, head_only, torch, meter)
            else:
                self._whole_sequences(model, requests, todo, out, batch_tokens, head_only, torch, meter)
        if meter is not None:
            meter.update(len(requests) - len(todo))
        return out

    def _whole_sequences(
        self,
        model: Any,
        requests: list[CausalRequest],
        todo: list[int],
        out: list[np.ndarray],
        batch_tokens: int,
        head_only: bool,
        torch: Any,
        meter: Any,
    ) -> None:
        """Each request as one row: context + continuation, right-padded; no key/value reuse."""
        order = sorted(todo, key=lambda i: -len(requests[i].input_ids))
        for start, stop in plan_batches([len(requests[i].input_ids) for i in order], batch_tokens):
            batch = order[start:stop]
            seqs = [requests[i].input_ids for i in batch]
            ids, mask = self._padded(seqs, torch)
            positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
            states, _ = self._run(model, ids, mask, positions, None, head_only, want_cache=False)
            picks: list[tuple[int, int, int]] = []
            for b, i in enumerate(batch):
                start_pos = requests[i].position
                picks += [(b, start_pos - 1 + j, t) for j, t in enumerate(requests[i].continuation)]
            values = self._log_probs_at(model, states, picks, head_only, torch)
            self._check_finite(values, seqs)
            k = 0
            for i in batch:
                n = len(requests[i].continuation)
                out[i][:] = values[k : k + n]
                k += n
            if meter is not None:
                meter.update(len(batch))

    def _shared_prefix(
        self,
        model: Any,
        requests: list[CausalRequest],
        todo: list[int],
        out: list[np.ndarray],
        batch_tokens: int,
        head_only: bool,
        torch: Any,
        meter: Any,
    ) -> None:
        """Each distinct context once, its keys and values reused by every continuation that follows it.

        A request whose whole sequence is itself the context of other requests (the prefix of a
        fill-mask query, scored from the BOS, and the query's options after it) is read off that
        context's pass, at the context's own positions, and costs no pass of its own.
        """
        groups: dict[tuple[int, ...], list[int]] = {}
        for i in todo:
            groups.setdefault(requests[i].context, []).append(i)
        inside: dict[tuple[int, ...], list[int]] = {}  # context -> requests that end where it ends
        for i in todo:
            whole = requests[i].input_ids
            if whole in groups:
                inside.setdefault(whole, []).append(i)
        for covered in inside.values():
            for i in covered:
                groups[requests[i].context].remove(i)
        contexts = sorted((c for c in groups if groups[c] or c in inside), key=len, reverse=True)
        for start, stop in plan_batches([len(c) for c in contexts], batch_tokens):
            batch = contexts[start:stop]
            ids, mask = self._padded(batch, torch)
            positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
            states, cache = self._run(model, ids, mask, positions, None, head_only, want_cache=True)
            # the first continuation token of every request, from the context's last position, and the
            # whole continuation of every request that ends where a context ends, from its positions
            picks: list[tuple[int, int, int]] = []
            for b, ctx in enumerate(batch):
                picks += [(b, len(ctx) - 1, requests[i].continuation[0]) for i in groups[ctx]]
                for i in inside.get(ctx, ()):
                    offset = requests[i].position - 1
                    picks += [(b, offset + j, t) for j, t in enumerate(requests[i].continuation)]
            values = self._log_probs_at(model, states, picks, head_only, torch)
            self._check_finite(values, list(batch))
            k = 0
            for ctx in batch:
                for i in groups[ctx]:
                    out[i][0] = values[k]
                    k += 1
                for i in inside.get(ctx, ()):
                    n = len(requests[i].continuation)
                    out[i][:] = values[k : k + n]
                    k += n
            del states
            layers = _cache_tensors(cache)
            rows = [(b, i) for b, ctx in enumerate(batch) for i in groups[ctx] if len(requests[i].continuation) > 1]
            rows.sort(key=lambda row: -len(requests[row[1]].continuation))
            lengths = [len(requests[i].continuation) - 1 for _, i in rows]
            for cstart, cstop in _split_rows(
                plan_batches(lengths, batch_tokens), max(1, KV_FACTOR * batch_tokens // ids.shape[1])
            ):
                part = rows[cstart:cstop]
                self._continue(model, requests, part, batch, layers, mask, out, head_only, torch)
            if meter is not None:
                meter.update(sum(len(groups[ctx]) + len(inside.get(ctx, ())) for ctx in batch))

    def _continue(
        self,
        model: Any,
        requests: list[CausalRequest],
        part: list[tuple[int, int]],
        contexts: list[tuple[int, ...]],
        layers: list[tuple[Any, Any]],
        context_mask: Any,
        out: list[np.ndarray],
        head_only: bool,
        torch: Any,
    ) -> None:
        """Run continuations ``part`` (context row, request) on top of their contexts' keys and values."""
        device = context_mask.device
        rows = torch.tensor([b for b, _ in part], device=device)
        width = max(len(contexts[b]) for b, _ in part)  # the context positions these rows need
        inputs = [requests[i].continuation[:-1] for _, i in part]  # the last token is scored, never fed
        ids, mask = self._padded(inputs, torch)
        starts = torch.tensor([len(contexts[b]) for b, _ in part], device=device)
        positions = (starts[:, None] + torch.arange(ids.shape[1], device=device)[None, :]).clamp_(
            max=self.max_length - 1
        )
        past = [(k.index_select(0, rows)[:, :, :width], v.index_select(0, rows)[:, :, :width]) for k, v in layers]
        full_mask = torch.cat([context_mask.index_select(0, rows)[:, :width], mask], dim=1)
        states, _ = self._run(model, ids, full_mask, positions, past, head_only, want_cache=False)
        picks = [(b, j, t) for b, (_, i) in enumerate(part) for j, t in enumerate(requests[i].continuation[1:])]
        values = self._log_probs_at(model, states, picks, head_only, torch)
        self._check_finite(values, [requests[i].input_ids for _, i in part])
        k = 0
        for _, i in part:
            n = len(requests[i].continuation) - 1
            out[i][1:] = values[k : k + n]
            k += n

    # -- one forward pass -------------------------------------------------------------
    def _padded(self, seqs: Sequence[Sequence[int]], torch: Any) -> tuple[Any, Any]:
        longest = max(len(s) for s in seqs)
        ids = np.full((len(seqs), longest), self.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(seqs), longest), dtype=np.int64)
        for b, seq in enumerate(seqs):
            ids[b, : len(seq)] = seq
            mask[b, : len(seq)] = 1
        return torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device)

    def _run(
        self,
        model: Any,
        ids: Any,
        mask: Any,
        positions: Any,
        past: list[tuple[Any, Any]] | None,
        head_only: bool,
        *,
        want_cache: bool,
    ) -> tuple[Any, Any]:
        """(hidden states or logits, key/value cache or None) of one padded batch.

        ``head_only``: the model's base (its decoder stack) runs, and the LM head is applied later
        at the scored positions only; else the model's own forward returns logits everywhere.
        """
        module = model.base_model if head_only else model
        kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "position_ids": positions}
        kwargs["use_cache"] = want_cache or past is not None
        if past is not None:
            from transformers import DynamicCache

            kwargs[_cache_keyword(module)] = DynamicCache(ddp_cache_data=past)
        output = module(**kwargs)
        states = output.last_hidden_state if head_only else output.logits
        cache = None
        if want_cache:  # recent transformers name it ``cache`` (``past_key_values`` is a deprecated alias)
            cache = output["cache"] if "cache" in output else output["past_key_values"]
        return states, cache

    def _log_probs_at(
        self, model: Any, states: Any, picks: list[tuple[int, int, int]], head_only: bool, torch: Any
    ) -> np.ndarray:
        """Log P(token) at each (batch row, position, token) pick: float64 log-sum-exp over the vocabulary."""
        if not picks:
            return np.zeros(0, dtype=np.float64)
        device = states.device
        sel_b = torch.tensor([p[0] for p in picks], device=device)
        sel_t = torch.tensor([p[1] for p in picks], device=device)
        targets = torch.tensor([p[2] for p in picks], device=device)
        head = model.get_output_embeddings() if head_only else None
        parts = []
        for start in range(0, len(picks), HEAD_CHUNK):
            stop = start + HEAD_CHUNK
            picked = states[sel_b[start:stop], sel_t[start:stop]]
            logits = (head(picked) if head is not None else picked).to(torch.float64)
            chosen = logits.gather(1, targets[start:stop, None]).squeeze(1)
            parts.append((chosen - torch.logsumexp(logits, dim=-1)).cpu())
        return torch.cat(parts).numpy()

    def _check_finite(self, values: np.ndarray, sequences: list[tuple[int, ...]]) -> None:
        """Stop with a :class:`ModelError` naming the model and a text when a log probability is NaN or infinite.

        Finite logits always give finite log probabilities, so NaN or inf means the model computed
        them: corrupt weights, or a float16 overflow. Summing such values would publish numbers the
        model never produced.
        """
        if math.isfinite(float(values.sum())):
            return
        text = self.tokenizer.decode(list(sequences[0]), skip_special_tokens=False)
        raise ModelError(
            f"model {self.name!r} returned NaN or infinite log probabilities for {int((~np.isfinite(values)).sum())} "
            f"token(s) of one batch (one of its texts: {text!r}; dtype {self.dtype}): its weights may be "
            "corrupt, or float16 overflowed (try dtype float32)"
        )

    # -- checking the fast paths ------------------------------------------------------
    def reference_log_probs(self, request: CausalRequest) -> np.ndarray:
        """The continuation's log probabilities from the model's own forward over the whole, unpadded sequence."""
        import torch

        model = self._model()
        with torch.inference_mode():
            ids = torch.tensor([request.input_ids], device=self.device)
            logits = model(input_ids=ids).logits[0].to(torch.float64)
            log_sm = torch.log_softmax(logits, dim=-1)
            start = request.position - 1
            rows = torch.arange(start, start + len(request.continuation), device=self.device)
            return log_sm[rows, torch.tensor(request.continuation, device=self.device)].cpu().numpy()

    def _decide_paths(self, model: Any, requests: list[CausalRequest]) -> tuple[bool, bool]:
        """Which fast paths reproduce the model's own forward on a probe of ``requests``; kept per weights.

        The probe takes the longest and the shortest context and, for each, its longest and
        shortest continuations, so padding of contexts and of continuations is exercised. Each
        candidate (shared prefix and head only; head only; shared prefix only) is computed on the
        probe as one batch and compared with :meth:`reference_log_probs` of each request alone; the
        first that agrees within :data:`TOLERANCE` (relative where the value exceeds 1) is kept, else
        whole sequences through the model's own forward. The outcome is kept per weights object and
        remembered across processes where the weights have a content-based fingerprint
        (:meth:`_paths_memo_key`).
        """
        known = _PATHS_VERIFIED.get(model)
        if known is not None:
            return known
        memo_key = self._paths_memo_key(model)
        if memo_key is not None:
            from assoc.infra.cache import Cache

            remembered = (self.memo if self.memo is not None else Cache()).recall("clm-engine-paths", memo_key)
            if isinstance(remembered, list) and len(remembered) == 2 and all(isinstance(v, bool) for v in remembered):
                known = _PATHS_VERIFIED[model] = (remembered[0], remembered[1])
                return known
        probe = _probe(requests)
        reference = [self.reference_log_probs(r) for r in probe]
        tolerance = TOLERANCE.get(self.dtype, 5e-2)
        outcome = (False, False)
        for shared, head_only in ((True, True), (False, True), (True, False)):
            try:
                got = self._compute(model, probe, 1 << 30, shared=shared, head_only=head_only)
            except Exception:  # noqa: BLE001 - any failure means: not for this model, try the next candidate
                continue
            if all(g.shape == r.shape and _agrees(g, r, tolerance) for g, r in zip(got, reference)):
                outcome = (shared, head_only)
                break
        _PATHS_VERIFIED[model] = outcome
        if memo_key is not None:
            from assoc.infra.cache import Cache

            (self.memo if self.memo is not None else Cache()).remember("clm-engine-paths", memo_key, list(outcome))
        return outcome

    def _paths_memo_key(self, model: Any) -> list[Any] | None:
        """What the path check depends on, when the weights have a content-based fingerprint (else None).

        The weights (sha256 of a directory or a Hub commit), the architecture, dtype, device type and
        the torch and transformers versions: the same answer for the same files and libraries, so a
        new process need not check again (:meth:`assoc.infra.cache.Cache.recall`).
        """
        import torch
        import transformers

        fingerprint = str(self.fingerprint)
        content = fingerprint.startswith("sha256:") or (
            fingerprint.startswith("hf:") and "@" in fingerprint and len(fingerprint.rsplit("@", 1)[1]) == 40
        )
        if not content:
            return None
        return [
            fingerprint,
            type(model).__name__,
            self.dtype,
            str(self.device).split(":")[0],
            torch.__version__,
            transformers.__version__,
        ]


def _agrees(got: np.ndarray, reference: np.ndarray, tolerance: float) -> bool:
    """|got - reference| <= tolerance x max(1, |reference|) everywhere: float rounding is relative to the value.

    A log probability of -300 (a random model with large logits) carries float32 rounding about
    300 times that of a log probability near -1.
    """
    return bool(np.all(np.abs(got - reference) <= tolerance * np.maximum(1.0, np.abs(reference))))


def _probe(requests: list[CausalRequest]) -> list[CausalRequest]:
    """A few requests that exercise padding: the extreme contexts, each with its extreme continuations."""
    scored = [r for r in requests if r.continuation]
    groups: dict[tuple[int, ...], list[CausalRequest]] = {}
    for r in scored:
        groups.setdefault(r.context, []).append(r)
    by_length = sorted(groups, key=len)
    chosen: list[CausalRequest] = []
    for ctx in dict.fromkeys([by_length[0], by_length[-1]]):
        members = sorted(groups[ctx], key=lambda r: len(r.continuation))
        for r in dict.fromkeys([members[0], members[-1]]):
            chosen.append(r)
    return chosen


def _split_rows(batches: list[tuple[int, int]], most: int) -> list[tuple[int, int]]:
    """``batches`` with every batch cut into pieces of at most ``most`` rows."""
    out = []
    for start, stop in batches:
        out += [(s, min(s + most, stop)) for s in range(start, stop, most)]
    return out


def _cache_tensors(cache: Any) -> list[tuple[Any, Any]]:
    """(keys, values) of every layer of a key/value cache, each (batch, heads, length, size)."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    return [(k, v) for k, v, *_ in cache]  # pragma: no cover - older cache classes iterate as tuples


_CACHE_KEYWORD: dict[type, str] = {}


def _cache_keyword(module: Any) -> str:
    """The forward keyword of the key/value cache: ``cache`` in recent transformers, else ``past_key_values``."""
    kind = type(module)
    if kind not in _CACHE_KEYWORD:
        params = inspect.signature(module.forward).parameters
        _CACHE_KEYWORD[kind] = "cache" if "cache" in params else "past_key_values"
    return _CACHE_KEYWORD[kind]
