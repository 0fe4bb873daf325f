"""The ``transformers`` provider: a local Hugging Face chat model answers chat requests, no server.

The model opens through the one loader (:func:`assoc.lm.loading.open_model`, as a ``causal`` model:
the folder's checks before anything loads, ``revision``, ``dtype``, ``device`` (``auto``: CUDA when
available), the Hub checks, the weights' fingerprint and the per-process model cache). Each request's
messages go through the tokenizer's chat template
(``apply_chat_template(messages, add_generation_prompt=True)``); requests are generated in batches
of ``batch_size`` (left padding, so every prompt ends where generation starts), greedily at
temperature 0 (``do_sample=False``) and by sampling at ``temperature`` otherwise (seeded per batch
from ``seed`` and the sample index, so a run with the same batches is reproducible).
``max_tokens`` caps the new tokens (default 512). Replies are stored in the same cache, shaped like
an OpenAI chat-completion body (with token usage), so every reader of replies treats both providers
alike. The cache key's endpoint is ``transformers:<fingerprint>`` (:func:`model_endpoint`): the model
directory's content hash (or Hub commit), so changed weights never reuse old replies; a dtype other
than float32 and a device other than the CPU are part of it too (a GPU's kernels and random numbers
give other replies than the CPU's), so the keys of replies generated on the CPU in float32 stay those
every earlier run wrote.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.errors import ModelError
from assoc.lm.identity import hub_fingerprint, local_fingerprint, looks_like_path
from assoc.lm.remote.store import ResponseStore, make_entry

if TYPE_CHECKING:
    from assoc.infra.cache import Cache
    from assoc.lm.remote.chat_completions import ChatRequest

DEFAULT_MAX_NEW_TOKENS = 512
#: Where to get what the ``transformers`` provider needs.
INSTALL = (
    "the 'transformers' provider needs torch and transformers: pip install torch transformers "
    "(in the assoc repository: pip install -e 'plugins/chat_listing[local]')"
)


def model_endpoint(
    model: str,
    memo: Cache | None = None,
    *,
    revision: str | None = None,
    dtype: str = "float32",
    device: str = "cpu",
) -> str:
    """``transformers:<fingerprint>`` of a local directory or cached Hub model (the endpoint in cache keys).

    ``memo``: the :class:`assoc.infra.cache.Cache` where a directory's hash is remembered (None: the
    default root). A dtype other than float32 and a device type other than ``cpu`` (``device`` as
    resolved: ``cuda:1`` counts as ``cuda``) are part of the endpoint (its replies may differ); float32
    on the CPU is not (the keys of every reply stored so far).
    """
    path = Path(model).expanduser()
    if path.is_dir():
        endpoint = "transformers:" + local_fingerprint(path, memo)
    elif looks_like_path(model):
        raise ModelError(f"model directory {model!r} does not exist")
    else:
        endpoint = "transformers:" + (hub_fingerprint(model, revision) or f"hf:{model}")
    if dtype != "float32":
        endpoint = f"{endpoint}:{dtype}"
    kind = str(device).split(":")[0]
    return endpoint if kind == "cpu" else f"{endpoint}:{kind}"


class LocalChatModel:
    """A causal LM with a chat template and its tokenizer, opened once for the requests of one model.

    The weights come through the one loader from the process's model cache (shared with every other
    user of the model); the tokenizer is this handle's own copy, set to pad on the left.
    """

    def __init__(
        self,
        model: str,
        *,
        device: str = "auto",
        dtype: str = "float32",
        revision: str | None = None,
        memo: Cache | None = None,
    ):
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as exc:  # pragma: no cover - the [local] extra
            raise ModelError(INSTALL) from exc
        from assoc.lm.loading import open_model

        self.name = model
        settings = {"device": device, "dtype": dtype, "revision": revision}
        opened: Any = open_model(model, settings, memo, kinds=["causal"])
        self.opened = opened
        handle = opened.engine  # the causal kind's loaded CausalLM
        self.device = handle.device
        self.lm = handle.model
        if not getattr(handle.tokenizer, "chat_template", None):
            raise ModelError(
                f"model {model!r} has no chat template (tokenizer.chat_template): it is not a chat "
                "model, or set one on its tokenizer"
            )
        # a copy: the loaded tokenizer is shared with the model cache's other users
        self.tokenizer: Any = copy.deepcopy(handle.tokenizer)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    def close(self) -> None:
        """Drop the handle (the weights stay in the process's model cache until it frees them)."""
        self.opened.close()

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
        return [
            self._body(request, output[row, width:].tolist(), int(encoded["attention_mask"][row].sum()))
            for row, request in enumerate(requests)
        ]

    def _body(self, request: ChatRequest, new: list[int], prompt_tokens: int) -> dict[str, Any]:
        """The chat-completion body of one generated reply (cut at the first end-of-sequence token)."""
        finish = "length"
        eos = self.tokenizer.eos_token_id
        if eos is not None and eos in new:
            new = new[: new.index(eos)]
            finish = "stop"
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return {
            "id": f"local-{request.key[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(new),
                "total_tokens": prompt_tokens + len(new),
            },
        }


def run_local(
    model: LocalChatModel,
    requests: Sequence[ChatRequest],
    store: ResponseStore,
    *,
    batch_size: int,
    progress: bool | None,
) -> None:
    """Generate replies for ``requests`` (all of ``model``'s) and store each batch as it finishes."""
    from assoc.infra.progress import bar

    if not requests:
        return
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
