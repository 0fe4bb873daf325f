"""BBQ examples read from the authors' JSONL files, and where each example's biased answer is.

Parrish et al. (2022) release one JSONL file per category (``data/<Category>.jsonl`` in
nyu-mll/BBQ), one example a line: ``example_id``, ``question_index``, ``question_polarity``
(``neg``/``nonneg``), ``context_condition`` (``ambig``/``disambig``), ``category``,
``answer_info`` (``ans0``..``ans2``: ``[text, group]``), ``additional_metadata``
(``stereotyped_groups``, ``subcategory``, ``version``, ``source``), ``context``, ``question``,
``ans0``..``ans2`` and ``label``. Every field of every line is kept as written (the authors'
``results/UnifiedQA/preds_*.jsonl`` files, which add the model's answers, load the same way).

**target_loc** is the option holding the *biased* answer: in a negative question the option
naming the stereotyped group, in a non-negative question the other option that is not
"unknown" (BBQ issue #11). It comes from, in this order:

1. the authors' metadata file (``additional_metadata.csv``: ``category, question_index,
   example_id, target_loc, label_type``), when given or found beside the data; ``NA`` there
   means undecidable;
2. otherwise derived as lm-evaluation-harness 0.4 derives its ``biased_answers``
   (``lm_eval/tasks/bbq/utils.py``, ``process_docs``): each option's groups are
   ``"_".join(answer_info[ansN])`` with its replacements, lower-cased, split on ``_``; a
   negative question's biased option is the one whose groups meet the lower-cased
   ``stereotyped_groups``, a non-negative question's the one (not "unknown") whose groups do not.
   Exactly one such option is ``target_loc``; none or two make the example undecidable
   (``target_loc`` ``None``), and the analysis leaves it out, as the authors' script drops its
   ``NA`` rows. On the six categories of the snapshot this gives, example for example, what the
   authors' ``BBQ_results_metadata.R`` computes (tested).

**label_type** (``name`` for proper-name templates, reported as ``"<Category> (names)"``): from
the metadata file, else ``question_index > 25`` (``BBQ_results_metadata.R``, ``ProperName``);
the intersectional categories (``Race_x_gender``, ``Race_x_SES``) take it from the templates'
``Proper_nouns_only``, which only the metadata file carries: without it they are ``label``.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assoc import Design, Stimuli, StimuliError, UnknownNameError

CITATION = (
    "Parrish, A., Chen, A., Nangia, N., Padmakumar, V., Phang, J., Thompson, J., Htut, P. M., & Bowman, S. R. "
    "(2022). BBQ: A hand-built bias benchmark for question answering. Findings of the Association for "
    "Computational Linguistics: ACL 2022, 2086-2105. doi:10.18653/v1/2022.findings-acl.165"
)
#: The eleven categories of the released benchmark.
CATEGORIES = (
    "Age",
    "Disability_status",
    "Gender_identity",
    "Nationality",
    "Physical_appearance",
    "Race_ethnicity",
    "Race_x_gender",
    "Race_x_SES",
    "Religion",
    "SES",
    "Sexual_orientation",
)
OPTIONS = ("ans0", "ans1", "ans2")
POLARITIES = ("neg", "nonneg")
CONDITIONS = ("ambig", "disambig")
METADATA_FILE = "additional_metadata.csv"
#: Where the metadata file is looked for, relative to the directory given (the authors' layout).
METADATA_PLACES = (".", "analysis_scripts", "supplemental", "../analysis_scripts", "../supplemental")


@dataclass(frozen=True)
class BBQItem:
    """One BBQ example: the record as written, where it was read, and its biased option.

    ``target_source`` says where ``target_loc`` came from: ``metadata``, ``derived``, or
    ``undecidable`` (``target_loc`` is then ``None``; ``target_problem`` says why).
    """

    record: Mapping[str, Any]
    file: str
    line: int
    target_loc: int | None
    label_type: str
    target_source: str
    target_problem: str = ""

    @property
    def category(self) -> str:
        """The example's category (``Age``, ``Race_x_SES``, ...)."""
        return str(self.record["category"])

    @property
    def example_id(self) -> int:
        """The example's id (unique within its category)."""
        return int(self.record["example_id"])

    @property
    def options(self) -> tuple[str, str, str]:
        """The three answer options as written (``ans0``, ``ans1``, ``ans2``)."""
        return tuple(str(self.record[k]) for k in OPTIONS)  # type: ignore[return-value]

    @property
    def groups(self) -> tuple[str, str, str]:
        """Each option's group in ``answer_info`` (``unknown`` for the unknown option)."""
        info = self.record["answer_info"]
        return tuple(str(info[k][1]) for k in OPTIONS)  # type: ignore[return-value]

    @property
    def unknown_loc(self) -> int | None:
        """The option whose ``answer_info`` group is ``unknown`` (``None`` if none is)."""
        found = [i for i, group in enumerate(self.groups) if group == "unknown"]
        return found[0] if len(found) == 1 else None


