"""docs/report.md runs as written: its Python example, then its command-line example on the files it wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

import assoc
from assoc.testing.docs import code_blocks, run_blocks, run_commands

PAGE = Path(__file__).resolve().parents[1] / "docs" / "report.md"


@pytest.mark.slow
@pytest.mark.docs("docs/report.md", "python")
@pytest.mark.docs("docs/report.md", "bash")
def test_the_report_page_runs_as_written(tmp_path, monkeypatch):
    missing = [s for s in ("fmat", "clm", "weat", "crows_pairs") if s not in assoc.scorers()]
    if missing:
        pytest.fail(f"docs/report.md needs the scorers {', '.join(missing)} (every plugin is installed by make setup)")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stimuli.yaml").write_text(code_blocks(PAGE, "yaml")[0], encoding="utf-8")
    namespace = run_blocks(code_blocks(PAGE, "python"), name="report.md")
    made = namespace["made"]
    assert set(made.headlines["analysis"]) == {"crows_pairs"}  # convergence has its own section
    assert (tmp_path / "study.html").read_text(encoding="utf-8") == made.html
    assert (tmp_path / "card.md").read_text(encoding="utf-8") == made.card
    (tmp_path / "study.html").unlink()
    run = [block for block in code_blocks(PAGE, "bash") if block.not_run is None]
    assert len(run) == 1 and run[0].startswith("assoc report ")
    run_commands(run, cwd=tmp_path, name="report.md")
    assert "crows_pairs: crows-summary.csv" in (tmp_path / "study.html").read_text(encoding="utf-8")
