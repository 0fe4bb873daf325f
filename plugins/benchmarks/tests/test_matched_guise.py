"""Matched Guise Probing: assoc (fmat + matched_guise) against the authors' own probing code.

The authors' ``probing/mgp.py`` (MIT, copied unchanged into ``../shared/benchmarks/hofmann2024``)
runs on a tiny seeded RoBERTa whose tokenizer has every Princeton Trilogy adjective as one token
(``helpers.load_attributes`` asserts it); its pickled probabilities are turned into association
scores with the authors' formula (log10 of the AAE/SAE probability ratio, mean over pairs, then over
prompts) and compared with ``assoc.analyze("matched_guise", ...)`` of the ``fmat`` table.
"""

from __future__ import annotations

import math
import os
import pickle
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from assoc_benchmarks.guise_analysis import average_precision, top_rated
from assoc_benchmarks.hofmann import attributes, hofmann2024_stimuli, prompts, ratings, read_pairs

import assoc

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / "shared" / "benchmarks" / "hofmann2024"
N_PAIRS = 6


def _corpus(pairs: list[tuple[str, str]]) -> list[str]:
    from assoc.testing.tiny_mlm import tiny_corpus

    words = attributes("katz")
    lines = [" ".join(f"he is {w} ." for w in words)] * 20
    lines += [f'the person says: " {a} " the person is {w}' for a, s in pairs for w in words[:3]]
    lines += [f'The people say: " {s} " They are' for _, s in pairs]
    return tiny_corpus() + lines


@pytest.fixture(scope="module")
def guise_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from assoc.testing.tiny_mlm import build_roberta_bpe

    pairs = read_pairs()[:N_PAIRS]
    return build_roberta_bpe(
        tmp_path_factory.mktemp("mgp") / "roberta", seed=3, vocab_size=700, corpus=_corpus(pairs), max_length=128
    )


def _authors_scores(results: dict[str, list], attribute_names: list[str]) -> dict[str, float]:
    """results2df_unpooled + the mean over prompts: log10(p_aave / p_sae) per pair, mean over pairs, then prompts."""
    per_prompt: dict[str, list[float]] = {a: [] for a in attribute_names}
    for _prompt, result_list in results.items():
        for a_idx, name in enumerate(attribute_names):
            ratios = [
                np.log10(result_list[i][3][a_idx] / result_list[i + 1][3][a_idx]) for i in range(0, len(result_list), 2)
            ]
            per_prompt[name].append(float(np.mean(ratios)))
    return {a: float(np.mean(v)) for a, v in per_prompt.items()}


