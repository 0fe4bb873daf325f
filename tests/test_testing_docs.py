"""assoc.testing.docs: the helper every docs test uses to pull and run a page's examples."""

from __future__ import annotations

import pytest

from assoc.testing.docs import code_blocks, run_blocks

PAGE = """# Title

```python
x = 1
```

## One

```py
not_run = True
```

```python
y = x + 1
```

```yaml
name: s
```

## Two

```python
raise ValueError("bad example")
```
"""


def test_code_blocks_by_language_and_section(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    assert code_blocks(page) == ["x = 1\n", "y = x + 1\n", 'raise ValueError("bad example")\n']
    assert code_blocks(page, "yaml") == ["name: s\n"]
    assert code_blocks(page, "py") == ["not_run = True\n"]
    assert code_blocks(page, section="## One") == ["y = x + 1\n"]
    with pytest.raises(ValueError, match="page.md has no section '## Three'"):
        code_blocks(page, section="## Three")


def test_run_blocks_shares_one_namespace_and_names_the_failing_example(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    blocks = code_blocks(page)
    namespace = run_blocks(blocks[:2], name="page.md")
    assert namespace["y"] == 2
    with pytest.raises(AssertionError, match=r"page.md, example 3 fails: ValueError: bad example"):
        run_blocks(blocks, name="page.md")


def test_blocks_know_their_line_and_not_run_tag_and_runners_record_them(tmp_path):
    from assoc.testing.docs import command_lines, page_blocks, ran_blocks, run_commands

    page = tmp_path / "tagged.md"
    page.write_text(
        "# T\n\n<!-- not run: needs a GPU -->\n```bash\nassoc gpu\n```\n\n"
        "```bash\nassoc scorers  # what is installed\n```\n\n```sh\necho hi > out.txt\n```\n",
        encoding="utf-8",
    )
    gpu, scorers, echo = page_blocks(page)
    assert (gpu.line, gpu.not_run, scorers.line, scorers.not_run, echo.language) == (4, "needs a GPU", 8, None, "sh")
    assert command_lines(scorers) == ["assoc scorers  # what is installed"] and command_lines(echo) is None
    assert command_lines("$ assoc show t.csv\nerror: ...\n") == ["assoc show t.csv"]
    outputs = run_commands([scorers, echo], cwd=tmp_path, name="tagged.md")
    assert "weat" in outputs[0] and (tmp_path / "out.txt").read_text() == "hi\n"
    assert {scorers.key, echo.key} <= ran_blocks() and gpu.key not in ran_blocks()
    with pytest.raises(AssertionError, match="tagged.md, command block 1 fails"):
        run_commands(["false\n"], cwd=tmp_path, name="tagged.md")
