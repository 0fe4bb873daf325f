"""Every Python example of docs/weat.md runs on its own, as pasted into a fresh interpreter.

tests/test_docs_examples.py runs a page's blocks in one process, where an earlier block
may already have imported what a later one needs (e.g. the submodule ``assoc.table.files``).
Here each example runs in a child forked from one interpreter that has imported numpy and
scipy, never assoc or pandas (the ``fresh_interpreters`` fixture of the root conftest.py).
"""

import os
from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks

PAGE = Path(__file__).resolve().parents[3] / "docs" / "weat.md"
BLOCKS = code_blocks(PAGE)
PRELOAD = ("numpy", "scipy.stats", "scipy.optimize")


@pytest.fixture(scope="module")
def runs(fresh_interpreters, tmp_path_factory):
    """Each example's run, in a folder of its own."""
    folders = [tmp_path_factory.mktemp(f"weat-example-{n}") for n in range(1, len(BLOCKS) + 1)]
    env = [dict(os.environ) for _ in folders]
    return fresh_interpreters(
        BLOCKS, cwd=folders, env=env, preload=PRELOAD, logs=tmp_path_factory.mktemp("weat-example-logs")
    )


@pytest.mark.slow
@pytest.mark.docs("docs/weat.md", "python")
@pytest.mark.parametrize("number", range(1, len(BLOCKS) + 1))
def test_example_runs_in_a_fresh_interpreter(number, runs):
    done = runs[number - 1]
    assert done.returncode == 0, f"docs/weat.md example {number} fails:\n{done.stderr[-2000:]}"
