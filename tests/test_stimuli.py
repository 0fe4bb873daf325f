"""Stimuli model: construction, file loading, binding, role rule and every validation error."""

from __future__ import annotations

import json
import re

import pytest

import assoc
from assoc import Design, Stimuli
from assoc.errors import StimuliError, UnknownNameError, natural_key

OCCUPATION = {
    "name": "occupation",
    "queries": ["The [MASK] works as a {TARGET}."],
    "mask": {"Male": ["man"], "Female": ["woman"]},
    "target": {"Occupation": ["nurse", "engineer"]},
}


def test_single_design_dict_and_fillings():
    stimuli = Stimuli.from_dict(OCCUPATION)
    assert len(stimuli) == 1
    fillings = list(stimuli.fillings())
    assert [f.text for f in fillings] == ["The [MASK] works as a nurse.", "The [MASK] works as a engineer."]
    assert fillings[0].query == "The [MASK] works as a {TARGET}."


def test_role_rule_target_filled_mask_is_attribute():
    filling = next(Stimuli.from_dict(OCCUPATION).fillings())
    assert filling.roles("Male", "man") == {
        "target_group": "Occupation",
        "target": "nurse",
        "attribute_group": "Male",
        "attribute": "man",
        "mask_group": "Male",
        "mask": "man",
    }


def test_role_rule_attrib_filled_mask_is_target():
    design = Design(queries=("[MASK] is {ATTRIB}.",), mask={"Male": ("He",)}, attribute={"Good": ("kind",)})
    roles = next(design.fillings()).roles("Male", "He")
    assert (roles["target_group"], roles["target"], roles["attribute_group"], roles["attribute"]) == (
        "Male",
        "He",
        "Good",
        "kind",
    )


def test_role_rule_both_and_neither():
    both = Design(
        queries=("{TARGET} [MASK] {ATTRIB}.",), mask={"M": ("is",)}, target={"T": ("x",)}, attribute={"A": ("y",)}
    )
    roles = next(both.fillings()).roles("M", "is")
    assert (roles["target"], roles["attribute"], roles["mask"]) == ("x", "y", "is")
    neither = Design(queries=("I am [MASK].",), mask={"US": ("American",)})
    roles = next(neither.fillings()).roles("US", "American")
    assert (roles["target_group"], roles["target"], roles["attribute"]) == ("US", "American", "")


def test_fillings_cross_targets_and_attributes():
    design = Design(
        queries=("{TARGET} is [MASK] at {ATTRIB}.",),
        mask={"M": ("good",)},
        target={"T": ("Ann", "Bob")},
        attribute={"A": ("math", "art", "law")},
    )
    assert len(list(design.fillings())) == 6


def test_word_pairs_use_mask_as_attributes_when_target_filled():
    pairs = list(Stimuli.from_dict(OCCUPATION).designs[0].word_pairs())
    assert ("Occupation", "nurse", "Female", "woman") in pairs
    assert len(pairs) == 4


def test_range_group_is_inclusive():
    design = Design(queries=("It happened in [MASK].",), mask={"Year": {"range": [1800, 1805]}})
    assert design.mask["Year"] == ("1800", "1801", "1802", "1803", "1804", "1805")
    stepped = Design(queries=("In [MASK].",), mask={"Y": {"range": [1800, 1810, 5]}})
    assert stepped.mask["Y"] == ("1800", "1805", "1810")


def test_bind_concatenates_designs():
    a = Stimuli.from_dict({**OCCUPATION, "name": "a"})
    b = Stimuli.from_dict({**OCCUPATION, "name": "b", "queries": ["[MASK] is a {TARGET}."]})
    both = a.bind(b)
    assert [d.name for d in both] == ["a", "b"]
    assert [d.name for d in a + b] == ["a", "b"]


def test_bind_rejects_duplicate_design_names():
    a = Stimuli.from_dict(OCCUPATION)
    with pytest.raises(StimuliError, match="'occupation' is used twice"):
        a.bind(a)


