"""The three scorers on the real all-MiniLM-L6-v2, checked against by-hand numpy computations."""

import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.errors import DataError, ModelError, OptionError, StimuliError
from assoc.infra.cache import CacheWarning
from assoc.stimuli import Stimuli
from assoc.testing.conformance import check_scorer

from .conftest import SMALL_VOCABULARY

MODEL = "all-MiniLM-L6-v2"
TERMS = {"target": {"jobs": ["nurse", "doctor"], "age": ["teenagers"]}}


def embed(model, texts):
    vectors = model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
    return np.asarray(vectors, dtype=np.float32)


def brute_force_top(model, term, vocabulary, k, ceiling):
    """The obvious implementation: every cosine, full stable sort, drop > ceiling and the term, slice."""
    v = embed(model, vocabulary).astype(np.float64)
    t = embed(model, [term]).astype(np.float64)[0]
    cos = v @ t / (np.linalg.norm(v, axis=1) * np.linalg.norm(t))
    order = np.argsort(-cos, kind="stable")
    kept = [i for i in order if (ceiling is None or cos[i] <= ceiling) and vocabulary[i].casefold() != term.casefold()]
    return [vocabulary[i] for i in kept[:k]], cos[kept[:k]], int((cos > ceiling).sum()) if ceiling else 0


@pytest.mark.slow
def test_top_words_match_brute_force(minilm, cache_dir):
    table = assoc.score("sbert_topwords", TERMS, [MODEL], vocabulary=SMALL_VOCABULARY, top_k=10, progress=False)
    assert set(table["attribute_group"]) == {"top_words"} and set(table["measure"]) == {"cosine"}
    assert "Nicolas, G., & Caliskan, A. (2024)" in str(table.assoc.cite())
    for term in ["nurse", "doctor", "teenagers"]:
        rows = table[table["target"] == term].sort_values("rank")
        words, cosines, n_above = brute_force_top(minilm, term, SMALL_VOCABULARY, 10, 0.7)
        assert rows["attribute"].tolist() == words
        assert rows["rank"].tolist() == list(range(1, 11))
        np.testing.assert_allclose(rows["value"].to_numpy(), cosines, atol=1e-6)
        assert (rows["n_above_ceiling"] == n_above).all()
        assert (rows["value"] <= 0.7).all()
        assert not rows["attribute"].str.casefold().eq(term.casefold()).any()
    nurse = table[table["target"] == "nurse"]
    # nurse/Nurse/NURSE are identical for an uncased model: cosine 1, so the ceiling removes them first
    assert nurse["n_above_ceiling"].iloc[0] >= 3 and nurse["n_term_removed"].iloc[0] == 0


@pytest.mark.slow
def test_term_removed_without_ceiling(cache_dir):
    table = assoc.score(
        "sbert_topwords",
        {"target": {"jobs": ["nurse"]}},
        [MODEL],
        vocabulary=SMALL_VOCABULARY,
        top_k=5,
        ceiling=1,
        progress=False,
    )
    assert not table["attribute"].isin(["nurse", "Nurse", "NURSE"]).any()
    assert (table["n_term_removed"] == 3).all() and (table["n_above_ceiling"] == 0).all()
    exact = assoc.score(
        "sbert_topwords",
        {"target": {"jobs": ["nurse"]}},
        [MODEL],
        vocabulary=SMALL_VOCABULARY,
        top_k=5,
        ceiling=1,
        term_match="exact",
        progress=False,
    )
    assert (exact["n_term_removed"] == 1).all()
    assert exact["attribute"].iloc[0] in {"Nurse", "NURSE"}  # identical vectors under an uncased model


