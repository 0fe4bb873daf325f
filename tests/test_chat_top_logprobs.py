"""A chat model's choice from the top log-probabilities of its first reply token (issue 42 item 4).

For chat endpoints without prompt log-probabilities: each option's score is the log-probability that
the reply's first token is the option's label (its spellings summed), checked by hand on vLLM's recorded
reply and on the test server; an endpoint that gives no top log-probabilities is refused in one line,
never read from the reply instead.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from assoc.errors import ModelError
from assoc.lm import ChoiceRequest, open_model
from assoc.lm.chat.top_logprobs import answer_position, label_log_probs
from assoc.testing.openai_server import ChatServer

DATA = Path(__file__).parent / "data" / "vllm"
QUESTION = ChoiceRequest(
    "The nurse was late.\n\nQ: Who was late?\nA:",
    (("The nurse",), ("The doctor",), ("Unknown",)),
    messages=({"role": "user", "content": "Who was late? Answer A, B or C."},),
    labels=("A", "B", "C"),
    key="q1",
)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))


def test_vllms_recorded_top_logprobs_are_read_by_hand():
    response = json.loads((DATA / "gpt2" / "chat_completions_top_logprobs.json").read_text())["response"]
    top = answer_position(response)
    assert [entry["token"] for entry in top] == [":", " e", "rks", "ore", " nurs"]
    scores = label_log_probs(top, [":", "e", "A"])  # " e" strips to "e"; "A" is not among the five
    assert scores[0] == top[0]["logprob"] and scores[1] == top[1]["logprob"] and math.isnan(scores[2])


def test_the_option_is_the_most_likely_label_whatever_the_reply_says():
    first = [
        {"token": "B", "logprob": -1.2},
        {"token": " A", "logprob": -1.0},
        {"token": "A", "logprob": -2.0},
        {"token": "The", "logprob": -0.5},
    ]
    with ChatServer(
        responder=lambda body: "A", chat_logprobs=lambda body: [{"token": "A", "top_logprobs": first}]
    ) as server:
        model = open_model("chat:m", {"base_url": server.url, "choice_measure": "top_logprobs", "top_logprobs": 4})
        choice = model.choose([QUESTION])[0]
        body = server.chat_requests()[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 4
    a = math.log(math.exp(-1.0) + math.exp(-2.0))  # the two spellings of A, summed in probability
    assert choice.ok and choice.index == 0 and choice.scores[0] == pytest.approx(a)
    assert choice.scores[1] == -1.2 and math.isnan(choice.scores[2]) and choice.reply == "A"


def test_no_label_among_the_top_tokens_is_no_choice():
    top = [{"token": "The", "logprob": -0.1}, {"token": "It", "logprob": -2.0}]
    with ChatServer(responder=lambda body: "The nurse", chat_logprobs=lambda body: [{"top_logprobs": top}]) as server:
        model = open_model("chat:m", {"base_url": server.url, "choice_measure": "top_logprobs"})
        choice = model.choose([QUESTION])[0]
    assert choice.index is None and choice.status == "no_label" and "A, B, C" in choice.reason


def test_an_endpoint_without_top_logprobs_is_refused_in_one_line():
    with ChatServer(responder=lambda body: "A", chat_logprobs=lambda body: None) as server:
        model = open_model("chat:m", {"base_url": server.url, "choice_measure": "top_logprobs"})
        with pytest.raises(ModelError) as caught:
            model.choose([QUESTION])
    message = str(caught.value)
    assert "\n" not in message and "no top log-probabilities" in message and "never reads the reply" in message


def test_a_request_without_labels_is_refused_before_sending():
    unlabelled = ChoiceRequest("Q?", (("yes",), ("no",)), messages=({"role": "user", "content": "Q?"},), key="q2")
    with ChatServer() as server:
        model = open_model("chat:m", {"base_url": server.url, "choice_measure": "top_logprobs"})
        with pytest.raises(ModelError, match="has no labels"):
            model.choose([unlabelled])
        assert server.chat_requests() == []


def test_the_reply_measure_is_unchanged_by_default():
    with ChatServer(responder=lambda body: "B") as server:
        model = open_model("chat:m", {"base_url": server.url})
        choice = model.choose([QUESTION])[0]
        assert "logprobs" not in server.chat_requests()[0].body
    assert choice.index == 1 and choice.scores == ()