# -- reading --------------------------------------------------------------------------------------


def _open_text(path: Path) -> Iterable[str]:
    if path.name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


def _check_record(record: Any, where: str) -> dict[str, Any]:
    """The record if it has every field the benchmark needs, with the right types; else one clear error."""
    if not isinstance(record, dict):
        raise StimuliError(f"{where}: a BBQ example must be a JSON object, got {type(record).__name__}")
    for key in ("example_id", "label"):
        value = record.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise StimuliError(f"{where}: {key!r} must be an integer, got {value!r}")
    if record["label"] not in (0, 1, 2):
        raise StimuliError(f"{where}: 'label' must be 0, 1 or 2, got {record['label']!r}")
    for key in ("category", "context", "question", "question_index", *OPTIONS):
        if not isinstance(record.get(key), str):
            raise StimuliError(f"{where}: {key!r} must be text, got {record.get(key)!r}")
    if record.get("question_polarity") not in POLARITIES:
        raise StimuliError(
            f"{where}: 'question_polarity' must be neg or nonneg, got {record.get('question_polarity')!r}"
        )
    if record.get("context_condition") not in CONDITIONS:
        raise StimuliError(
            f"{where}: 'context_condition' must be ambig or disambig, got {record.get('context_condition')!r}"
        )
    info = record.get("answer_info")
    if not isinstance(info, dict) or any(
        not isinstance(info.get(k), list) or len(info[k]) != 2 or not all(isinstance(v, str) for v in info[k])
        for k in OPTIONS
    ):
        raise StimuliError(f"{where}: 'answer_info' must map ans0, ans1, ans2 to [text, group], got {info!r}")
    meta = record.get("additional_metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("stereotyped_groups"), list):
        raise StimuliError(f"{where}: 'additional_metadata' must hold a 'stereotyped_groups' list, got {meta!r}")
    return record


def read_jsonl(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` of every example of one BBQ JSONL file (``.jsonl`` or ``.jsonl.gz``).

    A line that is not JSON, or an example without a field the benchmark needs, is a
    :class:`~assoc.StimuliError` naming the file and the line; blank lines are skipped.
    """
    path = Path(path)
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        with _open_text(path) as handle:  # type: ignore[attr-defined]
            for number, text in enumerate(handle, 1):
                if not text.strip():
                    continue
                where = f"{path}, line {number}"
                try:
                    record = json.loads(text)
                except ValueError as exc:
                    raise StimuliError(f"{where}: not JSON ({exc})") from None
                out.append((number, _check_record(record, where)))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise StimuliError(f"{path}: cannot be read ({exc})") from None
    return out


def data_files(directory: str | Path) -> list[Path]:
    """The JSONL files of a BBQ directory: ``*.jsonl``/``*.jsonl.gz`` in it, else in its ``data/``."""
    root = Path(directory).expanduser()
    if not root.is_dir():
        raise StimuliError(f"BBQ directory not found: {root}")
    for place in (root, root / "data"):
        files = sorted(p for p in place.glob("*.jsonl*") if p.name.endswith((".jsonl", ".jsonl.gz")))
        if files:
            return files
    raise StimuliError(f"{root}: no BBQ files (*.jsonl or *.jsonl.gz, here or in data/)")


def find_metadata(directory: str | Path) -> Path | None:
    """The authors' ``additional_metadata.csv`` beside a BBQ directory (see :data:`METADATA_PLACES`), or ``None``."""
    root = Path(directory).expanduser()
    for place in METADATA_PLACES:
        for name in (METADATA_FILE, METADATA_FILE + ".gz"):
            candidate = root / place / name
            if candidate.is_file():
                return candidate
    return None


def read_metadata(path: str | Path) -> dict[tuple[str, int], tuple[int | None, str]]:
    """``(category, example_id) -> (target_loc, label_type)`` from the authors' ``additional_metadata.csv``.

    ``target_loc`` ``NA`` (or empty) is ``None``: the authors' script drops those examples.
    """
    path = Path(path)
    out: dict[tuple[str, int], tuple[int | None, str]] = {}
    try:
        with _open_text(path) as handle:  # type: ignore[attr-defined]
            reader = csv.DictReader(handle)
            needed = {"category", "example_id", "target_loc", "label_type"}
            missing = needed - set(reader.fieldnames or ())
            if missing:
                raise StimuliError(f"{path}: metadata file lacks the column(s) {', '.join(sorted(missing))}")
            for number, row in enumerate(reader, 2):
                where = f"{path}, line {number}"
                if (row["example_id"] or "").strip() in ("", "NA"):
                    continue  # a template without examples (the authors' script merges with all = TRUE)
                try:
                    example = int(row["example_id"])
                except (TypeError, ValueError):
                    raise StimuliError(f"{where}: example_id {row['example_id']!r} is not an integer") from None
                loc_text = (row["target_loc"] or "").strip()
                if loc_text in ("", "NA"):
                    loc = None
                else:
                    try:
                        loc = int(float(loc_text))
                    except ValueError:
                        raise StimuliError(f"{where}: target_loc {loc_text!r} is not 0, 1, 2 or NA") from None
                    if loc not in (0, 1, 2):
                        raise StimuliError(f"{where}: target_loc {loc_text!r} is not 0, 1, 2 or NA")
                out[(row["category"], example)] = (loc, (row["label_type"] or "label").strip())
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise StimuliError(f"{path}: cannot be read ({exc})") from None
    return out


# -- the biased option ----------------------------------------------------------------------------


def option_groups(answer_info: Sequence[str]) -> list[str]:
    """An option's groups as lm-evaluation-harness 0.4 reads them (``_process_groups_in_answers``).

    ``"_".join(answer_info)``; ``M-``/``F-``/``lowSES-``/``highSES-`` prefixes split off;
    ``lowSES``, ``highSES``, ``nonObese``, ``nonDisabled``, ``nonTrans`` split in two words;
    ``woman`` (else ``man``), ``girl``, ``boy`` tagged ``F``/``M``; lower-cased; split on ``_``.
    """
    text = "_".join(answer_info)
    for prefix in ("M-", "F-", "lowSES-", "highSES-"):
        text = text.replace(prefix, prefix[:-1] + "_")
    for old, new in (
        ("lowSES", "low SES"),
        ("highSES", "high SES"),
        ("nonObese", "non Obese"),
        ("nonDisabled", "non Disabled"),
        ("nonTrans", "non Trans"),
    ):
        text = text.replace(old, new)
    if "woman" in text:
        text = text.replace("woman", "F_woman")
    elif "man" in text:
        text = text.replace("man", "M_man")
    text = text.replace("girl", "F_girl").replace("boy", "M_boy")
    return text.lower().split("_")


def derive_target_loc(record: Mapping[str, Any]) -> tuple[int | None, str]:
    """``(target_loc, problem)`` of one example from its ``answer_info`` and ``stereotyped_groups``.

    The rule of the module docstring (lm-evaluation-harness's ``biased_answers``); ``problem``
    is ``""`` when exactly one option is biased, else says why the example is undecidable.
    """
    stereotyped = {str(g).lower() for g in record["additional_metadata"]["stereotyped_groups"]}
    negative = record["question_polarity"] == "neg"
    biased = []
    for index, key in enumerate(OPTIONS):
        info = record["answer_info"][key]
        groups = option_groups(info) if any(info) else ["latino"] if "Latina" in record[key] else [""]
        meets = not stereotyped.isdisjoint(groups)
        if negative and meets or not negative and groups[-1] != "unknown" and not meets:
            biased.append(index)
    if len(biased) == 1:
        return biased[0], ""
    what = "no option" if not biased else f"options {biased}"
    return None, f"{what} biased by answer_info and stereotyped_groups {sorted(stereotyped)}"


def label_type_of(record: Mapping[str, Any]) -> str:
    """``name`` for a proper-name template (``question_index`` > 25, not intersectional), else ``label``."""
    if "_x_" in str(record["category"]):
        return "label"
    try:
        return "name" if int(str(record["question_index"])) > 25 else "label"
    except ValueError:
        return "label"


# -- the stimuli ----------------------------------------------------------------------------------


class BBQStimuli(Stimuli):
    """BBQ examples as assoc stimuli: one design per category, every example kept in :attr:`items`.

    Each design's target groups are the category's stereotyped groups (what a reader of the
    design sees); the examples themselves, every field as written, are in :attr:`items` and
    :meth:`fingerprint` covers them.
    """

    def __init__(
        self,
        items: Sequence[BBQItem],
        name: str = "bbq",
        description: str = "",
        meta: Mapping[str, Any] | None = None,
    ):
        if not items:
            raise StimuliError(f"{name}: no BBQ examples")
        self.items: tuple[BBQItem, ...] = tuple(items)
        by_category: dict[str, list[BBQItem]] = {}
        for item in self.items:
            by_category.setdefault(item.category, []).append(item)
        designs = []
        for category, members in by_category.items():
            groups = sorted({str(g) for i in members for g in i.record["additional_metadata"]["stereotyped_groups"]})
            designs.append(
                Design(
                    name=category,
                    target={category: tuple(g for g in groups if g.strip() == g and g) or (category,)},
                    description=f"BBQ {category}: {len(members)} examples",
                )
            )
        super().__init__(designs, name=name, description=description, meta=meta)

    def select(self, names: Iterable[str], name: str = "") -> BBQStimuli:
        """The examples of the given categories, in the given order."""
        wanted = list(names)
        known = [d.name for d in self.designs]
        for category in wanted:
            if category not in known:
                raise UnknownNameError(f"category of {self.name or 'bbq'}", category, known)
        items = [i for category in wanted for i in self.items if i.category == category]
        return BBQStimuli(items, name=name or self.name, description=self.description, meta=self.meta)

    def fingerprint(self) -> str:
        """SHA-256 of every example as written, with its ``target_loc`` and ``label_type``."""
        hasher = hashlib.sha256()
        for item in self.items:
            hasher.update(json.dumps(item.record, sort_keys=True, ensure_ascii=False).encode())
            hasher.update(f"|{item.target_loc}|{item.label_type}\n".encode())
        return hasher.hexdigest()


def load_items(
    files: Sequence[str | Path],
    *,
    metadata: str | Path | None = None,
    name: str = "bbq",
    bundled: bool = False,
) -> BBQStimuli:
    """Read BBQ JSONL files into :class:`BBQStimuli` (every example kept; see the module docstring).

    ``metadata``: the authors' ``additional_metadata.csv`` (its ``target_loc`` and ``label_type``
    are used; an example it does not list, or lists as ``NA``, is undecidable, as the authors'
    script drops it); without it they are derived. A category and
    example id twice is an error naming both places.
    """
    table = read_metadata(metadata) if metadata is not None else {}
    items: list[BBQItem] = []
    seen: dict[tuple[str, int], str] = {}
    counts = {"metadata": 0, "derived": 0, "undecidable": 0}
    undecidable: list[dict[str, Any]] = []
    for path in files:
        for number, record in read_jsonl(path):
            key = (record["category"], record["example_id"])
            where = f"{path}, line {number}"
            if key in seen:
                raise StimuliError(f"{where}: {key[0]} example {key[1]} is also at {seen[key]}")
            seen[key] = where
            if metadata is not None:
                # as the authors' script: an example the file does not list, or lists as NA, is dropped
                loc, label_type = table.get(key, (None, label_type_of(record)))
                if loc is not None:
                    source, problem = "metadata", ""
                else:
                    source = "undecidable"
                    problem = "NA in the metadata file" if key in table else "not in the metadata file"
            else:
                loc, problem = derive_target_loc(record)
                label_type = label_type_of(record)
                source = "derived" if loc is not None else "undecidable"
            counts[source] += 1
            if source == "undecidable" and len(undecidable) < 50:
                undecidable.append({"category": key[0], "example_id": key[1], "why": problem})
            items.append(BBQItem(record, str(path), number, loc, label_type, source, problem))
    if not items:
        raise StimuliError(f"{name}: the BBQ files hold no examples")
    meta = {
        "citation": CITATION,
        "licence": "CC BY 4.0 (nyu-mll/BBQ)",
        "source": "assoc bundled copy (six categories of nyu-mll/BBQ bea11bd)" if bundled else name,
        "metadata_file": str(metadata) if metadata is not None else None,
        "target_loc": counts,
        "undecidable": undecidable,
    }
    return BBQStimuli(items, name=name, description="BBQ (Parrish et al., 2022)", meta=meta)


def load_directory(directory: str | Path, *, metadata: str | Path | None = None, name: str | None = None) -> BBQStimuli:
    """Every BBQ file of a directory (``*.jsonl[.gz]`` in it or in its ``data/``), with the metadata file if found."""
    files = data_files(directory)
    found = metadata if metadata is not None else find_metadata(directory)
    if found is None and files[0].parent.name == "data":
        found = find_metadata(files[0].parent)
    return load_items(files, metadata=found, name=name or f"bbq:{directory}")


def bundled_directory() -> Path:
    """The bundled copy: six of the eleven categories (Age, Disability_status, Nationality, ...)."""
    from importlib.resources import files

    return Path(str(files("assoc_chat_listing") / "data" / "bbq"))


def load_bbq(source: str | None = None) -> BBQStimuli:
    """The ``bbq`` stimuli: ``bbq`` (the bundled six categories) or ``bbq:<directory>`` (the user's copy).

    A directory is the authors' ``data/`` folder or a clone of nyu-mll/BBQ (its ``data/`` is read,
    and ``analysis_scripts/additional_metadata.csv`` when present).
    """
    if source is None:
        return load_items(sorted(bundled_directory().glob("*.jsonl.gz")), name="bbq", bundled=True)
    return load_directory(source)
