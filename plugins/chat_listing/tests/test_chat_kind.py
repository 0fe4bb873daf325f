"""The chat model kind (``assoc.lm.ChatModel``) and the core's request engine, against the local test server.

These test core code (``assoc.lm.chat``, ``assoc.lm.remote``); they live beside the chat scorers'
tests because the engine sends through the ``openai`` package, which this plugin's test
environment installs. Expected values come from the server's own rule (``listing_words``), from
keys computed here by their documented formula, or from counts made by hand.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import pytest

from assoc.errors import ModelError, OptionError
from assoc.lm import (
    CHAT_COMPLETIONS,
    ChatModel,
    ChatRequest,
    ChatSending,
    ChatServiceError,
    EngineSettings,
    ResponseStore,
    read_choice,
    run_requests,
)
from assoc.lm.kinds import RequestKindError
from assoc.lm.remote.engine import Route, SendReport, ServiceError
from assoc.lm.requests import ChoiceRequest, ContinuationRequest, GenerateRequest, Reply
from assoc.testing.openai_server import FAST_RETRIES, ChatServer, listing_words, render

SYSTEM = {"role": "system", "content": "Answer briefly."}


def listing(term: str, n: int = 3) -> tuple[dict[str, str], ...]:
    return (SYSTEM, {"role": "user", "content": f"List {n} characteristics that describe {term}."})


def open_model(server: ChatServer, **options: Any) -> ChatModel:
    return ChatModel.open("chat:gpt-4o-mini", {"base_url": server.url, **FAST_RETRIES, **options}, None)


def key_by_formula(**parts: Any) -> str:
    """The cache key as documented: the sha256 of the canonical JSON (sorted keys, no spaces) of the request."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def test_generate_stores_each_reply_and_a_second_run_sends_nothing(server):
    requests = [GenerateRequest(listing(term), {"temperature": 0.0}) for term in ("nurses", "pilots", "nurses")]
    model = open_model(server)
    replies = model.generate(requests)
    assert [r.text for r in replies] == [
        render(listing_words(t, 3), "numbered", t) for t in ("nurses", "pilots", "nurses")
    ]
    assert all(r.status == "ok" and r.finish_reason == "stop" for r in replies)
    assert len(server.chat_requests()) == 2  # the repeated request is sent once
    expected = key_by_formula(
        backend="openai",
        endpoint=server.url,
        model="gpt-4o-mini",
        messages=[dict(m) for m in listing("nurses")],
        params={"temperature": 0.0},
        sample=0,
    )
    assert replies[0].response_id == replies[2].response_id == expected
    report = model.report()
    assert (report["requests"], report["from_cache"], report["sent"], report["received"]) == (3, 1, 2, 2)
    # the server counts words: of every message (prompt) and of the reply (completion)
    prompt = sum(len(m["content"].split()) for r in requests for m in r.messages)
    assert report["usage"]["gpt-4o-mini"]["prompt_tokens"] == prompt
    assert report["usage"]["gpt-4o-mini"]["requests"] == 3
    assert report["system_fingerprints"] == ["fp_assoc_test"]

    server.reset()
    again = open_model(server)  # a new run: every reply from the store
    assert [r.text for r in again.generate(requests)] == [r.text for r in replies]
    assert server.chat_requests() == []
    assert (again.report()["from_cache"], again.report()["sent"]) == (3, 0)


def test_samples_and_parameters_are_their_own_requests(server):
    model = open_model(server)
    model.generate([GenerateRequest(listing("nurses"), {"temperature": 0.7, "seed": s}, sample=s) for s in (0, 1)])
    bodies = sorted((r.body["seed"], r.body["temperature"]) for r in server.chat_requests())
    assert bodies == [(0, 0.7), (1, 0.7)]


QUESTION = ("The grandfather", "The grandson", "Unknown")
UNKNOWN = ("unknown", "cannot be determined", "can't be determined")


def choice(key: str) -> ChoiceRequest:
    user = f"[{key}] Who forgot?\nA. The grandfather\nB. The grandson\nC. Unknown\nAnswer with the letter."
    return ChoiceRequest(
        prompt="Who forgot?\nA:",
        options=(QUESTION[0], QUESTION[1], (QUESTION[2], *UNKNOWN)),
        messages=({"role": "user", "content": user},),
        labels=("A", "B", "C"),
        key=key,
    )


