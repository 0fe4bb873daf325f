"""The ``stereoset`` scorer on a tiny masked LM, a tiny causal LM and the test chat server, against direct computations.

* Runs offline from the command line (``assoc score`` then ``assoc analyze stereoset``) on each kind, with a seeded
  sample whose size is checked against the bundled file's groups.
* Per-sentence scores equal an independent computation with transformers directly, for a few items: the authors'
  per-token method (their loop, rewritten with the slow ``BertTokenizer`` and a float32 softmax, as
  ``eval_discriminative_models.py`` runs it), next-sentence prediction (``BertForNextSentencePrediction`` on their
  ``[CLS] context [SEP] sentence [SEP]`` input), PLL (every token masked in turn) and log P (a forward pass).
* A chat model's choices are mapped back through the shuffled order it was shown; the analysis of the table is
  checked by hand.
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import pytest
from assoc_bias_benchmarks.choice_scorer import shown_order
from assoc_bias_benchmarks.stereoset.authors import next_sentence_head
from assoc_bias_benchmarks.testing import choice_responder, hashed

import assoc
from assoc import OptionError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def bert_nsp(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny BERT saved from its pre-training class: the checkpoint holds the next-sentence head (as bert-base-*)."""
    from assoc.testing.tiny_mlm import _spread_output_bias, bert_uncased_vocab_file

    tokenizer = transformers.BertTokenizer(
        vocab=str(bert_uncased_vocab_file()), do_lower_case=True, model_max_length=128
    )
    config = transformers.BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(3)
    pretraining = transformers.BertForPreTraining(config)
    _spread_output_bias(pretraining, 3)
    with torch.no_grad():  # a random head predicts 0.5 everywhere: spread it so sentences differ
        pretraining.cls.seq_relationship.weight.mul_(200.0)
    folder = tmp_path_factory.mktemp("stereoset") / "bert-nsp"
    pretraining.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def few() -> assoc.ItemStimuli:
    return assoc.Stimuli.load("stereoset").subset(sample=1, seed=4)


# -- offline, from the command line, on every kind -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["bert", "gpt2", "chat"])
def test_runs_from_the_command_line_on_each_kind(kind, tiny_bert, tiny_gpt2, run_cli, tmp_path, monkeypatch):
    from assoc.testing.openai_server import ChatServer

    monkeypatch.chdir(tmp_path)
    with ChatServer(responder=choice_responder(hashed)) as server:
        model = {"bert": tiny_bert, "gpt2": tiny_gpt2, "chat": "chat:stand-in"}[kind]
        command = ["score", "-s", "stereoset", "-i", "stereoset", "-m", model, "--no-progress", "--out", "t.csv"]
        command += ["-o", "sample=2", "-o", "sample_seed=1"]
        if kind == "chat":
            command += ["-o", f"base_url={server.url}"]
        run_cli(*command)
        run_cli("analyze", "stereoset", "-t", "t.csv", "-o", "n_bootstrap=20", "--out", "r.csv")
    table = assoc.read_table("t.csv")
    result = pd.read_csv("r.csv")
    expected = assoc.Stimuli.load("stereoset").subset(sample=2, seed=1)
    assert list(dict.fromkeys(table["item_id"])) == [item.id for item in expected.items]  # 2 per bias type, in order
    assert table["item_id"].nunique() == 8
    method = {"bert": "authors", "gpt2": "log_prob", "chat": "choice"}[kind]
    assert set(table["method"]) == {method}
    if kind == "chat":
        assert len(table) == 8 and set(table["measure"]) == {"choice"}
    else:
        assert len(table) == 24 and table["value"].notna().all()
        measures = table.groupby("split")["measure"].unique().map(tuple).to_dict()
        assert (
            measures
            == {
                "bert": {"intrasentence": ("mean_token_prob",), "intersentence": ("pll_given_context",)},
                "gpt2": {"intrasentence": ("log_prob",), "intersentence": ("log_prob_given_context",)},
            }[kind]
        )
    provenance = table.assoc.provenance
    assert provenance["options"]["sample"] == 2 and provenance["options"]["sample_seed"] == 1
    assert provenance["run"]["subset"] == {"items": 8, "limit": None, "sample": 2, "sample_seed": 1}
    overall = result[(result["split"] == "overall") & (result["bias_type"] == "overall")]
    assert list(overall["n_items"]) == [8] and list(overall["n_scored"] + overall["n_left_out"]) == [8]


# -- the numbers, against transformers directly ---------------------------------------------------------------


