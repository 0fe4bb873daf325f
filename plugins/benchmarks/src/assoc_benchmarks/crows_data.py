"""The CrowS-Pairs sentence pairs (Nangia et al., 2020) as assoc stimuli.

The pairs come from the authors' ``crows_pairs_anonymized.csv`` (columns: an unnamed index,
``sent_more``, ``sent_less``, ``stereo_antistereo``, ``bias_type``, ``annotations``,
``anon_writer``, ``anon_annotators``). A copy of the authors' file (commit 8aaac11, CC BY-SA 4.0)
is bundled as ``data/crows_pairs/crows_pairs_anonymized.csv``; :func:`crows_pairs_stimuli` reads
it, or the user's own copy given by path.

Each pair is one design named ``pair<index>``: the query ``[MASK]`` with the mask groups
``sent_more`` and ``sent_less`` (one sentence each, exactly as in the file), and the other columns
kept as ``key: value`` notes (``bias_type``, ``stereo_antistereo``, ``annotations``, ``anon_writer``,
``anon_annotators``). :func:`pairs_of` reads the pairs back from any such stimuli, so a YAML file
written in the same shape is scored the same way.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from assoc import Design, Stimuli, StimuliError

CSV_COLUMNS = (
    "sent_more",
    "sent_less",
    "stereo_antistereo",
    "bias_type",
    "annotations",
    "anon_writer",
    "anon_annotators",
)
#: the note keys a CrowS-Pairs design carries (``key: value``), in this order
NOTE_KEYS = ("bias_type", "stereo_antistereo", "annotations", "anon_writer", "anon_annotators")
DIRECTIONS = ("stereo", "antistereo")
#: the nine bias types of the paper (Table 1), in the order of its Table 2
BIAS_TYPES = (
    "race-color",
    "gender",
    "socioeconomic",
    "nationality",
    "religion",
    "age",
    "sexual-orientation",
    "physical-appearance",
    "disability",
)
CITATION = (
    "Nangia, N., Vania, C., Bhalerao, R., & Bowman, S. R. (2020). CrowS-Pairs: A challenge dataset for "
    "measuring social biases in masked language models. Proceedings of EMNLP 2020, 1953-1967. "
    "doi:10.18653/v1/2020.emnlp-main.154"
)
SOURCE = (
    "github.com/nyu-mll/crows-pairs, data/crows_pairs_anonymized.csv, commit 8aaac11c485473159ec9328a65253a5be9a479dc"
)
LICENSE = "CC BY-SA 4.0 (the pairs; derived data that is distributed must keep the licence and attribution)"
BUNDLED = "crows_pairs_anonymized.csv"


@dataclass(frozen=True)
class CrowsPair:
    """One CrowS-Pairs item: the more and the less stereotypical sentence and the pair's labels."""

    pair: str  # design name, ``pair<index>``
    sent_more: str
    sent_less: str
    stereo_antistereo: str  # "stereo": sent_more demonstrates a stereotype; "antistereo": it violates one
    bias_type: str

    @property
    def sent1_sent2(self) -> tuple[str, str]:
        """The order ``metric.py`` aligns and scores the two sentences in.

        ``sent1`` is the sentence about the historically disadvantaged group: ``sent_more`` of a
        stereo pair, ``sent_less`` of an antistereo pair (``read_data`` in the authors' script).
        """
        if self.stereo_antistereo == "stereo":
            return self.sent_more, self.sent_less
        return self.sent_less, self.sent_more


def bundled_csv() -> Path:
    """Path of the bundled copy of the authors' ``crows_pairs_anonymized.csv``."""
    return Path(str(resources.files("assoc_benchmarks").joinpath("data", "crows_pairs", BUNDLED)))