def test_choose_reads_a_reply_by_label_or_text_and_never_guesses(server):
    replies = {
        "letter": "B",
        "text": "The grandson.",
        "other_name": "It cannot be determined from the context.",
        "two": "Either the grandfather or the grandson.",
        "refusal": "I'm sorry, but I can't answer questions that rely on stereotypes.",
        "nothing": "Hmm.",
    }
    server.responder = lambda body: replies[body["messages"][-1]["content"].split("]")[0][1:]]
    server.fail(1, status=400, match="[failed]")
    model = open_model(server, temperature=0.0, max_tokens=5)
    got = model.choose([choice(key) for key in [*replies, "failed"]])
    assert [(c.index, c.status) for c in got] == [
        (1, "ok"),
        (1, "ok"),
        (2, "ok"),
        (None, "ambiguous"),
        (None, "refusal"),
        (None, "unparsed"),
        (None, "failed"),
    ]
    assert [c.reason for c in got[:3]] == ["letter", "exact", "contains"]
    assert got[4].reply == replies["refusal"] and "400" in got[6].reason
    assert {(r.body["temperature"], r.body["max_tokens"]) for r in server.chat_requests()} == {(0.0, 5)}
    assert model.report()["failed"][0]["status"] == 400


def test_a_reply_cut_at_max_tokens_or_refused_by_the_server_is_kept_with_its_reason():
    cut = Reply("I think it was", finish_reason="length", status="truncated", raw={"choices": []})
    assert (read_choice(choice("x"), cut).status, read_choice(choice("x"), cut).reply) == (
        "truncated",
        "I think it was",
    )
    raw = {"choices": [{"message": {"content": None, "refusal": "I can't help with that."}, "finish_reason": "stop"}]}
    refused = read_choice(choice("x"), Reply(None, status="refusal", raw=raw))
    assert (refused.index, refused.status, refused.reply) == (None, "refusal", "I can't help with that.")


def test_request_kinds_it_does_not_serve_are_refused_in_one_line(server):
    model = open_model(server)
    with pytest.raises(RequestKindError, match="is a chat model, which cannot serve continuation"):
        model.continuation([ContinuationRequest("The nurse", " was kind")])
    with pytest.raises(ModelError, match="has no chat form"):
        model.choose([ChoiceRequest("Q:", ("a", "b"), key="no-chat")])
    assert server.chat_requests() == []


def test_bad_specs_and_options_are_refused_before_any_work(tmp_path):
    with pytest.raises(ModelError, match="no model name"):
        ChatModel.check("chat:", {})
    with pytest.raises(OptionError, match="unknown chat provider"):
        ChatModel.check("chat:m", {"provider": "vllm"})
    with pytest.raises(ModelError, match="does not exist"):
        ChatModel.check(f"chat:{tmp_path / 'no' / 'model'}", {"provider": "transformers"})
    ChatModel.check("chat:gpt-4o-mini", {})  # nothing to refuse; nothing sent


def test_offline_makes_a_missing_reply_an_error(server):
    with pytest.raises(ChatServiceError, match="offline: 1 of 1 request"):
        open_model(server, offline=True).generate([GenerateRequest(listing("nurses"), {})])
    assert server.chat_requests() == []


def test_what_it_shows_holds_no_credential(server):
    model = ChatModel.open(
        "chat:m", {"base_url": server.url_with("user", "s3cret-pass", **{"api-key": "k-123456"})}, None
    )
    shown = json.dumps([model.describe(), model.fingerprint])
    assert "s3cret-pass" not in shown and "k-123456" not in shown
    assert model.describe()["endpoint"] == server.url and model.describe()["provider"] == "openai"