def authors_per_token(loaded, folder: str, context: str, word: str) -> float:
    """``BiasEvaluator.evaluate_intrasentence`` with ``IntrasentenceLoader``, batch size 1, for one sentence."""
    tokenizer, model = loaded(folder, "BertForMaskedLM", "BertTokenizer")  # the authors' tokenizer class
    mask_id = tokenizer.encode(tokenizer.mask_token, add_special_tokens=False)[0]
    pieces = tokenizer.encode(word, add_special_tokens=False)
    probabilities = []
    for k, piece in enumerate(pieces):
        text = context.replace("BLANK", f"{tokenizer.decode(pieces[:k])}{tokenizer.mask_token}")
        ids = torch.tensor(
            [tokenizer(text, add_special_tokens=True)["input_ids"]]
        )  # encode_plus, gone in transformers 5
        with torch.no_grad():
            output = model(ids)[0].softmax(dim=-1)
        output = output[ids == mask_id]
        probabilities.append(output.index_select(1, torch.tensor([piece])).diag()[0].item())
    return float(sum(probabilities) / len(probabilities))


def authors_next_sentence(loaded, folder: str, context: str, sentence: str) -> float:
    """``evaluate_intersentence`` with ``BertNextSentence`` and ``IntersentenceDataset._tokenize``, for one pair."""
    tokenizer, model = loaded(folder, "BertForNextSentencePrediction", "BertTokenizer")
    first = [tokenizer.convert_tokens_to_ids(t) for t in tokenizer.tokenize(context)]
    second = [tokenizer.convert_tokens_to_ids(t) for t in tokenizer.tokenize(sentence)]
    ids = [tokenizer.cls_token_id, *first, tokenizer.sep_token_id, *second, tokenizer.sep_token_id]
    offset = ids.index(tokenizer.sep_token_id)
    types = [1 if k > offset else 0 for k in range(len(ids))]
    with torch.no_grad():
        outputs = model(torch.tensor([ids]), token_type_ids=torch.tensor([types]))[0]
    return float(torch.softmax(outputs, dim=1)[0, 0].item())


def test_the_authors_method_equals_their_loop_and_next_sentence_head(tiny_bert, bert_nsp, few, oracle):
    assert next_sentence_head(bert_nsp) and not next_sentence_head(tiny_bert)
    chosen = few.subset(limit=1)  # one item per bias type: two of each split
    table = assoc.score("stereoset", chosen, [bert_nsp], progress=False, cache=False)
    assert set(table["method"]) == {"authors"}
    assert table.assoc.provenance["model_names"][0]["next_sentence_head"] is True
    for item in chosen.items:
        rows = table[table["item_id"] == item.id].sort_values("option")
        context = item.fields["context"]
        if item.derived["split"] == "intrasentence":
            assert set(rows["measure"]) == {"mean_token_prob"}
            expected = [authors_per_token(oracle.loaded, bert_nsp, context, w) for w in item.derived["template_words"]]
        else:
            assert set(rows["measure"]) == {"nsp_prob"}
            expected = [authors_next_sentence(oracle.loaded, bert_nsp, context, s) for s in item.options]
        assert list(rows["value"]) == pytest.approx(expected, rel=1e-5)  # the authors' float32 softmax
        assert len(set(rows["value"])) == 3


def test_likelihoods_equal_pll_and_log_p_computed_directly(tiny_bert, tiny_gpt2, few, oracle):
    chosen = few.subset(limit=1)
    intra = next(i for i in chosen.items if i.derived["split"] == "intrasentence")
    inter = next(i for i in chosen.items if i.derived["split"] == "intersentence")
    picked = assoc.ItemStimuli([intra, inter], name="two")
    masked = assoc.score("stereoset", picked, [tiny_bert], method="likelihood", progress=False, cache=False)
    causal = assoc.score("stereoset", picked, [tiny_gpt2], progress=False, cache=False)
    assert set(masked["method"]) == {"pll"} and set(causal["method"]) == {"log_prob"}
    for table, direct in ((masked, "masked"), (causal, "causal")):
        by_item = {k: part.sort_values("option")["value"].tolist() for k, part in table.groupby("item_id")}
        if direct == "masked":
            expected_intra = [oracle.masked_pll(tiny_bert, s) for s in intra.options]
            context = inter.fields["context"] + " "
            expected_inter = [
                oracle.masked_pll(tiny_bert, context + s, (len(context), len(context + s))) for s in inter.options
            ]
        else:
            expected_intra = [oracle.causal_log_prob(tiny_gpt2, s) for s in intra.options]
            context = inter.fields["context"]
            expected_inter = [oracle.causal_log_prob(tiny_gpt2, " " + s, context) for s in inter.options]
        assert by_item[intra.id] == pytest.approx(expected_intra, abs=1e-4)
        assert by_item[inter.id] == pytest.approx(expected_inter, abs=1e-4)


