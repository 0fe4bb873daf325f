"""Rows the clm scorer cannot give a value: refused before work, or kept as NaN with their reason (issue 46).

Case 3 of the issue: a causal model whose tokenizer has neither a BOS nor an EOS token left
``measure=option`` all NaN (and multi-token options a sum over their later tokens), with no word.
Now ``bos='auto'``, which promises every token scored, is refused before any work for such a
tokenizer; under a policy that puts nothing before the text, an option that starts the sentence
is kept as NaN with status ``no_start_token``, counted in the run report with one warning line.
A sentence longer than the model accepts is kept as NaN with status ``too_long``, where it used
to stop the whole run with a message that did not name the text. References are computed here
with transformers directly (one unpadded forward pass, float64 log-softmax).
"""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest

import assoc
from assoc.errors import NotScoredWarning, OptionError

# [MASK] at the start of one query, in the middle of the other; "woman" is three tokens of the tiny GPT-2
STUDY = {
    "designs": [
        {
            "name": "jobs",
            "queries": ["[MASK] works as a {TARGET}.", "The [MASK] is a {TARGET}."],
            "mask": {"male": ["he", "man"], "female": ["she", "woman"]},
            "target": {"job": ["nurse"]},
        }
    ]
}


@pytest.fixture
def no_start_gpt2(tiny_causal, tmp_path):
    """The tiny GPT-2 with a tokenizer that has neither a BOS nor an EOS token (its files say so)."""
    folder = tmp_path / "gpt2-no-start"
    shutil.copytree(tiny_causal["gpt2"], folder)
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    config.update(bos_token=None, eos_token=None, unk_token=None, pad_token=None)
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(folder)


def _by_hand(folder: str, tokens: list[int], start: int) -> float:
    """sum_{j >= start} log P(tokens[j] | tokens[:j]) by one unpadded forward pass, float64 log-softmax."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([tokens])).logits[0].double()
    log_sm = torch.log_softmax(logits, dim=-1)
    return float(sum(log_sm[j - 1, tokens[j]] for j in range(start, len(tokens))))


def _score(model: str, study=STUDY, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score("clm", study, [model], progress=False, cache=False, **options)
    return table, [str(w.message) for w in caught if issubclass(w.category, NotScoredWarning)]


def test_bos_auto_without_bos_or_eos_is_refused_before_any_work(no_start_gpt2, monkeypatch):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(no_start_gpt2)
    assert tokenizer.bos_token_id is None and tokenizer.eos_token_id is None  # what the model had
    from assoc.lm.causal import loading

    monkeypatch.setattr(loading, "cached_causal_lm", lambda *a, **k: pytest.fail("a model was loaded"))
    with pytest.raises(OptionError, match=r"neither a BOS nor an EOS token, so bos='auto'.*use bos='none'") as err:
        assoc.score("clm", STUDY, [no_start_gpt2], measure="option", progress=False, cache=False)
    assert "\n" not in str(err.value)


def test_bos_auto_is_refused_at_open_where_the_files_do_not_say(tiny_causal):
    """A model in memory has no files: opening it decides, before any request is computed."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_causal["gpt2"])
    tokenizer.bos_token = tokenizer.eos_token = tokenizer.unk_token = None
    assert tokenizer.bos_token_id is None and tokenizer.eos_token_id is None
    pair = (AutoModelForCausalLM.from_pretrained(tiny_causal["gpt2"]), tokenizer)
    with pytest.raises(OptionError, match=r"neither a BOS nor an EOS token.*use bos='none'"):
        assoc.score("clm", STUDY, pair, progress=False, cache=False)
    table, _ = _score(pair, bos="none")  # the policy that says what it computes runs
    assert set(table["bos"]) == {"none"}


@pytest.mark.parametrize("bos", ["none", "tokenizer"])
def test_an_option_with_nothing_before_it_is_kept_as_nan_with_its_reason(no_start_gpt2, bos):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(no_start_gpt2)
    table, said = _score(no_start_gpt2, measure="both", bos=bos)
    options = table[table["measure"] == "option"]
    at_start = options["context"] == "[MASK] works as a {TARGET}."
    # before: NaN for one-token options and, for "woman" (3 tokens), log P of its 2nd and 3rd tokens alone
    assert options.loc[at_start, "value"].isna().all()
    assert set(options.loc[at_start, "status"]) == {"no_start_token"}
    assert (options.loc[at_start, "n_option_tokens"] == 0).all()
    # an option after "The" has its value: log P(option | "The") by hand
    for _, row in options[~at_start].iterrows():
        prefix = tokenizer("The", add_special_tokens=False)["input_ids"]
        whole = tokenizer(f"The {row['mask']}", add_special_tokens=False)["input_ids"]
        assert row["status"] == "ok"
        assert abs(row["value"] - _by_hand(no_start_gpt2, whole, len(prefix))) < 1e-4
    # sentences are scored from their second token, as the policy says (start_token names the first)
    sentences = table[table["measure"] == "sentence"]
    assert set(sentences["status"]) == {"ok"} and sentences["value"].notna().all()
    for _, row in sentences.iterrows():
        ids = tokenizer(row["sentence"], add_special_tokens=False)["input_ids"]
        assert abs(row["value"] - _by_hand(no_start_gpt2, ids, 1)) < 1e-4
    # counted in the run report, one warning line naming the first such row and what would score it
    run = table.assoc.provenance["run"]
    assert run["not_scored"] == {"no_start_token": 4} and run["nan_values"] == 4
    assert len(said) == 1 and "4 row(s) have no value, status 'no_start_token'" in said[0]
    assert "design 'jobs'" in said[0] and f"bos={bos!r}" in said[0] and "bos='auto'" in said[0]


def test_too_long_sentences_are_kept_as_nan_rows_and_the_rest_is_unchanged(tiny_causal):
    model = tiny_causal["gpt2"]
    long_query = "The {TARGET} said that " + "the day was very long and " * 12 + "[MASK] works hard."
    study = {"designs": [{**STUDY["designs"][0], "queries": [*STUDY["designs"][0]["queries"], long_query]}]}
    table, said = _score(model, study, measure="both")
    short, _ = _score(model, STUDY, measure="both")
    long_rows = table[table["context"] == long_query]
    assert len(long_rows) == 8 and long_rows["value"].isna().all() and set(long_rows["status"]) == {"too_long"}
    kept = table[table["context"] != long_query].reset_index(drop=True)
    assert np.allclose(kept["value"].to_numpy(), short["value"].to_numpy(), rtol=0, atol=1e-9, equal_nan=True)
    assert table.assoc.provenance["run"]["not_scored"] == {"too_long": 8}
    (line,) = said
    assert "8 row(s) have no value, status 'too_long'" in line and "design 'jobs'" in line
    assert "'The nurse said that the day was very long and the day was ve'... (" in line
    assert "accepts (64, special tokens included)" in line


def test_a_continuation_with_nothing_before_it_has_its_reason(no_start_gpt2):
    from assoc.lm import ContinuationRequest
    from assoc.lm.causal import cached_causal_lm
    from assoc.lm.causal.kind import CausalLanguageModel

    model = CausalLanguageModel(cached_causal_lm(no_start_gpt2), bos="none")
    empty, after = model.continuation([ContinuationRequest("", "woman works"), ContinuationRequest("The", " woman")])
    assert not empty.ok and empty.status == "no_start_token" and "'woman works'" in empty.reason
    assert np.isnan(empty.value)  # before: log P of its later tokens only
    assert after.ok and after.n_tokens == 1