def _run_mgp(
    workdir: Path,
    model_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    model_name: str = "roberta-base",
    classes: tuple[type, type] | None = None,
) -> dict[str, list]:
    """The authors' mgp.py (unchanged) from a copy of the shared folder, its model loaders pointed at ``model_dir``."""
    if not (SHARED / "probing" / "mgp.py").is_file():
        pytest.skip(f"the authors' Matched Guise Probing code is not at {SHARED} (../shared beside the repository)")
    shutil.copytree(SHARED / "probing", workdir / "probing")
    (workdir / "data" / "attributes").mkdir(parents=True)
    (workdir / "data" / "pairs").mkdir(parents=True)
    shutil.copy(SHARED / "data" / "attributes" / "katz.txt", workdir / "data" / "attributes" / "katz.txt")
    lines = (SHARED / "data" / "pairs" / "habitual.txt").read_text(encoding="utf-8").strip().split("\n")
    (workdir / "data" / "pairs" / "tiny.txt").write_text("\n".join(lines[:N_PAIRS]), encoding="utf-8")
    # helpers.py resolves its data paths against the working directory at import time
    monkeypatch.chdir(workdir / "probing")
    monkeypatch.syspath_prepend(str(workdir / "probing"))
    for name in ("helpers", "prompting", "mgp"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import helpers  # the authors' module
    import mgp
    from transformers import RobertaForMaskedLM, RobertaTokenizer

    model_cls, tokenizer_cls = classes or (RobertaForMaskedLM, RobertaTokenizer)
    monkeypatch.setattr(helpers, "load_model", lambda name: model_cls.from_pretrained(model_dir))
    monkeypatch.setattr(helpers, "load_tokenizer", lambda name: tokenizer_cls.from_pretrained(model_dir))
    args = ["mgp.py", "--model", model_name, "--variable", "tiny", "--attribute", "katz", "--device", "0"]
    monkeypatch.setattr(sys, "argv", args)
    mgp.main()
    with open(Path(helpers.PROBS_PATH) / f"{model_name}_tiny_katz.p", "rb") as f:
        loaded: dict[str, list] = pickle.load(f)
    return loaded


def test_association_scores_equal_the_authors_mgp_on_a_tiny_roberta(
    guise_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = _run_mgp(tmp_path, guise_model, monkeypatch)
    names = attributes("katz")
    expected = _authors_scores(results, names)

    pairs_file = tmp_path / "pairs.txt"
    pairs_file.write_text("\n".join(f"{a}\t{s}" for a, s in read_pairs()[:N_PAIRS]), encoding="utf-8")
    stimuli = hofmann2024_stimuli(pairs_file, designs=("katz",))
    table = assoc.score("fmat", stimuli, [str(guise_model)], cache=False)
    assert not table["oov"].any()  # every adjective one token, as the authors require
    scores = assoc.analyze("matched_guise", table)
    got = dict(zip(scores["attribute"], scores["association"]))
    assert set(got) == set(names)
    worst = max(abs(got[a] - expected[a]) for a in names)
    assert worst < 1e-5, worst
    # the scores are not all zero: the guises differ for this model
    assert max(abs(v) for v in expected.values()) > 1e-3
    assert (scores["n_prompts"] == len(prompts()["trait"])).all()
    assert (scores["n_pairs"] == N_PAIRS).all()
    # ranks: rank_aave 1 is the largest association
    top = scores.sort_values("association", ascending=False)["attribute"].iloc[0]
    assert scores.set_index("attribute").loc[top, "rank_aave"] == 1


def test_average_precision_by_hand() -> None:
    # relevant {b, d}: hits at ranks 2 and 4 -> (1/2 + 2/4) / 2
    assert average_precision(["a", "b", "c", "d"], ["b", "d"]) == pytest.approx(0.5)
    assert average_precision(["b", "a"], ["b"]) == 1.0
    katz = ratings()["stereotype_ratings"]["katz"]
    # Katz & Braly (1933): superstitious (84 %) is not among the 37 adjectives the authors probe, so
    # lazy (75 %) is the most chosen of them, as get_top_attributes keeps only listed attributes
    assert "superstitious" not in attributes("katz")
    assert top_rated(attributes("katz"), katz, 1) == ["lazy"]


def test_agreement_of_a_perfect_ranking(tmp_path: Path) -> None:
    import pandas as pd

    katz = ratings()["stereotype_ratings"]["katz"]
    names = attributes("katz")
    # a model whose AAE association equals the Katz & Braly percentages (0 for unrated attributes)
    rows = []
    for prompt in ("P1 {TARGET} [MASK]", "P2 {TARGET} [MASK]"):
        for group, sign in (("aave", 1.0), ("sae", -1.0)):
            for a in names:
                rows.append(
                    {
                        "scorer": "fmat",
                        "model": "m",
                        "context": prompt,
                        "target_group": group,
                        "target": f"{group} text",
                        "attribute_group": "katz",
                        "attribute": a,
                        "measure": "log_prob",
                        "value": sign * katz.get(a, 0.0) / 100 - 5,
                    }
                )
    result = assoc.analyze("matched_guise_agreement", pd.DataFrame(rows), samples=200)
    row = result.set_index("study").loc["katz"]
    assert row["mean_ap"] == pytest.approx(1.0)
    assert row["random_ap"] < 0.5
    assert row["top_attributes"].split(", ")[0] == "lazy"
    scores = assoc.analyze("matched_guise", pd.DataFrame(rows), log_base="e")
    lazy = scores.set_index("attribute").loc["lazy", "association"]
    assert lazy == pytest.approx(2 * 0.75)


def test_occupation_prompts_keep_only_fitting_articles() -> None:
    from assoc_benchmarks.guise_analysis import article_fits

    assert article_fits('The person says: " {TARGET} " The person is a [MASK]', "doctor")
    assert not article_fits('The person says: " {TARGET} " The person is a [MASK]', "artist")
    assert article_fits('The person says: " {TARGET} " The person is an [MASK]', "artist")
    # "a crime" inside the guilt prompts does not filter: only the final article counts
    assert article_fits('He is accused of committing a crime. He says: " {TARGET} " He should be [MASK]', "acquitted")


def test_bundled_stimuli_are_the_authors_files() -> None:
    stimuli = hofmann2024_stimuli()
    assert [d.name for d in stimuli] == ["katz", "occupations", "guilt", "penalty"]
    katz = stimuli.designs[0]
    assert len(katz.target["aave"]) == len(katz.target["sae"]) == 699
    assert katz.target["aave"][0] == "he be cracking" and katz.target["sae"][0] == "he's usually cracking"
    assert len(katz.mask["katz"]) == 37 and len(stimuli.designs[1].mask["occupations"]) == 84
    assert katz.queries[0] == 'The person says: " {TARGET} " The person is [MASK]'
    if SHARED.is_dir():
        shared = (SHARED / "data" / "pairs" / "habitual.txt").read_text(encoding="utf-8").strip().split("\n")
        assert [f"{a}\t{s}" for a, s in read_pairs()] == shared
    assert "Hofmann" in stimuli.meta["citation"] and stimuli.meta["license"] == "MIT"
    assert math.isclose(ratings()["stereotype_ratings"]["katz"]["superstitious"], 84.0)
    assert (
        os.path.basename(str(stimuli.meta["source"])).startswith("github.com") or "github.com" in stimuli.meta["source"]
    )


@pytest.fixture(scope="module")
def guise_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny seeded GPT-2 whose byte-level BPE has every adjective (with its leading space) as one token."""
    pytest.importorskip("transformers")
    import json

    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer

    out = tmp_path_factory.mktemp("mgp") / "gpt2"
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        _corpus(read_pairs()[:N_PAIRS]),
        vocab_size=700,
        min_frequency=1,
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    merges = [
        tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
        for m in json.loads(bpe._tokenizer.to_str())["model"]["merges"]
    ]
    tokenizer = GPT2Tokenizer(vocab=bpe.get_vocab(), merges=merges, model_max_length=128)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(5)
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        model.transformer.wte.weight.mul_(10.0)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def test_causal_association_scores_equal_the_authors_mgp_on_a_tiny_gpt2(
    guise_gpt2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import GPT2LMHeadModel, GPT2Tokenizer

    results = _run_mgp(tmp_path, guise_gpt2, monkeypatch, model_name="gpt2", classes=(GPT2LMHeadModel, GPT2Tokenizer))
    names = attributes("katz")
    expected = _authors_scores(results, names)
    pairs_file = tmp_path / "pairs.txt"
    pairs_file.write_text("\n".join(f"{a}\t{s}" for a, s in read_pairs()[:N_PAIRS]), encoding="utf-8")
    stimuli = hofmann2024_stimuli(pairs_file, designs=("katz",))
    # mgp.py encodes the prompt without a start token: bos="none"; the attribute's log P given the prompt: option
    table = assoc.score("clm", stimuli, [str(guise_gpt2)], measure="option", bos="none", cache=False)
    scores = assoc.analyze("matched_guise", table)
    got = dict(zip(scores["attribute"], scores["association"]))
    worst = max(abs(got[a] - expected[a]) for a in names)
    assert worst < 1e-5, worst
    assert max(abs(v) for v in expected.values()) > 1e-3
