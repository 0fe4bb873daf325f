"""The ``winobias`` scorer on a tiny masked LM, a tiny causal LM and the test chat server.

* Runs offline from the command line on each kind, and ``assoc analyze winobias`` reads its table.
* The two occupations' scores equal log P(occupation | context) from a forward pass written here (causal) and the
  PLL of the occupation's tokens with the context visible (masked), for a few sentences.
* The accuracies and gaps of the analysis on the scorer's table are recounted by hand from its values (the
  occupation of higher score; a tie: the first named); a chat model that always picks the occupation of the
  pronoun's gender is right on every pro-stereotyped sentence and wrong on every anti-stereotyped one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.testing import choice_responder, hashed
from assoc_bias_benchmarks.winobias.scorer import context_of

import assoc

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
#: The type-1 and type-2 dev conditions.
DEV = "winobias:pro_type1_dev,anti_type1_dev,pro_type2_dev,anti_type2_dev"


@pytest.fixture(scope="module")
def winobias() -> assoc.ItemStimuli:
    return assoc.Stimuli.load("winobias")


@pytest.mark.parametrize("kind", ["bert", "gpt2", "chat"])
def test_runs_from_the_command_line_on_each_kind(kind, tiny_bert, tiny_gpt2, run_cli, tmp_path, monkeypatch):
    from assoc.testing.openai_server import ChatServer

    monkeypatch.chdir(tmp_path)
    with ChatServer(responder=choice_responder(hashed)) as server:
        model = {"bert": tiny_bert, "gpt2": tiny_gpt2, "chat": "chat:stand-in"}[kind]
        extra = ["-o", f"base_url={server.url}"] if kind == "chat" else []
        run_cli(
            "score",
            "-s",
            "winobias",
            "-i",
            "winobias",
            "-m",
            model,
            "-o",
            "sample=2",
            *extra,
            "--no-progress",
            "--out",
            "t.csv",
        )
    run_cli("analyze", "winobias", "-t", "t.csv", "-o", "n_bootstrap=20", "--out", "r.csv")
    table, result = assoc.read_table("t.csv"), pd.read_csv("r.csv")
    expected = assoc.Stimuli.load("winobias").subset(sample=2, seed=0)
    assert list(dict.fromkeys(table["item_id"])) == [item.id for item in expected.items]  # 2 per condition
    assert table["item_id"].nunique() == 16 and len(table) == (16 if kind == "chat" else 32)
    assert set(table["method"]) == {{"bert": "pll", "gpt2": "log_prob", "chat": "choice"}[kind]}
    both = result[(result["type"].astype(str) == "all") & (result["split"] == "all")]
    assert len(both) == 1 and both["gap"].notna().all()


def test_scores_equal_a_forward_pass_and_plls(tiny_bert, tiny_gpt2, winobias, oracle):
    items = [winobias.items[0], winobias.items[400]]
    table = assoc.score(
        "winobias", assoc.ItemStimuli(items, name="two"), [tiny_gpt2, tiny_bert], progress=False, cache=False
    )
    for item in items:
        context = context_of(item)
        assert context == f"{item.derived['sentence']} ‘{item.derived['pronouns'][0].capitalize()}’ refers to the"
        causal = table[(table["item_id"] == item.id) & (table["model_kind"] == "causal")].sort_values("option")
        masked = table[(table["item_id"] == item.id) & (table["model_kind"] == "masked")].sort_values("option")
        assert list(causal["attribute"]) == list(item.options) and set(causal["context"]) == {context}
        assert list(causal["value"]) == pytest.approx(
            [oracle.causal_log_prob(tiny_gpt2, " " + o, context) for o in item.options], abs=1e-4
        )
        assert list(masked["value"]) == pytest.approx(
            [
                oracle.masked_pll(tiny_bert, context + " " + o, (len(context), len(context) + 1 + len(o)))
                for o in item.options
            ],
            abs=1e-4,
        )


def test_the_analysis_of_the_scorers_table_by_hand(tiny_gpt2):
    dev = assoc.Stimuli.load(DEV).subset(limit=6)
    table = assoc.score("winobias", dev, [tiny_gpt2], progress=False, cache=False)
    wide = table.pivot(index="item_id", columns="option", values="value")
    first = table.drop_duplicates("item_id").set_index("item_id").loc[wide.index]
    right = np.where(wide[1] > wide[0], 1, 0) == first["answer"].to_numpy()  # a tie: the first named
    result = assoc.analyze("winobias", table, n_bootstrap=0)
    for kind in (1, 2):
        row = result[(result["type"].astype(str) == str(kind)) & (result["split"] == "dev")].iloc[0]
        pro = right[(first["stereotype"] == "pro").to_numpy() & (first["type"] == kind).to_numpy()].mean()
        anti = right[(first["stereotype"] == "anti").to_numpy() & (first["type"] == kind).to_numpy()].mean()
        assert (row["accuracy_pro"], row["accuracy_anti"], row["gap"]) == pytest.approx((pro, anti, pro - anti))


def test_a_chat_model_that_follows_the_stereotype(winobias):
    from assoc.testing.openai_server import ChatServer

    dev = assoc.Stimuli.load(DEV).subset(limit=3)
    gender_of = {}
    for item in dev.items:
        for option, role in zip(item.options, item.derived["roles"]):
            gender_of[option] = role
    pronoun_gender = {item.derived["sentence"]: item.derived["pronoun_gender"] for item in dev.items}

    def stereotyped(message, options):  # the occupation whose majority gender is the pronoun's
        wanted = pronoun_gender[message.split("\n", 1)[0]]
        return next(k for k, option in enumerate(options) if gender_of[option.removeprefix("the ")] == wanted)

    with ChatServer(responder=choice_responder(stereotyped)) as server:
        table = assoc.score("winobias", dev, ["chat:stand-in"], base_url=server.url, progress=False, cache=False)
    assert (table["role"] == table["pronoun_gender"]).all()
    result = assoc.analyze("winobias", table, n_bootstrap=0)
    row = result[(result["type"].astype(str) == "all") & (result["split"] == "all")].iloc[0]
    assert (row["accuracy_pro"], row["accuracy_anti"], row["gap"]) == (1.0, 0.0, 1.0)


def test_item_counts_equal_the_files(tiny_gpt2):
    scorer = assoc.get_scorer("winobias")(cache=False)
    units = scorer.plan(assoc.Stimuli.load("winobias"), [tiny_gpt2])
    assert sum(u.size for u in units) == 3168  # eight files of 396 lines
    assert sum(u.size for u in scorer.plan(assoc.Stimuli.load(DEV), [tiny_gpt2])) == 4 * 396
