"""The run records of a study's provenance: each run once, its models, what it cites.

Every table and result carries its provenance (``DataFrame.attrs["assoc"]``): the record of the run
that made it, with the records of its inputs (``input``) and compared runs (``runs``) inside. A study
meets one run through several inputs (a result carries the provenance of the table it read); these
helpers walk the records and say which were met before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from assoc.reporting.inputs import StudyInput


def records(provenance: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every run record in a provenance: the inputs and compared runs first, then the record itself."""
    for key in ("input", "runs"):
        inner = provenance.get(key)
        if isinstance(inner, Mapping):
            yield from records(inner)
        elif isinstance(inner, list):
            for item in inner:
                if isinstance(item, Mapping):
                    yield from records(item)
    yield provenance


def model_rows(record: Mapping[str, Any]) -> list[dict[str, str]]:
    """The models of one scorer run: label, spec, path, kind, fingerprint, device.

    Reads the run's ``model_names`` records (``label``, ``spec``, ``path``, ``kind``, ``fingerprint``,
    and the device the run resolved, ``device="auto"`` included), shown under the names of its
    ``models`` list; else a ``models`` list of names (with ``model_fingerprints``) or of records. The
    device falls back to the run's ``devices`` map and, last, its ``device`` option (which may say
    only ``auto``).
    """
    fingerprints = record.get("model_fingerprints") or {}
    devices = record.get("devices") or {}
    options = record.get("options") or {}
    models: list[Any] = list(record.get("models") or [])
    described = record.get("model_names")
    if isinstance(described, list) and all(isinstance(m, Mapping) for m in described) and len(described) == len(models):
        # model_names and models are made from the same list of models, in its order (assoc.api)
        models = [{**m, "label": str(shown)} for shown, m in zip(models, described, strict=True)]
    rows = []
    for model in models:
        if isinstance(model, Mapping):
            label = str(model.get("label") or model.get("spec") or model.get("name") or "")
            spec = str(model.get("spec") or "")
            found = {
                "label": label,
                "spec": spec,
                "path": str(model.get("path") or ""),
                "kind": str(model.get("kind") or ""),
                "fingerprint": str(model.get("fingerprint") or fingerprints.get(spec) or fingerprints.get(label) or ""),
                "device": str(model.get("device") or devices.get(label) or devices.get(spec) or ""),
            }
        else:
            label = str(model)
            found = {
                "label": label,
                "spec": label,
                "path": "",
                "kind": "",
                "fingerprint": str(fingerprints.get(label, "")),
                "device": str(devices.get(label, "")),
            }
        if not found["device"] and options.get("device"):
            found["device"] = str(options["device"])
        rows.append(found)
    return rows


def record_key(record: Mapping[str, Any]) -> str:
    """What identifies one run record: its whole content (a run met again through a later input is the same run)."""
    return json.dumps(record, sort_keys=True, default=str)


def unique_records(items: Sequence[StudyInput]) -> Iterator[tuple[StudyInput, Mapping[str, Any], str]]:
    """Every run record of the study's inputs and convergence runs, with the input it was first met in.

    Yields (input, record, first): ``first`` is ``""`` the first time a record is met, else the name of
    the input that showed it first (an analysis result carries the provenance of the table it read).
    """
    seen: dict[str, str] = {}
    for item in items:
        for record in records(item.provenance) if item.provenance else []:
            key = record_key(record)
            yield item, record, seen.get(key, "")
            seen.setdefault(key, item.name)


def citation_texts(items: Sequence[StudyInput]) -> list[str]:
    """Every work the study's inputs (and its convergence runs) cite, each once, innermost first.

    The order of ``table.assoc.cite()`` (inputs and compared runs before the record that used them;
    a record's method, then its stimuli's source), with each text split into its works first
    (:func:`assoc.reporting.bibtex.split_works`), so a work cited inside a longer text (an analysis
    citing the papers of its formulas) is listed even when another text shares one of its DOIs.
    """
    from assoc.reporting.bibtex import split_works
    from assoc.table.accessor import citation_key

    found: list[str] = []
    seen: set[str] = set()
    for item in items:
        for record in records(item.provenance):
            meta = record.get("stimuli_meta")
            cited = meta.get("citation") if isinstance(meta, Mapping) else None
            for text in [record.get("citation"), *(cited if isinstance(cited, list) else [cited])]:
                if not isinstance(text, str) or not text.strip():
                    continue
                for work in split_works(text):
                    if citation_key(work) not in seen:
                        seen.add(citation_key(work))
                        found.append(work)
    return found
