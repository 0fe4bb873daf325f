"""Option declaration, validation and command-line parsing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.components.options import REQUIRED, Option, parse_cli_options, validate_options
from assoc.errors import OptionError

SPEC = (
    Option(
        "batch_size",
        int,
        32,
        "rows per batch",
        check=lambda v: v if v > 0 else (_ for _ in ()).throw(ValueError("must be positive")),
    ),
    Option("device", str, "cpu", "where to run", choices=("cpu", "cuda")),
    Option("sd", float, 1.414, "population SD"),
    Option("pairs", list, None, "pairs"),
    Option("standardize", bool, False, "z-score"),
    Option("norms", str, REQUIRED, "a CSV"),
)


def test_defaults_are_filled():
    values = validate_options(SPEC, {"norms": "x.csv"}, "scorer 'x'")
    assert values == {
        "batch_size": 32,
        "device": "cpu",
        "sd": 1.414,
        "pairs": None,
        "standardize": False,
        "norms": "x.csv",
    }


def test_unknown_option_with_suggestion():
    with pytest.raises(OptionError, match="unknown option 'batchsize' for scorer 'x'; did you mean 'batch_size'"):
        validate_options(SPEC, {"batchsize": 3, "norms": "n"}, "scorer 'x'")


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("batch_size", "ten", "option 'batch_size' of scorer 'x': must be an integer"),
        ("batch_size", 2.5, "must be an integer"),
        ("batch_size", True, "must be an integer"),
        ("batch_size", 0, "must be positive"),
        ("device", "tpu", "must be one of 'cpu', 'cuda'"),
        ("sd", "wide", "must be a number"),
        ("sd", float("nan"), "NaN"),
        ("standardize", "maybe", "true or false"),
        ("pairs", 3, "must be a list"),
        ("device", None, "must not be empty"),
    ],
)
def test_bad_values_name_the_option(name, value, message):
    with pytest.raises(OptionError, match=message):
        validate_options(SPEC, {name: value, "norms": "n"}, "scorer 'x'")


def test_required_option_missing():
    with pytest.raises(OptionError, match="option 'norms' of scorer 'x' is required"):
        validate_options(SPEC, {}, "scorer 'x'")


def test_coercions():
    values = validate_options(
        SPEC, {"batch_size": "8", "sd": 2, "standardize": "yes", "pairs": ("a", "b"), "norms": "n"}, "s"
    )
    assert values["batch_size"] == 8 and values["sd"] == 2.0 and values["standardize"] is True
    assert values["pairs"] == ["a", "b"]


def test_cli_parsing_types():
    given = parse_cli_options(
        SPEC, ["batch_size=16", "device=cuda", "sd=0.5", "pairs=a,b", "standardize=true", "norms=yes"], "s"
    )
    assert given == {"batch_size": 16, "device": "cuda", "sd": 0.5, "pairs": "a,b", "standardize": True, "norms": "yes"}
    values = validate_options(SPEC, given, "s")
    assert values["pairs"] == ["a", "b"] and values["norms"] == "yes"
    assert parse_cli_options(SPEC, ["pairs=[x, y]"], "s") == {"pairs": ["x", "y"]}
    assert parse_cli_options(SPEC, ["batch-size=4"], "s") == {"batch_size": 4}


def test_cli_parsing_errors():
    with pytest.raises(OptionError, match="expects key=value"):
        parse_cli_options(SPEC, ["batch_size"], "s")
    with pytest.raises(OptionError, match="unknown option 'devise'.*did you mean 'device'"):
        parse_cli_options(SPEC, ["devise=cpu"], "s")
    with pytest.raises(OptionError, match="cannot parse"):
        parse_cli_options(SPEC, ["sd=[1,"], "s")


def test_predicate_style_checks_reject_false_and_keep_the_value():
    spec = (
        Option("scale", float, 1.0, "a scale", check=lambda v: v > 0),
        Option("name", str, "a", "a name", check=lambda v: None),
        Option("flag", bool, True, "a flag", check=lambda v: not v),
    )
    with pytest.raises(OptionError, match=r"option 'scale' of scorer 'x': -2.0 is rejected by the option's check"):
        validate_options(spec, {"scale": -2}, "scorer 'x'")
    values = validate_options(spec, {"scale": "3", "name": "b", "flag": True}, "scorer 'x'")
    # True from a predicate keeps the value; None keeps it; a bool option's check normalises
    assert values == {"scale": 3.0, "name": "b", "flag": False}


def test_renamed_options_keep_working_with_a_deprecation_warning():
    from assoc.components.options import parse_cli_options

    spec = (
        Option("confidence", float, 0.95, renamed_from=("level",)),
        Option("ddof", int, 1, choices=(0, 1), renamed_from=("sd",), renamed_values=(("sample", 1), ("population", 0))),
    )
    with pytest.warns(DeprecationWarning, match="'level' .* now called 'confidence'"):
        values = validate_options(spec, {"level": 0.9}, owner="analysis 'x'")
    assert values == {"confidence": 0.9, "ddof": 1}
    with pytest.warns(DeprecationWarning, match="write ddof=0 instead of sd='population'"):
        assert validate_options(spec, {"sd": "population"}, owner="analysis 'x'")["ddof"] == 0
    with pytest.warns(DeprecationWarning):
        given = parse_cli_options(spec, ["level=0.8", "sd=sample"], owner="analysis 'x'")
        assert validate_options(spec, given, owner="analysis 'x'") == {"confidence": 0.8, "ddof": 1}
    with pytest.raises(OptionError, match="give only 'confidence'"):
        validate_options(spec, {"level": 0.9, "confidence": 0.9}, owner="analysis 'x'")
    with pytest.raises(OptionError, match="unknown value 'median'"):
        validate_options(spec, {"sd": "median"}, owner="analysis 'x'")


def test_integer_options_are_exact():
    spec = [Option("seed", int, 0)]
    big = 2**53 + 1
    assert validate_options(spec, {"seed": big}, "x")["seed"] == big
    assert validate_options(spec, {"seed": str(big)}, "x")["seed"] == big
    assert validate_options(spec, {"seed": np.int64(2**62 + 1)}, "x")["seed"] == 2**62 + 1
    assert validate_options(spec, {"seed": 3.0}, "x")["seed"] == 3
    assert validate_options(spec, {"seed": "1e3"}, "x")["seed"] == 1000
    for bad in (2.5, "2.5", "x", True, float("inf")):
        with pytest.raises(assoc.errors.OptionError, match="integer"):
            validate_options(spec, {"seed": bad}, "x")


def test_repr_of_a_component_with_a_dataframe_option():
    frame = pd.DataFrame({"word": ["a", "b"], "value": [1.0, 2.0]})
    from assoc.plugins.manager import get_analysis

    analysis = get_analysis("correlate")(criterion=frame)
    text = repr(analysis)
    assert text.startswith(type(analysis).__name__ + "(") and "criterion=<DataFrame 2x2>" in text
    assert "\n" not in text


def test_list_defaults_are_not_shared_between_instances():
    spec = [Option("within", list, ["model"]), Option("names", dict, {"a": ["x"]})]
    first = validate_options(spec, {}, "x")
    first["within"].append("design")
    first["names"]["a"].append("y")
    second = validate_options(spec, {}, "x")
    assert second == {"within": ["model"], "names": {"a": ["x"]}}
    assert spec[0].default == ["model"]