def test_yaml_and_json_files(tmp_path):
    yaml_file = tmp_path / "s.yaml"
    yaml_file.write_text("designs:\n  - name: d1\n    target: {X: [a, b]}\n    attribute: {A: [c]}\n")
    json_file = tmp_path / "s.json"
    json_file.write_text(json.dumps(OCCUPATION))
    assert Stimuli.load(yaml_file).designs[0].target == {"X": ("a", "b")}
    assert Stimuli.load(str(json_file)).designs[0].name == "occupation"


def test_select_designs_and_unknown_design():
    stimuli = Stimuli.from_dict({"designs": [{**OCCUPATION, "name": "a"}, {**OCCUPATION, "name": "b"}]})
    assert [d.name for d in stimuli.select(["b"])] == ["b"]
    with pytest.raises(UnknownNameError, match="did you mean 'b'"):
        stimuli.select(["bb"])


@pytest.mark.parametrize(
    "change, message",
    [
        ({"queries": ["The man works as a {TARGET}."]}, None),  # no [MASK]: only scorers that need one refuse it
        ({"queries": ["The [MASK] and [MASK] work as {TARGET}."]}, "2 \\[MASK\\]s"),
        ({"target": {}}, "has a \\{TARGET\\} placeholder but no target groups"),
        ({"target": {"Occupation": []}}, "target group 'Occupation' is empty"),
        ({"target": {"Occupation": ["nurse", "nurse"]}}, "lists 'nurse' twice"),
        ({"targets": {"Occupation": ["nurse"]}}, "unknown key 'targets'; did you mean 'target'"),
        ({"queries": ["The [MASK] works as a {TARGTE}."]}, "unknown placeholder \\{TARGTE\\}; did you mean 'TARGET'"),
        ({"queries": ["The [MASK] works as a {ATTRIB}."]}, "\\{ATTRIB\\} placeholder but no attribute groups"),
        ({"queries": ["The [MASK] works."]}, "target groups are given but query 'The \\[MASK\\] works.' has no"),
        ({"mask": {}}, "contain \\[MASK\\] but no mask groups"),
        ({"mask": {"Male": ["man", ""]}}, "empty word"),
        ({"mask": {"Male": [" man"]}}, "leading or trailing spaces"),
        ({"mask": {"Male": {"range": [1900, 1800]}}}, "is empty"),
        ({"mask": {"Male": [["nested"]]}}, "non-text item"),
        ({"queries": ["dup [MASK] {TARGET}", "dup [MASK] {TARGET}"]}, "listed twice"),
    ],
)
def test_validation_errors_name_the_problem(change, message):
    data = {**OCCUPATION, **change}
    if message is None:
        Stimuli.from_dict(data)  # valid at the stimuli level
        return
    with pytest.raises(StimuliError, match=message):
        Stimuli.from_dict(data)


def test_query_without_mask_rejected_by_scorers_that_need_one():
    stimuli = Stimuli.from_dict({**OCCUPATION, "queries": ["The man works as a {TARGET}."]})
    with pytest.raises(StimuliError, match="needs a \\[MASK\\] in every query"):
        stimuli.require_queries("fmat")
    embedding_only = Stimuli.from_dict({"target": {"X": ["a"]}, "attribute": {"A": ["b"]}})
    with pytest.raises(StimuliError, match="has none"):
        embedding_only.require_queries("fmat")


def test_unknown_top_level_key_with_designs():
    with pytest.raises(StimuliError, match="unknown top-level key 'design'"):
        Stimuli.from_dict({"designs": [OCCUPATION], "design": 1})


