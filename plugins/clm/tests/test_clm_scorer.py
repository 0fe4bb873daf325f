"""The clm scorer end to end: CLI offline, table shape, options, cache and resume, units, analyses that read it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner

import assoc
from assoc.cli import cli


def test_cli_tiny_models_and_score_offline(tmp_path, monkeypatch):
    """`assoc models tiny --kind gpt2|llama` then `assoc score --scorer clm --stimuli bao2024:2A` offline."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for kind in ("gpt2", "llama"):
        built = runner.invoke(cli, ["models", "tiny", "--kind", kind, kind])
        assert built.exit_code == 0, built.output
    scored = runner.invoke(
        cli, ["score", "--scorer", "clm", "--stimuli", "bao2024:2A", "--model", "gpt2", "--out", "clm.csv"]
    )
    assert scored.exit_code == 0, scored.output
    import pandas as pd

    table = pd.read_csv(tmp_path / "clm.csv")
    assert set(table["measure"]) == {"sentence"} and (table["value"] < 0).all()
    assert set(table["bos"]) == {"auto"} and set(table["start_token"]) == {"<|endoftext|>"}
    from assoc import Stimuli

    assert len(table) == len(Stimuli.load("bao2024:2A").mask_items())


def test_measures_rows_and_reduction(tiny_causal, edge_stimuli):
    model = tiny_causal["llama"]
    both = assoc.score("clm", edge_stimuli, models=[model], measure="both", per_token=True)
    sentence = both[both.measure == "sentence"].reset_index(drop=True)
    option = both[both.measure == "option"].reset_index(drop=True)
    assert len(sentence) == len(option) == len(edge_stimuli.mask_items())
    assert np.allclose(sentence["value"], sentence["sentence_log_prob"])
    assert np.allclose(option["value"], option["option_log_prob"])
    mean = assoc.score("clm", edge_stimuli, models=[model], reduction="mean")
    assert np.allclose(mean["value"], sentence["sentence_log_prob"] / sentence["n_tokens"])
    # the option is part of the sentence: its log probability is never below the sentence's
    assert (option["value"] >= sentence["value"] - 1e-9).all()
    none = assoc.score("clm", edge_stimuli, models=[model], bos="none")
    assert (none["n_tokens"] == sentence["n_tokens"] - 1).all()  # the first text token is not scored


def test_cache_resume_and_unit_size_do_not_change_numbers(tiny_causal):
    from assoc import Stimuli

    stimuli = Stimuli.load("bao2024:2A")
    model = tiny_causal["gpt2"]
    first = assoc.score("clm", stimuli, models=[model], unit_size=7)
    again = assoc.score("clm", stimuli, models=[model], unit_size=7)  # the stored rows of the same units
    other = assoc.score("clm", stimuli, models=[model])  # other units: computed again
    fresh = assoc.score("clm", stimuli, models=[model], cache=False, batch_tokens=37)
    assert (first["value"].to_numpy() == again["value"].to_numpy()).all()
    for table in (other, fresh):
        assert np.max(np.abs(first["value"].to_numpy() - table["value"].to_numpy())) <= 1e-5


def test_lpr_and_posterior_read_clm_tables(tiny_causal):
    from assoc import DataError, Stimuli

    model = tiny_causal["gpt2"]
    table = assoc.score("clm", "bao2024:2A", models=[model])
    lpr = assoc.analyze("lpr", table, target_pair=False)
    first = lpr.iloc[0]
    like, dislike = (
        table[(table.context == first.context) & (table.target == first.target) & (table["mask"] == word)][
            "value"
        ].item()
        for word in first["mask"].split(" - ")
    )
    assert first.value == pytest.approx(like - dislike, abs=1e-12)

    import dataclasses

    # one Watson et al. (2023) role-noun set with 2 + 2 names and 3 states (the full set is 3,600 sentences)
    design = Stimuli.load("watson2023").select(["firefighter"]).designs[0]
    small = dataclasses.replace(
        design,
        target={group: names[:2] for group, names in design.target.items()},
        attribute={group: states[:3] for group, states in design.attribute.items()},
    )
    watson = Stimuli([small], name="watson-small")
    scored = assoc.score("clm", watson, models=[model])
    posterior = assoc.analyze("posterior", scored, prior="uniform")
    sums = posterior.groupby(["design", "context", "target", "attribute"])["posterior"].sum()
    assert np.allclose(sums, 1.0)
    one = scored[(scored.target == scored.target.iloc[0]) & (scored.attribute == scored.attribute.iloc[0])]
    expected = np.exp(one["value"] - np.logaddexp.reduce(one["value"].to_numpy()))
    got = posterior.set_index(["target", "attribute", "mask"]).loc[
        [(t, a, m) for t, a, m in zip(one.target, one.attribute, one["mask"])], "posterior"
    ]
    assert np.allclose(got.to_numpy(), expected.to_numpy())
    with pytest.raises(DataError, match="count a prior twice"):
        assoc.analyze("posterior", scored, prior="wordfreq")


def test_bad_stimuli_refused_before_loading(tiny_causal):
    from assoc import Design, Stimuli, StimuliError

    no_mask = Stimuli([Design(name="d", queries=("{TARGET} is here.",), target={"t": ("a",)})], name="s")
    with pytest.raises(StimuliError):
        assoc.score("clm", no_mask, models=["/no/such/model"])


def test_an_option_with_nothing_before_it_has_no_value_never_a_partial_sum(causal_lms):
    from assoc_clm.scorer import score_items

    from assoc import Design, Stimuli

    items = Stimuli([Design(name="d", queries=("[MASK] works.",), mask={"g": ("He",)})], name="s").mask_items()
    assert len(causal_lms["gpt2"].tokenizer("He", add_special_tokens=False)["input_ids"]) == 2
    row = score_items(causal_lms["gpt2"], items, bos="none")[0]
    # nothing before the option and no BOS: its first token starts the sequence, unscored, so log P(O | P) has no
    # value (it used to be log P of its second token alone, n_option_tokens 1); the sentence is scored as bos says
    assert row["n_option_tokens"] == 0 and math.isnan(row["option_log_prob"])
    assert row["option_status"] == "no_start_token" and row["sentence_status"] == "ok"
    assert row["n_tokens"] == len(causal_lms["gpt2"].tokenizer("He works.", add_special_tokens=False)["input_ids"]) - 1
