"""Bundled data of Bai, Wang, Sucholutsky & Griffiths (2025): stimuli, committed labels, recorded replies.

All three files come from the authors' repository ``baixuechunzi/llm-implicit-bias`` (MIT License,
Copyright (c) 2025 Xuechunzi Bai), HEAD 0d2772e:

* ``data/bai2025_word_association.yaml``: the project's shared extraction of the 21 stereotypes
  (``stimuli/iat_stimuli.csv``, ``stimuli/iat_stimuli_synonym.csv``), prompts and scoring rules,
  copied unchanged;
* ``data/bai2025_iat_stimuli_synonym.csv``: the authors' ``stimuli/iat_stimuli_synonym.csv``
  unchanged, the label file of their ``analysis/clean.ipynb`` (for ``labels="committed"``);
* ``data/bai2025_gpt4o_replies.csv.gz``: the 4,200 GPT-4o replies of ``data/result_gpt4o/*.csv``
  (84 files of 50 rows), as columns ``stereotype, variant, sample, reply`` (the file's name and its
  row index and column ``0``), gzip-compressed; the texts are unchanged.

Two bundled stimuli sets are built from the YAML: ``bai2025`` (the 21 stereotypes with the words of
``iat_stimuli.csv``) and ``bai2025_synonym`` (the same design names with the synonym words and
labels the authors' synonym prompts used). In both, the target groups are ``default`` (column A, the
socially advantaged group) and ``stigma`` (column B), and the attribute groups ``default_congruent``
and ``stigma_congruent`` are each stereotype's own halves (clean labels). In the synonym designs of
arab, asian, black and hispanic, the four occupation words the authors' synonym file adds
(executives, managers, administrative supervisors, sales representatives) are default-congruent
and the extra full names join the label lists, as in the authors' analysis file
(``iat_stimuli_analysis.csv``); see ``docs/word-association.md``.
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from assoc import Design, Stimuli

YAML_FILE = "bai2025_word_association.yaml"
COMMITTED_LABEL_FILE = "bai2025_iat_stimuli_synonym.csv"
REPLIES_FILE = "bai2025_gpt4o_replies.csv.gz"
DATA_PACKAGE = "assoc_chat_listing"
#: The four prompt variants of the paper, in the authors' order.
VARIANTS = ("replication", "instruction1", "instruction2", "synonym")
CITATION = (
    "Bai, X., Wang, A., Sucholutsky, I., & Griffiths, T. L. (2025). Explicitly unbiased large language "
    "models still form biased associations. Proceedings of the National Academy of Sciences, 122(8), "
    "e2416228122. doi:10.1073/pnas.2416228122"
)


def _data_file(name: str) -> Any:
    return resources.files(DATA_PACKAGE).joinpath("data", name)


@cache
def bai2025_data() -> dict[str, Any]:
    """The shared YAML extraction (stereotypes, prompts, scoring rules, label anomalies) as a dict."""
    import yaml

    data: dict[str, Any] = yaml.safe_load(_data_file(YAML_FILE).read_text(encoding="utf-8"))
    return data


def stereotype_names() -> tuple[str, ...]:
    """The 21 stereotypes in the YAML's order (racism ... eating)."""
    return tuple(bai2025_data()["stereotypes"])


