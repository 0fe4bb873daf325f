"""The example plugin from docs/write-a-plugin.md: installed with pip, discovered, conforms, passes its own tests.

``make setup`` does not install it; the ``example_plugin`` fixture (tests/conftest.py) installs it with
pip into a temporary folder of the session. Its own tests (``docs/examples/assoc-example/tests``) run
the way a plugin author runs them, in another process with the plugin installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from assoc.cli import build_cli
from assoc.testing import check_scorer
from assoc.testing.docs import code_blocks, record_run, run_blocks

pytestmark = pytest.mark.usefixtures("example_plugin")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "assoc-example"


def test_installed_through_entry_point():
    entry_points = {ep.name: ep for ep in metadata.entry_points(group="assoc")}
    assert entry_points["example"].value == "assoc_example.plugin"
    assert entry_points["example"].dist is not None and entry_points["example"].dist.name == "assoc-example"


def test_passes_conformance_check():
    table = check_scorer("char_ngram", {"target": {"T": ["ant", "bee"]}, "attribute": {"A": ["antler"]}}, expect_rows=2)
    assert table["n"].tolist() == [3, 3]


def test_docs_show_exactly_the_tested_files():
    """Every file block in the how-to page is the file that is installed and tested."""
    page = (ROOT / "docs" / "write-a-plugin.md").read_text()
    blocks = re.findall(r"```(?:python|toml)\n# file: (\S+)\n(.*?)```", page, flags=re.S)
    shown = {name: body for name, body in blocks}
    assert set(shown) == {
        "pyproject.toml",
        "src/assoc_example/plugin.py",
        "src/assoc_example/scorer.py",
        "src/assoc_example/analyses.py",
        "src/assoc_example/executor.py",
        "tests/test_char_ngram.py",
        "tests/test_templates.py",
    }
    for name, body in shown.items():
        assert (EXAMPLE / name).read_text() == body, f"docs/write-a-plugin.md is out of date for {name}"


def test_example_plugin_is_listed_apart():
    result = CliRunner().invoke(build_cli(), ["scorers"])
    assert result.exit_code == 0
    real, _, examples = result.output.partition("examples (")
    assert "char_ngram" in examples and "char_ngram" not in real
    assert "fmat" in real


@pytest.mark.slow
@pytest.mark.docs("docs/write-a-plugin.md", "python", containing="# file: ")
def test_its_own_tests_pass_with_it_installed(example_plugin: Path | None, tmp_path: Path):
    """The plugin's tests, as its author runs them: another process, the plugin installed (py.typed included)."""
    from importlib import resources

    assert resources.files("assoc_example").joinpath("py.typed").is_file()  # package data reached the install
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(example_plugin or ""), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'base'}"]
        + [str(EXAMPLE / "tests")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and "6 passed" in done.stdout, done.stdout + done.stderr
    # the page's file blocks are these files (test_docs_show_exactly_the_tested_files): installed, imported, tested
    files = [b for b in code_blocks(ROOT / "docs" / "write-a-plugin.md") if b.startswith("# file: ")]
    assert files and all(
        (EXAMPLE / b.split("\n", 1)[0][len("# file: ") :]).read_text() == b.split("\n", 1)[1] for b in files
    )
    record_run(files)


@pytest.mark.docs("docs/write-a-plugin.md", "python", section="## 5. Install and use it")
@pytest.mark.docs("docs/write-a-plugin.md", "python", section="## Analyses, stimuli and commands")
def test_the_guides_usage_and_hook_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Section 5's call of the installed scorer, and the hooks of analyses, stimuli and commands (defined)."""
    monkeypatch.chdir(tmp_path)
    page = ROOT / "docs" / "write-a-plugin.md"
    namespace = run_blocks(code_blocks(page, section="## 5. Install and use it"), name="write-a-plugin.md, section 5")
    assert set(namespace["table"]["scorer"]) == {"char_ngram"}
    namespace = run_blocks(
        code_blocks(page, section="## Analyses, stimuli and commands"), name="write-a-plugin.md, hooks"
    )
    assert namespace["MeanByGroup"].name == "mean_by_group"
