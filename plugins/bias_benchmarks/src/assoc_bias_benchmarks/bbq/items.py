"""BBQ examples read from the authors' JSONL files as benchmark items (:class:`assoc.ChoiceItem`).

Parrish et al. (2022) release one JSONL file per category (``data/<Category>.jsonl`` in nyu-mll/BBQ),
one example a line: ``example_id``, ``question_index``, ``question_polarity`` (``neg``/``nonneg``),
``context_condition`` (``ambig``/``disambig``), ``category``, ``answer_info`` (``ans0``..``ans2``:
``[text, group]``), ``additional_metadata`` (``stereotyped_groups``, ``subcategory``, ``version``,
``source``), ``context``, ``question``, ``ans0``..``ans2`` and ``label``. Each example becomes one
:class:`~assoc.ChoiceItem`:

* ``id`` ``"<category>/<example_id>"`` (ids repeat across categories), ``group`` the category (one of
  the eleven: any other is refused with the file and line);
* ``fields``: every field of the line as written (the authors' ``results/UnifiedQA/preds_*.jsonl``
  files, which add the model's answers, load the same way);
* ``options``: ``ans0``, ``ans1``, ``ans2`` as written; ``answer``: ``label``;
* ``derived`` (:data:`DERIVED`): ``target_loc`` (the biased option, ``None`` when undecidable),
  ``label_type`` (``name`` or ``label``), ``target_source`` (``metadata``, ``derived`` or ``undecidable``),
  ``target_problem`` (why undecidable), ``unknown_loc`` (the option whose ``answer_info`` group is
  ``unknown``) and ``metadata_rows`` (how many rows the authors' metadata gives the example).

**target_loc and label_type** come from the authors' metadata file (``additional_metadata.csv``:
``category, question_index, example_id, target_loc, label_type``) when one is given or found beside
the data (``NA`` there, or an example it does not list, is undecidable, as the authors' script drops
it); otherwise they are derived as the authors' ``BBQ_results_metadata.R`` derives them
(:mod:`.metadata`: lm-eval's rule for nine categories, the script's intersectional rules, which read the
templates, for Race_x_gender and Race_x_SES).
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assoc import ChoiceItem, ItemStimuli, StimuliError

from .metadata import INTERSECTIONAL, OPTIONS, Templates, find_templates, load_templates, metadata_rows, target_of

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
POLARITIES = ("neg", "nonneg")
CONDITIONS = ("ambig", "disambig")
METADATA_FILE = "additional_metadata.csv"
#: Where the metadata file is looked for, relative to the directory given (the authors' layout).
METADATA_PLACES = (".", "analysis_scripts", "supplemental", "../analysis_scripts", "../supplemental")
#: What the reader derives for every item (``ChoiceItem.derived``).
DERIVED = {
    "target_loc": "the biased option (0-2), None when undecidable",
    "label_type": "name (a proper-name template) or label",
    "target_source": "metadata (the authors' file), derived, or undecidable",
    "target_problem": "why the example is undecidable ('' otherwise)",
    "unknown_loc": "the option whose answer_info group is unknown (None if none is)",
    "metadata_rows": "rows the authors' metadata gives the example (2 for Gender_identity question 12)",
}
SOURCE = "nyu-mll/BBQ bea11bd (all eleven categories)"


# -- an item's parts ------------------------------------------------------------------------------


def example_id(item: ChoiceItem) -> int:
    """The example's id in its category."""
    return int(item.fields["example_id"])


def option_groups(item: ChoiceItem) -> tuple[str, str, str]:
    """Each option's group in ``answer_info`` (``unknown`` for the unknown option)."""
    info = item.fields["answer_info"]
    return tuple(str(info[k][1]) for k in OPTIONS)  # type: ignore[return-value]


def option_texts(item: ChoiceItem) -> tuple[str, str, str]:
    """Each option's ``answer_info`` text (what the authors' two-word fallback reads)."""
    info = item.fields["answer_info"]
    return tuple(str(info[k][0]) for k in OPTIONS)  # type: ignore[return-value]


def unknown_loc_of(record: Mapping[str, Any]) -> int | None:
    """The option whose ``answer_info`` group is ``unknown`` (``None`` unless exactly one is)."""
    found = [i for i, key in enumerate(OPTIONS) if str(record["answer_info"][key][1]) == "unknown"]
    return found[0] if len(found) == 1 else None


# -- reading --------------------------------------------------------------------------------------


def _open_text(path: Path) -> io.TextIOWrapper | Any:
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
    for key in ("context", "question"):
        if not record[key].strip():  # a question about nothing: every model's answer would be a guess
            raise StimuliError(f"{where}: {key!r} is empty")
    shown = [record[key].strip().casefold() for key in OPTIONS]
    same = [OPTIONS[i] for i in range(len(OPTIONS)) if shown.count(shown[i]) > 1]
    if same:  # two options the same: a choice between them cannot be scored (or read from a reply)
        raise StimuliError(
            f"{where}: options {' and '.join(same)} are the same ({record[same[0]]!r}); BBQ's three options differ"
        )
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
        with _open_text(path) as handle:
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


def read_metadata_rows(path: str | Path) -> dict[tuple[str, int], list[tuple[int | None, str]]]:
    """``(category, example_id) -> [(target_loc, label_type), ...]``: every row of an ``additional_metadata.csv``.

    ``target_loc`` ``NA`` (or empty) is ``None``: the authors' script drops those examples. An example
    the file lists twice (Gender_identity question 12 in the authors' file) has two entries.
    """
    path = Path(path)
    out: dict[tuple[str, int], list[tuple[int | None, str]]] = {}
    try:
        with _open_text(path) as handle:
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
                label_type = (row["label_type"] or "label").strip()
                out.setdefault((row["category"], example), []).append((loc, label_type))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise StimuliError(f"{path}: cannot be read ({exc})") from None
    return out


