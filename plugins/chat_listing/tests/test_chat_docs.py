"""The Python examples of docs/chat.md run as written, offline, against the local test server."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

PAGE = Path(__file__).resolve().parents[3] / "docs" / "chat.md"


def test_python_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 3
    namespace: dict = {"__name__": "docs_chat"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for number, block in enumerate(blocks, 1):
            exec(compile(block, f"docs/chat.md example {number}", "exec"), namespace)
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
