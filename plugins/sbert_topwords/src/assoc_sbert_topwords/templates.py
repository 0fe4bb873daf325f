"""Sentence templates: the text embedded for a word (light: imported by ``assoc scorers``)."""

from __future__ import annotations

PLACEHOLDER = "{word}"


def check_template(value: str) -> str:
    """``check`` of the ``template`` option: a text with exactly one ``{word}``."""
    if value.count(PLACEHOLDER) != 1:
        raise ValueError(f"must contain {PLACEHOLDER} exactly once (e.g. 'This is {PLACEHOLDER}.'), got {value!r}")
    return value


def apply_template(template: str | None, word: str) -> str:
    """The text embedded for ``word``: the word itself, or the template with ``{word}`` replaced."""
    return word if template is None else template.replace(PLACEHOLDER, word)
