"""The suite is hermetic: a test run writes nothing into the user's home directory (conftest.py at the root)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Tests that, without the root conftest.py, write into the home directory (checked when this test was
#: written, by running them with ``--confcutdir=tests``): assoc's result cache and its fingerprint memo
#: (~/.cache/assoc), matplotlib's font cache (~/.cache/matplotlib or ~/.config/matplotlib).
SLICE = (
    "tests/test_plotting.py::test_one_row_forest_plot_has_a_label_and_a_title",
    "tests/test_bad_inputs.py::test_corrupt_weights_are_one_line_naming_the_model_and_file[fmat]",
)

#: What the root conftest.py sets for this session; a developer's shell has none of them.
SET_BY_CONFTEST = (
    "ASSOC_CACHE_DIR",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "HF_HOME",
    "MPLCONFIGDIR",
    "TORCH_HOME",
    "RAY_AUTH_TOKEN",
)


@pytest.mark.slow
def test_a_run_leaves_an_empty_home_empty(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in SET_BY_CONFTEST}
    env.update(HOME=str(home), ASSOC_STRICT_SKIPS="1")  # a skipped test would write nothing and prove nothing
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'base'}", *SLICE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0 and f"{len(SLICE)} passed" in result.stdout, result.stdout + result.stderr
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []
