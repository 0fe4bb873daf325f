"""The ``ceat`` scorer and analysis: corpora, word matching, ceat.py's window, and the numbers end to end.

* Fed the frozen embeddings of ``ceat_meta``'s references (``tests/data/refs/ceat``, computed by the
  authors' ``ceat.py`` from a checkout) through a stand-in model kind, the scorer's draws and rows and the
  ``ceat`` analysis give ``ceat_meta``'s combined effect size and p, and its internal V, Q and tau²
  (<= 1e-10): the scorer end to end, on the authors' numbers.
* On a tiny BERT, a tiny GPT-2 and the real MiniLM, with a seeded template corpus, the engine's context
  embeddings equal ``ceat.py``'s own recipe run with transformers directly (the word's last sub-token
  id at its first occurrence in the context's ids, no special tokens, last layer; GPT-2 with the prefix
  space) to float32 noise, and the analysis equals :func:`assoc.stats.ceat` (proved equal to
  ``ceat_meta``) on the engine's embeddings (<= 1e-10).
* fairlms's CEAT (whole-context [CLS] embeddings, ``sample_size=1``, its draws replayed) equals assoc's
  statistics on the engine's [CLS] embeddings of the same contexts, with the differences named.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_contextual import template_corpus, write_template_corpus
from assoc_contextual.corpus import find_contexts, read_corpus, short_sen

import assoc
from assoc.errors import DataError
from assoc.lm import Embedding, LanguageModel
from assoc.testing.conformance import check_analysis, check_scorer

from .conftest import MINILM, REPO, words_of

REFS = REPO / "tests" / "data" / "refs" / "ceat"
WEAT6 = {
    "name": "weat6",
    "target": {"Male names": ["John", "Paul", "Mike", "Kevin"], "Female names": ["Amy", "Joan", "Lisa", "Sarah"]},
    "attribute": {
        "Career": ["executive", "salary", "office", "career"],
        "Family": ["home", "parents", "family", "wedding"],
    },
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A seeded template corpus of the WEAT 6 words above: 6 contexts each, 12 shared, 5 noise lines."""
    path = tmp_path_factory.mktemp("corpus") / "weat6.txt"
    return write_template_corpus(path, words_of(assoc.Stimuli.load(WEAT6)), per_word=6, shared=12, noise=5, seed=3)


# -- reading a corpus ------------------------------------------------------------------------------------------


