"""The Python examples of docs/crows-pairs.md and docs/matched-guise.md run as written.

Every ```python block of a page runs in order in one namespace with three substitutions: the model
names become tiny local models (bert-base-uncased: tiny BERT with the real uncased vocabulary;
roberta-base: a tiny RoBERTa whose tokenizer has every adjective as one token; gpt2: a tiny GPT-2),
and the stimuli keep a few pairs (``RELIGION``: 4 religion pairs; ``PAIRS``: 3 AAE/SAE pairs).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, record_run

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest.importorskip("torch")
pytest.importorskip("transformers")

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from assoc_bias_benchmarks.matched_guise.stimuli import attributes

    from assoc.testing.tiny_clm import build_gpt2_bpe
    from assoc.testing.tiny_mlm import build_bert_wordpiece, build_roberta_bpe, tiny_corpus

    root = tmp_path_factory.mktemp("docs-models")
    words = attributes("katz")
    corpus = tiny_corpus() + [" ".join(f"he is {w} ." for w in words)] * 20
    return {
        "bert-base-uncased": str(build_bert_wordpiece(root / "bert", seed=0)),
        "roberta-base": str(build_roberta_bpe(root / "roberta", seed=1, vocab_size=700, corpus=corpus, max_length=128)),
        "gpt2": str(build_gpt2_bpe(root / "gpt2", seed=0, positions=256)),
    }


def _run(page: str, models: dict[str, str], namespace: dict, tmp_path: Path) -> None:
    for original in code_blocks(DOCS / page, "python"):
        block = str(original)
        for name, path in models.items():
            block = block.replace(f'"{name}"', repr(path))
        block = block.replace(
            'crows_pairs_stimuli(bias_types=["religion"])',
            'crows_pairs_stimuli(bias_types=["religion"]).select(RELIGION)',
        )
        block = block.replace('hofmann2024_stimuli(designs=("katz",))', 'hofmann2024_stimuli(PAIRS, designs=("katz",))')
        exec(compile(block, f"{page} block", "exec"), namespace)
        record_run([original])  # ran with tiny models for the hub names and a few pairs


@pytest.mark.slow  # about 10-18 s on two cores: over the fast budget (assoc.devtools.fast_budget)
@pytest.mark.docs("docs/crows-pairs.md", "python")
@pytest.mark.docs("docs/matched-guise.md", "python")
def test_the_pages_examples_run(models: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assoc_bias_benchmarks.matched_guise.stimuli import read_pairs

    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("\n".join(f"{a}\t{s}" for a, s in read_pairs()[:3]), encoding="utf-8")
    namespace: dict = {"RELIGION": ["pair33", "pair39", "pair69", "pair103"], "PAIRS": str(pairs)}
    _run("crows-pairs.md", models, namespace, tmp_path)
    crows = namespace["crows"]
    overall = crows[crows["bias_type"] == "all"]
    assert list(overall["crows_metric"]) == ["nangia2020", "lmeval"]
    assert (overall["n_pairs"] == 4).all() and overall["metric_score"].between(0, 100).all()
    both = namespace["both"]
    assert both["association"].notna().all() and set(both["model"]) == {models["roberta-base"], models["gpt2"]}
    _run("matched-guise.md", models, namespace, tmp_path)
    assert len(namespace["scores"]) == 37 and set(namespace["agreement"]["study"]) >= {"katz", "bergsieker"}


@pytest.mark.slow  # a tiny BERT and a tiny GPT-2 on 4 pairs each, through the command line
@pytest.mark.docs("docs/crows-pairs.md", "bash")
def test_the_crows_pairs_commands_run(models: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's opening commands run as written, with tiny models for the model names and 4 pairs."""
    import shlex

    import pandas as pd
    from click.testing import CliRunner

    from assoc.cli import build_cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    block = code_blocks(DOCS / "crows-pairs.md", "bash")[0]
    lines = [line.split("#")[0].strip() for line in block.splitlines()]
    commands = [line for line in lines if line.startswith("assoc ")]
    assert len(commands) == 4
    for command in commands:
        words = shlex.split(command)[1:]
        words = [models.get(word, word) for word in words]
        words = ["crows_pairs:pair33,pair39,pair69,pair103" if w == "crows_pairs" and words[i - 1] == "--stimuli"
                 else w for i, w in enumerate(words)]  # fmt: skip
        done = CliRunner().invoke(build_cli(), words)
        assert done.exit_code == 0, (command, done.output)
    record_run([block])  # ran with tiny models for the hub names and 4 pairs
    summary = pd.read_csv(tmp_path / "crows-gpt2-summary.csv")
    assert set(summary["crows_metric"]) == {"lmeval"} and (summary["n_pairs"] > 0).all()
    assert set(pd.read_csv(tmp_path / "crows-summary.csv")["crows_metric"]) == {"nangia2020"}
