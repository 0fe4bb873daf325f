"""What the plugin guide promises holds, and the guide says what plugin authors need to know."""

from __future__ import annotations

from pathlib import Path

import pytest

import assoc
from assoc import Option
from assoc.components.options import positive
from assoc.errors import OptionError

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_guide_covers_stimuli_checks_cheap_imports_and_output_names():
    guide = (DOCS / "write-a-plugin.md").read_text()
    for phrase in (
        "check_stimuli",
        "check_plugin_imports",
        "runs the hooks",
        "numpy and pandas",
        "`ci_low`",
        "`estimate`",
        "`inf`",
        "registered with",
    ):
        assert phrase in guide, phrase
    assert "Import the\nscorer inside the hook" not in guide
    assert "(dev/contract.md)" in (DOCS / "index.md").read_text()


@pytest.mark.parametrize("bad", [0, -2, 0.0])
def test_positive_says_positive(bad):
    with pytest.raises(ValueError, match=f"must be positive \\(greater than 0\\), got {bad}"):
        positive(bad)


def test_positive_in_an_option_names_the_option():
    class Sized(assoc.Analysis):
        name = "sized"
        description = "d"
        citation = "c"
        options = (Option("size", int, 1, "a size", check=positive),)

        def run(self, table):
            return table

    with pytest.raises(OptionError, match="option 'size' of analysis 'sized': must be positive"):
        Sized(size=0)


def test_a_bundled_set_is_named_as_registered(fake_plugin):
    fake_plugin(
        "bundle",
        """
        from assoc import hookimpl, Stimuli
        def load():
            return Stimuli.from_dict({"name": "something_else", "designs": [
                {"name": "d1", "target": {"T": ["a"]}, "attribute": {"A": ["b"]}}]})
        @hookimpl
        def register_stimuli(register):
            register("toyset", load, "a toy set")
    """,
    )
    assert assoc.Stimuli.load("toyset").name == "toyset"
    assert assoc.Stimuli.load("toyset:d1").name == "toyset:d1"