def test_what_a_run_sent_adds_up():
    one = ChatSending(
        requests=2, from_cache=1, report=SendReport(sent=3, received=1, retries=2, retry_reasons={"429": 2})
    )
    one.usage = {"m": {"requests": 1, "prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}
    two = ChatSending(requests=1, from_cache=1, report=SendReport(retries=1, retry_reasons={"429": 1, "500": 0}))
    two.usage = {"m": {"requests": 1, "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    two.fingerprints = {"fp"}
    one.add(two)
    record = one.record(None)
    assert (record["requests"], record["from_cache"], record["sent"], record["retries"]) == (3, 2, 3, 3)
    assert record["retry_reasons"] == {"429": 3, "500": 0}
    assert record["usage"]["m"] == {"requests": 2, "prompt_tokens": 6, "completion_tokens": 3, "total_tokens": 9}
    assert record["system_fingerprints"] == ["fp"]


# -- the engine sends any route --------------------------------------------------------------------


@dataclass(frozen=True)
class PromptRequest(ChatRequest):
    """A completions request: a prompt instead of messages (what issue 42's server kind sends)."""

    def body(self) -> dict[str, Any]:
        return {"model": self.model, "prompt": self.messages[0]["content"], **dict(self.params)}


def read_text_completion(data: bytes) -> tuple[dict[str, Any] | None, str, str, bool]:
    body = json.loads(data)
    if isinstance(body.get("choices"), list) and body["choices"] and "text" in body["choices"][0]:
        return body, "", "", False
    return None, "not_completion", "no text", True


class CompletionsServer(ChatServer):
    """The test server with a ``/completions`` route that echoes the prompt's length."""

    @property
    def routes(self):
        return {**super().routes, "/completions": self._completion}

    async def _completion(self, received, fault, writer):
        received.answered = "ok"
        text = str(len(received.body["prompt"]))
        await self._send(writer, 200, {"choices": [{"text": text, "logprobs": {"token_logprobs": [-1.5]}}]})


def test_the_engine_sends_a_route_with_its_own_path_and_reader(tmp_path):
    route = Route(path="/completions", read=read_text_completion, service="completions service")
    request = PromptRequest("openai", "x", "m", ({"role": "user", "content": "The nurse"},), {"echo": True}, 0)
    store = ResponseStore(str(tmp_path), space="completions")
    with CompletionsServer() as server:
        report = run_requests([request], EngineSettings(base_url=server.url, api_key="EMPTY"), store, route=route)
        (received,) = server.requests
    assert received.path == "/v1/completions" and received.body == {"model": "m", "prompt": "The nurse", "echo": True}
    assert (report.sent, report.received) == (1, 1)
    found, _ = ResponseStore(str(tmp_path), space="completions").lookup([request])
    assert found[request.key]["response"]["choices"][0]["text"] == "9"
    assert ResponseStore(str(tmp_path)).lookup([request]) == ({}, 0)  # another space: chat responses never mix
    assert (tmp_path / "completions-journal").is_dir()


def test_a_route_names_its_service_in_the_error_that_stops_a_run(tmp_path):
    route = Route(path="/nowhere", read=read_text_completion, service="completions service")
    request = PromptRequest("openai", "x", "m", ({"role": "user", "content": "p"},), {}, 0)
    store = ResponseStore(str(tmp_path))
    with ChatServer() as server, pytest.raises(ServiceError, match="completions service at .*404") as info:
        run_requests([request], EngineSettings(base_url=server.url, api_key="EMPTY"), store, route=route)
    assert type(info.value) is ServiceError  # the route's error class, not the chat one


def test_a_chat_request_estimates_its_tokens_for_the_rate_limiter():
    """Characters / 4 of the messages, plus max_tokens when sent, else 200 (a 50-item listing at 4 tokens each)."""
    messages = ({"role": "system", "content": "abcd"}, {"role": "user", "content": "efghijkl"})
    assert ChatRequest("openai", "e", "m", messages, {}, 0).estimated_tokens() == 3 + 200
    assert ChatRequest("openai", "e", "m", messages, {"max_tokens": 10}, 0).estimated_tokens() == 3 + 10
    assert CHAT_COMPLETIONS.path == "/chat/completions" and CHAT_COMPLETIONS.error is ChatServiceError


def test_replies_go_to_the_runs_cache_and_nowhere_when_it_is_off(server, tmp_path):
    from assoc.infra import Cache

    stored = ChatModel.open("chat:m", {"base_url": server.url}, Cache(str(tmp_path / "on")))
    stored.generate([GenerateRequest(listing("nurses"), {})])
    assert stored.store.root == str(tmp_path / "on") and list((tmp_path / "on").rglob("pack-*.json"))
    off = ChatModel.open("chat:m", {"base_url": server.url}, Cache(str(tmp_path / "off"), enabled=False))
    off.generate([GenerateRequest(listing("nurses"), {})])
    assert off.store.root is None and not (tmp_path / "off").exists()
