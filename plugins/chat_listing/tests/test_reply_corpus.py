"""Parse accuracy on a corpus of realistic replies (``reply_corpus.py``, expectations written by hand).

Every reply is checked; the replies the parser is known to get wrong are listed in ``KNOWN_MISSES``
(so a regression fails, and so does a fix that forgets to update the list), and the accuracy that
``docs/chat.md`` states is checked against the corpus.
"""

from __future__ import annotations

import math
import pathlib
import re

import pytest
from assoc_chat_listing.parsing import ReplyParser

from .reply_corpus import LISTING, RATING, REFUSAL

PARSER = ReplyParser()
#: Replies the parser gets wrong (id: what it does instead), stated in docs/chat.md.
KNOWN_MISSES: dict[str, str] = {
    "mistral-prose-no-list": "a trait named in running prose, with no list, is not found: the reply reads as a refusal",
}


def listing_ok(reply: str, expected: list[str] | str) -> bool:
    listing = PARSER.parse_listing(reply)
    if expected == REFUSAL:
        return listing.status == "refusal" and not listing.items
    if expected == "empty":
        return listing.status == "empty"
    return listing.status == "ok" and [i.attribute for i in listing.items] == expected


def rating_ok(reply: str, value: float, status: str) -> bool:
    got, got_status = PARSER.parse_rating(reply)
    same = (math.isnan(got) and math.isnan(value)) or got == value
    return same and got_status == status


def test_the_corpus_is_large_and_varied():
    assert len(LISTING) + len(RATING) >= 60
    assert len({case[0] for case in LISTING}) == len(LISTING) and len({c[0] for c in RATING}) == len(RATING)
    assert {case[1] for case in LISTING} >= {"gpt", "claude", "llama", "mistral", "gemma", "qwen"}
    assert sum(case[3] == REFUSAL for case in LISTING) >= 5


@pytest.mark.parametrize("case", LISTING, ids=[c[0] for c in LISTING])
def test_listing_replies(case):
    name, _, reply, expected = case
    if name in KNOWN_MISSES:
        assert not listing_ok(reply, expected), f"{name} now parses right: remove it from KNOWN_MISSES and the docs"
    else:
        listing = PARSER.parse_listing(reply)
        got = listing.status if expected in (REFUSAL, "empty") else [i.attribute for i in listing.items]
        assert got == expected


@pytest.mark.parametrize("case", RATING, ids=[c[0] for c in RATING])
def test_rating_replies(case):
    name, _, reply, value, status = case
    if name in KNOWN_MISSES:
        assert not rating_ok(reply, value, status)
    else:
        got, got_status = PARSER.parse_rating(reply)
        assert got_status == status
        assert (math.isnan(got) and math.isnan(value)) or got == value


def test_hedges_before_a_list_are_recorded():
    reply = dict((c[0], c[2]) for c in LISTING)["gpt-hedge-then-commas"]
    listing = PARSER.parse_listing(reply)
    assert listing.status == "ok" and listing.hedge == ["I cannot generalize about a group."]


def test_docs_state_the_accuracy_on_the_corpus():
    right = sum(listing_ok(c[2], c[3]) for c in LISTING) + sum(rating_ok(c[2], c[3], c[4]) for c in RATING)
    total = len(LISTING) + len(RATING)
    assert total - right == len(KNOWN_MISSES)
    docs = pathlib.Path(__file__).parents[3] / "docs" / "chat.md"
    text = " ".join(docs.read_text(encoding="utf-8").split())
    match = re.search(r"parses (\d+) of (\d+) replies of the corpus exactly right", text)
    assert match, "docs/chat.md must state the parse accuracy on the reply corpus"
    assert (int(match.group(1)), int(match.group(2))) == (right, total)