def read_metadata(path: str | Path) -> dict[tuple[str, int], tuple[int | None, str]]:
    """``(category, example_id) -> (target_loc, label_type)`` from the authors' ``additional_metadata.csv``.

    The last row of an example listed twice wins (the authors' file gives both rows the same values).
    """
    return {key: rows[-1] for key, rows in read_metadata_rows(path).items()}


# -- the stimuli ----------------------------------------------------------------------------------


def load_items(
    files: Sequence[str | Path],
    *,
    metadata: str | Path | None = None,
    templates: str | Path | None = None,
    name: str = "bbq",
    bundled: bool = False,
) -> ItemStimuli:
    """Read BBQ JSONL files into :class:`~assoc.ItemStimuli` (every example kept; see the module docstring).

    ``metadata``: the authors' ``additional_metadata.csv`` (its ``target_loc`` and ``label_type`` are
    used; an example it does not list, or lists as ``NA``, is undecidable, as the authors' script drops
    it); without it they are derived (:mod:`.metadata`) with the templates of ``templates`` (the
    authors' ``templates/`` folder), else the bundled ones. A category and example id twice is an
    error naming both places; so is a category that is none of the eleven.
    """
    table = read_metadata_rows(metadata) if metadata is not None else {}
    read = [(str(path), number, record) for path in map(Path, files) for number, record in read_jsonl(path)]
    categories = sorted({str(record["category"]) for _, _, record in read})
    known: Templates = load_templates(categories, templates)
    items: list[ChoiceItem] = []
    counts = {"metadata": 0, "derived": 0, "undecidable": 0}
    undecidable: list[dict[str, Any]] = []
    seen: dict[tuple[str, int], str] = {}
    for path, number, record in read:
        category, example = str(record["category"]), int(record["example_id"])
        if (category, example) in seen:
            raise StimuliError(
                f"{path}, line {number}: {category} example {example} is also at {seen[category, example]}"
            )
        seen[category, example] = f"{path}, line {number}"
        derived_loc, derived_type, problem = target_of(record, known)
        rows = metadata_rows(category, str(record["question_index"]), known)
        if metadata is not None:
            # as the authors' script: an example the file does not list, or lists as NA, is dropped
            listed = table.get((category, example))
            loc, label_type = listed[-1] if listed else (None, derived_type)
            rows = len(listed) if listed else rows
            if loc is not None:
                source, problem = "metadata", ""
            else:
                source = "undecidable"
                problem = "NA in the metadata file" if listed else "not in the metadata file"
        else:
            loc, label_type = derived_loc, derived_type
            source = "derived" if loc is not None else "undecidable"
        counts[source] += 1
        if source == "undecidable" and len(undecidable) < 50:
            undecidable.append({"category": category, "example_id": example, "why": problem})
        items.append(
            ChoiceItem(
                id=f"{category}/{example}",
                group=category,
                fields=record,
                options=tuple(str(record[k]) for k in OPTIONS),
                answer=int(record["label"]),
                derived={
                    "target_loc": loc,
                    "label_type": label_type,
                    "target_source": source,
                    "target_problem": problem,
                    "unknown_loc": unknown_loc_of(record),
                    "metadata_rows": rows,
                },
                source=path,
                line=number,
            )
        )
    if not items:
        raise StimuliError(f"{name}: the BBQ files hold no examples")
    meta = {
        "citation": CITATION,
        "licence": "CC BY 4.0 (nyu-mll/BBQ)",
        "source": f"assoc bundled copy ({SOURCE})" if bundled else name,
        "metadata_file": str(metadata) if metadata is not None else None,
        "templates": str(templates) if templates is not None else "bundled",
        "target_loc": counts,
        "undecidable": undecidable,
        "intersectional": [c for c in INTERSECTIONAL if c in categories],
    }
    return ItemStimuli(items, name=name, description="BBQ (Parrish et al., 2022)", meta=meta, groups=CATEGORIES)


def load_directory(
    directory: str | Path, *, metadata: str | Path | None = None, name: str | None = None
) -> ItemStimuli:
    """Every BBQ file of a directory (``*.jsonl[.gz]`` in it or in its ``data/``), with the metadata file if found.

    The authors' ``templates/`` folder is read when the directory (or the folder above its ``data/``)
    holds it; else the bundled templates (the same release) are.
    """
    files = data_files(directory)
    found = metadata if metadata is not None else find_metadata(directory)
    if found is None and files[0].parent.name == "data":
        found = find_metadata(files[0].parent)
    templates = find_templates(directory) or find_templates(files[0].parent)
    return load_items(files, metadata=found, templates=templates, name=name or f"bbq:{directory}")


def bundled_directory() -> Path:
    """The bundled copy: all eleven categories (``<Category>.jsonl.gz``) and their templates."""
    from importlib.resources import files

    return Path(str(files("assoc_bias_benchmarks.bbq") / "data"))


@functools.lru_cache(maxsize=1)
def _bundled() -> ItemStimuli:
    return load_items(sorted(bundled_directory().glob("*.jsonl.gz")), name="bbq", bundled=True)


def load_bbq(source: str | None = None) -> ItemStimuli:
    """The ``bbq`` stimuli: ``bbq`` (the bundled eleven categories) or ``bbq:<directory>`` (the user's copy).

    A directory is the authors' ``data/`` folder or a clone of nyu-mll/BBQ (its ``data/`` is read,
    and ``analysis_scripts/additional_metadata.csv`` and ``templates/`` when present). The bundled set
    is read once per process (58,492 examples; the stimuli are not changed by what uses them).
    """
    if source is None:
        return _bundled()
    return load_directory(source)
