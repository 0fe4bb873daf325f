"""The weat scorer and the weat/wefat analyses end to end on hand-made 2-D embeddings.

Vectors: a1 = (1, 0) (group A), b1 = (0, 1) (group B); targets x1 = (1, 0), x2 = (1, 1)
(group X) and y1 = (0, 1), y2 = (3, 4) (group Y). So s = cos(w, a1) - cos(w, b1) is
1, 0 for X and -1, -0.2 for Y (see tests/test_stats_weat.py for the arithmetic).
"""

import math
import warnings

import numpy as np
import pytest
from assoc_weat.scorer import OutOfVocabularyWarning

import assoc
from assoc.errors import DataError

VOCAB = {"a1": (1, 0), "b1": (0, 1), "x1": (1, 0), "x2": (1, 1), "y1": (0, 1), "y2": (3, 4), "extra": (5, 1)}
STIMULI = {"name": "toy", "target": {"X": ["x1", "x2"], "Y": ["y1", "y2"]}, "attribute": {"A": ["a1"], "B": ["b1"]}}


@pytest.fixture()
def model(tmp_path):
    np.save(tmp_path / "toy.npy", np.array(list(VOCAB.values()), dtype=np.float32))
    (tmp_path / "toy.txt").write_text("\n".join(VOCAB), encoding="utf-8")
    return str(tmp_path / "toy.npy")


def test_table_holds_cosines(model):
    table = assoc.score("weat", STIMULI, [model])
    assert "Caliskan" in str(table.assoc.cite())
    # provenance identifies the embedding by the sha256 of its files (matrix, then vocabulary)
    import hashlib
    from pathlib import Path

    digests = ["sha256:" + hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in (model, model[:-4] + ".txt")]
    assert table.assoc.provenance["model_fingerprints"] == {model: "+".join(digests)}
    assert len(table) == 8 and set(table["measure"]) == {"cosine"}
    row = table[(table["target"] == "y2") & (table["attribute"] == "b1")].iloc[0]
    assert row["value"] == pytest.approx(0.8)
    assert (row["target_group"], row["attribute_group"], row["model"]) == ("Y", "B", model)


def test_weat_analysis_by_hand(model):
    table = assoc.score("weat", STIMULI, [model])
    result = assoc.analyze("weat", table).iloc[0]
    assert (result["x"], result["y"], result["a"], result["b"]) == ("X", "Y", "A", "B")
    assert result["statistic"] == pytest.approx(2.2)
    assert result["effect_size"] == pytest.approx(1.1 / math.sqrt(2.03 / 3))
    assert result["sd"] == "all" and result["ddof"] == 1
    assert result["p_value"] == pytest.approx(1 / 6) and result["p_method"] == "exact"
    population = assoc.analyze("weat", table, ddof=0).iloc[0]
    assert population["effect_size"] == pytest.approx(1.1 / math.sqrt(2.03 / 4))
    # the former spelling still works, with a deprecation warning naming the new one
    with pytest.warns(DeprecationWarning, match="ddof=0"):
        old = assoc.analyze("weat", table, sd="population").iloc[0]
    assert old["effect_size"] == population["effect_size"] and old["ddof"] == 0
    swapped = assoc.analyze("weat", table, x="Y", y="X", alternative="two-sided").iloc[0]
    assert swapped["effect_size"] == pytest.approx(-result["effect_size"])
    assert swapped["p_value"] == pytest.approx(2 / 6)


def test_table_round_trip_through_csv(model, tmp_path):
    table = assoc.score("weat", STIMULI, [model])
    assoc.write_table(table, tmp_path / "t.csv")
    result = assoc.analyze("weat", tmp_path / "t.csv").iloc[0]
    assert result["effect_size"] == pytest.approx(1.1 / math.sqrt(2.03 / 3))


