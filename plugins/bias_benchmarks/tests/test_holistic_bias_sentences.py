"""HolisticBias sentences against the authors' generator (frozen counts and digests of its v1.1 run) and the data.

The reference is ``tests/data/holistic_bias/sentences_summary.json``: what the authors'
``HolisticBiasSentenceGenerator(dataset_version="v1.1")`` produced, and the sentences their
``run_bias_calculation.py`` scores (see that folder's README).
"""

import hashlib
import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from assoc_bias_benchmarks.holistic_bias.sentences import (
    ALL,
    FILES,
    LIKELIHOOD_BIAS,
    HolisticBiasDataset,
    bundled_folder,
)
from assoc_bias_benchmarks.holistic_bias.stimuli import HolisticBiasStimuli, item_of

import assoc
from assoc import ItemStimuli, StimuliError

DATA = Path(__file__).parent / "data" / "holistic_bias"
SUMMARY = json.loads((DATA / "sentences_summary.json").read_text(encoding="utf-8"))
REPO = Path(__file__).resolve().parents[3]
# the project's shared data folder beside the repository (a git worktree elsewhere points ASSOC_SHARED_DIR at it)
SHARED = Path(os.environ.get("ASSOC_SHARED_DIR", REPO.parent / "shared")) / "benchmarks" / "holistic_bias"


def digest(lines):
    """sha256 of the lines joined with, and ended by, a newline (the reference's digest)."""
    return hashlib.sha256(("\n".join(lines) + "\n").encode("utf-8")).hexdigest()


def tallies(sentences):
    """Counts of the sentences by axis, template, descriptor and noun-phrase type; the reference's marginals."""
    joint = Counter(
        (s.noun_phrase.axis, s.template.text, s.noun_phrase.descriptor, s.noun_phrase.noun_phrase_type)
        for s in sentences
    )
    columns = {"axis": 0, "template": 1, "descriptor": 2, "noun_phrase_type": 3}

    def tally(*keys):
        out = Counter()
        for cell, n in joint.items():
            out["\t".join(cell[columns[k]] for k in keys)] += n
        return dict(sorted(out.items()))

    return tally


@pytest.fixture(scope="module")
def dataset():
    return HolisticBiasDataset.bundled()


def test_every_sentence_in_the_authors_order(dataset):
    reference = SUMMARY["generator"]
    texts = list(dataset.texts(ALL))
    assert len(texts) == reference["sentences"] == 566_625
    assert len(set(texts)) == reference["distinct_texts"] == 563_195
    assert digest(texts) == reference["sha256_texts_in_order"]
    assert digest(sorted(set(texts))) == reference["sha256_distinct_texts_sorted"]
    assert len(dataset.noun_phrases) == reference["noun_phrases"] == 22_029
    assert digest([p.noun_phrase for p in dataset.noun_phrases]) == reference["sha256_noun_phrases_in_order"]
    assert len({p.descriptor for p in dataset.noun_phrases}) == reference["distinct_descriptors_in_noun_phrases"]


def test_every_sentence_has_the_authors_metadata(dataset):
    reference = SUMMARY["generator"]
    tally = tallies(dataset.sentences(ALL))
    for keys in (("axis",), ("template",), ("noun_phrase_type",), ("axis", "noun_phrase_type")):
        assert tally(*keys) == reference["by_" + "_and_".join(keys)], keys
    assert tally("axis", "template") == reference["by_axis_and_template"]
    assert tally("axis", "descriptor") == reference["by_axis_and_descriptor"]
    first = next(dataset.sentences(ALL))
    record = first.record()
    assert record["text"] == next(dataset.texts(ALL)) and record["template"] == first.template.text
    assert list(record) == [  # the authors' record: text, the noun phrase's eleven columns, the template's
        "text",
        "axis",
        "bucket",
        "descriptor",
        "descriptor_gender",
        "descriptor_preference",
        "noun",
        "plural_noun",
        "noun_gender",
        "noun_phrase",
        "plural_noun_phrase",
        "noun_phrase_type",
        "template",
        "first_turn_only",
        "must_be_noun",
    ]


def test_the_likelihood_bias_selection(dataset):
    reference = SUMMARY["likelihood_bias_input"]
    assert len(dataset.index(LIKELIHOOD_BIAS)) == reference["sentences"] == 549_120
    texts = list(dataset.texts(LIKELIHOOD_BIAS))
    assert len(set(texts)) == reference["distinct_texts"]
    assert digest(texts) == reference["sha256_texts_in_order"]
    phrases = [p for p in dataset.noun_phrases if dataset.selected(p, LIKELIHOOD_BIAS)]
    assert all(len(dataset.templates_for(p)) == 26 for p in phrases)  # each has a noun: every template
    assert {a: 26 * sum(p.axis == a for p in phrases) for a in reference["by_axis"]} == reference["by_axis"]
    assert {a: len({p.descriptor for p in phrases if p.axis == a}) for a in reference["by_axis"]} == reference[
        "descriptors_by_axis"
    ]
    per_cell = Counter((p.axis, p.descriptor) for p in phrases)  # x 26 templates
    assert sorted(set(per_cell.values())) == reference["sentences_per_axis_template_descriptor"] == [32]


