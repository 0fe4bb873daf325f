"""The Python examples in the user docs run as written (offline pages only).

Each page's ```python blocks run in order in one namespace, in a temporary
directory, as a reader would paste them. Pages whose examples need a model from
the Hugging Face hub (fmat, pll) are covered by their plugins' tests instead.
Fragments fenced as ```py (not ```python) are illustrations and are not run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, run_blocks

DOCS = Path(__file__).resolve().parents[1] / "docs"
OFFLINE_PAGES = [
    pytest.param("stimuli.md", marks=pytest.mark.docs("docs/stimuli.md", "python")),
    pytest.param("table.md", marks=pytest.mark.docs("docs/table.md", "python")),
    pytest.param("analyses.md", marks=pytest.mark.docs("docs/analyses.md", "python")),
    pytest.param("weat.md", marks=pytest.mark.docs("docs/weat.md", "python")),
    pytest.param("cli.md", marks=pytest.mark.docs("docs/cli.md", "python")),
    pytest.param("guarantees.md", marks=pytest.mark.docs("docs/guarantees.md", "python")),
]


def _blocks(page: str, language: str) -> list[str]:
    return code_blocks(DOCS / page, language)


@pytest.mark.parametrize("page", OFFLINE_PAGES)
@pytest.mark.slow
@pytest.mark.usefixtures("example_plugin")  # table.md scores with the example plugin's char_ngram
def test_python_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    yaml_blocks = _blocks(page, "yaml")
    if yaml_blocks:  # the first YAML example is the file the Python example loads
        (tmp_path / "stimuli.yaml").write_text(yaml_blocks[0], encoding="utf-8")
    namespace: dict = {"__name__": f"docs_{page}"}
    blocks = _blocks(page, "python")
    assert blocks, f"{page} has no Python example"
    run_blocks(blocks, name=page, namespace=namespace)


def test_analyses_page_first_and_last_examples_define_their_names():
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "analyses.md"
    fragments = code_blocks(page, "py")
    first, last = fragments[0], fragments[-1]
    assert "table = " in first.split("assoc.analyze", 1)[0]
    assert "compared = " in last.split("assoc.analyze", 1)[0]