def test_every_format_reads_the_same_contexts(tmp_path):
    lines = ["The rose is red.", "  An ant walked by.  ", "", "A rose and an ant."]
    kept = [(1, "The rose is red."), (2, "An ant walked by."), (4, "A rose and an ant.")]
    (tmp_path / "c.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert list(read_corpus(tmp_path / "c.txt")) == kept
    (tmp_path / "c.jsonl").write_text(
        "\n".join(json.dumps({"text": t, "id": i}) if i % 2 else json.dumps(t) for i, t in enumerate(lines) if t),
        encoding="utf-8",
    )
    assert [t for _, t in read_corpus(tmp_path / "c.jsonl")] == [t for _, t in kept]
    frame = pd.DataFrame({"id": [1, 2, 3, 4], "sentence": lines})
    frame.to_csv(tmp_path / "c.csv", index=False)
    frame.to_parquet(tmp_path / "c.parquet")
    for name in ("c.csv", "c.parquet"):
        assert [t for _, t in read_corpus(tmp_path / name, text_column="sentence")] == [t for _, t in kept]


def test_a_bad_corpus_is_one_line_naming_the_file_and_place(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        list(read_corpus(tmp_path / "missing.txt"))
    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\n{"text": \n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.jsonl, line 2: not JSON"):
        list(read_corpus(tmp_path / "bad.jsonl"))
    (tmp_path / "field.jsonl").write_text('{"sentence": "fine"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"line 1: no 'text' field .* text_column"):
        list(read_corpus(tmp_path / "field.jsonl"))
    (tmp_path / "number.jsonl").write_text('{"text": 3}\n', encoding="utf-8")
    with pytest.raises(DataError, match="line 1: the context is int, not text"):
        list(read_corpus(tmp_path / "number.jsonl"))
    pd.DataFrame({"sentence": ["a"]}).to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(DataError, match=r"has no column 'text' \(it has \['sentence'\]\)"):
        list(read_corpus(tmp_path / "t.csv"))
    (tmp_path / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8"):
        list(read_corpus(tmp_path / "latin.txt"))


# -- finding the words --------------------------------------------------------------------------------------------


def test_words_are_found_whole_first_match_in_corpus_order():
    corpus = list(
        enumerate(["prose and roses", "A rose, a rose.", "her hat", "he and her", "Rose is here", "the rose"], start=1)
    )
    found = find_contexts(corpus, ["rose", "he", "her", "Rose"])
    assert [(c.line, c.start) for c in found["rose"]] == [(2, 2), (6, 4)]  # not in prose/roses; first match
    assert [c.line for c in found["he"]] == [4] and [c.line for c in found["her"]] == [3, 4]
    assert [c.line for c in found["Rose"]] == [5]
    loose = find_contexts(corpus, ["rose"], match_case=False, max_contexts=2)
    assert [c.line for c in loose["rose"]] == [2, 5]
    assert loose["rose"][1].text[loose["rose"][1].start : loose["rose"][1].end] == "Rose"


def ceat_py_short_sen(sen: str, wd: str) -> str:
    """ceat.py's short_sen, transcribed (its 9-word window; the middle branch keeps 8 words)."""
    wds = sen.split()
    wd_idx = wds.index(wd)
    if len(wds) >= 9:
        if wd_idx < 4:
            return " ".join(wds[:9])
        if len(wds) - wd_idx - 1 < 4:
            return " ".join(wds[-9:])
        return " ".join(wds[(wd_idx - 4) : (wd_idx + 4)])
    return sen


def test_short_sen_is_ceat_pys_window():
    rng = random.Random(0)
    for _ in range(2000):
        n = rng.randint(1, 20)
        tokens = [rng.choice(["a", "bb", "x.", "y,"]) for _ in range(n)]
        tokens[rng.randrange(n)] = "rose"
        sentence = " ".join(tokens)
        shown, start = short_sen(sentence, sentence.index("rose"))
        assert shown == ceat_py_short_sen(sentence, "rose") and shown[start : start + 4] == "rose"
    # glued to punctuation, ceat.py's list.index fails; the token holding the word is used
    glued = "zero one two three four five six seven (rose) eight nine ten eleven"
    shown, start = short_sen(glued, glued.index("rose"))
    assert shown == "four five six seven (rose) eight nine ten" and shown[start : start + 4] == "rose"


def test_the_template_corpus_is_seeded_and_avoids_the_weat_words():
    words = ["aster", "Lakisha", "poison"]
    first = template_corpus(words, per_word=5, shared=2, noise=2, seed=1)
    assert first == template_corpus(words, per_word=5, shared=2, noise=2, seed=1) != template_corpus(words, seed=2)
    found = find_contexts(enumerate(first, 1), words)
    assert all(len(found[w]) >= 5 for w in words) and len(first) == 19
    caliskan = {
        w
        for name in ("weat1", "weat3", "weat6", "weat7", "weat8")
        for w in words_of(assoc.Stimuli.load(f"caliskan:{name}"))
    }
    plain = template_corpus(["XYZ"], per_word=200, shared=0, noise=50, seed=0)
    assert not find_contexts(enumerate(plain, 1), sorted(caliskan)) or all(
        not contexts for contexts in find_contexts(enumerate(plain, 1), sorted(caliskan)).values()
    )


def test_a_word_without_enough_contexts_is_refused_by_name_before_any_model_loads(tiny, corpus, monkeypatch):
    import assoc.lm.loading as loading

    def no_loading(*args, **kwargs):
        raise AssertionError("a model was opened")

    monkeypatch.setattr(loading, "open_model", no_loading)
    with pytest.raises(
        DataError, match=r"3 word\(s\) have fewer than min_contexts=7 contexts .*: 'Lisa' \(6\), 'home' \(6\)"
    ):
        assoc.score("ceat", WEAT6, [tiny["bert"]], corpus=str(corpus), min_contexts=7, progress=False)
    missing = {**WEAT6, "attribute": {"Career": ["executive", "aster"], "Family": ["home", "family"]}}
    with pytest.raises(DataError, match=r"'aster' \(0\)"):
        assoc.score("ceat", missing, [tiny["bert"]], corpus=str(corpus), progress=False)


# -- the authors' numbers, end to end ----------------------------------------------------------------------------


class FrozenVectors(LanguageModel):
    """A stand-in model kind whose embedding of a context is a frozen vector of ceat.py's references."""

    kind = "frozen"
    prefix = "frozen"
    serves = frozenset({"embedding"})
    description = "frozen vectors of the tests"
    table: dict[str, np.ndarray] = {}

    @classmethod
    def open(cls, spec, options, cache):
        model = cls()
        model.name = model.fingerprint = spec
        return model

    def embed(self, requests, *, checkpoints=None, progress=False):
        return [Embedding(self.table[r.text], 1, (r.word,)) for r in requests]


class FrozenPlugin:
    @assoc.hookimpl
    def register_model_kinds(self, register):
        register(FrozenVectors)


@pytest.fixture
def frozen_kind():
    assoc.plugins.register(FrozenPlugin(), name="frozen-vectors")
    yield FrozenVectors
    assoc.plugins.unregister("frozen-vectors")


@pytest.mark.parametrize("case", ["c6", "i1", "i4", "heterogeneous", "homogeneous"])
def test_the_scorer_end_to_end_gives_ceat_metas_frozen_numbers(frozen_kind, tmp_path, case):
    frozen = json.loads((REFS / "ceat.json").read_text(encoding="utf-8"))
    data = frozen["cases"][case]["data"]
    embeddings = np.load(REFS / "embeddings.npz")
    words = frozen["data"][data]["words"]
    bounds = np.cumsum([0, *embeddings[f"{data}_counts"]])
    stacked = embeddings[f"{data}_contexts"]
    lines = []
    frozen_kind.table = {}
    for i, word in enumerate(words):
        for k in range(bounds[i], bounds[i + 1]):
            text = f"{word} context {k}"  # each line holds one word: its k-th context, in corpus order
            lines.append(text)
            frozen_kind.table[text] = stacked[k]
    (tmp_path / "corpus.txt").write_text("\n".join(lines), encoding="utf-8")
    sets = frozen["cases"][case]["sets"]
    stimuli = {"name": case, "target": {"X": sets[0], "Y": sets[1]}, "attribute": {"A": sets[2], "B": sets[3]}}
    table = assoc.score(
        "ceat",
        stimuli,
        [f"frozen:{case}"],
        corpus=str(tmp_path / "corpus.txt"),
        n_samples=frozen["cases"][case]["N"],
        seed=frozen["cases"][case]["seed"],
        rows="groups" if case == "heterogeneous" else "pairs",
        progress=False,
        cache=False,
    )
    result = assoc.analyze("ceat", table).iloc[0]
    expected = frozen["cases"][case]
    assert abs(result["effect_size"] - expected["ces"]) <= 1e-10
    assert result["p_value"] == pytest.approx(expected["p_value"], rel=1e-9, abs=1e-12)
    assert abs(result["variance"] - expected["V"]) <= 1e-10
    assert result["q"] == pytest.approx(expected["Q"], rel=1e-10)
    assert abs(result["tau_squared"] - expected["tau_squared"]) <= 1e-10
    assert result["df"] == expected["df"] and result["n_samples"] == expected["N"]
    # every sampled context is a row: the draws of ceat_meta, recorded by sample and corpus line
    draws = np.load(REFS / "ceat_outputs.npz")[f"{case}_draws"]
    first_target = sets[0][0]
    drawn = table[(table["target"] == first_target) & (table["sample"] == 1)]["context_line"].iloc[0]
    assert drawn == 1 + bounds[words.index(first_target)] + draws[0, 0]
    report = table.assoc.provenance["run"]["ceat_draws"][f"frozen:{case} / {case}"]
    assert report["seed"] == expected["seed"] and report["n_samples"] == expected["N"]


# -- real encoders, code against code ------------------------------------------------------------------------------


def ceat_py_embeddings(path: str, family: str, contexts: dict[str, list[str]]) -> dict[str, list[np.ndarray | None]]:
    """ceat.py's generate_ebd recipe with transformers directly: the id of the word's last sub-token (the word
    encoded alone), its first occurrence among the context's ids, the last layer; BERT without special tokens,
    GPT-2 with add_prefix_space (ceat.py's gpt2()).

    Where that first occurrence is not the word's own last token (the id is also a piece of an earlier word,
    or of the word itself: a named difference, assoc reads the word's own last token) the entry is None.
    """
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(path, add_prefix_space=family == "gpt2")
    model = transformers.AutoModel.from_pretrained(path).eval()
    out: dict[str, list[np.ndarray | None]] = {}
    for word, texts in contexts.items():
        target = tokenizer.encode(word, add_special_tokens=False)[-1]
        out[word] = []
        for text in texts:
            encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            ids = encoded["input_ids"]
            position = ids.index(target)
            start = text.index(word)
            own = [p for p, (b, e) in enumerate(encoded["offset_mapping"]) if b < start + len(word) and e > start]
            if position != own[-1]:
                out[word].append(None)
                continue
            with torch.no_grad():
                hidden = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[-1]
            out[word].append(hidden[0, position].numpy())
    return out


CEAT_MODELS = [
    pytest.param("bert", {}, id="bert"),
    pytest.param("gpt2", {"prefix_space": True}, id="gpt2"),
    pytest.param(MINILM, {}, id="minilm", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("name", "options"), CEAT_MODELS)
def test_ceat_equals_the_authors_recipe_and_statistics(tiny, corpus, name, options):
    from assoc.lm import open_model
    from assoc.stats import ceat

    model = tiny.get(name, name)
    table = assoc.score("ceat", WEAT6, [model], corpus=str(corpus), n_samples=60, seed=5, progress=False, **options)
    result = assoc.analyze("ceat", table).iloc[0]
    sets = [list(g) for g in (*WEAT6["target"].values(), *WEAT6["attribute"].values())]
    found = find_contexts(read_corpus(corpus), [w for s in sets for w in s])

    # the engine's own embeddings through the kind, fed to the statistics proved equal to ceat_meta
    scorer = assoc.plugins.get_scorer("ceat")(corpus=str(corpus), **options)
    opened = open_model(model, scorer.params, None, kinds=scorer.accepted_kinds())
    settings = scorer.settings(opened)
    words = list(dict.fromkeys(w for s in sets for w in s))  # one call, in the scorer's order: the same batches
    answers = iter(opened.embed([settings.request(c.text, c.span) for w in words for c in found[w]]))
    ours = {w: np.vstack([next(answers).vector for _ in found[w]]) for w in words}
    expected = ceat([[ours[w] for w in s] for s in sets], n_samples=60, seed=5).combined
    for column, value in (("effect_size", expected.effect_size), ("variance", expected.variance), ("q", expected.q)):
        assert abs(result[column] - value) <= 1e-10 * max(1.0, abs(value))
    assert result["p_value"] == pytest.approx(expected.p_value, rel=1e-9, abs=1e-12)
    assert result["tau_squared"] == pytest.approx(expected.tau_squared, abs=1e-10)

    # ceat.py's recipe with transformers directly gives the same embeddings
    if name == MINILM:
        from assoc_sbert_topwords.models import resolve_model

        path, family = str(resolve_model(MINILM)[1]), "bert"
    else:
        path, family = model, name
    theirs = ceat_py_embeddings(path, family, {w: [c.text for c in found[w]] for s in sets for w in s})
    elsewhere = 0
    for word in ours:
        for mine, other in zip(ours[word], theirs[word]):
            if other is None:  # ceat.py's id search landed on another word's piece first
                elsewhere += 1
                continue
            assert np.max(np.abs(mine - other)) <= 2e-5, word
    assert elsewhere == (0 if family == "bert" else elsewhere)  # WordPiece words: never; a tiny BPE's pieces: some
    if not elsewhere:
        reference = ceat([[np.vstack(theirs[w]) for w in s] for s in sets], n_samples=60, seed=5).combined
        assert abs(result["effect_size"] - reference.effect_size) <= 1e-4


def test_row_shapes_and_the_weat_analysis_agree(tiny, corpus):
    pairs = assoc.score("ceat", WEAT6, [tiny["bert"]], corpus=str(corpus), n_samples=30, seed=1, progress=False)
    groups = assoc.score(
        "ceat", WEAT6, [tiny["bert"]], corpus=str(corpus), n_samples=30, seed=1, rows="groups", progress=False
    )
    assert len(pairs) == 30 * 8 * 8 and len(groups) == 30 * 8 * 2
    a, b = assoc.analyze("ceat", pairs).iloc[0], assoc.analyze("ceat", groups).iloc[0]
    for column in ("effect_size", "standard_error", "p_value", "q", "tau_squared", "i_squared"):
        assert a[column] == pytest.approx(b[column], rel=1e-12, abs=1e-14)
    # one WEAT per sample: the weat analysis by sample gives each sample's effect size, ES_i
    per_sample = assoc.analyze("weat", pairs, by=["model", "design", "sample"], n_resamples=100)
    assert np.mean(per_sample["effect_size"]) == pytest.approx(a["mean_sample_effect_size"], rel=1e-10)
    assert set(pairs.columns) >= {"sample", "context", "context_line", "attribute_context", "attribute_context_line"}
    assert a["i_squared"] == (max(0.0, (a["q"] - a["df"]) / a["q"]))


def test_contexts_a_model_cannot_read_whole_are_left_out(tiny, tmp_path):
    long = "It was a long day and " + " ".join(["then more happened"] * 30) + " and John was there."
    corpus = template_corpus(words_of(assoc.Stimuli.load(WEAT6)), per_word=3, seed=0) + [long]
    (tmp_path / "c.txt").write_text("\n".join(corpus), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"1 context\(s\) left out, the model cannot read them whole"):
        table = assoc.score("ceat", WEAT6, [tiny["gpt2"]], corpus=str(tmp_path / "c.txt"), n_samples=5, progress=False)
    assert long not in set(table["context"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the 9-word window reads it whole
        windowed = assoc.score(
            "ceat", WEAT6, [tiny["gpt2"]], corpus=str(tmp_path / "c.txt"), n_samples=5, short_sen=True, progress=False
        )
    assert windowed["context"].str.split().str.len().max() <= 9


def test_conformance(tiny, corpus):
    table = check_scorer("ceat", WEAT6, [tiny["bert"]], {"corpus": str(corpus), "n_samples": 4}, expect_rows=4 * 8 * 8)
    check_analysis("ceat", table)


def test_intersectional_stimuli_are_ceat_pys_groups_11_to_14():
    from assoc.stats import CEAT_INTERSECTIONAL_TESTS

    stimuli = assoc.Stimuli.load("guo2021")
    assert [d.name for d in stimuli.designs] == ["I1", "I2", "I3", "I4"]
    for design in stimuli.designs:
        test = CEAT_INTERSECTIONAL_TESTS[design.name]
        assert [tuple(g) for g in (*design.target.values(), *design.attribute.values())] == [
            test.x,
            test.y,
            test.a,
            test.b,
        ]


@pytest.mark.slow  # importing fairlms imports torch, transformers and datasets
def test_fairlms_ceat_equals_assoc_on_whole_context_cls_embeddings(corpus):
    """fairlms embeds each context whole ([CLS], F4), averages sample_size contexts per word (F5; 1 here), adds
    1e-10 to every variance (F6) and reports the two-sided p (F7): with those set, its CES, SE, Q, tau² and p
    are assoc's statistics on the engine's [CLS] embeddings of the same contexts and fairlms's draws, up to
    its cosines being computed in the vectors' float32 (assoc: float64). MiniLM's transformer: the [CLS]
    vectors of a random tiny BERT are so alike (cosines 0.99999) that float32 cosines lose the differences."""
    pytest.importorskip("fairlms")
    import transformers
    from assoc_sbert_topwords.models import resolve_model
    from fairlms.definition.encoder_only.intrinsic_bias.similarity_based.ceat.ceat import compute_ceat

    from assoc.lm import EmbeddingRequest, open_model
    from assoc.stats import ceat_effect_sizes, random_effects

    folder = str(resolve_model(MINILM)[1])

    sets = [list(g) for g in (*WEAT6["target"].values(), *WEAT6["attribute"].values())]
    found = find_contexts(read_corpus(corpus), [w for s in sets for w in s])
    contexts = [{w: [c.text for c in found[w]] for w in s} for s in sets]
    theirs = compute_ceat(
        transformers.AutoModel.from_pretrained(folder).eval(),
        transformers.AutoTokenizer.from_pretrained(folder),
        *contexts,
        pooling="cls",
        sample_size=1,
        n_trials=40,
        seed=9,
        device="cpu",
    )
    opened = open_model(MINILM, {"device": "cpu"}, None, kinds=["sentence"])
    vectors = [
        [
            np.vstack([a.vector for a in opened.embed([EmbeddingRequest(t, None, "cls") for t in found_set[w]])])
            for w in found_set
        ]
        for found_set in contexts
    ]
    rng = np.random.default_rng(9)  # fairlms: per trial, per word of T1, T2, A1, A2, integers(0, n, size=1)
    drawn = [[[] for _ in s] for s in vectors]
    for _ in range(40):
        for k, s in enumerate(vectors):
            for j, rows in enumerate(s):
                drawn[k][j].append(rows[rng.integers(0, len(rows), size=1)[0]])
    arrays = [np.stack([np.vstack(d) for d in s], axis=1) for s in drawn]
    samples = ceat_effect_sizes(*arrays)
    ours = random_effects(samples.effect_sizes, samples.variances + 1e-10, alternative="two-sided")
    assert ours.effect_size == pytest.approx(theirs["CES"], rel=1e-4)
    assert ours.standard_error == pytest.approx(theirs["se"], rel=1e-4)
    assert ours.q == pytest.approx(theirs["Q"], rel=1e-4)
    assert ours.tau_squared == pytest.approx(theirs["tau2"], rel=1e-3, abs=1e-8)
    assert ours.p_value == pytest.approx(theirs["p"], rel=1e-3, abs=1e-12)
