"""docs/compare.md runs as written, with every installed scorer, and its printed numbers are true."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

import assoc

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: The five methods the page compares; each one that is installed must be in the result.
METHODS = ("fmat", "pll", "weat", "sbert_cosine", "chat_listing")


def _blocks(language: str) -> list[str]:
    return re.findall(
        rf"```{language}\n(.*?)```",
        (DOCS / "compare.md").read_text(encoding="utf-8"),
        flags=re.DOTALL,
    )


def test_compare_page_runs_with_every_installed_scorer(tmp_path, monkeypatch):
    for plugin in ("torch", "assoc_fmat", "assoc_weat", "assoc_pll", "matplotlib"):
        pytest.importorskip(plugin)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "stimuli.yaml").write_text(_blocks("yaml")[0], encoding="utf-8")
    namespace: dict = {"__name__": "docs_compare"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for number, block in enumerate(_blocks("python"), 1):
            try:
                exec(compile(block, f"compare.md example {number}", "exec"), namespace)
            except Exception as exc:  # pragma: no cover - the message is the point
                pytest.fail(
                    f"compare.md, example {number} fails: {type(exc).__name__}: {exc}\n{block}"
                )
    installed = [m for m in METHODS if m in assoc.scorers()]
    result = namespace["result"]
    pairs = result[result.kind == "correlation"]
    compared = list(dict.fromkeys([*pairs["x"], *pairs["y"]]))
    assert sorted(compared) == sorted(installed)
    assert len(pairs) == len(installed) * (len(installed) - 1) // 2
    assert set(result["n"]) == {10}
    assert (tmp_path / "convergence.png").stat().st_size > 1000
    # the numbers the page prints for fmat, pll and weat (seeded training on a CPU)
    printed = _blocks("text")[0]
    for x, y in (("fmat", "pll"), ("fmat", "weat"), ("pll", "weat")):
        line = next(
            line
            for line in printed.splitlines()
            if re.search(rf"correlation\s+{x}\s+{y}\s", line)
        )
        shown = float(line.split()[4])
        assert pairs[(pairs.x == x) & (pairs.y == y)][
            "estimate"
        ].item() == pytest.approx(shown, abs=0.02)
