"""What the StereoSet, Winogender and WinoBias scorers share (``assoc_bias_benchmarks.choice_scorer``).

* They use the request kinds only: a model kind registered in this process (a toy, as an inference server's kind
  would be) runs all three unchanged, with option rows from its ``sentence``/``continuation`` answers, or choice
  rows when it serves ``choice`` alone; a kind that serves no ``choice`` is refused before any work, in one line.
* The seeded subsets, the shown order of a chat form and the run report's counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from assoc_bias_benchmarks.choice_scorer import SUBSET_OPTIONS, chat_message, shown_order
from assoc_bias_benchmarks.stereoset.scorer import StereoSetScorer

import assoc
from assoc import ModelError, plugins
from assoc.lm import Choice, LanguageModel, LogProb


class Lengths(LanguageModel):
    """A toy likelihood kind: log P(text) = -len(text) (a continuation: its own length), specs ``lengths:<name>``."""

    kind, prefix, serves = "lengths", "lengths", frozenset({"sentence", "continuation", "choice"})

    @classmethod
    def open(cls, spec: str, options: Any, cache: Any) -> Lengths:
        model = cls()
        model.name, model.fingerprint = spec, spec
        return model

    def sentence(self, requests: Any, *, checkpoints: Any = None, progress: bool = False) -> list[LogProb]:
        return [LogProb(-float(len(r.text)), len(r.text)) for r in requests]

    def continuation(self, requests: Any, *, checkpoints: Any = None, progress: bool = False) -> list[LogProb]:
        return [LogProb(-float(len(r.continuation)), len(r.continuation)) for r in requests]


class Last(LanguageModel):
    """A toy kind that answers choice requests only: always the last option shown (specs ``last:<name>``)."""

    kind, prefix, serves = "last", "last", frozenset({"choice"})

    @classmethod
    def open(cls, spec: str, options: Any, cache: Any) -> Last:
        model = cls()
        model.name, model.fingerprint = spec, spec
        return model

    def choose(self, requests: Any, *, checkpoints: Any = None, progress: bool = False) -> list[Choice]:
        assert all(r.messages and r.labels for r in requests)  # the chat form, with its letters
        return [Choice(len(r.options) - 1, reason="last") for r in requests]


class Writer(LanguageModel):
    """A toy kind that only writes replies (``generate``): no benchmark scorer can ask it anything."""

    kind, prefix, serves = "writer", "writer", frozenset({"generate"})

    @classmethod
    def open(cls, spec: str, options: Any, cache: Any) -> Writer:
        raise AssertionError("a model the scorer refuses is never opened")


@pytest.fixture
def toy_kinds() -> Iterator[None]:
    class Plugin:
        @assoc.hookimpl
        def register_model_kinds(self, register: Any) -> None:
            for kind in (Lengths, Last, Writer):
                register(kind)

    plugins.reset()
    info = plugins.register(Plugin(), name="toy-kinds")
    assert info.status == "loaded", info.error
    yield
    plugins.reset()


@pytest.mark.usefixtures("toy_kinds")
@pytest.mark.parametrize(
    ("scorer", "stimuli"), [("stereoset", "stereoset"), ("winogender", "winogender"), ("winobias", "winobias")]
)
def test_a_kind_registered_by_a_plugin_runs_every_benchmark_unchanged(scorer, stimuli):
    table = assoc.score(scorer, stimuli, ["lengths:toy", "last:toy"], limit=1, progress=False, cache=False)
    scores, choices = table[table["model"] == "lengths:toy"], table[table["model"] == "last:toy"]
    assert set(scores["method"]) == {"log_prob"} and set(scores["model_kind"]) == {"lengths"}
    assert set(choices["method"]) == {"choice"} and (choices["value"] == 1).all()
    assert len(scores) == len(choices) * len(assoc.Stimuli.load(stimuli).items[0].options)
    for _, row in scores.iterrows():  # what the toy kind answered: minus the scored text's length
        scored = (
            row["attribute"] if scorer == "stereoset" and row["split"] == "intrasentence" else " " + row["attribute"]
        )
        assert row["value"] == -len(scored)
    for _, row in choices.iterrows():  # the last option shown, read back into the item's order
        assert row["option"] == int(row["options_shown"].split(",")[-1])


@pytest.mark.usefixtures("toy_kinds")
def test_a_kind_that_serves_no_choice_is_refused_before_any_work():
    with pytest.raises(ModelError) as caught:
        assoc.score("winobias", "winobias", ["writer:toy"], progress=False, cache=False)
    message = str(caught.value)
    assert "\n" not in message and "scorer 'winobias' takes" in message and "writer" in message


def test_subsets_are_seeded_per_group_and_recorded():
    scorer = StereoSetScorer(sample=3, sample_seed=5, cache=False)
    blocks = scorer.unit_blocks(assoc.Stimuli.load("stereoset"), [])
    ids = [record["id"] for payload, _ in blocks for record in payload]
    expected = assoc.Stimuli.load("stereoset").subset(sample=3, seed=5)
    assert ids == [item.id for item in expected.items] and len(ids) == 12
    assert scorer._subset == {"items": 12, "limit": None, "sample": 3, "sample_seed": 5}
    assert [o.name for o in SUBSET_OPTIONS] == ["limit", "sample", "sample_seed"]
    assert all(o.name in {p.name for p in StereoSetScorer.options} for o in SUBSET_OPTIONS)


def test_the_shown_order_is_fixed_per_item_and_the_message_shows_it():
    from assoc_bias_benchmarks.choice_scorer import ChoiceForm

    orders = {shown_order(f"item-{k}", 3, "shuffled") for k in range(30)}
    assert len(orders) == 6 and all(sorted(o) == [0, 1, 2] for o in orders)  # every permutation occurs
    assert shown_order("item-1", 3, "shuffled") == shown_order("item-1", 3, "shuffled")
    assert shown_order("item-1", 3, "original") == (0, 1, 2)
    form = ChoiceForm("Q?", ("x", "y", "z"))
    assert chat_message(form, (2, 0, 1)) == "Q?\n\nA. z\nB. x\nC. y\n\nAnswer with the letter of one option only."


@pytest.mark.usefixtures("toy_kinds")
def test_the_run_report_counts_every_row_without_a_value():
    class Partial(Lengths):
        kind, prefix = "partial", "partial"

        def continuation(self, requests: Any, *, checkpoints: Any = None, progress: bool = False) -> list[LogProb]:
            return [
                LogProb.missing("too_long", "too long for the toy") if "designer" in r.continuation else
                LogProb(-float(len(r.continuation)), 1)
                for r in requests
            ]  # fmt: skip

    class Plugin:
        @assoc.hookimpl
        def register_model_kinds(self, register: Any) -> None:
            register(Partial)

    plugins.register(Plugin(), name="partial-kind")
    table = assoc.score("winobias", "winobias", ["partial:toy"], limit=5, progress=False, cache=False)
    missing = table[table["status"] != "ok"]
    assert len(missing) > 0 and set(missing["attribute"]) == {"designer"} and missing["value"].isna().all()
    assert set(missing["reason"]) == {"too long for the toy"}
    run = table.assoc.provenance["run"]
    assert run["runs"] == [
        {
            "model": "partial:toy", "model_kind": "partial", "method": "log_prob", "rows": 80, "items": 40,
            "measures": {"log_prob_given_context": 80}, "without_value": {"too_long": len(missing)},
        }
    ]  # fmt: skip
    assert run["nan_values"] == len(missing)
    result = assoc.analyze("winobias", table, n_bootstrap=0)
    row = result[(result["type"].astype(str) == "all") & (result["split"] == "all")].iloc[0]
    assert row["n_left_out_pro"] + row["n_left_out_anti"] == missing["item_id"].nunique()
    assert not math.isnan(row["gap"])
