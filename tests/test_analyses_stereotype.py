"""The stereotype analysis (dictionary coding, Nicolas & Caliskan 2024) against hand-computed numbers."""

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import assoc
from assoc.errors import DataError, OptionError, TableError
from assoc.stats.dictionary import aggregate, load_dictionary, normalize_word
from assoc.table.files import read_table, write_table
from assoc.table.schema import normalise, validate_table

DICTIONARY = pd.DataFrame(
    [
        ("sociable", "Warmth", "1"),
        ("moral", "Warmth", "1"),
        ("unfriendly", "Warmth", "-1"),
        ("cold", "Warmth", "-0.5"),
        ("quiet", "Warmth", ""),  # in the Warmth dictionary without a direction
        ("trustworthy", "Warmth", "1"),
        ("trustworthy", "Competence", "0.5"),  # in both dictionaries
        ("smart", "Competence", "1"),
        ("unintelligent", "Competence", "-1"),
        ("hard-working", "Competence", "1"),
    ],
    columns=["word", "dimension", "direction"],
)

RESPONSES = {
    "nurse": ["Sociable", "caring", "trustworthy", "Hard-working", "quiet", "sociable", "", "cold"],
    "pilot": ["unintelligent", "smart", "brave", "unfriendly"],
    "clerk": ["boring", "tidy"],
}


def make_table(responses=RESPONSES, model="gpt"):
    rows = [
        {
            "scorer": "chat_listing",
            "model": model,
            "context": "List 50 characteristics of [target].",
            "target_group": "occupation",
            "target": term,
            "attribute": word,
            "measure": "listed",
            "value": float(rank),
        }
        for term, words in responses.items()
        for rank, word in enumerate(words, 1)
    ]
    return normalise(pd.DataFrame(rows))


def estimates(result):
    return result.set_index(["target", "attribute_group", "measure"])["value"]


def test_paper_examples_are_coded_as_printed():
    # shared/stimuli/nicolas2024_stereotypes.yaml, dictionary_coding.examples
    dictionary = {
        "Warmth": {"sociable": 1, "moral": 1, "unfriendly": -1},
        "Competence": {"smart": 1, "unintelligent": -1},
    }
    table = make_table({"t": ["sociable", "moral", "unfriendly", "smart", "unintelligent"]})
    coded = assoc.analyze("stereotype", table, dictionary=dictionary, level="response")
    expected = {  # word: warmth_repr, competence_repr, warmth_dir, competence_dir
        "sociable": (1, 0, 1, None),
        "moral": (1, 0, 1, None),
        "unfriendly": (1, 0, -1, None),
        "smart": (0, 1, None, 1),
        "unintelligent": (0, 1, None, -1),
    }
    for _, row in coded.iterrows():
        wr, cr, wd, cd = expected[row["attribute"]]
        assert (row["warmth_representativeness"], row["competence_representativeness"]) == (wr, cr)
        for got, want in ((row["warmth_direction"], wd), (row["competence_direction"], cd)):
            assert math.isnan(got) if want is None else got == want
    validate_table(coded)


def test_term_estimates_by_hand():
    # a long dictionary is matched exactly by default; repeats removed after normalising on request
    result = assoc.analyze("stereotype", make_table(), dictionary=DICTIONARY, deduplicate="normalized")
    validate_table(result)  # again an association table
    est = estimates(result)
    # nurse: "" is empty and the second "sociable" a repeat -> 6 responses:
    # sociable (W 1), caring, trustworthy (W 1, C 0.5), hard working (C 1), quiet (W, no direction), cold (W -0.5)
    assert est["nurse", "Warmth", "representativeness"] == pytest.approx(4 / 6, abs=1e-15)
    assert est["nurse", "Warmth", "direction"] == pytest.approx((1 + 1 - 0.5) / 3, abs=1e-15)
    assert est["nurse", "Competence", "representativeness"] == pytest.approx(2 / 6, abs=1e-15)
    assert est["nurse", "Competence", "direction"] == pytest.approx((0.5 + 1) / 2, abs=1e-15)
    # pilot: unintelligent (C -1), smart (C 1), brave, unfriendly (W -1)
    assert est["pilot", "Warmth", "representativeness"] == 0.25 and est["pilot", "Warmth", "direction"] == -1
    assert est["pilot", "Competence", "representativeness"] == 0.5 and est["pilot", "Competence", "direction"] == 0
    # clerk: nothing in either dictionary: representativeness 0, direction NA
    assert est["clerk", "Warmth", "representativeness"] == 0 and math.isnan(est["clerk", "Warmth", "direction"])
    nurse = result[(result.target == "nurse") & (result.attribute_group == "Warmth")].iloc[0]
    assert (
        nurse["n_rows"],
        nurse["n_empty"],
        nurse["n_duplicates_removed"],
        nurse["n_responses"],
        nurse["n_in_dictionary"],
        nurse["n_with_direction"],
    ) == (8, 1, 1, 6, 4, 3)
    assert set(result["measure"]) == {"representativeness", "direction"}
    assert len(result) == 3 * 2 * 2 and set(result["scorer"]) == {"chat_listing"}
    assert set(result["word_column"]) == {"attribute"} and set(result["source_measure"]) == {"listed"}