def test_the_index_finds_each_sentence_by_arithmetic(dataset):
    index = dataset.index(LIKELIHOOD_BIAS)
    streamed = dataset.sentences(LIKELIHOOD_BIAS)
    first = [next(streamed) for _ in range(60)]
    assert index[:60] == first
    *_, last = (p for p in dataset.noun_phrases if dataset.selected(p, LIKELIHOOD_BIAS))
    assert index[-1].noun_phrase == last and index[-1].template == dataset.templates[-1]
    full = dataset.index(ALL)
    for sentence in (index[0], index[12_345], index[-1]):  # numbers are positions in the full order
        assert full[sentence.number - 1] == sentence
    with pytest.raises(IndexError):
        index[len(index)]


def test_bundled_stimuli_are_items_made_when_read():
    stimuli = assoc.Stimuli.load("holistic_bias")
    assert isinstance(stimuli, HolisticBiasStimuli) and stimuli.name == "holistic_bias"
    assert len(stimuli.items) == 549_120 and len(stimuli.groups) == 13
    assert [d.name for d in stimuli.designs] == list(stimuli.groups) == sorted(stimuli.groups)
    item = stimuli.items[0]
    assert item.id == "52" and item.line == 52 and item.group == "ability" and item.options == ()
    assert item.fields["text"] == "I'm a boy on the spectrum." and item.fields["noun_phrase_type"] == "noun_descriptor"
    few = stimuli.subset(limit=2)
    assert assoc.require_items(few, "test", options=0) is few.items and len(few.items) == 26
    everything = assoc.Stimuli.load("holistic_bias_all")
    assert len(everything.items) == 566_625 and "null" in everything.groups
    assert stimuli.meta["citation"].startswith("Smith, E. M.") and "CC BY-SA 4.0" in stimuli.meta["licence"]


def test_select_and_subset_are_item_stimuli_semantics():
    # the same operations on the same items, held in memory by assoc.ItemStimuli, give the same items
    lazy = assoc.Stimuli.load("holistic_bias:sexual_orientation,nonce")
    assert lazy.groups == ("sexual_orientation", "nonce")
    held = ItemStimuli(list(lazy.items), name=lazy.name)
    assert [i.id for i in lazy.items] == [i.id for i in held.items]
    for options in ({"limit": 7}, {"sample": 50, "seed": 3}, {"sample": 10_000}):
        a, b = lazy.subset(**options), held.subset(**options)
        assert [i.id for i in a.items] == [i.id for i in b.items], options
        assert a.meta["subset"] == b.meta["subset"]
        assert a.fingerprint() != lazy.fingerprint()
    assert lazy.subset(sample=20, seed=1).fingerprint() == lazy.subset(sample=20, seed=1).fingerprint()
    again = lazy.select(["nonce"])
    assert again.groups == ("nonce",) and len(again.items) == 8 * 32 * 26
    with pytest.raises(assoc.UnknownNameError):
        lazy.select(["religion"])
    with pytest.raises(StimuliError, match="not both"):
        lazy.subset(limit=1, sample=1)


def test_a_users_copy_is_read_and_checked(tmp_path):
    copy = tmp_path / "holistic_bias" / "dataset" / "v1.1"
    shutil.copytree(bundled_folder(), copy)
    mine = assoc.Stimuli.load(f"holistic_bias:{tmp_path}")
    assert mine.name == f"holistic_bias:{tmp_path}" and len(mine.items) == 549_120
    assert mine.fingerprint() == assoc.Stimuli.load("holistic_bias").fingerprint()
    assert item_of(mine.index[5], "x").fields == assoc.Stimuli.load("holistic_bias").items[5].fields

    descriptors = json.loads((copy / "descriptors.json").read_text(encoding="utf-8"))
    descriptors["age"]["child"][1] = {"descriptor": "teen", "colour": "red"}
    (copy / "descriptors.json").write_text(json.dumps(descriptors), encoding="utf-8")
    with pytest.raises(StimuliError, match=r"descriptors\.json: age/child\[1\]: unknown key\(s\) colour"):
        assoc.Stimuli.load(f"holistic_bias:{copy}")
    (copy / "descriptors.json").write_text('{"age": {"child": ["teen",]}}', encoding="utf-8")
    with pytest.raises(StimuliError, match=r"descriptors\.json, line 1, column \d+: not JSON"):
        assoc.Stimuli.load(f"holistic_bias:{copy}")
    (copy / "descriptors.json").unlink()
    with pytest.raises(StimuliError, match="no descriptors.json here"):
        assoc.Stimuli.load(f"holistic_bias:{copy}")
    shutil.copytree(bundled_folder(), copy, dirs_exist_ok=True)
    templates = json.loads((copy / "sentence_templates.json").read_text(encoding="utf-8"))
    templates["I like {noun_phrase} and {plural_noun_phrase}."] = {}
    (copy / "sentence_templates.json").write_text(json.dumps(templates), encoding="utf-8")
    with pytest.raises(StimuliError, match="exactly one {noun_phrase} or {plural_noun_phrase}"):
        HolisticBiasDataset(copy)


def test_the_bundled_copy_is_the_shared_data():
    if not SHARED.is_dir():
        pytest.skip("the shared benchmarks folder (../shared beside the repository) is not on this machine")
    for name in FILES:
        assert (bundled_folder() / name).read_bytes() == (SHARED / "dataset" / "v1.1" / name).read_bytes(), name
    assert (bundled_folder().parent / "LICENSE").read_bytes() == (SHARED / "LICENSE").read_bytes()
