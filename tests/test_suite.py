"""The suite's own machinery (conftest.py at the root): a hermetic environment, examples in fresh interpreters."""

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


def test_examples_in_fresh_interpreters_start_as_a_pasted_one_does(fresh_interpreters, tmp_path):
    examples = [
        "import assoc\nprint(assoc.table.schema.COLUMNS)",  # assoc.table was never imported: fails when fresh
        "import sys\nprint(sorted(m for m in sys.modules if m.startswith('assoc')))\nx = 1",
        "print(x)",  # a namespace of its own: the name of the example before is not there
        "import os, sys\nprint(os.getcwd(), os.environ['MARK'])\nsys.exit(3)",
    ]
    folders = [tmp_path / str(n) for n in range(len(examples))]
    for folder in folders:
        folder.mkdir()
    env = [{**os.environ, "MARK": f"m{n}"} for n in range(len(examples))]
    runs = fresh_interpreters(examples, cwd=folders, env=env, preload=("numpy",), logs=tmp_path / "logs")
    assert [r.returncode for r in runs] == [1, 0, 1, 3]
    assert "has no attribute 'table'" in runs[0].stderr
    assert runs[1].stdout == "[]\n"
    assert "NameError: name 'x' is not defined" in runs[2].stderr
    assert runs[3].stdout == f"{folders[3]} m3\n"
    with pytest.raises(RuntimeError, match="imported pandas"):
        fresh_interpreters(["pass"], cwd=[tmp_path], env=[dict(os.environ)], preload=("pandas",), logs=tmp_path / "l")
