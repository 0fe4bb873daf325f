"""StereoSet: the reader against the files, the analysis against the authors' evaluation.py and by hand.

* ``tests/data/stereoset`` holds what the authors' ``code/evaluation.py`` (moinnadeem/StereoSet ``ead7d08``, run
  unchanged) computed from seeded per-sentence scores of all 4,229 items (see its README): assoc's analysis of a
  table built from the same scores must give every number it printed, and its per-target counts.
* Small tables are computed by hand for the conventions evaluation.py does not have (ties, NaN, chat choices).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.choice_table import EXTRA_COLUMNS, choice_row, option_rows
from assoc_bias_benchmarks.stereoset import items as stereoset_items

import assoc
from assoc import StimuliError

HERE = Path(__file__).parent
FROZEN = HERE / "data" / "stereoset"
REPO = HERE.parents[2]
SHARED = Path(os.environ.get("ASSOC_SHARED_DIR", REPO.parent / "shared")) / "benchmarks" / "stereoset"


@pytest.fixture(scope="module")
def bundled() -> assoc.ItemStimuli:
    return assoc.Stimuli.load("stereoset")


@pytest.fixture(scope="module")
def frozen_table(bundled) -> pd.DataFrame:
    """The frozen per-sentence scores as a stereoset table (item ids of the shared file: the refs-bench scheme)."""
    scores = pd.read_csv(FROZEN / "items.csv.gz")
    by_id = {item.id: item for item in bundled.items}
    rows = []
    for row in scores.itertuples():
        rows += option_rows(
            by_id[row.item_id],
            [row.score_stereotype, row.score_anti_stereotype, row.score_unrelated],
            model="synthetic", model_kind="causal", method="frozen", measure="log_prob",
        )  # fmt: skip
    return assoc.from_records(rows, scorer="stereoset", extra_columns=list(EXTRA_COLUMNS))


# -- the items ---------------------------------------------------------------------------------------


def test_item_counts_equal_the_files(bundled):
    with gzip.open(stereoset_items.bundled_file(), "rt", encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    assert len(bundled.items) == len(lines) == 4229
    counts = pd.Series([(i.derived["split"], i.group) for i in bundled.items]).value_counts()
    # the shared README's table (the authors' counts divided by 3)
    expected = {
        ("intrasentence", "gender"): 255, ("intersentence", "gender"): 242,
        ("intrasentence", "profession"): 810, ("intersentence", "profession"): 827,
        ("intrasentence", "race"): 962, ("intersentence", "race"): 976,
        ("intrasentence", "religion"): 79, ("intersentence", "religion"): 78,
    }  # fmt: skip
    assert counts.to_dict() == expected
    assert len(assoc.Stimuli.load("stereoset_intrasentence").items) == 2106
    assert len(assoc.Stimuli.load("stereoset_intersentence").items) == 2123


def test_ids_are_the_frozen_references_ids(bundled):
    frozen = pd.read_csv(FROZEN / "items.csv.gz")
    assert [i.id for i in bundled.items] == list(frozen["item_id"])
    assert [i.line for i in bundled.items] == list(frozen["line"])
    first = bundled.items[0]
    canonical = json.dumps(dict(first.fields), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert first.id == hashlib.sha256(canonical.encode()).hexdigest()[:32]
    assert first.derived["sentence_ids"][1] == hashlib.sha256(f"{first.id}:anti-stereotype".encode()).hexdigest()[:32]
    assert first.options == tuple(first.fields[r] for r in ("stereotype", "anti-stereotype", "unrelated"))


def test_the_bundled_copy_is_the_shared_file():
    if not SHARED.is_dir():
        pytest.skip("the shared benchmarks folder (../shared beside the repository) is not on this machine")
    for name in ("test.jsonl.gz", "LICENSE.md"):
        shared = SHARED / ("data" if name.endswith(".gz") else "") / name
        assert (stereoset_items.bundled_file().parent / name).read_bytes() == shared.read_bytes(), name


def test_blank_fills_and_the_authors_template_words(bundled):
    intra = [i for i in bundled.items if i.derived["split"] == "intrasentence"]
    differ = [(i, k) for i in intra for k in range(3) if i.derived["fills"][k] != i.derived["template_words"][k]]
    assert all(f is not None for i in intra for f in i.derived["fills"])
    assert len(differ) == 12  # refs-bench: 12 sentences where the authors' word is not the BLANK's text
    grandfather = next(i for i in intra if i.fields["context"] == "The grandfather BLANKed the grandchildren.")
    assert grandfather.derived["fills"][0] == "protect" and grandfather.derived["template_words"][0] == "protected"
    assert stereoset_items.blank_fills("The BLANK met BLANK.", "the cat met cat.") == ["cat", "cat"]
    assert stereoset_items.blank_fills("The BLANK met BLANK.", "The cat met dog.") is None


def test_seeded_subsets(bundled):
    first = bundled.subset(limit=2)
    assert [i.group for i in first.items] == ["gender"] * 2 + ["profession"] * 2 + ["race"] * 2 + ["religion"] * 2
    one, two = bundled.subset(sample=5, seed=3), bundled.subset(sample=5, seed=3)
    assert [i.id for i in one.items] == [i.id for i in two.items] and len(one.items) == 20
    assert [i.id for i in bundled.subset(sample=5, seed=4).items] != [i.id for i in one.items]


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def record(target="T1", bias_type="gender", split="intrasentence", n=0) -> dict:
    context = f"The {target} is BLANK {n}." if split == "intrasentence" else f"The {target} arrived {n}."
    return {
        "type": split,
        "target": target,
        "bias_type": bias_type,
        "context": context,
        "stereotype": f"The {target} is bold {n}.",
        "anti-stereotype": f"The {target} is shy {n}.",
        "unrelated": f"The {target} is blue {n}.",
    }


def test_every_bad_line_is_named_before_any_work(tmp_path):
    good = record()
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            good,
            "{not json",
            {**record(n=2), "bias_type": "Gender"},
            {**record(n=3), "context": "no blank here"},
            {k: v for k, v in record(n=4).items() if k != "unrelated"},
            {**record(n=5), "type": "intra"},
            {**record(n=6), "anti-stereotype": record(n=6)["stereotype"]},
        ],
    )
    with pytest.raises(StimuliError) as error:
        assoc.Stimuli.load(f"stereoset:{path}")
    message = str(error.value)
    assert str(path) in message and "6 bad lines" in message
    for line, problem in [
        (2, "not JSON"),
        (3, "'bias_type' must be one of gender, profession, race, religion, got 'Gender'"),
        (4, "an intrasentence context must hold BLANK"),
        (5, "'unrelated' must be non-empty text"),
        (6, "'type' must be intrasentence or intersentence"),
        (7, "two of its three sentences are the same text"),
    ]:
        assert f"line {line}: {problem}" in message
    twice = write_jsonl(tmp_path / "twice.jsonl", [good, good])
    with pytest.raises(StimuliError, match="line 2: item id .* is also at .*line 1"):
        assoc.Stimuli.load(f"stereoset:{twice}")


def test_the_authors_dev_json_layout_keeps_their_ids(tmp_path, bundled):
    some = bundled.subset(limit=3)
    data: dict = {"version": "test", "data": {"intrasentence": [], "intersentence": []}}
    for item in some.items:
        sentences = [
            {"id": f"{item.id}-{role}", "sentence": text, "gold_label": role, "labels": []}
            for role, text in reversed(list(zip(item.derived["roles"], item.options)))  # the file's order is not ours
        ]
        data["data"][item.derived["split"]].append(
            {"id": f"authors-{item.id}", "target": item.derived["target"], "bias_type": item.group,
             "context": item.fields["context"], "sentences": sentences}
        )  # fmt: skip
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = assoc.Stimuli.load(f"stereoset:{tmp_path}")
    assert sorted(i.id for i in loaded.items) == sorted(f"authors-{i.id}" for i in some.items)
    by_id = {f"authors-{i.id}": i for i in some.items}
    for item in loaded.items:
        assert item.options == by_id[item.id].options and item.derived["id_source"] == "authors"
        assert item.derived["sentence_ids"] == [f"{by_id[item.id].id}-{r}" for r in item.derived["roles"]]
    data["data"]["intersentence"][0]["sentences"][0]["gold_label"] = "neutral"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StimuliError, match=r"dev.json, intersentence item 1 \(id .*gold_label must be one of"):
        assoc.Stimuli.load(f"stereoset:{path}")


# -- the analysis against evaluation.py ------------------------------------------------------------


def test_scores_equal_evaluation_py(frozen_table):
    result = assoc.analyze("stereoset", frozen_table, n_bootstrap=0)
    frozen = json.loads((FROZEN / "evaluation_py_output.json").read_text())
    compared = 0
    for row in result.itertuples():
        if row.split == "overall" and row.bias_type != "overall":
            continue  # evaluation.py reports both splits together for all bias types only
        cell = frozen["overall"] if row.split == "overall" else frozen[row.split][row.bias_type]
        for ours, theirs in ((row.lms, "LM Score"), (row.ss, "SS Score"), (row.icat, "ICAT Score")):
            assert math.isclose(ours, cell[theirs], rel_tol=0, abs_tol=1e-10), (row.split, row.bias_type, theirs)
        # evaluation.py appends each item once per sentence to its bias type: its Count is 3x the items there
        tripled = row.split != "overall" and row.bias_type != "overall"
        assert row.n_items * (3 if tripled else 1) == cell["Count"]
        assert row.n_left_out == 0
        compared += 1
    assert compared == 11
    # the frozen scores have ties on purpose, and the default counts them the authors' way
    whole = result[(result["split"] == "overall") & (result["bias_type"] == "overall")].iloc[0]
    scores = pd.read_csv(FROZEN / "items.csv.gz")
    s, a, u = scores["score_stereotype"], scores["score_anti_stereotype"], scores["score_unrelated"]
    assert whole["n_tie_stereo_anti"] == (s == a).sum() == 336 and whole["ties"] == "authors"
    assert whole["n_tie_unrelated"] == (s == u).sum() + (a == u).sum()


def test_per_target_counts_equal_evaluation_py(frozen_table):
    result = assoc.analyze("stereoset", frozen_table, level="target")
    counts = json.loads((FROZEN / "evaluation_py_counts.json").read_text())
    checked = 0
    for row in result.itertuples():
        theirs = counts["overall"][row.target] if row.split == "overall" else counts[row.split]["overall"][row.target]
        assert (row.pro, row.anti, row.related, row.total) == (
            theirs.get("pro", 0.0), theirs.get("anti", 0.0), theirs.get("related", 0.0), theirs["total"],
        )  # fmt: skip
        checked += 1
    assert checked == 3 * 79


# -- the conventions, by hand -----------------------------------------------------------------------


def hand_table(tmp_path, scores, choices=None) -> pd.DataFrame:
    """Items i1..: (target, bias type, split) and their scores (stereotype, anti, unrelated) or choices."""
    records = [record(t, b, s, n) for n, (t, b, s, _) in enumerate(scores)]
    stimuli = assoc.Stimuli.load(f"stereoset:{write_jsonl(tmp_path / 'hand.jsonl', records)}")
    rows = []
    for item, (*_, values) in zip(stimuli.items, scores):
        rows += option_rows(item, values, model="m", model_kind="causal", method="lp", measure="log_prob")
    for number, chosen, status, sample in choices or []:
        rows.append(
            choice_row(stimuli.items[number], chosen, model="c", model_kind="chat", status=status, sample=sample)
        )
    return assoc.from_records(rows, scorer="stereoset")


SCORES = [
    ("T1", "gender", "intrasentence", [-1.0, -2.0, -3.0]),  # stereotype preferred, both related
    ("T1", "gender", "intrasentence", [-2.0, -2.0, -3.0]),  # a stereotype/anti tie
    ("T2", "race", "intrasentence", [-3.0, -1.0, -3.0]),  # anti preferred; the stereotype ties the unrelated
    ("T2", "race", "intrasentence", [-1.0, -5.0, -2.0]),  # stereotype; the anti-stereotype below the unrelated
]


def cell(result, split="intrasentence", bias_type="overall", model="m"):
    return result[(result["split"] == split) & (result["bias_type"] == bias_type) & (result["model"] == model)].iloc[0]


@pytest.mark.parametrize(
    ("ties", "ss", "lms", "icat"),
    [
        # authors: T1 SS 1/2, LMS 4/4; T2 SS 1/2, LMS (1 + 1)/4; macro: SS 50, LMS 75, ICAT 75 * 50/50
        ("authors", 50.0, 75.0, 75.0),
        # half: T1 SS 1.5/2, LMS 1; T2 SS 1/2, LMS (1.5 + 1)/4; SS 62.5, LMS 81.25, ICAT 81.25 * 37.5/50
        ("half", 62.5, 81.25, 60.9375),
        # exclude: T1 SS 1/1, LMS 4/4; T2 SS 1/2, LMS (1 + 1)/(1 + 2); SS 75, LMS 250/3, ICAT 250/3 * 25/50
        ("exclude", 75.0, 250 / 3, 125 / 3),
    ],
)
def test_tie_conventions_by_hand(tmp_path, ties, ss, lms, icat):
    result = assoc.analyze("stereoset", hand_table(tmp_path, SCORES), ties=ties, n_bootstrap=0)
    row = cell(result)
    assert (row["ss"], row["lms"], row["icat"]) == pytest.approx((ss, lms, icat), abs=1e-12)
    assert (row["n_tie_stereo_anti"], row["n_tie_unrelated"]) == (1, 1)
    assert cell(result, bias_type="gender")["ss"] == pytest.approx({"authors": 50, "half": 75, "exclude": 100}[ties])


def test_a_nan_score_is_left_out_and_counted_not_counted_as_anti_stereotypical(tmp_path):
    scores = [*SCORES, ("T1", "gender", "intrasentence", [math.nan, -1.0, -2.0])]
    table = hand_table(tmp_path, scores)
    with pytest.warns(UserWarning, match="1 of 15 values are NaN"):  # a scorer's run report would account for it
        row = cell(assoc.analyze("stereoset", table, n_bootstrap=0))
    assert (row["ss"], row["lms"]) == (50.0, 75.0)  # as without the item
    assert (row["n_items"], row["n_scored"], row["n_left_out"], json.loads(row["left_out"])) == (5, 4, 1, {"nan": 1})
    # evaluation.py's way: the NaN loses every comparison: T1 SS 1/3, LMS (2 + 2 + 1)/6; T2 SS 1/2, LMS 2/4
    with pytest.warns(UserWarning, match="NaN"):
        row = cell(assoc.analyze("stereoset", table, nan="authors", n_bootstrap=0))
    assert (row["ss"], row["lms"]) == pytest.approx(((100 / 3 + 50) / 2, (500 / 6 + 50) / 2))
    assert (row["n_scored"], row["n_left_out"], row["n_nan_kept"]) == (5, 0, 1)
    # a missing row is never scored (evaluation.py stops with a KeyError)
    no_row = table[~((table["item_id"] == table["item_id"].iloc[-1]) & (table["option"] == 0))]
    row = cell(assoc.analyze("stereoset", no_row, nan="authors", n_bootstrap=0))
    assert json.loads(row["left_out"]) == {"missing option row": 1} and (row["ss"], row["lms"]) == (50.0, 75.0)


def test_splits_pool_per_target_in_the_overall_row(tmp_path):
    scores = [*SCORES, ("T1", "gender", "intersentence", [-1.0, -3.0, -2.0])]
    result = assoc.analyze("stereoset", hand_table(tmp_path, scores), n_bootstrap=0)
    # intersentence: T1 only, SS 1/1, LMS 1/2
    assert (cell(result, "intersentence")["ss"], cell(result, "intersentence")["lms"]) == (100.0, 50.0)
    # both splits: T1 pools its three items: SS 2/3, LMS 5/6; T2 SS 1/2, LMS 2/4
    both = cell(result, "overall")
    assert (both["ss"], both["lms"]) == pytest.approx(((200 / 3 + 50) / 2, (500 / 6 + 50) / 2))
    assert set(result["bias_type"]) == {"gender", "race", "overall"}


def test_chat_choices_by_hand(tmp_path):
    choices = [(0, 0, "ok", 0), (1, 2, "ok", 0), (1, 1, "ok", 1), (2, None, "refusal", 0), (3, 0, "ok", 0)]
    table = hand_table(tmp_path, SCORES, choices)
    with pytest.warns(UserWarning, match="1 of 17 values are NaN"):  # the refusal's row has no value
        row = cell(assoc.analyze("stereoset", table, n_bootstrap=0), model="c")
    # T1: stereotype, unrelated, anti (a second reply to item 2): SS 1/2, LMS 2/3; T2: item 3 refused, item 4 stereotype
    assert (row["ss"], row["lms"]) == pytest.approx((75.0, 250 / 3))
    assert row["icat"] == pytest.approx(250 / 3 * 25 / 50)
    assert (row["method"], row["model_kind"], row["n_items"], row["n_scored"]) == ("choice", "chat", 4, 3)
    assert json.loads(row["left_out"]) == {"refusal": 1}


def test_bootstrap_intervals_over_items(tmp_path, bundled):
    # every item prefers the stereotype, both over the unrelated one: every resample gives SS 100, LMS 100
    rng = np.random.default_rng(0)
    some = bundled.subset(sample=10, seed=0).items
    rows = []
    for item in some:
        s = rng.normal(-10, 1)
        rows += option_rows(item, [s, s - 1, s - 2], model="m", model_kind="masked", method="pll", measure="pll")
    table = assoc.from_records(rows, scorer="stereoset")
    row = cell(assoc.analyze("stereoset", table, n_bootstrap=200), "overall")
    assert (row["ss_low"], row["ss_high"], row["lms_low"], row["lms_high"]) == (100.0, 100.0, 100.0, 100.0)
    assert row["icat_low"] == row["icat_high"] == 0.0


def test_bootstrap_intervals_are_seeded_and_hold_the_estimate(frozen_table):
    few = frozen_table[frozen_table["item_id"].isin(frozen_table["item_id"].drop_duplicates().iloc[::20])]
    one = assoc.analyze("stereoset", few, n_bootstrap=300, seed=5)
    two = assoc.analyze("stereoset", few, n_bootstrap=300, seed=5)
    pd.testing.assert_frame_equal(one, two)
    for name in ("ss", "lms", "icat"):
        inside = (one[f"{name}_low"] <= one[name]) & (one[name] <= one[f"{name}_high"])
        assert inside.all(), name
    assert not one.equals(assoc.analyze("stereoset", few, n_bootstrap=300, seed=6))


def test_a_table_of_another_benchmark_is_refused(frozen_table):
    with pytest.raises(assoc.errors.UnfitTableError, match="no column.*split"):
        assoc.analyze("stereoset", frozen_table.drop(columns="split"))


def test_with_the_authors_nan_rule_a_failed_score_is_still_left_out(tmp_path):
    scores = [*SCORES, ("T1", "gender", "intrasentence", [-1.0, -1.0, -2.0])]
    table = hand_table(tmp_path, scores)
    last = table["item_id"] == table["item_id"].iloc[-1]
    table.loc[last & (table["option"] == 0), ["status", "value"]] = ["too_long", float("nan")]
    with pytest.warns(UserWarning, match="NaN"):
        row = cell(assoc.analyze("stereoset", table, nan="authors", n_bootstrap=0))
    assert json.loads(row["left_out"]) == {"too_long": 1} and (row["ss"], row["lms"]) == (50.0, 75.0)
