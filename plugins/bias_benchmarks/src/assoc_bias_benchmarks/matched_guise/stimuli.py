"""Matched Guise Probing stimuli of Hofmann, Kalluri, Jurafsky & King (2024).

Copied from the authors' repository (github.com/valentinhofmann/dialect-prejudice, commit 61e6421,
MIT licence, ``data/hofmann2024/LICENSE``): the African American English / Standard American English
pairs of ``data/pairs/habitual.txt`` (699 pairs), the attribute lists of ``data/attributes``
(``katz``: the 37 Princeton Trilogy adjectives; ``occupations``: 84; ``guilt``: acquitted,
convicted; ``penalty``: life, death), the prompts of ``probing/prompting.py`` and the human
ratings of ``notebooks/ratings.py`` (stereotype strengths of Katz & Braly 1933, Gilbert 1951,
Karlins et al. 1969, Bergsieker et al. 2012, and favourability ratings).

``hofmann2024`` has one design per attribute list: the prompts with ``{}`` written ``{TARGET}`` and
`` [MASK]`` appended (the authors append ``" <mask>"`` for RoBERTa and read the next-token
distribution for GPT-2), target groups ``aave`` and ``sae`` (the pairs' two sides, in file order,
so the i-th ``aave`` sentence and the i-th ``sae`` sentence are a pair) and one mask group of
attributes. Score it with ``fmat`` (masked LMs): each row is log P(attribute | prompt with the
sentence); the ``matched_guise`` analysis turns the rows into association scores.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from assoc import Design, Stimuli, StimuliError

CITATION = (
    "Hofmann, V., Kalluri, P. R., Jurafsky, D., & King, S. (2024). AI generates covertly racist decisions "
    "about people based on their dialect. Nature, 633, 147-154. doi:10.1038/s41586-024-07856-5"
)
SOURCE = "github.com/valentinhofmann/dialect-prejudice, commit 61e6421c7892bd229f88658b9d1f3f700df75e5e (MIT)"
GUISES = ("aave", "sae")
#: attribute list -> the prompts of probing/prompting.py it is used with (helpers.load_prompts)
PROMPTS_OF = {"katz": "trait", "occupations": "occupation", "guilt": "guilt", "penalty": "penalty"}


def _data(*parts: str) -> Any:
    return resources.files("assoc_bias_benchmarks.matched_guise").joinpath("data", *parts)


@lru_cache(maxsize=1)
def prompts() -> dict[str, list[str]]:
    """The authors' prompts (``{}`` marks the quoted sentence), by kind: trait, occupation, guilt, penalty, race."""
    loaded: dict[str, list[str]] = json.loads(_data("prompts.json").read_text(encoding="utf-8"))["prompts"]
    return loaded


@lru_cache(maxsize=1)
def ratings() -> dict[str, Any]:
    """The human ratings: ``stereotype_ratings`` (experiment -> attribute -> %), ``years``, ``favorability``."""
    loaded: dict[str, Any] = json.loads(_data("ratings.json").read_text(encoding="utf-8"))
    return loaded


def attributes(name: str) -> list[str]:
    """An attribute list of the authors (``katz``, ``occupations``, ``guilt``, ``penalty``)."""
    if name not in PROMPTS_OF:
        raise StimuliError(f"unknown attribute list {name!r} (known: {', '.join(PROMPTS_OF)})")
    # as helpers.load_attributes: f.read().strip().split("\n")
    return _data("attributes", f"{name}.txt").read_text(encoding="utf-8").strip().split("\n")


def read_pairs(path: str | Path | None = None) -> list[tuple[str, str]]:
    """The (AAE, SAE) pairs of a tab-separated file (default: the bundled ``habitual.txt``)."""
    if path is None:
        text = _data("habitual.txt").read_text(encoding="utf-8")
        where = "habitual.txt"
    else:
        from assoc.infra import read_text

        where = str(path)
        if not Path(path).is_file():
            raise StimuliError(f"pairs file not found: {path}")
        text = read_text(Path(path), what="pairs file", error=StimuliError)
    pairs = []
    # as mgp.py: f.read().strip().split("\n"), then line.strip().split("\t")
    for number, line in enumerate(text.strip().split("\n"), start=1):
        fields = line.strip().split("\t")
        if len(fields) != 2 or not all(f.strip() for f in fields):
            raise StimuliError(f"{where}, line {number}: needs two tab-separated sentences (AAE, SAE)")
        pairs.append((fields[0], fields[1]))
    return pairs


def query(prompt: str) -> str:
    """An authors' prompt as an assoc query: ``{}`` -> ``{TARGET}``, `` [MASK]`` appended."""
    if prompt.count("{}") != 1:
        raise StimuliError(f"prompt {prompt!r} must contain exactly one {{}}")
    return prompt.replace("{}", "{TARGET}") + " [MASK]"


def guise_design(
    attribute_list: str, pairs: list[tuple[str, str]] | None = None, prompt_kind: str | None = None
) -> Design:
    """One Matched Guise Probing design: the prompts of ``prompt_kind`` x the pairs x the attributes."""
    chosen = pairs if pairs is not None else read_pairs()
    kind = prompt_kind or PROMPTS_OF[attribute_list]
    return Design(
        name=attribute_list,
        queries=tuple(query(p) for p in prompts()[kind]),
        target={"aave": tuple(a for a, _ in chosen), "sae": tuple(s for _, s in chosen)},
        mask={attribute_list: tuple(attributes(attribute_list))},
        description=f"Matched Guise Probing (Hofmann et al. 2024): {kind} prompts x {attribute_list} attributes",
    )


def hofmann2024_stimuli(pairs_path: str | Path | None = None, designs: tuple[str, ...] = tuple(PROMPTS_OF)) -> Stimuli:
    """The ``hofmann2024`` stimuli: one design per attribute list (see the module docstring)."""
    pairs = read_pairs(pairs_path)
    meta = {
        "citation": CITATION,
        "source": SOURCE if pairs_path is None else f"{SOURCE}; pairs from {pairs_path}",
        "license": "MIT",
        "pairs": len(pairs),
    }
    return Stimuli(
        [guise_design(name, pairs) for name in designs],
        name="hofmann2024",
        description="Matched Guise Probing (Hofmann et al., Nature 2024)",
        meta=meta,
    )


def load_hofmann2024() -> Stimuli:
    """The bundled ``hofmann2024`` stimuli (habitual pairs; katz, occupations, guilt, penalty)."""
    return hofmann2024_stimuli()
