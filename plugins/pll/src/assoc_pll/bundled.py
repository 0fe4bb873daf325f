"""Bundled stimuli of Watson, Beekhuizen & Stevenson (2023).

Built from the data file ``data/watson2023_gender_attitudes.yaml`` (a copy of the
project's extraction of the paper; see its ``meta`` and ``gaps_and_ambiguities``).

``watson2023``
    The 20 role-noun sets (14 three-way, 6 two-way), one design each, named after
    the set's gender-neutral (or, for two-way sets, unmarked) variant with spaces as
    underscores (``firefighter``, ``police_officer``, ``actor``). Query
    ``"{TARGET} is a [MASK] from {ATTRIB}"`` ("an" for the sets anchor, actor and heir;
    no final period, as in the authors' code, github.com/juliawatson/bert-social-attitudes,
    ``papineau/mlm_scoring/part_1_create_stimuli.py``), mask groups ``FEM`` / ``MASC`` / ``NEUT`` (three-way) or
    ``FEM`` / ``MASC_or_NEUT`` (two-way), targets the 12 + 12 names (groups
    ``female``, ``male``), attributes the 50 U.S. states (group ``state``).
``watson2023_they``
    The singular-they frame with the antecedent examples printed in the paper
    (Table 3); the 335 original sentences are unpublished, so this is an
    illustration of the design, not the stimulus set.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from assoc import Design, Stimuli

DATA_FILE = "watson2023_gender_attitudes.yaml"
# Sets whose variants take "an" (the paper: "David is an (actor, actress) from Kansas";
# the authors' code uses "an" for exactly the heir, anchor and actor sets).
_AN_SETS = {"anchor", "actor", "heir"}


@lru_cache(maxsize=1)
def watson2023_data() -> dict[str, Any]:
    """The parsed data file (role-noun sets, names, states, reported results)."""
    import yaml

    text = resources.files("assoc_pll").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _set_name(variant: str) -> str:
    return variant.replace(" ", "_")


def role_noun_designs() -> list[Design]:
    """One design per role-noun set (see the module docstring)."""
    part = watson2023_data()["part1_role_nouns"]
    names = {group: tuple(items) for group, items in part["names"].items() if group in ("female", "male")}
    states = {"state": tuple(part["states"]["items"])}
    designs = []
    for kind, groups in (("three_way", ("FEM", "MASC", "NEUT")), ("two_way", ("FEM", "MASC_or_NEUT"))):
        for entry in part["role_noun_sets"][kind]:
            unmarked = entry[groups[-1]]
            article = "an" if unmarked in _AN_SETS else "a"
            designs.append(
                Design(
                    name=_set_name(unmarked),
                    # No final period: the authors' code builds f"{name} is {determiner} {role} from {state}".
                    queries=(f"{{TARGET}} is {article} [MASK] from {{ATTRIB}}",),
                    mask={group: (entry[group],) for group in groups},
                    target=names,
                    attribute=states,
                    description=f"Watson et al. (2023) {kind.replace('_', '-')} role-noun set "
                    f"{', '.join(entry['as_printed'])}",
                )
            )
    return designs


def load_watson2023() -> Stimuli:
    """The 20 role-noun designs of Watson et al. (2023)."""
    data = watson2023_data()
    return Stimuli(
        role_noun_designs(),
        name="watson2023",
        description="Watson, Beekhuizen & Stevenson (2023) role-noun sets x 24 names x 50 states",
        meta={"citation": data["meta"]["citation"]},
    )


def load_watson2023_they() -> Stimuli:
    """The singular-they frame with the antecedent examples of Watson et al.'s Table 3."""
    part = watson2023_data()["part2_singular_they"]
    examples = {
        row["type"]: row["example"] for row in part["antecedent_types_table3"] if row["type"] != "Inanimate Control"
    }
    design = Design(
        name="they_examples",
        queries=("{TARGET} said [MASK] would be coming late to dinner.",),
        mask={"they": ("they",)},
        target={
            kind.lower().replace(", ", "_").replace(" ", "_").replace("-", "_"): (example,)
            for kind, example in examples.items()
        },
        description="Singular-they frame of Camilliere et al. (2021) / Watson et al. (2023), one printed "
        "example antecedent per type (the 335 original items are unpublished)",
    )
    return Stimuli([design], name="watson2023_they", meta={"citation": watson2023_data()["meta"]["citation"]})
