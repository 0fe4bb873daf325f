"""Every Python example of docs/sbert.md runs on its own, as pasted into a fresh interpreter (offline).

The examples run in children forked from one interpreter that has imported torch and
transformers, never assoc (the ``fresh_interpreters`` fixture of the root conftest.py).
"""

import os
from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks

PAGE = Path(__file__).resolve().parents[3] / "docs" / "sbert.md"
BLOCKS = code_blocks(PAGE)
PRELOAD = ("torch", "transformers", "scipy.stats")  # not sentence_transformers: it imports pandas


def test_page_has_examples():
    assert len(BLOCKS) >= 3


@pytest.fixture(scope="module")
def runs(fresh_interpreters, tmp_path_factory):
    """Each example's run, in a folder of its own with a cache of its own."""
    folders = [tmp_path_factory.mktemp(f"sbert-example-{n}") for n in range(1, len(BLOCKS) + 1)]
    offline = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env = [{**os.environ, **offline, "ASSOC_CACHE_DIR": str(f / "c")} for f in folders]
    return fresh_interpreters(
        BLOCKS, cwd=folders, env=env, preload=PRELOAD, logs=tmp_path_factory.mktemp("sbert-example-logs")
    )


@pytest.mark.slow
@pytest.mark.docs("docs/sbert.md", "python")
@pytest.mark.parametrize("number", range(1, len(BLOCKS) + 1))
def test_example_runs_in_a_fresh_interpreter(number, runs):
    done = runs[number - 1]
    assert done.returncode == 0, f"docs/sbert.md example {number} fails:\n{done.stderr[-2000:]}"
