"""matching='sadcat': SADCAT's LLM-pipeline rules, each on a small case computed by hand.

The synthetic files have the structure and dtypes of SADCAT's ``All.steps_Dictionaries.rda``
and ``Dictionaries.rda`` (R integer columns with NA, read by rdata as pandas ``Int32``; a
factor value column; a ``_dir`` of 2; values that repeat after lower-casing; columns SADCAT
added later). The real files are used when ``ASSOC_SADCAT_ALLSTEPS`` /
``ASSOC_SADCAT_DICTIONARIES`` point to them (SADCAT has no licence: they are not shipped).
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.devtools.rda import write_rda
from assoc.devtools.strict_skips import skip_unavailable_to_ci
from assoc.errors import DataError
from assoc.stats import sadcat
from assoc.stats.sadcat import (
    DIRECTIONAL,
    NON_DIRECTIONAL,
    cut_final_s,
    r_split_space,
    sadcat_dictionary,
    sadcat_kind,
    sadcat_singularize,
    tokenize,
)
from assoc.table import normalise

#: (value, {column: 1}) rows of a small All.steps-like dictionary; every other membership is 0
ROWS = [
    ("kind", ["Warmth_dict", "Warmth_dict_hi", "Sociability_dict", "Sociability_dict_hi"]),
    ("kind hearted", ["Morality_dict", "Morality_dict_hi"]),
    ("cold", ["Warmth_dict", "Warmth_dict_lo"]),
    ("help", ["Warmth_dict", "Warmth_dict_lo"]),  # its Warmth_dir says +1: not used
    ("good", ["Competence_dict", "Competence_dict_hi"]),  # no Competence_dir
    ("smart", ["Competence_dict", "Competence_dict_hi", "Ability_dict", "Ability_dict_hi"]),
    ("hard working", ["Competence_dict", "Competence_dict_hi"]),
    ("working class", ["Status_dict", "Status_dict_lo"]),
    ("dangerous", ["Warmth_dict", "Warmth_dict_lo", "deviance_dict", "Deviance_dict_hi"]),
    ("Crack-up", ["emotions_dict"]),
    ("crack up", ["emotions_dict"]),
    ("nurse", ["occupation_dict"]),
    ("person", ["Other_dict"]),
    ("sister", ["relative_dict"]),
    ("healthy", ["health_dict", "Health_dict_hi"]),
    ("sick", ["health_dict", "Health_dict_lo"]),
    ("pretty", ["beauty_dict", "Beauty_dict_hi"]),
    ("alumnus", ["Status_dict", "Status_dict_hi"]),
    ("well-educated", ["Competence_dict", "Competence_dict_hi"]),
    ("leader", ["Assertiveness_dict", "Assertiveness_dict_hi"]),
    ("baby", ["relative_dict"]),
    ("both", ["Beliefs_dict", "Beliefs_dict_hi", "Beliefs_dict_lo"]),
]
MEMBERSHIP = sorted(
    {c for c, _, _ in DIRECTIONAL.values()}
    | {c for _, hi, lo in DIRECTIONAL.values() for c in (hi, lo)}
    | {c for cols in NON_DIRECTIONAL.values() for c in cols}
)


def all_steps_frame() -> pd.DataFrame:
    data: dict[str, object] = {
        "tv": pd.Categorical([v for v, _ in ROWS]),  # a factor, as R may store it
        "values": [v.replace(" ", "") for v, _ in ROWS],
        "manual_add": pd.array([0] * len(ROWS), dtype="Int32"),
    }
    for column in MEMBERSHIP:
        data[column] = pd.array([int(column in cols) for _, cols in ROWS], dtype="Int32")
    frame = pd.DataFrame(data)
    frame.loc[frame["tv"] == "nurse", "Warmth_dict"] = pd.NA  # R's NA in an integer column
    frame["Warmth_dir"] = pd.array([1, None, -1, 1, None, None, None, None, -1] + [None] * 13, dtype="Int32")
    frame["Morality_dir"] = pd.array([None, 2] + [None] * 20, dtype="Int32")  # a _dir of 2
    frame["Sum"] = pd.array(range(len(ROWS)), dtype="Int32")  # a column added later
    return frame


def dictionaries_frame() -> pd.DataFrame:
    """Dictionaries.rda's layout: the value in 'word', no Deviance_dict_hi/_lo."""
    frame = all_steps_frame().rename(columns={"tv": "word"})
    frame["word"] = frame["word"].astype(str)
    return frame.drop(columns=["values", "manual_add", "Deviance_dict_hi", "Deviance_dict_lo"])