def test_file_errors(tmp_path):
    with pytest.raises(StimuliError, match="not found"):
        Stimuli.from_file(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("queries: [unclosed\n")
    with pytest.raises(StimuliError, match="cannot parse"):
        Stimuli.from_file(bad)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(StimuliError, match="is empty"):
        Stimuli.from_file(empty)
    txt = tmp_path / "s.txt"
    txt.write_text("x")
    with pytest.raises(StimuliError, match="must end in"):
        Stimuli.from_file(txt)


def test_mask_without_queries_is_an_error():
    with pytest.raises(StimuliError, match="need queries"):
        Design(mask={"M": ("he",)}, target={"T": ("x",)})


def test_fingerprint_is_stable_and_content_sensitive():
    a = Stimuli.from_dict(OCCUPATION)
    b = Stimuli.from_dict(OCCUPATION)
    c = Stimuli.from_dict({**OCCUPATION, "target": {"Occupation": ["nurse"]}})
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


@pytest.mark.parametrize("query, spelling", [("The <mask> works.", "<mask>"), ("The [mask] works.", "[mask]")])
def test_other_mask_spellings_get_a_hint(query, spelling):
    stimuli = Stimuli.from_dict({"queries": [query], "mask": {"M": ["man"]}})
    with pytest.raises(StimuliError, match=re.escape(f"write '{spelling}' as [MASK]")):
        stimuli.require_queries("fmat")


def test_a_set_whose_loader_takes_a_path_reads_the_users_copy(tmp_path):
    """``name:<path>`` calls a one-argument loader with the path; ``name:designs`` still selects designs."""
    import assoc

    calls: list[object] = []

    def load_copy(source=None):
        calls.append(source)
        words = ["x"] if source is None else [source.rsplit("/", 1)[-1]]
        return Stimuli([Design(name="d1", target={"t": words}), Design(name="d2", target={"t": ["y"]})], name="own")

    def load_fixed():
        return Stimuli([Design(name="d1", target={"t": ["x"]})], name="fixed")

    class Plugin:
        @assoc.hookimpl
        def register_stimuli(self, register):
            register("own", load_copy, "reads a copy")
            register("fixed", load_fixed, "no copy")

    assoc.plugins.register(Plugin(), name="stimuli-path-test")
    try:
        copy = tmp_path / "mine"
        copy.mkdir()
        loaded = Stimuli.load(f"own:{copy}")
        assert calls == [str(copy)] and loaded.designs[0].target == {"t": ("mine",)}
        assert [d.name for d in Stimuli.load("own:d2")] == ["d2"] and calls[-1] is None
        own_file = tmp_path / "copy.json"  # a copy named like a stimuli file is still the set's copy
        own_file.write_text("{}", encoding="utf-8")
        Stimuli.load(f"own:{own_file}")
        assert calls[-1] == str(own_file)
        with pytest.raises(StimuliError, match="not found"):  # a stimuli file that is not there, as before
            Stimuli.load(str(tmp_path / "absent.json"))
        with pytest.raises(UnknownNameError):  # a zero-argument loader: the text is a design name, as before
            Stimuli.load(f"fixed:{copy}")
    finally:
        assoc.plugins.unregister("stimuli-path-test")


def test_names_sort_naturally():
    assert sorted(["weat10", "weat2", "weat1", "Weat3"], key=natural_key) == ["weat1", "weat2", "Weat3", "weat10"]
    message = str(UnknownNameError("design", "weat99", ["weat1", "weat10", "weat2"]))
    assert "(available: weat1, weat2, weat10)" in message
    with pytest.raises(
        UnknownNameError,
        match=r"available: weat1, weat2, weat3, weat4, weat5, weat6, weat7, "
        r"weat8, weat9, weat10\)",
    ):
        assoc.Stimuli.load("caliskan:weat99")


def test_a_loader_that_cannot_read_the_users_path_is_one_line(tmp_path):
    """``name:<path>``: an OS error of the loader (its file missing, unreadable) is one StimuliError line."""
    import assoc

    def load_copy(source=None):
        with open(source or "bundled.csv", encoding="utf-8") as handle:  # no check of its own
            handle.read()
        return Stimuli([Design(name="d1", target={"t": ["x"]})], name="own")

    class Plugin:
        @assoc.hookimpl
        def register_stimuli(self, register):
            register("raw", load_copy, "reads a copy, raw")

    assoc.plugins.register(Plugin(), name="stimuli-oserror-test")
    try:
        with pytest.raises(StimuliError, match=r"'raw:missing.csv': there is no file or folder 'missing.csv'"):
            Stimuli.load("raw:missing.csv")
        folder = tmp_path / "a_folder"
        folder.mkdir()
        with pytest.raises(StimuliError, match=r"cannot read .*a_folder.*Is a directory"):
            Stimuli.load(f"raw:{folder}")
    finally:
        assoc.plugins.unregister("stimuli-oserror-test")
