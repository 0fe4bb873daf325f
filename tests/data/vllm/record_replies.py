"""Record vLLM's replies to the requests a likelihood backend sends, as JSON fixtures beside this file.

The fast tests of a server backend read these files as "replies in the shapes real servers write"
(no server needed). Regenerate them from the repository root with the project's two environments
(``make setup`` and ``bash scripts/setup-vllm.sh``)::

    .venv/bin/python tests/data/vllm/record_replies.py

It builds the tiny GPT-2 and Llama of ``assoc models tiny --kind gpt2|llama --head-size 32
--positions 1024`` (seed 0) in a temporary folder, starts vLLM's CPU build on each in turn
(``assoc.testing.vllm``, 127.0.0.1 only), sends the requests of :func:`probes` and writes one file
per request into ``gpt2/`` and ``llama/``: ``{"request": {method, path, body}, "status", "response"}``
exactly as sent and received, except that the temporary model folder in ``/v1/models``'s ``root`` is
replaced by the model's name. ``server.json`` says which vLLM and which flags answered.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from assoc.testing.tiny_clm import SERVED_HEAD_SIZE, SERVED_POSITIONS, build_causal
from assoc.testing.vllm import VLLMServer, missing_reason, vllm_python

HERE = Path(__file__).parent
SENTENCE = "The nurse said that she was tired."
#: A plain chat template given in the request (the tiny tokenizers have none).
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}Answer:"
EXTRA_ARGS = ["--trust-request-chat-template"]


def send(server: VLLMServer, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        server.root_url + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        text = exc.read().decode()
        try:
            return exc.code, json.loads(text)
        except json.JSONDecodeError:
            return exc.code, text


def probes(model: str, token_ids: list[int]) -> dict[str, tuple[str, str, dict[str, Any] | None]]:
    """name -> (method, path, body): what a likelihood backend may send, and the faults it must read."""
    echo = {"model": model, "prompt": SENTENCE, "echo": True, "logprobs": 1, "temperature": 0, "max_tokens": 0}
    chat = {"model": model, "messages": [{"role": "user", "content": "Answer A or B."}], "max_tokens": 1}
    chat |= {"temperature": 0, "logprobs": True, "top_logprobs": 5}
    return {
        "models": ("GET", "/v1/models", None),
        "version": ("GET", "/version", None),
        "completions_echo_max_tokens_0": ("POST", "/v1/completions", echo),
        "completions_echo_max_tokens_1": ("POST", "/v1/completions", {**echo, "max_tokens": 1}),
        "completions_echo_logprobs_0": ("POST", "/v1/completions", {**echo, "logprobs": 0}),
        "completions_echo_tokens_as_token_ids": (
            "POST",
            "/v1/completions",
            {**echo, "return_tokens_as_token_ids": True},
        ),
        "completions_echo_return_token_ids": ("POST", "/v1/completions", {**echo, "return_token_ids": True}),
        "completions_prompt_logprobs": (
            "POST",
            "/v1/completions",
            {"model": model, "prompt": SENTENCE, "max_tokens": 1, "temperature": 0, "prompt_logprobs": 0}
            | {"return_token_ids": True},
        ),
        "completions_prompt_logprobs_max_tokens_0": (
            "POST",
            "/v1/completions",
            {"model": model, "prompt": SENTENCE, "max_tokens": 0, "temperature": 0, "prompt_logprobs": 0},
        ),
        "completions_echo_prompt_list": (
            "POST",
            "/v1/completions",
            {**echo, "prompt": [SENTENCE, "The doctor said that he was tired.", "He"]},
        ),
        "completions_echo_prompt_token_ids": (
            "POST",
            "/v1/completions",
            {**echo, "prompt": token_ids, "return_tokens_as_token_ids": True},
        ),
        "completions_echo_prompt_token_id_lists": (
            "POST",
            "/v1/completions",
            {**echo, "prompt": [token_ids, token_ids[:4]]},
        ),
        "completions_echo_no_special_tokens": (
            "POST",
            "/v1/completions",
            {**echo, "add_special_tokens": False, "return_tokens_as_token_ids": True},
        ),
        "completions_echo_unicode": ("POST", "/v1/completions", {**echo, "prompt": "Café  naïve —  x"}),
        "completions_generate_top_logprobs": (
            "POST",
            "/v1/completions",
            {"model": model, "prompt": "Answer A or B. Answer:", "max_tokens": 1, "temperature": 0, "logprobs": 5},
        ),
        "completions_error_too_long": ("POST", "/v1/completions", {**echo, "prompt": "x " * 1100}),
        "completions_error_too_many_logprobs": ("POST", "/v1/completions", {**echo, "logprobs": 30}),
        "completions_error_empty_prompt": ("POST", "/v1/completions", {**echo, "prompt": ""}),
        "tokenize": ("POST", "/tokenize", {"model": model, "prompt": SENTENCE}),
        "tokenize_no_special_tokens": (
            "POST",
            "/tokenize",
            {"model": model, "prompt": SENTENCE, "add_special_tokens": False},
        ),
        "detokenize": ("POST", "/detokenize", {"model": model, "tokens": token_ids}),
        "tokenizer_info": ("GET", "/tokenizer_info", None),
        "chat_completions_no_template": ("POST", "/v1/chat/completions", chat),
        "chat_completions_top_logprobs": ("POST", "/v1/chat/completions", {**chat, "chat_template": CHAT_TEMPLATE}),
        "chat_completions_prompt_logprobs": (
            "POST",
            "/v1/chat/completions",
            {**chat, "chat_template": CHAT_TEMPLATE, "prompt_logprobs": 0, "top_logprobs": 2},
        ),
    }


def record(family: str, work: Path, python: Path) -> None:
    model_dir = build_causal(
        work / f"tiny-{family}", family, seed=0, head_size=SERVED_HEAD_SIZE, positions=SERVED_POSITIONS
    )
    name = f"tiny-{family}"
    out = HERE / family
    out.mkdir(exist_ok=True)
    with VLLMServer(
        model_dir, python=python, max_model_len=SERVED_POSITIONS, served_model_name=name, extra_args=EXTRA_ARGS
    ) as server:
        status, tokenized = send(server, "POST", "/tokenize", {"model": name, "prompt": SENTENCE})
        assert status == 200, tokenized
        for probe, (method, path, body) in probes(name, tokenized["tokens"]).items():
            status, response = send(server, method, path, body)
            text = json.dumps(
                {"request": {"method": method, "path": path, "body": body}, "status": status, "response": response},
                indent=1,
                ensure_ascii=False,
            )
            (out / f"{probe}.json").write_text(text.replace(str(model_dir), name) + "\n", encoding="utf-8")
            print(family, probe, status, file=sys.stderr)
        flags = server.command()[3:]
        flags[flags.index("--model") + 1] = name
        flags[flags.index("--port") + 1] = "PORT"
        _, version = send(server, "GET", "/version", None)
    server_json = {"vllm": version["version"], "arguments": flags, "environment": {"VLLM_CPU_KVCACHE_SPACE": "1"}}
    server_json["model"] = {"builder": "assoc.testing.tiny_clm.build_causal", "kind": family, "seed": 0}
    server_json["model"] |= {"head_size": SERVED_HEAD_SIZE, "positions": SERVED_POSITIONS}
    (out / "server.json").write_text(json.dumps(server_json, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    python = vllm_python()
    if python is None:
        sys.exit(missing_reason())
    with tempfile.TemporaryDirectory() as work:
        os.environ["XDG_CACHE_HOME"] = str(Path(work) / "cache")  # vLLM's compile cache, not the home folder's
        for family in ("gpt2", "llama"):
            record(family, Path(work), python)


if __name__ == "__main__":
    main()
