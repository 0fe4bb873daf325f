"""The docs quote speed only from files that ``python -m benchmarks`` generates.

Every ``docs/benchmarks/<name>.md`` (written by the harness, one per comparison) is included by some
page with pymdownx.snippets (``--8<-- "benchmarks/<name>.md"``), every include resolves, and no page
(nor the README) types a speed figure of its own: a ratio such as ``5.4×`` or ``3x``, "N times
faster", or a rate in requests per second, queries per minute or tokens per second.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATED = DOCS / "benchmarks"
INCLUDE = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$', re.MULTILINE)
SPEED = re.compile(
    r"\d×(?!\d)"  # 5.4×, 28.2× (a factor written next to its number; "768 × 30,522" and "2 × the p" are formulas)
    r"|\d(?:\.\d+)?x(?![\w-])"  # 3x, 1.3x (not 2X-Q1, a study's name)
    r"|\d[\d.,]*\s*(?:×|x|times)?\s*(?:faster|slower)\b"  # 2.3 times faster, 2 × faster
    r"|\d[\d.,]*\s*(?:req/s|requests? per second|queries/min|queries per minute|tokens/s|tokens per second|GFLOP/s)"
)
#: (page, text) pairs that match SPEED but are not speed claims
ALLOWED: set[tuple[str, str]] = set()


def pages() -> list[Path]:
    return [p for p in sorted(DOCS.rglob("*.md")) if GENERATED not in p.parents] + [ROOT / "README.md"]


def test_snippets_enabled_with_the_docs_as_base_path():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    snippets = [e for e in config["markdown_extensions"] if isinstance(e, dict) and "pymdownx.snippets" in e]
    assert snippets and snippets[0]["pymdownx.snippets"]["base_path"] == ["docs"]
    assert "benchmarks/" in config["exclude_docs"]  # generated tables are included, never pages of their own


def test_every_generated_table_is_included_and_every_include_resolves():
    generated = {p.relative_to(DOCS).as_posix() for p in GENERATED.glob("*.md")}
    assert {
        "benchmarks/fmat.md",
        "benchmarks/pll.md",
        "benchmarks/sbert.md",
        "benchmarks/weat.md",
        "benchmarks/chat.md",
    } <= generated
    included = set()
    for page in pages():
        for target in INCLUDE.findall(page.read_text(encoding="utf-8")):
            assert (DOCS / target).is_file(), f"{page.name} includes {target}, which does not exist"
            included.add(target)
    assert generated <= included, f"generated but not included by any page: {sorted(generated - included)}"


def speed_claims(name: str, text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        if INCLUDE.match(line):
            continue
        for match in SPEED.finditer(line):
            context = line[max(0, match.start() - 10) : match.end() + 15]
            if not any(page == name and allowed in line for page, allowed in ALLOWED):
                found.append(f"{name}: ...{context}...")
    return found


def test_the_pattern_catches_typed_figures():
    # the claims issue 28 withdrew, as they were printed
    for claim in (
        "2.3× faster",
        "obvious / warm | **28.2×**",
        "8.75×",
        "1.51x",
        "554.5 req/s",
        "9,024 queries/min",
        "182.8 tokens/s",
        "1.2–1.5 times faster",
    ):
        assert speed_claims("x.md", claim), claim
    for fine in (
        "768 × 30,522",
        "1,366 terms × 2 prompts",
        "240 unique queries × 6 options",
        "a 3x3 grid",
        "10×10 / 25×25",
        "`2X-Q1`",
        "(2 × the smaller one-sided p)",
    ):
        assert not speed_claims("x.md", fine), fine


def test_no_page_types_its_own_speed_figures():
    found = [hit for page in pages() for hit in speed_claims(page.name, page.read_text(encoding="utf-8"))]
    assert not found, "speed figures typed into the docs (quote docs/benchmarks/*.md instead):\n" + "\n".join(found)