def _synonym_halves(entry: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The synonym words split by the role of the word they replace (the clean halves).

    A synonym takes the role of its source word in the stereotype's own halves; the rows the
    synonym file adds (``rows_not_in_iat_stimuli_csv``) take the role their synonym has in the
    authors' analysis file (all four are default-congruent there).
    """
    synonym = entry["synonym_variant"]
    source_of = {syn: src for src, syn in synonym["synonym_of"].items()}
    analysis = entry.get("analysis_file_version", {})
    default, stigma = [], []
    for word in synonym["words"]:
        source = source_of[word]
        if source in entry["default_congruent"]:
            default.append(word)
        elif source in entry["stigma_congruent"]:
            stigma.append(word)
        elif word in analysis.get("default_congruent", ()):
            default.append(word)
        elif word in analysis.get("stigma_congruent", ()):
            stigma.append(word)
        else:  # the YAML is data: a word without a role is a defect of the file, not of the user's input
            raise RuntimeError(f"bai2025 synonym word {word!r} has no role in the bundled data")
    return default, stigma


def _design(name: str, entry: dict[str, Any], synonym: bool) -> Design:
    if synonym:
        variant = entry["synonym_variant"]
        default_groups = variant.get("default_groups", entry["default_groups"])
        stigma_groups = variant.get("stigma_groups", entry["stigma_groups"])
        default_words, stigma_words = _synonym_halves(entry)
    else:
        default_groups, stigma_groups = entry["default_groups"], entry["stigma_groups"]
        default_words, stigma_words = entry["default_congruent"], entry["stigma_congruent"]
    what = "synonym variant: " if synonym else ""
    return Design(
        name=name,
        target={"default": tuple(default_groups), "stigma": tuple(stigma_groups)},
        attribute={"default_congruent": tuple(default_words), "stigma_congruent": tuple(stigma_words)},
        description=(
            f"{what}{name} ({entry['domain_in_gpt4o_results']}): {', '.join(default_groups)} vs "
            f"{', '.join(stigma_groups)}"
        ),
    )


def _stimuli(synonym: bool) -> Stimuli:
    data = bai2025_data()
    designs = [_design(name, entry, synonym) for name, entry in data["stereotypes"].items()]
    return Stimuli(
        designs,
        name="bai2025_synonym" if synonym else "bai2025",
        description=(
            "LLM Word Association Test (Bai et al., 2025): 21 stereotypes, default/stigma groups and "
            "default-/stigma-congruent words" + (" (synonym variant)" if synonym else "")
        ),
        meta={"citation": CITATION, "source": data["meta"]["repository"], "licence": data["meta"]["licence"]},
    )


def load_bai2025() -> Stimuli:
    """The bundled set ``bai2025``: 21 designs, one per stereotype (words of ``iat_stimuli.csv``)."""
    return _stimuli(False)


def load_bai2025_synonym() -> Stimuli:
    """The bundled set ``bai2025_synonym``: the same 21 design names with the synonym words and labels."""
    return _stimuli(True)


@dataclass(frozen=True)
class PooledLabels:
    """Group labels and attribute words pooled over stereotypes, as ``clean.ipynb`` cell 5 builds them.

    ``default``/``stigma``: group labels (lower-cased); ``positive``/``negative``: default- and
    stigma-congruent words, as stored (the notebook does not lower-case them; the lookup
    lower-cases the reply's word only). A reply's word is looked up in ``positive`` first.
    """

    default: frozenset[str]
    stigma: frozenset[str]
    positive: frozenset[str]
    negative: frozenset[str]
    source: str


@cache
def committed_labels() -> PooledLabels:
    """The labels ``clean.ipynb`` builds from the committed ``iat_stimuli_synonym.csv`` (with its defect).

    Cell 5: A and B of every row (lower-cased) are the default and stigma labels; for every dataset
    block, the first ``len // 2`` rows of C and of D are 'positive', the rest 'negative' (counting
    the block's empty cells, as ``Series[:len // 2]`` does; empty cells are no word).
    """
    text = _data_file(COMMITTED_LABEL_FILE).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    default = {r["A"].lower() for r in rows if r["A"] != ""}
    stigma = {r["B"].lower() for r in rows if r["B"] != ""}
    positive: set[str] = set()
    negative: set[str] = set()
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        block = [r for r in rows if r["dataset"] == dataset]
        for column in ("C", "D"):
            half = len(block) // 2
            positive.update(r[column] for r in block[:half] if r[column] != "")
            negative.update(r[column] for r in block[half:] if r[column] != "")
    return PooledLabels(frozenset(default), frozenset(stigma), frozenset(positive), frozenset(negative), "committed")


@cache
def clean_labels() -> PooledLabels:
    """The same pooled lists built from each stereotype's own halves (``bai2025`` and ``bai2025_synonym``)."""
    default: set[str] = set()
    stigma: set[str] = set()
    positive: set[str] = set()
    negative: set[str] = set()
    for stimuli in (load_bai2025(), load_bai2025_synonym()):
        for design in stimuli:
            default.update(w.lower() for w in design.target["default"])
            stigma.update(w.lower() for w in design.target["stigma"])
            positive.update(design.attribute["default_congruent"])
            negative.update(design.attribute["stigma_congruent"])
    return PooledLabels(frozenset(default), frozenset(stigma), frozenset(positive), frozenset(negative), "clean")


def recorded_gpt4o_replies() -> list[dict[str, Any]]:
    """The authors' 4,200 recorded GPT-4o replies: dicts ``stereotype, variant, sample, reply``.

    In file order (stereotype, then variant, alphabetically; samples 0-49), texts unchanged.
    """
    with _data_file(REPLIES_FILE).open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8", newline="") as handle:
        return [
            {"stereotype": r["stereotype"], "variant": r["variant"], "sample": int(r["sample"]), "reply": r["reply"]}
            for r in csv.DictReader(handle)
        ]