# -- chat models: the shown order, and the analysis by hand ----------------------------------------------------------


def test_a_chat_models_choices_are_read_back_through_the_shown_order(few):
    from assoc.testing.openai_server import ChatServer

    stereotypes = {item.options[0] for item in few.items}

    def stereotype(message, options):  # always the stereotypical sentence, wherever it is shown
        return next(k for k, option in enumerate(options) if option in stereotypes)

    with ChatServer(responder=choice_responder(stereotype)) as server:
        table = assoc.score("stereoset", few, ["chat:stand-in"], base_url=server.url, progress=False, cache=False)
        shown = [r.user for r in server.chat_requests()]
    assert set(table["role"]) == {"stereotype"} and (table["option"] == 0).all()
    orders = {tuple(int(k) for k in o.split(",")) for o in table["options_shown"]}
    assert orders == {shown_order(item.id, 3, "shuffled") for item in few.items} and len(orders) > 1
    assert all("\nA. " in message and "\nC. " in message for message in shown)
    result = assoc.analyze("stereoset", table, n_bootstrap=0)
    overall = result[(result["split"] == "overall") & (result["bias_type"] == "overall")].iloc[0]
    assert (overall["ss"], overall["lms"], overall["icat"]) == (100.0, 100.0, 0.0)


def test_replies_without_a_choice_are_kept_and_counted(few):
    from assoc.testing.openai_server import ChatServer

    with ChatServer(responder=choice_responder(partial(hashed, unparsed=0.5))) as server:
        table = assoc.score("stereoset", few, ["chat:stand-in"], base_url=server.url, progress=False, cache=False)
    missing = table[table["status"] != "ok"]
    assert len(table) == len(few.items) and 0 < len(missing) < len(table)
    assert (missing["option"] == -1).all() and missing["value"].isna().all()
    assert set(missing["status"]) == {"unparsed"} and set(missing["reply"]) == {"I would rather not say."}
    run = table.assoc.provenance["run"]
    assert run["runs"][0]["without_value"] == {"unparsed": len(missing)} and run["nan_values"] == len(missing)
    result = assoc.analyze("stereoset", table, n_bootstrap=0)
    overall = result[(result["split"] == "overall") & (result["bias_type"] == "overall")].iloc[0]
    assert overall["n_left_out"] == len(missing) and overall["n_scored"] == len(table) - len(missing)


# -- refused before any work ------------------------------------------------------------------------------------


def test_a_method_the_kind_cannot_run_is_refused_before_any_work(tiny_bert, tiny_gpt2, few):
    with pytest.raises(OptionError, match="method 'authors' reads a masked LM") as caught:
        assoc.score("stereoset", few, [tiny_gpt2], method="authors", progress=False, cache=False)
    assert "\n" not in str(caught.value)
    with pytest.raises(OptionError, match="method 'likelihood' sends sentence and continuation"):
        assoc.score("stereoset", few, ["chat:stand-in"], method="likelihood", progress=False, cache=False)
    with pytest.raises(OptionError, match="limit or sample, not both"):
        assoc.score("stereoset", few, [tiny_bert], limit=1, sample=1, progress=False, cache=False)


def test_item_counts_equal_the_files(tiny_gpt2):
    """The plan of a whole run holds every item of the bundled file, once, in units of unit_size."""
    scorer = assoc.get_scorer("stereoset")(unit_size=1000, cache=False)
    units = scorer.plan(assoc.Stimuli.load("stereoset"), [tiny_gpt2])
    assert [unit.size for unit in units] == [1000, 1000, 1000, 1000, 229]
    assert sum(unit.size for unit in units) == 4229  # the development set's items (docs/stereoset.md)
    for name, n in (("stereoset_intrasentence", 2106), ("stereoset_intersentence", 2123)):
        assert sum(u.size for u in scorer.plan(assoc.Stimuli.load(name), [tiny_gpt2])) == n


def test_a_second_run_resumes_from_the_cache_without_asking_again(few, tmp_path, monkeypatch):
    from assoc.testing.openai_server import ChatServer

    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    with ChatServer(responder=choice_responder(hashed)) as server:
        first = assoc.score("stereoset", few, ["chat:stand-in"], base_url=server.url, progress=False)
        sent = len(server.chat_requests())
        second = assoc.score("stereoset", few, ["chat:stand-in"], base_url=server.url, progress=False)
        assert len(server.chat_requests()) == sent == len(few.items)
    pd.testing.assert_frame_equal(first.reset_index(drop=True), second.reset_index(drop=True))
