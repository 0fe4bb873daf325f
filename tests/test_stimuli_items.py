"""Benchmark items (assoc.stimuli.items): the shape every benchmark's reader produces."""

from __future__ import annotations

import pytest

import assoc
from assoc import ChoiceItem, ItemStimuli, StimuliError


def item(i: int, group: str = "Age", **kw) -> ChoiceItem:
    return ChoiceItem(str(i), group, {"n": i}, kw.pop("options", ("a", "b", "c")), source="f.jsonl", line=i, **kw)


def test_items_keep_their_fields_and_round_trip() -> None:
    one = item(3, answer=2, derived={"target_loc": 1})
    assert ChoiceItem.from_record(one.record()) == one
    assert one.where == "f.jsonl, line 3"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"options": ("a", " ")}, "f.jsonl, line 1: item '1' has an empty option 1"),
        ({"answer": 3}, "f.jsonl, line 1: item '1' gives answer 3, outside its 3 option(s)"),
    ],
)
def test_bad_items_are_refused_with_file_and_line(kwargs, message) -> None:
    with pytest.raises(StimuliError, match=message.replace("(", r"\(").replace(")", r"\)")):
        item(1, **kwargs)


def test_duplicate_ids_and_unknown_groups_are_refused() -> None:
    with pytest.raises(StimuliError, match=r"f.jsonl, line 1: item id '1' is also at f.jsonl, line 1"):
        ItemStimuli([item(1), item(1)], name="bbq")
    with pytest.raises(StimuliError, match=r"group 'age' is not one of bbq's \(Age, SES\).*Age"):
        ItemStimuli([item(1), item(2, "age")], name="bbq", groups=("Age", "SES"))


def test_designs_follow_the_known_group_order_and_select_keeps_items() -> None:
    stimuli = ItemStimuli([item(1, "SES"), item(2, "Age"), item(3, "SES")], name="bbq", groups=("Age", "SES"))
    assert [d.name for d in stimuli.designs] == ["Age", "SES"]
    assert [i.id for i in stimuli.select(["SES"]).items] == ["1", "3"]
    picked = stimuli.select(["SES", "Age"])  # a selection keeps the order it was given in (bbq:SES,Age)
    assert [d.name for d in picked.designs] == ["SES", "Age"] and [i.id for i in picked.items] == ["1", "3", "2"]


def test_limit_takes_the_first_items_of_each_group() -> None:
    stimuli = ItemStimuli([item(i, "Age" if i % 2 else "SES") for i in range(1, 11)], name="x")
    assert [i.id for i in stimuli.subset(limit=2).items] == ["1", "3", "2", "4"]


def test_sample_is_seeded_per_group_and_keeps_file_order() -> None:
    import numpy as np

    items = [item(i, "Age") for i in range(20)] + [item(i, "SES") for i in range(20, 25)]
    stimuli = ItemStimuli(items, name="x")
    taken = stimuli.subset(sample=4, seed=7)
    # by hand: the same generator, one draw per group in group order; SES has 5 > 4 items, so it is drawn too
    rng = np.random.default_rng(7)
    age = sorted(rng.choice(20, size=4, replace=False).tolist())
    ses = sorted(rng.choice(5, size=4, replace=False).tolist())
    assert [i.id for i in taken.items] == [str(k) for k in age] + [str(20 + k) for k in ses]
    assert taken.meta["subset"] == {"limit": None, "sample": 4, "seed": 7, "items": 8}
    assert stimuli.subset(sample=4, seed=7).fingerprint() == taken.fingerprint()
    assert stimuli.subset(sample=4, seed=8).fingerprint() != taken.fingerprint()


def test_require_items_names_what_to_give() -> None:
    designs = assoc.Stimuli.from_dict({"target": {"X": ["a"]}, "attribute": {"A": ["b"]}}, name="mine")
    with pytest.raises(StimuliError, match="scorer 'bbq' reads benchmark items"):
        assoc.require_items(designs, "bbq")
    two = ItemStimuli([item(1, options=("a", "b"))], name="x")
    with pytest.raises(StimuliError, match="needs 3 options per item; item '1' has 2"):
        assoc.require_items(two, "bbq", options=3)
