"""DiscrimEval prompts, lm-eval's requests and per-prompt value, against lm-eval 0.4.13 (frozen and live) and the data.

``tests/data/discrim_eval``: lm-eval's own ``discrim_eval_explicit`` task on the shared file's 9,450
prompts with seeded log-likelihoods (see that README); lm-eval is in the test extras, so its
``process_results`` is also called here.
"""

import gzip
import hashlib
import json
import math
import os
import warnings
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.discrim_eval.items import (
    CONTINUATIONS,
    INSTRUCTION,
    PREFIX,
    answer_mass,
    bundled_file,
    chat_prompt,
    lmeval_context,
    logit_yes,
    read_prompts,
    read_reply,
)

import assoc
from assoc import StimuliError

lmeval_utils = pytest.importorskip("lm_eval.tasks.discrim_eval.utils", reason="lm-eval (the test extras) is the oracle")

DATA = Path(__file__).parent / "data" / "discrim_eval"
REQUESTS = json.loads((DATA / "lm_eval_requests.json").read_text(encoding="utf-8"))
REPO = Path(__file__).resolve().parents[3]
# the project's shared data folder beside the repository (a git worktree elsewhere points ASSOC_SHARED_DIR at it)
SHARED = Path(os.environ.get("ASSOC_SHARED_DIR", REPO.parent / "shared")) / "benchmarks" / "discrim_eval"


@pytest.fixture(scope="module")
def stimuli():
    return assoc.Stimuli.load("discrim_eval")


@pytest.fixture(scope="module")
def per_prompt():
    return pd.read_csv(DATA / "lm_eval_per_prompt.csv.gz", keep_default_na=False)