def test_mask_groups_act_as_attributes(model):
    design = {
        "name": "fmat-style",
        "queries": ["[MASK] is {TARGET}."],
        "mask": {"A": ["a1"], "B": ["b1"]},
        "target": {"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    }
    table = assoc.score("weat", design, [model])
    assert set(table["attribute_group"]) == {"A", "B"}
    assert assoc.analyze("weat", table).iloc[0]["statistic"] == pytest.approx(2.2)


def test_out_of_vocabulary_words_are_listed_and_dropped(model):
    stimuli = {
        "target": {"X": ["x1", "x2", "zz1", "x1b", "x1c"], "Y": ["y1", "y2"]},
        "attribute": {"A": ["a1"], "B": ["b1"]},
    }
    with pytest.raises(DataError, match=r"'X' lost 3 of 5 words.*zz1, x1b, x1c"):
        assoc.score("weat", stimuli, [model])
    with pytest.warns(OutOfVocabularyWarning, match=r"target group 'X': 3/5 missing \(zz1, x1b, x1c\)"):
        table = assoc.score("weat", stimuli, [model], max_missing=0.6)
    assert table.loc[table["target"] == "zz1", "value"].isna().all()
    result = assoc.analyze("weat", table).iloc[0]
    assert result["n_x"] == 2 and result["statistic"] == pytest.approx(2.2)
    assert result["dropped"] == "X:zz1, X:x1b, X:x1c"


def test_more_than_two_groups_need_names(model):
    stimuli = {
        "target": {"X": ["x1", "x2"], "Y": ["y1", "y2"], "Z": ["extra"]},
        "attribute": {"A": ["a1"], "B": ["b1"]},
    }
    table = assoc.score("weat", stimuli, [model])
    with pytest.raises(DataError, match="3 target groups"):
        assoc.analyze("weat", table)
    assert assoc.analyze("weat", table, x="X", y="Y").iloc[0]["statistic"] == pytest.approx(2.2)


def test_weat_on_any_association_table():
    # A log-probability table with two contexts: values are averaged over contexts per pair.
    rows = []
    s = {"x1": 1.0, "x2": 0.0, "y1": -1.0, "y2": -0.2}
    for target, value in s.items():
        for context, shift in (("q1", 0.3), ("q2", -0.3)):
            rows.append(
                {
                    "model": "m",
                    "context": context,
                    "target_group": target[0].upper(),
                    "target": target,
                    "attribute_group": "A",
                    "attribute": "he",
                    "value": value + shift,
                }
            )
            rows.append(
                {
                    "model": "m",
                    "context": context,
                    "target_group": target[0].upper(),
                    "target": target,
                    "attribute_group": "B",
                    "attribute": "she",
                    "value": 0.0 + shift,
                }
            )
    table = assoc.table.from_records(rows, scorer="fmat", measure="log_prob")
    result = assoc.analyze("weat", table).iloc[0]
    assert result["effect_size"] == pytest.approx(1.1 / math.sqrt(2.03 / 3))
    per_context = assoc.analyze("weat", table, by=["model", "context"])
    assert len(per_context) == 2
    assert per_context["effect_size"].tolist() == pytest.approx([1.1 / math.sqrt(2.03 / 3)] * 2)


def test_wefat_analysis(model):
    stimuli = {"target": {"T": ["x2", "y2"]}, "attribute": {"A": ["a1", "x2"], "B": ["b1", "y1"]}}
    table = assoc.score("weat", stimuli, [model])
    result = assoc.analyze("wefat", table).set_index("target")
    # x2 = (1,1): cos with A = [1/√2, 1], with B = [1/√2, 1/√2]
    r = 1 / math.sqrt(2)
    values = np.array([r, 1.0, r, r])
    expected = (values[:2].mean() - values[2:].mean()) / values.std(ddof=1)
    assert result.loc["x2", "effect_size"] == pytest.approx(expected)
    assert result.loc["x2", "p_method"] == "exact"


def test_phrase_option(model):
    stimuli = {"target": {"X": ["x1", "x2"], "Y": ["y1", "y1 y2"]}, "attribute": {"A": ["a1"], "B": ["b1"]}}
    with pytest.raises(DataError, match="phrase"):
        assoc.score("weat", stimuli, [model])
    table = assoc.score("weat", stimuli, [model], phrases="average")
    row = table[(table["target"] == "y1 y2") & (table["attribute"] == "a1")].iloc[0]
    # mean of (0,1) and (3,4) = (1.5, 2.5): cos with (1,0) = 1.5 / sqrt(1.5² + 2.5²)
    assert row["value"] == pytest.approx(1.5 / math.hypot(1.5, 2.5))
    assert row["target_token"] == "y1+y2"


def test_design_without_attributes_is_rejected(model):
    from assoc.errors import StimuliError

    with pytest.raises(StimuliError, match="needs target and attribute groups"):
        assoc.score("weat", {"target": {"X": ["x1"], "Y": ["y1"]}}, [model])


def test_cli_errors_are_one_line(model):
    from click.testing import CliRunner

    from assoc.cli import build_cli

    runner = CliRunner()
    result = runner.invoke(build_cli(), ["weat", "caliskan", "--model", model + ".missing"])
    assert result.exit_code == 2 and "neither a registered name" in result.output
    listing = runner.invoke(build_cli(), ["weat", "embeddings"])
    assert listing.exit_code == 0 and listing.output.startswith("glove-6b-50d: GloVe 6B 50d")


@pytest.mark.parametrize("bad, problem", [((0.0, 0.0), "all zeros"), ((float("nan"), 1.0), "NaN or infinite")])
def test_vectors_without_direction_are_an_error(tmp_path, bad, problem):
    vocab = {**VOCAB, "x2": bad}
    np.save(tmp_path / "bad.npy", np.array(list(vocab.values()), dtype=np.float32))
    (tmp_path / "bad.txt").write_text("\n".join(vocab), encoding="utf-8")
    with pytest.raises(DataError, match=rf"target group 'X': 'x2' \(entry 'x2': {problem}"):
        assoc.score("weat", STIMULI, [str(tmp_path / "bad.npy")])


def test_limit_option_is_checked(model):
    from assoc.errors import OptionError

    with pytest.raises(OptionError, match="limit"):
        assoc.score("weat", STIMULI, [model], limit=0)


def test_wefat_default_is_one_sided(model):
    # x2 = (1, 1) against A = {a1, x2}, B = {b1, y1}: cosines A = [r, 1], B = [r, r] with r = 1/√2.
    # Partitions of {r, 1, r', r''} into 2 + 2: the three putting 1 in A give mean difference (1 - r)/2 = observed;
    # the other three give -(1 - r)/2. One-sided p = 3/6, two-sided 1.
    stimuli = {"target": {"T": ["x2"]}, "attribute": {"A": ["a1", "x2"], "B": ["b1", "y1"]}}
    table = assoc.score("weat", stimuli, [model])
    result = assoc.analyze("wefat", table).iloc[0]
    assert result["alternative"] == "greater"
    assert result["p_value"] == pytest.approx(3 / 6) and result["n_permutations"] == 6
    assert assoc.analyze("wefat", table, alternative="two-sided").iloc[0]["p_value"] == pytest.approx(1.0)


def test_valnorm_needs_four_words(model, tmp_path):
    # Three words have norms; x2 = (1, 1) is equally close to a1 and b1 (SD 0): its WEFAT score is undefined.
    (tmp_path / "norms.csv").write_text("word,valence\nx1,8\nx2,6\ny1,2\n", encoding="utf-8")
    table = assoc.score(
        "weat", {"target": {"T": ["x1", "x2", "y1", "y2"]}, "attribute": {"A": ["a1"], "B": ["b1"]}}, [model]
    )
    with pytest.raises(DataError, match=r"only 2 target words .* \(3 have norms, 1 of them an undefined score"):
        assoc.analyze("valnorm", table, norms=str(tmp_path / "norms.csv"))


def test_negative_seed_is_a_one_line_error(model, tmp_path):
    # It used to end in a numpy traceback: "ValueError: expected non-negative integer".
    from click.testing import CliRunner

    from assoc.cli import build_cli
    from assoc.errors import OptionError

    table = assoc.score("weat", STIMULI, [model])
    for name in ("weat", "wefat"):
        with pytest.raises(OptionError, match="seed"):
            assoc.analyze(name, table, seed=-1)
    result = CliRunner().invoke(build_cli(), ["weat", "caliskan", "--tests", "weat6", "--seed", "-1"])
    assert result.exit_code == 2 and result.output.startswith("error: ") and "seed" in result.output


def test_cli_caliskan_out_records_sd_seed_and_provenance(tmp_path):
    # `assoc weat caliskan --sd population --out t.csv` used to write d and p with neither the SD nor the
    # seed in the file, and no provenance sidecar: the file could not tell how d was computed.
    import json

    import pandas as pd
    from click.testing import CliRunner

    from assoc.cli import build_cli

    out = tmp_path / "caliskan.csv"
    result = CliRunner().invoke(
        build_cli(), ["weat", "caliskan", "--tests", "weat6", "--sd", "population", "--seed", "3", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert frame.loc[0, "sd"] == "population" and frame.loc[0, "model"] == "glove-6b-50d"
    assert frame.loc[0, "alternative"] == "greater"
    provenance = json.loads((tmp_path / "caliskan.csv.provenance.json").read_text())
    assert provenance["options"]["ddof"] == 0 and provenance["options"]["seed"] == 3


def test_valnorm_lowercase_matching_refuses_norms_that_collide(model, tmp_path):
    (tmp_path / "norms.csv").write_text("word,valence\nX1,8\nx1,2\nx2,6\ny1,2\ny2,1\n", encoding="utf-8")
    table = assoc.score(
        "weat", {"target": {"T": ["x1", "x2", "y1", "y2"]}, "attribute": {"A": ["a1"], "B": ["b1"]}}, [model]
    )
    with pytest.raises(DataError, match=r"1 word\(s\) differ only in case \('X1' / 'x1'\)"):
        assoc.analyze("valnorm", table, norms=str(tmp_path / "norms.csv"), case="lower")


def test_weat_on_a_log_prob_table_says_what_it_means(model):
    # issue 37: analyze weat on an fmat table ran silently; it now warns what s(w, A, B) and d are there
    from assoc_weat.analyses import NotACosineWarning

    rows = [
        {
            "model": "m",
            "context": context,
            "target_group": target[0].upper(),
            "target": target,
            "attribute_group": group,
            "attribute": word,
            "value": value,
        }
        for context in ("q1", "q2")
        for target, value in {"x1": -1.0, "x2": -1.5, "y1": -3.0, "y2": -2.5}.items()
        for group, word in (("A", "he"), ("B", "she"))
        for value in [value if group == "A" else -2.0]
    ]
    table = assoc.table.from_records(rows, scorer="fmat", measure="log_prob")
    with pytest.warns(NotACosineWarning) as record:
        result = assoc.analyze("weat", table).iloc[0]
    (message,) = [str(w.message) for w in record]
    assert "measure 'log_prob' (scorer fmat)" in message and "mean log-probability ratio" in message
    assert "mean over the 2 contexts" in message and "lpr" in message
    # the numbers are those of the values read as similarities: s = (1, 0.5, -1, -0.5), d = 1.5 / SD
    s = np.array([1.0, 0.5, -1.0, -0.5])
    assert result["effect_size"] == pytest.approx((0.75 - -0.75) / s.std(ddof=1))
    with pytest.warns(NotACosineWarning) as record:
        assoc.analyze("weat", table, by=["model", "context"])
    assert "contexts" not in str(record[0].message)
    # cosines (the weat scorer's own table) read as they are: no warning
    cosines = assoc.score("weat", STIMULI, [model])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotACosineWarning)
        assoc.analyze("weat", cosines)
