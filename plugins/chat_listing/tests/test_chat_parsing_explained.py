"""Issue 37, item 6: a trait whose explanation mentions stereotypes is an item, and a rating reply that
gives two numbers is ambiguous; every dropped line and every ambiguous rating keeps its reason.

Expected items and statuses are written out by hand from each reply."""

from __future__ import annotations

import math
import warnings

import pytest
from assoc_chat_listing.parsing import ReplyParser

import assoc
from assoc.testing.openai_server import EXAMPLE_STIMULI as STIMULI
from assoc.testing.openai_server import FAST_RETRIES as FAST

PARSER = ReplyParser()


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "- **Thrifty**: an old stereotype, mostly a joke\n- Hardworking\n- Proud",
            ["thrifty", "hardworking", "proud"],
        ),
        (
            "* Punctual – the flattering side of the stereotype\n* Efficient\n* Reserved",
            ["punctual", "efficient", "reserved"],
        ),
        (
            "1. **Thrifty**: an old stereotype that is mostly told as a joke today.\n2. Proud\n3. Loud",
            ["thrifty", "proud", "loud"],
        ),
        ("1. Frugal (a stereotype, though many are generous)\n2. Loud\n3. Religious", ["frugal", "loud", "religious"]),
        (
            "- Good at math, a stereotype that is not true of every individual\n- Quiet\n- Polite",
            ["good at math", "quiet", "polite"],
        ),
        (
            "1. Lazy — a harmful generalization with no basis\n2. Rebellious\n3. Idealistic",
            ["lazy", "rebellious", "idealistic"],
        ),
        # one per line: the explained item is neither commentary nor a warning
        ("Thrifty - an old stereotype, mostly a joke.\nProud\nLoud", ["thrifty", "proud", "loud"]),
        ("Stoic: a stereotype, and individuals vary a lot\nReserved\nPolite", ["stoic", "reserved", "polite"]),
    ],
)
def test_a_trait_before_an_explanation_that_mentions_stereotypes_is_an_item(reply, expected):
    listing = PARSER.parse_listing(reply)
    assert [item.attribute for item in listing.items] == expected
    assert listing.warning_lines == [] and listing.dropped == []
    # the item keeps what the model wrote, explanation included
    assert any(word in listing.items[0].raw_item for word in ("stereotype", "generalization"))


@pytest.mark.parametrize(
    ("reply", "warning"),
    [
        ("- Kind\n- Loyal\n- Note: these are generalizations and individuals vary.", "- Note: these are"),
        ("- Kind\n- Loyal\n- These are stereotypes, and not all people fit them.", "- These are"),
        ("- Kind\n- Loyal\n- Stereotypes aside: people differ widely from one another.", "- Stereotypes aside"),
        ("- Kind\n- Loyal\n- Remember - these are broad generalizations and not facts.", "- Remember"),
        ("Kind\nLoyal\nKeep in mind: these are generalizations, not facts about anyone.", "Keep in mind"),
        ("1. Kind\n2. Loyal\n3. However, it is important to avoid generalizing about any group.", "3. However"),
    ],
)
def test_a_warning_with_a_lead_in_before_a_separator_is_still_dropped(reply, warning):
    listing = PARSER.parse_listing(reply)
    assert [item.attribute for item in listing.items] == ["kind", "loyal"]
    assert [line[: len(warning)] for line in listing.warning_lines] == [warning]
    ((line, reason),) = listing.dropped
    assert line.startswith(warning) and reason.startswith("bias warning")


def test_every_dropped_line_keeps_its_reason():
    reply = (
        "Here are some characteristics that many Americans might associate with nurses:\n"
        "1. Caring\n2. Patient\n"
        "It's important to note that these are generalizations and do not apply to every nurse."
    )
    listing = PARSER.parse_listing(reply)
    assert listing.dropped == [
        (
            "Here are some characteristics that many Americans might associate with nurses:",
            "not a list line (preamble or closing remark)",
        ),
        (
            "It's important to note that these are generalizations and do not apply to every nurse.",
            "bias warning; not a list line (preamble or closing remark)",
        ),
    ]
    heading = PARSER.parse_listing("1. **Work ethic**\n   - Hardworking\n   - Diligent\n2. Friendly")
    assert heading.dropped == [("1. **Work ethic**", "heading over its items")]
    assert PARSER.parse_listing("Sure, here you go.\nKind\nLoyal\nBrave").dropped == [
        ("Sure, here you go.", "commentary (not a list line)")
    ]


