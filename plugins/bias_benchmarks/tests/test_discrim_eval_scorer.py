"""The ``discrim_eval`` scorer: the four log-probabilities equal transformers computed directly (lm-eval 0.4.13's
split of context and continuation), the per-prompt value equals lm-eval's ``process_results`` on them, a masked LM's
values equal the pseudo-log-likelihood by hand, a chat model's replies are read and counted, the analysis end to
end, and the command line on a tiny masked LM, a tiny causal LM and the test chat server."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from assoc_bias_benchmarks.discrim_eval.items import CONTINUATIONS, chat_prompt, lmeval_context, read_reply
from assoc_bias_benchmarks.discrim_eval.testing import REFUSAL, UNPARSED, discrim_eval_responder, hashed_yes
from click.testing import CliRunner

import assoc
from assoc import ModelError
from assoc.cli import build_cli
from assoc.testing.fixtures import isolated_cache  # noqa: F401 (an autouse fixture: a cache of each test's own)
from assoc.testing.openai_server import FAST_RETRIES, ChatServer
from assoc.testing.tiny_clm import build_gpt2_bpe
from assoc.testing.tiny_mlm import build_bert_wordpiece

lmeval_utils = pytest.importorskip("lm_eval.tasks.discrim_eval.utils", reason="lm-eval (the test extras) is the oracle")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("discrim-models")
    # the prompts are long: a GPT-2 of 1,024 positions (its tiny tokenizer makes ~700 tokens of one) and a BERT of 512
    return {
        "gpt2": str(build_gpt2_bpe(root / "gpt2", positions=1024)),
        "bert": str(build_bert_wordpiece(root / "bert", positions=512)),
    }


@pytest.fixture(scope="module")
def few():
    """Three prompts of three decision questions."""
    items = assoc.Stimuli.load("discrim_eval").items
    return assoc.ItemStimuli([items[0], items[200], items[4000]], name="discrim_eval-three")


def _lm_eval_log_probs(folder: str, context: str, continuation: str) -> float:
    """log P(continuation | context) as lm-eval 0.4.13's HFLM computes it, with transformers directly.

    The context and context + continuation tokenized as the tokenizer does (GPT-2: nothing added); the
    continuation's tokens are the whole's after the context's; the input is all tokens but the last.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    context_ids = tokenizer(context)["input_ids"]
    whole = tokenizer(context + continuation)["input_ids"]
    continuation_ids = whole[len(context_ids) :]
    ids = context_ids + continuation_ids
    with torch.no_grad():
        logits = model(torch.tensor([ids[:-1]])).logits[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    start = len(context_ids) - 1
    return float(sum(log_probs[start + j, token] for j, token in enumerate(continuation_ids)))


def _pll_of_continuation(folder: str, context: str, continuation: str) -> float:
    """The continuation's tokens masked one at a time, the context and the rest visible (a masked LM's continuation)."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    text = context + continuation
    encoded = tokenizer(text, return_offsets_mapping=True)
    ids, spans = encoded["input_ids"], encoded["offset_mapping"]
    inside = [k for k, (a, b) in enumerate(spans) if b > a and b > len(context) and a < len(text)]
    total = 0.0
    for position in inside:
        masked = list(ids)
        masked[position] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(torch.tensor([masked])).logits[0, position].double()
        total += float(torch.log_softmax(logits, dim=-1)[ids[position]])
    return total


def _lm_eval_value(item, ll):
    """lm-eval's own ``process_results`` of the four log-probabilities (its logit_yes)."""
    out = lmeval_utils.process_results(dict(item.fields), [(value, False) for value in ll])
    return out["black_bias"][2]


@pytest.mark.slow  # a causal LM on prompts of ~700 tokens
def test_a_causal_lm_gives_lm_evals_log_probs_and_value(models, few):
    table = assoc.score("discrim_eval", few, [models["gpt2"]], progress=False, cache=False)
    assert list(table["measure"]) == ["logit_yes"] * 3 and (table["status"] == "ok").all()
    for item, row in zip(few.items, table.itertuples(), strict=True):
        context = lmeval_context(item.fields)
        ll = [getattr(row, f"ll_{answer}") for answer in CONTINUATIONS]
        by_hand = [_lm_eval_log_probs(models["gpt2"], context, answer) for answer in CONTINUATIONS]
        assert ll == pytest.approx(by_hand, abs=1e-4)
        assert row.value == pytest.approx(_lm_eval_value(item, ll), abs=1e-9)
        assert row.answer_mass == pytest.approx(sum(np.exp(ll)), rel=1e-9)
        assert (row.item_id, row.decision_question_id, row.age, row.gender, row.race) == (
            item.id, item.fields["decision_question_id"], item.fields["age"], item.fields["gender"], item.fields["race"]
        )  # fmt: skip
    assert table.attrs["assoc"]["options"]["bos"] == "tokenizer"  # lm-eval's HFLM: what the tokenizer adds


@pytest.mark.slow  # a masked LM on prompts of ~200 tokens
def test_a_masked_lm_gives_the_pll_of_each_answer(models, few):
    table = assoc.score("discrim_eval", few, [models["bert"]], progress=False, cache=False)
    assert (table["status"] == "ok").all()
    for item, row in zip(few.items, table.itertuples(), strict=True):
        context = lmeval_context(item.fields)
        ll = [getattr(row, f"ll_{answer}") for answer in CONTINUATIONS]
        assert ll == pytest.approx([_pll_of_continuation(models["bert"], context, a) for a in CONTINUATIONS], abs=1e-4)
        assert row.value == pytest.approx(_lm_eval_value(item, ll), abs=1e-9)


def test_a_context_too_long_for_the_model_has_no_value(tmp_path, few):
    short = str(build_gpt2_bpe(tmp_path / "gpt2-64"))  # 64 positions
    table = assoc.score("discrim_eval", few, [short], progress=False, cache=False)
    assert set(table["status"]) == {"too_long"} and table["value"].isna().all()
    assert table.attrs["assoc"]["run"]["discrim_eval_status"] == {"too_long": 3}


def _expected(question: str) -> tuple[str, float]:
    if "Asian" in question:
        return "refusal", float("nan")
    if "100-year-old" in question:
        return "unparsed", float("nan")
    return ("yes", 1.0) if hashed_yes(question) else ("no", 0.0)


def test_a_chat_model_is_asked_the_question_and_its_replies_are_read():
    prompts = assoc.Stimuli.load("discrim_eval").subset(sample=60, seed=4)
    responder = discrim_eval_responder(refuse="Asian", unparsed="100-year-old")
    with ChatServer(responder=responder) as server:
        table = assoc.score(
            "discrim_eval", prompts, ["bot=chat:tiny"], samples=2, base_url=server.url, progress=False, **FAST_RETRIES
        )
        sent = server.chat_requests()
        again = assoc.score(
            "discrim_eval", prompts, ["bot=chat:tiny"], samples=2, base_url=server.url, progress=False, **FAST_RETRIES
        )
        assert len(server.chat_requests()) == len(sent) == 120  # a second run sends nothing: the replies are stored
    assert len(table) == 120 and set(table["measure"]) == {"yes"} and set(table["sample"]) == {0, 1}
    asked = {r.body["messages"][0]["content"] for r in sent}
    assert asked == {chat_prompt(item.fields) for item in prompts.items}
    assert {r.body.get("temperature") for r in sent} == {0.0}
    by_id = {item.id: item for item in prompts.items}
    for row in table.itertuples():
        status, value = _expected(chat_prompt(by_id[row.item_id].fields))
        assert row.reply_status == status and (row.value == value or (np.isnan(value) and np.isnan(row.value)))
        assert read_reply(row.reply) == (status, row.value) or status != "no"
    assert table["reply"].isin(["Yes.", "No, I would not.", REFUSAL, UNPARSED]).all()
    assert again["value"].equals(table["value"])
    counts = table["reply_status"].value_counts().to_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = assoc.analyze("discrim_eval", table, random_slopes=False)
    first = result.iloc[0]
    assert first["n_replies"] == 120
    assert (first["n_yes"], first["n_no"]) == (counts.get("yes", 0), counts.get("no", 0))
    assert (first["n_refusal"], first["n_unparsed"]) == (counts.get("refusal", 0), counts.get("unparsed", 0))


def test_a_chat_model_needs_its_prefix():
    with pytest.raises(ModelError, match="cannot tell its kind"):
        assoc.score("discrim_eval", "discrim_eval", ["gpt-4o-mini"], limit=1)


def test_the_analysis_end_to_end_equals_statsmodels():
    import pandas as pd
    import statsmodels.formula.api as smf

    prompts = assoc.Stimuli.load("discrim_eval").subset(sample=150, seed=1)
    with ChatServer(responder=discrim_eval_responder(refuse="Hispanic")) as server:
        table = assoc.score("discrim_eval", prompts, ["bot=chat:tiny"], base_url=server.url, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = assoc.analyze("discrim_eval", table, random_slopes=False)
    # by hand: the replies read (refusals left out), age standardised, statsmodels' mixed model fitted directly
    data = table[table["value"].notna()].copy()
    data["age_c"] = (data["age"] - data["age"].mean()) / data["age"].std()
    data["race"], data["gender"] = data["race"].str.lower(), data["gender"].str.lower()
    formula = "value ~ age_c + C(race, Treatment(reference='white')) + C(gender, Treatment(reference='male'))"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm(formula, pd.DataFrame(data), groups=data["decision_question_id"]).fit(reml=True)
    estimated = result[~result["missing"]]
    assert set(result[result["missing"]]["metric"]) == {"hispanic_bias"}  # every Hispanic prompt refused
    assert len(estimated) == 6 and estimated["n_refusal"].iloc[0] == (table["reply_status"] == "refusal").sum()
    for row in estimated.itertuples():
        assert row.estimate == pytest.approx(fit.params[row.term], abs=1e-6)
        assert row.se == pytest.approx(fit.bse[row.term], abs=1e-6)


@pytest.mark.slow  # three kinds of model through the command line
def test_the_command_line_on_a_masked_lm_a_causal_lm_and_a_chat_model(models, tmp_path):
    cli = build_cli()
    out = {}
    with ChatServer(responder=discrim_eval_responder()) as server:
        for name, spec, extra in (
            ("gpt2", models["gpt2"], []),
            ("bert", models["bert"], []),
            ("chat", "chat:bot", ["-o", f"base_url={server.url}"]),
        ):
            out[name] = tmp_path / f"{name}.parquet"
            args = ["score", "-s", "discrim_eval", "-i", "discrim_eval", "-m", spec, "-o", "sample=20", *extra]
            result = CliRunner().invoke(cli, [*args, "--out", str(out[name]), "--no-progress"])
            assert result.exit_code == 0, result.output
    measures = {name: set(assoc.read_table(path)["measure"]) for name, path in out.items()}
    assert measures == {"gpt2": {"logit_yes"}, "bert": {"logit_yes"}, "chat": {"yes"}}
    for path in out.values():
        table = assoc.read_table(path)
        assert len(table) == 20 and table["value"].notna().all()
    analysed = CliRunner().invoke(
        cli, ["analyze", "discrim_eval", "--table", str(out["chat"]), "-o", "random_slopes=false"]
    )
    assert analysed.exit_code == 0, analysed.output
    assert "black_bias" in analysed.output
