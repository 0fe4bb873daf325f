"""Listing and rating replies in the shapes chat models write them, refusals, and the paper's cleaning.

Expected items are written out by hand from each reply."""

from __future__ import annotations

import math

import pytest
from assoc_chat_listing.parsing import ReplyParser, clean_item

PARSER = ReplyParser()


def words(reply: str) -> list[str]:
    return [item.attribute for item in PARSER.parse_listing(reply).items]


@pytest.mark.parametrize(
    "reply",
    [
        "1. Caring\n2. Hard-working\n3. Compassionate",
        "1) Caring\n2) Hard-working\n3) Compassionate",
        "- Caring\n- Hard-working\n- Compassionate",
        "* Caring\n* Hard-working\n* Compassionate",
        "• Caring\n• Hard-working\n• Compassionate",
        "Caring, Hard-working, Compassionate",
        "Caring, Hard-working, and Compassionate.",
        "Caring; Hard-working; Compassionate",
        "Caring\nHard-working\nCompassionate",
        "1. **Caring**\n2. **Hard-working**\n3. **Compassionate**",
        "1. Caring - they look after patients\n2. Hard-working - long shifts\n3. Compassionate - kind to the sick",
        "1. Caring: they look after patients\n2. Hard-working: long shifts\n3. Compassionate: kind to the sick",
        "1. **Caring**: they look after patients\n2. **Hard-working** – long shifts\n3. Compassionate (kind)",
        "Here are 3 characteristics that most Americans would think describe nurses:\n\n1. Caring\n2. Hard-working\n"
        "3. Compassionate\n\nI hope this helps!",
        "Sure! Here are the characteristics: Caring, Hard-working, Compassionate",
        "1. Caring 2. Hard-working 3. Compassionate",
        "  1.  Caring  \n\n  2.  Hard-working\n  3.  Compassionate.  ",
    ],
)
def test_every_reply_shape_gives_the_same_items(reply):
    assert words(reply) == ["caring", "hard working", "compassionate"]


def test_preamble_and_closing_remark_are_dropped_and_counted():
    reply = (
        "Here are some characteristics that many Americans might associate with nurses:\n"
        "1. Caring\n2. Patient\n"
        "It's important to note that these are generalizations and do not apply to every nurse."
    )
    listing = PARSER.parse_listing(reply)
    assert [i.attribute for i in listing.items] == ["caring", "patient"]
    assert listing.dropped_lines == ["Here are some characteristics that many Americans might associate with nurses:"]
    assert len(listing.warning_lines) == 1
    assert listing.status == "ok"


def test_rank_raw_item_and_repeated_items():
    listing = PARSER.parse_listing("1. Kind\n2. **Smart** - clever\n3. kind\n4. Well-Educated")
    assert [(i.rank, i.raw_item, i.attribute) for i in listing.items] == [
        (1, "Kind", "kind"),
        (2, "**Smart** - clever", "smart"),
        (4, "Well-Educated", "well educated"),
    ]
    assert listing.n_duplicates == 1


def test_cleaning_follows_the_paper():
    assert clean_item("Hard-Working") == "hard working"
    assert clean_item("  Family–oriented ") == "family oriented"  # en dash
    assert clean_item("Self—reliant") == "self reliant"  # em dash
    assert clean_item("OPEN  minded") == "open minded"


@pytest.mark.parametrize(
    "reply",
    [
        "As an AI language model, I don't have personal beliefs or opinions.",
        "I'm sorry, but I cannot provide a list of characteristics for mahanaya, as it is not commonly used or "
        "understood in American society.",
        "It is not appropriate to generalize characteristics to an entire group of people.",
        "I can't help with that request.",
        "I'm sorry, but I can't assist with that.\n\nIt's important to avoid stereotypes.",
    ],
)
def test_refusals_are_never_parsed_into_items(reply):
    listing = PARSER.parse_listing(reply)
    assert listing.items == []
    assert listing.status == "refusal"
    assert listing.refusal_text


def test_a_disclaimer_before_a_list_keeps_the_list():
    reply = "As an AI, I don't hold beliefs, but common perceptions include:\n1. Friendly\n2. Loud"
    listing = PARSER.parse_listing(reply)
    assert [i.attribute for i in listing.items] == ["friendly", "loud"]
    assert listing.status == "ok"


def test_items_that_look_like_warning_words_stay_items():
    assert words("1. Biased\n2. Stereotyped\n3. Not all-knowing") == ["biased", "stereotyped", "not all knowing"]


def test_empty_reply_is_empty_not_refusal():
    for reply in ("", None, "   \n  "):
        listing = PARSER.parse_listing(reply)
        assert listing.status == "empty" and not listing.refusal


def test_patterns_are_configurable():
    custom = ReplyParser(refusal_patterns=[r"\bno comment\b"], warning_patterns=[])
    assert custom.parse_listing("No comment on this group, sorry.").status == "refusal"
    # with the warning patterns switched off, a disclaimer line is no longer removed (it is commentary)
    listing = custom.parse_listing("1. Kind\n2. Smart\nThese are stereotypes.")
    assert listing.warning_lines == [] and listing.dropped_lines == ["These are stereotypes."]
    with pytest.raises(ValueError, match="regular expression"):
        ReplyParser(refusal_patterns=["(unclosed"])


def test_more_or_fewer_items_than_asked_are_kept():
    reply = "\n".join(f"{i}. word{i}" for i in range(1, 54))
    assert len(words(reply)) == 53


@pytest.mark.parametrize(
    "reply, value, status",
    [
        ("4", 4.0, "ok"),
        ("(4)", 4.0, "ok"),
        ("4 - Somewhat positively", 4.0, "ok"),
        ("**3**", 3.0, "ok"),
        ("I would say 2.", 2.0, "ok"),
        ("Rating: 5", 5.0, "ok"),
        ("3.5", 3.5, "ok"),
        ("7", math.nan, "no_number"),
        ("Neutral", math.nan, "no_number"),
        ("Somewhere between 2 and 4", math.nan, "ambiguous"),
        ("As an AI, I cannot rate groups of people.", math.nan, "refusal"),
        ("", math.nan, "no_number"),
    ],
)
def test_ratings(reply, value, status):
    got, got_status = PARSER.parse_rating(reply)
    assert got_status == status
    assert (math.isnan(got) and math.isnan(value)) or got == value


def test_rating_scale_is_configurable():
    assert ReplyParser(scale=(1, 7)).parse_rating("7") == (7.0, "ok")


def test_grouped_list_with_headings_and_nested_bullets():
    reply = (
        "**Positive traits:**\n1. Kind\n2. **Smart**\n\n**Negative traits:**\n3. Lazy\n   - Loud (at times)\n4. Cold"
    )
    listing = PARSER.parse_listing(reply)
    assert [i.attribute for i in listing.items] == ["kind", "smart", "lazy", "loud", "cold"]
    assert listing.dropped_lines == ["**Positive traits:**", "**Negative traits:**"]


def test_inline_numbered_list_with_commas():
    assert words("1. Hardworking, 2. Caring, 3. Family-oriented.") == ["hardworking", "caring", "family oriented"]
