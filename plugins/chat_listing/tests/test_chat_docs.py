"""The Python examples of docs/chat.md run as written, offline, against the local test server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, run_blocks

PAGE = Path(__file__).resolve().parents[3] / "docs" / "chat.md"


@pytest.mark.docs("docs/chat.md", "python")
def test_python_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = code_blocks(PAGE)
    assert len(blocks) >= 3
    namespace = run_blocks(blocks, name="docs/chat.md", namespace={"__name__": "docs_chat"})
    out = capsys.readouterr().out
    assert "not appropriate" not in out or "refusal" in out  # the refusal is reported, never listed
    table = namespace["table"]
    assert "Hindus" not in set(table.loc[table["measure"] == "listed", "target"])
    assert namespace["run"]["n_refusals"] == 2
    assert len(namespace["coded"]) == 3


def test_documented_command_lines_name_real_options():
    from assoc_chat_listing.scorer import ChatListingScorer

    known = {option.name for option in ChatListingScorer.options}
    text = PAGE.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "chat_listing" in line or line.startswith("    -o")]
    used = {name for line in lines for name in re.findall(r"(?:-o|--option) (\w+)=", line)}
    assert used and used <= known, used - known
