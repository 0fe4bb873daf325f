"""Every command block of the README and ``docs/`` runs in a docs test, or carries a ``not run`` tag.

A block fenced as ```python, ```bash, ```console, ```sh or ```shell is what a reader pastes, so
each one is either

* claimed by a test that runs it: the marker ``@pytest.mark.docs("docs/page.md", "bash",
  section=...)`` on a test (read here from the test files' source, literal arguments only), which
  the plugin ``assoc.devtools.docs_blocks`` holds to its claim (the test fails when it passes
  without having run every claimed block through ``assoc.testing.docs.run_blocks`` or
  ``run_commands``); or
* tagged on the line right before its fence with ``<!-- not run: reason -->`` (a reason is
  required), listed by :func:`test_tagged_blocks_are_listed_with_their_reasons`.

Fragments fenced as ```py, and ```text, ```yaml, ```toml, ```mermaid blocks, are not commands.
See docs/dev/testing.md, "The docs are tested".
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from assoc.devtools.docs_blocks import MARKER, claimed
from assoc.testing.docs import Block, page_blocks

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
TEST_FILES = sorted(
    path for folder in [ROOT / "tests", *sorted((ROOT / "plugins").glob("*/tests"))] for path in folder.rglob("*.py")
)


def docs_blocks() -> list[Block]:
    """The blocks a reader runs, of every page of the docs."""
    return [block for page in PAGES for block in page_blocks(page)]


def docs_claims() -> tuple[list[tuple[str, tuple, dict]], list[str]]:
    """The ``pytest.mark.docs(...)`` claims of the test files, and those whose arguments are not literals."""
    claims, bad = [], []
    for path in TEST_FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            func = node.func if isinstance(node, ast.Call) else None
            if not (isinstance(func, ast.Attribute) and func.attr == MARKER):
                continue
            if not (isinstance(func.value, ast.Attribute) and func.value.attr == "mark"):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            try:
                args = tuple(ast.literal_eval(arg) for arg in node.args)
                kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
            except ValueError:
                bad.append(where)
                continue
            claims.append((where, args, kwargs))
    return claims, bad


def test_every_docs_block_is_run_by_a_test_or_tagged_not_run():
    claims, bad = docs_claims()
    assert not bad, f"pytest.mark.docs takes literal arguments only (the claim is read from the source): {bad}"
    covered: dict[tuple[str, int], str] = {}
    for where, args, kwargs in claims:
        assert args and (ROOT / args[0]).is_file(), f"{where}: pytest.mark.docs names no page of the repository"
        blocks = claimed(ROOT, *args, **kwargs)
        assert blocks, f"{where}: pytest.mark.docs{args} claims no untagged block"
        for block in blocks:
            covered.setdefault(block.key, where)
    loose = [b.where(ROOT) for b in docs_blocks() if b.not_run is None and b.key not in covered]
    assert not loose, (
        f"{len(loose)} docs blocks are neither run by a test (pytest.mark.docs) nor tagged "
        f"'<!-- not run: reason -->' on the line before the fence: {', '.join(loose)}"
    )


def test_tagged_blocks_are_listed_with_their_reasons():
    blocks = docs_blocks()
    tagged = [b for b in blocks if b.not_run is not None]
    assert all(b.not_run for b in tagged), [b.where(ROOT) for b in tagged if not b.not_run]
    print(f"\n{len(blocks) - len(tagged)} docs blocks run by the docs tests, {len(tagged)} tagged not run:")
    for block in tagged:
        print(f"  {block.where(ROOT)} ({block.language}): {block.not_run}")
    print(f"the reasons: {Counter(b.not_run for b in tagged).most_common()}")
