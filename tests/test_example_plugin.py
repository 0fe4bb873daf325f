"""The example plugin from docs/write-a-plugin.md is installed, discovered and conforms."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from click.testing import CliRunner

from assoc.cli import build_cli
from assoc.testing import check_scorer

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "assoc-example"


def test_installed_through_entry_point():
    entry_points = {ep.name: ep.value for ep in metadata.entry_points(group="assoc")}
    assert entry_points.get("example") == "assoc_example.plugin"


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
