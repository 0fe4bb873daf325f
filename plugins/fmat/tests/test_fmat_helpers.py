"""BERT_vocab / BERT_info / fill_mask_check equivalents, in Python and on the command line."""

from __future__ import annotations

import math

import numpy as np
import pytest
from assoc_fmat.helpers import fill_mask_check, model_info, vocab_check
from click.testing import CliRunner


def test_vocab_check_uses_the_tokenizer_in_context(tiny_models):
    out = vocab_check(["man", "Man", "individualism"], [tiny_models["bert"], tiny_models["roberta"]])
    got = {(r.model, r.word): (r.in_vocab, r.token) for r in out.itertuples()}
    bert, roberta = tiny_models["bert"], tiny_models["roberta"]
    assert got[(bert, "man")] == (True, "man") and got[(bert, "Man")] == (True, "man")
    assert got[(bert, "individualism")] == (False, "individual ##ism")
    assert got[(roberta, "man")] == (True, "Ġman")
    assert got[(roberta, "Man")][0] is False  # cased BPE: "ĠMan" is not a token of the tiny vocabulary
    initial = vocab_check(["man"], roberta, query="[MASK] is here.")
    assert initial["token"].iloc[0] == "man"


def test_vocab_check_expands_number_ranges(tiny_models):
    out = vocab_check(["1998:2001", 7], tiny_models["bert"], query="It was [MASK].")
    assert list(out["word"]) == ["1998", "1999", "2000", "2001", "7"]
    assert out["in_vocab"].all()  # the real bert-base-uncased vocabulary has these year tokens


def test_model_info_matches_config(tiny_models, loaded):
    out = model_info([tiny_models["albert"]])
    row = out.iloc[0]
    config = loaded["albert"].model.config
    assert row["vocab_size"] == config.vocab_size and row["n_layers"] == config.num_hidden_layers
    assert row["hidden_size"] == config.hidden_size and row["embedding_size"] == config.embedding_size
    assert row["mask_token"] == "[MASK]" and not row["cased"]


def test_fill_mask_check_matches_pipeline_top_k(tiny_models, loaded):
    from transformers import pipeline

    lm = loaded["bert"]
    query = "Paris is the [MASK] of France."
    out = fill_mask_check(query, tiny_models["bert"], top_n=5)
    pipe = pipeline("fill-mask", model=lm.model, tokenizer=lm.tokenizer, device="cpu")
    expected = pipe(query, top_k=5)
    assert list(out["rank"]) == [1, 2, 3, 4, 5]
    assert list(out["token"]) == [lm.tokenizer.convert_ids_to_tokens(r["token"]) for r in expected]
    assert np.allclose(out["prob"], [r["score"] for r in expected], rtol=1e-4)
    assert np.allclose(out["log_prob"], [math.log(r["score"]) for r in expected], atol=1e-5)


def test_cli_commands(tiny_models, tmp_path):
    from assoc.cli import build_cli

    cli = build_cli()
    runner = CliRunner()
    result = runner.invoke(cli, ["fmat", "info", "-m", tiny_models["bert"]])
    assert result.exit_code == 0, result.output
    assert "30522" in result.output and "[MASK]" in result.output
    result = runner.invoke(cli, ["fmat", "vocab", "man", "individualism", "-m", tiny_models["bert"]])
    assert result.exit_code == 0 and "individual ##ism" in result.output
    out = tmp_path / "fills.csv"
    result = runner.invoke(
        cli, ["fmat", "check", "The [MASK] works.", "-m", tiny_models["bert"], "-n", "3", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert len(out.read_text().strip().splitlines()) == 1 + 3
    result = runner.invoke(cli, ["fmat", "info", "-m", str(tmp_path / "nope" / "model")])
    assert result.exit_code != 0 and "does not exist" in result.output


def test_helpers_reject_bad_input(tiny_models):
    from assoc.errors import AssocError

    with pytest.raises(AssocError):
        vocab_check([], tiny_models["bert"])
    with pytest.raises(AssocError):
        fill_mask_check("no mask", tiny_models["bert"])
    with pytest.raises(AssocError):
        fill_mask_check("The [MASK].", tiny_models["bert"], top_n=0)


def test_hub_ids_resolve_through_the_hugging_face_cache(tiny_models, tmp_path, monkeypatch):
    """A Hub id is read from the usual Hugging Face cache (offline here); the fingerprint is the
    cached commit, and --revision selects a snapshot (the R package's cache behaviour)."""
    import shutil

    import huggingface_hub.constants as hf_constants

    from assoc.cli import build_cli
    from assoc.errors import ModelError
    from assoc.lm.masked import load_masked_lm

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--someone--tiny-bert"
    shutil.copytree(tiny_models["bert"], repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))  # what transformers reads
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # wins over HF_HOME (set by the suite's conftest)

    lm = load_masked_lm("someone/tiny-bert")
    assert lm.fingerprint == f"hf:someone/tiny-bert@{commit}" and lm.vocab_size == 30522
    assert load_masked_lm("someone/tiny-bert", revision=commit).fingerprint == lm.fingerprint
    result = CliRunner().invoke(build_cli(), ["fmat", "info", "-m", "someone/tiny-bert", "--revision", commit])
    assert result.exit_code == 0 and commit in result.output, result.output
    result = CliRunner().invoke(build_cli(), ["fmat", "info", "-m", "someone/tiny-bert", "--revision", "nope"])
    assert result.exit_code != 0 and "cannot load fill-mask model 'someone/tiny-bert'" in result.output
    with pytest.raises(ModelError, match="offline mode"):
        load_masked_lm("someone/other-model")
