"""The ``winogender`` scorer on a tiny masked LM, a tiny causal LM and the test chat server.

* Runs offline from the command line on each kind (referent and pronoun items), and both analyses read its tables.
* lm-evaluation-harness 0.4.13's own ``winogender`` task objects (its installed YAML) build the same requests as the
  scorer (context and continuations, for every sentence scored) and, given the scorer's log-likelihoods, their
  ``process_results`` give the accuracies the ``winogender`` analysis gives on the scorer's table.
* With ``bos="tokenizer"`` the causal log-likelihoods equal lm-eval's own ``HFLM.loglikelihood`` on the same tiny
  model (slow: lm-eval's model class); with the default ``bos="auto"`` they equal a forward pass written here.
* The pronoun items' scores are each sentence's log P (causal) or PLL (masked), computed directly; a chat model's
  pronoun choices give ``winogender_occupations``'s share of female choices, recounted by hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.testing import choice_responder, first_named, hashed
from assoc_bias_benchmarks.winogender.scorer import blanked, lm_eval_context

import assoc
from assoc import StimuliError

torch = pytest.importorskip("torch")
#: Five occupations' pronoun items (a correlation needs four or more occupations).
FIVE = "winogender_pronouns:technician,nurse,engineer,secretary,carpenter"
transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def referent() -> assoc.ItemStimuli:
    return assoc.Stimuli.load("winogender")


@pytest.fixture(scope="module")
def pronouns() -> assoc.ItemStimuli:
    return assoc.Stimuli.load("winogender_pronouns")


# -- offline, from the command line, on every kind -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["bert", "gpt2", "chat"])
def test_runs_from_the_command_line_on_each_kind(kind, tiny_bert, tiny_gpt2, run_cli, tmp_path, monkeypatch):
    from assoc.testing.openai_server import ChatServer

    monkeypatch.chdir(tmp_path)
    with ChatServer(responder=choice_responder(hashed)) as server:
        model = {"bert": tiny_bert, "gpt2": tiny_gpt2, "chat": "chat:stand-in"}[kind]
        extra = ["-o", f"base_url={server.url}"] if kind == "chat" else []
        for stimuli, option, out in (("winogender", "limit=4", "referent.csv"), (FIVE, "sample=1", "pronoun.csv")):
            run_cli(
                "score",
                "-s",
                "winogender",
                "-i",
                stimuli,
                "-m",
                model,
                "-o",
                option,
                *extra,
                "--no-progress",
                "--out",
                out,
            )
    run_cli("analyze", "winogender", "-t", "referent.csv", "-o", "n_bootstrap=0", "--out", "accuracy.csv")
    run_cli("analyze", "winogender_occupations", "-t", "pronoun.csv", "--out", "r.csv")
    referent, pronoun = assoc.read_table("referent.csv"), assoc.read_table("pronoun.csv")
    assert referent["item_id"].nunique() == 12 and pronoun["item_id"].nunique() == 5  # 4 per gender; 1 per occupation
    method = {"bert": "pll", "gpt2": "log_prob", "chat": "choice"}[kind]
    assert set(referent["method"]) == set(pronoun["method"]) == {method}
    assert len(referent) == (12 if kind == "chat" else 24) and len(pronoun) == (5 if kind == "chat" else 15)
    assert set(pd.read_csv("accuracy.csv")["gender"]) >= {"all", "female", "male", "neutral"}
    correlations = pd.read_csv("r.csv")
    assert set(correlations["criterion"]) == {"bls_pct_female", "bergsma_pct_female"}
    expected = {"bert": "mean_female_minus_male", "gpt2": "mean_female_minus_male", "chat": "share_female"}[kind]
    assert set(correlations["measure"]) == {expected}


# -- lm-eval's task against the scorer's requests and log-likelihoods --------------------------------------------


def lm_eval_documents(items) -> list[dict]:
    return [
        {
            "sentid": i.id, "sentence": i.fields["sentence"], "pronoun": i.derived["pronoun"],
            "occupation": i.options[0], "participant": i.options[1], "gender": i.group, "label": i.answer,
        }
        for i in items
    ]  # fmt: skip


def test_accuracy_equals_lm_evals_task_on_the_scorers_log_likelihoods(tiny_gpt2, referent):
    datasets = pytest.importorskip("datasets")
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    chosen = referent.subset(limit=10)  # 10 sentences per pronoun gender
    table = assoc.score("winogender", chosen, [tiny_gpt2], progress=False, cache=False)
    scores = {k: part.sort_values("option") for k, part in table.groupby("item_id")}
    ours = assoc.analyze("winogender", table, n_bootstrap=0).set_index("lm_eval_task")
    documents = lm_eval_documents(chosen.items)
    task_dir = Path(lm_eval.__file__).parent / "tasks" / "winogender"
    for name in ("winogender", "winogender_female", "winogender_male", "winogender_neutral"):
        config = load_yaml(task_dir / f"{name}.yaml")
        config["custom_dataset"] = lambda **_: datasets.DatasetDict({"test": datasets.Dataset.from_list(documents)})
        task = ConfigurableTask(config=config)
        accs = []
        for doc in task.test_docs():
            rows = scores[doc["sentid"]]
            context = task.fewshot_context(doc, 0, gen_prefix=task.doc_to_prefix(doc))
            sent = [instance.arguments for instance in task.construct_requests(doc, context)]
            assert sent == [(c, " " + o) for c, o in zip(rows["context"], rows["attribute"])]  # what the scorer asked
            accs.append(task.process_results(doc, [(float(v), False) for v in rows["value"]])["acc"])
        assert ours.loc[config["task"], "accuracy"] == pytest.approx(float(np.mean(accs)), abs=1e-12), name
        assert ours.loc[config["task"], "n_scored"] == len(accs)


def test_log_likelihoods_equal_a_forward_pass_and_plls(tiny_gpt2, tiny_bert, referent, pronouns, oracle):
    items = [referent.items[0], referent.items[5]]
    table = assoc.score(
        "winogender", assoc.ItemStimuli(items, name="two"), [tiny_gpt2, tiny_bert], progress=False, cache=False
    )
    for item in items:
        rows = table[(table["item_id"] == item.id) & (table["model_kind"] == "causal")].sort_values("option")
        expected = [oracle.causal_log_prob(tiny_gpt2, " " + option, lm_eval_context(item)) for option in item.options]
        assert list(rows["value"]) == pytest.approx(expected, abs=1e-4)
        assert set(rows["measure"]) == {"log_prob_given_context"}
    picked = assoc.ItemStimuli([pronouns.items[3]], name="one")
    both = assoc.score("winogender", picked, [tiny_gpt2, tiny_bert], progress=False, cache=False)
    causal = both[both["model_kind"] == "causal"].sort_values("option")
    masked = both[both["model_kind"] == "masked"].sort_values("option")
    assert list(causal["role"]) == ["female", "male", "neutral"] and set(causal["measure"]) == {"log_prob"}
    assert list(causal["value"]) == pytest.approx(
        [oracle.causal_log_prob(tiny_gpt2, s) for s in picked.items[0].options], abs=1e-4
    )
    assert set(masked["measure"]) == {"pll"}
    assert list(masked["value"]) == pytest.approx(
        [oracle.masked_pll(tiny_bert, s) for s in picked.items[0].options], abs=1e-4
    )


@pytest.mark.slow
def test_with_the_tokenizers_bos_the_log_likelihoods_are_lm_evals_hflm(tiny_gpt2, referent):
    """lm-eval scores a non-empty context without a start token: bos='tokenizer' is its convention for GPT-2."""
    pytest.importorskip("accelerate")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    items = referent.subset(limit=2).items
    table = assoc.score(
        "winogender", assoc.ItemStimuli(items, name="six"), [tiny_gpt2], bos="tokenizer", progress=False
    )
    model = HFLM(pretrained=tiny_gpt2, device="cpu", batch_size=1)
    requests = [
        Instance(request_type="loglikelihood", doc={}, arguments=(lm_eval_context(item), " " + option), idx=k)
        for item in items
        for k, option in enumerate(item.options)
    ]
    theirs = [value for value, _ in model.loglikelihood(requests)]
    ours = [table[table["item_id"] == item.id].sort_values("option")["value"].tolist() for item in items]
    assert [v for pair in ours for v in pair] == pytest.approx(theirs, abs=1e-4)


# -- chat models ----------------------------------------------------------------------------------------------


def test_a_chat_models_referent_and_pronoun_choices(referent, pronouns):
    from assoc.testing.openai_server import ChatServer

    chosen = referent.subset(limit=3)
    occupation_of = {item.fields["sentence"]: item.derived["occupation"] for item in chosen.items}

    def occupation_when_she(message, options):  # a stand-in resolving "she"/"her" to the occupation, others not
        sentence, asked = message.split("\n", 1)[0], message.split("who does “", 1)[1].split("”", 1)[0]
        occupation = options.index(f"the {occupation_of[sentence]}")
        return occupation if asked in ("she", "her") else 1 - occupation

    with ChatServer(responder=choice_responder(occupation_when_she)) as server:
        table = assoc.score("winogender", chosen, ["chat:stand-in"], base_url=server.url, progress=False, cache=False)
        server.responder = choice_responder(first_named("she", "her"))
        pronoun_table = assoc.score(
            "winogender", pronouns.subset(limit=1), ["chat:stand-in"], base_url=server.url, progress=False, cache=False
        )
    by_id = table.set_index("item_id")
    for item in chosen.items:
        expected = "occupation" if item.derived["pronoun"] in ("she", "her") else "participant"
        assert by_id.loc[item.id, "role"] == expected
    accuracy = assoc.analyze("winogender", table, n_bootstrap=0).set_index("lm_eval_task")
    right = [by_id.loc[i.id, "option"] == i.answer for i in chosen.items]
    assert accuracy.loc["winogender_all", "accuracy"] == pytest.approx(np.mean(right))
    assert set(pronoun_table["role"]) == {"female"}  # "she"/"her" is always shown, and always picked
    shares = assoc.analyze("winogender_occupations", pronoun_table, output="occupations")
    assert set(shares["measure"]) == {"share_female"} and (shares["value"] == 1.0).all() and len(shares) == 60


def test_the_pronoun_blank_and_its_fillers(pronouns):
    assert blanked(pronouns.items[0].options) == (
        "The technician told the customer that _____ could pay with cash.",
        ("she", "he", "they"),
    )
    agreeing = next(i for i in pronouns.items if "they were" in i.options[2])
    blank, fillers = blanked(agreeing.options)
    assert fillers == ("she was", "he was", "they were") and blank.count("_____") == 1
    for item in pronouns.items:  # every item: one blank, and the three sentences rebuilt from it
        blank, fillers = blanked(item.options)
        assert tuple(blank.replace("_____", f) for f in fillers) == item.options


def test_other_benchmarks_items_are_refused_before_any_work(tiny_gpt2):
    with pytest.raises(StimuliError, match="scorer 'winogender' reads Winogender items"):
        assoc.score("winogender", "stereoset", [tiny_gpt2], progress=False, cache=False)
    with pytest.raises(StimuliError, match="reads benchmark items"):
        assoc.score("winogender", "caliskan:weat1", [tiny_gpt2], progress=False, cache=False)


def test_item_counts_equal_the_files(tiny_gpt2):
    scorer = assoc.get_scorer("winogender")(cache=False)
    assert sum(u.size for u in scorer.plan(assoc.Stimuli.load("winogender"), [tiny_gpt2])) == 720
    assert sum(u.size for u in scorer.plan(assoc.Stimuli.load("winogender_pronouns"), [tiny_gpt2])) == 240