@pytest.mark.slow
def test_vocabulary_embedded_once_and_corruption_recomputed(cache_dir, monkeypatch):
    from assoc_sbert_topwords.encoding import SentenceEncoder

    calls = []
    original = SentenceEncoder.encode

    def counting(self, texts, **kwargs):
        calls.append(len(texts))
        return original(self, texts, **kwargs)

    monkeypatch.setattr(SentenceEncoder, "encode", counting)

    def nurse_rows(terms):
        table = assoc.score(
            "sbert_topwords", {"target": {"t": terms}}, [MODEL], vocabulary=SMALL_VOCABULARY, top_k=5, progress=False
        )
        return table.loc[table["target"] == "nurse", ["attribute", "value", "rank"]].reset_index(drop=True)

    first = nurse_rows(["nurse", "doctor"])
    assert len(SMALL_VOCABULARY) in calls
    calls.clear()
    # another study over the same vocabulary: only its terms are embedded
    second = nurse_rows(["nurse", "engineer", "teenagers"])
    assert calls == [3], "the second study must embed only its 3 terms, not the vocabulary"
    pd.testing.assert_frame_equal(first, second)
    calls.clear()
    # the same study again: every unit comes from the unit cache, nothing is embedded
    nurse_rows(["nurse", "engineer", "teenagers"])
    assert calls == []
    # corrupt the stored embeddings: detected, deleted, recomputed; the result is unchanged
    (data_file,) = (cache_dir / "arrays").glob("*.npy")
    blob = bytearray(data_file.read_bytes())
    blob[-8:] = b"\x00" * 8
    data_file.write_bytes(bytes(blob))
    calls.clear()
    with pytest.warns(CacheWarning, match="corrupt"):
        third = nurse_rows(["nurse", "musician"])
    assert len(SMALL_VOCABULARY) in calls
    pd.testing.assert_frame_equal(first, third)
    # a different template is a different cache entry
    calls.clear()
    assoc.score(
        "sbert_topwords", TERMS, [MODEL], vocabulary=SMALL_VOCABULARY, top_k=5, template="A {word}.", progress=False
    )
    assert len(SMALL_VOCABULARY) in calls


SEAT = {
    "name": "seat",
    "target": {"Flowers": ["rose", "tulip", "daisy"], "Insects": ["ant", "wasp", "flea"]},
    "attribute": {"Pleasant": ["love", "peace", "joy"], "Unpleasant": ["hatred", "war", "agony"]},
}


def test_seat_mode_is_a_weat_table_and_weat_matches_by_hand(minilm, cache_dir):
    table = assoc.score("sbert_cosine", SEAT, [MODEL], template="This is {word}.", progress=False)
    assert len(table) == 36 and set(table["context"]) == {"This is {word}."}
    assert "May, C., Wang, A." in str(table.assoc.cite())
    texts = {w: f"This is {w}." for group in (*SEAT["target"].values(), *SEAT["attribute"].values()) for w in group}
    vectors = {w: v.astype(np.float64) for w, v in zip(texts, embed(minilm, list(texts.values())))}

    def cos(a, b):
        return vectors[a] @ vectors[b] / (np.linalg.norm(vectors[a]) * np.linalg.norm(vectors[b]))

    for row in table.itertuples():
        assert row.value == pytest.approx(cos(row.target, row.attribute), abs=1e-6)
    s = {
        w: np.mean([cos(w, a) for a in SEAT["attribute"]["Pleasant"]])
        - np.mean([cos(w, b) for b in SEAT["attribute"]["Unpleasant"]])
        for group in SEAT["target"].values()
        for w in group
    }
    sx = [s[w] for w in SEAT["target"]["Flowers"]]
    sy = [s[w] for w in SEAT["target"]["Insects"]]
    d = (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)
    result = assoc.analyze("weat", table)
    assert result["effect_size"].iloc[0] == pytest.approx(d, abs=1e-5)
    assert result["statistic"].iloc[0] == pytest.approx(sum(sx) - sum(sy), abs=1e-5)
    wefat = assoc.analyze("wefat", table)
    assert len(wefat) == 6


