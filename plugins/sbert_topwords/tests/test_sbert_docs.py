"""Every Python example of docs/sbert.md runs on its own, as pasted into a fresh interpreter (offline)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks

PAGE = Path(__file__).resolve().parents[3] / "docs" / "sbert.md"
BLOCKS = code_blocks(PAGE)


def test_page_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("number", range(1, len(BLOCKS) + 1))
def test_example_runs_in_a_fresh_interpreter(number, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ASSOC_CACHE_DIR": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", BLOCKS[number - 1]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"docs/sbert.md example {number} fails:\n{done.stderr[-2000:]}"
