"""May et al.'s SEAT test files read as stimuli (assoc.stimuli.seat): the shared copy, and bad files refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assoc.errors import StimuliError, UnknownNameError
from assoc.stimuli.seat import load_seat_tests, seat_sort_key

REPO = Path(__file__).resolve().parents[1]
# the CC BY-NC copy in ../shared beside the repository (a git worktree elsewhere may point ASSOC_SHARED_DIR at it)
SEAT = Path(os.environ.get("ASSOC_SHARED_DIR", REPO.parent / "shared")) / "benchmarks" / "seat"


@pytest.fixture(scope="module")
def shared_tests() -> Path:
    if not (SEAT / "tests").is_dir():
        pytest.skip("the shared benchmarks folder (../shared beside the repository) is not on this machine")
    return SEAT / "tests"


def test_every_shared_test_loads_as_written(shared_tests):
    stimuli = load_seat_tests(SEAT)
    files = sorted(shared_tests.glob("*.jsonl"))
    assert len(stimuli) == len(files) == 46
    assert stimuli.name == "seat" and "May" in stimuli.meta["citation"] and "CC BY-NC" in stimuli.meta["licence"]
    for design in stimuli:
        raw = json.loads((shared_tests / f"{design.name}.jsonl").read_text(encoding="utf-8"))
        targets, attributes = list(design.target.items()), list(design.attribute.items())
        expected = [(raw[key]["category"], tuple(raw[key]["examples"])) for key in ("targ1", "targ2", "attr1", "attr2")]
        assert targets + attributes == expected, design.name


def test_sizes_and_order_of_sent_bias(shared_tests):
    # the README's table: weat1 Flowers 25 / Insects 25 / Pleasant 25 / Unpleasant 25; sent-weat1 350/350/215/250
    stimuli = load_seat_tests(shared_tests, names=["sent-weat1", "weat1"])
    assert [d.name for d in stimuli] == ["sent-weat1", "weat1"]
    sizes = {d.name: [(g, len(w)) for g, w in [*d.target.items(), *d.attribute.items()]] for d in stimuli}
    assert sizes["weat1"] == [("Flowers", 25), ("Insects", 25), ("Pleasant", 25), ("Unpleasant", 25)]
    assert sizes["sent-weat1"] == [("Flowers", 350), ("Insects", 350), ("Pleasant", 215), ("Unpleasant", 250)]
    every = [d.name for d in load_seat_tests(shared_tests)]
    assert every.index("weat2") < every.index("weat3") < every.index("weat3b") < every.index("weat10")
    one = load_seat_tests(shared_tests / "weat6.jsonl")
    assert [d.name for d in one] == ["weat6"] and list(one.designs[0].attribute) == ["Career", "Family"]
    with pytest.raises(UnknownNameError, match="unknown SEAT test 'weat11'; did you mean 'weat1'"):
        load_seat_tests(shared_tests, names=["weat11"])


def test_sort_key_is_sent_bias_order():
    names = ["weat10", "weat3b", "sent-weat1", "weat2", "weat3", "heilman_double_bind_competent_1+3-"]
    assert sorted(names, key=seat_sort_key) == [
        "heilman_double_bind_competent_1+3-",
        "sent-weat1",
        "weat2",
        "weat3",
        "weat3b",
        "weat10",
    ]


def _test_object() -> dict:
    return {
        "targ1": {"category": "Flowers", "examples": ["This is a rose.", "This is a tulip."]},
        "targ2": {"category": "Insects", "examples": ["This is an ant.", "This is a moth."]},
        "attr1": {"category": "Pleasant", "examples": ["love", "peace"]},
        "attr2": {"category": "Unpleasant", "examples": ["abuse", "crash"]},
    }


def _write(tmp_path: Path, data: object, name: str = "mine.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def test_a_users_file_loads(tmp_path):
    stimuli = load_seat_tests(_write(tmp_path, _test_object()))
    design = stimuli.designs[0]
    assert design.name == "mine"
    assert design.target == {
        "Flowers": ("This is a rose.", "This is a tulip."),
        "Insects": ("This is an ant.", "This is a moth."),
    }
    assert list(design.attribute) == ["Pleasant", "Unpleasant"]


def _broken(change) -> dict:
    data = _test_object()
    change(data)
    return data


BAD_FILES = [
    ('{"targ1": {"category": "Flowers",\n "examples": [}', r"line 2"),
    ([_test_object()], r"one JSON object"),
    (_broken(lambda d: d.pop("attr2")), r"no 'attr2' set"),
    (_broken(lambda d: d.update(attr3={"category": "x", "examples": ["y"]})), r"unknown key 'attr3'"),
    (_broken(lambda d: d["targ2"].pop("category")), r"targ2: 'category' must be a non-empty text"),
    (_broken(lambda d: d["targ1"].update(examples="This is a rose.")), r"targ1 \(Flowers\): 'examples' must be"),
    (_broken(lambda d: d["attr1"].update(examples=[])), r"attr1 \(Pleasant\): 'examples' must be a non-empty list"),
    (_broken(lambda d: d["attr1"]["examples"].append(3)), r"attr1 \(Pleasant\), example 3: 3 is not"),
    (_broken(lambda d: d["attr2"]["examples"].append("abuse")), r"example 3: 'abuse' repeats example 1"),
    (_broken(lambda d: d["targ1"]["examples"].append(" rose")), r"leading or trailing spaces"),
    (_broken(lambda d: d["targ2"].update(category="Flowers")), r"targ1 and targ2 have the same category 'Flowers'"),
    (_broken(lambda d: d["targ1"].update(label="x")), r"targ1: unknown key 'label'"),
]


@pytest.mark.parametrize(("content", "problem"), BAD_FILES)
def test_bad_files_are_refused_with_file_and_problem(tmp_path, content, problem):
    path = _write(tmp_path, content)
    with pytest.raises(StimuliError, match=problem) as error:
        load_seat_tests(tmp_path)
    assert str(path) in str(error.value)


def test_missing_paths_and_empty_folders_are_refused(tmp_path):
    with pytest.raises(StimuliError, match="neither a test file nor a folder"):
        load_seat_tests(tmp_path / "nowhere")
    with pytest.raises(StimuliError, match=r"no SEAT test files \(\*\.jsonl\)"):
        load_seat_tests(tmp_path)
