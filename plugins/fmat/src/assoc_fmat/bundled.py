"""The study designs of Bao (2024) as bundled stimuli ``bao2024``.

Source: ``data/bao2024_fmat.yaml`` (a copy of the shared extraction of the paper and
the FMAT R manual). Each query of a study is one design named ``<study>-<query id>``
("2A-Q1", "3A-Q1", "4A-Q3"); ``bao2024:2A`` selects every design of study 2A.
Studies 1A, 1B and 1C are listed but their target items (50 occupations, 50 names,
3,644 names) are not printed in the paper: selecting them raises a clear error and
no items are invented. Study 4's [MASK] candidates are the year tokens 1800-2019.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from assoc import Design, Stimuli, StimuliError

DATA_FILE = "bao2024_fmat.yaml"


@lru_cache(maxsize=1)
def _raw() -> dict[str, Any]:
    import yaml

    text = resources.files("assoc_fmat").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _groups(value: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group, words in value.items():
        if isinstance(words, Mapping) and "range" in words:
            out[group] = {"range": list(words["range"])}
        elif isinstance(words, Mapping) and "items" in words:
            out[group] = words["items"]
        else:
            out[group] = words
    return out


def _study_mask(study: Mapping[str, Any]) -> dict[str, Any] | None:
    """Study-level [MASK] candidates; Study 2 nests them by relation (attitudinal/nonattitudinal)."""
    options = study.get("mask_options")
    if options is None:
        return None
    if all(isinstance(v, Mapping) and "range" not in v for v in options.values()):
        # {attitudinal: {positive: [like], negative: [dislike]}, nonattitudinal: {...}} ->
        # {positive: [like, notice], negative: [dislike, ignore]}: paired by position for LPRs.
        merged: dict[str, list[str]] = {}
        for relation in options.values():
            for side, words in relation.items():
                merged.setdefault(side, []).extend(words)
        return merged
    return _groups(options)


def _missing(study: Mapping[str, Any]) -> bool:
    targets = study.get("targets") or {}
    return any(isinstance(v, Mapping) and v.get("items") is None and "ref" not in v for v in targets.values())


def study_designs(study: Mapping[str, Any]) -> list[Design]:
    """The designs (one per query) of one study entry of the YAML file."""
    designs = []
    for query in study["queries"]:
        mask = _groups(query["mask_options"]) if "mask_options" in query else _study_mask(study)
        notes = [f"Bao (2024) Study {study['id']}: {study['title']}"]
        if query.get("perceiver"):
            notes.append(f"perceiver: {query['perceiver']}")
        if study.get("attrib_pairing"):
            notes.append(f"attribute pairing: {study['attrib_pairing']}")
        designs.append(
            Design(
                name=f"{study['id']}-{query['id']}",
                queries=(query["template"],),
                mask=mask or {},
                target=_groups(study.get("targets") or {}) if "{TARGET}" in query["template"] else {},
                attribute=_groups(study.get("attrib") or {}) if "{ATTRIB}" in query["template"] else {},
                description=study["title"],
                notes=tuple(notes),
            )
        )
    return designs


class Bao2024Stimuli(Stimuli):
    """The available studies; selecting a study whose items are not printed raises :class:`StimuliError`."""

    missing: dict[str, str] = {}

    def select(self, names: Iterable[str], name: str = "") -> Stimuli:
        """The Stimuli made of the studies (designs) ``names``."""
        wanted: list[str] = []
        studies = {d.name.split("-")[0] for d in self.designs}
        for item in names:
            study = item.split("-")[0]
            if study in self.missing:
                raise StimuliError(f"bao2024: study {study} cannot be loaded: {self.missing[study]}")
            if item in studies:
                wanted += [d.name for d in self.designs if d.name.split("-")[0] == item]
            else:
                wanted.append(item)
        return super().select(wanted, name=name)


def load_bao2024(studies: Iterable[str] | None = None) -> Stimuli:
    """Bao (2024) designs; ``studies`` selects studies ("2A") or designs ("2A-Q1"), default all available.

    Studies 1A-1C are not included in the default set (their items are not printed);
    asking for them raises :class:`StimuliError` explaining where the items are.
    """
    raw = _raw()
    designs, missing = [], {}
    for study in raw["studies"]:
        if _missing(study):
            missing[study["id"]] = " ".join(str(study.get("missing_items", "its items are not printed")).split())
            continue
        designs.extend(study_designs(study))
    stimuli = Bao2024Stimuli(
        designs,
        name="bao2024",
        description="Bao (2024) FMAT studies 2A-4D (1A-1C: items not printed)",
        meta={"citation": raw["meta"]["citation"]},
    )
    stimuli.missing = missing
    if studies is not None:
        return stimuli.select(list(studies), name="bao2024:" + ",".join(studies))
    return stimuli
