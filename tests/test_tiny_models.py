"""``assoc models tiny`` builds models long enough for every bundled benchmark, in each model's own tokenizer.

Every registered stimuli set is loaded and turned into the texts a likelihood model may be sent for one item
(:func:`item_texts`); each tiny model's tokenizer counts the longest of them, and the count must fit the
model's limit (:func:`assoc.lm.batching.max_length`: its positions and its tokenizer's ``model_max_length``).
A new stimuli set whose items do not fit fails here, naming the set, the item and the counts, so that
``TINY_POSITIONS`` grows with the benchmarks (``assoc.testing.tiny_models``).

Counting is exact where it matters and cheap elsewhere: the 64 longest texts of each set (in UTF-8 bytes) are
tokenized, so the figures are the longest items' own; every other text is tokenized too unless a bound
proves it fits: none of the three tokenizers makes more tokens of a text than it has bytes, plus its
special tokens (byte-level BPE: at most one token per byte; WordPiece and the SentencePiece-style BPE: at
most one per character, plus the word-start marker).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from assoc import StimuliError, fill_mask, plugins
from assoc.stimuli import MASK, Stimuli
from assoc.testing.tiny_models import TINY_KINDS, TINY_POSITIONS, build_tiny

#: How many of each set's longest texts (in bytes) are always tokenized.
MEASURED = 64
#: The most tokens a tokenizer adds to a text's own (BERT's [CLS] and [SEP]; Llama's <s>; a causal
#: scorer's BOS before a GPT-2 text), and the most a SentencePiece-style BPE adds at a word start.
SPECIALS = 2
START_MARKER = 1


def discrim_eval_template() -> str:
    """The text lm-evaluation-harness puts around a DiscrimEval question (``lmeval_context``), without it."""
    from assoc_bias_benchmarks.discrim_eval.items import INSTRUCTION, PREFIX

    return INSTRUCTION + PREFIX


#: The text a likelihood scorer adds around one item of a set, where it adds more than a separator:
#: appended to each item's own text.
TEMPLATES = {"discrim_eval": discrim_eval_template}


@dataclass(frozen=True, slots=True)
class Text:
    """One text a model may be sent: the stimuli set, the item, the text.

    ``variants``: the texts this one stands for (a filled query with each of its options), none longer in
    bytes than ``text``; :func:`longest` tokenizes them all when it tokenizes this one.
    """

    stimuli: str
    item: str
    text: str
    variants: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


def _strings(record: Any) -> list[str]:
    return [value for value in record.values() if isinstance(value, str)] if isinstance(record, Mapping) else []


def item_texts(name: str, stimuli: Any) -> Iterator[Text]:
    """The texts of one stimuli set, each at least as long as what a likelihood scorer sends for one item.

    * Items with fields (benchmark items: BBQ, StereoSet, Winogender, WinoBias, DiscrimEval, ...): every
      string of the item (its fields and its options) joined by spaces, plus the set's template
      (:data:`TEMPLATES`): at least the prompt and the longest option a scorer joins from them.
    * Generated sentences (HolisticBias): each sentence, which is what is scored.
    * Designs (templates filled with targets and attributes, CrowS-Pairs' and Matched Guise Probing's
      sentences): each filled query with its ``[MASK]`` replaced by its longest option in bytes, standing for
      the query with each option (``variants``), and the designs' words.
    """
    template = TEMPLATES[name]() if name in TEMPLATES else ""
    items = getattr(stimuli, "items", None)
    if items is not None and callable(getattr(items, "sentences", None)):
        for sentence in items.sentences():
            yield Text(name, str(sentence.number), sentence.text + template)
        return
    if items is not None and not callable(items):
        for number, item in enumerate(items):
            record = getattr(item, "fields", None) or getattr(item, "record", None)
            strings = _strings(record)
            strings += [option for option in getattr(item, "options", ()) if option not in strings]
            yield Text(name, str(getattr(item, "id", number)), " ".join(strings) + template)
        return
    for design in stimuli:
        options = [option for group in design.mask.values() for option in group]
        widest = max(options, key=lambda option: len(option.encode("utf-8")), default="")
        for filling in design.fillings():
            if MASK not in filling.text or not options:
                yield Text(name, f"{design.name}: {filling.text}", filling.text + template)
                continue
            variants = tuple(fill_mask(filling.text, option)[0] + template for option in options)
            yield Text(name, f"{design.name}: {filling.text}", fill_mask(filling.text, widest)[0] + template, variants)
        for groups in (design.target, design.attribute):
            for words in groups.values():
                for word in words:
                    yield Text(name, f"{design.name}: {word}", word)


@dataclass
class Longest:
    """The longest text of a set in one tokenizer: its token count and where it is."""

    tokens: int
    text: Text
    tokenized: int  # how many texts (variants counted) were tokenized to find it


def cannot_clear(text: Text, room: int) -> bool:
    """Whether the bound (bytes + special tokens + a word-start marker) leaves ``text`` possibly over ``room``."""
    return text.size + SPECIALS + START_MARKER > room


def candidates(texts: Iterable[Text], room: int) -> list[Text]:
    """What :func:`longest` may tokenize within ``room``: the :data:`MEASURED` longest texts, and every text the
    bound cannot clear; read in one pass, so a set of a million sentences is never held in memory."""
    kept: list[Text] = []
    top: list[tuple[int, int, Text]] = []
    for number, text in enumerate(texts):
        if cannot_clear(text, room):
            kept.append(text)
        elif len(top) < MEASURED:
            heapq.heappush(top, (text.size, number, text))
        else:
            heapq.heappushpop(top, (text.size, number, text))
    return kept + [text for _, _, text in top]


def longest(texts: list[Text], tokenizer: Any, room: int) -> Longest:
    """The most tokens of any text (exact), tokenizing the :data:`MEASURED` longest and those a bound cannot clear.

    ``room``: the tokens a text may have with the tokenizer's special tokens; a text of at most
    ``room - SPECIALS - START_MARKER`` bytes is proven to fit without tokenizing it.
    """
    backend = tokenizer.backend_tokenizer
    ordered = sorted(texts, key=lambda t: t.size, reverse=True)
    chosen = ordered[:MEASURED] + [t for t in ordered[MEASURED:] if cannot_clear(t, room)]
    pairs = [(text, variant) for text in chosen for variant in text.variants or (text.text,)]
    best: Longest | None = None
    for start in range(0, len(pairs), 512):
        batch = pairs[start : start + 512]
        for (text, _), encoding in zip(batch, backend.encode_batch([v for _, v in batch]), strict=True):
            if best is None or len(encoding.ids) > best.tokens:
                best = Longest(len(encoding.ids), text, len(pairs))
    assert best is not None
    return best


@pytest.fixture(scope="module")
def tiny_tokenizers(tmp_path_factory) -> dict[str, tuple[Any, int, int]]:
    """Per kind: the tokenizer of ``assoc models tiny``'s model, the model's limit, and the BOS a scorer adds."""
    from transformers import AutoConfig, AutoTokenizer

    from assoc.lm.batching import max_length

    root = tmp_path_factory.mktemp("tiny-models")
    out = {}
    for kind in TINY_KINDS:
        folder = build_tiny(root / kind, kind)
        tokenizer = AutoTokenizer.from_pretrained(folder)
        config = AutoConfig.from_pretrained(folder)
        ids = tokenizer("a")["input_ids"]
        # a causal scorer puts the BOS token before a text when the tokenizer does not (GPT-2's)
        bos = int(kind != "bert" and tokenizer.bos_token_id is not None and ids[:1] != [tokenizer.bos_token_id])
        out[kind] = (tokenizer, max_length(tokenizer, config), bos)
    return out


@pytest.mark.slow  # every bundled set loaded (HolisticBias: 1.1 million sentences) and three tokenizers
def test_every_bundled_stimuli_set_fits_every_tiny_model(tiny_tokenizers):
    registry = plugins.registry()
    names = sorted(registry.stimuli)
    for required in ("bbq", "crows_pairs", "stereoset", "winogender", "winobias", "holistic_bias", "discrim_eval"):
        assert required in names, f"the benchmark {required!r} is not registered: is its plugin installed?"
    too_long, measured, not_bundled = [], {}, []
    for name in names:
        smallest_room = min(limit - bos for _, limit, bos in tiny_tokenizers.values())
        try:
            loaded = Stimuli.load(name)
        except StimuliError as exc:  # a set registered for the user's own copy only (its licence forbids bundling)
            assert "not bundled" in str(exc), exc
            not_bundled.append(name)
            continue
        texts = candidates(item_texts(name, loaded), smallest_room)
        assert texts, f"{name}: no texts to measure"
        for kind, (tokenizer, limit, bos) in tiny_tokenizers.items():
            found = longest(texts, tokenizer, limit - bos)
            measured[name, kind] = found.tokens + bos
            if found.tokens + bos > limit:
                too_long.append(
                    f"{name} item {found.text.item!r}: {found.tokens + bos} tokens in the tiny {kind} tokenizer, "
                    f"over its {limit} positions (raise TINY_POSITIONS[{kind!r}] in assoc.testing.tiny_models)"
                )
    assert not too_long, "\n".join(too_long)
    assert not_bundled == ["seat"]  # May et al.'s SEAT files are CC BY-NC 4.0: seat:<path of your copy>
    # What assoc.testing.tiny_models and docs/models.md say: DiscrimEval's prompts are the longest of all.
    for kind in TINY_KINDS:
        top = max((measured[name, k], name) for name, k in measured if k == kind)
        assert top[1] == "discrim_eval", f"{top[1]} is now the longest in {kind}: update the docs that name DiscrimEval"


def test_the_longest_text_is_found_exactly_and_a_bound_clears_the_rest(tiny_tokenizers):
    # A text shorter in bytes than the 64 measured ones but longer in tokens is found, because the bound
    # cannot clear it; a short one is cleared without tokenizing it.
    tokenizer, limit, _ = tiny_tokenizers["gpt2"]
    count = lambda text: len(tokenizer.backend_tokenizer.encode(text).ids)  # noqa: E731
    common = [Text("s", str(i), "he works as a nurse . " * 9) for i in range(MEASURED)]  # 198 bytes, few tokens
    unusual = Text("s", "odd", "Ω" * 60)  # 120 bytes, one word of a character the tokenizer never saw
    assert count(unusual.text) > count(common[0].text)
    found = longest([*common, unusual], tokenizer, room=100)
    assert found.text.item == "odd" and found.tokens == count(unusual.text) and found.tokenized == MEASURED + 1
    cleared = longest([*common, Text("s", "short", "a b c")], tokenizer, room=limit)
    assert cleared.tokenized == MEASURED and cleared.tokens == count(common[0].text)


def test_the_bound_holds_for_every_tiny_tokenizer(tiny_tokenizers):
    # What longest() relies on: at most one token per byte, plus the special tokens and a word-start marker.
    texts = ["Ωμέγα naïve café", "x" * 300, "a b c d e f g", "2019 — 1800; «quoted» 日本語", "   spaced   out   "]
    for kind, (tokenizer, _, _) in tiny_tokenizers.items():
        for text in texts:
            count = len(tokenizer.backend_tokenizer.encode(text).ids)
            assert count <= len(text.encode("utf-8")) + SPECIALS + START_MARKER, (kind, text, count)


def test_tiny_models_have_the_documented_positions(tiny_tokenizers):
    for kind, (_, limit, _) in tiny_tokenizers.items():
        assert limit == TINY_POSITIONS[kind], kind


def test_build_tiny_refuses_a_head_size_for_bert_and_an_unknown_kind(tmp_path):
    with pytest.raises(ValueError, match="causal LM"):
        build_tiny(tmp_path / "b", "bert", head_size=32)
    with pytest.raises(ValueError, match="kind must be one of bert, gpt2, llama"):
        build_tiny(tmp_path / "x", "t5")
    assert not any(tmp_path.iterdir())


def test_item_texts_of_each_shape():
    from assoc import ChoiceItem, ItemStimuli

    items = ItemStimuli(
        [ChoiceItem(id="q1", group="g", fields={"context": "A saw B.", "n": 3}, options=("A", "B"))], name="s"
    )
    assert [t.text for t in item_texts("s", items)] == ["A saw B. A B"]
    designs = Stimuli.from_dict(
        {"queries": ["The [MASK] is {TARGET}."], "mask": {"m": ["man", "woman"]}, "target": {"t": ["kind"]}}
    )
    texts = list(item_texts("d", designs))
    assert [t.text for t in texts] == ["The woman is kind.", "kind"]
    assert texts[0].variants == ("The man is kind.", "The woman is kind.")
