"""``LMScorer.request_sets``: a scorer that asks kinds of model differently (DiscrimEval: log-probabilities from a
likelihood model, a reply from a chat model) takes every kind that serves one of its sets, sends each the first set
it serves, and refuses a kind that serves none in one line, before any work."""

from __future__ import annotations

import pytest

from assoc import ModelError
from assoc.lm import MODEL_OPTIONS, LMScorer, options_for
from assoc.lm.loading import registered_kinds


class AsksTwoWays(LMScorer):
    name = "asks_two_ways"
    requests = frozenset({"continuation"})
    request_sets = (frozenset({"continuation"}), frozenset({"generate"}))
    options = options_for(["masked", "causal", "chat"])


class AsksOneWay(LMScorer):
    name = "asks_one_way"
    requests = frozenset({"sentence"})
    options = MODEL_OPTIONS


def test_each_kind_gets_the_first_set_it_serves():
    kinds = registered_kinds()
    scorer = AsksTwoWays()
    assert {"masked", "causal", "chat"} <= set(scorer.accepted_kinds())
    assert scorer.requests_for(kinds["causal"]) == frozenset({"continuation"})
    assert scorer.requests_for(kinds["masked"]) == frozenset({"continuation"})
    assert scorer.requests_for(kinds["chat"]) == frozenset({"generate"})
    assert scorer.model_requests("chat:any") == ["generate"]
    assert AsksTwoWays.request_alternatives() == (frozenset({"continuation"}), frozenset({"generate"}))


def test_without_request_sets_the_requests_are_the_one_set():
    scorer = AsksOneWay()
    assert AsksOneWay.request_alternatives() == (frozenset({"sentence"}),)
    assert scorer.requests_for(registered_kinds()["chat"]) is None
    assert "chat" not in scorer.accepted_kinds() and {"masked", "causal"} <= set(scorer.accepted_kinds())
    with pytest.raises(ModelError, match="is a chat model .*; scorer 'asks_one_way' takes"):
        scorer.check_models(["chat:any"])