def test_without_deduplication_or_normalisation_by_hand():
    est = estimates(assoc.analyze("stereotype", make_table(), dictionary=DICTIONARY, deduplicate=False))
    # nurse: 7 responses (sociable twice): Warmth 5/7, direction mean(1, 1, 1, -0.5)
    assert est["nurse", "Warmth", "representativeness"] == pytest.approx(5 / 7, abs=1e-15)
    assert est["nurse", "Warmth", "direction"] == pytest.approx(2.5 / 4, abs=1e-15)
    assert est["nurse", "Competence", "representativeness"] == pytest.approx(2 / 7, abs=1e-15)
    raw = estimates(assoc.analyze("stereotype", make_table(), dictionary=DICTIONARY, normalize=False))
    # case kept: "Sociable" and "Hard-working" miss; "Sociable" and "sociable" are different responses
    assert raw["nurse", "Warmth", "representativeness"] == pytest.approx(4 / 7, abs=1e-15)
    assert raw["nurse", "Warmth", "direction"] == pytest.approx(1.5 / 3, abs=1e-15)
    assert raw["nurse", "Competence", "representativeness"] == pytest.approx(1 / 7, abs=1e-15)
    assert raw["nurse", "Competence", "direction"] == 0.5


def test_wide_dictionary_and_mapping_give_the_same_codes():
    wide = pd.DataFrame(
        {
            "word": [
                "sociable",
                "moral",
                "unfriendly",
                "cold",
                "quiet",
                "trustworthy",
                "smart",
                "unintelligent",
                "hard-working",
                "lazy",
            ],
            "Warmth_dict": [1, 1, 1, 1, 1, 1, 0, 0, 0, 0],
            "Warmth_dir": [1, 1, -1, -0.5, None, 1, None, None, None, None],
            "Competence_dict": [0, 0, 0, 0, 0, 1, 1, 1, 1, 0],
            "Competence_dir": [None, None, None, None, None, 0.5, 1, -1, 1, -1],  # lazy: not in the dictionary
        }
    )
    mapping = {
        "Warmth": {"sociable": 1, "moral": 1, "unfriendly": -1, "cold": -0.5, "quiet": None, "trustworthy": 1},
        "Competence": {"trustworthy": 0.5, "smart": 1, "unintelligent": -1, "hard-working": 1},
    }
    reference = assoc.analyze("stereotype", make_table(), dictionary=DICTIONARY)
    for source in (wide, mapping):
        other = assoc.analyze("stereotype", make_table(), dictionary=source)
        pd.testing.assert_series_equal(estimates(other), estimates(reference))


