"""Every Python example of docs/weat.md runs on its own, as pasted into a fresh interpreter.

tests/test_docs_examples.py runs a page's blocks in one process, where an earlier block
may already have imported what a later one needs (e.g. the submodule ``assoc.table.files``).
"""

import subprocess
import sys
from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks

PAGE = Path(__file__).resolve().parents[3] / "docs" / "weat.md"
BLOCKS = code_blocks(PAGE)


@pytest.mark.parametrize("number", range(1, len(BLOCKS) + 1))
def test_example_runs_in_a_fresh_interpreter(number, tmp_path):
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", BLOCKS[number - 1]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"docs/weat.md example {number} fails:\n{done.stderr[-2000:]}"
