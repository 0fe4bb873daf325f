"""The ``transformers`` backend: a local Hugging Face chat model answers the same requests, no server.

Each request's messages go through the tokenizer's chat template
(``apply_chat_template(messages, add_generation_prompt=True)``); requests are generated in
batches of ``batch_size`` (left padding, so every prompt ends where generation starts), greedily
at temperature 0 (``do_sample=False``) and by sampling at ``temperature`` otherwise (seeded per
batch from ``seed`` and the sample index, so a run with the same batches is reproducible).
``max_tokens`` caps the new tokens (default 512). Replies are stored in the same cache, shaped like an OpenAI
chat-completion body (with token usage), so parsing, cleaning and the table are the same as for
the ``openai`` backend. The cache key's endpoint is ``transformers:<fingerprint>``: the model
directory's content hash (or Hub commit), so changed weights never reuse old replies.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assoc import ModelError

from .store import ChatRequest, ResponseStore, make_entry

DEFAULT_MAX_NEW_TOKENS = 512


def model_endpoint(model: str, memo: Any = None) -> str:
    """``transformers:<fingerprint>`` of a local directory or cached Hub model (used in cache keys).

    ``memo``: the :class:`assoc.infra.cache.Cache` where a directory's hash is remembered (None: the default root).
    """
    from assoc.lm import hub_fingerprint, local_fingerprint, looks_like_path

    path = Path(model).expanduser()
    if path.is_dir():
        return "transformers:" + local_fingerprint(path, memo)
    if looks_like_path(model):
        raise ModelError(f"model directory {model!r} does not exist")
    return "transformers:" + (hub_fingerprint(model, None) or f"hf:{model}")


class LocalChatModel:
    """A causal LM and its tokenizer, loaded once for a batch of requests."""

    def __init__(self, model: str, *, device: str = "auto", dtype: str = "float32"):
        from assoc.lm import resolve_device, torch_dtype

        self.name = model
        self.device = resolve_device(device)
        path = Path(model).expanduser()
        source = str(path) if path.is_dir() else model
        try:
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - the [local] extra
            raise ModelError(
                "backend 'transformers' needs torch and transformers: pip install torch transformers "
                "(in the assoc repository: pip install -e 'plugins/chat_listing[local]')"
            ) from exc
        try:
            tokenizer: Any = AutoTokenizer.from_pretrained(source)
            lm: Any = AutoModelForCausalLM.from_pretrained(source, dtype=torch_dtype(dtype))
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot load chat model {model!r}: {str(exc).splitlines()[0]}") from exc
        self.tokenizer, self.lm = tokenizer, lm
        if not getattr(self.tokenizer, "chat_template", None):
            raise ModelError(
                f"model {model!r} has no chat template (tokenizer.chat_template): it is not a chat "
                "model, or set one on its tokenizer"
            )
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.lm.eval()
        self.lm.to(self.device)

    def generate(self, requests: Sequence[ChatRequest]) -> list[dict[str, Any]]:
        """OpenAI-shaped chat-completion bodies for ``requests`` (one batch; same params)."""
        import torch

        params = requests[0].params
        prompts = [
            self.tokenizer.apply_chat_template(
                [dict(m) for m in r.messages], tokenize=False, add_generation_prompt=True
            )
            for r in requests
        ]
        encoded = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        encoded = {k: v.to(self.device) for k, v in encoded.items()}
        temperature = float(params.get("temperature") or 0.0)
        kwargs: dict[str, Any] = {
            "max_new_tokens": int(params.get("max_tokens") or DEFAULT_MAX_NEW_TOKENS),
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature)
            torch.manual_seed(int(params.get("seed") or 0) * 1_000_003 + requests[0].sample)
        else:
            kwargs.update(do_sample=False)
        with torch.inference_mode():
            output = self.lm.generate(**encoded, **kwargs)
        width = encoded["input_ids"].shape[1]
        bodies = []
        eos = self.tokenizer.eos_token_id
        for row, request in enumerate(requests):
            new = output[row, width:].tolist()
            finish = "length"
            if eos is not None and eos in new:
                new = new[: new.index(eos)]
                finish = "stop"
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            prompt_tokens = int(encoded["attention_mask"][row].sum())
            bodies.append(
                {
                    "id": f"local-{request.key[:16]}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": self.name,
                    "choices": [
                        {"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": len(new),
                        "total_tokens": prompt_tokens + len(new),
                    },
                }
            )
        return bodies


def run_local(
    requests: Sequence[ChatRequest], store: ResponseStore, *, batch_size: int, device: str, progress: bool
) -> None:
    """Generate replies for ``requests`` (one model per call) and store each batch as it finishes."""
    from assoc.infra import bar

    if not requests:
        return
    model = LocalChatModel(requests[0].model, device=device)
    # Batches never mix sampling settings or sample indices (the seed depends on them).
    groups: dict[tuple[Any, ...], list[ChatRequest]] = {}
    for request in requests:
        groups.setdefault((repr(sorted(request.params.items())), request.sample), []).append(request)
    kept = f"the response cache ({store.root})" if store.root else None  # each batch is stored as it finishes
    progress_bar = bar(
        total=len(requests), desc=f"generating ({requests[0].model})", enabled=progress, unit="req", kept=kept
    )
    try:
        for group in groups.values():
            for start in range(0, len(group), batch_size):
                batch = group[start : start + batch_size]
                bodies = model.generate(batch)
                store.put((r, make_entry(r, b)) for r, b in zip(batch, bodies))
                progress_bar.update(len(batch))
    finally:
        progress_bar.close()