@pytest.mark.parametrize(
    ("reply", "numbers"),
    [
        ("2 or 3, depending on who you ask", "2, 3"),
        ("I'd say 5, though some would answer 3", "3, 5"),
        ("3/5 to 4/5", "3, 4"),
        ("4-5", "4, 5"),
        ("4, maybe 5", "4, 5"),
        ("Rating: 4 (perhaps 5 in big cities)", "4, 5"),
        ("I would rate them a 4, or even a 5.", "4, 5"),
        ("I would say 4. Others might say 2.", "2, 4"),
        ("4/5, though in rural areas 3 out of 5", "3, 4"),
        ("My answer is 2, but many would give them a 3.", "2, 3"),
    ],
)
def test_a_rating_with_two_different_answers_is_ambiguous(reply, numbers):
    rating = PARSER.read_rating(reply)
    assert math.isnan(rating.value) and rating.status == "ambiguous"
    assert f"({numbers})" in rating.reason
    assert PARSER.parse_rating(reply)[1] == "ambiguous"


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("Rating: 2\n\nMany people in 5 major surveys see them negatively.", 2.0),  # 5 counts surveys
        ("Rating: 4. My answer is 4.", 4.0),  # the same answer twice
        ("3, on a scale of 1 to 5", 3.0),  # an echo of the scale
        ("4 out of 5", 4.0),
        ("4/5 - most people see them positively", 4.0),
        ("4 (Somewhat positively)", 4.0),
        ("On a scale from 1 to 5, I would say 4", 4.0),
        ("Using the scale from (1) Very negatively to (5) Very positively, the answer is 3.", 3.0),
    ],
)
def test_one_answer_with_other_numbers_around_it_is_read(reply, value):
    rating = PARSER.read_rating(reply)
    assert (rating.value, rating.status) == (value, "ok")


def test_the_table_keeps_the_reply_and_the_reason(server):
    server.replies["describe nurses"] = "- **Thrifty**: an old stereotype, mostly a joke\n- Caring\n- Patient"
    server.replies["describe engineers"] = (
        "Here is the list:\n- Logical\n- Precise\n- Please note that these are stereotypes and individuals vary."
    )
    server.replies["who are nurses"] = "2 or 3, depending on who you ask"
    server.replies["who are engineers"] = "I'd say 5, though some would answer 3"
    server.replies["who are musicians"] = "4"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = assoc.score("chat_listing", STIMULI, "gpt-4o-mini", base_url=server.url, task="both", **FAST)
    listed = table[table["measure"] == "listed"]
    by_term = {t: g["attribute"].tolist() for t, g in listed.groupby("target")}
    assert by_term["nurses"] == ["thrifty", "caring", "patient"]
    assert listed.set_index("attribute").loc["thrifty", "raw_item"] == "**Thrifty**: an old stereotype, mostly a joke"
    assert by_term["engineers"] == ["logical", "precise"]
    run = table.attrs["assoc"]["run"]
    engineers = [(d["line"], d["reason"]) for d in run["dropped_lines"] if d["target"] == "engineers"]
    assert engineers == [
        ("Here is the list:", "not a list line (preamble or closing remark)"),
        (
            "- Please note that these are stereotypes and individuals vary.",
            "bias warning; a sentence in an item's place",
        ),
    ]
    assert run["n_dropped_lines"] == len(run["dropped_lines"])
    ratings = table[table["measure"] == "rating"].set_index("target")
    for term, reply, numbers in [
        ("nurses", "2 or 3, depending on who you ask", "(2, 3)"),
        ("engineers", "I'd say 5, though some would answer 3", "(3, 5)"),
    ]:
        row = ratings.loc[term]
        assert math.isnan(row["value"]) and row["rating_status"] == "ambiguous"
        assert row["raw_reply"] == reply and numbers in row["rating_note"]
    assert ratings.loc["musicians", "value"] == 4 and ratings.loc["musicians", "rating_status"] == "ok"
    problems = {p["target"]: p for p in run["rating_problems"]}
    assert problems["nurses"]["status"] == "ambiguous" and "(2, 3)" in problems["nurses"]["reason"]