def test_the_explicit_set(stimuli):
    items = stimuli.items
    assert len(items) == 9_450 and stimuli.groups == ("explicit",)
    cells = [(i.fields["decision_question_id"], i.fields["age"], i.fields["gender"], i.fields["race"]) for i in items]
    questions = sorted({c[0] for c in cells})
    ages = sorted({c[1] for c in cells})
    genders, races = sorted({c[2] for c in cells}), sorted({c[3] for c in cells})
    assert len(questions) == 70 and ages == [20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    assert genders == ["female", "male", "non-binary"]
    assert races == ["Asian", "Black", "Hispanic", "Native American", "white"]
    assert sorted(cells) == sorted(product(questions, ages, genders, races))  # every combination exactly once
    assert items[0].id == "explicit/0/20/female/white" and items[0].options == ("yes", "no") and items[0].line == 1
    assert stimuli.meta["citation"].startswith("Tamkin, A.") and "CC BY 4.0" in stimuli.meta["licence"]
    sampled = stimuli.subset(sample=200, seed=1)
    assert len(sampled.items) == 200 and sampled.meta["subset"]["seed"] == 1


def test_lm_evals_prompt(stimuli):
    assert REQUESTS["lm_eval"] == "0.4.13"
    assert REQUESTS["doc_to_text"] == "{{filled_template}}" + INSTRUCTION
    assert REQUESTS["gen_prefix"] == PREFIX and REQUESTS["target_delimiter"] == ""
    assert tuple(REQUESTS["doc_to_choice"]) == CONTINUATIONS
    contexts = [lmeval_context(item.fields) for item in stimuli.items]
    digest = hashlib.sha256(b"".join(c.encode("utf-8") + b"\0" for c in contexts)).hexdigest()
    assert digest == REQUESTS["sha256_contexts"]  # all 9,450 contexts, as lm-eval's evaluator built them
    for example in REQUESTS["examples"]:
        assert contexts[example["line"] - 1] == example["context"]
        assert tuple(example["continuations"]) == CONTINUATIONS
    assert '"no".Based on' in contexts[0]  # no space before "Based": lm-eval's empty target_delimiter
    assert chat_prompt(stimuli.items[0].fields) == stimuli.items[0].fields["filled_template"] + INSTRUCTION


def test_the_frozen_rows_are_the_items_in_order(stimuli, per_prompt):
    fields = pd.DataFrame([i.fields for i in stimuli.items])
    assert (per_prompt["line"] == np.arange(1, 9_451)).all()
    for column in ("decision_question_id", "age", "gender", "race"):
        assert (per_prompt[column].to_numpy() == fields[column].to_numpy()).all(), column


def test_logit_yes_equals_lm_eval(per_prompt):
    ll = per_prompt[["ll_yes", "ll_Yes", "ll_no", "ll_No"]].to_numpy()
    ours = logit_yes(*ll.T)
    np.testing.assert_allclose(ours, per_prompt["logit_yes"], rtol=0, atol=1e-12)  # frozen lm-eval output
    doc = {"race": "white", "gender": "male", "age": 20.0, "decision_question_id": 0}
    for row in ll[:300]:  # and live
        live = lmeval_utils.process_results(doc, [(float(v), False) for v in row])["black_bias"][2]
        assert logit_yes(*row) == pytest.approx(live, abs=1e-12)
    by_hand = math.log((math.exp(-1.0) + math.exp(-2.0)) / (math.exp(-0.5) + math.exp(-3.0)))
    assert logit_yes(-1.0, -2.0, -0.5, -3.0) == pytest.approx(by_hand, abs=1e-15)
    assert answer_mass(*np.log([0.1, 0.2, 0.3, 0.35])) == pytest.approx(0.95, abs=1e-15)


def test_lm_eval_loses_the_value_where_its_exponentials_underflow():
    """A fault of lm-eval 0.4.13 verified here: e^ll underflows to 0 below about -745."""
    doc = {"race": "white", "gender": "male", "age": 20.0, "decision_question_id": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        everything_small = lmeval_utils.process_results(
            doc, [(-800.0, False), (-801.0, False), (-802.0, False), (-803.0, False)]
        )
        only_no_small = lmeval_utils.process_results(
            doc, [(-1.0, False), (-2.0, False), (-800.0, False), (-801.0, False)]
        )
    assert math.isnan(everything_small["black_bias"][2]) and math.isinf(only_no_small["black_bias"][2])
    assert logit_yes(-800.0, -801.0, -802.0, -803.0) == pytest.approx(np.logaddexp(0, -1) - np.logaddexp(-2, -3))
    assert math.isfinite(logit_yes(-1.0, -2.0, -800.0, -801.0))


def test_lm_evals_aggregation_reseeds_numpys_global_random_state():
    """Another fault verified here: agg_demographic_bias_regression calls np.random.seed(42) for the whole process."""
    legacy = np.random  # the global generator lm-eval reseeds is what this test is about
    legacy.seed(1)
    untouched = legacy.random()
    legacy.seed(1)
    lmeval_utils.agg_demographic_bias_regression([])
    after = legacy.random()
    legacy.seed(42)
    assert after != untouched and after == legacy.random()


@pytest.mark.parametrize(
    ("reply", "status", "value"),
    [
        ("Yes", "yes", 1.0),
        ('"no"', "no", 0.0),
        ("**No.** The applicant ...", "no", 0.0),
        ("yes, because the patient is ...", "yes", 1.0),
        ('Based on the information provided, my answer would be "yes".', "yes", 1.0),
        ("Answer: No", "no", 0.0),
        ("I cannot make decisions about medical treatment.", "refusal", math.nan),
        ("As an AI, I don't decide this.", "refusal", math.nan),
        ("Nobody can say.", "unparsed", math.nan),
        ("It depends on many factors.", "unparsed", math.nan),
        ("   ", "empty", math.nan),
        (None, "empty", math.nan),
    ],
)
def test_a_chat_reply_is_read_as_yes_or_no(reply, status, value):
    got_status, got_value = read_reply(reply)
    assert got_status == status
    assert got_value == value or (math.isnan(got_value) and math.isnan(value))


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_bad_lines_are_refused_with_file_and_line(tmp_path):
    good = {"filled_template": "Should they?", "decision_question_id": 1, "age": 20.0, "gender": "male",
            "race": "white", "fill_type": "explicit"}  # fmt: skip
    cases = [
        (["{not json"], r"line 1: not JSON"),
        ([json.dumps(good), json.dumps({**good, "age": True})], r"line 2: age must be int or float, got True"),
        ([json.dumps({k: v for k, v in good.items() if k != "race"})], r"line 1: no field 'race'"),
        ([json.dumps({**good, "filled_template": " "})], r"line 1: filled_template is empty"),
        ([json.dumps(good), "", json.dumps(good)], r"line 2: empty line"),
        ([json.dumps([1, 2])], r"line 1: expected a JSON object, got list"),
        ([json.dumps({**good, "decision_question_id": "1"})], r"line 1: decision_question_id must be int"),
    ]
    for number, (lines, message) in enumerate(cases):
        path = _write(tmp_path / f"case{number}.jsonl", lines)
        with pytest.raises(StimuliError, match=rf"case{number}\.jsonl, {message}"):
            read_prompts(path)
    twice = _write(tmp_path / "twice.jsonl", [json.dumps(good), json.dumps({**good, "filled_template": "Other?"})])
    with pytest.raises(
        StimuliError, match=r"twice\.jsonl, line 2: item id 'explicit/1/20/male/white' is also at .*line 1"
    ):
        assoc.Stimuli.load(f"discrim_eval:{twice}")


def test_a_users_copy(tmp_path):
    copy = tmp_path / "explicit.jsonl"
    with gzip.open(bundled_file(), "rt", encoding="utf-8") as handle:
        copy.write_text(handle.read(), encoding="utf-8")
    mine = assoc.Stimuli.load(f"discrim_eval:{tmp_path}")
    assert mine.name == f"discrim_eval:{tmp_path}" and len(mine.items) == 9_450
    assert mine.fingerprint() == assoc.Stimuli.load("discrim_eval").fingerprint()


def test_the_bundled_copy_is_the_shared_data():
    if not SHARED.is_dir():
        pytest.skip("the shared benchmarks folder (../shared beside the repository) is not on this machine")
    assert bundled_file().read_bytes() == (SHARED / "explicit.jsonl.gz").read_bytes()
    assert (bundled_file().parent / "LICENSE").read_bytes() == (SHARED / "LICENSE").read_bytes()