@pytest.mark.slow
def test_valence_by_hand(minilm, cache_dir):
    from assoc.stimuli import Stimuli

    weat1 = Stimuli.load("caliskan:weat1").designs[0]
    table = assoc.score("sbert_valence", TERMS, [MODEL], progress=False)
    assert set(table["measure"]) == {"valence"} and (table["n_positive"] == 25).all()
    assert "Nicolas, G., & Caliskan, A. (2024)" in str(table.assoc.cite())
    positive = embed(minilm, weat1.attribute["Pleasant"]).astype(np.float64)
    negative = embed(minilm, weat1.attribute["Unpleasant"]).astype(np.float64)
    vector = positive.mean(axis=0) - negative.mean(axis=0)
    for row in table.itertuples():
        t = embed(minilm, [row.target])[0].astype(np.float64)
        assert row.value == pytest.approx(t @ vector / (np.linalg.norm(t) * np.linalg.norm(vector)), abs=1e-6)
    custom = assoc.score("sbert_valence", TERMS, [MODEL], positive=["good", "kind"], negative=["bad"], progress=False)
    assert (custom["valence_words"] == "user-given").all()
    with pytest.raises(OptionError, match="both positive and negative"):
        assoc.score("sbert_valence", TERMS, [MODEL], positive=["good"], progress=False)


@pytest.mark.parametrize(
    "name, options, rows",
    [
        ("sbert_topwords", {"vocabulary": SMALL_VOCABULARY, "top_k": 4}, 12),
        ("sbert_valence", {"positive": ["good"], "negative": ["bad"]}, 3),
    ],
)
def test_conformance_terms(name, options, rows, cache_dir):
    check_scorer(name, TERMS, [MODEL], options, expect_rows=rows)


def test_conformance_seat(cache_dir):
    check_scorer("sbert_cosine", SEAT, [MODEL], expect_rows=36)


def test_bad_input_errors(tmp_path, cache_dir):
    with pytest.raises(DataError, match="vocabulary is empty"):
        assoc.score("sbert_topwords", TERMS, [MODEL], vocabulary=[], progress=False)
    with pytest.raises(DataError, match="vocabulary is empty"):
        assoc.score("sbert_topwords", TERMS, [MODEL], vocabulary=["  ", ""], progress=False)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="vocabulary is empty"):
        assoc.score("sbert_topwords", TERMS, [MODEL], vocabulary=str(empty), progress=False)
    with pytest.raises(DataError, match="does not exist"):
        assoc.score("sbert_topwords", TERMS, [MODEL], vocabulary=str(tmp_path / "missing.txt"), progress=False)
    with pytest.raises(OptionError, match="top_k"):
        assoc.score("sbert_topwords", TERMS, [MODEL], top_k=0, progress=False)
    for ceiling in (1.5, -1.0, -2.0):
        with pytest.raises(OptionError, match=r"ceiling.*\(-1, 1\]"):
            assoc.score("sbert_topwords", TERMS, [MODEL], ceiling=ceiling, progress=False)
    plain = tmp_path / "plain-model"
    plain.mkdir()
    (plain / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="not a sentence-transformers model"):
        assoc.score("sbert_topwords", TERMS, [str(plain)], vocabulary=SMALL_VOCABULARY, progress=False)
    with pytest.raises(StimuliError, match="needs target and attribute groups"):
        assoc.score("sbert_cosine", TERMS, [MODEL], progress=False)
    with pytest.raises(OptionError, match="template"):
        assoc.score("sbert_cosine", SEAT, [MODEL], template="no placeholder", progress=False)


@pytest.mark.slow
def test_cli_score_then_stereotype(tmp_path, cache_dir):
    """The done-when commands: score the bundled nicolas2024 terms, then code them with `stereotype` unchanged."""
    vocabulary = tmp_path / "vocabulary.txt"
    vocabulary.write_text("\n".join(SMALL_VOCABULARY), encoding="utf-8")
    dictionary = tmp_path / "dictionary.csv"
    pd.DataFrame(
        {
            "word": ["caring", "kind", "cruel", "smart", "stupid"],
            "dimension": ["Warmth", "Warmth", "Warmth", "Competence", "Competence"],
            "direction": [1, 1, -1, 1, -1],
        }
    ).to_csv(dictionary, index=False)
    # in this process (click's runner): the same commands without a fresh interpreter importing torch twice;
    # the CLI in its own process is checked by tests/test_cli.py and tests/test_library_output.py
    from click.testing import CliRunner

    from assoc.cli import cli

    done = CliRunner().invoke(
        cli,
        [
            "score",
            "--scorer",
            "sbert_topwords",
            "--stimuli",
            "nicolas2024",
            "-o",
            f"vocabulary={vocabulary}",
            "-o",
            "top_k=20",
            "--out",
            str(tmp_path / "top.csv"),
        ],
    )
    assert done.exit_code == 0, done.output[-2000:]
    done = CliRunner().invoke(
        cli,
        [
            "analyze",
            "stereotype",
            "--table",
            str(tmp_path / "top.csv"),
            "-o",
            f"dictionary={dictionary}",
            "-o",
            "singularize=false",  # the by-hand expectation below codes the words as they are
            "--out",
            str(tmp_path / "coded.csv"),
        ],
    )
    assert done.exit_code == 0, done.output[-2000:]
    coded = pd.read_csv(tmp_path / "coded.csv")
    assert set(coded["target"]) == set(Stimuli.load("nicolas2024").designs[0].target)
    assert set(coded["measure"]) == {"representativeness", "direction"}
    nurse = coded[(coded["target"] == "nurse") & (coded["measure"] == "representativeness")]
    top = pd.read_csv(tmp_path / "top.csv")
    words = set(top.loc[top["target"] == "nurse", "attribute"])
    expected = len(words & {"caring", "kind", "cruel"}) / len(words)
    assert nurse.loc[nurse["attribute_group"] == "Warmth", "value"].iloc[0] == pytest.approx(expected)


