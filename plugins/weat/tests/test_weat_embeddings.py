"""Loading embeddings in every supported format, and the lookup rules."""

import json

import numpy as np
import pandas as pd
import pytest
from assoc_weat.embeddings import (
    Embeddings,
    UnsafeFormatWarning,
    guess_format,
    load_embeddings,
    load_file,
    load_numpy,
)

from assoc.errors import DataError, ModelError

WORDS = ["the", "Paris", "paris", "new", "york"]
MATRIX = np.arange(15, dtype=np.float32).reshape(5, 3) / 4


def check(vectors, words=WORDS, matrix=MATRIX):
    assert list(vectors.index_to_key) == words
    np.testing.assert_allclose(vectors.vectors, matrix, rtol=1e-6)


def test_glove_text_without_header(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_text("".join(f"{w} {' '.join(map(str, row))}\n" for w, row in zip(WORDS, MATRIX)), encoding="utf-8")
    assert guess_format(path) == "glove"
    check(load_file(path))


def test_word2vec_text_and_fasttext_vec(tmp_path):
    body = "5 3\n" + "".join(f"{w} {' '.join(map(str, row))}\n" for w, row in zip(WORDS, MATRIX))
    for name in ("vectors.txt", "vectors.vec"):
        (tmp_path / name).write_text(body, encoding="utf-8")
        assert guess_format(tmp_path / name) == "word2vec-text"
        check(load_file(tmp_path / name))


def test_word2vec_binary_hand_written(tmp_path):
    # The C format: header line, then per word "word " + little-endian float32s (+ newline).
    path = tmp_path / "vectors.bin"
    with open(path, "wb") as handle:
        handle.write(b"5 3\n")
        for word, row in zip(WORDS, MATRIX):
            handle.write(word.encode() + b" " + row.astype("<f4").tobytes() + b"\n")
    check(load_file(path))
    check(load_file(path, limit=2), WORDS[:2], MATRIX[:2])


def test_numpy_with_text_json_and_parquet_vocabularies(tmp_path):

    np.save(tmp_path / "m.npy", MATRIX)
    (tmp_path / "m.vocab.txt").write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    check(load_file(tmp_path / "m.npy"))
    (tmp_path / "words.json").write_text(json.dumps(WORDS), encoding="utf-8")
    check(load_numpy(tmp_path / "m.npy", tmp_path / "words.json"))
    pd.DataFrame({"index": WORDS}).to_parquet(tmp_path / "words.parquet")
    check(load_numpy(tmp_path / "m.npy", tmp_path / "words.parquet"))


def test_numpy_vocabulary_mismatch(tmp_path):
    np.save(tmp_path / "m.npy", MATRIX)
    (tmp_path / "m.txt").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(DataError, match="5 rows but the vocabulary"):
        load_file(tmp_path / "m.npy")
    (tmp_path / "m.txt").write_text("a\nb\nc\nd\na\n", encoding="utf-8")
    with pytest.raises(DataError, match="more than once"):
        load_file(tmp_path / "m.npy")


def test_gensim_native_warns(tmp_path):
    from gensim.models import KeyedVectors

    vectors = KeyedVectors(vector_size=3)
    vectors.add_vectors(WORDS, MATRIX)
    vectors.save(str(tmp_path / "v.kv"))
    with pytest.warns(UnsafeFormatWarning, match="unpickles"):
        check(load_file(tmp_path / "v.kv"))


def test_unknown_model_and_format(tmp_path):
    with pytest.raises(ModelError, match="neither a registered name"):
        load_embeddings(str(tmp_path / "nothing.bin"))
    (tmp_path / "x.dat").write_text("", encoding="utf-8")
    with pytest.raises(ModelError, match="cannot tell"):
        load_embeddings(str(tmp_path / "x.dat"))


@pytest.fixture()
def cased(tmp_path):
    np.save(tmp_path / "m.npy", MATRIX)
    (tmp_path / "m.txt").write_text("\n".join(WORDS), encoding="utf-8")
    return Embeddings(load_file(tmp_path / "m.npy"), "cased")


def test_case_rules(cased):
    assert cased.cased
    assert cased.lookup("Paris")[1] == "Paris"  # auto: cased vocabulary, exact lookup
    assert cased.lookup("THE")[0] is None  # ... so "THE" is not "the"
    assert cased.lookup("THE", case="lower")[1] == "the"
    np.testing.assert_allclose(cased.lookup("Paris", case="lower")[0], MATRIX[2])


def test_uncased_vocabulary_lowercases(tmp_path):
    np.save(tmp_path / "u.npy", MATRIX[2:])
    (tmp_path / "u.txt").write_text("paris\nnew\nyork", encoding="utf-8")
    uncased = Embeddings(load_file(tmp_path / "u.npy"), "uncased")
    assert not uncased.cased
    assert uncased.lookup("Paris")[1] == "paris"
    assert uncased.lookup("Paris", case="exact")[0] is None


def test_phrases(cased):
    with pytest.raises(DataError, match="phrases=average"):
        cased.lookup("new york")
    vector, token = cased.lookup("new york", phrases="average")
    assert token == "new+york"
    np.testing.assert_allclose(vector, (MATRIX[3] + MATRIX[4]) / 2)
    assert cased.lookup("new jersey", phrases="average") == (None, "")


def test_glove_6b_50d_is_available_offline():
    embeddings = load_embeddings("glove-6b-50d")
    assert len(embeddings) == 400_000 and embeddings.dimension == 50 and not embeddings.cased
    assert embeddings.lookup("Rose")[1] == "rose"


def test_gensim_native_that_is_not_gensim_is_a_clear_error(tmp_path):
    import pickle

    (tmp_path / "junk.kv").write_bytes(b"not a pickle")
    with pytest.warns(UnsafeFormatWarning), pytest.raises(ModelError, match="not a file saved by gensim"):
        load_file(tmp_path / "junk.kv")
    (tmp_path / "dict.kv").write_bytes(pickle.dumps({"a": 1}))
    with pytest.warns(UnsafeFormatWarning), pytest.raises(ModelError, match="not a file saved by gensim"):
        load_file(tmp_path / "dict.kv")


def test_gensim_full_model_uses_its_word_vectors(tmp_path):
    from gensim.models import Word2Vec

    model = Word2Vec(
        [["paris", "is", "a", "city"], ["york", "is", "a", "city"]], vector_size=4, min_count=1, seed=1, workers=1
    )
    model.save(str(tmp_path / "w2v.model"))
    with pytest.warns(UnsafeFormatWarning):
        vectors = load_file(tmp_path / "w2v.model")
    assert sorted(vectors.index_to_key) == ["a", "city", "is", "paris", "york"]
    np.testing.assert_allclose(vectors["paris"], model.wv["paris"])


def test_gzipped_glove_text(tmp_path):
    import gzip

    with gzip.open(tmp_path / "vectors.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(f"{w} {' '.join(map(str, row))}\n" for w, row in zip(WORDS, MATRIX)))
    assert guess_format(tmp_path / "vectors.txt.gz") == "glove"
    check(load_file(tmp_path / "vectors.txt.gz"))


def test_bad_limit(tmp_path):
    from assoc.errors import OptionError

    with pytest.raises(OptionError, match="limit must be a positive integer"):
        load_embeddings("glove-6b-50d", limit=0)


def test_misspelt_name_and_directory_get_clear_errors(tmp_path):
    from assoc_weat.embeddings import load_embeddings

    from assoc.errors import ModelError

    with pytest.raises(ModelError, match="did you mean 'glove-6b-50d'"):
        load_embeddings("glove-6b-5d")
    with pytest.raises(ModelError, match="is a directory; name the vectors file inside it"):
        load_embeddings(str(tmp_path))


def test_loaded_embeddings_are_a_bounded_lru(tmp_path, monkeypatch):
    from assoc_weat.embeddings import EMBEDDING_CACHE, load_embeddings, release_embeddings

    release_embeddings()
    files = []
    for i in range(3):
        path = tmp_path / f"v{i}.txt"
        path.write_text("".join(f"w{j} {i} {j} 1.0\n" for j in range(100)), encoding="utf-8")  # 100 x 3 float64
        files.append(str(path))
    # room for two: load_embeddings keeps float64 vectors (its default dtype), 8 bytes a number
    monkeypatch.setenv("ASSOC_EMBEDDING_CACHE_BYTES", str(2 * 100 * 3 * 8))
    first = load_embeddings(files[0])
    assert load_embeddings(files[0]) is first
    load_embeddings(files[1])
    load_embeddings(files[0])  # now the most recently used
    load_embeddings(files[2])  # evicts files[1]
    assert [key[0] for key in EMBEDDING_CACHE.keys()] == [files[0], files[2]]
    assert load_embeddings(files[0]) is first
    assert release_embeddings(files[0]) == 1 and load_embeddings(files[0]) is not first
    monkeypatch.setenv("ASSOC_EMBEDDING_CACHE_BYTES", "0")
    release_embeddings()
    assert load_embeddings(files[1]) is not load_embeddings(files[1]) and len(EMBEDDING_CACHE) == 0
