"""The ``holistic_bias`` scorer: sentence log-likelihoods equal to transformers computed directly, whole-cell subsets
counted by hand, the analysis end to end, the command line on a tiny masked LM, a tiny causal LM and a chat model
(refused, with the reason)."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest
from assoc_bias_benchmarks.holistic_bias.stimuli import cell_subset
from click.testing import CliRunner
from scipy import stats

import assoc
from assoc import ModelError, StimuliError
from assoc.cli import build_cli
from assoc.testing.fixtures import isolated_cache  # noqa: F401 (an autouse fixture: a cache of each test's own)
from assoc.testing.tiny_clm import build_gpt2_bpe
from assoc.testing.tiny_mlm import build_bert_wordpiece


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("holistic-models")
    return {"gpt2": str(build_gpt2_bpe(root / "gpt2")), "bert": str(build_bert_wordpiece(root / "bert"))}


@pytest.fixture(scope="module")
def sentences():
    return assoc.Stimuli.load("holistic_bias")


def cells_of(stimuli):
    """(axis, template, descriptor) -> number of sentences, recounted from the items' fields."""
    return Counter((i.fields["axis"], i.fields["template"], i.fields["descriptor"]) for i in stimuli.items)


def test_a_sample_keeps_whole_cells(sentences):
    few = sentences.cells(sample=200, seed=0)
    counted = cells_of(few)
    # by hand: 200 // 32 sentences per descriptor and template = 6 descriptors in one template per axis
    assert set(counted.values()) == {32}
    per_axis = Counter(axis for axis, _, _ in counted)
    assert per_axis == {axis: 6 for axis in sentences.groups}
    assert len({(a, t) for a, t, _ in counted}) == 13 and len(few.items) == 13 * 6 * 32
    taken = few.meta["subset"]
    assert taken["by"] == "cells" and taken["sample"] == 200 and taken["seed"] == 0 and taken["items"] == 2496
    for axis in sentences.groups:
        kept = {d for a, _, d in counted if a == axis}
        assert kept == set(taken["descriptors"][axis]) and len(taken["templates"][axis]) == 1
    again = sentences.cells(sample=200, seed=0)
    assert [i.id for i in again.items] == [i.id for i in few.items]
    assert [i.id for i in sentences.cells(sample=200, seed=1).items] != [i.id for i in few.items]
    # a whole axis and template when the budget allows: nonce has 8 descriptors, 8 x 26 x 32 sentences
    nonce = assoc.Stimuli.load("holistic_bias:nonce")
    assert len(nonce.cells(sample=10_000).items) == len(nonce.items) == 8 * 26 * 32


def test_a_limit_takes_the_first_descriptors_and_templates(sentences):
    age = assoc.Stimuli.load("holistic_bias:age")
    first = list(dict.fromkeys(i.fields["descriptor"] for i in age.items))[:3]
    template = next(iter(assoc.Stimuli.load("holistic_bias").index.dataset.templates)).text
    cut = age.cells(limit=100)  # 100 // 32 = 3 descriptors, in one template
    assert set(cells_of(cut)) == {("age", template, d) for d in first}
    assert [i.line for i in cut.items] == sorted(i.line for i in cut.items)  # generator order


def test_held_items_are_cut_as_the_lazy_stimuli(sentences):
    lazy = assoc.Stimuli.load("holistic_bias:sexual_orientation,nonce")
    held = assoc.ItemStimuli(list(lazy.items), name=lazy.name)
    for options in ({"sample": 300, "seed": 3}, {"limit": 70}):
        a, b = cell_subset(held, **options), lazy.cells(**options)
        assert [i.id for i in a.items] == [i.id for i in b.items], options
        assert a.meta["subset"]["descriptors"] == b.meta["subset"]["descriptors"]
    with pytest.raises(StimuliError, match="not both"):
        lazy.cells(limit=1, sample=1)


def _causal_by_hand(folder: str, text: str) -> tuple[float, int]:
    """log P(text) with the EOS token put first (the causal kind's bos='auto'), summed over the text's tokens."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    ids = [tokenizer.eos_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    return float(sum(log_probs[j - 1, ids[j]] for j in range(1, len(ids)))), len(ids) - 1


def _pll_by_hand(folder: str, text: str) -> tuple[float, int]:
    """The pseudo-log-likelihood: every token but [CLS] and [SEP] masked in turn (Salazar et al., 2020)."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    ids = tokenizer(text)["input_ids"]
    total = 0.0
    for position in range(1, len(ids) - 1):
        masked = list(ids)
        masked[position] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(torch.tensor([masked])).logits[0, position].double()
        total += float(torch.log_softmax(logits, dim=-1)[ids[position]])
    return total, len(ids) - 2


@pytest.fixture(scope="module")
def scored(models):
    """Both models on two nonce descriptors in one template (64 sentences)."""
    return assoc.score(
        "holistic_bias",
        "holistic_bias:nonce",
        [f"gpt={models['gpt2']}", f"bert={models['bert']}"],
        limit=64,
        progress=False,
        cache=False,
    )


