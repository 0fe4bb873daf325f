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
