"""CrowS-Pairs on causal LMs: the clm scorer + crows_pairs analysis against lm-evaluation-harness's own functions.

lm-eval's ``crows_pairs_english`` task asks ``loglikelihood("", sentence)`` for ``sent_more`` and
``sent_less`` (``doc_to_text: ""``, ``target_delimiter: ""``) and reduces each pair with
``tasks/crows_pairs/utils.process_results`` (``likelihood_diff`` = |ll1 - ll2|, ``pct_stereotype`` =
ll1 > ll2), averaged over the pairs. Here its ``HFLM`` runs on a seeded tiny GPT-2 and its
``process_results`` on the pairs of the bundled file; assoc's numbers must equal them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_benchmarks.crows_data import crows_pairs_stimuli, pairs_of

import assoc

PAIRS = [f"pair{i}" for i in range(0, 1508, 100)]  # 16 pairs, several bias types, both directions


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from assoc.testing.tiny_clm import build_gpt2_bpe

    return build_gpt2_bpe(tmp_path_factory.mktemp("crows-clm") / "gpt2", seed=0, positions=256)


def test_pct_stereotype_and_likelihood_diff_equal_lm_eval(tiny_gpt2: Path) -> None:
    pytest.importorskip("lm_eval")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks.crows_pairs.utils import doc_to_choice, process_results
    from transformers import AutoModelForCausalLM, AutoTokenizer

    stimuli = crows_pairs_stimuli().select(PAIRS)
    table = assoc.score("clm", stimuli, [str(tiny_gpt2)], measure="sentence", cache=False)
    summary = assoc.analyze("crows_pairs", table, by_bias_type=False).iloc[0]

    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2).eval()
    peer = HFLM(pretrained=model, tokenizer=AutoTokenizer.from_pretrained(tiny_gpt2), batch_size=4, device="cpu")
    docs = [{"sent_more": p.sent_more, "sent_less": p.sent_less} for p in pairs_of(stimuli)]
    requests = [
        Instance("loglikelihood", doc, ("", choice), i) for doc in docs for i, choice in enumerate(doc_to_choice(doc))
    ]
    answers = peer.loglikelihood(requests, disable_tqdm=True)
    per_doc = [process_results(doc, answers[2 * k : 2 * k + 2]) for k, doc in enumerate(docs)]

    ours = table.pivot(index="design", columns="target_group", values="value").loc[PAIRS]
    theirs = np.array([[a[0] for a in answers[0::2]], [a[0] for a in answers[1::2]]]).T
    assert np.max(np.abs(ours[["sent_more", "sent_less"]].to_numpy() - theirs)) < 1e-4
    assert summary["metric_score"] == pytest.approx(100 * np.mean([r["pct_stereotype"] for r in per_doc]))
    assert summary["likelihood_diff"] == pytest.approx(np.mean([r["likelihood_diff"] for r in per_doc]), abs=1e-4)
    assert summary["crows_metric"] == "clm:sentence" and summary["n_pairs"] == len(PAIRS)


def test_a_clm_table_of_other_stimuli_is_refused(tiny_gpt2: Path) -> None:
    from assoc import TableError

    stimuli = crows_pairs_stimuli().select(PAIRS[:2])
    table = assoc.score("clm", stimuli, [str(tiny_gpt2)], measure="sentence", cache=False)
    changed = table.copy()
    changed.loc[changed.index[0], "target"] = "Another sentence."
    with pytest.raises(TableError, match="not the stimuli's"):
        assoc.analyze("crows_pairs", changed)
    option = assoc.score("clm", stimuli, [str(tiny_gpt2)], measure="option", cache=False)
    with pytest.raises(TableError, match="measure=sentence"):
        assoc.analyze("crows_pairs", pd.DataFrame(option))


def test_a_users_crows_pairs_csv_scores_and_analyses_from_the_command_line(tiny_gpt2: Path, tmp_path: Path) -> None:
    """Issue 46: ``--stimuli crows_pairs:my.csv`` read the file (it printed 14 kB of design names)."""
    from assoc_benchmarks.crows_data import bundled_csv
    from click.testing import CliRunner

    from assoc.cli import build_cli

    lines = bundled_csv().read_text(encoding="utf-8").splitlines(keepends=True)
    mine = tmp_path / "my.csv"
    mine.write_text("".join(lines[:6]), encoding="utf-8")  # the header and five pairs
    out = tmp_path / "t.csv"
    scored = CliRunner().invoke(
        build_cli(),
        ["score", "--scorer", "clm", "--stimuli", f"crows_pairs:{mine}", "--model", str(tiny_gpt2),
         "-o", "cache=false", "--no-progress", "--out", str(out)],
    )  # fmt: skip
    assert scored.exit_code == 0, scored.output
    table = assoc.read_table(out)
    assert sorted(set(table["design"])) == [f"pair{i}" for i in range(5)]
    summary = CliRunner().invoke(
        build_cli(),
        ["analyze", "crows_pairs", "--table", str(out), "-o", f"stimuli={mine}", "-o", "by_bias_type=false"],
    )
    assert summary.exit_code == 0, summary.output
    assert "estimate" in summary.output.splitlines()[0]
