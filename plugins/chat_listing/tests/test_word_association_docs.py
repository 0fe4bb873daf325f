"""The Python examples of docs/word-association.md run as written, offline (local chat server, tiny MLM, GloVe)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, run_blocks

PAGE = Path(__file__).resolve().parents[3] / "docs" / "word-association.md"


@pytest.mark.slow
@pytest.mark.docs("docs/word-association.md", "python")
def test_python_examples_run(tmp_path, monkeypatch):
    pytest.importorskip("assoc_weat")
    pytest.importorskip("assoc_fmat")
    monkeypatch.chdir(tmp_path)
    blocks = code_blocks(PAGE)
    assert len(blocks) == 3
    namespace = run_blocks(blocks, name="docs/word-association.md", namespace={"__name__": "docs_wat"})
    assert (namespace["d"]["mean_d"] > 0).all()  # planted: pleasant words with flowers
    agree = namespace["agree"]
    pairs = agree[agree["kind"] == "correlation"]
    assert {frozenset((x, y)) for x, y in zip(pairs["x"], pairs["y"])} == {
        frozenset(p) for p in (("weat", "fmat"), ("weat", "chat_word_association"), ("fmat", "chat_word_association"))
    }
    summary = namespace["summary"].set_index("method")
    # every method is stereotype-congruent on this IAT, so every aligned score is positive
    assert (summary["congruence (mean s(X) - mean s(Y))"] > 0).all()
    assert summary.loc["chat_word_association", "value"] > 0.5


def test_documented_command_lines_name_real_options():
    from assoc_chat_listing.word_association.analyses import WordAssociationAnalysis
    from assoc_chat_listing.word_association.scorer import ChatWordAssociationScorer

    known = {o.name for o in ChatWordAssociationScorer.options} | {o.name for o in WordAssociationAnalysis.options}
    text = PAGE.read_text(encoding="utf-8")
    used = {name for name in re.findall(r"(?:-o|--option) (\w+)=", text)}
    assert used and used <= known, used - known
