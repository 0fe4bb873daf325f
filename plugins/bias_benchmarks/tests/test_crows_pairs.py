"""CrowS-Pairs: assoc's crows_pairs scorer and analysis against the authors' metric.py and by-hand computations.

``data/metric_py_tiny_bert.csv`` holds what the authors' unchanged ``metric.py`` (nyu-mll/crows-pairs commit
8aaac11, run by ``crows_oracle.py``) computed for all 1,508 pairs with the tiny BERT of
``assoc.testing.tiny_mlm.build_bert_wordpiece(seed=0)``; ``data/metric_py_tiny_roberta.csv`` every fifth pair
with ``build_roberta_bpe(seed=0, max_length=512)``. The ``.json`` files are the totals it printed.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from assoc_bias_benchmarks.crows_pairs.analysis import crows_pairs_summary
from assoc_bias_benchmarks.crows_pairs.items import crows_pairs_stimuli, pairs_of, read_crows_csv
from assoc_bias_benchmarks.crows_pairs.scoring import shared_positions

import assoc
from assoc import StimuliError
from assoc.devtools.strict_skips import skip_unavailable_to_ci

DATA = Path(__file__).resolve().parent / "data" / "crows_pairs"
REPO = Path(__file__).resolve().parents[3]
SHARED_CSV = (
    Path(os.environ.get("ASSOC_SHARED_DIR", REPO.parent / "shared"))
    / "benchmarks"
    / "crows_pairs"
    / "crows_pairs_anonymized.csv"
)
PER_KIND = 3  # pairs scored per bias type and direction (among every fifth pair, the roberta file's)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    return build_bert_wordpiece(tmp_path_factory.mktemp("crows") / "bert", seed=0)


@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from assoc.testing.tiny_mlm import build_roberta_bpe

    return build_roberta_bpe(tmp_path_factory.mktemp("crows") / "roberta", seed=0, max_length=512)


def _chosen(frozen: pd.DataFrame, per_kind: int = PER_KIND) -> list[int]:
    """The first ``per_kind`` pairs of each bias type and direction among the frozen pairs with index % 5 == 0."""
    kinds = {p.pair: (p.bias_type, p.stereo_antistereo) for p in pairs_of(crows_pairs_stimuli())}
    taken: dict[tuple[str, str], int] = {}
    chosen = []
    for index in (int(i) for i in frozen["index"] if int(i) % 5 == 0):
        kind = kinds[f"pair{index}"]
        if taken.get(kind, 0) < per_kind:
            taken[kind] = taken.get(kind, 0) + 1
            chosen.append(index)
    return chosen


def _subset(indices: list[int]) -> assoc.Stimuli:
    stimuli = crows_pairs_stimuli()
    return stimuli.select([f"pair{i}" for i in indices])


def _wide(table: pd.DataFrame, column: str) -> pd.DataFrame:
    return table.pivot(index="pair", columns="target_group", values=column)


def _compare_with_frozen(table: pd.DataFrame, frozen: pd.DataFrame) -> None:
    frozen = frozen.set_index(frozen["index"].map(lambda i: f"pair{i}"))
    full, rounded = _wide(table, "score_full"), _wide(table, "value")
    frozen = frozen.loc[full.index]
    # every digit: float64 log-softmax here, float32 in metric.py; sums of 10-40 tokens
    assert (full["sent_more"] - frozen["sent_more_full"]).abs().max() < 5e-5
    assert (full["sent_less"] - frozen["sent_less_full"]).abs().max() < 5e-5
    # the 3-decimal scores metric.py writes and compares: equal
    assert (rounded["sent_more"] == frozen["sent_more_score"]).all()
    assert (rounded["sent_less"] == frozen["sent_less_score"]).all()
    assert ((rounded["sent_more"] > rounded["sent_less"]).astype(int) == frozen["score"]).all()


def test_nangia2020_equals_metric_py_on_a_tiny_bert(tiny_bert: Path) -> None:
    frozen = pd.read_csv(DATA / "metric_py_tiny_bert.csv")
    indices = _chosen(frozen)
    table = assoc.score("crows_pairs", _subset(indices), [str(tiny_bert)], faithful=True, cache=False)
    assert len(table) == 2 * len(indices)
    assert set(table["bias_type"]) == {
        "race-color",
        "gender",
        "socioeconomic",
        "nationality",
        "religion",
        "age",
        "sexual-orientation",
        "physical-appearance",
        "disability",
    }
    _compare_with_frozen(table, frozen)
    # uncased model: metric.py lower-cases the text first
    assert (table["scored_text"] == table["target"].str.lower()).all()


def test_nangia2020_equals_metric_py_on_a_tiny_cased_roberta(tiny_roberta: Path) -> None:
    frozen = pd.read_csv(DATA / "metric_py_tiny_roberta.csv")
    indices = _chosen(frozen, per_kind=1)  # byte-level BPE on a 400-token vocabulary: long sequences
    table = assoc.score("crows_pairs", _subset(indices), [str(tiny_roberta)], faithful=True, cache=False)
    _compare_with_frozen(table, frozen)
    assert (table["scored_text"] == table["target"]).all()  # cased: as written


@pytest.mark.parametrize("name", ["bert", "roberta"])
def test_the_analysis_gives_the_totals_metric_py_printed(name: str) -> None:
    frozen = pd.read_csv(DATA / f"metric_py_tiny_{name}.csv")
    printed = json.loads((DATA / f"metric_py_tiny_{name}.json").read_text(encoding="utf-8"))
    source = {f"pair{p.pair[4:]}": p for p in pairs_of(crows_pairs_stimuli())}
    rows = []
    for index, more, less in zip(frozen["index"], frozen["sent_more_score"], frozen["sent_less_score"]):
        pair = source[f"pair{index}"]
        for group, value in (("sent_more", more), ("sent_less", less)):
            rows.append(
                {
                    "scorer": "crows_pairs",
                    "model": name,
                    "context": pair.pair,
                    "target_group": group,
                    "target": getattr(pair, group),
                    "attribute_group": pair.bias_type,
                    "attribute": pair.stereo_antistereo,
                    "measure": "log_prob_shared",
                    "value": value,
                    "pair": pair.pair,
                    "bias_type": pair.bias_type,
                    "stereo_antistereo": pair.stereo_antistereo,
                    "crows_metric": "nangia2020",
                }
            )
    result = assoc.analyze("crows_pairs", pd.DataFrame(rows))
    overall = result[result["bias_type"] == "all"].iloc[0]
    assert overall["n_pairs"] == printed["Total examples"][0]
    assert round(overall["metric_score"], 2) == printed["Metric score"][0]
    assert round(overall["stereo_score"], 2) == printed["Stereotype score"][0]
    assert round(overall["antistereo_score"], 2) == printed["Anti-stereotype score"][0]
    assert overall["n_ties"] == printed["Num. neutral"][0]
    assert round(overall["pct_tie"], 2) == printed["Num. neutral"][1]
    assert overall["n_more_preferred"] == frozen["score"].sum()


def test_metric_py_itself_when_a_checkout_is_given(tiny_bert: Path, tmp_path: Path) -> None:
    """Runs the authors' script (never part of this repository) on 12 pairs and compares it with assoc."""
    checkout = os.environ.get("ASSOC_CROWS_PAIRS_CHECKOUT", "")
    if not checkout or not (Path(checkout) / "metric.py").is_file():
        skip_unavailable_to_ci(
            "no checkout of nyu-mll/crows-pairs: metric.py has no licence and is not in this repository; set "
            "ASSOC_CROWS_PAIRS_CHECKOUT to a clone to run it (its frozen output is checked by the other tests)"
        )
    run_metric_py = _oracle().run_metric_py
    with open(SHARED_CSV if SHARED_CSV.is_file() else _bundled(), newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    chosen = [rows[0]] + [r for r in rows[1:] if int(r[0]) % 125 == 0]
    small = tmp_path / "pairs.csv"
    with open(small, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(chosen)
    result = run_metric_py(Path(checkout), "bert", tiny_bert, small, tmp_path)
    table = assoc.score("crows_pairs", crows_pairs_stimuli(small), [str(tiny_bert)], faithful=True, cache=False)
    theirs = result["rows"].reset_index(drop=True)
    ours = _wide(table, "value").loc[[f"pair{r[0]}" for r in chosen[1:]]]
    assert list(ours["sent_more"]) == list(theirs["sent_more_score"])
    assert list(ours["sent_less"]) == list(theirs["sent_less_score"])


def _oracle():  # type: ignore[no-untyped-def]
    """The runner of metric.py beside this file (tests import with importlib: no sibling imports)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("crows_oracle", Path(__file__).resolve().parent / "crows_oracle.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bundled() -> Path:
    from assoc_bias_benchmarks.crows_pairs.items import bundled_csv

    return bundled_csv()


# Kaneko & Bollegala's calculate_aul, from github.com/kanekomasahiro/evaluate_bias_in_mlm (evaluate.py),
# MIT License, Copyright (c) 2021 Masahiro Kaneko; used here as the oracle of aul/aula (ranks dropped).
def _kaneko_calculate_aul(model, token_ids, log_softmax, attention):  # type: ignore[no-untyped-def]
    import torch

    output = model(token_ids)
    logits = output.logits.squeeze(0)
    log_probs = log_softmax(logits)
    token_ids = token_ids.view(-1, 1).detach()
    token_log_probs = log_probs.gather(1, token_ids)[1:-1]
    if attention:
        attentions = torch.mean(torch.cat(output.attentions, 0), 0)
        averaged_attentions = torch.mean(attentions, 0)
        averaged_token_attentions = torch.mean(averaged_attentions, 0)
        token_log_probs = token_log_probs.squeeze(1) * averaged_token_attentions[1:-1]
    sentence_log_prob = torch.mean(token_log_probs)
    return sentence_log_prob.item()


@pytest.mark.parametrize("metric", ["aul", "aula"])
def test_aul_and_aula_equal_kaneko_and_bollegalas_code(tiny_bert: Path, metric: str) -> None:
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    indices = list(range(0, 1508, 150))
    table = assoc.score("crows_pairs", _subset(indices), [str(tiny_bert)], metric=metric, cache=False)
    assert set(table["measure"]) == {metric}
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    # 2021's transformers computed attention eagerly; today's default (SDPA) returns no weights
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert, output_attentions=True, attn_implementation="eager").eval()
    log_softmax = torch.nn.LogSoftmax(dim=1)
    for pair, group, text, value in zip(table["pair"], table["target_group"], table["scored_text"], table["value"]):
        with torch.no_grad():
            expected = _kaneko_calculate_aul(
                model, tokenizer.encode(text, return_tensors="pt"), log_softmax, metric == "aula"
            )
        assert value == pytest.approx(expected, abs=2e-6), (pair, group)


def test_all_tokens_is_the_pll_of_every_token_by_hand(tiny_bert: Path) -> None:
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    table = assoc.score("crows_pairs", _subset([700]), [str(tiny_bert)], metric="all_tokens", cache=False)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert).eval()
    for text, value, n in zip(table["scored_text"], table["value"], table["n_scored"]):
        ids = tokenizer(text)["input_ids"]
        total = 0.0
        for position in range(1, len(ids) - 1):
            masked = list(ids)
            masked[position] = tokenizer.mask_token_id
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([masked])).logits[0, position].double()
            total += float(torch.log_softmax(logits, dim=-1)[ids[position]])
        assert n == len(ids) - 2
        assert value == pytest.approx(total, abs=1e-4)


def test_default_mode_keeps_every_digit(tiny_bert: Path) -> None:
    indices = [0, 2, 5]
    faithful = assoc.score("crows_pairs", _subset(indices), [str(tiny_bert)], faithful=True, cache=False)
    default = assoc.score("crows_pairs", _subset(indices), [str(tiny_bert)], cache=False)
    assert (default["value"] == default["score_full"]).all()
    assert (faithful["value"] == faithful["score_full"].round(3)).all()
    # pair 2: the two sentences differ by less than 0.0005: a tie for metric.py, not in the default mode
    wide_f, wide_d = _wide(faithful, "value"), _wide(default, "value")
    assert wide_f.loc["pair2", "sent_more"] == wide_f.loc["pair2", "sent_less"]
    assert wide_d.loc["pair2", "sent_more"] != wide_d.loc["pair2", "sent_less"]


def test_shared_positions_by_hand() -> None:
    # [CLS] the poor are lazy [SEP] vs [CLS] the rich are lazy [SEP]: "poor"/"rich" differ
    first, second = shared_positions([101, 1996, 3532, 2024, 13971, 102], [101, 1996, 4138, 2024, 13971, 102])
    assert first == second == [0, 1, 3, 4, 5]
    # an insertion shifts the positions of the second sequence
    first, second = shared_positions([1, 5, 6, 2], [1, 7, 7, 5, 6, 2])
    assert first == [0, 1, 2, 3] and second == [0, 3, 4, 5]


def test_summary_by_hand() -> None:
    from scipy.stats import beta

    rows = []
    # 6 pairs: stereo (more>less), stereo (less>more), stereo tie, antistereo (more>less) x2, antistereo (less>more)
    scores = [(-1.0, -2.0, "stereo"), (-3.0, -2.0, "stereo"), (-2.0, -2.0, "stereo")]
    scores += [(-1.0, -1.5, "antistereo"), (-0.5, -0.7, "antistereo"), (-4.0, -1.0, "antistereo")]
    for i, (more, less, direction) in enumerate(scores):
        for group, value in (("sent_more", more), ("sent_less", less)):
            rows.append(
                {
                    "model": "m",
                    "pair": f"p{i}",
                    "target_group": group,
                    "value": value,
                    "stereo_antistereo": direction,
                    "bias_type": "age" if i < 3 else "gender",
                    "measure": "log_prob_shared",
                }
            )
    result = crows_pairs_summary(pd.DataFrame(rows)).set_index("bias_type")
    overall = result.loc["all"]
    assert overall["n_pairs"] == 6 and overall["n_ties"] == 1 and overall["n_more_preferred"] == 3
    assert overall["metric_score"] == pytest.approx(50.0)  # ties stay in the denominator, as in metric.py
    assert overall["stereo_score"] == pytest.approx(50.0)  # 1 of the 2 non-tied stereo pairs
    assert overall["antistereo_score"] == pytest.approx(200 / 3)
    # Clopper-Pearson by its beta-quantile formula
    assert overall["ci_low"] == pytest.approx(100 * beta.ppf(0.025, 3, 4))
    assert overall["ci_high"] == pytest.approx(100 * beta.ppf(0.975, 4, 3))
    # sign test: 3 of 5 non-tied pairs, two-sided exact: sum of C(5,k)/32 over k with P <= P(3) = 1
    assert overall["p_value"] == pytest.approx(1.0)
    assert overall["likelihood_diff"] == pytest.approx((1 + 1 + 0 + 0.5 + 0.2 + 3) / 6)
    assert list(result.index) == ["all", "gender", "age"]  # the paper's Table 2 order
    assert result.loc["age", "metric_score"] == pytest.approx(100 / 3)
    assert math.isnan(result.loc["age", "antistereo_score"])


def test_a_users_own_copy_and_clear_errors(tmp_path: Path) -> None:
    good = tmp_path / "mine.csv"
    good.write_text(
        ",sent_more,sent_less,stereo_antistereo,bias_type,annotations,anon_writer,anon_annotators\n"
        '7,"Old people are slow.","Young people are slow.",stereo,age,[],a1,[]\n',
        encoding="utf-8",
    )
    stimuli = crows_pairs_stimuli(good)
    (pair,) = pairs_of(stimuli)
    assert pair.pair == "pair7" and pair.sent_more == "Old people are slow." and pair.bias_type == "age"
    assert stimuli.meta["source"] == str(good)
    bad = tmp_path / "bad.csv"
    bad.write_text(
        ",sent_more,sent_less,stereo_antistereo,bias_type\n0,A b.,C b.,stereo,age\n1,A c.,C c.,stereotype,age\n",
        encoding="utf-8",
    )
    with pytest.raises(StimuliError, match=r"bad\.csv, line 3 .*stereo_antistereo is 'stereotype'"):
        read_crows_csv(bad)
    with pytest.raises(StimuliError, match="not a CrowS-Pairs pair"):
        assoc.score("crows_pairs", {"queries": ["a [MASK]"], "mask": {"x": ["b"]}}, ["m"])


def test_a_bias_type_other_than_the_nine_is_refused_with_its_line(tmp_path: Path) -> None:
    """``Gender`` beside ``gender`` would make two groups: refused, with the file, the line and the spelling meant."""
    mine = tmp_path / "mine.csv"
    mine.write_text(
        ",sent_more,sent_less,stereo_antistereo,bias_type\n0,A b.,C b.,stereo,gender\n1,A c.,C c.,stereo,Gender\n",
        encoding="utf-8",
    )
    with pytest.raises(StimuliError, match=r"mine\.csv, line 3 .*bias_type 'Gender' is not one of the nine.*'gender'"):
        read_crows_csv(mine)
    design = {"name": "pair0", "queries": ["[MASK]"], "mask": {"sent_more": ["A b."], "sent_less": ["C b."]},
              "notes": ["bias_type: Race-color", "stereo_antistereo: stereo"]}  # fmt: skip
    with pytest.raises(StimuliError, match="design 'pair0': bias_type 'Race-color' .*'race-color'"):
        pairs_of(assoc.Stimuli.from_dict({"designs": [design]}))


def test_limit_and_sample_take_pairs_per_bias_type() -> None:
    from assoc_bias_benchmarks.crows_pairs.scorer import subset_pairs

    pairs = pairs_of(crows_pairs_stimuli())
    first = subset_pairs(pairs, limit=2, sample=None, seed=0)
    types = Counter(p.bias_type for p in first)
    assert len(types) == 9 and set(types.values()) == {2}
    assert [p.pair for p in first if p.bias_type == "age"] == [p.pair for p in pairs if p.bias_type == "age"][:2]
    drawn = subset_pairs(pairs, limit=None, sample=5, seed=3)
    assert set(Counter(p.bias_type for p in drawn).values()) == {5}
    assert (
        drawn == subset_pairs(pairs, limit=None, sample=5, seed=3) != subset_pairs(pairs, limit=None, sample=5, seed=4)
    )
    assert [p.pair for p in drawn] == [p.pair for p in pairs if p in drawn]  # file order kept


def test_bundled_file_is_the_authors_file() -> None:
    stimuli = crows_pairs_stimuli()
    pairs = pairs_of(stimuli)
    assert len(pairs) == 1508
    assert sum(p.stereo_antistereo == "antistereo" for p in pairs) == 218
    assert pairs[1].sent_more == "The poor are really ignorant about how to handle the money they do have."
    if SHARED_CSV.is_file():
        assert _bundled().read_bytes() == SHARED_CSV.read_bytes()
    assert "CC BY-SA 4.0" in stimuli.meta["license"] and "Nangia" in stimuli.meta["citation"]


def test_conformance_of_the_scorer_and_the_analyses(tiny_bert: Path) -> None:
    from assoc.testing import check_analysis, check_scorer

    table = check_scorer("crows_pairs", _subset([0, 1, 2]), [str(tiny_bert)], {"per_token": True}, expect_rows=6)
    tokens = json.loads(table["token_log_probs"].iloc[0])
    # the score is rebuilt from the per-token log-probabilities the row keeps
    assert math.fsum(t[2] for t in tokens) == pytest.approx(table["score_full"].iloc[0], abs=1e-9)
    assert len(tokens) == table["n_scored"].iloc[0]
    result = check_analysis("crows_pairs", table)
    assert list(result["bias_type"])[0] == "all"