def make_table(responses: dict[str, list[object]]) -> pd.DataFrame:
    rows = [
        {
            "scorer": "chat_listing",
            "model": "gpt",
            "context": "List 50 characteristics of [target].",
            "target_group": "g",
            "target": term,
            "attribute": word,
            "measure": "listed",
            "value": float(rank),
        }
        for term, words in responses.items()
        for rank, word in enumerate(words, 1)
    ]
    return normalise(pd.DataFrame(rows))


@pytest.fixture
def all_steps(tmp_path):
    return str(write_rda(tmp_path / "All.steps_Dictionaries.rda", {"All.steps_Dictionaries": all_steps_frame()}))


#: a word list for singularize2 (SADCAT checks SemNetDictionaries' general.dictionary)
WORDS = ["teacher", "woman", "alumnus", "criterion", "kid", "leader", "sister", "worker", "person"]


def code(path, responses, **options):
    options.setdefault("word_list", WORDS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return assoc.analyze("stereotype", make_table(responses), dictionary=path, **options)


def responses(path, words, **options):
    return code(path, {"t": words}, shape="responses", **options)


def test_reading_the_files_as_they_are(tmp_path, all_steps):
    frame = all_steps_frame()
    assert sadcat_kind(frame) == "all_steps" and sadcat_kind(dictionaries_frame()) == "dictionaries"
    assert sadcat_kind(frame.drop(columns=["deviance_dict"])) is None
    with pytest.warns(UserWarning) as caught:
        assoc.analyze("stereotype", make_table({"t": ["kind"]}), dictionary=all_steps)
    (line,) = [str(w.message) for w in caught]  # one warning line naming everything unusual
    assert "\n" not in line
    assert "1 NA cell(s) in membership columns read as 0" in line
    assert "'kind hearted': Morality_dir = 2" in line and "not used" in line
    assert "1 value(s) repeat after lower-casing" in line and "'Crack-up' / 'crack up'" in line
    read = sadcat_dictionary(frame)
    assert read.kind == "all_steps" and len(read.protected) == len(ROWS)  # no row dropped
    assert read.dimensions == [*DIRECTIONAL, *NON_DIRECTIONAL]
    assert read.keys["emotion".title()] == ["Crack-up", "crack up"]
    assert "nurse" not in read.keys["Warmth"]  # NA membership = not a member
    assert read.keys["Health"] == ["healthy", "sick"] and read.keys["Health_hi"] == ["healthy"]
    assert read.keys["Beauty"] == ["pretty"] and read.keys["Deviance_hi"] == ["dangerous"]
    assert read.keys["OtherwFam"] == ["person", "sister", "baby"]  # Other_dict or relative_dict
    # Dictionaries' layout: detected, coded with a warning about its preprocessed forms
    dpath = write_rda(tmp_path / "Dictionaries.rda", {"Dictionaries": dictionaries_frame()})
    with pytest.warns(UserWarning, match="TreeTagger.*use All.steps_Dictionaries") as caught:
        out = assoc.analyze("stereotype", make_table({"t": ["dangerous"]}), dictionary=str(dpath), shape="wide")
    assert "no _dict_hi/_dict_lo columns for Deviance" in str(caught[0].message)
    assert out["deviance_representativeness"].iloc[0] == 1 and math.isnan(out["deviance_direction"].iloc[0])


def test_csv_export_reads_as_the_rda(tmp_path, all_steps):
    csv = tmp_path / "All.steps_Dictionaries.csv"
    frame = all_steps_frame()
    frame.index = range(1, len(frame) + 1)
    frame.to_csv(csv, na_rep="NA", index_label="")  # as R's write.csv
    words = ["Kind", "kind hearted", "cold", "help", "good", "hard working class", "sick"]
    pd.testing.assert_frame_equal(code(all_steps, {"t": words}), code(str(csv), {"t": words}))
    with open(csv, "a", encoding="utf-8") as f:
        f.write('"99","oops",' + ",".join(["x"] * (len(frame.columns) - 1)) + "\n")
    with pytest.raises(DataError, match="column 'values'|must hold numbers"):
        code(str(csv), {"t": ["kind"]})


def test_direction_is_high_minus_low_and_dir_is_not_used(all_steps):
    out = responses(all_steps, ["help", "good", "kind", "both", "cold and kind"], dimensions=["Warmth", "Competence"])
    # help: Warmth low (its _dir of +1 ignored); good: Competence high (no _dir); both: Beliefs hi and lo
    assert out["warmth_direction"].iloc[0] == -1 and out["warmth_direction"].iloc[2] == 1
    assert math.isnan(out["warmth_direction"].iloc[1])  # "good" is no Warmth word
    assert out["competence_direction"].iloc[1] == 1
    assert out["warmth_direction"].iloc[4] == 0  # a high and a low Warmth value: 1 - 1
    beliefs = responses(all_steps, ["both"], dimensions=["Beliefs"])
    assert beliefs["beliefs_representativeness"].iloc[0] == 1 and beliefs["beliefs_direction"].iloc[0] == 0


def test_tokens_and_phrases_longest_first_nested_suppressed(all_steps):
    out = responses(
        all_steps,
        ["kind hearted", "very kind", "kind and kind hearted", "hard working class", "hard working"],
        dimensions=["Warmth", "Morality", "Competence", "Status"],
    )
    # "kind hearted" matches Morality's phrase; "kind" inside it is not counted for Warmth
    assert out["morality_representativeness"].tolist() == [1, 0, 1, 0, 0]
    assert out["warmth_representativeness"].tolist() == [0, 1, 1, 0, 0]
    assert out["warmth_matched"].tolist()[:3] == ["", "kind", "kind"]
    # overlapping phrases of different dimensions both count: hard working | working class
    assert out["competence_representativeness"].tolist() == [0, 0, 0, 1, 1]
    assert out["status_representativeness"].tolist() == [0, 0, 0, 1, 0]
    assert out["status_direction"].iloc[3] == -1


def test_final_s_punctuation_case_and_dashes(all_steps):
    out = responses(
        all_steps,
        ["Dangerous", "Kind.", "(cold)", "leaders.", "Well-Educated", "well educated", "crack-up", "babies"],
        dimensions=["Warmth", "Competence", "Assertiveness", "Emotion", "Family"],
    )
    # dangerous -> "dangerou" on both sides; "kind." and "(cold)" lose their punctuation
    assert out["warmth_representativeness"].tolist()[:3] == [1, 1, 1]
    assert out["text_matched"].iloc[0] == "dangerou"
    # "leaders." keeps its s: the final-s cut applies before the punctuation is dropped
    assert out["tokens"].iloc[3] == "leaders" and out["assertiveness_representativeness"].iloc[3] == 0
    assert out["competence_representativeness"].tolist()[4:6] == [1, 1]
    assert out["emotion_representativeness"].iloc[6] == 1
    # "babies" ends in "es": singularize2 keeps it, the s-cut gives "babie", not "baby"
    assert out["tokens"].iloc[7] == "babie" and out["family_representativeness"].iloc[7] == 0


def test_repeats_and_whitespace_kept_missing_dropped(all_steps):
    est = code(
        all_steps,
        {"a": ["kind", "kind", " ", "cold"], "b": ["kind", "", np.nan, None], "c": ["", np.nan]},
        dimensions=["Warmth"],
        shape="wide",
    ).set_index("target")
    # a: kind, kind, " " (coded 0), cold -> 3 of 4 Warmth; direction mean(1, 1, -1)
    assert est.loc["a", "warmth_representativeness"] == 0.75
    assert est.loc["a", "warmth_direction"] == pytest.approx(1 / 3, abs=1e-15)
    assert est.loc["a", "n_responses"] == 4 and est.loc["a", "n_duplicates_removed"] == 0
    # b: "" and NaN are missing (NA in SADCAT) and dropped from the means
    assert est.loc["b", "warmth_representativeness"] == 1 and est.loc["b", "n_empty"] == 3
    # c: no response at all: NA, as SADCAT's mean(na.rm = TRUE) of nothing
    assert math.isnan(est.loc["c", "warmth_representativeness"]) and est.loc["c", "n_responses"] == 0
    once = code(
        all_steps, {"a": ["kind", "Kind ", "cold"]}, dimensions=["Warmth"], shape="wide", deduplicate="response"
    )
    assert once["warmth_representativeness"].iloc[0] == 1 and once["n_duplicates_removed"].iloc[0] == 1


def test_singularize2_rules():
    known = set(WORDS)
    protected = {"glasses", "kids"}
    cases = {
        "teachers": "teacher",  # final s cut, a known word
        "nurses": "nurses",  # ends in "es": unchanged
        "women": "woman",  # irregular table
        "children": "child",  # irregular table (result "child" not in `known`: kept as the table's)
        "alumni": "alumnus",  # i -> us
        "criteria": "criterion",  # a -> on
        "pizza": "pizza",  # "pizzon" is no word
        "hard workers": "hard worker",  # only the last word
        "kids": "kids",  # in the dictionary: kept
        "bus": "bus",  # "bu" is no word
        " ": " ",
        "  ": " ",  # R: strsplit("  ", " ") is c("", ""), pasted back with one space
        "workers ": "workers ",  # a trailing space: one piece, not singularised
    }
    assert {w: sadcat_singularize(w, protected, known | {"child"}) for w in cases} == cases
    assert sadcat_singularize("children", protected, known) == "children"  # "child" not known: unchanged
    assert r_split_space("a  b ") == ["a", "", "b"] and r_split_space("") == []
    assert cut_final_s("kids  toys") == "kid  toy" and cut_final_s("americans'") == "americans'"


# Expected tokens as quanteda 4.3.1's tokens(x, remove_punct = TRUE, remove_symbols = TRUE) gave them
# (R 4.2.2, stringi 1.7.12), run once by hand when this was written; R is not needed to run the test.
@pytest.mark.parametrize(
    "text, tokens",
    [
        ("don't care", ["don't", "care"]),
        ("u.s. citizens", ["u.s", "citizens"]),
        ("24/7", ["24", "7"]),
        ("3.5 stars", ["3.5", "stars"]),
        ("1,000 friends", ["1,000", "friends"]),
        ("#blessed", ["#blessed"]),
        ("@home", ["@home"]),
        ("rock'n'roll", ["rock'n'roll"]),
        ("self\u2013employed", ["self\u2013employed"]),  # quanteda keeps a dash between letters
        ("black & white", ["black", "white"]),
        ("dirty...", ["dirty"]),
        ('"honest"', ["honest"]),
        ("na\u00efve", ["na\u00efve"]),
        ("tabs\tand\nlines", ["tabs", "and", "lines"]),
        ("snake_case", ["snake_case"]),
        ("$5 + 3%", ["5", "3"]),
        ("", []),
        ("   ", []),
    ],
)
def test_tokens_as_quanteda_makes_them(text, tokens):
    assert tokenize(text) == tokens


def test_audit_rows_show_why(all_steps):
    out = responses(all_steps, ["Kind hearted.", "Teachers", " ", None], dimensions=["Warmth", "Morality"])
    assert len(out) == 4 and set(out["matching"]) == {"sadcat"}
    first = out.iloc[0]
    assert (first["text_lower"], first["word_normalized"], first["text_matched"], first["tokens"]) == (
        "kind hearted.",
        "kind hearted.",
        "kind hearted.",
        "kind hearted",
    )
    assert first["morality_matched"] == "kind hearted" and first["warmth_matched"] == ""
    assert out["word_normalized"].iloc[1] == "teacher"
    assert out["is_empty"].tolist() == [False, False, False, True]
    assert math.isnan(out["warmth_representativeness"].iloc[3])


def test_exact_matching_of_a_sadcat_file(all_steps):
    out = responses(
        all_steps,
        ["very kind", "Help", "well-educated"],
        matching="exact",
        word_list=None,
        dimensions=["Warmth", "Competence"],
    )
    # whole responses only; direction is still high minus low
    assert out["warmth_representativeness"].tolist() == [0, 1, 0]
    assert out["warmth_direction"].iloc[1] == -1 and out["competence_representativeness"].iloc[2] == 1
    assert set(out["matching"]) == {"exact"}


def test_user_dictionary_with_sadcat_matching():
    dictionary = {"Warmth": {"kind": 1, "cold": -1, "quiet": None}, "Topic": {"math": None}}
    out = assoc.analyze(
        "stereotype",
        make_table({"t": ["very kind", "cold hands", "quiet", "maths"]}),
        dictionary=dictionary,
        matching="sadcat",
        word_list=WORDS,
        shape="responses",
    )
    assert out["warmth_representativeness"].tolist() == [1, 1, 1, 0]
    assert out["warmth_direction"].tolist()[:2] == [1, -1] and out["warmth_direction"].iloc[2] == 0
    assert out["topic_representativeness"].iloc[3] == 1 and math.isnan(out["topic_direction"].iloc[3])


def test_real_files_load_and_code():
    """On SADCAT's own files, when the environment points to them (not shipped: no licence)."""
    paths = {k: os.environ.get(k) for k in ("ASSOC_SADCAT_ALLSTEPS", "ASSOC_SADCAT_DICTIONARIES")}
    if not any(paths.values()):
        skip_unavailable_to_ci(
            "SADCAT's .rda files have no licence: neither the repository nor ../shared holds them; set "
            "ASSOC_SADCAT_ALLSTEPS / ASSOC_SADCAT_DICTIONARIES to them to run this"
        )
    table = make_table({"nurses": ["Caring", "very kind", "hard-working", "smart.", "Nurses", " ", ""]})
    for key, path in paths.items():
        if not path:
            continue
        with pytest.warns(UserWarning, match="_dir values outside"):
            out = assoc.analyze("stereotype", table, dictionary=path, shape="wide")
        assert set(out["matching"]) == {"sadcat"} and len(out) == 1
        # 14,044 (Dictionaries) or 15,716 (All.steps) rows, every one read
        frame = sadcat.sadcat_dictionary(
            __import__("assoc.stats.dictionary", fromlist=["x"]).read_dictionary_frame(path), source=path
        )
        assert len(frame.protected) > 10000
        if key == "ASSOC_SADCAT_ALLSTEPS":
            # "kind" (in "very kind") and "caring" are SADCAT Warmth words: 2 of 6 responses at least
            assert out["warmth_representativeness"].iloc[0] >= 2 / 6