@pytest.mark.slow
def test_no_warnings_on_a_clean_run(cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assoc.score("sbert_topwords", TERMS, [MODEL], vocabulary=SMALL_VOCABULARY, top_k=5, progress=False)


@pytest.mark.slow
def test_vocabulary_embedding_resumes_from_its_chunks_with_the_same_numbers(tmp_path, monkeypatch):
    """A run killed while embedding the vocabulary keeps the finished chunks; the resumed matrix is bitwise equal."""
    import assoc_sbert_topwords.encoding as encoding
    from assoc_sbert_topwords.encoding import SentenceEncoder, open_encoder, vocabulary_embeddings

    monkeypatch.setattr(encoding, "CHUNK", 16)  # 50 words: chunks of 16, 16, 16, 2
    encoder = open_encoder(MODEL, device="cpu", dtype="float32", revision=None, batch_size=8, normalize=True)
    options = {"vocabulary_digest": "d", "template": None, "progress": False}
    whole, _ = vocabulary_embeddings(encoder, SMALL_VOCABULARY, cache_dir=None, use_cache=False, **options)
    real = SentenceEncoder.encode
    calls = []

    def interrupted(self, texts, **kwargs):
        calls.append(len(texts))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, texts, **kwargs)

    monkeypatch.setattr(SentenceEncoder, "encode", interrupted)
    root = tmp_path / "c"
    cached = {"cache_dir": str(root), "use_cache": True, **options}
    with pytest.raises(KeyboardInterrupt):
        vocabulary_embeddings(encoder, SMALL_VOCABULARY, **cached)
    calls.clear()
    monkeypatch.setattr(SentenceEncoder, "encode", lambda self, t, **kw: (calls.append(len(t)), real(self, t, **kw))[1])
    resumed, from_cache = vocabulary_embeddings(encoder, SMALL_VOCABULARY, **cached)
    assert calls == [16, 2] and not from_cache  # the last two chunks only
    assert resumed.dtype == np.float32 and np.array_equal(resumed, whole)  # exactly the uninterrupted numbers
    assert len(list((root / "arrays").glob("*.npy"))) == 1  # the chunks were replaced by the whole matrix
    calls.clear()
    again, from_cache = vocabulary_embeddings(encoder, SMALL_VOCABULARY, **cached)
    assert from_cache and calls == [] and np.array_equal(again, whole)


class _Terminal:
    """A standard error that says it is a terminal (progress bars default to on), and keeps what is written."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("progress", [False, True])
@pytest.mark.slow
def test_the_progress_setting_reaches_the_workers_vocabulary_bar(cache_dir, monkeypatch, progress):
    """``--no-progress`` (progress=False) silences the bar the worker opens while embedding the vocabulary."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assoc.score("sbert_topwords", TERMS, [MODEL], vocabulary=SMALL_VOCABULARY, top_k=3, cache=False, progress=progress)
    assert ("embedding vocabulary" in "".join(terminal.parts)) is progress
