"""The options reference: Markdown pages generated from the installed scorers and analyses.

The documentation site's "Scorers" and "Analyses" reference pages are built from the
registry at every ``make docs`` (the MkDocs hook ``scripts/docs_hooks.py`` calls
:func:`reference_pages`), so every option, default, choice, requirement and citation shown is
the one the code declares, never a copy to keep in step by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assoc.components.options import Option

#: Site paths (relative to ``docs/``) of the generated pages.
SCORERS_PAGE = "reference/scorers.md"
ANALYSES_PAGE = "reference/analyses.md"


def _cell(text: str) -> str:
    """Text for one Markdown table cell: no line breaks, ``|`` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(option: Option) -> str:
    if option.required:
        return "**required**"
    value = option.default
    if isinstance(value, (list, tuple)) and not value:
        return "`[]`"
    return f"`{value!r}`" if value is not None else "`None`"


def options_table(options: Iterable[Option]) -> str:
    """A Markdown table of declared options: name, type, default, meaning (with choices)."""
    rows = ["| option | type | default | meaning |", "|---|---|---|---|"]
    for option in options:
        meaning = option.help or ""
        if option.choices:
            meaning += ("; " if meaning else "") + "one of " + ", ".join(f"`{c!r}`" for c in option.choices)
        if option.renamed_from:
            meaning += f" (formerly {', '.join(option.renamed_from)})"
        rows.append(f"| `{option.name}` | {option.type.__name__} | {_default(option)} | {_cell(meaning)} |")
    return "\n".join(rows)


def _section(name: str, cls: Any, plugin: str, extra: list[str]) -> list[str]:
    lines = [f"## `{name}`", "", _cell(cls.description), ""]
    lines.append(f"*Plugin:* `{plugin}`. *Python class:* `{cls.__module__}.{cls.__qualname__}`.")
    lines.append("")
    lines += extra
    if cls.citation:
        lines += [f"*Cite:* {_cell(cls.citation)}", ""]
    lines += [options_table(cls.options) if cls.options else "No options.", ""]
    return lines


def scorers_page() -> str:
    """The Markdown reference of every installed scorer: description, models, measure, options."""
    from assoc import plugins

    reg = plugins.registry()
    lines = [
        "# Scorers: options reference",
        "",
        "Generated from the installed scorers at every build (`assoc scorers -v` prints the same). "
        'Options are passed as keyword arguments (`assoc.score("fmat", stimuli, models, batch_size=8)`) '
        "or as `--option key=value` on the command line.",
        "",
    ]
    for name, entry in sorted(reg.scorers.items()):
        cls = entry.obj
        extra = []
        if getattr(cls, "measure", ""):
            extra.append(f"*Measure:* `{cls.measure}`.")
        defaults = list(getattr(cls, "default_models", ()) or ())
        if defaults:
            extra.append("*Default models:* " + ", ".join(f"`{m}`" for m in defaults) + ".")
        if extra:
            extra = [" ".join(extra), ""]
        lines += _section(name, cls, entry.plugin, extra)
    return "\n".join(lines).rstrip() + "\n"


def analyses_page() -> str:
    """The Markdown reference of every installed analysis: description, what it reads, options."""
    from assoc import plugins

    reg = plugins.registry()
    lines = [
        "# Analyses: options reference",
        "",
        "Generated from the installed analyses at every build (`assoc analyses -v` prints the same). "
        "*Reads* is the analysis' declared requirement: the core refuses any other table before the "
        "analysis runs, with one line saying what it needs and what to run instead.",
        "",
    ]
    for name, entry in sorted(reg.analyses.items()):
        cls = entry.obj
        requirement = cls.requires
        reads = f"*Reads:* {_cell(requirement.describe())}."
        if requirement.instead:
            reads += f" *Otherwise:* {_cell(requirement.instead)}."
        lines += _section(name, cls, entry.plugin, [reads, ""])
    return "\n".join(lines).rstrip() + "\n"


def reference_pages() -> dict[str, str]:
    """``{site path: Markdown}`` of the generated reference pages."""
    return {SCORERS_PAGE: scorers_page(), ANALYSES_PAGE: analyses_page()}