def test_wide_output_dimension_choice_and_by():
    table = pd.concat([make_table(), make_table(model="llama")], ignore_index=True)
    wide = assoc.analyze(
        "stereotype", table, dictionary=DICTIONARY, shape="wide", dimensions=["Competence"], deduplicate=True
    )
    assert list(wide["model"]) == ["gpt"] * 3 + ["llama"] * 3
    assert not any(c.startswith("warmth_") for c in wide.columns)
    nurse = wide[(wide.model == "gpt") & (wide.target == "nurse")].iloc[0]
    assert nurse["competence_representativeness"] == pytest.approx(1 / 3, abs=1e-15)
    assert nurse["competence_direction"] == 0.75 and nurse["n_responses"] == 6
    # one term per category (target_group), pooling its terms' responses
    pooled = estimates(
        assoc.analyze(
            "stereotype", make_table(), dictionary=DICTIONARY, by=["model", "target_group"], deduplicate=True
        ).assign(target="all")
    )
    # 6 + 4 + 2 = 12 responses; Warmth words: 4 (nurse) + 1 (pilot)
    assert pooled["all", "Warmth", "representativeness"] == pytest.approx(5 / 12, abs=1e-15)
    assert pooled["all", "Warmth", "direction"] == pytest.approx((1 + 1 - 0.5 - 1) / 4, abs=1e-15)


def test_aggregate_and_normalize_word():
    res = aggregate(np.array([1.0, 0.0, 1.0, 1.0]), np.array([0.5, np.nan, np.nan, -1.0]))
    assert (res.representativeness, res.direction, res.n_responses, res.n_in_dictionary, res.n_with_direction) == (
        0.75,
        -0.25,
        4,
        3,
        2,
    )
    assert normalize_word("  Hard\u2013Working  people ") == "hard working people"
    assert normalize_word(" Hard-Working ", normalize=False) == "Hard-Working"


def test_output_round_trips_and_feeds_other_analyses(tmp_path):
    result = assoc.analyze("stereotype", make_table(), dictionary=DICTIONARY)
    back = read_table(write_table(result, tmp_path / "coded.csv"))
    pd.testing.assert_series_equal(estimates(back), estimates(result))
    assert back.attrs["assoc"]["analysis"] == "stereotype"
    z = assoc.analyze("standardize", result.dropna(subset=["value"]), within=["measure", "attribute_group"])
    assert set(z["measure"]) == {"representativeness_z", "direction_z"}


def test_bad_input_is_named():
    table = make_table()
    with pytest.raises(OptionError, match="option 'dictionary' .* required"):
        assoc.analyze("stereotype", table)
    with pytest.raises(OptionError, match="file not found"):
        assoc.analyze("stereotype", table, dictionary="nope.csv")
    with pytest.raises(DataError, match="outside \\[-1, 1\\]"):
        assoc.analyze("stereotype", table, dictionary={"Warmth": {"kind": 2}})
    with pytest.raises(DataError, match="twice on 'Warmth' with different directions"):
        assoc.analyze("stereotype", table, dictionary={"Warmth": {"Kind": 1, "kind": -1}})
    with pytest.raises(DataError, match="no dimension 'Morality'"):
        assoc.analyze("stereotype", table, dictionary=DICTIONARY, dimensions=["Morality"])
    with pytest.raises(DataError, match="no word column 'term'"):
        assoc.analyze("stereotype", table, dictionary=DICTIONARY, dictionary_word="term")
    with pytest.raises(DataError, match="long table .* or a wide one"):
        assoc.analyze("stereotype", table, dictionary=pd.DataFrame({"word": ["a"], "warmth": [1]}))
    with pytest.raises(DataError, match="'Warmth_dict' must hold 0 or 1"):
        assoc.analyze("stereotype", table, dictionary=pd.DataFrame({"word": ["a"], "Warmth_dict": [2]}))
    with pytest.raises(TableError, match="no column\\(s\\) 'response'"):
        assoc.analyze("stereotype", table, dictionary=DICTIONARY, word="response")
    with pytest.raises(DataError, match="several measures"):
        assoc.analyze("stereotype", pd.concat([table, table.assign(measure="rank")]), dictionary=DICTIONARY)
    with pytest.raises(DataError, match="cannot identify a term"):
        assoc.analyze("stereotype", table, dictionary=DICTIONARY, by=["target", "measure"])
    with pytest.raises(DataError, match="no non-empty response"):
        assoc.analyze("stereotype", make_table({"x": ["", " "]}), dictionary=DICTIONARY)