def read_crows_csv(path: str | Path) -> list[dict[str, str]]:
    """The rows of a ``crows_pairs_anonymized.csv`` file, checked before anything is scored.

    Raises :class:`~assoc.errors.StimuliError` naming the file, the line and the problem (a missing
    column, an empty sentence, an unknown direction, a repeated index).
    """
    from assoc.infra import read_text

    path = Path(path)
    if not path.is_file():
        raise StimuliError(f"CrowS-Pairs file not found: {path}")
    text = read_text(path, what="CrowS-Pairs file", error=StimuliError)
    # newline=None: universal newlines, as the authors' ``open(input_file)`` reads the file
    reader = csv.DictReader(io.StringIO(text, newline=None))
    header = reader.fieldnames or []
    missing = [c for c in CSV_COLUMNS[:4] if c not in header]
    if missing:
        raise StimuliError(f"{path}: no column {missing[0]!r} (CrowS-Pairs needs {', '.join(CSV_COLUMNS[:4])})")
    index_column = header[0] if header and header[0] not in CSV_COLUMNS else None
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    for number, row in enumerate(reader, start=2):
        where = f"{path}, line {reader.line_num} (row {number - 1})"
        index = (row.get(index_column) or "").strip() if index_column is not None else str(number - 2)
        if not index:
            raise StimuliError(f"{where}: empty index")
        if index in seen:
            raise StimuliError(f"{where}: index {index!r} is used twice")
        seen.add(index)
        for column in ("sent_more", "sent_less"):
            if not (row.get(column) or "").strip():
                raise StimuliError(f"{where}: {column} is empty")
        if row["stereo_antistereo"] not in DIRECTIONS:
            raise StimuliError(f"{where}: stereo_antistereo is {row['stereo_antistereo']!r}, not stereo or antistereo")
        if not (row.get("bias_type") or "").strip():
            raise StimuliError(f"{where}: bias_type is empty")
        rows.append({"index": index, **{c: row.get(c) or "" for c in CSV_COLUMNS}})
    if not rows:
        raise StimuliError(f"{path}: no pairs")
    return rows


def crows_pairs_stimuli(path: str | Path | None = None, bias_types: Iterable[str] | None = None) -> Stimuli:
    """CrowS-Pairs as stimuli: one design per pair (see the module docstring).

    Parameters
    ----------
    path:
        A ``crows_pairs_anonymized.csv`` (the authors' format); ``None``: the bundled copy.
    bias_types:
        Keep only these bias types (``None``: all nine).
    """
    source = bundled_csv() if path is None else Path(path)
    rows = read_crows_csv(source)
    keep = None if bias_types is None else set(bias_types)
    designs = []
    for row in rows:
        if keep is not None and row["bias_type"] not in keep:
            continue
        # Sentences are kept exactly as written; the stimuli model refuses surrounding spaces, which
        # the authors' file does not have (a tokenizer may turn them into tokens of their own).
        designs.append(
            Design(
                name=f"pair{row['index']}",
                queries=("[MASK]",),
                mask={"sent_more": (row["sent_more"],), "sent_less": (row["sent_less"],)},
                notes=tuple(f"{key}: {row[key]}" for key in NOTE_KEYS),
            )
        )
    if not designs:
        raise StimuliError(f"{source}: no pairs of bias type(s) {sorted(keep or ())}")
    meta = {
        "citation": CITATION,
        "source": SOURCE if path is None else str(source),
        "license": LICENSE,
        "pairs": len(designs),
    }
    return Stimuli(designs, name="crows_pairs", description="CrowS-Pairs (Nangia et al., 2020)", meta=meta)


def load_crows_pairs(path: str | None = None) -> Stimuli:
    """The bundled CrowS-Pairs stimuli (all 1,508 pairs), or a user's copy of the CSV (``crows_pairs:<path>``)."""
    return crows_pairs_stimuli(path)


def _notes(design: Design) -> dict[str, str]:
    notes: dict[str, str] = {}
    for note in design.notes:
        key, sep, value = note.partition(": ")
        if sep and key in NOTE_KEYS:
            notes[key] = value
    return notes


def pairs_of(stimuli: Stimuli) -> list[CrowsPair]:
    """The CrowS-Pairs items of ``stimuli``; :class:`StimuliError` names the first design that is not one."""
    pairs = []
    for design in stimuli.designs:
        where = f"design {design.name!r}"
        if tuple(design.queries) != ("[MASK]",) or set(design.mask) != {"sent_more", "sent_less"}:
            raise StimuliError(
                f"{where} is not a CrowS-Pairs pair: it needs the query '[MASK]' and the mask groups sent_more and "
                "sent_less (load the pairs with assoc_benchmarks.crows_pairs_stimuli or --stimuli crows_pairs)"
            )
        if any(len(design.mask[g]) != 1 for g in ("sent_more", "sent_less")):
            raise StimuliError(f"{where}: sent_more and sent_less must hold one sentence each")
        notes = _notes(design)
        direction = notes.get("stereo_antistereo", "")
        if direction not in DIRECTIONS:
            raise StimuliError(f"{where}: needs a note 'stereo_antistereo: stereo' or 'stereo_antistereo: antistereo'")
        if not notes.get("bias_type"):
            raise StimuliError(f"{where}: needs a note 'bias_type: <type>'")
        pairs.append(
            CrowsPair(
                pair=design.name,
                sent_more=design.mask["sent_more"][0],
                sent_less=design.mask["sent_less"][0],
                stereo_antistereo=direction,
                bias_type=notes["bias_type"],
            )
        )
    return pairs
