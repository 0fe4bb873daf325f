"""Run the code examples of a Markdown page as a reader would paste them (for tests of docs).

``code_blocks`` pulls the fenced blocks of one language (optionally from one ``## ``
section only); ``run_blocks`` runs Python blocks in order in one namespace and fails with
the page, the example's number and the error. Fragments fenced as ```py (not ```python)
are illustrations: ``code_blocks(page, "python")`` leaves them out.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def code_blocks(page: str | Path, language: str = "python", section: str | None = None) -> list[str]:
    """The ```<language> blocks of ``page`` in order; with ``section``, only those under that heading.

    ``section`` is a heading line as written (e.g. ``"## Loaded models stay loaded"``); the
    section ends at the next ``## `` heading.
    """
    text = Path(page).read_text(encoding="utf-8")
    if section is not None:
        if section not in text:
            raise ValueError(f"{Path(page).name} has no section {section!r}")
        text = text.split(section, 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{re.escape(language)}\n(.*?)```", text, flags=re.S)


def run_blocks(blocks: Sequence[str], *, name: str, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run Python ``blocks`` in order in one namespace (warnings silenced) and return the namespace.

    A failing block raises AssertionError naming ``name``, the example's number (from 1),
    the error and the block, so a test says which example of which page broke.
    """
    namespace = {"__name__": "docs_example"} if namespace is None else namespace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for number, block in enumerate(blocks, 1):
            try:
                exec(compile(block, f"{name} example {number}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"{name}, example {number} fails: {type(exc).__name__}: {exc}\n{block}") from exc
    return namespace
