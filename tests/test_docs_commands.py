"""The command blocks of the docs that no page test runs, run as written, offline.

Each test runs one page's (or a few small pages') ```bash blocks in order in one temporary
directory through :func:`assoc.testing.docs.run_commands` (``assoc`` lines in this process through
the command's entry point, other blocks through ``bash``), with the bundled GloVe vectors, tiny
models the blocks build themselves (``assoc models tiny``) and a temporary cache. The marker
``pytest.mark.docs`` says which blocks each test runs; ``tests/test_docs_blocks.py`` checks that
every block of the docs is run by some test or tagged ``<!-- not run: reason -->``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, run_blocks, run_commands

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def untagged(page: str, language: str = "bash") -> list:
    """The blocks of ``page`` (relative to ``docs/``) that are not tagged not run."""
    return [block for block in code_blocks(DOCS / page, language) if block.not_run is None]


@pytest.fixture
def reader(tmp_path, monkeypatch) -> Path:
    """A fresh directory and cache, offline, figures to files: where a reader pastes the commands."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


@pytest.mark.slow  # two tiny models, FMAT on both, MiniLM on one WEAT test
@pytest.mark.docs("docs/cli.md", "bash")
def test_the_cli_page_commands_run(reader):
    outputs = run_commands(untagged("cli.md"), cwd=reader, name="docs/cli.md")
    assert (reader / "weat1-d.csv").is_file() and (reader / "both-d.csv").is_file()
    assert (reader / "agree.png").stat().st_size > 1000 and (reader / "models.png").stat().st_size > 1000
    assert "ICC(A,1)" in "".join(outputs)


@pytest.mark.slow  # the ten Caliskan tests on GloVe 50d, three times, and ValNorm's norms
@pytest.mark.docs("docs/weat.md", "bash")
@pytest.mark.docs("docs/replication/caliskan2017.md", "bash")
@pytest.mark.docs("docs/replication/toney2021.md", "bash")
def test_the_weat_commands_run(reader):
    for page in ("weat.md", "replication/caliskan2017.md", "replication/toney2021.md"):
        run_commands(untagged(page), cwd=reader, name=f"docs/{page}")
    assert (reader / "t.csv").is_file() and (reader / "caliskan.csv").is_file() and (reader / "vn.csv").is_file()


@pytest.mark.slow  # builds two tiny BERTs and scores with them
@pytest.mark.docs("docs/fmat.md", "bash")
@pytest.mark.docs("docs/fmat.md", "python", containing="build_bert_wordpiece")
def test_the_fmat_page_runs_on_tiny_models(reader):
    (output,) = run_commands(untagged("fmat.md"), cwd=reader, name="docs/fmat.md")
    assert "ICC(A,1)" in output
    run_blocks([b for b in untagged("fmat.md", "python") if "build_bert_wordpiece" in b], name="docs/fmat.md")


@pytest.mark.docs("docs/chat.md", "bash")
def test_the_chat_dry_run_sends_nothing(reader, monkeypatch):
    """``dry_run=true`` prints what would be sent: no key, no network."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    (output,) = run_commands(untagged("chat.md"), cwd=reader, name="docs/chat.md")
    assert output.strip()


@pytest.mark.docs("docs/gpu.md", "python")
@pytest.mark.docs("docs/plugin-api.md", "python")
def test_the_gpu_and_plugin_api_examples_run(reader):
    namespace = run_blocks(untagged("gpu.md", "python"), name="docs/gpu.md")
    assert namespace["table"].assoc.provenance["options"]["device"] == "auto"
    run_blocks(untagged("plugin-api.md", "python"), name="docs/plugin-api.md")