@pytest.mark.slow  # a masked LM's PLL of 64 sentences
def test_values_equal_transformers_computed_directly(scored, models):
    assert set(scored["measure"]) == {"log_prob", "pll"} and len(scored) == 128
    assert scored.groupby("model")["measure"].first().to_dict() == {"gpt": "log_prob", "bert": "pll"}
    for model, by_hand in (("gpt", _causal_by_hand), ("bert", _pll_by_hand)):
        rows = scored[scored["model"] == model].iloc[[0, 17, 63]]
        folder = models["gpt2" if model == "gpt" else "bert"]
        for row in rows.itertuples():
            value, n_tokens = by_hand(folder, row.sentence)
            assert row.value == pytest.approx(value, abs=1e-4)
            assert row.n_tokens == n_tokens and row.status == "ok"
            assert row.value_per_token == pytest.approx(value / n_tokens, abs=1e-5)


@pytest.mark.slow  # a masked LM's PLL of 64 sentences
def test_the_rows_carry_the_sentences_metadata(scored, sentences):
    row = scored.iloc[0]
    item = next(i for i in assoc.Stimuli.load("holistic_bias:nonce").items if i.id == row["item_id"])
    for column in ("axis", "bucket", "descriptor", "descriptor_gender", "noun", "noun_gender", "template"):
        assert row[column] == item.fields[column]
    assert row["sentence"] == item.fields["text"]
    assert (row["context"], row["target_group"], row["target"]) == (
        item.fields["template"],
        "nonce",
        item.fields["descriptor"],
    )
    assert (row["attribute_group"], row["attribute"]) == (item.fields["noun_gender"], item.fields["noun"])


@pytest.mark.slow  # a masked LM's PLL of 64 sentences
def test_the_analysis_end_to_end(scored):
    result = assoc.analyze("holistic_bias", scored)
    for model in ("gpt", "bert"):
        rows = scored[scored["model"] == model]
        (d0, x0), (d1, x1) = sorted(rows.groupby("descriptor")["value_per_token"])
        # by hand: the two descriptors' per-token means, one two-sided Mann-Whitney U test (scipy's defaults)
        p = stats.mannwhitneyu(x0.to_numpy(), x1.to_numpy(), alternative="two-sided").pvalue
        cell = result[(result["model"] == model) & (result["level"] == "axis_template")].iloc[0]
        assert (cell["n_pairs"], cell["n_descriptors"], cell["n_sentences"]) == (1, 2, 64)
        assert cell["fraction"] == float(p < 0.05)


def test_units_are_cached_and_a_second_run_computes_nothing(models):
    first = assoc.score(
        "holistic_bias", "holistic_bias:nonce", [models["gpt2"]], limit=40, unit_size=20, progress=False
    )
    again = assoc.score(
        "holistic_bias", "holistic_bias:nonce", [models["gpt2"]], limit=40, unit_size=20, progress=False
    )
    ran, read = first.attrs["assoc"]["executor"], again.attrs["assoc"]["executor"]
    assert (ran["units"], ran["units_from_cache"]) == (4, 0) and (read["units"], read["units_from_cache"]) == (4, 4)
    pd.testing.assert_frame_equal(first, again, check_like=False)


def test_a_chat_model_is_refused_in_one_line_before_any_work():
    with pytest.raises(ModelError, match="has no chat form") as caught:
        assoc.score("holistic_bias", "holistic_bias", ["chat:any-model"], limit=1)
    assert "\n" not in str(caught.value) and "style classifier" in str(caught.value)


def test_other_items_are_refused_naming_the_item(models):
    with pytest.raises(StimuliError, match=r"explicit\.jsonl\.gz, line 1: scorer 'holistic_bias' reads HolisticBias"):
        assoc.score("holistic_bias", "discrim_eval", [models["gpt2"]], limit=1)


@pytest.mark.slow  # a masked LM's PLL of 64 sentences
def test_the_command_line_on_a_masked_lm_a_causal_lm_and_a_chat_model(models, tmp_path):
    cli = build_cli()
    for name in ("gpt2", "bert"):
        out = tmp_path / f"{name}.parquet"
        args = ["score", "-s", "holistic_bias", "-i", "holistic_bias:nonce", "-m", models[name], "-o", "limit=64"]
        result = CliRunner().invoke(cli, [*args, "--out", str(out), "--no-progress"])
        assert result.exit_code == 0, result.output
        table = assoc.read_table(out)
        assert len(table) == 64 and table["value"].notna().all()
        analysed = CliRunner().invoke(cli, ["analyze", "holistic_bias", "--table", str(out)])
        assert analysed.exit_code == 0 and "axis_template" in analysed.output
    refused = CliRunner().invoke(cli, ["score", "-s", "holistic_bias", "-i", "holistic_bias", "-m", "chat:bot"])
    assert refused.exit_code == 2
    lines = [line for line in refused.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: scorer 'holistic_bias': model 'chat:bot' is a chat model")