def test_dictionary_file_formats(tmp_path):
    DICTIONARY.to_csv(tmp_path / "d.csv", index=False)
    DICTIONARY.to_csv(tmp_path / "d.tsv", index=False, sep="\t")
    a, b = load_dictionary(tmp_path / "d.csv"), load_dictionary(tmp_path / "d.tsv")
    assert a.entries["Competence"] == {"trustworthy": 0.5, "smart": 1.0, "unintelligent": -1.0, "hard working": 1.0}
    assert math.isnan(a.entries["Warmth"]["quiet"])
    assert a.entries.keys() == b.entries.keys() and a.entries["Competence"] == b.entries["Competence"]
    pd.DataFrame({"word": ["NA"], "dimension": ["Warmth"], "direction": ["1"]}).to_csv(tmp_path / "na.csv", index=False)
    assert load_dictionary(tmp_path / "na.csv").entries == {"Warmth": {"na": 1.0}}  # a word, not a missing value


def test_from_the_command_line(tmp_path):
    from assoc.cli import build_cli

    write_table(make_table(), tmp_path / "listings.csv")
    DICTIONARY.to_csv(tmp_path / "sadcat.csv", index=False)
    out = tmp_path / "coded.parquet"
    result = CliRunner().invoke(
        build_cli(),
        [
            "analyze",
            "stereotype",
            "--table",
            str(tmp_path / "listings.csv"),
            "-o",
            f"dictionary={tmp_path / 'sadcat.csv'}",
            "-o",
            "deduplicate=normalized",
            "--out",
            str(out),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    est = estimates(read_table(out))
    assert est["nurse", "Warmth", "representativeness"] == pytest.approx(4 / 6, abs=1e-15)


def test_repeated_dictionary_entries_are_counted_once_and_reported():
    repeated = pd.concat([DICTIONARY, DICTIONARY.iloc[[0]]], ignore_index=True)  # 'sociable' twice on Warmth
    with pytest.warns(UserWarning, match="1 entr.*counted once: 'sociable' listed more than once"):
        twice = assoc.analyze("stereotype", make_table(), dictionary=repeated)
    once = assoc.analyze("stereotype", make_table(), dictionary=DICTIONARY)
    assert twice["value"].tolist() == pytest.approx(once["value"].tolist(), nan_ok=True)


def test_long_dictionary_file_with_a_word_column_that_is_no_identifier(tmp_path):
    path = tmp_path / "dictionary.csv"
    DICTIONARY.rename(columns={"word": "my word"}).to_csv(path, index=False)
    result = assoc.analyze("stereotype", make_table(), dictionary=str(path), dictionary_word="my word")
    expected = assoc.analyze("stereotype", make_table(), dictionary=DICTIONARY)
    assert result["value"].tolist() == pytest.approx(expected["value"].tolist(), nan_ok=True)


def test_a_nan_response_is_missing_not_an_error():
    table = make_table({"nurse": ["sociable", "x", "cold"]})
    table.loc[table["attribute"] == "x", "attribute"] = np.nan
    est = assoc.analyze("stereotype", table, dictionary=DICTIONARY, shape="wide").iloc[0]
    # sociable (W 1) and cold (W -0.5); the NaN response is missing, not coded 0
    assert est["n_responses"] == 2 and est["n_empty"] == 1
    assert est["warmth_representativeness"] == 1 and est["warmth_direction"] == pytest.approx(0.25, abs=1e-15)


def test_deduplicate_options_by_hand():
    table = make_table({"t": ["Teachers", "teacher", "teachers ", "smart"]})
    dictionary = {"Competence": {"smart": 1, "teacher": 0.5}}
    counts = {
        mode: assoc.analyze("stereotype", table, dictionary=dictionary, shape="wide", deduplicate=mode).iloc[0]
        for mode in ("none", "response", "normalized")
    }
    # none: 4 responses; response: "Teachers" and "teachers " are one (lowercased, trimmed): 3;
    # normalized: all three singularise to "teacher": 2
    assert [counts[m]["n_responses"] for m in ("none", "response", "normalized")] == [4, 3, 2]
    assert counts["normalized"]["competence_direction"] == pytest.approx(0.75, abs=1e-15)
    with pytest.raises(OptionError, match="one of 'none', 'response', 'normalized'"):
        assoc.analyze("stereotype", table, dictionary=dictionary, deduplicate="sometimes")
